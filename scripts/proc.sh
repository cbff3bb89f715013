# Process helpers shared by the test harness (tests/integration/lib.sh) and
# the benchmarks (bench/rt/lib.sh). Source it.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# rtio_alive PID: running, and not a zombie waiting for its parent (often a
# subshell) to reap it; kill -0 alone says yes to a zombie.
rtio_alive() {
	local state
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "$state" != Z ]
}
