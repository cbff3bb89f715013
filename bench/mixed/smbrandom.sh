#!/usr/bin/env bash
# Random reads over SMB (issue 12, part 2): CLIENTS concurrent readers (one
# smbd each) reading random chunk-aligned pieces (rtio-stream --greedy
# --random) of one FILE_GIB file, 4x aiod's cache, through a plain share and
# an rtio share with the README's settings, for DURATION seconds; 4 KiB and
# 1 MiB pieces; the page cache is dropped before every round, so both start
# cold. Rounds interleaved, RUNS times. Reports reads/s, MB/s, server CPU per
# GiB and per 1000 reads, and the bytes the device read per byte asked for
# (/proc/diskstats). rtio is the README's share (rtio:random = local: smbd
# reads random misses itself while aiod has no stream to keep); rtiornd sends
# each of them to aiod (rtio:random = aiod, what rtio did before).
# Writes bench/results/smbrandom-<date>.{md,json}.
#
#   bench/mixed/smbrandom.sh [RUNS [DURATION [CLIENTS]]]   (defaults 5, 10, 4)
#   env: BUILD, BENCH_PORT, BENCH_DIR (lib.sh), SR_FILE_GIB (4), SR_CACHE (1G),
#        SR_CONFIGS ("plain-4k rtio-4k rtiornd-4k plain-1m rtio-1m rtiornd-1m")
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
NAME=smbrandom
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
RUNS=${1:-5}
DURATION=${2:-10}
CLIENTS=${3:-4}
FILE_GIB=${SR_FILE_GIB:-4}
CACHE=${SR_CACHE:-1G}
STREAM=$BUILD/rtio-stream
CONFIGS=${SR_CONFIGS:-"plain-4k rtio-4k rtiornd-4k plain-1m rtio-1m rtiornd-1m"}

mixed_need_root_tools
[ -x "$STREAM" ] || die "$STREAM not built: run make"
PORT=$(mixed_port)
mixed_tmp
mixed_aiod_ini "$CACHE"
mixed_smb_conf "$PORT" plain rtio rtiornd
echo "bench/mixed/$NAME: a $FILE_GIB GiB file"
head -c $((FILE_GIB << 30)) /dev/urandom > "$T/share/plain/big.bin" || die "cannot write the file"
ln "$T/share/plain/big.bin" "$T/share/rtio/big.bin"
ln "$T/share/plain/big.bin" "$T/share/rtiornd/big.bin"
sync
# the device under the file, for its read counter (sectors read: field 6)
DISK=$(lsblk -no PKNAME "$(findmnt -no SOURCE -T "$T/share/plain")" 2>/dev/null | head -1)
[ -n "$DISK" ] || DISK=$(basename "$(findmnt -no SOURCE -T "$T/share/plain")")
disk_read_bytes() { awk -v d="$DISK" '$3 == d {printf "%.0f\n", $6 * 512}' /proc/diskstats; }
[ -n "$(disk_read_bytes)" ] || die "no /proc/diskstats line for '$DISK'"
mixed_start
HZ=$(getconf CLK_TCK)

# round CONFIG SECONDS: CLIENTS random readers; one JSON line
round() {
	local c=$1 secs=$2 share=${1%-*} size=${1#*-} chunk i pids=() s0 s1 a0 a1 d0 d1 q0=0 q1=0
	local p0=0 p1=0
	[ "$size" = 4k ] && chunk=4K || chunk=1M
	sync
	echo 3 > /proc/sys/vm/drop_caches
	mixed_settle 200
	s0=$(mixed_smbd_ticks)
	a0=$(mixed_aiod_ticks "$share")
	d0=$(disk_read_bytes)
	if [ "$share" != plain ]; then
		q0=$(mixed_aiod_stat bytes_read)
		p0=$(mixed_aiod_stat passthrough_reads)
	fi
	for i in $(seq "$CLIENTS"); do
		"$STREAM" --url "smb://127.0.0.1:$PORT/$share/big.bin" --user "$USER_NAME%$PASS" \
			--greedy --random --chunk "$chunk" --duration "$secs" > "$T/log/client.$i" 2>&1 &
		pids+=($!)
	done
	MIXED_EXTRA_PIDS="${pids[*]}"
	wait "${pids[@]}"
	MIXED_EXTRA_PIDS=""
	mixed_settle 200
	s1=$(mixed_smbd_ticks)
	a1=$(mixed_aiod_ticks "$share")
	d1=$(disk_read_bytes)
	if [ "$share" != plain ]; then
		q1=$(mixed_aiod_stat bytes_read)
		p1=$(mixed_aiod_stat passthrough_reads)
	fi
	/usr/bin/python3 - "$T/log" "$c" "$(mixed_calc "($s1 - $s0) / $HZ")" \
		"$(mixed_calc "($a1 - $a0) / $HZ")" "$((d1 - d0))" "$((q1 - q0))" "$((p1 - p0))" <<'PY'
import glob, json, sys
logdir, config, smbd_cpu, aiod_cpu, disk, via_aiod, aiod_reads = sys.argv[1:8]
nbytes, chunks, elapsed, errors = 0, 0, 0.0, 0
for path in sorted(glob.glob(logdir + "/client.*")):
    lines = open(path).read().strip().splitlines()
    r = json.loads(lines[-1]) if lines else {"error": "no output", "bytes": 0, "chunks": 0,
                                             "elapsed_s": 0}
    errors += 1 if r.get("error") else 0
    nbytes += r["bytes"]
    chunks += r["chunks"]
    elapsed = max(elapsed, r["elapsed_s"])
cpu = float(smbd_cpu) + float(aiod_cpu)
print(json.dumps({"config": config, "bytes": nbytes, "reads": chunks, "elapsed_s": elapsed,
                  "errors": errors, "reads_per_s": round(chunks / elapsed, 1) if elapsed else 0,
                  "mb_per_s": round(nbytes / elapsed / 1e6, 2) if elapsed else 0,
                  "cpu_s_per_gib": round(cpu / (nbytes / 2**30), 4) if nbytes else None,
                  "cpu_ms_per_1000_reads": round(cpu * 1e6 / chunks, 2) if chunks else None,
                  "device_bytes_per_byte": round(int(disk) / nbytes, 3) if nbytes else None,
                  "aiod_bytes": int(via_aiod), "aiod_random_reads": int(aiod_reads)}))
PY
}

out=$T/results.jsonl
mixed_rounds "$out" "$RUNS" "$DURATION" $CONFIGS

stamp=$(date -u +%Y-%m-%d-%H%M%S)
mkdir -p "$mixed_root/bench/results"
command="bench/mixed/smbrandom.sh $RUNS $DURATION $CLIENTS"
/usr/bin/python3 "$here/smbrandom_report.py" "$out" "$mixed_root/bench/results/smbrandom-$stamp" \
	"$command" "$FILE_GIB" "$CACHE" "$(git -C "$mixed_root" rev-parse --short HEAD)" "$T/aiod.ini" \
	"$CLIENTS" ||
	die "report failed"
echo "bench/mixed/$NAME: results in bench/results/smbrandom-$stamp.{md,json}"
