# shellcheck shell=bash
# Shared by bench/mixed's SMB benchmarks (smallfiles.sh, manyconn.sh): one
# private smbd with a plain share and rtio shares, and one private aiod with
# the README's stream settings. Source it after setting NAME (the script's
# name, for messages), then:
#
#   mixed_need_root_tools           refuse to run without root, aiod, smbd, rtio.so
#   mixed_port                      the first free TCP port in 4460..4474 (or BENCH_PORT)
#   mixed_tmp                       make the run's directory $T (under BENCH_DIR, default
#                                   /var/tmp: the real disk) and remove it at exit
#                                   (kept with MIXED_KEEP=1, for its logs); set the
#                                   clients' TCP congestion control (BENCH_TCP_CC,
#                                   default cubic, "host" the host's; bench/tcpcc.sh)
#                                   and put it back at exit
#   mixed_aiod_ini CACHE            $T/aiod.ini with the README's settings
#   mixed_smb_conf PORT SHARE...    $T/smb.conf with the shares below (smbd's log
#                                   level: MIXED_SMB_LOG_LEVEL, default 0)
#   mixed_start                     start aiod (at nice -5 as conf/aiod.service runs it;
#                                   MIXED_AIOD_NICE) and smbd (AIOD_PID, SMBD_PID)
#   mixed_smbd_ticks / mixed_aiod_ticks  CPU ticks of smbd's process group / aiod
#   mixed_settle                    wait until smbd is back to its own processes
#   mixed_aiod_stat KEY             one value of aiodctl stats
#   mixed_rounds OUT RUNS SECS C..  interleaved rounds of the script's round()
#
# The shares:
#   plain  no VFS module
#   rtio   vfs objects = rtio with aiod as README.md sets it up for streams
#          ("Real-time streams in three settings": [cache] direct_io = yes, a
#          stream class on *.mxf and, without a calibration profile,
#          [readahead] io_size = 16M, [engine] queue_depth = 1); the module's
#          defaults
#   rtio0  the same with rtio:register min size = 0: every file registered
#          with aiod at open
#   rtiornd the same with rtio:random = aiod: every random miss a round trip
#          to aiod (rtio before rtio:random)
#   iouring vfs objects = io_uring (Samba's own module), a second baseline
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

mixed_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/smbconf.sh
. "$mixed_root/scripts/smbconf.sh"
# shellcheck source=../../scripts/proc.sh
. "$mixed_root/scripts/proc.sh"
# shellcheck source=../../scripts/aiodcaps.sh
. "$mixed_root/scripts/aiodcaps.sh"
# shellcheck source=../tcpcc.sh
. "$mixed_root/bench/tcpcc.sh"
BUILD=${BUILD:-$mixed_root/build}
USER_NAME=rtiotest
PASS=rtio-Bench-pw1
SMBD_PID=""
AIOD_PID=""

die() { echo "bench/mixed/$NAME: $*" >&2; exit 1; }

mixed_need_root_tools() {
	[ "$(id -u)" = 0 ] || die "must run as root (starts smbd, adds the bench user)"
	# aiod runs with its unit's capabilities only, as deployed
	rtio_aiod_as_deployed_init || die "cannot run aiod as its unit does"
	[ -x "$BUILD/aiod" ] && [ -x "$BUILD/aiodctl" ] || die "$BUILD/aiod, aiodctl not built: run make"
	command -v smbclient > /dev/null || die "smbclient not installed: run make deps"
	smbd -b | grep -q MODULESDIR || die "smbd not installed: run make deps"
	[ -f "$(smbd -b | sed -n 's/^ *MODULESDIR: *//p')/vfs/rtio.so" ] ||
		die "rtio.so not installed: run make install-module"
}

mixed_port() {
	local p
	if [ -n "${BENCH_PORT:-}" ]; then
		echo "$BENCH_PORT"
		return 0
	fi
	for ((p = 4460; p <= 4474; p++)); do
		if ! ss -Htln "sport = :$p" | grep -q .; then
			echo "$p"
			return 0
		fi
	done
	die "no free TCP port in 4460..4474 (set BENCH_PORT)"
}

mixed_cleanup() {
	local p
	for p in $SMBD_PID $AIOD_PID ${MIXED_EXTRA_PIDS:-}; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $SMBD_PID $AIOD_PID ${MIXED_EXTRA_PIDS:-}; do
		wait "$p" 2>/dev/null
	done
	bench_tcp_cc_restore
	if [ -n "${MIXED_KEEP:-}" ]; then
		echo "kept $T (MIXED_KEEP)" >&2
	else
		rm -rf "$T"
	fi
}

mixed_tmp() {
	T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/rtio-$NAME.XXXXXX") || die "mktemp failed"
	chmod 755 "$T"
	trap mixed_cleanup EXIT
	trap 'exit 130' INT TERM
	rtio_smb_dirs "$T"
	mkdir -p "$T"/{aiod,log,share}
	mixed_tcp_cc
}

# mixed_tcp_cc: BENCH_TCP_CC on the clients' connections for the run (the
# caller's EXIT trap runs bench_tcp_cc_restore); exported for the reports
mixed_tcp_cc() {
	bench_tcp_cc_set "bench/$NAME" "${BENCH_TCP_CC:-cubic}" || die "BENCH_TCP_CC=${BENCH_TCP_CC:-cubic}: see above"
	export BENCH_TCP_CC_IN_EFFECT
}

mixed_aiod_ini() {
	cat > "$T/aiod.ini" <<EOI
[global]
socket_path = $T/aiod/aiod.sock

[cache]
size = $1
direct_io = yes

[readahead]
io_size = 16M

[engine]
queue_depth = 1

[admission]
profile = $T/no-device.profile

[stream.hd]
match = *.mxf
bitrate = 100M
prebuffer_ms = 1000
EOI
}

mixed_smb_conf() {
	local port=$1 c
	shift
	rtio_smb_global "$T" "$port" > "$T/smb.conf"
	{
		printf '\tlog level = %s\n\tmax log size = 10000\n' "${MIXED_SMB_LOG_LEVEL:-0}"
		for c in "$@"; do
			mkdir -p "$T/share/$c"
			printf '[%s]\n\tpath = %s\n\tread only = no\n' "$c" "$T/share/$c"
			case $c in
			plain) ;;
			rtio) printf '\tvfs objects = rtio\n\trtio:socket = %s\n' "$T/aiod/aiod.sock" ;;
			rtio0) printf '\tvfs objects = rtio\n\trtio:socket = %s\n\trtio:register min size = 0\n' \
				"$T/aiod/aiod.sock" ;;
			rtiornd) printf '\tvfs objects = rtio\n\trtio:socket = %s\n\trtio:random = aiod\n' \
				"$T/aiod/aiod.sock" ;;
			iouring) printf '\tvfs objects = io_uring\n' ;;
			*) die "unknown configuration '$c' (plain, rtio, rtio0, rtiornd, iouring)" ;;
			esac
		done
	} >> "$T/smb.conf"
}

mixed_start() {
	id "$USER_NAME" > /dev/null 2>&1 || useradd --system --no-create-home "$USER_NAME" ||
		die "cannot create user $USER_NAME"
	chown -R "$USER_NAME" "$T"/share
	printf '%s\n%s\n' "$PASS" "$PASS" | smbpasswd -c "$T/smb.conf" -a -s "$USER_NAME" > /dev/null ||
		die "smbpasswd failed"
	# at the priority conf/aiod.service gives it (Nice=-5): what a server runs
	nice -n "${MIXED_AIOD_NICE:--5}" "${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$T/aiod.ini" -F \
		>> "$T/log/aiod.log" 2>&1 &
	AIOD_PID=$!
	# a large cache takes seconds to lock in (longer while the page cache is full of the data just written)
	for _ in $(seq 600); do
		[ -S "$T/aiod/aiod.sock" ] && break
		kill -0 "$AIOD_PID" 2>/dev/null || break
		sleep 0.1
	done
	[ -S "$T/aiod/aiod.sock" ] || die "aiod did not start: $(tail -3 "$T/log/aiod.log")"
	smbd -F --debug-stdout -s "$T/smb.conf" > "$T/log/smbd.log" 2>&1 &
	SMBD_PID=$!
	for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && break; sleep 0.1; done
	rtio_alive "$SMBD_PID" || die "smbd did not start: $(tail -3 "$T/log/smbd.log")"
	sleep 1
	MIXED_BASE_PROCS=$(mixed_group_pids | wc -l)	# smbd and its helpers (notifyd, cleanupd)
}

# smbd's process group: utime + stime (+ reaped children's) of each member, in ticks
mixed_group_pids() { ps -e -o pid=,pgid= | awk -v g="$SMBD_PID" '$2 == g {print $1}'; }
mixed_smbd_ticks() {
	local p sum=0 t
	for p in $(mixed_group_pids); do
		t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null) || continue
		sum=$((sum + ${t:-0}))
	done
	echo "$sum"
}
# aiod's CPU counts for the shares that use it only
mixed_aiod_ticks() {
	[ "$1" = plain ] && { echo 0; return; }
	awk '{print $14 + $15 + $16 + $17}' "/proc/$AIOD_PID/stat" 2>/dev/null || echo 0
}
mixed_aiod_stat() {
	"$BUILD/aiodctl" -s "$T/aiod/aiod.sock" stats | awk -F= -v k="$1" '$1 == k {print $2}'
}
# Wait until the connections' smbd children are gone (reaped: their CPU is the
# parent's now). A helper smbd started meanwhile becomes part of the baseline.
mixed_settle() {
	local n=${1:-100} now
	while now=$(mixed_group_pids | wc -l) && [ "$now" -gt "$MIXED_BASE_PROCS" ] && [ "$n" -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	if [ "$now" -gt "$MIXED_BASE_PROCS" ]; then
		echo "bench/mixed/$NAME: smbd has $now processes, not $MIXED_BASE_PROCS, after waiting:" \
			"counting them from now on" >&2
		MIXED_BASE_PROCS=$now
	fi
}

mixed_calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

# mixed_rounds OUT RUNS DURATION CONFIG...: RUNS rounds of the script's
# "round CONFIG DURATION" (one JSON line each), the order of the configurations
# rotated every round so none always goes first; lines tagged with the round
# go to OUT and to stdout.
mixed_rounds() {
	local out=$1 runs=$2 secs=$3 r c
	shift 3
	for r in $(seq "$runs"); do
		local order=("$@")
		for _ in $(seq $(((r - 1) % ${#order[@]}))); do order=("${order[@]:1}" "${order[0]}"); done
		for c in "${order[@]}"; do
			round "$c" "$secs" | sed "s/^{/{\"run\":$r,/" >> "$out"
			tail -n 1 "$out"
		done
	done
}
