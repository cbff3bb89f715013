#!/usr/bin/env bash
# The cache-hit round trip (bench/fio/hit_rtt.c) of this tree's aiod against
# an earlier revision's, interleaved: RUNS rounds of each, medians of the
# per-run median latency and of aiod's CPU per read. For changes on the hit
# path (e.g. draining inotify events before a read is answered).
#
#   bench/micro/hit_ab.sh RUNS BASE_REV [N]
#
# Each side runs its own hit_rtt (the STATS reply may differ between them),
# against its own aiod on a private socket, on the same file in a temp dir.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${1:?usage: hit_ab.sh RUNS BASE_REV [N]}
BASE=${2:?usage: hit_ab.sh RUNS BASE_REV [N]}
N=${3:-20000}
T=$(mktemp -d /tmp/rtio-hitab.XXXXXX)
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	git -C "$here" worktree remove --force "$T/base-src" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

# build SIDE SRC: aiod and hit_rtt of the tree SRC into $T/SIDE
build() {
	local side=$1 src=$2 cflags
	mkdir -p "$T/$side"
	make -C "$src" --no-print-directory BUILD="$T/$side/b" "$T/$side/b/aiod" > "$T/$side/build.log" 2>&1
	cp "$T/$side/b/aiod" "$T/$side/aiod"
	cflags="-O2 -std=gnu11 -D_GNU_SOURCE -I$src/common $(pkg-config --cflags talloc)"
	# shellcheck disable=SC2086
	# rtio_client*.c: the client library is one file in older trees, several in newer ones
	cc $cflags -o "$T/$side/hit_rtt" "$src/bench/fio/hit_rtt.c" "$src"/common/rtio_client*.c \
		"$src/common/rtio_proto.c" "$src/common/rtio_shm.c" "$src/common/rtio_sock.c" "$src/common/rtio_queue.c" $(pkg-config --libs talloc) -lrt
}
git -C "$here" worktree add --detach "$T/base-src" "$BASE" > /dev/null 2>&1
build base "$T/base-src"
build this "$here"

head -c $((4 << 20)) /dev/urandom > "$T/file"
cat > "$T/aiod.ini" <<EOF
[global]
socket_path = $T/sock/aiod.sock
log_level = 1
[cache]
size = 64M
mlock = no
EOF

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'; }

# one SIDE ROUND: start SIDE's aiod, N hits, its CPU; one JSON line to $T/out
one() {
	local side=$1 c0 c1 n=0
	rm -rf "$T/sock"
	"$T/$side/aiod" -c "$T/aiod.ini" -F >> "$T/$side/aiod.log" 2>&1 &
	pid=$!
	until [ -S "$T/sock/aiod.sock" ]; do
		n=$((n + 1)); [ $n -lt 200 ] || { echo "aiod ($side) did not start"; exit 1; }
		sleep 0.05
	done
	c0=$(cpu_ns "$pid")
	"$T/$side/hit_rtt" -s "$T/sock/aiod.sock" -f "$T/file" -n "$N" > "$T/$side.json"
	c1=$(cpu_ns "$pid")
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["side"]=sys.argv[2]; d["aiod_cpu_ns"]=int(sys.argv[3]); print(json.dumps(d))' \
		"$T/$side.json" "$side" "$((c1 - c0))" >> "$T/out"
}

for _ in $(seq "$RUNS"); do
	one base
	one this
done
echo "hit_ab: $RUNS interleaved runs of $N cached 4 KiB reads each; base $(git -C "$here" rev-parse --short "$BASE"), this $(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet || echo '+dirty'); $(nproc) CPUs, $(uname -r)"
/usr/bin/python3 - "$T/out" "$N" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
for side in ("base", "this"):
    r = [x for x in runs if x["side"] == side]
    med = statistics.median(x["median_us"] for x in r)
    p90 = statistics.median(x["p90_us"] for x in r)
    cpu = statistics.median(x["aiod_cpu_ns"] for x in r) / n / 1000.0
    print("%-5s median %6.2f us, p90 %6.2f us, aiod CPU %5.2f us/read (incl. connect; %d runs, medians)"
          % (side, med, p90, cpu, len(r)))
PY
