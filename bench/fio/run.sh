#!/usr/bin/env bash
# Side-by-side fio benchmark: fio's own io_uring engine on the file directly
# vs fio through aiod (the rtio engine), on the same file, in one run.
#
#   workloads:  rand4k (4 KiB random reads)  seq1m (1 MiB sequential reads)
#   cache:      cold  guest page cache dropped; aiod restarted (empty cache);
#                     each byte read at most once (stops at EOF or RUNTIME)
#               hot   aiod's cache holds the whole file (a second aiod,
#                     warmed once); time-based runs
#   engines:    direct    fio io_uring, O_DIRECT
#               rtio      fio -> rtio client library -> aiod (file opened
#                         O_DIRECT, so aiod's cache is the only cache)
#               buffered  fio io_uring without O_DIRECT on a warm page
#                         cache: the kernel's own cache, hot runs only
#                         (BUFFERED=0 leaves it out)
#
# Every configuration runs RUNS times; each round runs all of them in an order
# rotated by one, so drift on this shared machine hits all of them alike.
# Then the cache-hit round trip (hit_rtt) against the hot aiod, with a bare
# message-queue ping-pong as the floor, unpinned and pinned.
#
# Output: bench/results/fio-<date>.md and .json (medians; per-run data in
# the JSON), raw fio output under $BUILD/fio/runs/<stamp>/.
#
# Usage: bench/fio/run.sh [-h]    (root; settings from the environment:)
#   RUNS=10 RUNTIME=5 FILE_SIZE=2G DIR=/var/tmp CACHE_SIZE=<FILE_SIZE+512M>
#   BLOCK_SIZE=1M RAND_IODEPTH=8 SEQ_IODEPTH=8 BUFFERED=1 HIT_N=20000
#   STRACE=1 KEEP=0 RESULTS_DIR=bench/results AIOD=$BUILD/aiod
#   WORKLOADS="rand4k seq1m" CACHES="cold hot" HIT=1 (subsets)
#   READAHEAD=<aiod [readahead] blocks; unset = aiod's default>
#   THP_SHMEM=advise (huge pages for aiod's cache during the run; restored
#   afterwards, see bench/thp.sh)
# iodepth stays <= 8: without CAP_SYS_RESOURCE a session has at most
# fs.mqueue.msg_max (10) requests in flight; deeper queues wait client-side.
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
RUNS=${RUNS:-10}
RUNTIME=${RUNTIME:-5}
FILE_SIZE=${FILE_SIZE:-2G}
DIR=${DIR:-/var/tmp}
BLOCK_SIZE=${BLOCK_SIZE:-1M}
RAND_IODEPTH=${RAND_IODEPTH:-8}
SEQ_IODEPTH=${SEQ_IODEPTH:-8}
BUFFERED=${BUFFERED:-1}
HIT_N=${HIT_N:-20000}
STRACE=${STRACE:-1}
KEEP=${KEEP:-0}
RESULTS_DIR=${RESULTS_DIR:-$here/bench/results}
WORKLOADS=${WORKLOADS-rand4k seq1m}
CACHES=${CACHES-cold hot}
HIT=${HIT:-1}
READAHEAD=${READAHEAD:-}

die() { echo "run.sh: error: $*" >&2; exit 1; }
log() { echo "run.sh: $(date +%T) $*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root (drop_caches, mlock, aiod)"
for t in fio python3 /usr/bin/time taskset numfmt findmnt; do
	command -v "$t" >/dev/null || die "$t is missing"
done

file_bytes=$(numfmt --from=iec "$FILE_SIZE")
CACHE_SIZE=${CACHE_SIZE:-$(( (file_bytes >> 20) + 512 ))M}
[ "$(numfmt --from=iec "$CACHE_SIZE")" -gt "$file_bytes" ] ||
	die "CACHE_SIZE ($CACHE_SIZE) must exceed FILE_SIZE ($FILE_SIZE): hot runs need the whole file cached"

log "building"
bench/fio/build.sh >&2
ENGINE=$BUILD/fio/rtio_engine.so
HIT_RTT=$BUILD/fio/hit_rtt
AIOD=${AIOD:-$BUILD/aiod}
AIODCTL=${AIODCTL:-$BUILD/aiodctl}
[ -x "$AIOD" ] && [ -x "$AIODCTL" ] || die "no aiod/aiodctl at $AIOD / $AIODCTL"

stamp=$(date +%Y%m%d-%H%M%S)
RAW=$BUILD/fio/runs/$stamp
mkdir -p "$RAW/fio" "$RAW/hit" "$RESULTS_DIR"
W=$(mktemp -d "$DIR/rtio-fio.XXXXXX")
FILE=$W/data
DEV=$(bench_dev_of "$W")
CLK_TCK=$(getconf CLK_TCK)
NCPU=$(nproc)

# ---- aiod instances: "cold" is restarted before every cold run, "hot" lives throughout ----

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

sock_of() { echo "$W/$1/aiod.sock"; }

aiod_start() {
	local name=$1 ini=$W/$1.ini
	mkdir -p "$W/$name"
	cat > "$ini" <<EOT
[global]
socket_path = $(sock_of "$name")
log_level = 1
[cache]
size = $CACHE_SIZE
block_size = $BLOCK_SIZE
EOT
	if [ -n "$READAHEAD" ]; then
		printf '[readahead]\nblocks = %s\n' "$READAHEAD" >> "$ini"
	fi
	bench_aiod_start "$name" "$ini" "$(sock_of "$name")" "$RAW/aiod-$name.log" || die "aiod ($name)"
	# how much of its cache got huge pages (its NOTICE is below log_level 1)
	awk '/^ShmemPmdMapped:/ {print $2 " kB"}' "/proc/${AIOD_PID[$name]}/smaps_rollup" \
		> "$RAW/aiod-$name.huge" 2>/dev/null || true
}

aiod_stop() { bench_aiod_stop "$1"; }
disk_sectors() { bench_disk_sectors "$DEV"; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

bench_thp_enable

# ---- the file ----

log "writing $FILE_SIZE to $FILE ($DEV)"
fio --name=layout --filename="$FILE" --size="$FILE_SIZE" --rw=write --bs=1M --direct=1 \
	--ioengine=io_uring --iodepth=8 --output-format=terse > /dev/null

if [[ " $CACHES " == *" hot "* ]] || [ "$HIT" = 1 ]; then
	aiod_start hot
	log "warming the hot aiod (one sequential pass through rtio)"
	fio --name=warm --filename="$FILE" --rw=read --bs=1M --iodepth=8 --direct=1 --thread \
		--ioengine=external:"$ENGINE" --rtio_socket="$(sock_of hot)" --rtio_route=aiod \
		--output-format=terse > /dev/null
	"$AIODCTL" -s "$(sock_of hot)" stats > "$RAW/hot-after-warm.stats"
fi
aiod_start cold

# ---- configurations ----

configs=()
for wl in $WORKLOADS; do
	for cache in $CACHES; do
		configs+=("$wl-$cache-direct" "$wl-$cache-rtio")
		if [ "$cache" = hot ] && [ "$BUFFERED" = 1 ]; then
			configs+=("$wl-hot-buffered")
		fi
	done
done

# run_config CONFIG ROUND: one fio run, one line in runs.tsv.
run_config() {
	local cfg=$1 round=$2 wl cache eng args=() base sock="" inst=""
	IFS=- read -r wl cache eng <<< "$cfg"
	case $wl in
	rand4k) args+=(--rw=randread --bs=4k --iodepth="$RAND_IODEPTH" --randrepeat=0) ;;
	seq1m)  args+=(--rw=read --bs=1M --iodepth="$SEQ_IODEPTH") ;;
	esac
	case $eng in
	direct)   args+=(--ioengine=io_uring --direct=1) ;;
	buffered) args+=(--ioengine=io_uring --direct=0) ;;
	rtio)     inst=$cache; sock=$(sock_of "$inst")
		  # every read to aiod: this table measures aiod (mixed/run.sh: as routed)
		  args+=(--direct=1 --ioengine=external:"$ENGINE" --rtio_socket="$sock"
			 --rtio_route=aiod) ;;
	esac
	if [ "$cache" = cold ]; then
		if [ "$eng" = rtio ]; then
			aiod_stop cold
			aiod_start cold
		fi
		drop_caches
		args+=(--runtime="$RUNTIME")
	else
		if [ "$eng" = buffered ]; then
			dd if="$FILE" of=/dev/null bs=1M status=none	# warm the page cache
		fi
		args+=(--time_based --runtime="$RUNTIME")
	fi
	base=$RAW/fio/$cfg.$round
	if [ -n "$inst" ]; then
		"$AIODCTL" -s "$sock" stats > "$base.stats0"
	fi

	local a0 b0 d0 l1 a1 b1 d1
	a0=$(bench_aiod_ticks); b0=$(bench_busy_ticks); d0=$(disk_sectors)
	l1=$(cut -d' ' -f1 /proc/loadavg)
	timeout $((RUNTIME * 10 + 120)) /usr/bin/time -f '%e %U %S' -o "$base.time" \
		fio --name="$cfg" --filename="$FILE" --thread --numjobs=1 "${args[@]}" \
		--output-format=json --output="$base.json" > "$base.log" 2>&1 ||
		die "fio $cfg failed: $(tail -5 "$base.log")"
	a1=$(bench_aiod_ticks); b1=$(bench_busy_ticks); d1=$(disk_sectors)
	if [ -n "$inst" ]; then
		"$AIODCTL" -s "$sock" stats > "$base.stats1"
	fi
	# shellcheck disable=SC2086
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$round" "$base" \
		"$((a1 - a0))" "$((b1 - b0))" $d0 $d1 "$l1" "$inst" >> "$RAW/runs.tsv"
}

printf 'config\tround\tbase\taiod_ticks\tbusy_ticks\trd0\twr0\trd1\twr1\tload1\taiod\n' > "$RAW/runs.tsv"
n=${#configs[@]}
log "${#configs[@]} configurations x $RUNS runs of ${RUNTIME}s"
for round in $(seq 1 "$RUNS"); do
	for i in $(seq 0 $((n - 1))); do
		cfg=${configs[$(( (i + round - 1) % n ))]}
		log "round $round/$RUNS: $cfg"
		run_config "$cfg" "$round"
	done
done

# ---- cache-hit round trip ----

# hit_variant VARIANT ROUND: hit_rtt and the mq floor, with aiod and the client placed as named.
# CPU time of every thread of a process, in ns (schedstat: finer than ticks).
proc_cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'; }
proc_ctxsw() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt_switches|^nonvoluntary_ctxt_switches/ {s += $2} END {printf "%.0f\n", s}'
}
hit_variant() {
	local v=$1 round=$2 cpu_client="" cpu_aiod="0-$((NCPU - 1))" t0 t1 c0 c1 pre=() echo=()
	case $v in
	same_cpu)  cpu_client=0; cpu_aiod=0 ;;
	split_cpu) cpu_client=0; cpu_aiod=$((NCPU > 1 ? 1 : 0)) ;;
	esac
	if [ -n "$cpu_client" ]; then
		echo=(-c "$cpu_aiod")	# the mq floor's echo process stands in for aiod
	fi
	taskset -a -p -c "$cpu_aiod" "$hot_pid" > /dev/null
	if [ -n "$cpu_client" ]; then
		pre=(taskset -c "$cpu_client")
	fi
	t0=$(proc_cpu_ns "$hot_pid"); c0=$(proc_ctxsw "$hot_pid")
	"${pre[@]}" "$HIT_RTT" -s "$(sock_of hot)" -f "$FILE" -n "$HIT_N" -d > "$RAW/hit/aiod.$v.$round.json"
	t1=$(proc_cpu_ns "$hot_pid"); c1=$(proc_ctxsw "$hot_pid")
	# Includes hit_rtt's connect, open and warm-up reads: see summarize.py.
	echo "{\"aiod_cpu_ns\": $((t1 - t0)), \"aiod_ctxsw\": $((c1 - c0))}" > "$RAW/hit/aiod.$v.$round.aiod"
	"${pre[@]}" "$HIT_RTT" --mq-baseline -n "$HIT_N" "${echo[@]}" > "$RAW/hit/mq.$v.$round.json"
}

# measure_hits: every placement RUNS times, interleaved; then the syscall count.
measure_hits() {
	local variants=(unpinned same_cpu split_cpu) round v spid
	hot_pid=${AIOD_PID[hot]}
	if [ "$NCPU" -lt 2 ]; then
		variants=(unpinned same_cpu)
	fi
	log "cache-hit round trip: ${#variants[@]} placements x $RUNS runs of $HIT_N reads"
	for round in $(seq 1 "$RUNS"); do
		for v in "${variants[@]}"; do
			hit_variant "$v" "$round"
		done
	done
	taskset -a -p -c "0-$((NCPU - 1))" "$hot_pid" > /dev/null

	# Syscalls per hit on each side (strace slows everything: counts only, never timings).
	if [ "$STRACE" = 1 ] && command -v strace > /dev/null; then
		log "counting syscalls per cache hit (strace)"
		strace -c -f -p "$hot_pid" -o "$RAW/hit/strace.aiod" 2> /dev/null &
		spid=$!
		sleep 1
		strace -c -f -o "$RAW/hit/strace.client" "$HIT_RTT" -s "$(sock_of hot)" -f "$FILE" \
			-n 5000 -w 0 -d > "$RAW/hit/strace.json"
		kill -INT "$spid"
		wait "$spid" 2> /dev/null || true
	fi
}

if [ "$HIT" = 1 ]; then
	measure_hits
fi

# ---- report ----

cmd="RUNS=$RUNS RUNTIME=$RUNTIME FILE_SIZE=$FILE_SIZE DIR=$DIR CACHE_SIZE=$CACHE_SIZE"
cmd+=" BLOCK_SIZE=$BLOCK_SIZE RAND_IODEPTH=$RAND_IODEPTH SEQ_IODEPTH=$SEQ_IODEPTH"
cmd+=" BUFFERED=$BUFFERED HIT_N=$HIT_N HIT=$HIT WORKLOADS='$WORKLOADS' CACHES='$CACHES'"
if [ -n "$READAHEAD" ]; then
	cmd+=" READAHEAD=$READAHEAD"
fi
cmd+=" bench/fio/run.sh"
date_tag=$(date +%F)
out=$RESULTS_DIR/fio-$date_tag
if [ -e "$out.md" ]; then
	out=$RESULTS_DIR/fio-$date_tag-$(date +%H%M)
fi
python3 bench/fio/summarize.py --raw "$RAW" --out "$out" --command "$cmd" \
	--file-size "$file_bytes" --cache-size "$CACHE_SIZE" --block-size "$BLOCK_SIZE" \
	--runtime "$RUNTIME" --runs "$RUNS" --clk-tck "$CLK_TCK" --dev "$DEV" --dir "$DIR" \
	--aiod "$AIOD" --readahead "${READAHEAD:-default}" --hit-n "$HIT_N" --rand-iodepth "$RAND_IODEPTH" --seq-iodepth "$SEQ_IODEPTH"
printf '\nshmem_enabled during the run: %s; cache of the last cold aiod mapped with huge pages: %s\n' \
	"$(bench_thp_setting)" "$(cat "$RAW/aiod-cold.huge" 2>/dev/null || echo unknown)" >> "$out.md"
log "wrote $out.md and $out.json (raw: $RAW)"
