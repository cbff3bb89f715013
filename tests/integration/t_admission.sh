# Admission control seen from an SMB client: aiod has room for two 100 Mbit/s
# streams; while two clients hold stream files open, a third client's open of
# a stream file fails with NT_STATUS_INSUFFICIENT_RESOURCES, a best-effort
# file still opens, and once a stream closes the next one is admitted.
# A new stream file being written is registered (and admitted) when it
# reaches rtio:register min size, not at its open: refused then, its writes
# must still succeed, done by smbd.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# adm_wait I PATTERN: wait (30 s at most) until holder I prints a line matching PATTERN
adm_wait() {
	for _ in $(seq 300); do
		grep -q "$2" "$PRIV_DIR/out$1" && return 0
		sleep 0.1
	done
	echo "stream $1, waiting for $2: $(cat "$PRIV_DIR/out$1")"
	return 1
}

# adm_promoted LOG NAME SECONDS: wait until aiod's LOG says NAME, served best
# effort, was admitted; fails (saying so) if that takes longer than SECONDS
adm_promoted() {
	for _ in $(seq $(($3 * 10))); do
		grep -q "admission: $2, served best effort until now, admitted" "$1" && return 0
		sleep 0.1
	done
	echo "$2 still served best effort after $3 s"
	return 1
}

# adm_stat NAME: aiodctl stats' NAME= value of the private aiod
adm_stat() {
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | sed -n "s/^$1=//p"
}

# adm_hold URL I: a client (itest_hold: one SMB connection) creates and holds
# URL/sI.mxf open; commands go to it on descriptor 7 + I; waits until it is ready
adm_hold() {
	mkfifo "$PRIV_DIR/in$2"
	"$IT_T/bin/itest_hold" "$1/s$2.mxf" 1048576 "$2" < "$PRIV_DIR/in$2" \
		> "$PRIV_DIR/out$2" 2>&1 &
	it_track $! itest_hold
	eval "exec $((7 + $2))>\"\$PRIV_DIR/in$2\""
	adm_wait "$2" '^ready'
}

# (startup_s = 0 here and in t_admission_demote: the capacity alone decides;
# streams that start together are t_admission_startup's.)
t_admission() {
	local port=$((IT_PORT + 4)) url out rc=0 i
	it_private admission "$port" \
		'[admission]\nmode = refuse\ncapacity = 26000000\nheadroom_pct = 0\nstartup_s = 0\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M' \
		'' ''
	url="smb://127.0.0.1:$port/s"
	# Two clients hold stream files open (itest_hold: one SMB connection each).
	for i in 1 2; do
		adm_hold "$url" "$i" || rc=1
	done
	head -c 1048576 /dev/urandom > "$PRIV_DIR/share/s3.mxf"
	head -c 1000 /dev/urandom > "$PRIV_DIR/share/notes.txt"
	chmod 666 "$PRIV_DIR/share/s3.mxf" "$PRIV_DIR/share/notes.txt"
	out=$(smbclient //127.0.0.1/s -p "$port" -U "$IT_USER%$IT_PASS" -c "get s3.mxf $PRIV_DIR/s3.got" 2>&1) || true
	echo "third stream: $out"
	echo "$out" | grep -q NT_STATUS_INSUFFICIENT_RESOURCES || rc=1
	smbclient //127.0.0.1/s -p "$port" -U "$IT_USER%$IT_PASS" -c "get notes.txt $PRIV_DIR/n.got" \
		> /dev/null 2>&1 || { echo "best-effort file did not open"; rc=1; }
	cmp "$PRIV_DIR/share/notes.txt" "$PRIV_DIR/n.got" || rc=1
	grep -q "admission: refused stream s3.mxf" "$IT_T/log/aiod-admission.log" || rc=1
	# a recorder's new file: empty at open, refused when it reaches 1 MiB
	head -c $((3 * 1048576)) /dev/urandom > "$PRIV_DIR/s4.src"
	out=$(smbclient //127.0.0.1/s -p "$port" -U "$IT_USER%$IT_PASS" -c "put $PRIV_DIR/s4.src s4.mxf" 2>&1) ||
		{ echo "a stream file refused as it grew failed the client's write: $out"; rc=1; }
	cmp "$PRIV_DIR/s4.src" "$PRIV_DIR/share/s4.mxf" || { echo "s4.mxf differs"; rc=1; }
	grep -q "admission: refused stream s4.mxf" "$IT_T/log/aiod-admission.log" ||
		{ echo "s4.mxf was not refused when it grew"; rc=1; }
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -E '^(streams|reserved_Bps|capacity_Bps|admission_refused)='
	# The admitted streams still read correctly; then one leaves and s3 gets in.
	echo read >&8
	adm_wait 1 '^ok read' || rc=1
	echo quit >&8
	exec 8>&-
	sleep 1
	smbclient //127.0.0.1/s -p "$port" -U "$IT_USER%$IT_PASS" -c "get s3.mxf $PRIV_DIR/s3.got" \
		> /dev/null 2>&1 || { echo "s3 not admitted after a stream closed"; rc=1; }
	cmp "$PRIV_DIR/share/s3.mxf" "$PRIV_DIR/s3.got" || rc=1
	echo quit >&9
	exec 9>&-
	it_private_stop
	return $rc
}

# Demote mode (aiod's default): a third stream while two fill the device is
# served best effort; when one of the two closes, the third, still open, is
# admitted in its place (aiod's admission_promote()) and still reads right.
t_admission_demote() {
	local port=$((IT_PORT + 4)) url rc=0 i n log
	it_private admission-demote "$port" \
		'[admission]\nmode = demote\ncapacity = 26000000\nheadroom_pct = 0\nstartup_s = 0\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M' \
		'' ''
	url="smb://127.0.0.1:$port/s"
	log=$IT_T/log/aiod-admission-demote.log
	for i in 1 2 3; do
		adm_hold "$url" "$i" || rc=1
	done
	grep -q "admission: s3.mxf at 100000000 bit/s served best effort" "$log" ||
		{ echo "s3.mxf was not demoted"; rc=1; }
	n=$(adm_stat streams)
	[ "$n" = 2 ] || { echo "$n streams admitted while three were open, not 2"; rc=1; }
	n=$(adm_stat admission_waiting)
	[ "$n" = 1 ] || { echo "aiodctl stats: admission_waiting=$n while s3 waits, not 1"; rc=1; }
	# doctor says so (its other checks are not this instance's business here)
	"$BUILD/aiodctl" -s "$PRIV_SOCK" doctor -c /dev/null > "$IT_T/log/doctor-demote.txt" 2>&1 || true
	grep -q '^WARN admission: 1 class stream(s) served best effort, waiting for room: 2 admitted' \
		"$IT_T/log/doctor-demote.txt" ||
		{ echo "doctor did not warn of the waiting stream:"; cat "$IT_T/log/doctor-demote.txt"; rc=1; }
	# stream 1 leaves: s3, still open, takes its reservation
	echo quit >&8
	exec 8>&-
	adm_promoted "$log" s3.mxf 10 || rc=1
	n=$(adm_stat streams)
	[ "$n" = 2 ] || { echo "$n streams admitted after the promotion, not 2"; rc=1; }
	n=$(adm_stat admission_waiting)
	[ "$n" = 0 ] || { echo "aiodctl stats: admission_waiting=$n after the promotion, not 0"; rc=1; }
	echo read >&10
	adm_wait 3 '^ok read' || rc=1
	echo quit >&9
	echo quit >&10
	exec 9>&- 10>&-
	it_private_stop
	return $rc
}

# Streams that start together ([admission] startup_s): room for three streams
# of 100 Mbit/s, but each owes its 10 s window (prebuffer_ms 9000 + 1 s,
# 125 MB), paid from what the reservations leave over. The second, opened
# while the first still fills its window, would leave 15 MB/s: not enough to
# pay 250 MB in startup_s = 1 s, so it is demoted (aiodctl stats and doctor
# say what is owed); once the first's window is paid (125 MB at 27.5 MB/s,
# about 4.5 s) it is admitted, and reads right.
t_admission_startup() {
	local port=$((IT_PORT + 4)) url rc=0 n log
	it_private admission-startup "$port" \
		'[admission]\nmode = demote\ncapacity = 40000000\nheadroom_pct = 0\nstartup_s = 1\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 9000' \
		'' ''
	url="smb://127.0.0.1:$port/s"
	log=$IT_T/log/aiod-admission-startup.log
	adm_hold "$url" 1 || rc=1
	adm_hold "$url" 2 || rc=1
	grep -q "admission: s2.mxf at 100000000 bit/s served best effort: the streams started before it still owe" "$log" ||
		{ echo "s2.mxf was not held back while s1 started"; rc=1; }
	n=$(adm_stat startup_debt)
	[ "${n:-0}" -gt 0 ] || { echo "aiodctl stats: startup_debt=$n while s2 waits"; rc=1; }
	"$BUILD/aiodctl" -s "$PRIV_SOCK" doctor -c /dev/null > "$IT_T/log/doctor-startup.txt" 2>&1 || true
	grep -q '^WARN admission: 1 class stream(s) served best effort, waiting for room: 1 admitted.*the streams that started still owe' \
		"$IT_T/log/doctor-startup.txt" ||
		{ echo "doctor did not say what s2 waits for:"; cat "$IT_T/log/doctor-startup.txt"; rc=1; }
	adm_promoted "$log" s2.mxf 15 || rc=1
	n=$(adm_stat streams)
	[ "$n" = 2 ] || { echo "$n streams admitted after s1 started, not 2"; rc=1; }
	echo read >&9
	adm_wait 2 '^ok read' || rc=1
	echo quit >&8
	echo quit >&9
	exec 8>&- 9>&-
	it_private_stop
	return $rc
}
