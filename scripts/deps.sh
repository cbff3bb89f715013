#!/usr/bin/env bash
# Install everything rtio needs to build, test and benchmark, on Debian 12:
# `make deps` (and make check, demo, ... before they build). `make` alone
# never runs this: it only checks (scripts/deps-check.sh).
# Idempotent: every step checks whether its result is already there.
# Usage: scripts/deps.sh            (needs root for apt; exits 0 quickly when all is present)
# Run through sudo, what it puts into BUILD belongs to the invoking user, so
# that user's plain `make` can write there (samba-gen.sh configures in the
# Samba tree).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$here/build}
SRC=$BUILD/src
mkdir -p "$SRC"

die() { echo "deps: error: $*" >&2; exit 1; }
log() { echo "deps: $*"; }

# shellcheck source=scripts/deps-list.sh
. "$here/scripts/deps-list.sh"
have_all() { [ -z "$(missing_pkgs "$@")" ]; }

sources_file=/etc/apt/sources.list.d/rtio-bookworm-backports.sources
need_update=0
if [ ! -f "$sources_file" ]; then
	[ "$(id -u)" = 0 ] || die "need root to add $sources_file"
	# Same mirror and keyring as the machine's debian.sources.
	uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$uri" ] || uri=http://deb.debian.org/debian
	cat > "$sources_file" <<EOT
# Added by rtio scripts/deps.sh: Samba 4.22 comes from bookworm-backports;
# deb-src lets the build fetch Samba's and fio's source for their headers.
Types: deb deb-src
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: $uri
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	need_update=1
fi

# shellcheck disable=SC2086
if ! have_all $BACKPORTS_PKGS $BOOKWORM_PKGS; then
	[ "$(id -u)" = 0 ] || die "packages missing and not root; run: sudo $0"
	export DEBIAN_FRONTEND=noninteractive
	if [ $need_update = 1 ] || [ ! -f "$BUILD/.apt-updated" ]; then
		apt-get update -q || die "apt-get update failed"
		touch "$BUILD/.apt-updated"
	fi
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends -t bookworm-backports $BACKPORTS_PKGS \
		|| die "installing Samba packages from bookworm-backports failed"
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $BOOKWORM_PKGS \
		|| die "installing build packages from bookworm failed"
fi

# Samba's source of exactly the installed smbd version.
sver=$(dpkg-query -W -f='${Version}' samba) || die "samba is not installed"
upver=${sver%%-*}; upver=${upver#*:}          # 2:4.22.6+dfsg-1~bpo12+1 -> 4.22.6+dfsg
echo "$sver" > "$BUILD/samba-version"
tarball=$(ls "$SRC"/samba_"$upver".orig.tar.* 2>/dev/null | head -1 || true)
if [ -z "$tarball" ]; then
	log "fetching Samba source $sver"
	# The backport's .dsc may be missing on the mirror; the upstream tarball is all we need.
	(cd "$SRC" && apt-get source -q --download-only -t bookworm-backports "samba=$sver") >"$SRC/samba-fetch.log" 2>&1 || true
	tarball=$(ls "$SRC"/samba_"$upver".orig.tar.* 2>/dev/null | head -1 || true)
	[ -n "$tarball" ] || { cat "$SRC/samba-fetch.log" >&2; die "could not fetch samba_$upver.orig tarball"; }
fi
sdir=$SRC/samba-${upver%%+*}
if [ ! -f "$sdir/.unpacked" ]; then
	log "unpacking $(basename "$tarball")"
	rm -rf "$sdir"; mkdir -p "$sdir"
	tar -xf "$tarball" -C "$sdir" --strip-components=1 || die "unpacking $tarball failed"
	touch "$sdir/.unpacked"
fi
ln -sfn "$sdir" "$SRC/samba"

# fio's source, for the external ioengine headers.
fver=$(dpkg-query -W -f='${Version}' fio) || die "fio is not installed"
fup=${fver%%-*}
fdir=$SRC/fio-$fup
if [ ! -f "$fdir/.unpacked" ]; then
	ftar=$(ls "$SRC"/fio_"$fup".orig.tar.* 2>/dev/null | head -1 || true)
	if [ -z "$ftar" ]; then
		log "fetching fio source $fver"
		(cd "$SRC" && apt-get source -q --download-only "fio=$fver") >"$SRC/fio-fetch.log" 2>&1 || true
		ftar=$(ls "$SRC"/fio_"$fup".orig.tar.* 2>/dev/null | head -1 || true)
		[ -n "$ftar" ] || { cat "$SRC/fio-fetch.log" >&2; die "could not fetch fio_$fup.orig tarball"; }
	fi
	rm -rf "$fdir"; mkdir -p "$fdir"
	tar -xf "$ftar" -C "$fdir" --strip-components=1 || die "unpacking $ftar failed"
	touch "$fdir/.unpacked"
fi
ln -sfn "$fdir" "$SRC/fio"
if [ -n "${SUDO_UID:-}" ] && [ "$SUDO_UID" != 0 ]; then
	chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$BUILD" "$BUILD/samba-version"
	chown -R "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$SRC"
	[ ! -f "$BUILD/.apt-updated" ] || chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$BUILD/.apt-updated"
fi
log "ok (samba $sver, fio $fver)"
