#!/usr/bin/env bash
# The cost of a new smbd's first read of aiod's cache, with and without huge
# pages (bench/micro/shm_first_touch.c): RUNS interleaved runs of each,
# medians, first pass minus second pass = the page-fault cost per GiB.
#
#   bench/micro/run.sh [RUNS]     (root: allows shmem huge pages for the run)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$here/build}
RUNS=${1:-10}
# shellcheck source=../thp.sh
. "$here/bench/thp.sh"
trap bench_thp_restore EXIT
mkdir -p "$BUILD/micro"
cc -O2 -Wall -Wextra -Werror -o "$BUILD/micro/shm_first_touch" "$here/bench/micro/shm_first_touch.c"
bench_thp_enable
out=$(mktemp)
for _ in $(seq "$RUNS"); do
	"$BUILD/micro/shm_first_touch" 1024 >> "$out"
	"$BUILD/micro/shm_first_touch" 1024 huge >> "$out"
done
echo "shmem_enabled: $(bench_thp_setting); $(nproc) CPUs, $(uname -r)"
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for huge in (0, 1):
    r = [x for x in runs if x["huge"] == huge]
    f = statistics.median(x["first_pass_ms"] for x in r)
    s = statistics.median(x["second_pass_ms"] for x in r)
    print("%-11s first pass %6.1f ms/GiB, second %6.1f, faults cost %5.1f ms/GiB (%d runs, medians)"
          % ("huge pages" if huge else "4 KiB pages", f, s, f - s, len(r)))
PY
rm -f "$out"
