# aiod alive but stuck (SIGSTOP): a request in flight on an open, registered
# file times out after rtio:timeout and completes locally, the process
# detaches once; after SIGCONT the same connection returns to aiod.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_stall() {
	local from out ms aiod r0 r1 n timeout_ms=$IT_TIMEOUT_MS
	from=$(($(wc -l < "$IT_T/log/smbd.log") + 1))
	coproc HOLD { exec "$IT_T/bin/itest_hold" "$(it_url rtio)/stall.bin" $((4 * 1024 * 1024)) 11; }
	it_track "$HOLD_PID" itest_hold
	read -r -t 20 out <&"${HOLD[0]}" || out="no answer"
	[ "$out" = ready ] || { echo "itest_hold: $out"; return 1; }

	aiod=$(it_aiod_pid)
	# whatever happens below, the next test finds aiod running (we are a subshell)
	# shellcheck disable=SC2064 # expanded now: the local is gone at exit
	trap "kill -CONT $aiod 2>/dev/null" EXIT
	kill -STOP "$aiod"
	out=$(it_hold_cmd read)
	echo "aiod stopped: $out"
	case $out in
	"ok read "*) ms=${out#ok read } ;;
	*) return 1 ;;
	esac
	if [ "$ms" -lt $((timeout_ms - 500)) ] || [ "$ms" -gt $((timeout_ms + 5000)) ]; then
		echo "the read took $ms ms; expected about rtio:timeout ($timeout_ms ms)"
		return 1
	fi
	out=$(it_hold_cmd "write 12")
	echo "aiod stopped: $out"
	[ "${out% *}" = "ok write" ] || return 1
	if ! tail -n +"$from" "$IT_T/log/smbd.log" | grep -q "rtio: detached from aiod .*Connection timed out"; then
		echo "smbd did not log a detach for the timeout"
		return 1
	fi

	kill -CONT "$aiod"
	# the reconnect interval may have grown while aiod was stuck
	for n in $(seq 30); do
		sleep 1
		out=$(it_hold_cmd read)
		[ "${out% *}" = "ok read" ] || { echo "aiod running again: $out"; return 1; }
		tail -n +"$from" "$IT_T/log/smbd.log" | grep -q "rtio: re-attached to aiod" && break
	done
	tail -n +"$from" "$IT_T/log/smbd.log" | grep -q "rtio: re-attached to aiod" ||
		{ echo "no re-attach within 30 s of SIGCONT"; return 1; }
	r0=$(it_stat requests)
	out=$(it_hold_cmd read)
	r1=$(it_stat requests)
	echo "after re-attach: $out, aiod requests $r0 -> $r1"
	[ "${out% *}" = "ok read" ] && [ "$r1" -gt "$r0" ] ||
		{ echo "the held file does not use aiod again"; return 1; }
	echo quit >&"${HOLD[1]}"
	wait "$HOLD_PID"
	tail -n +"$from" "$IT_T/log/smbd.log" | grep "rtio:" | sort | uniq -c
}

# A stream's read does not wait out rtio:timeout on a stuck aiod: with a
# class whose clients keep 600 ms of buffer (prebuffer_ms), the module gives
# aiod half of it (300 ms) of silence before smbd reads itself, although the
# share's rtio:timeout is 5000 ms. A file of no class on the same share
# still waits the whole rtio:timeout.
t_stall_stream() {
	local port=$((IT_PORT + 10)) out ms aiod rc=0
	it_private stallstream "$port" '[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 600' \
		'\trtio:timeout = 5000' '\tlog level = 1'
	head -c $((8 << 20)) /dev/urandom > "$PRIV_DIR/share/clip.mxf"
	chmod a+rw "$PRIV_DIR/share/clip.mxf"
	coproc HOLD { exec "$IT_T/bin/itest_hold" "smb://127.0.0.1:$port/s/clip.mxf" $((8 << 20)) 11; }
	it_track "$HOLD_PID" itest_hold
	read -r -t 20 out <&"${HOLD[0]}" || out="no answer"
	[ "$out" = ready ] || { echo "itest_hold: $out"; it_private_stop; return 1; }
	aiod=$PRIV_AIOD_PID
	# shellcheck disable=SC2064 # expanded now: the local is gone at exit
	trap "kill -CONT $aiod 2>/dev/null || true" EXIT	# aiod is gone by then
	kill -STOP "$aiod"
	out=$(it_hold_cmd read)
	kill -CONT "$aiod"
	echo "aiod stopped, a read of the stream (prebuffer_ms 600, rtio:timeout 5000): $out"
	case $out in
	"ok read "*) ms=${out#ok read } ;;
	*) it_private_stop; return 1 ;;
	esac
	if [ "$ms" -lt 250 ] || [ "$ms" -gt 2000 ]; then
		echo "the read took $ms ms; expected about 300 (half the stream's prebuffer), not rtio:timeout"
		rc=1
	fi
	echo quit >&"${HOLD[1]}"
	wait "$HOLD_PID"
	it_private_stop	# smbd's log is complete once it ended
	grep -q "rtio: detached from aiod .*Connection timed out" "$IT_T/log/smbd-stallstream.log" ||
		{ echo "smbd did not log a detach for the stream's timeout"; rc=1; }
	return $rc
}
