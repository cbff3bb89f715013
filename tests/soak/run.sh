#!/usr/bin/env bash
# Soak: hours of mixed load against an ASan + UBSan aiod (make asan) and a real
# smbd with the module, with faults, then the leak counters.
#
#   SOAK_SECONDS=3600 tests/soak/run.sh      (make soak; SOAK_SECONDS=60 for a smoke run)
#
# - SOAK_CLIENTS workers put and get files of random sizes (around aiod's block
#   size and up to 16 MiB) on the two write paths (shares rtio and rtioaiod)
#   and check every byte read back, and the copy on the server's disk, by
#   sha256; they also read one shared file that stays in aiod's cache.
# - every SOAK_AIOD_KILL_EVERY seconds aiod is killed with SIGKILL and
#   restarted; every SOAK_SMBD_KILL_EVERY seconds a random smbd child serving
#   a client is. A transfer cut by a killed smbd child is retried, never
#   counted as corruption; a get that completes with other bytes is.
# - at the end, with no client left: aiod holds no session but the one asking,
#   no pinned block, as many descriptors as when it started; it exits 0 on
#   SIGTERM; its log (every incarnation's) holds no sanitizer report.
#
# Uses the integration harness (tests/integration/lib.sh): its own run dir,
# smbd on RTIO_SMB_PORT (default 4455 here, so the integration tests' 4445 is
# free), every process tracked by pid and stopped from the EXIT trap. Needs
# root. Ends with "N passed, M failed".
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# shellcheck source-path=SCRIPTDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
export RTIO_SMB_PORT=${RTIO_SMB_PORT:-4455}
# shellcheck source=../integration/lib.sh
. "$here/../integration/lib.sh"
# shellcheck source=../integration/t_asan.sh
. "$here/../integration/t_asan.sh"

SOAK_SECONDS=${SOAK_SECONDS:-3600}
SOAK_CLIENTS=${SOAK_CLIENTS:-4}
SOAK_AIOD_KILL_EVERY=${SOAK_AIOD_KILL_EVERY:-$((SOAK_SECONDS / 20 > 20 ? SOAK_SECONDS / 20 : 20))}
SOAK_SMBD_KILL_EVERY=${SOAK_SMBD_KILL_EVERY:-$((SOAK_SECONDS / 30 > 15 ? SOAK_SECONDS / 30 : 15))}
SOAK_SHARED_SIZE=$((32 * 1024 * 1024))

# The aiod of this run is the ASan one, on the harness's socket (smb.conf's
# shares point there), with lib.sh's pid file so it_aiod_pid and it_stop_aiod
# find it. Its descriptors with no client are the baseline the end is held to.
soak_start_aiod() {
	it_asan_start "$IT_T/aiod.ini" "$IT_T/aiod/aiod.sock" "$IT_T/log/aiod.log"
	echo "$IT_ASAN_PID" > "$IT_T/aiod.pid"
	IT_AIOD_PID=$IT_ASAN_PID
	it_fd_count "$IT_ASAN_PID" > "$IT_T/soak/aiod-fds.baseline"
}

# soak_record WORKER WHAT: one line per outcome, counted at the end.
soak_record() { echo "$2" >> "$IT_T/soak/worker-$1.log"; }

# soak_smb WORKER SHARE COMMANDS: it_smb in a child the worker can stop: a
# TERM to the worker (teardown) ends the smbclient too, by its parent's pid.
soak_smb() {
	local out=$IT_T/soak/worker-$1.smbclient
	it_smb "$2" "$3" > "$out" 2>&1 &
	SOAK_CHILD=$!
	wait "$SOAK_CHILD"
}

soak_worker_stop() {
	if [ -n "$SOAK_CHILD" ]; then
		pkill -TERM -P "$SOAK_CHILD" 2>/dev/null
		kill -TERM "$SOAK_CHILD" 2>/dev/null
	fi
	exit 1
}

soak_sha() { sha256sum < "$1" | cut -d' ' -f1; }

# A size around aiod's block size (where the bugs live) or anywhere up to 16 MiB.
soak_size() {
	case $((RANDOM % 4)) in
	0) echo $((IT_BLOCK - 1 + RANDOM % 3)) ;;
	1) echo $((RANDOM % 4096)) ;;
	*) echo $(((RANDOM * 32768 + RANDOM) % (16 * 1024 * 1024))) ;;
	esac
}

# soak_worker N DEADLINE: put, get, compare until DEADLINE (epoch seconds).
soak_worker() {
	local n=$1 deadline=$2 d=$IT_T/soak/w$1 round=0 share name size want
	SOAK_CHILD=""
	trap soak_worker_stop TERM
	mkdir -p "$d"
	while [ "$(date +%s)" -lt "$deadline" ]; do
		round=$((round + 1))
		if [ $((round % 2)) = 0 ]; then share=rtio; else share=rtioaiod; fi
		name=soak-$n-$round.bin
		size=$(soak_size)
		head -c "$size" /dev/urandom > "$d/src"
		want=$(soak_sha "$d/src")
		rm -f "$d/got" "$d/shared"
		if ! soak_smb "$n" "$share" "put $d/src $name"; then
			soak_record "$n" "cut put"	# an smbd child killed under it
			continue
		fi
		if [ "$(soak_sha "$IT_T/share/$share/$name")" != "$want" ]; then
			soak_record "$n" "CORRUPT disk $share/$name ($size bytes)"
			continue
		fi
		if ! soak_smb "$n" "$share" "get $name $d/got; get soak-shared.bin $d/shared"; then
			soak_record "$n" "cut get"
		fi
		if [ -f "$d/got" ]; then
			if [ "$(soak_sha "$d/got")" = "$want" ]; then
				soak_record "$n" "ok $size"
			elif [ "$(stat -c %s "$d/got")" = "$size" ]; then
				soak_record "$n" "CORRUPT get $share/$name ($size bytes)"
			else
				soak_record "$n" "cut get"	# a partial file from a cut transfer
			fi
		fi
		if [ -f "$d/shared" ] && [ "$(stat -c %s "$d/shared")" = "$SOAK_SHARED_SIZE" ] &&
			[ "$(soak_sha "$d/shared")" != "$(cat "$IT_T/soak/shared.sha")" ]; then
			soak_record "$n" "CORRUPT get $share/soak-shared.bin"
		fi
		rm -f "$IT_T/share/$share/$name"	# bounded disk use; smbd has closed it
	done
	exit 0
}

# A child of smbd that serves a client ("smbd: client [...]"; not notifyd,
# cleanupd & co., whose loss ends smbd itself), or nothing.
soak_smbd_victim() {
	local p
	for p in $(it_smbd_group | shuf); do
		[ "$p" != "$IT_SMBD_PID" ] || continue
		case $(ps -o args= -p "$p" 2>/dev/null) in
		*notifyd* | *cleanupd* | *scavenge*) ;;
		*) echo "$p"; return 0 ;;
		esac
	done
}

# The load with the faults; fails on corruption or a sanitizer report.
soak_load() {
	local deadline now next_aiod next_smbd pids=() p victim bad=0 i
	deadline=$(($(date +%s) + SOAK_SECONDS))
	next_aiod=$(($(date +%s) + SOAK_AIOD_KILL_EVERY))
	next_smbd=$(($(date +%s) + SOAK_SMBD_KILL_EVERY))
	for i in $(seq "$SOAK_CLIENTS"); do
		soak_worker "$i" "$deadline" &
		pids+=($!)
		it_track "$!" "soak-worker-$i"
	done
	while now=$(date +%s) && [ "$now" -lt "$deadline" ]; do
		if [ "$now" -ge "$next_aiod" ]; then
			echo "$(date +%T) kill -9 aiod $(it_aiod_pid)"
			it_kill_aiod
			it_asan_clean "$IT_T/log/aiod.log" || bad=1
			soak_start_aiod
			next_aiod=$((now + SOAK_AIOD_KILL_EVERY))
			echo aiod >> "$IT_T/soak/kills"
		fi
		if [ "$now" -ge "$next_smbd" ]; then
			victim=$(soak_smbd_victim)
			if [ -n "$victim" ]; then
				echo "$(date +%T) kill -9 smbd child $victim"
				kill -KILL "$victim" 2>/dev/null || true
				echo smbd >> "$IT_T/soak/kills"
			fi
			next_smbd=$((now + SOAK_SMBD_KILL_EVERY))
		fi
		rtio_alive "$(it_aiod_pid)" || { echo "aiod died on its own"; it_asan_clean "$IT_T/log/aiod.log"; return 1; }
		sleep 1
	done
	for p in "${pids[@]}"; do
		wait "$p" || bad=1
	done
	cat "$IT_T"/soak/worker-*.log 2>/dev/null | sed 's/^ok .*/ok/' | sort | uniq -c
	if grep -h CORRUPT "$IT_T"/soak/worker-*.log; then
		bad=1
	fi
	if ! grep -q '^ok' "$IT_T"/soak/worker-*.log 2>/dev/null; then
		echo "no transfer completed"
		bad=1
	fi
	echo "faults: $(sort "$IT_T/soak/kills" 2>/dev/null | uniq -c | tr '\n' ' ')"
	return $bad
}

# With every client gone: aiod holds nothing of them.
soak_leaks() {
	local pid sessions pinned fds base n
	pid=$(it_aiod_pid)
	base=$(cat "$IT_T/soak/aiod-fds.baseline")
	# smbd's children end with their clients; aiod learns it through pidfds
	for n in $(seq 100); do
		sessions=$(it_stat sessions)
		pinned=$(it_stat blocks_pinned)
		[ "$sessions" = 1 ] && [ "$pinned" = 0 ] && break	# 1: aiodctl's own
		sleep 0.2
	done
	echo "aiod: sessions=$sessions (aiodctl's own) blocks_pinned=$pinned"
	[ "$sessions" = 1 ] || { echo "sessions left without clients"; return 1; }
	[ "$pinned" = 0 ] || { echo "blocks pinned without clients"; return 1; }
	for n in $(seq 50); do
		fds=$(it_fd_count "$pid")
		[ "$fds" = "$base" ] && break
		sleep 0.2
	done
	echo "aiod descriptors: $fds, $base when it started"
	[ "$fds" = "$base" ]
}

# SIGTERM: LeakSanitizer runs at exit; then no report in any incarnation's log.
soak_asan() {
	local rc=0
	it_stop_smbd
	it_asan_stop "$(it_aiod_pid)" || rc=$?
	[ "$rc" = 0 ] || { echo "aiod exited with status $rc after SIGTERM"; return 1; }
	it_asan_clean "$IT_T/log/aiod.log"
}

# soak_step NAME FUNCTION: like it_run, but in this shell, not a subshell, so
# the aiods FUNCTION restarts stay our children (their exit status is ours to
# read) and its output shows as it goes.
soak_step() {
	local name=$1 out=$IT_T/log/test-$1.out fd tee_pid rc
	shift
	exec {fd}> >(tee "$out")
	tee_pid=$!
	"$@" >&"$fd" 2>&1
	rc=$?
	exec {fd}>&-
	wait "$tee_pid" 2>/dev/null
	if [ "$rc" = 0 ]; then
		it_pass "$name"
	else
		it_fail "$name" "$(printf '\n'; tail -n 15 "$out" | sed 's/^/    /')"
	fi
}

soak_prepare() {
	local share
	mkdir -p "$IT_T/soak"
	head -c "$SOAK_SHARED_SIZE" /dev/urandom > "$IT_T/soak/shared.src"
	soak_sha "$IT_T/soak/shared.src" > "$IT_T/soak/shared.sha"
	for share in rtio rtioaiod; do
		it_smb "$share" "put $IT_T/soak/shared.src soak-shared.bin" \
			>> "$IT_T/log/soak-shared.out" 2>&1 || it_die "could not put the shared file"
	done
}

it_setup
mkdir -p "$IT_T/soak"
echo "soak: ${SOAK_SECONDS}s, $SOAK_CLIENTS clients, aiod killed every ${SOAK_AIOD_KILL_EVERY}s," \
	"an smbd child every ${SOAK_SMBD_KILL_EVERY}s; run dir $IT_T, smbd port $IT_PORT"
soak_start_aiod
it_start_smbd
soak_prepare
soak_step soak-load soak_load
soak_step soak-leaks soak_leaks
soak_step soak-asan soak_asan
it_finish
