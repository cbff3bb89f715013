# rtio:random = local (the default): random reads of a large file that is not
# a stream are smbd's own while aiod has no admitted stream (nothing on the
# device is owed a rate); while a stream plays, every read goes to aiod again,
# so its deadlines order them. Counted with aiod's passthrough_reads (a random
# miss aiod read for smbd) against the reads the random client made.
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

# random_phase PORT TAG: "READS VIA_AIOD": 2 s of random reads, and how many aiod read for smbd
random_phase() {
	local p0 n p1
	p0=$(priv_stat passthrough_reads)
	n=$(random_reads "$1" 2 "$2") || return 1
	p1=$(priv_stat passthrough_reads)
	echo "${n:-0} $((${p1:-0} - ${p0:-0}))"
}

t_random() {
	local port=$((IT_PORT + 8)) rc=0 out n alone during after spid
	# 64M cache: files over 8 MiB are "large"; big.bin is 96 MiB, so a random
	# read lands within two blocks of the previous one about 1 time in 24
	it_private random "$port" '[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 1000' ''
	head -c $((96 * 1024 * 1024)) /dev/urandom > "$PRIV_DIR/share/big.bin"
	head -c $((64 * 1024 * 1024)) /dev/urandom > "$PRIV_DIR/share/clip.mxf"
	chmod a+r "$PRIV_DIR/share/big.bin" "$PRIV_DIR/share/clip.mxf"

	out=$(random_phase "$port" alone) || rc=1
	read -r n alone <<< "${out:-0 0}"
	echo "no stream: $n random reads, $alone of them read by aiod"
	[ "${n:-0}" -ge 100 ] || { echo "too few reads to judge"; rc=1; }
	[ $((alone * 4)) -lt "${n:-0}" ] || { echo "random reads went to aiod with no stream open"; rc=1; }

	# a paced stream plays meanwhile: admitted, so reads are aiod's
	"$BUILD/rtio-stream" --url "smb://127.0.0.1:$port/s/clip.mxf" --user "$IT_USER%$IT_PASS" \
		--bitrate 100M --chunk 1M --prebuffer 2 --duration 5 > "$IT_T/log/random-stream.json" 2>&1 &
	spid=$!
	it_track "$spid" rtio-stream
	sleep 1
	[ "$(priv_stat streams)" = 1 ] || { echo "the stream was not admitted: $(priv_stat streams)"; rc=1; }
	out=$(random_phase "$port" during) || rc=1
	read -r n during <<< "${out:-0 0}"
	echo "stream playing: $n random reads, $during of them read by aiod"
	[ "${n:-0}" -ge 100 ] || { echo "too few reads to judge"; rc=1; }
	[ $((during * 4)) -ge $((${n:-0} * 3)) ] ||
		{ echo "random reads bypassed aiod while a stream was admitted"; rc=1; }
	wait "$spid" || rc=1
	grep -q '"misses":0[,}]' "$IT_T/log/random-stream.json" ||
		echo "(the stream had late chunks: $(cat "$IT_T/log/random-stream.json"); not judged here)"

	# the stream closed: smbd's own again
	out=$(random_phase "$port" after) || rc=1
	read -r n after <<< "${out:-0 0}"
	echo "stream closed: $n random reads, $after of them read by aiod"
	[ "${n:-0}" -ge 100 ] || { echo "too few reads to judge"; rc=1; }
	[ $((after * 4)) -lt "${n:-0}" ] || { echo "random reads stayed with aiod after the stream closed"; rc=1; }
	it_private_stop
	return $rc
}
