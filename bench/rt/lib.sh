# Real-time stream benchmark: the pieces bench/rt/run.sh and scripts/demo.sh
# share. An emulated single-spindle disk (bench/emudisk) with one stream file
# per client, a private smbd on a free port in front of it, aiod for the rtio
# configuration, and paced rtio-stream clients (bench/stream) against it.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Source it, call rt_init, then rt_emu_up, rt_make_files and rt_measure per
# data point (the clients and the measured runs are in measure.sh, which this
# file sources). Every process started here is recorded by pid in $RT_T/pids
# and stopped by pid from the EXIT trap that rt_init installs (also on failure
# and Ctrl-C); the emulated disk is torn down by its own script, which works
# from its state file. Nothing is killed by name.
#
# Configurations (rt_measure's first argument):
#   plain       a share without VFS modules; loop read_ahead_kb as emudisk pins it (128)
#   plain-ra    the same share with the loop device's read_ahead_kb = $RT_BIG_RA_KB
#   io_uring    vfs objects = io_uring
#   rtio        vfs objects = rtio, with aiod (stream class on *.mxf), set up
#               as RT_SETTINGS says (rt_settings_readme / rt_settings_tuned)
#
# Environment (defaults in brackets):
#   BUILD           build dir with aiod, aiodctl, emudisk, rtio-stream [<repo>/build]
#   RT_SMB_PORT     smbd port; when unset, the first free one from 4445 up
#   RT_KEEP=1       keep the temp dir (logs of every run) at exit
#   RT_AIOD_LOG_LEVEL  aiod's log_level [3]; 4 traces every device request (engine: submit/done)
#   RT_TMP          where the temp dir goes [/tmp]
#   RT_SMBD_LOG_LEVEL  smb.conf log level [1]
#   RT_RTIO_HITS    the rtio share's rtio:hits (local: smbd copies cached reads itself,
#                   the README's setting; aiod: every read a round trip) [local]
#   RT_PROBE        a command run (eval) 2 s after the last stream started, output in the run dir
#   RT_ON_EXIT      a command the EXIT trap runs first (e.g. writing partial results)
#   RT_SETTINGS     aiod's settings: readme (the README's recommended stream
#                   configuration) or tuned (the bench-only values of issue 5) [readme]
#   RT_CACHE        aiod's [cache] size, both settings [1G]
#   RT_AIOD_PRIO    "NICE IOCLASS IOPRIO": aiod runs under nice and ionice
#                   with them ("-5 1 2" is conf/aiod.service's Nice,
#                   IOSchedulingClass realtime and IOSchedulingPriority);
#                   empty: as the bench was started, as every committed
#                   result so far []
#   RT_IOSCHED      the emulated disk's I/O scheduler (its loop device's),
#                   e.g. mq-deadline, which Debian gives a rotational disk
#                   [unset: the loop device's own, none]
#   RT_ADMISSION_PROFILE  an aiod --calibrate profile for [admission] profile
#                   (run.sh fills it when RT_PROFILE=1) [none]
#   RT_QD RT_IO_SIZE RT_PREBUFFER_MS RT_BE_DEADLINE_MS RT_BLOCK RT_DIRECT_IO
#                   the tuned settings' values (ignored by readme)
#   RT_TCP_CC       the TCP congestion control of the clients' connections to
#                   smbd (all on 127.0.0.1): rt_init sets it on the loopback
#                   route for the run and puts the route back at exit; "host"
#                   leaves the host's own (net.ipv4.tcp_congestion_control).
#                   With bbr on loopback (no qdisc: TCP paces itself) a
#                   1 MiB read reached the client 110-127 ms late about once
#                   per 100 s of a 200 Mbit/s stream, with the bytes in
#                   smbd's hands on time, and 600-750 segments were sent twice
#                   per sweep; with cubic neither (rt-tcp-20261129-2150.md) [cubic]
#   RT_CHUNK RT_CLIENT_PREBUFFER RT_STAGGER_MS RT_GREEDY_CHUNK RT_RECORDERS
#   RT_RECORD_BITRATE RT_RECORD_CHUNK   the clients (measure.sh)

RT_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RT_ROOT=$(cd "$RT_HERE/../.." && pwd)
BUILD=${BUILD:-$RT_ROOT/build}
case $BUILD in /*) ;; *) BUILD=$RT_ROOT/$BUILD ;; esac
# shellcheck source=../../scripts/smbconf.sh
. "$RT_ROOT/scripts/smbconf.sh"
# shellcheck source=../../scripts/proc.sh
. "$RT_ROOT/scripts/proc.sh"
# shellcheck source=../../scripts/aiodcaps.sh
. "$RT_ROOT/scripts/aiodcaps.sh"

RT_USER=rtiotest
RT_PASS=rtio-Test-pw1
RT_CLK_TCK=$(getconf CLK_TCK)
# Debian's python3 (python3-matplotlib is installed for it), not whatever
# python3 comes first in PATH
RT_PY=${RT_PY:-/usr/bin/python3}
[ -x "$RT_PY" ] || RT_PY=python3

# Stream files are *.mxf (the stream class matches them), the greedy reader's
# file is not: it is what a bulk copy of some other file looks like.
RT_STREAM_FMT='stream%02d.mxf'
RT_GREEDY_FILE='copy.bin'

# ---- rtio settings: settings.sh ----
# shellcheck source=bench/rt/settings.sh
. "$RT_HERE/settings.sh"
# shellcheck source=bench/tcpcc.sh
. "$RT_ROOT/bench/tcpcc.sh"

RT_T=""			# temp dir of this invocation
RT_TCP_CC_IN_EFFECT=""	# the clients' TCP congestion control (rt_loopback_cc)
RT_EMU=""		# emudisk dir ($RT_T/emu)
RT_MNT=""		# ext4 on the emulated disk
RT_LOOP_RA_SYS=""	# /sys/block/loopN/queue/read_ahead_kb
RT_LOOP_RA_BASE=""	# its value as emudisk-up.sh left it
RT_SMBD_PID=""
RT_AIOD_PID=""
RT_PORT=""
RT_CLEANED=0

rt_log() { printf '%s: %s\n' "${RT_PROG:-rt}" "$*" >&2; }
rt_die() {
	printf '%s: FATAL: %s\n' "${RT_PROG:-rt}" "$*" >&2
	exit 1
}

# ---- processes, by pid ----

rt_track() { echo "$1 $2" >> "$RT_T/pids"; }

# rt_wait_gone PID SECONDS
rt_wait_gone() {
	local n=$(($2 * 10))
	while [ $n -gt 0 ] && rtio_alive "$1"; do
		sleep 0.1
		n=$((n - 1))
	done
	! rtio_alive "$1"
}

# rt_stop_pid PID NAME SECONDS: SIGTERM, then SIGKILL after SECONDS.
rt_stop_pid() {
	rtio_alive "$1" || { wait "$1" 2>/dev/null; return 0; }
	kill -TERM "$1" 2>/dev/null
	if ! rt_wait_gone "$1" "$3"; then
		rt_log "$2 (pid $1) ignored SIGTERM for $3 s, killing it"
		kill -KILL "$1" 2>/dev/null
		rt_wait_gone "$1" 2 || true
	fi
	wait "$1" 2>/dev/null
	return 0
}

# CPU seconds x CLK_TCK of one process: its own and its reaped children's
# (utime stime cutime cstime, fields 14-17 of /proc/PID/stat, counted after
# the ")" that ends the command name, which may hold spaces).
rt_ticks_pid() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	awk '{ print $12 + $13 + $14 + $15 }' <<< "${stat##*) }"
}

# Of a whole process group: smbd's per-client children are reaped by the
# parent, so their time ends up in its cutime/cstime once they exit.
rt_ticks_group() {
	local p sum=0
	for p in $(ps -e -o pid=,pgid= | awk -v g="$1" '$2 == g {print $1}'); do
		sum=$((sum + $(rt_ticks_pid "$p")))
	done
	echo "$sum"
}

# ---- setup and teardown ----

rt_require() {
	local f
	[ "$(id -u)" = 0 ] || rt_die "must run as root (mount, losetup, smbd, page cache)"
	# aiod runs with its unit's capabilities only, as deployed
	rtio_aiod_as_deployed_init || rt_die "cannot run aiod as its unit does"
	for f in aiod aiodctl emudisk rtio-stream; do
		[ -x "$BUILD/$f" ] || rt_die "$BUILD/$f not built (run make first)"
	done
	for f in smbd smbpasswd losetup fusermount3 fincore filefrag fallocate ss ip; do
		command -v "$f" >/dev/null || rt_die "$f not installed"
	done
	"$RT_PY" -c 'import json' 2>/dev/null || rt_die "$RT_PY does not run"
	RT_MODULESDIR=$(smbd -b | awk '/MODULESDIR:/ {print $2}')
	# Without the module every rtio run's opens fail (each stream counted
	# late); an older one measures code that is not this build's.
	[ -f "$RT_MODULESDIR/vfs/rtio.so" ] ||
		rt_die "rtio.so is not in $RT_MODULESDIR/vfs/ (make demo and make bench install it; by hand: make install-module)"
	[ ! -f "$BUILD/rtio.so" ] || cmp -s "$BUILD/rtio.so" "$RT_MODULESDIR/vfs/rtio.so" ||
		rt_die "$RT_MODULESDIR/vfs/rtio.so is not $BUILD/rtio.so (an older build?): make install-module"
}

# rt_init PROG: temp dir, EXIT trap, the SMB user.
rt_init() {
	RT_PROG=$1
	rt_require
	RT_T=$(mktemp -d "${RT_TMP:-/tmp}/rtio-rt.XXXXXX") || rt_die "mktemp failed"
	chmod 755 "$RT_T"
	trap rt_cleanup EXIT
	trap 'rt_log "interrupted: stopping what this run started"; exit 130' INT TERM HUP
	rtio_smb_dirs "$RT_T" || rt_die "cannot make smbd's directories in $RT_T"
	mkdir -p "$RT_T"/{aiod,runs,panic}
	chmod 1777 "$RT_T/panic"
	: > "$RT_T/pids"
	RT_PORT=${RT_SMB_PORT:-$(rt_free_port 4445 4474)} || rt_die "no free TCP port in 4445..4474"
	rt_write_smbconf plain
	if ! id "$RT_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$RT_USER" || rt_die "useradd $RT_USER failed"
	fi
	printf '%s\n%s\n' "$RT_PASS" "$RT_PASS" |
		smbpasswd -c "$RT_T/smb.conf" -a -s "$RT_USER" >/dev/null ||
		rt_die "smbpasswd -a $RT_USER failed"
	rt_loopback_cc
}

# rt_loopback_cc: RT_TCP_CC on the local route to 127.0.0.1 for the run
# (bench/tcpcc.sh); the route as it was goes back at exit.
rt_loopback_cc() {
	bench_tcp_cc_set "$RT_PROG" "${RT_TCP_CC:-cubic}" || rt_die "RT_TCP_CC=${RT_TCP_CC:-cubic}: see above"
	RT_TCP_CC_IN_EFFECT=$BENCH_TCP_CC_IN_EFFECT
}

rt_free_port() {
	local p
	for ((p = $1; p <= $2; p++)); do
		if ! ss -Htln "sport = :$p" | grep -q .; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

rt_cleanup() {
	local pid name
	[ "$RT_CLEANED" = 0 ] || return 0
	RT_CLEANED=1
	set +e
	[ -n "$RT_T" ] || return 0
	[ -z "${RT_ON_EXIT:-}" ] || eval "$RT_ON_EXIT"
	# clients first, then smbd, then aiod
	while read -r pid name; do
		case $name in
		smbd|aiod) ;;
		*) rtio_alive "$pid" && rt_stop_pid "$pid" "$name" 3 ;;
		esac
	done < "$RT_T/pids"
	rt_stop_smbd
	rt_stop_aiod
	while read -r pid name; do
		if rtio_alive "$pid"; then
			rt_log "$name (pid $pid) still running at exit, killing it"
			kill -KILL "$pid" 2>/dev/null
		fi
	done < "$RT_T/pids"
	rt_emu_down
	bench_tcp_cc_restore
	if [ "${RT_KEEP:-0}" = 1 ]; then
		rt_log "kept $RT_T"
	else
		rm -rf "$RT_T"
	fi
}

# ---- the emulated disk ----

# rt_emu_up SIZE: the disk, its ext4, and the share directory on it.
rt_emu_up() {
	RT_EMU=$RT_T/emu
	rt_log "bringing up a $1 emulated disk in $RT_EMU"
	BUILD=$BUILD EMUDISK_BIN=$BUILD/emudisk "$RT_ROOT/bench/emudisk/emudisk-up.sh" "$RT_EMU" "$1" \
		> "$RT_T/emudisk-up.log" 2>&1 ||
		rt_die "emudisk-up.sh failed: $(tail -n 5 "$RT_T/emudisk-up.log")"
	RT_MNT=$RT_EMU/mnt
	RT_LOOP_RA_SYS=/sys/block/$(basename "$(sed -n 's/^loop=//p' "$RT_EMU/state")")/queue/read_ahead_kb
	RT_LOOP_RA_BASE=$(cat "$RT_LOOP_RA_SYS")
	if [ -n "${RT_IOSCHED:-}" ]; then
		echo "$RT_IOSCHED" > "${RT_LOOP_RA_SYS%/read_ahead_kb}/scheduler" ||
			rt_die "cannot set the emulated disk's scheduler to $RT_IOSCHED"
	fi
	mkdir -p "$RT_MNT/media/rec"
	chmod 755 "$RT_MNT/media"
	# recorders (rtio-stream --write) create their files here, as the user
	chown "$RT_USER" "$RT_MNT/media/rec" || rt_die "chown $RT_USER $RT_MNT/media/rec failed"
}

rt_emu_down() {
	[ -n "$RT_EMU" ] && [ -f "$RT_EMU/state" ] || return 0
	"$RT_ROOT/bench/emudisk/emudisk-down.sh" "$RT_EMU" >> "$RT_T/emudisk-up.log" 2>&1 ||
		rt_log "emudisk-down.sh $RT_EMU failed: $(tail -n 5 "$RT_T/emudisk-up.log")"
}

rt_set_readahead() {
	echo "$1" > "$RT_LOOP_RA_SYS" || rt_die "cannot set $RT_LOOP_RA_SYS to $1"
}

# rt_make_files COUNT SIZE_MIB GREEDY_MIB: stream files (and the greedy
# reader's file when GREEDY_MIB > 0), written with O_DIRECT through the model
# so the data really is on the emulated disk; existing files of the right size
# are kept.
rt_make_files() {
	local count=$1 mib=$2 gmib=$3 i f
	for ((i = 0; i < count; i++)); do
		# shellcheck disable=SC2059
		f=$RT_MNT/media/$(printf "$RT_STREAM_FMT" "$i")
		rt_write_file "$f" "$mib"
	done
	if [ "$gmib" -gt 0 ]; then
		rt_write_file "$RT_MNT/media/$RT_GREEDY_FILE" "$gmib"
	fi
	sync
}

# Media files are preallocated, as a video server lays them out: written
# straight away with O_DIRECT, ext4 cut them into 3-6 pieces scattered over
# the disk (4 of 14 files broke 4 MiB in), and the seek at each break landed
# in whichever request crossed it.
rt_write_file() {
	local f=$1 mib=$2
	if [ -f "$f" ] && [ "$(stat -c %s "$f")" = $((mib << 20)) ]; then
		return 0
	fi
	rm -f "$f"
	fallocate -l "$((mib << 20))" "$f" || rt_die "fallocate $f failed"
	dd if=/dev/zero of="$f" bs=8M count=$((mib / 8)) oflag=direct conv=notrunc status=none ||
		rt_die "writing $f failed"
	chmod 644 "$f"
}

# Physical discontinuities (a seek for any read crossing one) of the files
# given, summed: what filefrag -v shows as extents that do not touch.
rt_file_breaks() {
	local f
	for f in "$@"; do
		filefrag -v "$f" 2> /dev/null
	done | awk '/^File size/ { prev = "" }
		/^ *[0-9]+:/ { s = $4; sub(/\.\./, "", s); e = $5; sub(/:/, "", e)
			if (prev != "" && s + 0 != prev + 1) n++; prev = e }
		END { print n + 0 }'
}

# Drops the page cache of our files (POSIX_FADV_DONTNEED, then checked with
# fincore), and with RT_DROP_CACHES=1 the whole page cache as well.
rt_evict() {
	local resident files
	sync
	if [ "${RT_DROP_CACHES:-0}" = 1 ]; then
		echo 3 > /proc/sys/vm/drop_caches
	fi
	mapfile -t files < <(find "$RT_MNT/media" -maxdepth 1 -type f)
	[ "${#files[@]}" -gt 0 ] || return 0
	"$RT_PY" - "${files[@]}" <<'EOF' || rt_die "evicting the page cache of the bench files failed"
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
EOF
	resident=$(fincore -b -n -o RES "${files[@]}" | awk '{s += $1} END {print s + 0}')
	[ "$resident" = 0 ] || rt_log "warning: $resident bytes of the bench files still in the page cache"
}

# ---- smbd ----

# rt_write_smbconf CONFIG [WRITABLE]: WRITABLE=1 for recorders (they write
# into media/rec, the only directory the user owns)
rt_write_smbconf() {
	local vfs="" ro=yes
	[ "${2:-0}" = 1 ] && ro=no
	case $1 in
	plain|plain-ra) ;;
	io_uring) vfs="vfs objects = io_uring" ;;
	rtio) vfs="vfs objects = rtio
	rtio:socket = $RT_T/aiod/aiod.sock
	rtio:hits = ${RT_RTIO_HITS:-local}" ;;
	*) rt_die "unknown configuration '$1'" ;;
	esac
	rtio_smb_global "$RT_T" "$RT_PORT" > "$RT_T/smb.conf" || rt_die "cannot write $RT_T/smb.conf"
	cat >> "$RT_T/smb.conf" <<EOF
	map to guest = never
	log level = ${RT_SMBD_LOG_LEVEL:-1}
	# a crashing smbd leaves its stacks in $RT_T/panic (bench/rt/README.md)
	panic action = /bin/sh -c 'gdb -batch -nx -ex "thread apply all bt" -p %d > $RT_T/panic/smbd-%d.txt 2>&1'

[media]
	path = ${RT_MNT:-$RT_T}/media
	read only = $ro
	valid users = $RT_USER
	$vfs
EOF
}

# rt_wait_up PID WHAT LOG SECONDS CMD...: until CMD succeeds, as long as PID lives
rt_wait_up() {
	local pid=$1 what=$2 log=$3 secs=$4 n=$(($4 * 10))
	shift 4
	until "$@"; do
		rtio_alive "$pid" || rt_die "$what exited at start: $(tail -n 10 "$log")"
		n=$((n - 1))
		[ $n -gt 0 ] || rt_die "$what did not come up in $secs s ($*)"
		sleep 0.1
	done
}

rt_listening() { ss -Htln "sport = :$1" | grep -q .; }

# rt_start_smbd LOG
rt_start_smbd() {
	# smbd -F leads a process group of its own: its children are that group
	smbd -F --debug-stdout -s "$RT_T/smb.conf" -d 1 >> "$1" 2>&1 < /dev/null &
	RT_SMBD_PID=$!
	rt_track "$RT_SMBD_PID" smbd
	rt_wait_up "$RT_SMBD_PID" smbd "$1" 20 rt_listening "$RT_PORT"
}

rt_smbd_group() {
	[ -n "$1" ] || return 0
	ps -e -o pid=,pgid= | awk -v g="$1" '$2 == g && $1 != g {print $1}'
}

# Waits (up to 10 s) until smbd has no client children: their CPU time is
# then in smbd's cutime/cstime.
rt_smbd_idle() {
	local n=100
	while [ $n -gt 0 ] && ps -o args= -g "$RT_SMBD_PID" 2>/dev/null | grep -q '^smbd: client'; do
		sleep 0.1
		n=$((n - 1))
	done
}

rt_stop_smbd() {
	local p pid=$RT_SMBD_PID n=50
	[ -n "$pid" ] || return 0
	rt_stop_pid "$pid" smbd 15
	while [ -n "$(rt_smbd_group "$pid")" ] && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	for p in $(rt_smbd_group "$pid"); do
		rt_log "smbd child $p ($(ps -o args= -p "$p")) outlived smbd by 5 s, killing it"
		kill -KILL "$p" 2>/dev/null
	done
	RT_SMBD_PID=""
}

# ---- aiod ----

# rt_write_aiod_ini [NAME MATCH BITRATE]...: $RT_T/aiod.ini, the settings
# (rt_settings) between the bench's plumbing: its own socket and info logs,
# and an [admission] profile that is the calibrated one or none (never the
# system's /var/lib/aiod/device.profile).
rt_write_aiod_ini() {
	local mode=$RT_ADMISSION_MODE
	[ -n "$mode" ] || [ "$RT_SETTINGS" != tuned ] || mode=off
	{
		printf '%s\n' '[global]' "socket_path = $RT_T/aiod/aiod.sock" "log_level = ${RT_AIOD_LOG_LEVEL:-3}" ''
		rt_settings "$@"
		echo '[admission]'
		[ -z "$mode" ] || echo "mode = $mode"
		[ "$RT_ADMISSION_CAPACITY" = 0 ] || echo "capacity = $RT_ADMISSION_CAPACITY"
		echo "profile = ${RT_ADMISSION_PROFILE:-$RT_T/no-device.profile}"
	} > "$RT_T/aiod.ini"
	"$BUILD/aiod" --check-config -c "$RT_T/aiod.ini" > "$RT_T/aiod-check.log" 2>&1 ||
		rt_die "aiod rejects $RT_T/aiod.ini: $(cat "$RT_T/aiod-check.log")"
}

# rt_calibrate PROFILE SECONDS: aiod --calibrate on the emulated disk (a
# 512 MiB test file, SECONDS per point), the profile to PROFILE, the log to
# $RT_T/calibrate.log.
rt_calibrate() {
	rt_log "aiod --calibrate $RT_MNT ($2 s per point)"
	"$BUILD/aiod" --calibrate "$RT_MNT" --profile "$1" \
		--calibrate-size 512M --calibrate-seconds "$2" > "$RT_T/calibrate.log" 2>&1 ||
		rt_die "aiod --calibrate failed: $(tail -n 5 "$RT_T/calibrate.log")"
	rm -f "$RT_MNT/.aiod-calibrate.dat"
}

# rt_start_aiod LOG
rt_start_aiod() {
	rm -f "$RT_T/aiod/aiod.sock"
	local prio=()
	read -r -a prio <<< "${RT_AIOD_PRIO:-}"
	case ${#prio[@]} in
	0) ;;
	3) prio=(nice -n "${prio[0]}" ionice -c "${prio[1]}" -n "${prio[2]}") ;;
	*) rt_die "RT_AIOD_PRIO='$RT_AIOD_PRIO': expected \"NICE IOCLASS IOPRIO\" or \"\"" ;;
	esac
	"${prio[@]}" "${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$RT_T/aiod.ini" -F >> "$1" 2>&1 < /dev/null &
	RT_AIOD_PID=$!
	rt_track "$RT_AIOD_PID" aiod
	rt_wait_up "$RT_AIOD_PID" aiod "$1" 30 test -S "$RT_T/aiod/aiod.sock"
}

rt_stop_aiod() {
	[ -n "$RT_AIOD_PID" ] || return 0
	rt_stop_pid "$RT_AIOD_PID" aiod 10
	RT_AIOD_PID=""
}

rt_aiodctl() { "$BUILD/aiodctl" -s "$RT_T/aiod/aiod.sock" "$@"; }

# ---- clients and measured runs ----

# shellcheck source=bench/rt/measure.sh
. "$RT_HERE/measure.sh"
