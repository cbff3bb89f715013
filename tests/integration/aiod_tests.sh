# aiod's own integration tests (no smbd): sourced by run.sh after lib.sh.
# Each t_aiod_* function runs under it_run with set -e, with aiod started by
# the harness ($IT_AIOD_PID, socket $IT_T/aiod/aiod.sock).
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

AIOD_SOCK() { printf '%s/aiod/aiod.sock' "$IT_T"; }

# 64 concurrent sessions of random reads/writes, every byte checked, 8 clients
# SIGKILLed mid-flight; then no session, pinned block or descriptor is left.
t_aiod_stress() {
	mkdir -p "$IT_T/data/stress"
	"$BUILD/test/aiod_stress" "$(AIOD_SOCK)" "$IT_T/data/stress" "$IT_AIOD_PID" 64 5 8
	rm -rf "$IT_T/data/stress"
}

# 50,000 distinct files opened, read and closed: aiod gives their records
# (and watches) back, its memory returns, and a listing walks what is kept.
t_aiod_many_files() {
	mkdir -p "$IT_T/data/many"
	"$BUILD/test/aiod_manyfiles" "$(AIOD_SOCK)" "$IT_T/data/many" "$IT_AIOD_PID" 50000
	rmdir "$IT_T/data/many"
}

# Malformed, truncated, wrong-version, unknown-op messages, bad ids, bad lengths.
t_aiod_bad_input() {
	"$BUILD/test/aiod_badinput" "$(AIOD_SOCK)" "$IT_T/data"
	rtio_alive "$IT_AIOD_PID"
}

# aiod runs as root and serves data: a local non-root user must get nothing.
t_aiod_nonroot_refused() {
	local secret=$IT_T/data/secret out
	head -c 4096 /dev/urandom > "$secret"
	chmod 600 "$secret"
	# The socket directory is 0700: the user cannot even reach the socket.
	if out=$(runuser -u "$IT_USER" -- "$BUILD/aiodctl" -s "$(AIOD_SOCK)" cat "$secret" 2>&1); then
		echo "non-root user read through aiod: $out"
		return 1
	fi
	echo "refused as expected: $out"
	# Even with the directory and the socket opened up (a careless admin),
	# aiod checks the peer itself (SO_PEERCRED) and drops it.
	chmod 755 "$IT_T/aiod"
	chmod 666 "$(AIOD_SOCK)"
	if out=$(runuser -u "$IT_USER" -- "$BUILD/aiodctl" -s "$(AIOD_SOCK)" stats 2>&1); then
		chmod 700 "$IT_T/aiod"
		chmod 600 "$(AIOD_SOCK)"
		echo "non-root user got a session: $out"
		return 1
	fi
	chmod 700 "$IT_T/aiod"
	chmod 600 "$(AIOD_SOCK)"
	echo "refused as expected: $out"
	grep -q "refused client pid .* uid $(id -u "$IT_USER")" "$IT_T/log/aiod.log"
}

# Round trips through aiodctl: sizes around the block size, reads and writes.
t_aiod_roundtrip() {
	local s f n
	s=$(AIOD_SOCK)
	for n in 0 1 $((IT_BLOCK - 1)) $IT_BLOCK $((IT_BLOCK + 1)) $((5 * IT_BLOCK + 12345)); do
		f=$IT_T/data/rt.$n
		head -c "$n" /dev/urandom > "$f"
		[ "$("$BUILD/aiodctl" -s "$s" cat "$f" | md5sum)" = "$(md5sum < "$f")" ]
		"$BUILD/aiodctl" -s "$s" write "$f.w" < "$f"
		cmp "$f" "$f.w"
		rm -f "$f" "$f.w"
	done
}

# Configuration errors name the file, line and key; aiod refuses to start
# with exit status 78 (EX_CONFIG, which the unit's RestartPreventExitStatus names).
t_aiod_config_errors() {
	local bad=$IT_T/bad.ini out rc
	printf '[cache]\nblock_size = 3M\n' > "$bad"
	out=$("$BUILD/aiod" -c "$bad" --check-config 2>&1) && { echo "accepted a bad block_size"; return 1; }
	echo "$out" | grep -q "$bad:2: \[cache\] block_size"
	printf '[engine]\nqueue_deepth = 4\n' > "$bad"
	rc=0
	out=$("$BUILD/aiod" -c "$bad" -F 2>&1) || rc=$?
	[ "$rc" = 78 ] || { echo "a typo: exit $rc, not 78"; return 1; }
	echo "$out" | grep -q "$bad:2: unknown key 'queue_deepth'"
	"$BUILD/aiod" -c "$IT_T/aiod.ini" --check-config
	# --dump-config says where each value came from
	"$BUILD/aiod" -c "$IT_T/aiod.ini" --dump-config | grep -q "^size = 64M	; $IT_T/aiod.ini:[0-9]*$"
	# The sample configuration is exactly the built-in defaults.
	diff <("$BUILD/aiod" --print-defaults) "$IT_ROOT/conf/aiod.ini"
}

# SIGHUP reloads what can change and names what needs a restart.
t_aiod_reload() {
	local ini=$IT_T/aiod.ini
	cp "$ini" "$ini.orig"
	printf '\n[readahead]\nblocks = 8\n' >> "$ini"
	sed -i 's/^size = .*/size = 96M/' "$ini"
	kill -HUP "$IT_AIOD_PID"
	sleep 0.5
	cp "$ini.orig" "$ini"
	grep -q "reload: \[readahead\] blocks changed" "$IT_T/log/aiod.log"
	grep -q "reload: \[cache\] size changed; takes effect after a restart" "$IT_T/log/aiod.log"
	rtio_alive "$IT_AIOD_PID"
	"$BUILD/aiodctl" -s "$(AIOD_SOCK)" stats | grep -q '^blocks_total=64$'
}

# [cache] direct_io: reads bypass the page cache, data still right.
t_aiod_direct_io() {
	local ini=$IT_T/direct.ini sock=$IT_T/direct/aiod.sock pid f rc=0
	mkdir -p "$IT_T/direct"
	sed "s|^socket_path = .*|socket_path = $sock|; s|^mlock = no|mlock = no\ndirect_io = yes|" \
		"$IT_T/aiod.ini" > "$ini"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$ini" -F -d 3 > "$IT_T/log/aiod-direct.log" 2>&1 &
	pid=$!
	it_track "$pid"
	it_wait_up "$pid" "$IT_T/log/aiod-direct.log" aiod-direct test -S "$sock"
	# O_DIRECT needs a real filesystem: the data dir (tmpfs may refuse it).
	f=$IT_T/data/direct.dat
	head -c $((3 * IT_BLOCK + 7)) /dev/urandom > "$f"
	[ "$("$BUILD/aiodctl" -s "$sock" cat "$f" | md5sum)" = "$(md5sum < "$f")" ] || rc=1
	printf 'hello' | "$BUILD/aiodctl" -s "$sock" write "$f" 1000
	[ "$("$BUILD/aiodctl" -s "$sock" cat "$f" 1000 5)" = hello ] || rc=1
	kill -TERM "$pid"
	wait "$pid" || rc=1
	grep -q "no O_DIRECT" "$IT_T/log/aiod-direct.log" && echo "note: filesystem refused O_DIRECT"
	return $rc
}

# SIGTERM: aiod removes its socket and exits 0.
t_aiod_sigterm() {
	local ini=$IT_T/term.ini sock=$IT_T/term/aiod.sock pid
	mkdir -p "$IT_T/term"
	sed "s|^socket_path = .*|socket_path = $sock|" "$IT_T/aiod.ini" > "$ini"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$ini" -F > "$IT_T/log/aiod-term.log" 2>&1 &
	pid=$!
	it_track "$pid"
	it_wait_up "$pid" "$IT_T/log/aiod-term.log" aiod-term test -S "$sock"
	# A second aiod on the same socket must refuse, not steal it.
	if "$BUILD/aiod" -c "$ini" -F > "$IT_T/log/aiod-term2.log" 2>&1; then
		echo "second aiod started on a live socket"; return 1
	fi
	grep -q "already serving" "$IT_T/log/aiod-term2.log"
	kill -TERM "$pid"
	wait "$pid"
	[ ! -e "$sock" ]
}

# Admission control: room for 3 streams of 100 Mbit/s, the 4th is refused.
t_aiod_admission() {
	local ini=$IT_T/adm.ini sock=$IT_T/adm/aiod.sock pid rc=0
	mkdir -p "$IT_T/adm" "$IT_T/data/adm"
	# 3 x 12.5 MB/s fit in 40 MB/s minus 5 % headroom; 4 do not. All open at
	# once: startup_s = 0 leaves the capacity alone to decide.
	it_ini_merge "$(sed "s|^socket_path = .*|socket_path = $sock|" "$IT_T/aiod.ini")" \
		"$(printf '[admission]\nmode = refuse\ncapacity = 40000000\nheadroom_pct = 5\nstartup_s = 0\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\n')" \
		> "$ini"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$ini" -F -d 3 > "$IT_T/log/aiod-adm.log" 2>&1 &
	pid=$!
	it_track "$pid"
	it_wait_up "$pid" "$IT_T/log/aiod-adm.log" aiod-adm test -S "$sock"
	"$BUILD/test/aiod_admission" "$sock" "$IT_T/data/adm" 3 || rc=1
	grep -q "admission: refused stream overcommit.mxf" "$IT_T/log/aiod-adm.log" || rc=1
	kill -TERM "$pid"
	wait "$pid" || rc=1
	return $rc
}

# Admission's start-up plan, with the emulated disk's calibration profile
# (tests/unit/test_tuning.c and t_streams.sh have the same) and clients that
# keep 0.5 s (prebuffer_ms 500). Opened in the same millisecond, as here, the
# plan admits seven 100 Mbit/s streams: the eighth's data would be only 85 ms
# early, less than its margin of one io_size request (118 ms). (In bench/rt,
# rt-20261206-1740.md, streams a client opens together arrive tens of ms
# apart; there eight are admitted and play clean, and the ninth is demoted.)
# The capacity (146 MB/s less 5 %) has room for eleven and the start-up debt
# pays a ninth's window in 5 s of startup_s 20: the plan is what refuses the
# eighth. Closing one makes room again.
t_aiod_admission_plan() {
	local ini=$IT_T/admplan.ini sock=$IT_T/admplan/aiod.sock pid rc=0
	mkdir -p "$IT_T/admplan" "$IT_T/data/admplan"
	printf '%s\n' '[profile]' 'version = 2' '[device]' 'request_us = 15240' '[random]' \
		'65536 = 4300000' '1048576 = 48800000' '4194304 = 104400000' '16777216 = 146000000' \
		'[sequential]' '65536 = 122200000' '1048576 = 148300000' '4194304 = 159200000' \
		'16777216 = 162700000' '[parallel]' 'size = 16777216' '1 = 146000000' '2 = 149000000' \
		> "$IT_T/admplan/emudisk.profile"
	it_ini_merge "$(sed "s|^socket_path = .*|socket_path = $sock|" "$IT_T/aiod.ini")" \
		"$(printf '[admission]\nmode = refuse\nprofile = %s\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 500\n' \
			"$IT_T/admplan/emudisk.profile")" > "$ini"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$ini" -F -d 3 > "$IT_T/log/aiod-admplan.log" 2>&1 &
	pid=$!
	it_track "$pid"
	it_wait_up "$pid" "$IT_T/log/aiod-admplan.log" aiod-admplan test -S "$sock"
	"$BUILD/test/aiod_admission" "$sock" "$IT_T/data/admplan" 7 || rc=1
	grep "admission: refused stream overcommit.mxf" "$IT_T/log/aiod-admplan.log" |
		grep -q "aiod's start-up plan has .* ms early for its client (prebuffer_ms = 500) .*, less than one io_size request takes" ||
		{ echo "the eighth stream was not refused by the start-up plan's margin:"
		  grep "admission:" "$IT_T/log/aiod-admplan.log"; rc=1; }
	kill -TERM "$pid"
	wait "$pid" || rc=1
	return $rc
}

# it_aiod_variant NAME KEY=VALUE...: the test aiod.ini with its own socket
# ($IT_T/NAME/aiod.sock) and these [global] keys, as $IT_T/NAME.ini.
it_aiod_variant() {
	local name=$1 kv
	shift
	mkdir -p "$IT_T/$name"
	sed "s|^socket_path = .*|socket_path = $IT_T/$name/aiod.sock|" "$IT_T/aiod.ini" > "$IT_T/$name.ini"
	for kv in "$@"; do
		sed -i "/^\[global\]/a ${kv%%=*} = ${kv#*=}" "$IT_T/$name.ini"
	done
}

# aiod out of descriptors (RLIMIT_NOFILE 64, hard limit too): registrations
# are refused with EMFILE and the sessions live on, new clients wait in the
# backlog; meanwhile aiod answers STATS, uses next to no CPU and writes a
# handful of log lines (before: 97 % CPU, a warning per wake-up, 700k lines
# in 3 s). Then descriptors come back and a new client gets in.
t_aiod_emfile() {
	local sock=$IT_T/emfile/aiod.sock log=$IT_T/log/aiod-emfile.log pid n rc=0
	it_aiod_variant emfile max_opens_per_session=16
	prlimit --nofile=64:64 "${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$IT_T/emfile.ini" -F -d 2 > "$log" 2>&1 &
	pid=$!
	it_track "$pid"
	it_wait_up "$pid" "$log" aiod-emfile test -S "$sock"
	"$BUILD/test/aiod_limits" emfile "$sock" "$IT_T/data" "$pid" 3 || rc=1
	rtio_alive "$pid" || { echo "aiod died"; return 1; }
	n=$(wc -l < "$log")
	echo "aiod wrote $n log lines"
	if [ "$n" -gt 30 ]; then
		echo "too many; the most frequent:"
		cut -c14-100 "$log" | sort | uniq -c | sort -rn | head -n 5
		rc=1
	fi
	grep -q "accept: Too many open files; new clients wait" "$log" ||
		{ echo "aiod did not log the accept back-off"; rc=1; }
	kill -TERM "$pid"
	wait "$pid" || rc=1
	return $rc
}

# [global] max_sessions = 2, both taken: aiodctl stats still answers (a
# monitor connection, no session), one more session is refused with EUSERS,
# and 50 refused clients cost one log line, not 50.
t_aiod_sessions_full() {
	local sock=$IT_T/full/aiod.sock log=$IT_T/log/aiod-full.log pid holders=() h n rc=0
	it_aiod_variant full max_sessions=2
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$IT_T/full.ini" -F -d 2 > "$log" 2>&1 &
	pid=$!
	it_track "$pid"
	it_wait_up "$pid" "$log" aiod-full test -S "$sock"
	for n in 1 2; do
		"$BUILD/test/aiod_limits" hold "$sock" 30 > "$IT_T/full/hold.$n" 2>&1 &
		holders+=($!)
		it_track "$!" aiod_limits-hold
	done
	for n in 1 2; do
		it_wait_up "${holders[$((n - 1))]}" "$IT_T/full/hold.$n" "holder $n" \
			grep -q ready "$IT_T/full/hold.$n"
	done
	"$BUILD/aiodctl" -s "$sock" stats | grep -q '^sessions=2$' ||
		{ echo "aiodctl stats does not answer with every session taken"; rc=1; }
	"$BUILD/test/aiod_limits" full "$sock" 2 || rc=1
	n=$(grep -c "max_sessions = 2 reached" "$log")
	echo "aiod logged $n refusal lines"
	[ "$n" -ge 1 ] && [ "$n" -le 2 ] || rc=1
	for h in "${holders[@]}"; do
		kill -TERM "$h" 2>/dev/null
	done
	wait "${holders[@]}" 2>/dev/null || true	# killed on purpose
	kill -TERM "$pid"
	wait "$pid" || rc=1
	return $rc
}

# Hundreds of sessions outside systemd: aiod without CAP_SYS_RESOURCE and with
# room for only a few message queues (RLIMIT_MSGQUEUE 40 KiB) gives the rest
# of its 300 sessions socket pairs: every session connects, every read
# through every one of them returns the file's bytes, and the fallback costs
# a few log lines, not 300. (Before: session 3 on was refused "could not
# create its queues", and about 79 was the most any aiod started by hand got.)
t_aiod_socket_queues() {
	local sock=$IT_T/sockq/aiod.sock log=$IT_T/log/aiod-sockq.log pid n rc=0
	it_aiod_variant sockq
	head -c $((300 * 65536)) /dev/urandom > "$IT_T/data/sockq.bin"
	prlimit --msgqueue=40960:40960 setpriv --inh-caps=-sys_resource \
		--bounding-set=-sys_resource "$BUILD/aiod" -c "$IT_T/sockq.ini" -F -d 2 > "$log" 2>&1 &
	pid=$!
	it_track "$pid"
	it_wait_up "$pid" "$log" aiod-sockq test -S "$sock"
	"$BUILD/test/aiod_limits" many "$sock" "$IT_T/data/sockq.bin" 300 250 || rc=1
	rtio_alive "$pid" || { echo "aiod died"; return 1; }
	n=$(grep -c "use a socket pair instead" "$log" || true)
	echo "aiod logged $n socket-pair lines"
	[ "$n" -ge 1 ] && [ "$n" -le 5 ] || rc=1
	kill -TERM "$pid"
	wait "$pid" || rc=1
	rm -f "$IT_T/data/sockq.bin"
	return $rc
}

# aiod --calibrate on the run's data directory (a real filesystem, O_DIRECT):
# every point of the profile measured, aiod derives its settings from it, and
# bad arguments or a directory it cannot measure are refused, naming why.
t_aiod_calibrate() {
	local dir=$IT_T/data/calibrate prof=$IT_T/calibrate/device.profile ini=$IT_T/calibrate.ini
	local out rc key
	mkdir -p "$dir"
	out=$("$BUILD/aiod" --calibrate "$dir" --profile "$prof" --calibrate-size 64M \
		--calibrate-seconds 0.1 2>&1) || { echo "$out"; return 1; }
	rm -f "$dir/.aiod-calibrate.dat"
	echo "$out" | grep -qx "calibrate: profile written to $prof"
	# seven sizes one at a time, random and sequential, four in-flight counts: all measured
	for key in random sequential; do
		[ "$(awk -v s="[$key]" '$0 == s {on = 1; next} /^\[/ {on = 0}
			on && $2 == "=" && $3 > 0 {n++} END {print n + 0}' "$prof")" = 7 ] ||
			{ echo "[$key] does not hold 7 measured sizes:"; cat "$prof"; return 1; }
	done
	[ "$(awk '/^\[parallel\]/ {on = 1; next} /^\[/ {on = 0}
		on && $1 ~ /^[1248]$/ && $3 > 0 {n++} END {print n + 0}' "$prof")" = 4 ]
	grep -Eq '^request_us = [1-9][0-9]*$' "$prof"
	# what aiod makes of it: io_size, queue_depth, the best-effort deadline
	printf '[admission]\nprofile = %s\n' "$prof" > "$ini"
	out=$("$BUILD/aiod" -c "$ini" --dump-config 2>&1)
	for key in io_size queue_depth best_effort_deadline_ms; do
		echo "$out" | grep -q "^$key = .*; derived from profile $prof$" ||
			{ echo "$key not derived from the profile:"; echo "$out" | grep "^$key"; return 1; }
	done
	# refused, with the reason
	rc=0
	out=$("$BUILD/aiod" --calibrate "$IT_T/no/such/dir" --profile "$prof.x" --calibrate-size 64M \
		--calibrate-seconds 0.1 2>&1) || rc=$?
	[ "$rc" != 0 ] && echo "$out" | grep -q "$IT_T/no/such/dir/.aiod-calibrate.dat: No such file"
	[ ! -e "$prof.x" ]
	for bad in "--calibrate-seconds 2x" "--calibrate-seconds 0" "--calibrate-size 1M"; do
		rc=0
		# shellcheck disable=SC2086
		out=$("$BUILD/aiod" --calibrate "$dir" --profile "$prof.x" $bad 2>&1) || rc=$?
		[ "$rc" = 2 ] && echo "$out" | grep -q -- "${bad%% *}" ||
			{ echo "$bad: exit $rc: $out"; return 1; }
	done
	[ ! -e "$prof.x" ]
}
