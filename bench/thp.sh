# Sourced by the benchmarks: give aiod's cache huge pages for the run, as a
# deployment would (docs/aiod.8, [cache] hugepages), and put the machine's
# setting back afterwards.
#
#   bench_thp_enable    remembers shmem_enabled, writes $THP_SHMEM (advise)
#   bench_thp_restore   writes the remembered value back (call from the EXIT trap)
#   bench_thp_setting   what is in effect now, for the results
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

BENCH_THP_FILE=/sys/kernel/mm/transparent_hugepage/shmem_enabled
BENCH_THP_SAVED=""

bench_thp_setting() {
	sed -n 's/.*\[\(.*\)\].*/\1/p' "$BENCH_THP_FILE" 2>/dev/null || echo unknown
}

bench_thp_enable() {
	local want=${THP_SHMEM:-advise}
	[ -w "$BENCH_THP_FILE" ] || return 0
	BENCH_THP_SAVED=$(bench_thp_setting)
	[ "$BENCH_THP_SAVED" = "$want" ] && return 0
	echo "$want" > "$BENCH_THP_FILE" || echo "bench: could not set $BENCH_THP_FILE to $want" >&2
}

bench_thp_restore() {
	if [ -n "$BENCH_THP_SAVED" ] && [ "$BENCH_THP_SAVED" != "$(bench_thp_setting)" ]; then
		echo "$BENCH_THP_SAVED" > "$BENCH_THP_FILE" 2>/dev/null || true
	fi
}
