# shellcheck shell=bash
# aiod built with ASan + UBSan (make asan) under load: sourced by run.sh
# after lib.sh, and by tests/soak/run.sh for the helpers.
#
#   run asan-stress t_asan_stress
#
# The sanitized aiod runs beside the harness's own, on its own socket, and is
# stopped by its pid; a sanitizer report in its log, or an exit status other
# than 0 after SIGTERM (LeakSanitizer's is 23), fails the test.
#
# Environment: RTIO_ASAN_AIOD (default $BUILD/asan/aiod),
#   RTIO_ASAN_STRESS_SECONDS (default 20), RTIO_ASAN_STRESS_SESSIONS (default 64).
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

IT_ASAN_BIN=${RTIO_ASAN_AIOD:-$BUILD/asan/aiod}
# Stop at the first report (as the build does: -fno-sanitize-recover=all), into
# aiod's own log, and check for leaks when it exits.
IT_ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:print_summary=1
IT_UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
IT_ASAN_PID=""

# it_asan_start INI SOCKET LOG: start the ASan aiod with INI (whose socket_path
# is SOCKET), appending to LOG; sets IT_ASAN_PID. A child of the calling shell,
# so that shell can collect its exit status.
it_asan_start() {
	local ini=$1 sock=$2 log=$3
	[ -x "$IT_ASAN_BIN" ] || it_die "$IT_ASAN_BIN is not built (make asan)"
	mkdir -p "$(dirname "$sock")"
	rm -f "$sock"
	ASAN_OPTIONS=$IT_ASAN_OPTIONS UBSAN_OPTIONS=$IT_UBSAN_OPTIONS \
		"$IT_ASAN_BIN" -c "$ini" -F -d 2 >> "$log" 2>&1 &
	IT_ASAN_PID=$!
	it_track "$IT_ASAN_PID" aiod-asan
	it_wait_up "$IT_ASAN_PID" "$log" "the ASan aiod" test -S "$sock"
}

# it_asan_stop PID: SIGTERM and wait (20 s, then SIGKILL); returns aiod's exit status.
it_asan_stop() {
	local pid=$1 rc=0
	kill -TERM "$pid" 2>/dev/null || true
	if ! it_wait_gone "$pid" 20; then
		echo "the ASan aiod $pid ignored SIGTERM for 20 s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" || rc=$?
	return $rc
}

# it_asan_clean LOG: fails, showing them, if LOG holds sanitizer reports.
it_asan_clean() {
	local log=$1
	if grep -n -E -A 30 "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$log"; then
		echo "sanitizer report in $log"
		return 1
	fi
}

# it_fd_count PID: descriptors PID has open.
it_fd_count() {
	find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# aiod_stress (64 sessions of checked random I/O, an eighth SIGKILLed) against
# the ASan aiod: it must stay clean, give every pin and descriptor back
# (aiod_stress checks) and exit 0 on SIGTERM.
t_asan_stress() {
	local dir=$IT_T/asan log=$IT_T/log/aiod-asan.log data=$IT_T/data/asan-stress rc=0 st
	local secs=${RTIO_ASAN_STRESS_SECONDS:-20} sessions=${RTIO_ASAN_STRESS_SESSIONS:-64}
	mkdir -p "$dir" "$data"
	sed "s|^socket_path = .*|socket_path = $dir/aiod/aiod.sock|" "$IT_T/aiod.ini" > "$dir/aiod.ini"
	it_asan_start "$dir/aiod.ini" "$dir/aiod/aiod.sock" "$log"
	if ! "$BUILD/test/aiod_stress" "$dir/aiod/aiod.sock" "$data" "$IT_ASAN_PID" "$sessions" "$secs" \
		$((sessions / 8)); then
		echo "aiod_stress failed against the ASan aiod"
		rc=1
	fi
	it_asan_stop "$IT_ASAN_PID" || {
		st=$?
		echo "the ASan aiod exited with status $st after SIGTERM"
		rc=1
	}
	it_asan_clean "$log" || rc=1
	rm -rf "$data"
	return $rc
}
