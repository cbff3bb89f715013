# aiod full ([global] max_sessions = 1, taken by another client): a new smbd
# is told so (EUSERS, from one of aiod's monitor connections), does its I/O
# locally, says so in one log line, and does not ask aiod again on every
# I/O: the next attempt comes after 60 s. Before, the module reconnected on
# the first I/O after each second (one CONNECT refused by aiod per second)
# and logged "aiod not available" at each tree connect.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_noroom() {
	local port=$((IT_PORT + 6)) out n lines refusals holder rc=0
	it_private noroom "$port" '[global]\nmax_sessions = 1' '' '\tlog level = 1'
	"$BUILD/test/aiod_limits" hold "$PRIV_SOCK" 60 > "$PRIV_DIR/hold.out" 2>&1 &
	holder=$!
	it_track "$holder" aiod_limits-hold
	it_wait_up "$holder" "$PRIV_DIR/hold.out" "the session holder" grep -q ready "$PRIV_DIR/hold.out"

	coproc HOLD { exec "$IT_T/bin/itest_hold" "smb://127.0.0.1:$port/s/noroom.bin" $((4 * 1024 * 1024)) 7; }
	it_track "$HOLD_PID" itest_hold
	read -r -t 20 out <&"${HOLD[0]}" || out="no answer"
	[ "$out" = ready ] || { echo "itest_hold: $out"; return 1; }
	# Three seconds of I/O on the connection aiod has no room for.
	for n in 1 2 3 4 5 6; do
		out=$(it_hold_cmd read)
		[ "${out% *}" = "ok read" ] || { echo "read $n: $out"; rc=1; }
		sleep 0.5
	done
	out=$(it_hold_cmd "write 8")
	[ "${out% *}" = "ok write" ] || { echo "write: $out"; rc=1; }
	echo quit >&"${HOLD[1]}"
	wait "$HOLD_PID"

	lines=$(grep -c "rtio: aiod at $PRIV_SOCK has no room for this process (Too many users)" \
		"$IT_T/log/smbd-noroom.log")
	refusals=$(grep -c "CONNECT refused: max_sessions reached" "$IT_T/log/aiod-noroom.log")
	echo "smbd logged 'no room' $lines time(s); aiod refused $refusals CONNECT(s)"
	grep "rtio:" "$IT_T/log/smbd-noroom.log" | sed 's/^/    /'
	[ "$lines" = 1 ] || rc=1
	[ "$refusals" = 1 ] || rc=1
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -q '^sessions=1$' || rc=1
	kill -TERM "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null || true	# killed on purpose
	it_private_stop
	return $rc
}
