#!/usr/bin/env bash
# aiodctl doctor (issue 14): against a private aiod it passes the aiod, module
# and share checks; a copy of rtio.so whose required Samba symbol version
# was edited (what a Samba upgrade does to an installed module) fails the
# module check with a message naming that version, and doctor exits 1; a
# share naming another socket fails; a bad option exits 2. doctor's wanted
# mqueue sysctls must equal conf/90-rtio-mqueue.conf.
#
# Needs aiod, aiodctl, rtio.so and testparm; no smbd, no port. run.sh runs it
# against the harness's aiod; run directly
# (tests/integration/t_doctor.sh) it starts its own aiod in a temporary
# directory, as t_metrics.sh does.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# t_doctor_conf DIR SOCK SHARE_SOCK: an smb.conf with one rtio share on SHARE_SOCK
t_doctor_conf() {
	mkdir -p "$1/media"
	printf '[global]\n\tserver role = standalone server\n[media]\n\tpath = %s\n\tvfs objects = rtio\n\trtio:socket = %s\n[plain]\n\tpath = %s\n' \
		"$1/media" "$3" "$1/media" > "$1/smb.conf"
}

# A copy of rtio.so needing a Samba symbol version this Samba does not have;
# prints the edited version name.
t_doctor_broken_module() {
	python3 - "$1" "$2" <<'PY'
import re, sys
b = open(sys.argv[1], 'rb').read()
old = re.search(rb'[A-Z0-9_.]*_PRIVATE_SAMBA', b).group(0)
i = re.search(rb'[0-9]', old).start()
new = old[:i] + (b'8' if old[i:i + 1] == b'9' else b'9') + old[i + 1:]
open(sys.argv[2], 'wb').write(b.replace(old, new))
print(new.decode())
PY
}

t_doctor_expect() {
	local want=$1 out=$2 rc=$3 pattern
	shift 3
	[ "$rc" = "$want" ] || { echo "doctor: exit $rc, expected $want"; cat "$out"; return 1; }
	for pattern in "$@"; do
		grep -q -- "$pattern" "$out" || { echo "doctor: no line '$pattern'"; cat "$out"; return 1; }
	done
}

# t_doctor SOCK DIR INI. Every step ends in "|| return 1": set -e does not
# hold inside a function whose caller tests its status.
t_doctor() {
	local sock=$1 d=$2 ini=$3 ctl rc bad
	ctl=("$BUILD/aiodctl" -s "$sock" doctor -c "$ini" --smbconf "$d/smb.conf")
	mkdir -p "$d" || return 1
	t_doctor_conf "$d" "$sock" "$sock" || return 1
	cp "$BUILD/rtio.so" "$d/rtio.so" || return 1
	"${ctl[@]}" --module "$d/rtio.so" > "$d/good.txt" && rc=0 || rc=$?
	cat "$d/good.txt"
	# aiod: WARN only if aiod and aiodctl were built from different commits
	t_doctor_expect 0 "$d/good.txt" "$rc" "^OK   module: .* loads; built for Samba" \
		"^\(OK  \|WARN\) aiod: aiod .* (pid [0-9]*) " "^OK   shares: 1 with rtio" \
		"^OK   memlock: " "^OK   admission: [0-9]* streams admitted, .*; none waiting" \
		"^doctor: 0 failed" || return 1
	t_doctor_mqueue_agrees "$d/good.txt" || return 1
	bad=$(t_doctor_broken_module "$BUILD/rtio.so" "$d/rtio-other-samba.so") || return 1
	"${ctl[@]}" --module "$d/rtio-other-samba.so" > "$d/bad.txt" && rc=0 || rc=$?
	t_doctor_expect 1 "$d/bad.txt" "$rc" "^FAIL module: .*version \`$bad' not found" \
		"fix: rebuild" || return 1
	grep '^FAIL module' "$d/bad.txt"
	t_doctor_conf "$d" "$sock" "$d/elsewhere.sock" || return 1
	"${ctl[@]}" --module "$d/rtio.so" > "$d/astray.txt" && rc=0 || rc=$?
	t_doctor_expect 1 "$d/astray.txt" "$rc" \
		"^FAIL shares: \[media\] uses rtio:socket = $d/elsewhere.sock" || return 1
	# a VFS module preloaded: smbd 4.22 crashes at every tree connect
	t_doctor_conf "$d" "$sock" "$sock" || return 1
	sed -i "s|^\[global\]$|[global]\n\tpreload modules = $d/vfs/rtio.so|" "$d/smb.conf" || return 1
	"${ctl[@]}" --module "$d/rtio.so" > "$d/preload.txt" && rc=0 || rc=$?
	t_doctor_expect 1 "$d/preload.txt" "$rc" \
		"^FAIL shares: \[global\] preload modules = $d/vfs/rtio.so: smbd then crashes" || return 1
	"${ctl[@]}" --bogus 2> /dev/null && rc=0 || rc=$?
	[ "$rc" = 2 ] || { echo "doctor --bogus: exit $rc, expected 2"; return 1; }
}

# What doctor wants is what make install configures.
t_doctor_mqueue_agrees() {
	local conf here msg queues
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	conf=$here/conf/90-rtio-mqueue.conf
	msg=$(awk -F' *= *' '$1 == "fs.mqueue.msg_max" {print $2}' "$conf")
	queues=$(awk -F' *= *' '$1 == "fs.mqueue.queues_max" {print $2}' "$conf")
	grep -q "msg_max = .* (want >= $msg), fs.mqueue.queues_max = .* (want >= $queues)" "$1" ||
		{ echo "doctor's mqueue values differ from $conf ($msg, $queues)"; return 1; }
}

# ---- run directly: a private aiod, no smbd ----

t_doctor_standalone() {
	local here t pid rc=0
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	BUILD=${BUILD:-$here/build}
	t=$(mktemp -d /tmp/rtio-doctor.XXXXXX) || return 1
	mkdir -m 700 "$t/aiod"
	printf '[global]\nsocket_path = %s\n[cache]\nsize = 64M\nmlock = no\n[admission]\nprofile = %s\n' \
		"$t/aiod/aiod.sock" "$t/no-device.profile" > "$t/aiod.ini"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$t/aiod.ini" -F -d 2 > "$t/aiod.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do [ -S "$t/aiod/aiod.sock" ] && break; sleep 0.1; done
	t_doctor "$t/aiod/aiod.sock" "$t" "$t/aiod.ini" || rc=1
	kill -TERM "$pid"
	wait "$pid" || { echo "aiod exited with $?"; rc=1; }
	if [ $rc = 0 ]; then
		rm -rf "$t"
		echo "t_doctor: passed"
	else
		echo "t_doctor: FAILED (kept $t)"
	fi
	return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	t_doctor_standalone
	exit $?
fi
