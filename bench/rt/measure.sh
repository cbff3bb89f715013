# shellcheck shell=bash
# Real-time stream benchmark: the clients and one measured run. Sourced by
# lib.sh (which has the processes, the disk, smbd and aiod); see there for
# how processes are tracked and stopped.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A run plays a *plan*: one line per client, "KIND FILE BITRATE CHUNK
# PREBUFFER MATCH", KIND play (a paced stream of FILE) or record (a paced
# recorder creating FILE, rtio-stream --write), PREBUFFER in chunks, MATCH the
# stream-class pattern that names FILE's kind for aiod (rt_plan_classes).
#
#   rt_measure CONFIG N G BITRATE DURATION         N streams (+ RT_RECORDERS)
#   rt_measure_replay CONFIG M G BITRATE DURATION  M-1 streams played once,
#                                                  then M measured (1 new)
#   rt_measure_mix CONFIG MIX G DURATION           a mix like 4x200M:4M,4x50M
#
# Environment (defaults in brackets):
#   RT_CHUNK            a stream's read size [1M]
#   RT_CLIENT_PREBUFFER client prebuffer: chunks (2) or time (500ms: as many
#                       chunks as cover it at each stream's bitrate) [2]
#   RT_STAGGER_MS       streams start this far apart [500]
#   RT_GREEDY_CHUNK     a greedy reader's read size [8M]
#   RT_GREEDY_RANDOM    1: greedy readers read at random chunk-aligned offsets
#                       (rtio-stream --random: a scrub, a database, thumbnails
#                       of a big file) instead of sequentially [0]
#   RT_GREEDY_WRITE     1: greedy clients copy a new file onto the share
#                       (rtio-stream --greedy --write, rec/copy-N.bin) [0]
#   RT_GREEDY_LEAD_S    greedy clients start this many seconds before the
#                       first stream (a copy already running when editors
#                       press play) [0]
#   RT_SCRUB_EVERY_S    the first stream jumps every this many seconds to
#                       another part of its file (rtio-stream --jump-every) [0]
#   RT_RECORDERS        paced recorders next to the streams [0]
#   RT_RECORD_BITRATE   their bitrate [100M]; RT_RECORD_CHUNK their write size [RT_CHUNK]
#   RT_SCENARIO         the scenario's name, for the records [staggered]
#   RT_REPLAY_FILL      replay, non-rtio configs: the first playback lasts
#                       RT_REPLAY_FILL x RT_CACHE x 8 / (streams x bitrate) s [1]

RT_CHUNK=${RT_CHUNK:-1M}
RT_CLIENT_PREBUFFER=${RT_CLIENT_PREBUFFER:-2}
RT_STAGGER_MS=${RT_STAGGER_MS:-500}
RT_GREEDY_CHUNK=${RT_GREEDY_CHUNK:-8M}
RT_GREEDY_RANDOM=${RT_GREEDY_RANDOM:-0}
RT_GREEDY_WRITE=${RT_GREEDY_WRITE:-0}
RT_GREEDY_LEAD_S=${RT_GREEDY_LEAD_S:-0}
RT_SCRUB_EVERY_S=${RT_SCRUB_EVERY_S:-0}
RT_RECORDERS=${RT_RECORDERS:-0}
RT_RECORD_BITRATE=${RT_RECORD_BITRATE:-100M}
RT_RECORD_CHUNK=${RT_RECORD_CHUNK:-$RT_CHUNK}
RT_SCENARIO=${RT_SCENARIO:-staggered}
RT_REPLAY_FILL=${RT_REPLAY_FILL:-1}
# a mix's files: mix-200M-00.mxf ... (bitrate, index per bitrate)
RT_MIX_FMT='mix-%s-%02d.mxf'
RT_RECORD_FMT='rec/rec%02d.mxf'

RT_PLAN=""		# the measured clients
RT_WARM_PLAN=""		# replay: the unmeasured first playback
RT_WARM_S=0		# replay: its length for configurations without aiod
RT_WARM_MAX_S=0		# replay: the most it may last (the files' length)
RT_WARM_ELAPSED=0

# ---- plans ----

# rt_prebuffer_chunks SPEC BITRATE CHUNK: SPEC is chunks (2) or a time
# (500ms: ceil(500 ms / period), period = CHUNK x 8 / BITRATE), at least 1.
rt_prebuffer_chunks() {
	case $1 in
	*ms) awk -v ms="${1%ms}" -v b="$(numfmt --from=si "$2")" -v c="$(numfmt --from=iec "$3")" \
		'BEGIN { n = ms * b / (c * 8 * 1000); k = int(n); if (k < n - 1e-9) k++; print (k < 1 ? 1 : k) }' ;;
	*) echo "$1" ;;
	esac
}

# rt_plan_uniform N BITRATE: streams on files 0..N-1
rt_plan_uniform() {
	local i pb
	pb=$(rt_prebuffer_chunks "$RT_CLIENT_PREBUFFER" "$2" "$RT_CHUNK")
	for ((i = 0; i < $1; i++)); do
		# shellcheck disable=SC2059
		printf "play $RT_STREAM_FMT %s %s %s stream*.mxf\n" "$i" "$2" "$RT_CHUNK" "$pb"
	done
}

# rt_mix_parse MIX: "COUNT BITRATE CHUNK" per group of a mix like
# 4x200M:4M,4x50M (the chunk defaults to RT_CHUNK); fails on anything else.
rt_mix_parse() {
	local grp
	local IFS=,
	for grp in $1; do
		[[ $grp =~ ^([0-9]+)x([0-9]+[kKMG]?)(:([0-9]+[KMG]))?$ ]] || return 1
		[ "${BASH_REMATCH[1]}" -gt 0 ] || return 1
		echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[4]:-$RT_CHUNK}"
	done
}

# rt_plan_mix MIX: the mix's streams, each on a file of its own bitrate
rt_plan_mix() {
	local count br chunk pb i
	declare -A next=()
	while read -r count br chunk; do
		pb=$(rt_prebuffer_chunks "$RT_CLIENT_PREBUFFER" "$br" "$chunk")
		for ((i = 0; i < count; i++)); do
			# shellcheck disable=SC2059
			printf "play $RT_MIX_FMT %s %s %s mix-%s-*.mxf\n" "$br" "${next[$br]:-0}" "$br" "$chunk" "$pb" "$br"
			next[$br]=$((${next[$br]:-0} + 1))
		done
	done < <(rt_mix_parse "$1")
}

# rt_plan_recorders: RT_RECORDERS recorders, new files in media/rec
rt_plan_recorders() {
	local i pb
	pb=$(rt_prebuffer_chunks "$RT_CLIENT_PREBUFFER" "$RT_RECORD_BITRATE" "$RT_RECORD_CHUNK")
	for ((i = 0; i < RT_RECORDERS; i++)); do
		# shellcheck disable=SC2059
		printf "record $RT_RECORD_FMT %s %s %s rec*.mxf\n" "$i" "$RT_RECORD_BITRATE" "$RT_RECORD_CHUNK" "$pb"
	done
}

# rt_plan_classes PLAN...: aiod's stream classes for the plans, as
# rt_write_aiod_ini takes them (NAME MATCH BITRATE, one word a line). One
# bitrate: one class on *.mxf, as the README writes it; several: one class
# per kind of file (stream*.mxf, mix-200M-*.mxf, rec*.mxf) at its bitrate.
rt_plan_classes() {
	printf '%s\n' "$@" | awk '$1 == "play" || $1 == "record" {
			rates[$3] = 1
			if (!(($6, $3) in seen)) { seen[$6, $3] = 1; m[++k] = $6; b[k] = $3 } }
		END {
			for (r in rates) nr++
			if (nr == 1) { for (r in rates) printf "hd\n*.mxf\n%s\n", r; exit }
			for (i = 1; i <= k; i++) {
				name = m[i]; sub(/\*.*/, "", name); gsub(/[^A-Za-z0-9]/, "", name)
				printf "%s\n%s\n%s\n", name, m[i], b[i] } }'
}

# ---- clients ----

# rt_clients DIR G DURATION PLAN: PLAN's clients, one rtio-stream process (and
# SMB connection) each, and G greedy readers of $RT_GREEDY_FILE; waits for
# all. Streams start RT_STAGGER_MS apart in the plan's order, each playing
# DURATION s; greedy readers and recorders start first and run for as long as
# streams play. With RT_UNTIL set (a command), every client is stopped
# (SIGTERM: it reports and exits) once the command succeeds (polled every
# 0.2 s). Each client's report lands in DIR/NAME.json, its stderr in DIR/NAME.err
# (for streams and recorders: a line per late chunk, rtio-stream --log-late).
rt_clients() {
	local dir=$1 g=$2 duration=$3 plan=$4 i pid name gdur stagger_s n
	local kind file br chunk pb pids=() r=0 s=0 how
	local base="smb://127.0.0.1:$RT_PORT/media" user="$RT_USER%$RT_PASS"
	n=$(grep -c '^play ' <<< "$plan")
	stagger_s=$(awk -v s="$RT_STAGGER_MS" 'BEGIN {print s / 1000}')
	# greedy readers and recorders run for the whole time streams play
	gdur=$(awk -v d="$duration" -v n="$n" -v s="$stagger_s" -v l="$RT_GREEDY_LEAD_S" \
		'BEGIN {print l + d + (n > 0 ? n - 1 : 0) * s}')
	for ((i = 0; i < g; i++)); do
		name=greedy-$i
		if [ "$RT_GREEDY_WRITE" = 1 ]; then
			how=(--url "$base/rec/copy-$i.bin" --greedy --write)
		else
			how=(--url "$base/$RT_GREEDY_FILE" --greedy)
			[ "$RT_GREEDY_RANDOM" = 1 ] && how+=(--random)
		fi
		"$BUILD/rtio-stream" "${how[@]}" --user "$user" \
			--chunk "$RT_GREEDY_CHUNK" --duration "$gdur" \
			> "$dir/$name.json" 2> "$dir/$name.err" < /dev/null &
		pid=$!
		rt_track "$pid" "$name"
		pids+=("$pid")
	done
	[ "$g" = 0 ] || [ "$RT_GREEDY_LEAD_S" = 0 ] || sleep "$RT_GREEDY_LEAD_S"
	while read -r kind file br chunk pb _; do
		[ "$kind" = record ] || continue
		name=record-$r
		r=$((r + 1))
		"$BUILD/rtio-stream" --write --url "$base/$file" --user "$user" --bitrate "$br" \
			--chunk "$chunk" --prebuffer "$pb" --duration "$gdur" --log-late \
			> "$dir/$name.json" 2> "$dir/$name.err" < /dev/null &
		pid=$!
		rt_track "$pid" "$name"
		pids+=("$pid")
	done <<< "$plan"
	while read -r kind file br chunk pb _; do
		[ "$kind" = play ] || continue
		name=stream-$s
		if [ "$s" -gt 0 ] && [ "$RT_STAGGER_MS" -gt 0 ]; then
			sleep "$stagger_s"
		fi
		how=()
		[ "$s" = 0 ] && [ "$RT_SCRUB_EVERY_S" != 0 ] && how=(--jump-every "$RT_SCRUB_EVERY_S")
		s=$((s + 1))
		"$BUILD/rtio-stream" --url "$base/$file" --user "$user" --bitrate "$br" \
			--chunk "$chunk" --prebuffer "$pb" --duration "$duration" --log-late "${how[@]}" \
			> "$dir/$name.json" 2> "$dir/$name.err" < /dev/null &
		pid=$!
		rt_track "$pid" "$name"
		pids+=("$pid")
	done <<< "$plan"
	if [ -n "${RT_PROBE:-}" ]; then
		# a command to run while every stream plays (run.sh: an smbclient open)
		( sleep 2; eval "$RT_PROBE" ) > "$dir/probe.out" 2>&1 < /dev/null &
		pid=$!
		rt_track "$pid" probe
		pids+=("$pid")
	fi
	[ -z "${RT_UNTIL:-}" ] || rt_until "$RT_UNTIL" "${pids[@]}"
	for pid in "${pids[@]}"; do
		wait "$pid"
	done
}

# rt_until CMD PID...: polls CMD while any PID runs; once it succeeds, SIGTERM to all
rt_until() {
	local cmd=$1 pid alive
	shift
	while :; do
		alive=0
		for pid in "$@"; do
			rtio_alive "$pid" && alive=1
		done
		[ "$alive" = 1 ] || return 0
		if eval "$cmd"; then
			for pid in "$@"; do
				rtio_alive "$pid" && kill -TERM "$pid" 2>/dev/null
			done
			return 0
		fi
		sleep 0.2
	done
}

# aiod's cache is full: every block used, or blocks already evicted
rt_cache_full() {
	rt_aiodctl stats 2>/dev/null | awk -F= '$1 == "blocks_used" {u = $2} $1 == "blocks_total" {t = $2}
		$1 == "evictions" {e = $2} END {exit !(t > 0 && (u >= t || e > 0))}'
}

# rt_warm DIR CONFIG: the replay's unmeasured first playback of
# RT_WARM_PLAN in the running smbd (and aiod). rtio: until aiod's cache is
# full (at most RT_WARM_MAX_S), then the kernel's page cache of the files is
# dropped and aiod's cache kept. Other configurations: RT_WARM_S s, and their
# page cache, which is their warm cache, is kept.
rt_warm() {
	local dir=$1 config=$2 w0 until="" dur=$RT_WARM_S
	mkdir -p "$dir/warm"
	if [ "$config" = rtio ]; then
		until=rt_cache_full
		dur=$RT_WARM_MAX_S
	fi
	w0=$(date +%s.%N)
	RT_UNTIL=$until rt_clients "$dir/warm" 0 "$dur" "$RT_WARM_PLAN"
	RT_WARM_ELAPSED=$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
	if [ "$config" = rtio ]; then
		rt_aiodctl stats > "$dir/aiod-stats-warm.txt" 2>&1
		rt_evict
	fi
}

# ---- one data point ----

# rt_run CONFIG G DURATION LABEL: one run of RT_PLAN next to G greedy readers
# from a cold start (fresh smbd and aiod, page cache of the files dropped),
# RT_WARM_PLAN played first when set; prints its record, one line of JSON
# (bench/rt/record.py). LABEL names the bitrate or mix. The run's files stay
# in $RT_T/runs/ID.
rt_run() {
	local config=$1 g=$2 duration=$3 label=$4
	local n nrec id dir t0 t1 smbd_t0 smbd_t1 aiod_t0=0 aiod_t1=0 load0 load1 ra classes
	n=$(grep -c '^play ' <<< "$RT_PLAN")
	nrec=$(grep -c '^record ' <<< "$RT_PLAN")
	# (rt_run runs in a command substitution: count, do not increment)
	id=$(printf '%03d-%s-%s-n%d-g%d-%s' "$(($(ls "$RT_T/runs" | wc -l) + 1))" "$RT_SCENARIO" \
		"$config" "$n" "$g" "$(tr ',:' '+-' <<< "$label")")
	dir=$RT_T/runs/$id
	mkdir -p "$dir"
	printf '%s\n' "$RT_PLAN" > "$dir/plan"
	[ -z "$RT_WARM_PLAN" ] || printf '%s\n' "$RT_WARM_PLAN" > "$dir/warm.plan"

	ra=$RT_LOOP_RA_BASE
	[ "$config" = plain-ra ] && ra=$RT_BIG_RA_KB
	rt_set_readahead "$ra"
	# recorders and bulk copies write
	rt_write_smbconf "$config" "$({ [ "$nrec" -gt 0 ] || { [ "$g" -gt 0 ] && [ "$RT_GREEDY_WRITE" = 1 ]; }; } && echo 1)"
	rm -f "$RT_MNT/media/rec/"*
	rt_evict
	if [ "$config" = rtio ]; then
		mapfile -t classes < <(rt_plan_classes "$RT_PLAN" "$RT_WARM_PLAN")
		rt_write_aiod_ini "${classes[@]}"
		cp "$RT_T/aiod.ini" "$dir/aiod.ini"
		rt_start_aiod "$dir/aiod.log"
	fi
	rt_start_smbd "$dir/smbd.log"
	RT_WARM_ELAPSED=0
	[ -z "$RT_WARM_PLAN" ] || rt_warm "$dir" "$config"
	rt_smbd_idle
	: > "$RT_EMU/fuse/stats"
	load0=$(cut -d' ' -f1 /proc/loadavg)
	smbd_t0=$(rt_ticks_group "$RT_SMBD_PID")
	[ -z "$RT_AIOD_PID" ] || aiod_t0=$(rt_ticks_pid "$RT_AIOD_PID")
	t0=$(date +%s.%N)

	rt_clients "$dir" "$g" "$duration" "$RT_PLAN"

	t1=$(date +%s.%N)
	cat "$RT_EMU/fuse/stats" > "$dir/emudisk.json" 2> /dev/null
	rt_smbd_idle
	smbd_t1=$(rt_ticks_group "$RT_SMBD_PID")
	load1=$(cut -d' ' -f1 /proc/loadavg)
	if [ -n "$RT_AIOD_PID" ]; then
		aiod_t1=$(rt_ticks_pid "$RT_AIOD_PID")
		rt_aiodctl stats > "$dir/aiod-stats.txt" 2>&1
		rt_aiodctl files > "$dir/aiod-files.txt" 2>&1
	fi
	rt_stop_smbd
	rt_stop_aiod
	rt_set_readahead "$RT_LOOP_RA_BASE"
	# recorders' files are new in every run
	ls -l "$RT_MNT/media/rec" > "$dir/recorded.txt" 2>&1
	rm -f "$RT_MNT/media/rec/"*
	cat > "$dir/meta" <<EOF
id=$id
scenario=$RT_SCENARIO
config=$config
streams=$n
greedy=$g
bitrate=$label
duration=$duration
stagger_ms=$RT_STAGGER_MS
prebuffer=$RT_CLIENT_PREBUFFER
prebuffer_chunks=$(awk '$1 == "play" {print $5}' <<< "$RT_PLAN" | sort -un | paste -sd,)
recorders=$nrec
record_bitrate=$([ "$nrec" = 0 ] || echo "$RT_RECORD_BITRATE")
warm_streams=$(grep -c '^play ' <<< "$RT_WARM_PLAN")
warm_s=$RT_WARM_ELAPSED
warm_until=$([ -z "$RT_WARM_PLAN" ] || { [ "$config" = rtio ] && echo "aiod cache full" || echo "$RT_WARM_S s"; })
read_ahead_kb=$ra
tcp_cc=$RT_TCP_CC_IN_EFFECT
settings=$([ "$config" = rtio ] && rt_settings_label)
admission_mode=$([ "$config" = rtio ] && echo "$RT_ADMISSION_MODE")
t0=$t0
t1=$t1
clk_tck=$RT_CLK_TCK
smbd_ticks=$((smbd_t1 - smbd_t0))
aiod_ticks=$((aiod_t1 - aiod_t0))
greedy_file_bytes=$(stat -c %s "$RT_MNT/media/$RT_GREEDY_FILE" 2> /dev/null || echo 0)
load0=$load0
load1=$load1
EOF
	"$RT_PY" "$RT_HERE/record.py" run "$dir"
}

# rt_measure CONFIG N G BITRATE DURATION: N streams of BITRATE on files
# 0..N-1 (and RT_RECORDERS recorders) next to G greedy readers
rt_measure() {
	RT_PLAN=$(rt_plan_uniform "$2" "$4"; rt_plan_recorders)
	RT_WARM_PLAN=""
	rt_run "$1" "$3" "$5" "$4"
}

# rt_measure_replay CONFIG M G BITRATE DURATION: M-1 streams play files
# 0..M-2 once (rt_warm, unmeasured), then, in the same smbd and aiod, M
# streams play files 0..M-1 from the start (file M-1 new) and are measured.
rt_measure_replay() {
	local w=$(($2 - 1)) bps cache file_s
	RT_PLAN=$(rt_plan_uniform "$2" "$4"; rt_plan_recorders)
	RT_WARM_PLAN=""
	if [ "$w" -gt 0 ]; then
		RT_WARM_PLAN=$(rt_plan_uniform "$w" "$4")
		bps=$(numfmt --from=si "$4")
		cache=$(numfmt --from=iec "$RT_CACHE")
		# what the files hold, less 3 s: the first playback never wraps
		# shellcheck disable=SC2059
		file_s=$(($(stat -c %s "$RT_MNT/media/$(printf "$RT_STREAM_FMT" 0)") * 8 / bps - 3))
		RT_WARM_MAX_S=$file_s
		RT_WARM_S=$(awk -v f="$RT_REPLAY_FILL" -v c="$cache" -v w="$w" -v b="$bps" -v m="$file_s" \
			'BEGIN { s = f * c * 8 / (w * b); if (s > m) s = m; if (s < 1) s = 1; printf "%.1f", s }')
	fi
	rt_run "$1" "$3" "$5" "$4"
}

# rt_measure_mix CONFIG MIX G DURATION: the streams of MIX (rt_plan_mix)
rt_measure_mix() {
	RT_PLAN=$(rt_plan_mix "$2"; rt_plan_recorders)
	RT_WARM_PLAN=""
	rt_run "$1" "$3" "$4" "$2"
}
