#!/usr/bin/env bash
# Checks the packages `make deb` built, without installing them: contents,
# control fields, the module's exact Samba dependency (against the symbol
# versions rtio.so really needs), the unit's substituted paths, the packaged
# aiod accepting its packaged aiod.ini, and apt's verdict (simulated only)
# on installing them and on a Samba of another build.
# Ends with "deb: N passed, M failed"; exit status 1 if any check failed.
#
# Usage: tests/deb-check.sh [DIR]     (DIR: build/deb, or $BUILD/deb)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${BUILD:-$here/build}/deb}
# apt takes a package file only by a path that starts with / or ./
dir=$(cd "$dir" 2>/dev/null && pwd) || { echo "FAIL no directory ${1:-build/deb}"; echo "deb: 0 passed, 1 failed"; exit 1; }
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)

passed=0 failed=0
ok()   { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
finish() { echo "deb: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

# The newest build of each package in DIR (not the -dbgsym ones).
newest() { ls -1t "$dir"/"$1"_*_"$arch".deb 2>/dev/null | head -n 1; }
aiod_deb=$(newest rtio-aiod)
vfs_deb=$(newest samba-vfs-rtio)
if [ -z "$aiod_deb" ] || [ -z "$vfs_deb" ]; then
	fail "both packages in $dir (run make deb)"
	finish
fi
ok "both packages in $dir: $(basename "$aiod_deb") $(basename "$vfs_deb")"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { dpkg-deb -f "$1" "$2"; }

# ---- contents ----
has_files() {
	local deb=$1 f list; shift
	list=$(dpkg-deb -c "$deb" | awk '{print $6}') || return 1
	for f in "$@"; do
		grep -qx "\./$f" <<<"$list" || { echo "     missing $f in $(basename "$deb")"; return 1; }
	done
}
check "rtio-aiod contents" has_files "$aiod_deb" usr/sbin/aiod usr/bin/aiodctl etc/aiod/aiod.ini \
	lib/systemd/system/aiod.service usr/lib/sysctl.d/90-rtio-mqueue.conf \
	usr/lib/tmpfiles.d/rtio-aiod.conf usr/share/man/man8/aiod.8.gz usr/share/man/man8/aiodctl.8.gz \
	usr/share/doc/rtio-aiod/copyright
check "samba-vfs-rtio contents" has_files "$vfs_deb" "usr/lib/$multiarch/samba/vfs/rtio.so" \
	usr/share/man/man8/vfs_rtio.8.gz usr/share/doc/samba-vfs-rtio/copyright
# smbd looks for VFS modules in MODULESDIR/vfs; the package must put it there.
modulesdir=$(smbd -b 2>/dev/null | sed -n 's/^ *MODULESDIR: *//p')
if [ -n "$modulesdir" ]; then
	check "rtio.so where this smbd looks ($modulesdir/vfs)" has_files "$vfs_deb" "${modulesdir#/}/vfs/rtio.so"
fi

# ---- control fields ----
conffiles_has_ini() { dpkg-deb --ctrl-tarfile "$aiod_deb" | tar -xOf - ./conffiles | grep -qx /etc/aiod/aiod.ini; }
check "aiod.ini is a conffile" conffiles_has_ini

dpkg-deb -x "$vfs_deb" "$tmp/vfs" && dpkg-deb -x "$aiod_deb" "$tmp/aiod" ||
	{ fail "unpacking the packages"; finish; }
depends=$(field "$vfs_deb" Depends)
echo "     samba-vfs-rtio Depends: $depends"
pinned=$(grep -o 'samba-libs (= [^)]*)' <<<"$depends" | sed 's/samba-libs (= \(.*\))/\1/')
check "samba-vfs-rtio depends on exactly one samba-libs build" test -n "$pinned"
# Debian names the private symbol versions after the build:
# 2:4.22.6+dfsg-0+deb13u1~bpo12+1 -> SAMBA_4.22.6_DEBIAN_4.22.6_DFSG_0_DEB13U1_BPO12_1_PRIVATE_SAMBA
pinned_sym() {
	local v=${pinned#*:} up
	up=${v%%[+~-]*}
	echo "SAMBA_${up}_DEBIAN_$(tr 'a-z+~:-' 'A-Z____' <<<"$v")_PRIVATE_SAMBA"
}
needs_pinned_build() {
	local need want
	need=$(objdump -p "$tmp/vfs/usr/lib/$multiarch/samba/vfs/rtio.so" |
		awk '/_PRIVATE_SAMBA$/ {print $NF}' | sort -u)
	want=$(pinned_sym)
	echo "     rtio.so needs: $need"
	[ "$need" = "$want" ]
}
check "the pinned samba-libs is the build rtio.so's symbols name" needs_pinned_build
installed=$(dpkg-query -W -f='${Version}' "samba-libs:$arch" 2>/dev/null)
check "pinned samba-libs = installed samba-libs ($installed)" test "$pinned" = "$installed"
# A rebuild for another Samba must be a newer version, or apt would not
# install it over this one.
check "module version names the Samba build" \
	grep -qF "+samba$(tr '-' '.' <<<"${pinned#*:}")" <<<"$(field "$vfs_deb" Version)"

# ---- the unit ----
unit=$tmp/aiod/lib/systemd/system/aiod.service
no_placeholders() { ! grep -n '@[A-Z_]*@' "$unit"; }
check "aiod.service has no @PLACEHOLDER@ left" no_placeholders
exec_paths_packaged() {
	local p
	for p in $(sed -n 's/^Exec[A-Za-z]*=[-@!+:]*\([^ ]*\).*/\1/p' "$unit" | sort -u); do
		[ -e "$tmp/aiod$p" ] || [ "$p" = /bin/kill ] || { echo "     $p is not in the package"; return 1; }
	done
}
check "aiod.service runs the packaged aiod" exec_paths_packaged
check "aiod.service reads /etc/aiod/aiod.ini" grep -q -- '-c /etc/aiod/aiod.ini' "$unit"
if command -v systemd-analyze >/dev/null 2>&1; then
	# verify resolves the Exec paths and the targets named: the packaged
	# tree, with this host's units next to it, stands in for the root.
	verify_unit() {
		cp -an /lib/systemd/system/. "$tmp/aiod/lib/systemd/system/" &&
			systemd-analyze verify --man=no --root="$tmp/aiod" /lib/systemd/system/aiod.service
	}
	check "systemd-analyze verify aiod.service" verify_unit
fi

# ---- the packaged daemon accepts the packaged configuration ----
check_config() {
	"$tmp/aiod/usr/sbin/aiod" --check-config -c "$tmp/aiod/etc/aiod/aiod.ini" >"$tmp/cc.log" 2>&1 ||
		{ cat "$tmp/cc.log"; return 1; }
}
check "packaged aiod --check-config on the packaged aiod.ini" check_config

# ---- apt, simulated: nothing is installed ----
apt_sim_ok() { apt-get -s -q install "$aiod_deb" "$vfs_deb" >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; return 1; }; }
check "apt would install both here (simulated)" apt_sim_ok
other=$(apt-cache madison samba-libs 2>/dev/null | awk -v p="$pinned" '$3 != p {print $3; exit}')
if [ -n "$other" ]; then
	# Another Samba build next to the module: apt must refuse, naming the pin.
	refused() {
		! apt-get -s -q install "$vfs_deb" "samba-libs=$other" >"$tmp/apt2.log" 2>&1 &&
			grep -qF "samba-vfs-rtio : Depends: samba-libs (= $pinned)" "$tmp/apt2.log" ||
			{ cat "$tmp/apt2.log"; return 1; }
	}
	check "apt refuses samba-libs $other with this module (simulated)" refused
else
	echo "     (no other samba-libs version known to apt: the refusal is not simulated)"
fi

finish
