#!/usr/bin/env bash
# What `make` (build only) checks before it builds: the build's packages are
# installed and Samba's source of exactly the installed version is unpacked
# (scripts/deps.sh fetches it). Changes nothing and needs no root; on a gap
# it names what is missing and says to run `make deps` as root.
# Usage: BUILD=DIR SAMBA_SRC=DIR scripts/deps-check.sh
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$here/build}
SAMBA_SRC=${SAMBA_SRC:-$BUILD/src/samba}
# shellcheck source=scripts/deps-list.sh
. "$here/scripts/deps-list.sh"

need() { echo "run \`make deps\` as root: missing $*" >&2; exit 1; }

# shellcheck disable=SC2086
missing=$(missing_pkgs $BACKPORTS_BUILD $BOOKWORM_BUILD | tr '\n' ' ')
[ -z "$missing" ] || need "packages ${missing% }"

[ -f "$SAMBA_SRC/.unpacked" ] || need "the Samba source tree $SAMBA_SRC"
src=$(sed -n 's/^SAMBA_VERSION_\(MAJOR\|MINOR\|RELEASE\)=//p' "$SAMBA_SRC/VERSION" | paste -sd.)
smbd=$(smbd --version 2>/dev/null | sed -n 's/^Version \([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p')
[ "$src" = "$smbd" ] || need "the Samba $smbd source tree ($SAMBA_SRC is Samba $src)"
