#!/bin/bash
# The real-time streaming benchmark (issue 5): on an emulated single-spindle
# disk, how many constant-bitrate streams each server configuration sustains
# with zero late chunks, with and without a greedy reader, and whether
# admission control refuses the stream that would overcommit the disk.
#
#   bench/rt/run.sh [options]
#
#   --configs LIST      plain,plain-ra,io_uring,rtio (see bench/rt/lib.sh)
#   --bitrates LIST     stream bitrates, decimal bit/s [100M,200M]
#   --greedy LIST       greedy readers per run [0,1]
#   --duration S        seconds each stream plays [30]
#   --stagger-ms MS     streams start MS apart [500]
#   --prebuffer P       client prebuffer in chunks [2]
#   --confirm R         extra runs of the boundary count, all must be clean [1]
#   --extra K           also measure K counts above the first failing one [0]
#   --start LIST        first count tried per config at the first bitrate,
#                       e.g. plain=3,rtio=11 (later series start from earlier results)
#   --no-admission      skip the admission-control part
#   --calibrate-seconds S  per point of aiod --calibrate [2]
#   --greedy-file-mib M size of the greedy reader's file [4096]
#   --out-dir DIR       where rt-<date>.{md,json,png} go [bench/results]
#   --merge OLD.json    keep the series of an earlier sweep that this one does
#                       not measure (to re-measure some series only)
#   --quick             a smoke run: 8 s streams, 100M only, no greedy, 2 configs
#
# rtio settings come from the RT_* variables of bench/rt/lib.sh (RT_QD,
# RT_IO_SIZE, RT_PREBUFFER_MS, RT_CACHE, RT_BLOCK, RT_DIRECT_IO).
# Needs root; takes about 35-40 minutes with the defaults.
set -uo pipefail

RT_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/rt/lib.sh
source "$RT_HERE/lib.sh"

CONFIGS=plain,plain-ra,io_uring,rtio
BITRATES=100M,200M
GREEDY=0,1
DURATION=30
CONFIRM=1
EXTRA=0
START=plain=4,plain-ra=6,io_uring=4,rtio=12
ADMISSION=1
CAL_SECONDS=2
GREEDY_MIB=4096
OUT_DIR=$RT_ROOT/bench/results
STAGGER=500
PREBUFFER=2
MERGE=""

# as typed, for the results (the option loop below consumes "$@")
COMMAND="bench/rt/run.sh${*:+ $*}"

usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case $1 in
	--configs) CONFIGS=$2; shift 2 ;;
	--bitrates) BITRATES=$2; shift 2 ;;
	--greedy) GREEDY=$2; shift 2 ;;
	--duration) DURATION=$2; shift 2 ;;
	--stagger-ms) STAGGER=$2; shift 2 ;;
	--prebuffer) PREBUFFER=$2; shift 2 ;;
	--confirm) CONFIRM=$2; shift 2 ;;
	--extra) EXTRA=$2; shift 2 ;;
	--start) START=$2; shift 2 ;;
	--no-admission) ADMISSION=0; shift ;;
	--calibrate-seconds) CAL_SECONDS=$2; shift 2 ;;
	--greedy-file-mib) GREEDY_MIB=$2; shift 2 ;;
	--out-dir) OUT_DIR=$2; shift 2 ;;
	--merge) MERGE=$(realpath "$2") || exit 2; shift 2 ;;
	--quick) CONFIGS=plain,rtio BITRATES=100M GREEDY=0 DURATION=8 CONFIRM=0 START=plain=4,rtio=11
		CAL_SECONDS=1; shift ;;
	-h|--help) usage 0 ;;
	*) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
IFS=, read -r -a CONFIG_LIST <<< "$CONFIGS"
IFS=, read -r -a BITRATE_LIST <<< "$BITRATES"
IFS=, read -r -a GREEDY_LIST <<< "$GREEDY"
for c in "${CONFIG_LIST[@]}"; do
	case $c in plain|plain-ra|io_uring|rtio) ;; *) echo "run.sh: unknown config '$c'" >&2; exit 2 ;; esac
done
for v in "$DURATION" "$CONFIRM" "$EXTRA" "$STAGGER" "$PREBUFFER" "$GREEDY_MIB" "${GREEDY_LIST[@]}"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "run.sh: '$v' is not a whole number" >&2; exit 2; }
done
export RT_STAGGER_MS=$STAGGER RT_CLIENT_PREBUFFER=$PREBUFFER

# bits/s of a rate like 100M (decimal, as rtio-stream and aiod read it)
bps() { numfmt --from=si "$1"; }

# The disk moves 168 MB/s at best: one stream more than that can carry is
# the most worth trying.
MEDIA_BPS=$((168 * 1000 * 1000))
max_streams() { echo $((MEDIA_BPS * 8 / $(bps "$1") + 1)); }

# Stream files hold the whole run without wrapping: duration plus prebuffer
# plus read-ahead slack, in MiB, a multiple of 8 (written 8 MiB at a time).
stream_mib() {
	local bytes=$(($(bps "$1") / 8 * (DURATION + 5)))
	echo $((((bytes >> 20) + 8) / 8 * 8))
}

STAMP=$(date +%Y%m%d-%H%M)
mkdir -p "$OUT_DIR" || { echo "run.sh: cannot create $OUT_DIR" >&2; exit 1; }
OUT_DIR=$(cd "$OUT_DIR" && pwd)
OUT=$OUT_DIR/rt-$STAMP

rt_init run.sh
RUNS=$RT_T/runs.jsonl
SERIES=$RT_T/series.jsonl
ADMIT=$RT_T/admission.json
: > "$RUNS"
: > "$SERIES"
echo null > "$ADMIT"
T_START=$(date +%s)

# ---- bookkeeping of the sweep ----

declare -A MISSES	# "config bitrate g n" -> misses of each clean run, space separated
declare -A BEST		# "config bitrate g" -> largest count clean in every run

rjson() { "$RT_PY" "$RT_HERE/record.py" get "$@"; }

# measure CONFIG BITRATE G N: one run; a run in which a client failed (an
# error, not a late chunk) is repeated once, and if it fails again counted
# as a miss of every chunk so the search moves on.
measure() {
	local config=$1 bitrate=$2 g=$3 n=$4 try r chunks misses worst gmbs cpu load nerr err
	for try in 1 2; do
		r=$(rt_measure "$config" "$n" "$g" "$bitrate" "$DURATION") || rt_die "a run of $config failed"
		echo "$r" >> "$RUNS"
		{
			read -r chunks; read -r misses; read -r worst; read -r gmbs
			read -r cpu; read -r load; read -r nerr; read -r err
		} < <(rjson chunks misses worst_lateness_ms greedy_mb_per_s cpu_s.total loadavg.start \
			error_count errors <<< "$r")
		printf '%s: %-8s %5s g=%s n=%-2s chunks=%-5s misses=%-5s worst=%7s ms greedy=%5s MB/s cpu=%5s s load=%s%s\n' \
			"$(date +%T)" "$config" "$bitrate" "$g" "$n" "$chunks" "$misses" "$worst" "$gmbs" \
			"$cpu" "$load" "$([ "$nerr" = 0 ] || echo " ERRORS: ${err:0:300}")" >&2
		if [ "$nerr" = 0 ]; then
			MISSES["$config $bitrate $g $n"]+="$misses "
			return 0
		fi
	done
	MISSES["$config $bitrate $g $n"]+="$((chunks > 0 ? chunks : 1)) "
}

# runs_at / clean_at / last_clean CONFIG BITRATE G N
runs_at() { local m=(${MISSES["$1 $2 $3 $4"]:-}); echo ${#m[@]}; }
clean_at() { [[ ${MISSES["$1 $2 $3 $4"]:-x} =~ ^(0 )+$ ]]; }
last_clean() { local m=(${MISSES["$1 $2 $3 $4"]:-x}); [ "${m[-1]}" = 0 ]; }

# series CONFIG BITRATE G START: the largest count with zero misses in
# 1 + CONFIRM runs, searching from START.
series() {
	local config=$1 bitrate=$2 g=$3 n=$4 max fail best i
	max=$(max_streams "$bitrate")
	[ "$n" -ge 1 ] || n=1
	[ "$n" -le "$max" ] || n=$max
	rt_log "series $config $bitrate, $g greedy: starting at $n streams (at most $max)"
	measure "$config" "$bitrate" "$g" "$n"
	if last_clean "$config" "$bitrate" "$g" "$n"; then
		while [ "$n" -lt "$max" ]; do
			n=$((n + 1))
			measure "$config" "$bitrate" "$g" "$n"
			last_clean "$config" "$bitrate" "$g" "$n" || break
		done
	else
		while [ "$n" -gt 1 ]; do
			n=$((n - 1))
			measure "$config" "$bitrate" "$g" "$n"
			last_clean "$config" "$bitrate" "$g" "$n" && break
		done
	fi
	# best: the count below the lowest failing count, confirmed
	best=0
	for ((i = 1; i <= max; i++)); do
		if [ "$(runs_at "$config" "$bitrate" "$g" "$i")" -gt 0 ] && ! clean_at "$config" "$bitrate" "$g" "$i"; then
			break
		fi
		[ "$(runs_at "$config" "$bitrate" "$g" "$i")" -gt 0 ] && best=$i
	done
	fail=$((best + 1))
	while [ "$best" -gt 0 ]; do
		# runs until it has 1 + CONFIRM, stopping at the first late chunk
		while [ "$(runs_at "$config" "$bitrate" "$g" "$best")" -lt $((CONFIRM + 1)) ] &&
			{ [ "$(runs_at "$config" "$bitrate" "$g" "$best")" = 0 ] ||
				clean_at "$config" "$bitrate" "$g" "$best"; }; do
			measure "$config" "$bitrate" "$g" "$best"
		done
		clean_at "$config" "$bitrate" "$g" "$best" && break
		fail=$best
		best=$((best - 1))
	done
	for ((i = 1; i <= EXTRA; i++)); do
		[ $((fail + i)) -le "$max" ] || break
		[ "$(runs_at "$config" "$bitrate" "$g" $((fail + i)))" -gt 0 ] ||
			measure "$config" "$bitrate" "$g" $((fail + i))
	done
	BEST["$config $bitrate $g"]=$best
	[ "$fail" -le "$max" ] || fail=null
	printf '{"config": "%s", "bitrate": "%s", "greedy": %s, "max_clean_streams": %s, "first_failing": %s, "max_tried": %s}\n' \
		"$config" "$bitrate" "$g" "$best" "$fail" "$max" >> "$SERIES"
	rt_log "series $config $bitrate, $g greedy: $best streams with zero misses"
}

# First count to try: --start for the first series of a config, then what
# the config reached without a greedy reader, scaled by bitrate.
start_for() {
	local config=$1 bitrate=$2 g=$3 s ref b0 br
	b0=${BITRATE_LIST[0]}
	if [ "$g" != "${GREEDY_LIST[0]}" ] && [ -n "${BEST["$config $bitrate ${GREEDY_LIST[0]}"]:-}" ]; then
		echo "${BEST["$config $bitrate ${GREEDY_LIST[0]}"]}"
		return
	fi
	for br in "${BITRATE_LIST[@]}"; do
		ref=${BEST["$config $br $g"]:-}
		if [ -n "$ref" ]; then
			echo $((ref * $(bps "$br") / $(bps "$bitrate")))
			return
		fi
	done
	s=$(tr ',' '\n' <<< "$START" | sed -n "s/^$config=//p")
	echo $(( ${s:-3} * $(bps "$b0") / $(bps "$bitrate") ))
}

# ---- admission control ----

# Calibrate the emulated disk with aiod --calibrate, then open one stream
# more than the profile's capacity admits, in refuse mode.
admission() {
	local bitrate=${BITRATE_LIST[0]} cap admitted n dir r probe_file
	RT_ADMISSION_PROFILE=$RT_T/device.profile
	rt_log "admission: aiod --calibrate $RT_MNT ($CAL_SECONDS s per point)"
	"$BUILD/aiod" --calibrate "$RT_MNT" --profile "$RT_ADMISSION_PROFILE" \
		--calibrate-size 512M --calibrate-seconds "$CAL_SECONDS" > "$RT_T/calibrate.log" 2>&1 ||
		rt_die "aiod --calibrate failed: $(tail -n 5 "$RT_T/calibrate.log")"
	rm -f "$RT_MNT/.aiod-calibrate.dat"
	cap=$("$RT_PY" "$RT_HERE/record.py" capacity "$RT_ADMISSION_PROFILE" "$(numfmt --from=iec "$RT_IO_SIZE")")
	[ "${cap:-0}" -gt 0 ] || rt_die "no capacity in $RT_ADMISSION_PROFILE: $(cat "$RT_T/calibrate.log")"
	# aiod's arithmetic: streams fit while their sum stays under capacity - 5 %
	admitted=$((cap / 100 * 95 / ($(bps "$bitrate") / 8)))
	n=$((admitted + 1))
	if [ "$n" -gt "$(max_streams "$bitrate")" ]; then
		rt_log "admission: the profile admits more streams than the disk carries at its media rate; skipped"
		return 0
	fi
	rt_log "admission: capacity $((cap / 1000000)) MB/s at $RT_IO_SIZE requests -> $admitted streams of $bitrate fit; opening $n"
	RT_ADMISSION_MODE=refuse
	# While the admitted streams play, smbclient opens the refused stream's
	# file again: it prints the NT status the client gets.
	# shellcheck disable=SC2059
	probe_file=$(printf "$RT_STREAM_FMT" $((n - 1)))
	r=$(RT_SMBD_LOG_LEVEL="1 vfs:3" \
		RT_PROBE="timeout 20 smbclient //127.0.0.1/media -p $RT_PORT -U '$RT_USER%$RT_PASS' -c 'get $probe_file /dev/null'" \
		rt_measure rtio "$n" 0 "$bitrate" "$DURATION") || rt_die "the admission run failed"
	RT_ADMISSION_MODE=off
	RT_ADMISSION_PROFILE=""
	echo "$r" >> "$RUNS"
	echo "$r" > "$RT_T/admission-run.json"
	dir=$RT_T/runs/$(rjson id <<< "$r")
	"$RT_PY" "$RT_HERE/record.py" admission "$RT_T/admission-run.json" "$n" "$admitted" "$cap" \
		"$dir" "$RT_T/calibrate.log" > "$ADMIT" || rt_die "summarising the admission run failed"
	rt_log "admission: $(rjson opened refused_by_aiod probe_saw_insufficient_resources served_streams served_misses < "$ADMIT" | paste -sd' ') (opened, opens refused by aiod, smbclient saw NT_STATUS_INSUFFICIENT_RESOURCES, streams served, their misses)"
}

# ---- the report ----

REPORTED=0
report() {
	local complete=$1
	[ "$REPORTED" = 0 ] || return 0
	REPORTED=1
	[ -s "$RUNS" ] || return 0
	cat > "$RT_T/params" <<EOF
command=$COMMAND
date=$STAMP
complete=$complete
elapsed_s=$(($(date +%s) - T_START))
loadavg_start=$LOAD_START
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)
aiod_version=$("$BUILD/aiod" --version 2>&1 | head -n 1)
smbd_version=$(smbd --version)
configs=$CONFIGS
bitrates=$BITRATES
greedy=$GREEDY
duration_s=$DURATION
stagger_ms=$STAGGER
client_prebuffer_chunks=$PREBUFFER
chunk=$RT_CHUNK
greedy_chunk=$RT_GREEDY_CHUNK
greedy_file_mib=$GREEDY_MIB
confirm_runs=$CONFIRM
read_ahead_kb=$RT_LOOP_RA_BASE
stream_file_layout=preallocated (fallocate), then written with O_DIRECT; physical breaks: ${LAYOUT:-not known yet}
read_ahead_kb_plain_ra=$RT_BIG_RA_KB
emudisk=$(sed -n 's/.*\(seek=.*\)/\1/p' "$RT_T/emudisk-model.log" 2>/dev/null | head -n 1)
rtio.cache.size=$RT_CACHE
rtio.cache.block_size=$RT_BLOCK
rtio.cache.direct_io=$RT_DIRECT_IO
rtio.readahead.io_size=$RT_IO_SIZE
rtio.engine.queue_depth=$RT_QD
rtio.readahead.best_effort_deadline_ms=$RT_BE_DEADLINE_MS
rtio.stream.prebuffer_ms=$RT_PREBUFFER_MS
EOF
	"$RT_PY" "$RT_HERE/report.py" sweep "$OUT" "$RT_T/params" "$RUNS" "$SERIES" "$ADMIT" $MERGE ||
		{ rt_log "report.py failed; raw records kept in $OUT.runs.jsonl"; cp "$RUNS" "$OUT.runs.jsonl"; return 1; }
	rt_log "results: $OUT.md $OUT.json $OUT.png"
}

# an interrupted sweep still leaves what it measured
RT_ON_EXIT='report false'

# ---- main ----

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
LAYOUT=""
gmib=0
for g in "${GREEDY_LIST[@]}"; do [ "$g" = 0 ] || gmib=$GREEDY_MIB; done

# One emulated disk per bitrate: its bytes live in RAM, and a fresh disk
# gives the memory of the last one back.
for bitrate in "${BITRATE_LIST[@]}"; do
	nfiles=$(max_streams "$bitrate")
	mib=$(stream_mib "$bitrate")
	# the files, ext4's share (~2 %), aiod's 512 MiB calibration file
	disk_mib=$(((nfiles * mib + gmib) * 103 / 100 + 512 + 256))
	rt_emu_down
	rt_emu_up "$(((disk_mib + 1023) / 1024))G"
	cp "$RT_EMU/emudisk.log" "$RT_T/emudisk-model.log"
	rt_log "writing $nfiles stream files of $mib MiB for $bitrate and a $gmib MiB file for the greedy reader"
	rt_make_files "$nfiles" "$mib" "$gmib"
	LAYOUT+="$bitrate: $(rt_file_breaks "$RT_MNT"/media/*.mxf) breaks in $nfiles stream files; "
	for g in "${GREEDY_LIST[@]}"; do
		for config in "${CONFIG_LIST[@]}"; do
			series "$config" "$bitrate" "$g" "$(start_for "$config" "$bitrate" "$g")"
		done
	done
	if [ "$ADMISSION" = 1 ] && [ "$bitrate" = "${BITRATE_LIST[0]}" ] &&
		[[ ,$CONFIGS, == *,rtio,* ]]; then
		admission
	fi
done

RT_ON_EXIT=""
report true
