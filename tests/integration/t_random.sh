# rtio:random = local (the default): random reads of a large file that is not
# a stream are smbd's own while aiod has no admitted stream (nothing on the
# device is owed a rate); while a stream plays, every read goes to aiod again,
# so its deadlines order them. Counted with aiod's passthrough_reads (a random
# miss aiod read for smbd) against the reads the random client made. The reads
# smbd made itself reach aiod's stats anyway (local_reads, reported once a
# second and at the session's end): with the no-stream phases' connection
# gone, local_reads plus the reads aiod answered (bytes_read / 4 KiB) is the
# client's count. On a device whose profile says one random read cannot make
# a stream late (an SSD), they are smbd's own while the stream plays too.
# (t_randio checks such reads byte for byte against writes.)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# random_reads PORT SECONDS TAG: 4 KiB reads at random offsets of big.bin; prints the reads made
random_reads() {
	"$BUILD/rtio-stream" --url "smb://127.0.0.1:$1/s/big.bin" --user "$IT_USER%$IT_PASS" \
		--greedy --random --chunk 4K --duration "$2" > "$IT_T/log/random-$3.json" 2>&1 &
	it_track "$!" rtio-stream
	wait "$!" || { cat "$IT_T/log/random-$3.json" >&2; return 1; }
	json_field "$IT_T/log/random-$3.json" chunks
}

priv_stat() {
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | awk -F= -v k="$1" '$1 == k {print $2}'
}

# priv_stats KEY...: the values of the keys, in that order, from one aiodctl stats
priv_stats() {
	local out k
	out=$("$BUILD/aiodctl" -s "$PRIV_SOCK" stats) || return 1
	for k in "$@"; do
		awk -F= -v k="$k" '$1 == k {v = $2} END {printf "%s ", v == "" ? 0 : v}' <<< "$out"
	done
}

# until_sessions_at_most N: wait (10 s at most) until aiod has no more than N sessions
until_sessions_at_most() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(priv_stat sessions)" -le "$1" ] && return 0
		sleep 0.1
	done
	echo "aiod still has $(priv_stat sessions) sessions, wanted at most $1"
	return 1
}

# random_phase PORT TAG: "READS VIA_AIOD LOCAL LOCAL_BYTES SERVED": 2 s of random reads; how
# many aiod read for smbd (pass-through), smbd read itself and reported (and their bytes), and
# aiod answered (bytes_read / 4 KiB, hits included), counted once the client's smbd left aiod
random_phase() {
	local s0 n b0 b1
	s0=$(priv_stat sessions)
	read -r -a b0 <<< "$(priv_stats passthrough_reads local_reads local_bytes bytes_read)"
	n=$(random_reads "$1" 2 "$2") || return 1
	# the last report goes when smbd's session ends: the client is gone, its smbd follows
	until_sessions_at_most "${s0:-0}" >&2 || return 1
	read -r -a b1 <<< "$(priv_stats passthrough_reads local_reads local_bytes bytes_read)"
	echo "${n:-0} $((b1[0] - b0[0])) $((b1[1] - b0[1])) $((b1[2] - b0[2])) $(((b1[3] - b0[3]) / 4096))"
}

# check_local_counted READS LOCAL LOCAL_BYTES SERVED: every read is local or aiod's, and counted.
# In principle exact (each 4 KiB read is one smbd read, and the last report goes with the
# session's end, which random_phase waited for); 1 % (at least 2) leaves room for a read aiod
# gave up half way (smbd finishes it: neither counts it) or a report that met a full queue,
# but not for a lost periodic report (a second of reads, about half of a 2 s phase).
check_local_counted() {
	local n=$1 local=$2 lbytes=$3 served=$4 tol diff
	tol=$((n / 100 > 2 ? n / 100 : 2))
	diff=$((local + served - n))
	echo "  aiod's stats: local_reads $local ($lbytes bytes) + reads aiod answered $served =" \
		"$((local + served)) of the client's $n (tolerance $tol)"
	[ "$local" -gt 0 ] || { echo "  no local read reached aiod's stats"; return 1; }
	[ "$lbytes" -eq $((local * 4096)) ] ||
		{ echo "  local_bytes $lbytes is not local_reads x 4 KiB"; return 1; }
	[ "${diff#-}" -le "$tol" ] || { echo "  off by $diff reads"; return 1; }
}

# play_stream PORT TAG: a paced 100 Mbit/s stream of clip.mxf for 5 s in the
# background (STREAM_PID); fails unless aiod admitted it within a second.
# Then drops big.bin from the page cache (what an earlier phase read back
# into it: smbd would read that from memory, stream or not).
play_stream() {
	"$BUILD/rtio-stream" --url "smb://127.0.0.1:$1/s/clip.mxf" --user "$IT_USER%$IT_PASS" \
		--bitrate 100M --chunk 1M --prebuffer 2 --duration 5 > "$IT_T/log/random-$2.json" 2>&1 &
	STREAM_PID=$!
	it_track "$STREAM_PID" rtio-stream
	sleep 1
	rtio_drop_pages "$PRIV_DIR/share/big.bin"
	[ "$(priv_stat streams)" = 1 ] || { echo "the stream was not admitted: $(priv_stat streams)"; return 1; }
}

# fast_profile: a device profile (aiod --calibrate's format) of an SSD: 100 us
# a random read, 500 MB/s
fast_profile() {
	printf '%s\n' '[profile]' 'version = 2' '[device]' 'request_us = 100' \
		'[random]' '1048576 = 500000000' '16777216 = 500000000' \
		'[sequential]' '1048576 = 500000000' '16777216 = 500000000'
}

t_random() {
	local port=$((IT_PORT + 8)) rc=0 out n alone during after fast spid local lbytes served
	# 64M cache: files over 8 MiB are "large"; big.bin is 96 MiB, so a random
	# read lands within two blocks of the previous one about 1 time in 24
	# direct_io: aiod's pass-through reads must not fill the page cache, from
	# which smbd would serve later reads itself (no device time, but not aiod's)
	it_private random "$port" '[cache]\ndirect_io = yes\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 1000' ''
	head -c $((96 * 1024 * 1024)) /dev/urandom > "$PRIV_DIR/share/big.bin"
	head -c $((64 * 1024 * 1024)) /dev/urandom > "$PRIV_DIR/share/clip.mxf"
	chmod a+r "$PRIV_DIR/share/big.bin" "$PRIV_DIR/share/clip.mxf"
	# not in the page cache: what it holds smbd reads itself, stream or not
	rtio_drop_pages "$PRIV_DIR/share/big.bin" "$PRIV_DIR/share/clip.mxf"

	out=$(random_phase "$port" alone) || rc=1
	read -r n alone local lbytes served <<< "${out:-0 0 0 0 0}"
	echo "no stream: $n random reads, $alone of them read by aiod"
	[ "${n:-0}" -ge 100 ] || { echo "too few reads to judge"; rc=1; }
	[ $((alone * 4)) -lt "${n:-0}" ] || { echo "random reads went to aiod with no stream open"; rc=1; }
	check_local_counted "${n:-0}" "${local:-0}" "${lbytes:-0}" "${served:-0}" || rc=1

	# a paced stream plays meanwhile: admitted, so reads are aiod's
	play_stream "$port" stream || rc=1
	spid=$STREAM_PID
	out=$(random_phase "$port" during) || rc=1
	read -r n during local lbytes served <<< "${out:-0 0 0 0 0}"
	echo "stream playing: $n random reads, $during of them read by aiod, $local local_reads"
	[ "${n:-0}" -ge 100 ] || { echo "too few reads to judge"; rc=1; }
	[ $((during * 4)) -ge $((${n:-0} * 3)) ] ||
		{ echo "random reads bypassed aiod while a stream was admitted"; rc=1; }
	wait "$spid" || rc=1
	grep -q '"misses":0[,}]' "$IT_T/log/random-stream.json" ||
		echo "(the stream had late chunks: $(cat "$IT_T/log/random-stream.json"); not judged here)"

	# the stream closed: smbd's own again
	out=$(random_phase "$port" after) || rc=1
	read -r n after local lbytes served <<< "${out:-0 0 0 0 0}"
	echo "stream closed: $n random reads, $after of them read by aiod"
	[ "${n:-0}" -ge 100 ] || { echo "too few reads to judge"; rc=1; }
	[ $((after * 4)) -lt "${n:-0}" ] || { echo "random reads stayed with aiod after the stream closed"; rc=1; }
	check_local_counted "${n:-0}" "${local:-0}" "${lbytes:-0}" "${served:-0}" || rc=1

	# A device whose profile answers a random read in 100 us (an SSD), and a
	# stream owing 12.5 of its 500 MB/s: such reads cannot make the stream
	# late there, so they are smbd's own again while it plays
	# ([admission] local_random_us, 1000 by default)
	fast_profile > "$PRIV_DIR/fast.profile"
	sed -i "s|^profile = .*|profile = $PRIV_DIR/fast.profile|" "$PRIV_DIR/aiod.ini"
	kill -HUP "$PRIV_AIOD_PID"
	it_wait_up "$PRIV_AIOD_PID" "$IT_T/log/aiod-random.log" "the reload" \
		grep -q "configuration reloaded" "$IT_T/log/aiod-random.log"
	play_stream "$port" stream2 || rc=1
	spid=$STREAM_PID
	out=$(random_phase "$port" fast) || rc=1
	read -r n fast local lbytes served <<< "${out:-0 0 0 0 0}"
	echo "stream playing, fast device: $n random reads, $fast of them read by aiod, $local local_reads"
	[ "${n:-0}" -ge 100 ] || { echo "too few reads to judge"; rc=1; }
	[ $((fast * 4)) -lt "${n:-0}" ] && [ "${local:-0}" -gt 0 ] ||
		{ echo "random reads went to aiod on a device too fast for them to matter"; rc=1; }
	wait "$spid" || rc=1
	it_private_stop
	return $rc
}
