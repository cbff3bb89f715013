# Integration test harness: a real aiod and a real (unmodified) smbd on a
# private port, in a per-run temp dir, driven by smbclient and libsmbclient.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Source it, call it_setup, run tests with it_run NAME FUNCTION, end with
# it_finish (which prints "N passed, M failed" and returns non-zero on a
# failure). Every process the harness starts is recorded by pid and stopped
# by pid from an EXIT trap, also when a test or the harness itself fails.
#
# Environment:
#   BUILD           build dir with aiod, aiodctl (default: <repo>/build)
#   RTIO_SMB_PORT   smbd port (default 4445)
#   RTIO_KEEP=1     keep the temp dir (logs) even when everything passed

IT_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IT_ROOT=$(cd "$IT_HERE/../.." && pwd)
# shellcheck source=../../scripts/smbconf.sh
. "$IT_ROOT/scripts/smbconf.sh"
# shellcheck source=../../scripts/proc.sh
. "$IT_ROOT/scripts/proc.sh"
# shellcheck source=../../scripts/pagecache.sh
. "$IT_ROOT/scripts/pagecache.sh"
# shellcheck source=../../scripts/aiodcaps.sh
. "$IT_ROOT/scripts/aiodcaps.sh"
BUILD=${BUILD:-$IT_ROOT/build}
IT_PORT=${RTIO_SMB_PORT:-4445}
IT_USER=rtiotest
IT_PASS=rtio-Test-pw1
IT_BLOCK=$((1024 * 1024))	# aiod [cache] block_size set below
IT_REGISTER_MIN=$((1024 * 1024))	# rtio:register min size of the shares that do not set it
IT_TIMEOUT_MS=3000		# rtio:timeout of the rtio shares

IT_PASSED=0
IT_FAILED=0
IT_FAILED_NAMES=()
IT_T=""			# per-run temp dir
IT_AIOD_PID=""		# as started in this shell; $IT_T/aiod.pid is the truth
IT_SMBD_PID=""
IT_MQ_MNT=""
IT_TORN_DOWN=0

it_log() { printf 'itest: %s\n' "$*" >&2; }
it_die() {
	printf 'itest: FATAL: %s\n' "$*" >&2
	exit 1
}

# ---- results ----

it_pass() {
	IT_PASSED=$((IT_PASSED + 1))
	printf 'PASS %s\n' "$1"
}

it_fail() {
	IT_FAILED=$((IT_FAILED + 1))
	IT_FAILED_NAMES+=("$1")
	printf 'FAIL %s: %s\n' "$1" "${2:-}"
}

# it_run NAME FUNCTION [ARGS...]: FUNCTION returns 0 (pass) or prints why and returns 1.
# The function runs in a subshell with set -e: an unexpected failing command fails the test.
it_run() {
	local name=$1 t0 rc ms npids nemus
	shift
	npids=$(it_count "$IT_T/pids") nemus=$(it_count "$IT_T/emudisks")
	t0=$(date +%s%N)
	( set -e; "$@" ) > "$IT_T/log/test-$name.out" 2>&1
	rc=$?
	IT_AIOD_PID=$(it_aiod_pid)	# the test may have restarted it
	# A test that stopped half-way (errexit) never reached its own clean-up:
	# what it started must not serve the next test (same ports, same names).
	it_reap_since "$npids" "$nemus" >> "$IT_T/log/test-$name.out" 2>&1 || rc=1
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ $rc = 0 ]; then
		it_pass "$name ($((ms / 1000)).$((ms % 1000 / 100))s)"
	else
		it_fail "$name" "$(printf '\n'; tail -n 15 "$IT_T/log/test-$name.out" | sed 's/^/    /')"
	fi
}

# ---- setup ----

it_require() {
	local f
	for f in "$BUILD/aiod" "$BUILD/aiodctl"; do
		[ -x "$f" ] || it_die "$f not built (run make first)"
	done
	for f in smbd smbclient smbpasswd pkg-config gcc md5sum; do
		command -v "$f" >/dev/null || it_die "$f not installed (run scripts/deps.sh)"
	done
	[ "$(id -u)" = 0 ] || it_die "must run as root (starts smbd, adds the test user)"
	# Every aiod the tests start runs with aiod.service's capabilities only.
	rtio_aiod_as_deployed_init || it_die "cannot run aiod as its unit does"
	it_modulesdir=$(smbd -b | awk '/MODULESDIR:/ {print $2}')
	[ -f "$it_modulesdir/vfs/rtio.so" ] ||
		it_die "rtio.so is not installed in $it_modulesdir/vfs/ (make installs it for the tests)"
}

it_user() {
	if ! id "$IT_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$IT_USER" || it_die "useradd $IT_USER failed"
		it_log "created user $IT_USER"
	fi
	printf '%s\n%s\n' "$IT_PASS" "$IT_PASS" |
		smbpasswd -c "$IT_T/smb.conf" -a -s "$IT_USER" >/dev/null ||
		it_die "smbpasswd -a $IT_USER failed"
}

# Names of shared-memory and message-queue objects, to see that none is left.
it_ipc_snapshot() {
	{
		ls /dev/shm 2>/dev/null | grep -i -e rtio -e aiod | sed 's|^|shm:|'
		if [ -n "$IT_MQ_MNT" ]; then
			ls "$IT_MQ_MNT" 2>/dev/null | sed 's|^|mq:|'
		fi
	} | sort
}

it_write_configs() {
	cat > "$IT_T/aiod.ini" <<EOF
[global]
socket_path = $IT_T/aiod/aiod.sock
log_level = 2

[cache]
size = 64M
block_size = $IT_BLOCK
mlock = no

# no device profile: the machine's own (/var/lib/aiod) must not change the settings
[admission]
profile = $IT_T/no-device.profile
EOF
	rtio_smb_global "$IT_T" "$IT_PORT" > "$IT_T/smb.conf"
	cat >> "$IT_T/smb.conf" <<EOF
	map to guest = never
	log level = ${RTIO_SMBD_LOG_LEVEL:-1}

[plain]
	path = $IT_T/share/plain
	read only = no
	valid users = $IT_USER

[rtio]
	path = $IT_T/share/rtio
	read only = no
	valid users = $IT_USER
	vfs objects = rtio
	rtio:socket = $IT_T/aiod/aiod.sock
	rtio:timeout = $IT_TIMEOUT_MS

# writes through aiod's shared buffer (WRITE0/WRITE1) instead of smbd's own
# pwrite + WROTE, the default
[rtioaiod]
	path = $IT_T/share/rtioaiod
	read only = no
	valid users = $IT_USER
	vfs objects = rtio
	rtio:socket = $IT_T/aiod/aiod.sock
	rtio:timeout = $IT_TIMEOUT_MS
	rtio:write = aiod

# smbd's synchronous paths: sync pread/pwrite, and sync_file() after every
# write, which waits for SMB_VFS_FSYNC_SEND on a private event context
[rtiosync]
	path = $IT_T/share/rtiosync
	read only = no
	valid users = $IT_USER
	vfs objects = rtio
	rtio:socket = $IT_T/aiod/aiod.sock
	rtio:timeout = $IT_TIMEOUT_MS
	aio read size = 0
	aio write size = 0
	strict sync = yes
	sync always = yes

# every file registered with aiod at open, however small, as before
# rtio:register min size existed: smbtorture's files are small, and what it
# is run for is aiod's path
[rtioeager]
	path = $IT_T/share/rtioeager
	read only = no
	valid users = $IT_USER
	vfs objects = rtio
	rtio:socket = $IT_T/aiod/aiod.sock
	rtio:timeout = $IT_TIMEOUT_MS
	rtio:register min size = 0

# only some names go to aiod
[filtered]
	path = $IT_T/share/filtered
	read only = no
	valid users = $IT_USER
	vfs objects = rtio
	rtio:socket = $IT_T/aiod/aiod.sock
	rtio:include = *.mxf *.mov
	rtio:exclude = skip/*

# no aiod ever, and no fallback: I/O must fail, not silently go local
[strict]
	path = $IT_T/share/strict
	read only = no
	valid users = $IT_USER
	vfs objects = rtio
	rtio:socket = $IT_T/no-aiod/aiod.sock
	rtio:fallback = no

# values the module must name in the log and replace
[badparams]
	path = $IT_T/share/badparams
	read only = no
	valid users = $IT_USER
	vfs objects = rtio
	rtio:socket = $IT_T/aiod/aiod.sock
	rtio:timeout = 5
	rtio:fallback = maybe
EOF
}

it_setup() {
	it_require
	IT_T=$(mktemp -d /tmp/rtio-itest.XXXXXX) || it_die "mktemp failed"
	trap it_teardown EXIT
	trap 'exit 130' INT TERM
	chmod 755 "$IT_T"
	mkdir -p "$IT_T"/{private,lock,state,cache,pid,ncalrpc,log,aiod,bin,data}
	mkdir -p "$IT_T"/share/{plain,rtio,rtioaiod,rtiosync,rtioeager,filtered/skip,strict,badparams}
	chmod 700 "$IT_T/private"
	IT_MQ_MNT=$IT_T/mqueue
	mkdir -p "$IT_MQ_MNT"
	if ! mount -t mqueue none "$IT_MQ_MNT" 2>/dev/null; then
		it_log "cannot mount mqueue; message queues are not checked for leftovers"
		rmdir "$IT_MQ_MNT"
		IT_MQ_MNT=""
	fi
	it_ipc_snapshot > "$IT_T/ipc.before"
	it_write_configs
	it_user
	chown -R "$IT_USER" "$IT_T/share"
	export RTIO_SMB_USER=$IT_USER RTIO_SMB_PASS=$IT_PASS
	it_build_helpers
	it_log "run dir $IT_T"
}

# The libsmbclient programs, built for this run from the sources beside us.
it_build_helpers() {
	local p cflags libs
	cflags=$(pkg-config --cflags smbclient) || it_die "pkg-config smbclient failed (libsmbclient-dev)"
	libs=$(pkg-config --libs smbclient)
	for p in itest_randio itest_coherence itest_hold itest_grow itest_smallgrow itest_copy; do
		# shellcheck disable=SC2086
		gcc -O2 -g -Wall -Wextra -Werror $cflags -o "$IT_T/bin/$p" \
			"$IT_HERE/$p.c" "$IT_HERE/itest_smb.c" $libs ||
			it_die "building $p failed"
	done
}

# ---- processes ----

# Tests run in subshells and may (re)start processes: every pid started goes
# to $IT_T/pids ("pid name"), where teardown finds it whoever started it.
it_track() { echo "$1 ${2:-}" >> "$IT_T/pids"; }
it_count() { if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi; }

# it_reap_since NPIDS NEMUS: stop what the last test tracked (processes after
# line NPIDS of $IT_T/pids, emulated disks after line NEMUS of
# $IT_T/emudisks) and left running, the main aiod and smbd aside; naming
# each and failing if there was any.
it_reap_since() {
	local p emu rc=0
	for p in $([ -f "$IT_T/pids" ] && tail -n +"$(($1 + 1))" "$IT_T/pids" | awk '{print $1}'); do
		[ "$p" != "$IT_SMBD_PID" ] && [ "$p" != "$(it_aiod_pid)" ] && rtio_alive "$p" || continue
		echo "left running by the test, stopped: $p ($(ps -o args= -p "$p"))"
		it_stop_pid "$p" 10
		rc=1
	done
	[ -f "$IT_T/emudisks" ] || return $rc
	while read -r emu; do
		[ -d "$emu" ] && mountpoint -q "$emu/mnt" 2>/dev/null || continue
		echo "emulated disk left up by the test, brought down: $emu"
		"$IT_ROOT/bench/emudisk/emudisk-down.sh" "$emu" > /dev/null 2>&1 || echo "emudisk-down $emu failed"
		rc=1
	done < <(tail -n +"$(($2 + 1))" "$IT_T/emudisks")
	return $rc
}
it_tracked() { [ -f "$IT_T/pids" ] && awk '{print $1}' "$IT_T/pids"; }
it_aiod_pid() { cat "$IT_T/aiod.pid" 2>/dev/null; }

# it_wait_up PID LOG WHAT COMMAND...: wait up to 20 s for COMMAND to succeed;
# fail loudly (with LOG's tail) if PID dies first or time runs out.
it_wait_up() {
	local pid=$1 log=$2 what=$3 n=200
	shift 3
	until "$@"; do
		rtio_alive "$pid" || { tail -n 20 "$log" >&2; it_die "$what exited at start"; }
		n=$((n - 1))
		[ $n -gt 0 ] || it_die "$what did not come up in 20 s ($*)"
		sleep 0.1
	done
}

it_listening() { (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; }

# it_wait_gone PID SECONDS
it_wait_gone() {
	local pid=$1 n=$(($2 * 10))
	while [ $n -gt 0 ] && rtio_alive "$pid"; do
		sleep 0.1
		n=$((n - 1))
	done
	! rtio_alive "$pid"
}

# it_stop_pid PID SECONDS: SIGTERM (after SIGCONT: a test may have stopped
# it on purpose), up to SECONDS for it to go, then SIGKILL.
it_stop_pid() {
	kill -CONT "$1" 2>/dev/null
	kill -TERM "$1" 2>/dev/null
	it_wait_gone "$1" "$2" || kill -KILL "$1" 2>/dev/null
}

it_start_aiod() {
	rm -f "$IT_T/aiod/aiod.sock"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$IT_T/aiod.ini" -F -d 2 >> "$IT_T/log/aiod.log" 2>&1 &
	IT_AIOD_PID=$!
	disown "$IT_AIOD_PID"	# tests kill it on purpose: no job notice from bash
	it_track "$IT_AIOD_PID" aiod
	echo "$IT_AIOD_PID" > "$IT_T/aiod.pid"
	it_wait_up "$IT_AIOD_PID" "$IT_T/log/aiod.log" aiod test -S "$IT_T/aiod/aiod.sock"
}

it_stop_aiod() {
	local pid
	pid=$(it_aiod_pid)
	rtio_alive "$pid" || return 0
	kill -CONT "$pid" 2>/dev/null	# a test may have stopped it
	kill -TERM "$pid" 2>/dev/null
	if ! it_wait_gone "$pid" 10; then
		it_log "aiod $pid ignored SIGTERM for 10 s, killing it"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null || true
}

it_kill_aiod() {
	local pid
	pid=$(it_aiod_pid)
	kill -KILL "$pid" 2>/dev/null || true
	it_wait_gone "$pid" 5 || true
	wait "$pid" 2>/dev/null || true
}

it_start_smbd() {
	# its own process group (no --no-process-group): it stops its children itself
	smbd -F --debug-stdout -s "$IT_T/smb.conf" -d 1 >> "$IT_T/log/smbd.log" 2>&1 &
	IT_SMBD_PID=$!
	it_track "$IT_SMBD_PID" smbd
	it_wait_up "$IT_SMBD_PID" "$IT_T/log/smbd.log" smbd it_listening "$IT_PORT"
}

# smbd's children: its process group (smbd leads a group of its own).
it_smbd_group() {
	[ -n "$IT_SMBD_PID" ] || return 0
	ps -e -o pid=,pgid= | awk -v g="$IT_SMBD_PID" '$2 == g {print $1}'
}

it_stop_smbd() {
	local p n
	[ -n "$IT_SMBD_PID" ] || return 0
	kill -TERM "$IT_SMBD_PID" 2>/dev/null
	if ! it_wait_gone "$IT_SMBD_PID" 15; then
		it_log "smbd $IT_SMBD_PID ignored SIGTERM for 15 s, killing it"
		kill -KILL "$IT_SMBD_PID" 2>/dev/null
	fi
	wait "$IT_SMBD_PID" 2>/dev/null || true
	# its helpers (notifyd, cleanupd, per-client children) follow within moments
	n=50
	while [ -n "$(it_smbd_group)" ] && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	for p in $(it_smbd_group); do
		it_log "smbd child $p ($(ps -o args= -p "$p")) outlived smbd by 5 s, killing it"
		kill -KILL "$p" 2>/dev/null
	done
	IT_SMBD_PID_DONE=$IT_SMBD_PID
	IT_SMBD_PID=""
}

# ---- SMB access ----

# it_smb SHARE COMMANDS: smbclient with the test user; output on stdout.
it_smb() {
	smbclient "//127.0.0.1/$1" -p "$IT_PORT" -U "$IT_USER%$IT_PASS" \
		--option='client min protocol=SMB3' -c "$2"
}

it_url() { printf 'smb://127.0.0.1:%s/%s' "$IT_PORT" "$1"; }

# it_hold_cmd COMMAND: send to the held file's program (itest_hold, run as
# coproc HOLD), print its answer.
it_hold_cmd() {
	local out
	echo "$1" >&"${HOLD[1]}"
	read -r -t 40 out <&"${HOLD[0]}" || out="no answer"
	echo "$out"
}

# it_stat KEY: one value from aiodctl stats.
it_stat() {
	"$BUILD/aiodctl" -s "$IT_T/aiod/aiod.sock" stats | awk -F= -v k="$1" '$1 == k {print $2}'
}

it_md5() { md5sum < "$1" | cut -d' ' -f1; }

# The harness's checks of smbd's log: the module loaded and attached.
it_check_module_loaded() {
	local log=$IT_T/log/smbd.log
	if grep -E -i "Can't find a vfs module|error probing vfs module|Failed to load module|vfs_init_custom failed" "$log"; then
		echo "smbd could not load the rtio module"
		return 1
	fi
	if ! grep -q "rtio: attached to aiod at $IT_T/aiod/aiod.sock (session " "$log"; then
		echo "smbd never logged 'rtio: attached to aiod at ...'"
		grep -i rtio "$log" | tail -n 5
		return 1
	fi
}

# ---- teardown ----

# Every process of this run gone, no shm/mq object left; then the temp dir.
it_check_leftovers() {
	local left="" p before after
	for p in $(it_tracked); do
		if rtio_alive "$p"; then left="$left $p"; fi
	done
	for p in $(IT_SMBD_PID=${IT_SMBD_PID_DONE:-} it_smbd_group); do
		left="$left $p"
	done
	# anything else still running from our run dir (aiod -c, smbd -s)
	for p in $(pgrep -f -- "$IT_T/" 2>/dev/null); do
		[ "$p" = "$$" ] || left="$left $p"
	done
	if [ -n "$left" ]; then
		echo "processes of this run still running:$left"
		ps -o pid,args -p "${left// /,}" 2>/dev/null | sed 's/^/    /'
		return 1
	fi
	before=$IT_T/ipc.before
	after=$IT_T/ipc.after
	it_ipc_snapshot > "$after"
	if [ -n "$(comm -13 "$before" "$after")" ]; then
		echo "shared memory / message queue objects left behind:"
		comm -13 "$before" "$after" | sed 's/^/    /'
		return 1
	fi
}

# Clients first, then smbd, then aiod (so smbd never sees aiod vanish at the end).
it_stop_all() {
	local p
	for p in $(it_tracked); do
		if [ "$p" != "$IT_SMBD_PID" ] && [ "$p" != "$(it_aiod_pid)" ] && rtio_alive "$p"; then
			it_stop_pid "$p" 5
		fi
	done
	it_stop_smbd
	it_stop_aiod
	for p in $(it_tracked); do
		if rtio_alive "$p"; then
			it_log "pid $p ($(ps -o args= -p "$p")) still running, killing it"
			kill -KILL "$p" 2>/dev/null
		fi
	done
}

# Called by it_finish, and by the EXIT trap if the harness died before it.
it_teardown() {
	[ "$IT_TORN_DOWN" = 0 ] || return 0
	IT_TORN_DOWN=1
	[ -n "$IT_T" ] || return 0
	it_stop_all
	# emulated disks a test left up (t_streams): unmount, detach, stop by pid
	if [ -f "$IT_T/emudisks" ]; then
		while read -r emu; do
			"$IT_ROOT/bench/emudisk/emudisk-down.sh" "$emu" > /dev/null 2>&1 ||
				it_log "emudisk-down $emu failed"
		done < "$IT_T/emudisks"
	fi
	if [ -n "$IT_MQ_MNT" ]; then
		it_ipc_snapshot > "$IT_T/ipc.after.mounted"
		umount "$IT_MQ_MNT" 2>/dev/null || it_log "umount $IT_MQ_MNT failed"
	fi
	if [ "${RTIO_KEEP:-0}" = 1 ]; then
		it_log "run dir kept: $IT_T"
	elif [ "$IT_FAILED" != 0 ]; then
		# the shares and test data run to gigabytes; the logs tell the story
		rm -rf "$IT_T/share" "$IT_T/data"
		it_log "logs kept in $IT_T/log"
	else
		rm -rf "$IT_T"
	fi
}

it_finish() {
	local status
	it_stop_all
	it_run leftovers it_check_leftovers
	it_teardown
	echo
	if [ "$IT_FAILED" != 0 ]; then
		echo "failed: ${IT_FAILED_NAMES[*]}"
	fi
	echo "$IT_PASSED passed, $IT_FAILED failed"
	status=0
	[ "$IT_FAILED" = 0 ] || status=1
	return $status
}

# it_private, it_private_stop, it_ini_merge: a test's own aiod and smbd
# shellcheck source=private.sh
. "$IT_HERE/private.sh"

# json_field FILE KEY: a number from rtio-stream's one-line JSON report.
json_field() { sed -n "s/.*\"$2\":\([0-9.-]*\).*/\1/p" "$1"; }
