# shellcheck shell=bash
# Sourced by the benchmarks that run aiod privately (fio/run.sh,
# mixed/run.sh): private aiod instances, and the counters read around each
# run. Needs AIOD and AIODCTL (the aiod and aiodctl to run) set.
#
#   bench_aiod_start NAME INI SOCK LOG   start "$AIOD -c INI -F -d 1" (log
#                           appended to LOG), wait until it answers on SOCK;
#                           its pid is AIOD_PID[NAME]
#   bench_aiod_stop NAME    stop it (and wait for it)
#   bench_aiod_stop_all     stop every instance (for the EXIT trap)
#   bench_proc_ticks PID    utime + stime of a process, every thread (io_uring
#                           workers included), in clock ticks
#   bench_aiod_ticks        the same summed over the running instances
#   bench_busy_ticks        busy ticks of the whole machine (user nice system
#                           irq softirq; not steal)
#   bench_dev_of PATH       the block device holding PATH, as /proc/diskstats
#                           names it (a symlink such as /dev/mapper/x resolved)
#   bench_disk_sectors DEV  "sectors_read sectors_written" of DEV ("0 0" if
#                           /proc/diskstats has no such device)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

declare -A AIOD_PID=()

bench_aiod_start() {
	local name=$1 ini=$2 sock=$3 log=$4
	"$AIOD" -c "$ini" -F -d 1 >> "$log" 2>&1 &
	AIOD_PID[$name]=$!
	for _ in $(seq 1 300); do
		if "$AIODCTL" -s "$sock" stats > /dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "${AIOD_PID[$name]}" 2>/dev/null; then
			echo "bench: aiod ($name) died at start: $(tail -3 "$log")" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "bench: aiod ($name) did not come up" >&2
	return 1
}

bench_aiod_stop() {
	local name=$1
	if [ -n "${AIOD_PID[$name]:-}" ]; then
		kill "${AIOD_PID[$name]}" 2>/dev/null || true
		wait "${AIOD_PID[$name]}" 2>/dev/null || true
		unset "AIOD_PID[$name]"
	fi
}

bench_aiod_stop_all() {
	local name
	for name in "${!AIOD_PID[@]}"; do
		bench_aiod_stop "$name"
	done
}

bench_proc_ticks() { awk '{printf "%.0f\n", $14 + $15}' "/proc/$1/stat"; }

bench_aiod_ticks() {
	local t=0 p
	for p in "${AIOD_PID[@]}"; do
		t=$((t + $(bench_proc_ticks "$p")))
	done
	echo $t
}

bench_busy_ticks() { awk '/^cpu /{printf "%.0f\n", $2 + $3 + $4 + $7 + $8}' /proc/stat; }

bench_dev_of() {
	local src
	src=$(findmnt -no SOURCE -T "$1")
	basename "$(readlink -f "$src" 2>/dev/null || echo "$src")"
}

bench_disk_sectors() {
	awk -v d="$1" '$3 == d {print $6, $10; f = 1} END {if (!f) print 0, 0}' /proc/diskstats
}
