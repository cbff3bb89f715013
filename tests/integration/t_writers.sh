# aiod's cache against writers that do not talk to aiod: a local process, an
# smbd that fell back (aiod stalled, or no session left for it), a file that
# grows while it is read. A reader holding the file through rtio must see the
# new bytes at once, and so must every later connection.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# it_hold_start NAME SIZE SEED: hold rtio/NAME open in itest_hold (HOLD coproc).
it_hold_start() {
	local out
	coproc HOLD { exec "$IT_T/bin/itest_hold" "$(it_url rtio)/$1" "$2" "$3"; }
	it_track "$HOLD_PID" itest_hold
	read -r -t 20 out <&"${HOLD[0]}" || out="no answer"
	[ "$out" = ready ] || { echo "itest_hold: $out"; return 1; }
}

it_hold_stop() {
	echo quit >&"${HOLD[1]}"
	wait "$HOLD_PID"
}

# it_hold_expect LOCAL WHAT: the held file reads as LOCAL holds.
it_hold_expect() {
	local out
	out=$(it_hold_cmd "expect $1")
	echo "$2: $out"
	[ "${out% *}" = "ok expect" ]
}

# it_get_matches NAME LOCAL: a new connection reads rtio/NAME as LOCAL holds.
it_get_matches() {
	rm -f "$IT_T/data/get.out"
	it_smb rtio "get $1 $IT_T/data/get.out" > /dev/null 2>&1 || { echo "get $1 failed"; return 1; }
	[ "$(it_md5 "$IT_T/data/get.out")" = "$(it_md5 "$2")" ] ||
		{ echo "a new connection read old bytes of $1"; return 1; }
}

# A local process overwrites a file that an SMB client holds open (its blocks
# in aiod's cache); the holder, and a new connection after it closed, read the
# new bytes.
t_writer_local() {
	local size=$((4 * 1024 * 1024)) new=$IT_T/data/local-new.bin
	it_hold_start local.bin $size 31 || return 1
	it_hold_cmd read > /dev/null	# every block cached
	head -c $size /dev/urandom > "$new"
	dd if="$new" of="$IT_T/share/rtio/local.bin" bs=1M conv=notrunc status=none
	it_hold_expect "$new" "held open, after a local overwrite" || return 1
	it_hold_stop
	it_get_matches local.bin "$new"
	echo "outside changes seen by aiod: $(it_stat outside_changes)"
}

# it_overwrite_via_smb NAME LOCAL: a new smbd process (connection) puts LOCAL over NAME.
it_overwrite_via_smb() {
	it_smb rtio "put $2 $1" > "$IT_T/log/put.out" 2>&1 ||
		{ cat "$IT_T/log/put.out"; echo "put failed"; return 1; }
}

# The writer's smbd gets no aiod session (max_sessions reached), so it writes
# locally and can tell aiod nothing; it exits long before anyone reads again.
t_writer_fallback_limit() {
	local size=$((4 * 1024 * 1024)) new=$IT_T/data/limit-new.bin from
	it_hold_start limit.bin $size 41 || return 1
	it_hold_cmd read > /dev/null
	# the holder has a session: a limit of 1 leaves none for anybody else
	sed -i "s/^max_sessions = .*//; s/^\[global\]/[global]\nmax_sessions = 1/" "$IT_T/aiod.ini"
	kill -HUP "$IT_AIOD_PID"
	sleep 0.5
	from=$(($(wc -l < "$IT_T/log/smbd.log") + 1))
	head -c $size /dev/urandom > "$new"
	it_overwrite_via_smb limit.bin "$new" || return 1
	sed -i "s/^max_sessions = .*//" "$IT_T/aiod.ini"
	kill -HUP "$IT_AIOD_PID"
	grep -q "max_sessions = 1 reached" "$IT_T/log/aiod.log" ||
		{ echo "the writer's smbd was not refused a session"; return 1; }
	echo "writer's smbd: $(tail -n +"$from" "$IT_T/log/smbd.log" | grep -m1 -o 'rtio: [^,]*')"
	it_hold_expect "$new" "held open, after a fallback smbd's write" || return 1
	it_hold_stop
	it_get_matches limit.bin "$new"
}

# aiod stalls (SIGSTOP) while another connection writes: that smbd times out,
# writes locally and exits; aiod wakes up to a reader of the same file.
t_writer_fallback_stall() {
	local size=$((4 * 1024 * 1024)) new=$IT_T/data/stall-new.bin aiod
	it_hold_start stalled.bin $size 51 || return 1
	it_hold_cmd read > /dev/null
	head -c $size /dev/urandom > "$new"
	aiod=$(it_aiod_pid)
	# shellcheck disable=SC2064 # expanded now: the next test needs aiod running
	trap "kill -CONT $aiod 2>/dev/null" EXIT
	kill -STOP "$aiod"
	it_overwrite_via_smb stalled.bin "$new" || { kill -CONT "$aiod"; return 1; }
	kill -CONT "$aiod"
	it_hold_expect "$new" "held open, after a write while aiod was stopped" || return 1
	it_hold_stop
	it_get_matches stalled.bin "$new"
}

# A file appended locally every 100 ms (and its header rewritten) while an
# SMB client reads it through rtio.
t_writer_growing() {
	local f=$IT_T/share/rtio/growing.mxf
	head -c 4096 /dev/zero > "$f"
	chmod 666 "$f"
	"$IT_T/bin/itest_grow" "$(it_url rtio)/growing.mxf" "$f" 4
}
