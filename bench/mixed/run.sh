#!/usr/bin/env bash
# Issue 12, benchmark part 1: random reads of a working set larger than
# aiod's cache, fio through aiod (bench/fio's rtio engine) vs fio's own
# io_uring with O_DIRECT, on the same file.
#
#   workloads:  rand4k, rand64k (random reads of 4 KiB / 64 KiB)
#               x queue depth QDS (1 and 8)
#   engines:    direct  fio io_uring, O_DIRECT
#               rtio    fio -> rtio client library -> aiod with the README's
#                       settings ([cache] direct_io = yes, huge pages), the
#                       cache CACHE_SIZE and the file WORKING_SET times that;
#                       every read a round trip to aiod
#               routed  the same engine and aiod, reads routed as vfs_rtio
#                       routes them (rtio_route=module): aiod's cache hits
#                       copied in the engine, random misses the engine's own
#                       reads while aiod says nothing is owed a rate (or the
#                       device is too fast for them to matter)
#               ordered routed with aiod's [admission] local_random_us = 0:
#                       while a rate is owed (STREAM=1), every random miss
#                       through aiod, whatever the device
#               orderedqd1  ordered with [engine] queue_depth = 1 (what
#                       the profile of a device whose large reads gain
#                       nothing in parallel gave before the fast-device floor)
#   per run:    IOPS, MB/s, latency, bytes the device read (/proc/diskstats
#               of the disk holding the file, before and after), CPU seconds
#               of fio (/usr/bin/time) and of aiod (utime + stime of every
#               thread, /proc/PID/stat) per GiB and per operation, aiod's
#               own counters (aiodctl stats: disk_read_bytes,
#               passthrough_reads...)
#
# aiod is started afresh (empty cache) before every rtio and routed run and stopped
# after it, so no run inherits another's cache and direct runs have the
# machine alone. Every engine reads with O_DIRECT: the page cache plays no
# part, and nothing is dropped. Every configuration runs RUNS times; each
# round runs all of them in an order rotated by one, so drift on a shared
# machine hits all alike. Reported: medians.
#
# Output: bench/results/mixed-<date>.md and .json (per-run data in the
# JSON), raw output under $BUILD/mixed/runs/<stamp>/.
#
# Usage: bench/mixed/run.sh [-h]    (root; settings from the environment:)
#   RUNS=5 RUNTIME=10 CACHE_SIZE=1G WORKING_SET=4 FILE_SIZE=<CACHE_SIZE x WORKING_SET>
#   BLOCK_SIZE=1M QDS="1 8" WORKLOADS="rand4k rand64k" ENGINES="direct rtio routed"
#   (direct: fio's io_uring; rtio: every read through aiod, which measures
#   aiod itself; routed: the rtio engine with rtio_route=module, reads
#   routed as vfs_rtio routes them with its defaults: what a share's client pays)
#   DIR=/var/tmp KEEP=0 RESULTS_DIR=bench/results AIOD=$BUILD/aiod
#   STREAM=0  1: a 100 Mbit/s stream plays through aiod next to every run
#   (a second fio job reading clip.mxf, which matches a stream class, at
#   12.5 MB/s through the rtio engine, for every engine alike), and aiod has
#   a profile aiod --calibrate measured on DIR first: while the stream is
#   owed its rate, random misses are aiod's unless the profile says the
#   device is too fast for them to matter ([admission] local_random_us)
#   THP_SHMEM=advise (huge pages for aiod's cache during the run, bench/thp.sh)
#   RANDOMMAP=1 (fio's random map, its default: each block once per pass, so
#   late in a pass the reads come in runs of adjacent blocks; 0: --norandommap)
# QD stays <= 8: without CAP_SYS_RESOURCE a session has at most
# fs.mqueue.msg_max (10) requests in flight; deeper queues wait client-side.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"

if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
fi

BUILD=${BUILD:-$here/build}
# shellcheck source=../thp.sh
. "$here/bench/thp.sh"
# shellcheck source=../aiod.sh
. "$here/bench/aiod.sh"
RUNS=${RUNS:-5}
RUNTIME=${RUNTIME:-10}
CACHE_SIZE=${CACHE_SIZE:-1G}
WORKING_SET=${WORKING_SET:-4}
BLOCK_SIZE=${BLOCK_SIZE:-1M}
QDS=${QDS:-1 8}
WORKLOADS=${WORKLOADS:-rand4k rand64k}
ENGINES=${ENGINES:-direct rtio routed}
DIR=${DIR:-/var/tmp}
KEEP=${KEEP:-0}
RANDOMMAP=${RANDOMMAP:-1}
STREAM=${STREAM:-0}
RESULTS_DIR=${RESULTS_DIR:-$here/bench/results}

die() { echo "mixed/run.sh: error: $*" >&2; exit 1; }
log() { echo "mixed/run.sh: $(date +%T) $*" >&2; }
case $RANDOMMAP in
0|1) ;;
*) die "RANDOMMAP must be 0 or 1, not '$RANDOMMAP'" ;;
esac
case $STREAM in
0|1) ;;
*) die "STREAM must be 0 or 1, not '$STREAM'" ;;
esac

[ "$(id -u)" = 0 ] || die "needs root (aiod locks its cache in memory)"
for t in fio python3 /usr/bin/time numfmt findmnt; do
	command -v "$t" >/dev/null || die "$t is missing"
done

cache_bytes=$(numfmt --from=iec "$CACHE_SIZE")
FILE_SIZE=${FILE_SIZE:-$(( (cache_bytes >> 20) * WORKING_SET ))M}
file_bytes=$(numfmt --from=iec "$FILE_SIZE")
[ "$file_bytes" -gt "$cache_bytes" ] || die "FILE_SIZE ($FILE_SIZE) must exceed CACHE_SIZE ($CACHE_SIZE)"
for qd in $QDS; do
	[ "$qd" -le 8 ] || die "QD $qd: keep it <= 8 (see -h)"
done

log "building"
bench/fio/build.sh >&2
ENGINE=$BUILD/fio/rtio_engine.so
AIOD=${AIOD:-$BUILD/aiod}
AIODCTL=${AIODCTL:-$BUILD/aiodctl}
[ -x "$AIOD" ] && [ -x "$AIODCTL" ] || die "no aiod/aiodctl at $AIOD / $AIODCTL"

stamp=$(date +%Y%m%d-%H%M%S)
RAW=$BUILD/mixed/runs/$stamp
mkdir -p "$RAW/fio" "$RESULTS_DIR"
W=$(mktemp -d "$DIR/rtio-mixed.XXXXXX")
FILE=$W/data
SOCK=$W/aiod/aiod.sock
INI=$W/aiod.ini
DEV=$(bench_dev_of "$W")
mkdir -p "$W/aiod"

cleanup() {
	bench_aiod_stop_all
	bench_thp_restore
	if [ "$KEEP" = 1 ]; then
		log "kept $W"
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The README's settings for a media share, with the cache under test.
cat > "$INI" <<EOT
[global]
socket_path = $SOCK
log_level = 1
[cache]
size = $CACHE_SIZE
block_size = $BLOCK_SIZE
direct_io = yes
hugepages = yes
EOT
CLIP=$W/clip.mxf
if [ "$STREAM" = 1 ]; then
	log "aiod --calibrate $W (the profile the README has every server make)"
	"$AIOD" --calibrate "$W" -c "$INI" --profile "$W/device.profile" --calibrate-size 512M \
		--calibrate-seconds 1 > "$RAW/calibrate.log" 2>&1 ||
		die "aiod --calibrate failed: $(tail -n 5 "$RAW/calibrate.log")"
	rm -f "$W/.aiod-calibrate.dat"
	cp "$W/device.profile" "$RAW/device.profile"
	cat >> "$INI" <<EOT
[admission]
profile = $W/device.profile
[stream.hd]
match = *.mxf
bitrate = 100M
prebuffer_ms = 1000
EOT
	fio --name=clip --filename="$CLIP" --size=1G --rw=write --bs=1M --direct=1 \
		--ioengine=io_uring --iodepth=8 --output-format=terse > /dev/null
fi
# ordered: the same aiod, told to order every random miss while a rate is owed
INI0=$W/aiod-ordered.ini
if grep -q '^\[admission\]' "$INI"; then
	sed 's/^\[admission\]$/&\nlocal_random_us = 0/' "$INI" > "$INI0"
else
	printf '%s\n' '[admission]' 'local_random_us = 0' | cat "$INI" - > "$INI0"
fi
INI1=$W/aiod-ordered-qd1.ini
printf '%s\n' '[engine]' 'queue_depth = 1' | cat "$INI0" - > "$INI1"

bench_thp_enable

log "writing $FILE_SIZE to $FILE ($DEV)"
fio --name=layout --filename="$FILE" --size="$FILE_SIZE" --rw=write --bs=1M --direct=1 \
	--ioengine=io_uring --iodepth=8 --output-format=terse > /dev/null

configs=()
for wl in $WORKLOADS; do
	for qd in $QDS; do
		for eng in $ENGINES; do
			configs+=("$wl-qd$qd-$eng")
		done
	done
done

# run_config CONFIG ROUND: one fio run, one line in runs.tsv.
run_config() {
	local cfg=$1 round=$2 wl qd eng args=() base a0 a1 d0 d1 b0 b1 pid="" probe ini
	IFS=- read -r wl qd eng <<< "$cfg"
	qd=${qd#qd}
	case $wl in
	rand4k)  args+=(--rw=randread --bs=4k) ;;
	rand64k) args+=(--rw=randread --bs=64k) ;;
	*) die "unknown workload $wl" ;;
	esac
	args+=(--iodepth="$qd" --randrepeat=0 --direct=1 --time_based --runtime="$RUNTIME")
	if [ "$RANDOMMAP" = 0 ]; then
		args+=(--norandommap)
	fi
	case $eng in
	direct) args+=(--ioengine=io_uring) ;;
	rtio|routed|ordered|orderedqd1)
		args+=(--ioengine=external:"$ENGINE" --rtio_socket="$SOCK")
		# routed: reads routed as the module routes them (bench/fio/README.md)
		if [ "$eng" = rtio ]; then
			args+=(--rtio_route=aiod)
		else
			args+=(--rtio_route=module)
		fi ;;
	*) die "unknown engine $eng" ;;
	esac
	if [ "$eng" != direct ] || [ "$STREAM" = 1 ]; then
		ini=$INI
		case $eng in
		ordered) ini=$INI0 ;;
		orderedqd1) ini=$INI1 ;;
		esac
		bench_aiod_start aiod "$ini" "$SOCK" "$RAW/aiod.log" || die "aiod did not start"
		pid=${AIOD_PID[aiod]}
		# how much of its cache got huge pages (its NOTICE is below log_level 1)
		awk '/^ShmemPmdMapped:/ {print $2 " kB"}' "/proc/$pid/smaps_rollup" \
			> "$RAW/aiod.huge" 2>/dev/null || true
	fi
	if [ "$STREAM" = 1 ]; then
		# the second job: fio's JSON lists it after the random reader
		args+=(--name=stream --filename="$CLIP" --thread --rw=read --bs=1M --rate=12500k
		       --iodepth=1 --direct=1 --time_based --runtime="$RUNTIME"
		       --ioengine=external:"$ENGINE" --rtio_socket="$SOCK" --rtio_route=module)
	fi
	base=$RAW/fio/$cfg.$round
	if [ -n "$pid" ]; then
		"$AIODCTL" -s "$SOCK" stats > "$base.stats0"
	fi
	a0=$(bench_aiod_ticks); b0=$(bench_busy_ticks); d0=$(bench_disk_sectors "$DEV")
	probe=""
	if [ "$STREAM" = 1 ]; then
		# mid-run: the stream must be admitted (owed its rate) while the random job reads
		( sleep "$((RUNTIME / 2))"; "$AIODCTL" -s "$SOCK" stats > "$base.statsmid" ) &
		probe=$!
	fi
	timeout $((RUNTIME * 10 + 120)) /usr/bin/time -f '%e %U %S' -o "$base.time" \
		fio --name="$cfg" --filename="$FILE" --thread --numjobs=1 "${args[@]}" \
		--output-format=json --output="$base.json" > "$base.log" 2>&1 ||
		die "fio $cfg failed: $(tail -5 "$base.log")"
	a1=$(bench_aiod_ticks); b1=$(bench_busy_ticks); d1=$(bench_disk_sectors "$DEV")
	if [ -n "$pid" ]; then
		"$AIODCTL" -s "$SOCK" stats > "$base.stats1"
		bench_aiod_stop aiod
	fi
	if [ -n "$probe" ]; then
		wait "$probe" || true
		grep -Eq '^streams=[1-9]' "$base.statsmid" ||
			die "$cfg: aiod had no admitted stream mid-run (the run would prove nothing): $base.statsmid"
	fi
	# shellcheck disable=SC2086
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$round" "$base" "$wl" \
		"$qd" "$eng" "$((a1 - a0))" "$((b1 - b0))" $d0 $d1 >> "$RAW/runs.tsv"
}

printf 'config\tround\tbase\tworkload\tqd\tengine\taiod_ticks\tbusy_ticks\trd0\twr0\trd1\twr1\n' \
	> "$RAW/runs.tsv"
n=${#configs[@]}
log "$n configurations x $RUNS runs of ${RUNTIME}s on a $FILE_SIZE file, aiod cache $CACHE_SIZE"
for round in $(seq 1 "$RUNS"); do
	for i in $(seq 0 $((n - 1))); do
		cfg=${configs[$(( (i + round - 1) % n ))]}
		log "round $round/$RUNS: $cfg"
		run_config "$cfg" "$round"
	done
done

cmd="RUNS=$RUNS RUNTIME=$RUNTIME CACHE_SIZE=$CACHE_SIZE FILE_SIZE=$FILE_SIZE BLOCK_SIZE=$BLOCK_SIZE"
cmd+=" QDS='$QDS' WORKLOADS='$WORKLOADS' ENGINES='$ENGINES' DIR=$DIR"
if [ "$RANDOMMAP" != 1 ]; then
	cmd+=" RANDOMMAP=$RANDOMMAP"
fi
if [ "$STREAM" != 0 ]; then
	cmd+=" STREAM=$STREAM"
fi
cmd+=" bench/mixed/run.sh"
stream_args=()
if [ "$STREAM" = 1 ]; then
	stream_args=(--stream-profile "$RAW/device.profile")
fi
date_tag=$(date +%F)
out=$RESULTS_DIR/mixed-$date_tag
if [ -e "$out.md" ]; then
	out=$RESULTS_DIR/mixed-$date_tag-$(date +%H%M)
fi
python3 bench/mixed/summarize.py --raw "$RAW" --out "$out" --command "$cmd" \
	--file-size "$file_bytes" --cache-size "$CACHE_SIZE" --cache-bytes "$cache_bytes" \
	--block-size "$BLOCK_SIZE" --runtime "$RUNTIME" --runs "$RUNS" --clk-tck "$(getconf CLK_TCK)" --dev "$DEV" \
	--dir "$DIR" --aiod "$AIOD" --thp "$(bench_thp_setting)" \
	--huge "$(cat "$RAW/aiod.huge" 2>/dev/null || echo unknown)" "${stream_args[@]}"
log "wrote $out.md and $out.json (raw: $RAW)"
