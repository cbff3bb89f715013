# shellcheck shell=bash
# The Debian packages rtio needs, sourced by scripts/deps.sh (installs them
# all: make deps) and scripts/deps-check.sh (checks the build's, never
# installs: make). A package is on a BUILD list when `make` (build only)
# cannot do without it.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# Samba and its client/dev libraries must all be the same backports version.
# The module links against the installed Samba libraries (samba), the stream
# bench tool against libsmbclient.
BACKPORTS_BUILD="samba libsmbclient-dev libtalloc-dev libtevent-dev"
# python3-samba: Samba's own client bindings, which send MS-SQOS FSCTLs in
# tests/integration/sqos_check.py.
BACKPORTS_TEST="smbclient samba-vfs-modules samba-testsuite python3-samba"
# From bookworm: compilers and libraries; what Samba's configure and header
# generation need (scripts/samba-gen.sh); cmocka for the unit tests and FUSE
# for the emulated disk, both built by `make`.
BOOKWORM_BUILD="build-essential pkg-config dpkg-dev xz-utils liburing-dev libcmocka-dev \
 flex bison libparse-yapp-perl libkrb5-dev libgnutls28-dev python3 python3-dev zlib1g-dev libpopt-dev \
 libjansson-dev libtasn1-bin libtasn1-6-dev libreadline-dev perl libfuse3-dev util-linux"
# The tests, benchmarks, fuzzer and plots; debhelper and lintian for make deb
# (dpkg-dev has dpkg-buildpackage).
BOOKWORM_TEST="fio clang libclang-rt-14-dev fuse3 e2fsprogs python3-matplotlib procps psmisc iproute2 \
 jq time strace python3-prometheus-client debhelper lintian"

# scripts/deps.sh installs these
# shellcheck disable=SC2034
BACKPORTS_PKGS="$BACKPORTS_BUILD $BACKPORTS_TEST"
# shellcheck disable=SC2034
BOOKWORM_PKGS="$BOOKWORM_BUILD $BOOKWORM_TEST"

# The packages of "$@" that are not installed, one per line.
missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
	done
}
