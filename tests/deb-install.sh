#!/usr/bin/env bash
# Installs, serves a share from, runs the integration harness against, upgrades, removes and purges the packages `make deb` built with
# the real apt and dpkg, and simulates a Samba upgrade next to them — in a
# throwaway copy of this machine: an overlay over / in a mount namespace of
# its own, so the host's packages, files and Samba stay as they are (the
# integration tests' module included). /proc is there read-only, so the
# maintainer scripts cannot change the host's kernel settings either.
# Ends with "deb-install: N passed, M failed"; exit status 1 if any failed.
#
# Usage: tests/deb-install.sh [DIR]     (DIR: build/deb, or $BUILD/deb)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u

passed=0 failed=0
ok()   { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
finish() { echo "deb-install: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

# ---------------------------------------------------------------------------
# Inside the copy: a working server from what the packages installed. The
# installed aiod (its own socket and cache) and the real smbd with the
# installed module on port 4445 (bench/tests' private smbd: all its state
# under DIR/srv); a file put and got back through an rtio share; both
# stopped by their pids whatever happens.
# ---------------------------------------------------------------------------
served() {
	local d=$1 s=$1/srv apid="" spid="" user=rtiodeb pw=rtio-Deb-pw1 i p
	local sock=$1/srv/run/aiod.sock smb
	stop_served() {
		[ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null
		for i in $(seq 1 100); do
			[ -n "$spid" ] && kill -0 "$spid" 2>/dev/null || break
			sleep 0.1
		done
		if [ -n "$spid" ]; then
			wait "$spid" 2>/dev/null
			# smbd leads a process group: its children follow it
			for p in $(ps -e -o pid=,pgid= | awk -v g="$spid" '$2 == g {print $1}'); do
				kill -KILL "$p" 2>/dev/null
			done
		fi
		[ -n "$apid" ] && kill -TERM "$apid" 2>/dev/null && wait "$apid" 2>/dev/null
		spid="" apid=""
	}
	mkdir -p "$s/run" "$s/share" && chmod 777 "$s/share" &&
		printf '[global]\nsocket_path = %s\n[cache]\nsize = 64M\n' "$sock" > "$s/aiod.ini" ||
		{ fail "a working server: its directory"; return; }
	/usr/sbin/aiod -c "$s/aiod.ini" -F > "$s/aiod.log" 2>&1 &
	apid=$!
	for i in $(seq 1 100); do
		/usr/bin/aiodctl -s "$sock" stats > /dev/null 2>&1 && break
		sleep 0.1
	done
	answers() { /usr/bin/aiodctl -s "$sock" stats > /dev/null || { tail -n 5 "$s/aiod.log"; return 1; }; }
	check "the installed aiod starts and answers aiodctl" answers
	# shellcheck source=../scripts/smbconf.sh
	. "$d/smbconf.sh"
	rtio_smb_dirs "$s"
	{ rtio_smb_global "$s" 4445
	  printf '[rtio]\n\tpath = %s\n\tread only = no\n\tvfs objects = rtio\n\trtio:socket = %s\n' \
		"$s/share" "$sock"; } > "$s/smb.conf"
	id "$user" > /dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$user" > /dev/null 2>&1
	printf '%s\n%s\n' "$pw" "$pw" | smbpasswd -c "$s/smb.conf" -a -s "$user" > /dev/null 2>&1 ||
		{ fail "a working server: smbpasswd for $user"; stop_served; return; }
	smbd -F --debug-stdout -s "$s/smb.conf" -d 1 > "$s/smbd.log" 2>&1 &
	spid=$!
	head -c $((8 << 20)) /dev/urandom > "$s/in.bin"
	smb() { smbclient "//127.0.0.1/rtio" -p 4445 -U "$user%$pw" -c "$1" > "$s/smbclient.log" 2>&1; }
	for i in $(seq 1 100); do
		smb ls && break
		sleep 0.1
	done
	roundtrip() {
		(cd "$s" && smb "put in.bin x.bin; get x.bin out.bin") && cmp -s "$s/in.bin" "$s/out.bin" ||
			{ tail -n 5 "$s/smbclient.log" "$s/smbd.log" | sed 's/^/     /'; return 1; }
	}
	check "8 MiB put and got back through an rtio share of the real smbd: the same bytes" roundtrip
	attached() {
		grep -q 'rtio: attached to aiod' "$s/smbd.log" &&
			[ "$(/usr/bin/aiodctl -s "$sock" stats | sed -n 's/^sessions_total=//p')" -ge 1 ] ||
			{ tail -n 5 "$s/smbd.log" | sed 's/^/     /'; return 1; }
	}
	check "smbd attached the installed module to the installed aiod (a session counted)" attached
	stop_served
}

# ---------------------------------------------------------------------------
# Inside the copy: the whole integration harness (tests/integration/run.sh)
# against what the packages installed: aiod and aiodctl from /usr, smbd
# loading the packaged rtio.so from its module directory. The tree's own
# build gives only the harness's helpers (load generators, the ASan aiod of
# one test); the host's repository and build are bind-mounted read-only
# (DIR/src, DIR/hostbuild), so the run can change neither. sysfs and a
# writable /proc are there for the harness only (its emulated disks tune
# their loop devices and drop the page cache), not for the maintainer scripts.
# ---------------------------------------------------------------------------
harness() {
	local d=$1 modulesdir=$2 b=$1/build f summary
	owned() {
		dpkg -S "$modulesdir/vfs/rtio.so" 2>/dev/null | grep -q '^samba-vfs-rtio:' ||
			{ echo "     $(dpkg -S "$modulesdir/vfs/rtio.so" 2>&1)"; return 1; }
	}
	check "the rtio.so smbd loads is the packaged one (dpkg -S: samba-vfs-rtio)" owned
	mkdir -p "$b" || { fail "the harness's build directory $b"; return; }
	for f in "$d"/hostbuild/*; do
		ln -sfn "$f" "$b/$(basename "$f")" || { fail "linking $f"; return; }
	done
	ln -sfn /usr/sbin/aiod "$b/aiod" && ln -sfn /usr/bin/aiodctl "$b/aiodctl" &&
		ln -sfn "$modulesdir/vfs/rtio.so" "$b/rtio.so" || { fail "linking the installed binaries"; return; }
	mount -t sysfs sysfs /sys && mount -o remount,bind,rw /proc ||
		{ fail "sysfs and a writable /proc for the harness"; return; }
	BUILD=$b "$d/src/tests/integration/run.sh" </dev/null >"$d/harness.log" 2>&1
	umount /sys && mount -o remount,bind,ro /proc || fail "taking the harness's sysfs and writable /proc back"
	summary=$(sed -n 's/^\([0-9]* passed, [0-9]* failed\).*/\1/p' "$d/harness.log" | tail -n 1)
	sed 's/^/     /' "$d/harness.log" | grep -E '^     (PASS|FAIL|rtio integration)'
	clean() { [ -n "$summary" ] && [ "${summary#* passed, }" = "0 failed" ] || { tail -n 30 "$d/harness.log" | sed 's/^/     /'; return 1; }; }
	check "the integration harness against the installed packages: ${summary:-no summary}" clean
}

# ---------------------------------------------------------------------------
# Inside the copy (chroot): every step on the real dpkg database.
# ---------------------------------------------------------------------------
inside() {
	local d=$1 arch aiod_deb vfs_deb modulesdir status
	export DEBIAN_FRONTEND=noninteractive
	arch=$(dpkg --print-architecture)
	aiod_deb=$(ls -1 "$d"/rtio-aiod_*_"$arch".deb | head -n 1)
	vfs_deb=$(ls -1 "$d"/samba-vfs-rtio_*_"$arch".deb | head -n 1)
	modulesdir=$(smbd -b | sed -n 's/^ *MODULESDIR: *//p')
	status() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | tr -d ' '; }
	version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null; }
	run() { "$@" </dev/null >"$d/step.log" 2>&1 || { sed 's/^/     /' "$d/step.log" | tail -n 15; return 1; }; }

	# -- install, as an admin would: apt resolves the dependencies --
	check "apt-get install ./rtio-aiod ./samba-vfs-rtio" run apt-get install -y -q "$aiod_deb" "$vfs_deb"
	installed() { [ "$(status rtio-aiod)" = ii ] && [ "$(status samba-vfs-rtio)" = ii ]; }
	check "both packages installed (ii)" installed
	check "rtio.so in smbd's module directory ($modulesdir/vfs)" test -f "$modulesdir/vfs/rtio.so"
	check "aiod, aiodctl, the unit and aiod.ini in place" \
		test -x /usr/sbin/aiod -a -x /usr/bin/aiodctl -a -f /lib/systemd/system/aiod.service -a -f /etc/aiod/aiod.ini
	check "aiod.service enabled by the postinst" test -L /etc/systemd/system/multi-user.target.wants/aiod.service
	check "the installed aiod accepts the installed aiod.ini" run /usr/sbin/aiod --check-config -c /etc/aiod/aiod.ini
	# What smbd would do with the module: dlopen it against this Samba.
	module_loads() { /usr/bin/aiodctl doctor >"$d/doctor.log" 2>&1; grep -q '^OK *module' "$d/doctor.log" || { cat "$d/doctor.log"; return 1; }; }
	check "aiodctl doctor: the installed module loads with the installed Samba" module_loads
	served "$d"
	harness "$d" "$modulesdir"

	# -- upgrade: a newer build of both, with the admin's aiod.ini edited --
	echo "# edited by the admin (deb-install.sh)" >>/etc/aiod/aiod.ini
	local old_aiod old_vfs new pkg
	old_aiod=$(version rtio-aiod) old_vfs=$(version samba-vfs-rtio)
	for pkg in "$aiod_deb" "$vfs_deb"; do
		rm -rf "$d/x" && dpkg-deb -R "$pkg" "$d/x" &&
			sed -i 's/^Version: \(.*\)$/Version: \1.1/' "$d/x/DEBIAN/control" &&
			dpkg-deb -b "$d/x" "$d/new-$(basename "$pkg")" >/dev/null ||
			{ fail "repacking $(basename "$pkg") as a newer version"; return; }
	done
	check "dpkg -i the newer versions (upgrade, no prompt)" run dpkg -i "$d"/new-*.deb
	upgraded() {
		[ "$(version rtio-aiod)" = "$old_aiod.1" ] && [ "$(version samba-vfs-rtio)" = "$old_vfs.1" ] &&
			installed || { echo "     now $(version rtio-aiod) / $(version samba-vfs-rtio)"; return 1; }
	}
	check "upgraded to $old_aiod.1 / $old_vfs.1, both ii" upgraded
	check "the admin's aiod.ini survived the upgrade" grep -q '^# edited by the admin' /etc/aiod/aiod.ini

	# -- a Samba upgrade: every installed package of Samba's source gets a
	# newer build (empty stand-ins, each pinning its siblings exactly as
	# Debian's do), offered by a local repository. apt must keep it back
	# while the module is installed, and take it once the module is gone:
	# the pin is what holds it, not something else.
	local repo=$d/repo samba_new p ma
	samba_new="$(version samba-libs)+rtiotest1"
	mkdir -p "$repo"
	for p in $(dpkg-query -W -f='${source:Package} ${Package} ${db:Status-Abbrev}\n' |
		   awk '$1 == "samba" && $3 == "ii" {print $2}'); do
		ma=$(dpkg-query -W -f='${Multi-Arch}' "$p")
		mkdir -p "$d/s/$p/DEBIAN" &&
			printf 'Package: %s\nVersion: %s\nArchitecture: %s\n%sMaintainer: rtio tests <rtio@example.org>\nDescription: stand-in for a Samba upgrade\n' \
				"$p" "$samba_new" "$(dpkg-query -W -f='${Architecture}' "$p")" \
				"${ma:+Multi-Arch: $ma
}" >"$d/s/$p/DEBIAN/control" &&
			dpkg-deb -b "$d/s/$p" "$repo/$p.deb" >/dev/null ||
			{ fail "building a stand-in $p $samba_new"; return; }
	done
	(cd "$repo" && dpkg-scanpackages -m . /dev/null >Packages 2>/dev/null) || { fail "dpkg-scanpackages"; return; }
	echo "deb [trusted=yes] file:$repo ./" >"$d/local.list"
	local apt_local=(-o Dir::Etc::SourceList="$d/local.list" -o Dir::Etc::SourceParts=/dev/null
			 -o Dir::State::Lists="$d/lists" -o APT::Get::List-Cleanup=0)
	mkdir -p "$d/lists/partial"
	check "apt-get update from the local repository of Samba $samba_new" run apt-get "${apt_local[@]}" update
	held_back() {
		apt-get "${apt_local[@]}" -s upgrade </dev/null >"$d/up.log" 2>&1 &&
			! grep -q '^Inst samba-libs ' "$d/up.log" &&
			sed -n '/kept back/,/^[0-9]/p' "$d/up.log" | grep -qw samba-libs ||
			{ tail -n 15 "$d/up.log"; return 1; }
	}
	check "apt-get upgrade keeps Samba $samba_new back while the module is installed (simulated)" held_back
	flagged() {
		apt-get "${apt_local[@]}" -s dist-upgrade </dev/null >"$d/dist.log" 2>&1 &&
			grep -q '^Remv samba-vfs-rtio ' "$d/dist.log" || { tail -n 15 "$d/dist.log"; return 1; }
	}
	check "apt-get dist-upgrade would remove samba-vfs-rtio to take it, and says so (simulated)" flagged

	# -- remove: the module first, then aiod; aiod.ini stays until purge --
	check "dpkg -r samba-vfs-rtio" run dpkg -r samba-vfs-rtio
	check "rtio.so gone with it" test ! -e "$modulesdir/vfs/rtio.so"
	taken() {
		apt-get "${apt_local[@]}" -s upgrade </dev/null >"$d/up2.log" 2>&1 &&
			grep -q '^Inst samba-libs ' "$d/up2.log" || { tail -n 15 "$d/up2.log"; return 1; }
	}
	check "without the module apt-get upgrade takes Samba $samba_new (simulated)" taken
	check "dpkg -r rtio-aiod" run dpkg -r rtio-aiod
	removed() { [ "$(status rtio-aiod)" = rc ] && [ ! -e /usr/sbin/aiod ] && [ -f /etc/aiod/aiod.ini ]; }
	check "removed: binaries gone, aiod.ini kept (rc)" removed

	# -- purge: the conffile and what aiod made at run time go --
	mkdir -p /var/lib/aiod && echo profile >/var/lib/aiod/profile.ini
	check "dpkg -P rtio-aiod" run dpkg -P rtio-aiod
	purged() {
		[ -z "$(status rtio-aiod)" ] || [ "$(status rtio-aiod)" = un ] || { echo "     status $(status rtio-aiod)"; return 1; }
		[ ! -e /etc/aiod/aiod.ini ] && [ ! -e /var/lib/aiod ] &&
			[ ! -e /etc/systemd/system/multi-user.target.wants/aiod.service ]
	}
	check "purged: aiod.ini, /var/lib/aiod and the enable link gone" purged
}

if [ "${1:-}" = --inside ]; then
	inside "$2"
	finish
fi

# ---------------------------------------------------------------------------
# Outside: the copy of the machine, made and thrown away.
# ---------------------------------------------------------------------------
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${BUILD:-$here/build}/deb}
arch=$(dpkg --print-architecture)
aiod_deb=$(ls -1t "$dir"/rtio-aiod_*_"$arch".deb 2>/dev/null | head -n 1)
vfs_deb=$(ls -1t "$dir"/samba-vfs-rtio_*_"$arch".deb 2>/dev/null | head -n 1)
if [ -z "$aiod_deb" ] || [ -z "$vfs_deb" ]; then
	fail "both packages in $dir (run make deb)"
	finish
fi
[ "$(id -u)" -eq 0 ] || { fail "needs root (dpkg in a mount namespace)"; finish; }

# The overlay's upper layer: on the host's disk, not in a tmpfs that may be
# small (it holds every file the package steps change).
tmp=$(mktemp -d /var/tmp/rtio-deb-install.XXXXXX) || { fail "mktemp"; finish; }
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/up" "$tmp/work" "$tmp/root"
# The copy's /tmp: empty and on disk as well (the harness puts its
# emulated disks and 2 GiB sparse files there).
# Everything mounted here lives in the new namespace only and goes with it.
unshare --mount --propagation private bash -c '
	t=$1 aiod_deb=$2 vfs_deb=$3 script=$4 d=/var/tmp/rtio-deb-install
	{ mount -t overlay rtio-deb-install -o "lowerdir=/,upperdir=$t/up,workdir=$t/work" "$t/root" &&
	  mount --bind /dev "$t/root/dev" &&
	  mount --bind /proc "$t/root/proc" &&
	  mount -o remount,bind,ro "$t/root/proc" &&
	  mount -t tmpfs tmpfs "$t/root/run" &&
	  mkdir -p "$t/tmp" && chmod 1777 "$t/tmp" && mount --bind "$t/tmp" "$t/root/tmp" &&
	  rm -rf "$t/root$d" && mkdir -p "$t/root$d/src" "$t/root$d/hostbuild" &&
	  mount --bind "$6" "$t/root$d/src" && mount -o remount,bind,ro "$t/root$d/src" &&
	  mount --bind "$7" "$t/root$d/hostbuild" && mount -o remount,bind,ro "$t/root$d/hostbuild" &&
	  cp "$aiod_deb" "$vfs_deb" "$script" "$5" "$t/root$d/"; } || exit 97
	exec chroot "$t/root" bash "$d/$(basename "$script")" --inside "$d"
' rtio-deb-install "$tmp" "$aiod_deb" "$vfs_deb" "$here/tests/deb-install.sh" "$here/scripts/smbconf.sh" \
	"$here" "$(cd "${BUILD:-$here/build}" && pwd)"
status=$?
# The inside closes with its own summary line; 97: it never ran.
if [ "$status" -eq 97 ]; then
	fail "a copy of this machine (unshare --mount, an overlay over /, chroot)"
	finish
fi
exit "$status"
