#!/usr/bin/env bash
# Two aiod builds side by side on one bench/rt scenario, runs interleaved
# (A, B, A, B, ...): what a scheduler change did, with the noise of a shared
# machine in both columns. Every other part (module, smbd, clients, emulated
# disk) is the current build's; only aiod differs.
#
#   bench/rt/ab.sh BASE_AIOD RUNS COUNT [run.sh options...]
#
# BASE_AIOD is an aiod binary built from the commit to compare against, e.g.
#   git worktree add /tmp/base 9914bc9 && make -C /tmp/base /tmp/base/build/aiod
# COUNT is the stream count measured (run.sh --start rtio=COUNT --confirm 0).
# The options are run.sh's (scenario, bitrate, greedy, prebuffer, duration);
# give one series. Prints one line per run and the medians of late chunks and
# of the greedy reader's MB/s per build. Needs what run.sh needs (root).
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
[ $# -ge 3 ] || { sed -n '2,14p' "$0"; exit 2; }
base_aiod=$1 runs=$2 count=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
[ -x "$base_aiod" ] || { echo "ab.sh: $base_aiod: not an executable aiod" >&2; exit 2; }
case $runs in ''|*[!0-9]*) echo "ab.sh: RUNS must be a number, not '$runs'" >&2; exit 2 ;; esac
case $count in ''|*[!0-9]*) echo "ab.sh: COUNT must be a number, not '$count'" >&2; exit 2 ;; esac
out=$(mktemp -d /tmp/rtio-ab.XXXXXX)
# The base build: the current build's files, its own aiod.
mkdir "$out/base-build"
for f in "$build"/*; do
	[ "$(basename "$f")" = aiod ] || ln -s "$f" "$out/base-build/$(basename "$f")"
done
cp "$base_aiod" "$out/base-build/aiod"
for i in $(seq 1 "$runs"); do
	for cfg in base new; do
		b=$build
		[ $cfg = base ] && b=$out/base-build
		BUILD=$b "$here/run.sh" --configs rtio --confirm 0 --no-admission \
			--start "rtio=$count" --out-dir "$out/$cfg-$i" "$@" > "$out/$cfg-$i.log" 2>&1 ||
			{ echo "ab.sh: run $cfg $i failed, see $out/$cfg-$i.log" >&2; exit 1; }
		line=$(grep -E "^[0-9].* n=$count " "$out/$cfg-$i.log" | head -1)
		echo "$cfg $i: $line"
	done
done | tee "$out/lines"
python3 - "$out/lines" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) \d+: .*misses=(\d+).*greedy= *([0-9.]+) MB/s", line)
    if m:
        rows.setdefault(m.group(1), []).append((int(m.group(2)), float(m.group(3))))
for cfg, v in rows.items():
    print(f"{cfg}: {len(v)} runs, late chunks median {statistics.median(x[0] for x in v)}, "
          f"greedy MB/s median {statistics.median(x[1] for x in v):.1f} "
          f"(min {min(x[1] for x in v):.1f}, max {max(x[1] for x in v):.1f})")
PY
echo "ab.sh: logs in $out"
