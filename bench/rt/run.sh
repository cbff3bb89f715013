#!/bin/bash
# The real-time streaming benchmark (issues 5 and 11): on an emulated
# single-spindle disk, how many constant-bitrate streams each server
# configuration sustains with zero late chunks, per scenario, with and
# without a greedy reader, and whether admission control refuses the stream
# that would overcommit the disk.
#
#   bench/rt/run.sh [options]
#
#   --scenario LIST     staggered,together,replay,mixed,ingest (see
#                       bench/rt/scenarios.sh and README.md) [all five]
#   --configs LIST      plain,plain-ra,io_uring,rtio (see bench/rt/lib.sh)
#   --bitrates LIST     stream bitrates, decimal bit/s, of every scenario but
#                       mixed [100M,200M]
#   --greedy LIST       greedy readers per run [0,1]
#   --prebuffer LIST    client prebuffer, in chunks (2) or in time (500ms:
#                       ceil(500 ms / period) chunks at each stream's bitrate
#                       and chunk size) [2,500ms]
#   --duration S        seconds each stream plays [30]
#   --stagger-ms MS     staggered: streams start MS apart [500]
#   --stagger SCEN=MS,...  any scenario's stagger [staggered=500, together=0,
#                       replay=0, mixed=0, ingest=500]
#   --mix MIX           mixed: COUNTxBITRATE[:CHUNK],... e.g. 4x200M,4x50M or
#                       4x200M:4M,4x50M:1M; repeat for more mixes
#                       [4x200M,4x50M and 1x400M:4M,2x200M:2M,2x100M,2x50M]
#   --recorders R       ingest: paced recorders of new files [2]
#   --record-bitrate B  ingest: their bitrate [100M]
#   --confirm R         extra runs of the boundary count, all must be clean [1]
#   --extra K           also measure K counts above the first failing one [0]
#   --start LIST        first count tried per config at the first bitrate,
#                       e.g. plain=3,rtio=11 (later series start from earlier results)
#   --no-admission      skip the admission-control part
#   --calibrate-seconds S  per point of aiod --calibrate [2]
#   --greedy-file-mib M size of the greedy reader's file [4096]
#   --greedy-write      the greedy clients copy a new file onto the share
#                       instead of reading one (rtio-stream --greedy --write:
#                       a camera card offloaded next to the editors)
#   --greedy-lead S     the greedy clients start S seconds before the first
#                       stream (a copy already running when editors press play) [0]
#   --scrub S           the first stream of each run jumps every S seconds to
#                       another part of its file and plays from there, its
#                       prebuffer again (rtio-stream --jump-every: an editor
#                       scrubbing next to the others) [0: never]
#   --out-dir DIR       where rt-<date>.{md,json,png} go [bench/results]
#   --merge OLD.json    keep the series of an earlier sweep that this one does
#                       not measure (to re-measure some series only)
#   --quick             a smoke run: 8 s streams, 100M, no greedy, plain and
#                       rtio staggered, then one rtio run started together and
#                       one replay run (~4 min)
#
# rtio's settings: RT_SETTINGS=readme (default: README.md's recommended
# stream settings, rt_settings_readme in settings.sh) or tuned (issue 5's
# bench-only values, RT_QD, RT_IO_SIZE, RT_PREBUFFER_MS, RT_BE_DEADLINE_MS);
# RT_CACHE sets aiod's cache size for both [1G]; RT_PROFILE=1 (default)
# calibrates the emulated disk once (aiod --calibrate) and gives rtio that
# [admission] profile, RT_PROFILE=0 runs without one. Results say which.
# Needs root; the full default sweep takes many hours (README.md).
set -uo pipefail

# as typed, for the results (the option loop below consumes "$@"), with the
# RT_* settings given in the environment
COMMAND="$(env | grep -E '^RT_[A-Z_]+=' | sort | sed "s/=\(.*\)/='\1'/" | paste -sd' ')"
COMMAND="${COMMAND:+$COMMAND }bench/rt/run.sh${*:+ $*}"

RT_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/rt/lib.sh
source "$RT_HERE/lib.sh"
# shellcheck source=bench/rt/scenarios.sh
source "$RT_HERE/scenarios.sh"

SCENARIOS=$SCENARIOS_ALL
CONFIGS=plain,plain-ra,io_uring,rtio
BITRATES=100M,200M
GREEDY=0,1
PREBUFFERS=2,500ms
DURATION=30
CONFIRM=1
EXTRA=0
START=plain=4,plain-ra=6,io_uring=4,rtio=12
ADMISSION=1
CAL_SECONDS=2
GREEDY_MIB=4096
OUT_DIR=$RT_ROOT/bench/results
MIX_LIST=()
RECORDERS=2
RECORD_BITRATE=100M
MERGE=""
QUICK=0
QUICK_TOGETHER=6	# --quick: the together run's streams
QUICK_REPLAY=7		# --quick: the replay run's streams (6 played before + 1 new)
# replay: the files hold a first playback of this many streams that fills
# RT_CACHE (scenarios.sh: stream_seconds)
REPLAY_MIN_WARM=4
RT_PROFILE=${RT_PROFILE:-1}

usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case $1 in
	--scenario) SCENARIOS=$2; shift 2 ;;
	--configs) CONFIGS=$2; shift 2 ;;
	--bitrates) BITRATES=$2; shift 2 ;;
	--greedy) GREEDY=$2; shift 2 ;;
	--duration) DURATION=$2; shift 2 ;;
	--stagger-ms) STAGGER_OF[staggered]=$2; shift 2 ;;
	--stagger)
		IFS=, read -r -a kv <<< "$2"
		for x in "${kv[@]}"; do
			[[ $x =~ ^([a-z]+)=([0-9]+)$ && -n ${STAGGER_OF[${BASH_REMATCH[1]}]:-} ]] ||
				{ echo "run.sh: --stagger '$x': SCENARIO=MS" >&2; exit 2; }
			STAGGER_OF[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		done
		shift 2 ;;
	--prebuffer) PREBUFFERS=$2; shift 2 ;;
	--mix) MIX_LIST+=("$2"); shift 2 ;;
	--recorders) RECORDERS=$2; shift 2 ;;
	--record-bitrate) RECORD_BITRATE=$2; shift 2 ;;
	--confirm) CONFIRM=$2; shift 2 ;;
	--extra) EXTRA=$2; shift 2 ;;
	--start) START=$2; shift 2 ;;
	--no-admission) ADMISSION=0; shift ;;
	--calibrate-seconds) CAL_SECONDS=$2; shift 2 ;;
	--greedy-file-mib) GREEDY_MIB=$2; shift 2 ;;
	--greedy-write) RT_GREEDY_WRITE=1; shift ;;
	--greedy-lead) RT_GREEDY_LEAD_S=$2; shift 2 ;;
	--scrub) RT_SCRUB_EVERY_S=$2; shift 2 ;;
	--out-dir) OUT_DIR=$2; shift 2 ;;
	--merge) MERGE=$(realpath "$2") || exit 2; shift 2 ;;
	--quick) CONFIGS=plain,rtio BITRATES=100M GREEDY=0 DURATION=8 CONFIRM=0 START=plain=4,rtio=11
		CAL_SECONDS=1 SCENARIOS=staggered,together,replay PREBUFFERS=2 QUICK=1
		REPLAY_MIN_WARM=$((QUICK_REPLAY - 1)); shift ;;
	-h|--help) usage 0 ;;
	*) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ "${#MIX_LIST[@]}" -gt 0 ] || MIX_LIST=('4x200M,4x50M' '1x400M:4M,2x200M:2M,2x100M,2x50M')
IFS=, read -r -a SCEN_LIST <<< "$SCENARIOS"
IFS=, read -r -a CONFIG_LIST <<< "$CONFIGS"
IFS=, read -r -a BITRATE_LIST <<< "$BITRATES"
IFS=, read -r -a GREEDY_LIST <<< "$GREEDY"
IFS=, read -r -a PREBUFFER_LIST <<< "$PREBUFFERS"
bad() { echo "run.sh: $*" >&2; exit 2; }
for c in "${SCEN_LIST[@]}"; do
	[[ ,$SCENARIOS_ALL, == *,$c,* ]] || bad "unknown scenario '$c' ($SCENARIOS_ALL)"
done
for c in "${CONFIG_LIST[@]}"; do
	case $c in plain|plain-ra|io_uring|rtio) ;; *) bad "unknown config '$c'" ;; esac
done
for v in "$DURATION" "$CONFIRM" "$EXTRA" "$GREEDY_MIB" "$RECORDERS" "${GREEDY_LIST[@]}"; do
	[[ $v =~ ^[0-9]+$ ]] || bad "'$v' is not a whole number"
done
[[ ${RT_SCRUB_EVERY_S:-0} =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad "--scrub '$RT_SCRUB_EVERY_S': seconds like 2 or 1.5"
for v in "${STAGGER_OF[@]}"; do
	[[ $v =~ ^[0-9]+$ ]] || bad "stagger '$v' is not a whole number of ms"
done
for v in "${PREBUFFER_LIST[@]}"; do
	[[ $v =~ ^[1-9][0-9]*(ms)?$ ]] || bad "--prebuffer '$v': chunks (2) or milliseconds (500ms)"
done
for v in "${BITRATE_LIST[@]}" "$RECORD_BITRATE"; do
	[[ $v =~ ^[0-9]+[kKMG]?$ ]] || bad "'$v' is not a bitrate like 100M"
done
for v in "${MIX_LIST[@]}"; do
	rt_mix_parse "$v" > /dev/null || bad "--mix '$v': COUNTxBITRATE[:CHUNK],... like 4x200M:4M,4x50M"
done
case $RT_SETTINGS in readme|tuned) ;; *) bad "RT_SETTINGS='$RT_SETTINGS': readme or tuned" ;; esac

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

# ---- admission control ----

# With RT_PROFILE=1, the emulated disk is calibrated once per sweep (on the
# first disk: every disk is the same model) and rtio runs with that profile.
calibrate_once() {
	[ "$RT_PROFILE" = 1 ] && [ -z "$RT_ADMISSION_PROFILE" ] && [[ ,$CONFIGS, == *,rtio,* ]] || return 0
	rt_calibrate "$RT_T/device.profile" "$CAL_SECONDS"
	RT_ADMISSION_PROFILE=$RT_T/device.profile
}

# Open one stream more than the calibrated profile's capacity admits, in
# refuse mode (the profile of the sweep, or one made now).
admission() {
	local bitrate=${BITRATE_LIST[0]} cap admitted n dir r probe_file io_size
	local profile=${RT_ADMISSION_PROFILE:-$RT_T/device.profile}
	[ -s "$profile" ] || rt_calibrate "$profile" "$CAL_SECONDS"
	io_size=$(rt_setting io_size 2M)
	cap=$("$RT_PY" "$RT_HERE/record.py" capacity "$profile" "$(numfmt --from=iec "$io_size")")
	[ "${cap:-0}" -gt 0 ] || rt_die "no capacity in $profile: $(cat "$RT_T/calibrate.log")"
	# aiod's arithmetic: streams fit while their sum stays under capacity - 5 %
	admitted=$((cap / 100 * 95 / ($(bps "$bitrate") / 8)))
	n=$((admitted + 1))
	if [ "$n" -gt "$(max_streams staggered "$bitrate")" ]; then
		rt_log "admission: the profile admits more streams than the disk carries at its media rate; skipped"
		return 0
	fi
	rt_log "admission: capacity $((cap / 1000000)) MB/s at $io_size requests -> $admitted streams of $bitrate fit; opening $n"
	scenario_env staggered "${PREBUFFER_LIST[0]}"
	RT_SCENARIO=admission
	# While the admitted streams play, smbclient opens the refused stream's
	# file again: it prints the NT status the client gets.
	# shellcheck disable=SC2059
	probe_file=$(printf "$RT_STREAM_FMT" $((n - 1)))
	r=$(RT_ADMISSION_MODE=refuse RT_ADMISSION_PROFILE=$profile RT_SMBD_LOG_LEVEL="1 vfs:3" \
		RT_PROBE="timeout 20 smbclient //127.0.0.1/media -p $RT_PORT -U '$RT_USER%$RT_PASS' -c 'get $probe_file /dev/null'" \
		rt_measure rtio "$n" 0 "$bitrate" "$DURATION") || rt_die "the admission run failed"
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
	local complete=$1 s
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
uname=$(uname -a)
aiod_version=$("$BUILD/aiod" --version 2>&1 | head -n 1)
smbd_version=$(smbd --version)
scenarios=$SCENARIOS
stagger_ms=$(for s in "${SCEN_LIST[@]}"; do printf '%s=%s ' "$s" "${STAGGER_OF[$s]}"; done)
configs=$CONFIGS
bitrates=$BITRATES
mixes=$([[ ,$SCENARIOS, == *,mixed,* ]] && printf '%s; ' "${MIX_LIST[@]}")
recorders=$([[ ,$SCENARIOS, == *,ingest,* ]] && echo "$RECORDERS x $RECORD_BITRATE, $RT_RECORD_CHUNK writes")
greedy=$GREEDY
duration_s=$DURATION
client_prebuffer=$PREBUFFERS
chunk=$RT_CHUNK
greedy_chunk=$RT_GREEDY_CHUNK
greedy_pattern=$(if [ "$RT_GREEDY_WRITE" = 1 ]; then echo "writes: a bulk copy of a new file onto the share";
	elif [ "$RT_GREEDY_RANDOM" = 1 ]; then echo "random, chunk-aligned"; else echo sequential; fi)
greedy_file_mib=$GREEDY_MIB
greedy_lead_s=$RT_GREEDY_LEAD_S
scrub_every_s=${RT_SCRUB_EVERY_S:-0} (the first stream jumps this often, 0: none)
confirm_runs=$CONFIRM
quick=$QUICK
replay=first playback of M-1 streams until aiod's cache ($RT_CACHE) is full (rtio) or for RT_REPLAY_FILL=$RT_REPLAY_FILL x cache x 8 / ((M-1) x bitrate) s (others); then M streams from the start, 1 on a new file
read_ahead_kb=$RT_LOOP_RA_BASE
tcp_cc=$RT_TCP_CC_IN_EFFECT (the clients' connections to smbd, on 127.0.0.1; RT_TCP_CC)
stream_file_layout=preallocated (fallocate), then written with O_DIRECT; physical breaks: ${LAYOUT:-not known yet}
read_ahead_kb_plain_ra=$RT_BIG_RA_KB
emudisk=$(sed -n 's/.*\(seek=.*\)/\1/p' "$RT_T/emudisk-model.log" 2>/dev/null | head -n 1)
rtio.settings=$RT_SETTINGS
rtio.settings_label=$(rt_settings_label)
rtio.profile=$([ "$RT_PROFILE" = 1 ] && [ -n "$RT_ADMISSION_PROFILE" ] && echo "$RT_ADMISSION_PROFILE" || echo none)
rtio.cache.size=$RT_CACHE
calibration_log=$RT_T/calibrate.log
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
GREEDY_MIB_USED=0
GREEDY_MOST=0
for g in "${GREEDY_LIST[@]}"; do [ "$g" -le "$GREEDY_MOST" ] || GREEDY_MOST=$g; done
# bulk copies write new files instead of reading the greedy file
[ "$GREEDY_MOST" = 0 ] || [ "$RT_GREEDY_WRITE" = 1 ] || GREEDY_MIB_USED=$GREEDY_MIB
UNIFORM=()
for scen in "${SCEN_LIST[@]}"; do [ "$scen" = mixed ] || UNIFORM+=("$scen"); done

# --quick runs together and replay once each, on rtio only
configs_for() {
	if [ "$QUICK" = 1 ] && [ "$1" != staggered ]; then
		[[ ,$CONFIGS, != *,rtio,* ]] || echo rtio
	else
		printf '%s\n' "${CONFIG_LIST[@]}"
	fi
}

# One emulated disk per bitrate (and one for the mixes): its bytes live in
# RAM, and a fresh disk gives the memory of the last one back.
[ "${#UNIFORM[@]}" -gt 0 ] || BITRATE_LIST=()
for bitrate in "${BITRATE_LIST[@]}"; do
	nfiles=$(max_streams staggered "$bitrate")
	secs=$(stream_seconds "$bitrate")
	mib=$(stream_mib "$bitrate" "$secs")
	disk_up $((nfiles * mib))
	rt_log "writing $nfiles stream files of $mib MiB ($secs s) for $bitrate"
	rt_make_files "$nfiles" "$mib" 0
	LAYOUT+="$bitrate: $(rt_file_breaks "$RT_MNT"/media/stream*.mxf) breaks in $nfiles stream files; "
	calibrate_once
	for scen in "${UNIFORM[@]}"; do
		for pb in "${PREBUFFER_LIST[@]}"; do
			for g in "${GREEDY_LIST[@]}"; do
				for config in $(configs_for "$scen"); do
					key="$scen|$config|$bitrate|$g|$pb"
					if [ "$QUICK" = 1 ] && [ "$scen" != staggered ]; then
						fixed "$key" "$([ "$scen" = replay ] && echo "$QUICK_REPLAY" || echo "$QUICK_TOGETHER")"
					else
						series "$key" "$(start_for "$key")"
					fi
				done
			done
		done
	done
	if [ "$ADMISSION" = 1 ] && [ "$bitrate" = "${BITRATE_LIST[0]}" ] &&
		[[ ,$CONFIGS, == *,rtio,* ]]; then
		admission
	fi
done

if [[ ,$SCENARIOS, == *,mixed,* ]]; then
	mix_files
	calibrate_once
	for mix in "${MIX_LIST[@]}"; do
		for pb in "${PREBUFFER_LIST[@]}"; do
			for g in "${GREEDY_LIST[@]}"; do
				for config in "${CONFIG_LIST[@]}"; do
					fixed "mixed|$config|$mix|$g|$pb" "$(mix_count "$mix")"
				done
			done
		done
	done
fi

RT_ON_EXIT=""
report true
