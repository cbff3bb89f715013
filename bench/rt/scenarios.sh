# shellcheck shell=bash
# The scenarios of the real-time stream benchmark and the search for the
# largest clean stream count. Sourced by run.sh, after lib.sh, with run.sh's
# options set (DURATION, CONFIRM, EXTRA, START, STAGGER_OF, RECORDERS, ...).
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
#
#   staggered  streams start STAGGER_OF[staggered] ms apart (--stagger-ms, 500)
#   together   all streams start at once
#   replay     a first playback of M-1 files (unmeasured, until aiod's cache is
#              full), then, same smbd and aiod, M streams from the start: the
#              M-1 files again and one new (measure.sh: rt_measure_replay)
#   mixed      each --mix once (clean or not), no search
#   ingest     RECORDERS paced recorders (new files) next to the streams; a
#              run is clean only if streams and recorders have no miss
#
# A series is one (scenario, configuration, bitrate or mix, greedy readers,
# client prebuffer); its key is "SCEN|CONFIG|LABEL|G|PB".

declare -A MISSES	# "KEY N" -> misses (streams + recorders) of each clean run, space separated
declare -A BEST		# KEY -> largest count clean in every run

SCENARIOS_ALL=staggered,together,replay,mixed,ingest
declare -A STAGGER_OF=([staggered]=500 [together]=0 [replay]=0 [mixed]=0 [ingest]=500)

rjson() { "$RT_PY" "$RT_HERE/record.py" get "$@"; }

# bits/s of a rate like 100M (decimal, as rtio-stream and aiod read it)
bps() { numfmt --from=si "$1"; }

# The disk moves 168 MB/s at best: one stream more than that can carry is
# the most worth trying (recorders take their share first).
MEDIA_BPS=$((168 * 1000 * 1000))
max_streams() {
	local free=$((MEDIA_BPS * 8))
	[ "$1" != ingest ] || free=$((free - RECORDERS * $(bps "$RECORD_BITRATE")))
	[ "$free" -gt 0 ] || free=0
	echo $((free / $(bps "$2") + 1))
}

# scenario_env SCEN PB: the clients' settings for a scenario (measure.sh's RT_*)
scenario_env() {
	RT_SCENARIO=$1
	RT_CLIENT_PREBUFFER=$2
	RT_STAGGER_MS=${STAGGER_OF[$1]}
	RT_RECORDERS=0
	RT_RECORD_BITRATE=$RECORD_BITRATE
	[ "$1" != ingest ] || RT_RECORDERS=$RECORDERS
}

# mix_count MIX: streams in a mix
mix_count() { rt_mix_parse "$1" | awk '{n += $1} END {print n + 0}'; }

# measure KEY N: one run; a run in which a client failed (an error, not a
# late chunk) is repeated once, and if it fails again counted as a miss of
# every chunk so the search moves on.
measure() {
	local key=$1 n=$2 scen config label g pb try r chunks misses rmiss late2 worst gmbs cpu load nerr err
	IFS='|' read -r scen config label g pb <<< "$key"
	scenario_env "$scen" "$pb"
	for try in 1 2; do
		case $scen in
		replay) r=$(rt_measure_replay "$config" "$n" "$g" "$label" "$DURATION") ;;
		mixed) r=$(rt_measure_mix "$config" "$label" "$g" "$DURATION") ;;
		*) r=$(rt_measure "$config" "$n" "$g" "$label" "$DURATION") ;;
		esac || rt_die "a run of $config ($scen) failed"
		echo "$r" >> "$RUNS"
		{
			read -r chunks; read -r misses; read -r rmiss; read -r late2; read -r worst; read -r gmbs
			read -r cpu; read -r load; read -r nerr; read -r err
		} < <(rjson chunks all_misses record_misses misses_after_startup worst_lateness_ms \
			greedy_mb_per_s cpu_s.total loadavg.start error_count errors <<< "$r")
		printf '%s: %-9s %-8s %5s g=%s pb=%-5s n=%-2s chunks=%-5s misses=%-5s (after 2 s: %s)%s worst=%7s ms greedy=%5s MB/s cpu=%5s s load=%s%s\n' \
			"$(date +%T)" "$scen" "$config" "$label" "$g" "$pb" "$n" "$chunks" "$misses" "$late2" \
			"$([ "$scen" != ingest ] || echo " (recorders $rmiss)")" "$worst" "$gmbs" "$cpu" "$load" \
			"$([ "$nerr" = 0 ] || echo " ERRORS: ${err:0:300}")" >&2
		if [ "$nerr" = 0 ]; then
			MISSES["$key $n"]+="$misses "
			return 0
		fi
	done
	MISSES["$key $n"]+="$((chunks > 0 ? chunks : 1)) "
}

# runs_at / clean_at / last_clean KEY N
runs_at() { local m=(${MISSES["$1 $2"]:-}); echo ${#m[@]}; }
clean_at() { [[ ${MISSES["$1 $2"]:-x} =~ ^(0 )+$ ]]; }
last_clean() { local m=(${MISSES["$1 $2"]:-x}); [ "${m[-1]}" = 0 ]; }

series_line() { # KEY KIND BEST FAIL MAX [COUNT CLEAN]
	local scen config label g pb
	IFS='|' read -r scen config label g pb <<< "$1"
	printf '{"scenario": "%s", "config": "%s", "bitrate": "%s", "greedy": %s, "prebuffer": "%s", "stagger_ms": %s, "recorders": %s, "kind": "%s", "max_clean_streams": %s, "first_failing": %s, "max_tried": %s, "count": %s, "clean": %s}\n' \
		"$scen" "$config" "$label" "$g" "$pb" "${STAGGER_OF[$scen]}" "$([ "$scen" = ingest ] && echo "$RECORDERS" || echo 0)" \
		"$2" "$3" "$4" "$5" "${6:-null}" "${7:-null}" >> "$SERIES"
}

# series KEY START: the largest count with zero misses in 1 + CONFIRM runs,
# searching from START.
series() {
	local key=$1 n=$2 scen label max fail best i
	IFS='|' read -r scen _ label _ _ <<< "$key"
	max=$(max_streams "$scen" "$label")
	[ "$n" -ge 1 ] || n=1
	[ "$n" -le "$max" ] || n=$max
	rt_log "series $key: starting at $n streams (at most $max)"
	measure "$key" "$n"
	if last_clean "$key" "$n"; then
		while [ "$n" -lt "$max" ]; do
			n=$((n + 1))
			measure "$key" "$n"
			last_clean "$key" "$n" || break
		done
	else
		while [ "$n" -gt 1 ]; do
			n=$((n - 1))
			measure "$key" "$n"
			last_clean "$key" "$n" && break
		done
	fi
	# best: the count below the lowest failing count, confirmed
	best=0
	for ((i = 1; i <= max; i++)); do
		if [ "$(runs_at "$key" "$i")" -gt 0 ] && ! clean_at "$key" "$i"; then
			break
		fi
		[ "$(runs_at "$key" "$i")" -gt 0 ] && best=$i
	done
	fail=$((best + 1))
	while [ "$best" -gt 0 ]; do
		# runs until it has 1 + CONFIRM, stopping at the first late chunk
		while [ "$(runs_at "$key" "$best")" -lt $((CONFIRM + 1)) ] &&
			{ [ "$(runs_at "$key" "$best")" = 0 ] || clean_at "$key" "$best"; }; do
			measure "$key" "$best"
		done
		clean_at "$key" "$best" && break
		fail=$best
		best=$((best - 1))
	done
	for ((i = 1; i <= EXTRA; i++)); do
		[ $((fail + i)) -le "$max" ] || break
		[ "$(runs_at "$key" $((fail + i)))" -gt 0 ] || measure "$key" $((fail + i))
	done
	BEST[$key]=$best
	[ "$fail" -le "$max" ] || fail=null
	series_line "$key" search "$best" "$fail" "$max"
	rt_log "series $key: $best streams with zero misses"
}

# fixed KEY N: N streams only, run until 1 + CONFIRM runs or the first late
# chunk: clean or not (the mixed scenario; --quick's together and replay)
fixed() {
	local key=$1 n=$2 ok=false
	measure "$key" "$n"
	while clean_at "$key" "$n" && [ "$(runs_at "$key" "$n")" -lt $((CONFIRM + 1)) ]; do
		measure "$key" "$n"
	done
	clean_at "$key" "$n" && ok=true
	series_line "$key" fixed "$([ $ok = true ] && echo "$n" || echo 0)" null "$n" "$n" "$ok"
	rt_log "$key: $n streams $([ $ok = true ] && echo clean || echo LATE)"
}

# start_for KEY: the first count to try: what the same configuration reached
# in the nearest series measured already (other greedy count, prebuffer,
# scenario, then bitrate, scaled), else --start.
start_for() {
	local scen config label g pb s br k
	IFS='|' read -r scen config label g pb <<< "$1"
	for k in "$scen|$config|$label|${GREEDY_LIST[0]}|$pb" "$scen|$config|$label|$g|${PREBUFFER_LIST[0]}"; do
		[ "$k" != "$1" ] && [ -n "${BEST[$k]:-}" ] && { echo "${BEST[$k]}"; return; }
	done
	for s in "${SCEN_LIST[@]}"; do
		k="$s|$config|$label|$g|$pb"
		[ "$k" != "$1" ] && [ -n "${BEST[$k]:-}" ] && { echo "${BEST[$k]}"; return; }
	done
	for br in "${BITRATE_LIST[@]}"; do
		k="$scen|$config|$br|$g|$pb"
		[ -n "${BEST[$k]:-}" ] && { echo $((BEST[$k] * $(bps "$br") / $(bps "$label"))); return; }
	done
	s=$(tr ',' '\n' <<< "$START" | sed -n "s/^$config=//p")
	echo $(( ${s:-3} * $(bps "${BITRATE_LIST[0]}") / $(bps "$label") ))
}

# ---- files and disks ----

# Seconds a stream file holds: the run without wrapping, and for replay the
# first playback of REPLAY_MIN_WARM streams (RT_CACHE x 8 / (W x bitrate);
# fewer streams cannot fill the cache before the files end).
stream_seconds() {
	local s=$((DURATION + 5)) w
	if [[ ,$SCENARIOS, == *,replay,* ]]; then
		w=$(($(numfmt --from=iec "$RT_CACHE") * 8 / (REPLAY_MIN_WARM * $(bps "$1")) + 5))
		[ "$w" -le "$s" ] || s=$w
	fi
	echo "$s"
}

# MiB of SECONDS of BITRATE, a multiple of 8 (written 8 MiB at a time)
stream_mib() { echo $(((($(bps "$1") / 8 * $2 >> 20) + 8) / 8 * 8)); }

# MiB the recorders of one ingest run write (their files go after the run)
record_mib() {
	[[ ,$SCENARIOS, == *,ingest,* ]] || { echo 0; return; }
	echo $((RECORDERS * ($(stream_mib "$RECORD_BITRATE" $((DURATION + 5 + 14 * ${STAGGER_OF[ingest]} / 1000))))))
}

# MiB the bulk copies of one run (--greedy-write) may write: the disk's
# 168 MB/s (bench/emudisk) for as long as the last stream starts and plays
copy_mib() {
	[ "$RT_GREEDY_WRITE" = 1 ] || { echo 0; return; }
	echo $((GREEDY_MOST * 170 * (DURATION + 5 + ${RT_GREEDY_LEAD_S%.*} + 14 * ${STAGGER_OF[staggered]} / 1000)))
}

# disk_up MIB: an emulated disk for MIB of files, ext4's share (~3 %), aiod's
# 512 MiB calibration file and slack; a fresh disk gives the last one's RAM back
disk_up() {
	local mib=$((($1 + GREEDY_MIB_USED + $(record_mib) + $(copy_mib)) * 103 / 100 + 512 + 256)) avail
	avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
	[ "$mib" -lt "$avail" ] || rt_log "warning: the emulated disk ($mib MiB) is as large as the free memory ($avail MiB)"
	rt_emu_down
	rt_emu_up "$(((mib + 1023) / 1024))G"
	cp "$RT_EMU/emudisk.log" "$RT_T/emudisk-model.log"
	[ "$GREEDY_MIB_USED" = 0 ] || rt_write_file "$RT_MNT/media/$RT_GREEDY_FILE" "$GREEDY_MIB_USED"
}

# mix_files: one disk with every mix's files: per bitrate, as many as the
# mix that has most of them
mix_files() {
	local m br count total=0 i
	declare -A most=()
	for m in "${MIX_LIST[@]}"; do
		declare -A in_mix=()
		while read -r count br _; do
			in_mix[$br]=$((${in_mix[$br]:-0} + count))
		done < <(rt_mix_parse "$m")
		for br in "${!in_mix[@]}"; do
			[ "${in_mix[$br]}" -le "${most[$br]:-0}" ] || most[$br]=${in_mix[$br]}
		done
		unset in_mix
	done
	for br in "${!most[@]}"; do
		total=$((total + most[$br] * $(stream_mib "$br" $((DURATION + 5)))))
	done
	disk_up "$total"
	for br in "${!most[@]}"; do
		rt_log "writing ${most[$br]} stream files of $(stream_mib "$br" $((DURATION + 5))) MiB for $br (mixes)"
		for ((i = 0; i < most[$br]; i++)); do
			# shellcheck disable=SC2059
			rt_write_file "$RT_MNT/media/$(printf "$RT_MIX_FMT" "$br" "$i")" "$(stream_mib "$br" $((DURATION + 5)))"
		done
	done
	sync
	LAYOUT+="mixes: $(rt_file_breaks "$RT_MNT"/media/mix-*.mxf) breaks in $(ls "$RT_MNT"/media/mix-*.mxf | wc -l) stream files; "
}
