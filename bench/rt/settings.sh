# Real-time stream benchmark: aiod's settings for the rtio configuration
# (RT_SETTINGS readme or tuned) and the one-line label every result carries.
# Sourced by lib.sh; the variables it reads are documented there.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# ---- rtio settings ----
#
# RT_SETTINGS=readme: what README.md recommends for streams ("Real-time
# streams in three settings"), nothing else; aiod's defaults everywhere else.
# Two deviations, both stated in every result: [cache] size is RT_CACHE (the
# README says 8G; the replay scenario needs a cache it fills in seconds), and
# [stream.*] match/bitrate follow the run (mixed bitrates need one class per
# bitrate). When the README's recommendation changes, change this function.
#
# The README: with a calibration profile aiod derives io_size, queue_depth
# and best_effort_deadline_ms itself; without one the README says to set
# io_size = 16M and queue_depth = 1 for a disk.
rt_settings_readme() {
	cat <<EOF
[cache]
size = $RT_CACHE
direct_io = yes

EOF
	if [ -z "${RT_ADMISSION_PROFILE:-}" ]; then
		cat <<EOF
[readahead]
io_size = 16M

[engine]
queue_depth = 1

EOF
	fi
	rt_stream_classes "$RT_README_PREBUFFER_MS" "$@"
}

# RT_SETTINGS=tuned: the bench-only values the issue 5 sweep used
# (bench/rt/README.md says why); results made with them are labelled so.
rt_settings_tuned() {
	cat <<EOF
[cache]
size = $RT_CACHE
block_size = $RT_BLOCK
direct_io = $RT_DIRECT_IO

[engine]
queue_depth = $RT_QD

[readahead]
io_size = $RT_IO_SIZE
best_effort_deadline_ms = $RT_BE_DEADLINE_MS

EOF
	rt_stream_classes "$RT_PREBUFFER_MS" "$@"
}

RT_SETTINGS=${RT_SETTINGS:-readme}
# readme: the class's prebuffer_ms, what the README shows (1000). Set to the
# clients' buffer, admission's start-up plan counts with what they keep.
RT_README_PREBUFFER_MS=${RT_README_PREBUFFER_MS:-1000}
RT_CACHE=${RT_CACHE:-1G}
RT_BLOCK=${RT_BLOCK:-1M}
RT_IO_SIZE=${RT_IO_SIZE:-16M}
RT_QD=${RT_QD:-1}
RT_PREBUFFER_MS=${RT_PREBUFFER_MS:-2000}
RT_BE_DEADLINE_MS=${RT_BE_DEADLINE_MS:-2500}
RT_DIRECT_IO=${RT_DIRECT_IO:-yes}
# empty: the settings' own ([admission] mode unset for readme: aiod's
# default, demote; off for tuned); run.sh's admission run sets refuse
RT_ADMISSION_MODE=${RT_ADMISSION_MODE:-}
RT_ADMISSION_CAPACITY=${RT_ADMISSION_CAPACITY:-0}
RT_ADMISSION_PROFILE=${RT_ADMISSION_PROFILE:-}
RT_BIG_RA_KB=${RT_BIG_RA_KB:-8192}

# rt_stream_classes PREBUFFER_MS [NAME MATCH BITRATE]...: [stream.NAME] sections
rt_stream_classes() {
	local pb=$1
	shift
	while [ $# -ge 3 ]; do
		printf '[stream.%s]\nmatch = %s\nbitrate = %s\nprebuffer_ms = %s\n\n' "$1" "$2" "$3" "$pb"
		shift 3
	done
}

# rt_settings [NAME MATCH BITRATE]...: the settings RT_SETTINGS names.
# RT_UNMATCHED=1: every class matches '*.unmatched', so the run's files
# match no class and play as best-effort sequential readers (an editor
# playing files the admin's classes do not name; nothing may then be worse
# than a plain share).
rt_settings() {
	if [ "${RT_UNMATCHED:-0}" = 1 ]; then
		local args=() a=("$@") i
		for ((i = 0; i + 2 < ${#a[@]}; i += 3)); do
			args+=("${a[i]}" '*.unmatched' "${a[i + 2]}")
		done
		set -- "${args[@]}"
	fi
	case $RT_SETTINGS in
	readme) rt_settings_readme "$@" ;;
	tuned) rt_settings_tuned "$@" ;;
	*) rt_die "RT_SETTINGS='$RT_SETTINGS': readme or tuned" ;;
	esac
}

# rt_setting KEY [DEFAULT]: a key's value in those settings (e.g. io_size)
rt_setting() {
	local v
	v=$(rt_settings hd '*.mxf' 100M | sed -n "s/^$1 = //p" | head -n 1)
	echo "${v:-${2:-}}"
}

# One line for the results: which settings, the cache size, the profile.
rt_settings_label() {
	local l
	case $RT_SETTINGS in
	readme) l="readme: README.md's recommended stream settings, [cache] size $RT_CACHE (README: 8G)"
		[ "$RT_README_PREBUFFER_MS" = 1000 ] ||
			l+=", [stream.*] prebuffer_ms $RT_README_PREBUFFER_MS (README: 1000; RT_README_PREBUFFER_MS)" ;;
	*) l="tuned: bench-only settings (queue_depth $RT_QD, best_effort_deadline_ms $RT_BE_DEADLINE_MS, stream prebuffer_ms $RT_PREBUFFER_MS), [cache] size $RT_CACHE" ;;
	esac
	if [ -n "$RT_ADMISSION_PROFILE" ]; then
		l+="; [admission] profile from aiod --calibrate on the emulated disk"
	else
		l+="; no calibration profile (admission admits every stream)"
	fi
	if [ -n "$RT_ADMISSION_MODE" ]; then
		l+="; [admission] mode $RT_ADMISSION_MODE (RT_ADMISSION_MODE)"
	else
		l+="; [admission] mode $([ "$RT_SETTINGS" = tuned ] && echo off || echo "aiod's default (demote)")"
	fi
	[ "${RT_UNMATCHED:-0}" = 1 ] &&
		l+="; RT_UNMATCHED=1: the streams' files match no [stream.*] class (best-effort sequential readers)"
	echo "$l"
}
