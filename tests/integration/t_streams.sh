# Two paced 100 Mbit/s streams through the rtio share of a private instance
# whose share lives on the emulated single-spindle disk (bench/emudisk): every
# chunk must arrive on time. A few seconds; the full sweep is bench/rt.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_streams() {
	local port=$((IT_PORT + 5)) emu=$IT_T/emu rc=0 i out pids=()
	BUILD=$BUILD "$IT_ROOT/bench/emudisk/emudisk-up.sh" "$emu" 1G > "$IT_T/log/emudisk-up.log" 2>&1 ||
		{ cat "$IT_T/log/emudisk-up.log"; return 1; }
	echo "$emu" >> "$IT_T/emudisks"	# teardown brings it down even if we fail
	it_private streams "$port" \
		'[cache]\ndirect_io = yes\n[readahead]\nio_size = 16M\n[engine]\nqueue_depth = 1\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 2000' \
		"\tpath = $emu/mnt/share" ''
	mkdir -p "$emu/mnt/share"
	for i in 1 2; do
		dd if=/dev/urandom of="$emu/mnt/share/s$i.mxf" bs=1M count=96 status=none
	done
	chmod -R a+rwX "$emu/mnt/share"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	for i in 1 2; do
		"$BUILD/rtio-stream" --url "smb://127.0.0.1:$port/s/s$i.mxf" --user "$IT_USER%$IT_PASS" \
			--bitrate 100M --chunk 1M --prebuffer 2 --duration 6 > "$IT_T/log/stream$i.json" 2>&1 &
		pids+=($!)
		it_track "$!" rtio-stream
		sleep 0.5
	done
	for i in 1 2; do
		wait "${pids[$((i - 1))]}" || rc=1
		out=$(cat "$IT_T/log/stream$i.json")
		echo "stream $i: $out"
		echo "$out" | grep -q '"misses":0[,}]' || rc=1
	done
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -E '^(readahead_blocks|deadline_misses|disk_reads)='
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -q '^readahead_blocks=[1-9]' || rc=1
	it_private_stop
	"$IT_ROOT/bench/emudisk/emudisk-down.sh" "$emu" > /dev/null 2>&1 || rc=1
	return $rc
}

# play_streams PORT SECONDS TAG FILE...: one paced 100 Mbit/s client per file,
# all started at the same instant (one `wait` for them all), half a second of
# client prebuffer (6 chunks of 1 MiB); the reports go to
# $IT_T/log/TAG-N.json. Returns 1 if a client failed (not for late chunks).
play_streams() {
	local port=$1 secs=$2 tag=$3 i=0 f rc=0 pids=()
	shift 3
	for f in "$@"; do
		i=$((i + 1))
		"$BUILD/rtio-stream" --url "smb://127.0.0.1:$port/s/$f" --user "$IT_USER%$IT_PASS" \
			--bitrate 100M --chunk 1M --prebuffer 6 --duration "$secs" \
			> "$IT_T/log/$tag-$i.json" 2> "$IT_T/log/$tag-$i.err" &
		pids+=($!)
		it_track "$!" rtio-stream
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || rc=1
	done
	return $rc
}

# stream_files DIR MIB FILE...: FILEs of MIB MiB of random data in DIR, each
# allocated in one piece first (a clip written once), readable by the
# clients, on the disk and not in the page cache.
stream_files() {
	local dir=$1 mib=$2 f
	shift 2
	mkdir -p "$dir"
	for f in "$@"; do
		fallocate -l "${mib}M" "$dir/$f"
		dd if=/dev/urandom of="$dir/$f" bs=1M count="$mib" conv=notrunc status=none
	done
	chmod -R a+rwX "$dir"
	sync
	echo 3 > /proc/sys/vm/drop_caches
}

# played_clean TAG N FIELD LABEL: the reports of play_streams' clients TAG-1
# to TAG-N, printed; 1 if one's FIELD (misses, misses_after_startup) is not 0.
played_clean() {
	local tag=$1 n=$2 field=$3 label=$4 i m rc=0
	for ((i = 1; i <= n; i++)); do
		echo "$label $i: $(cat "$IT_T/log/$tag-$i.json")"
		m=$(json_field "$IT_T/log/$tag-$i.json" "$field")
		[ "${m:-x}" = 0 ] || { echo "$label $i: ${m:-no report} late chunks ($field)"; rc=1; }
	done
	return $rc
}

# no_stream_after_close SOCK: once aiod has seen every session end (polled,
# up to 5 s), the same stats snapshot shows no stream reserved. A stopped
# playback's opens were freed, and their reservations released, only when
# their queued read-ahead was back: a replay then found seven reservations of
# nobody's, and admission demoted four of its streams.
no_stream_after_close() {
	local sock=$1 i st
	for ((i = 0; i < 50; i++)); do
		st=$("$BUILD/aiodctl" -s "$sock" stats) || { echo "aiodctl stats failed"; return 1; }
		if grep -qx 'sessions=0' <<< "$st"; then
			grep -E '^(sessions|streams|reserved_Bps|blocks_pinned)=' <<< "$st"
			grep -qx 'streams=0' <<< "$st" && grep -qx 'reserved_Bps=0' <<< "$st" && return 0
			echo "every session ended, and streams are still reserved"
			return 1
		fi
		sleep 0.1
	done
	echo "aiod still counts sessions 5 s after the clients ended"
	return 1
}

# Four streams opened at the same instant on the emulated disk with the
# README's stream settings (no calibration: io_size 16M, queue_depth 1,
# prebuffer_ms 1000): the start-up is a race for the disk, and after it
# (chunks due 2 s or more after the open) no chunk may be late. Then a
# replay of the same files while aiod's 256M cache is full and holds their
# first part from that playback (a bulk read filled it first, so that is what
# eviction took): a warm cache must not be worse than a cold one, so there no
# chunk may be late at all. Between the two, the stopped playback holds no
# reservation.
t_streams_together() {
	local port=$((IT_PORT + 6)) emu=$IT_T/emu2 rc=0
	BUILD=$BUILD "$IT_ROOT/bench/emudisk/emudisk-up.sh" "$emu" 1G > "$IT_T/log/emudisk2-up.log" 2>&1 ||
		{ cat "$IT_T/log/emudisk2-up.log"; return 1; }
	echo "$emu" >> "$IT_T/emudisks"
	PRIV_CACHE=256M it_private together "$port" \
		'[cache]\ndirect_io = yes\n[readahead]\nio_size = 16M\n[engine]\nqueue_depth = 1\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 1000' \
		"\tpath = $emu/mnt/share" ''
	stream_files "$emu/mnt/share" 128 t1.mxf t2.mxf t3.mxf t4.mxf filler.bin
	smbclient //127.0.0.1/s -p "$port" -U "$IT_USER%$IT_PASS" -c "get filler.bin /dev/null" \
		> "$IT_T/log/filler.log" 2>&1 || { cat "$IT_T/log/filler.log"; rc=1; }
	# cold: 3 s each: 37 MB of each file plus its read-ahead (24 blocks) fill the
	# cache on top of the filler, which eviction takes first
	play_streams "$port" 3 cold t1.mxf t2.mxf t3.mxf t4.mxf || rc=1
	played_clean cold 4 misses_after_startup "cold stream" || rc=1
	no_stream_after_close "$PRIV_SOCK" || rc=1
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -E '^(blocks_used|blocks_total|evictions)='
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -q '^evictions=[1-9]' ||
		{ echo "the cache never filled: the replay would not be from a full cache"; rc=1; }
	echo 3 > /proc/sys/vm/drop_caches	# aiod's cache stays warm, the kernel's does not
	play_streams "$port" 6 warm t1.mxf t2.mxf t3.mxf t4.mxf || rc=1
	played_clean warm 4 misses "warm stream" || rc=1
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats |
		grep -E '^(cache_hits|cache_misses|readahead_blocks|deadline_misses|evictions)='
	it_private_stop
	"$IT_ROOT/bench/emudisk/emudisk-down.sh" "$emu" > /dev/null 2>&1 || rc=1
	return $rc
}

# Clips no stream class names (*.mov where the class is *.mxf), four
# opened at the same instant on the emulated disk with the README's stream
# settings and the disk's calibration profile (as aiod --calibrate measured
# it: io_size 16M, queue_depth 1, best_effort_deadline_ms ~2.3 s): aiod reads
# them as best-effort sequential readers, and none of their chunks may be
# late, start-up included; a plain share with 8 MiB read-ahead plays 7 such
# streams clean. Before best-effort read-ahead was due by distance and a
# waited-for read went first, the first reader's whole window (4 x 16 MiB)
# went before the next one's first read: this test saw 4 late chunks of one
# clip (2 runs of 2); since, every chunk at least 369 ms early (3 runs).
t_streams_unmatched() {
	local port=$((IT_PORT + 12)) emu=$IT_T/emu4 rc=0
	BUILD=$BUILD "$IT_ROOT/bench/emudisk/emudisk-up.sh" "$emu" 1G > "$IT_T/log/emudisk4-up.log" 2>&1 ||
		{ cat "$IT_T/log/emudisk4-up.log"; return 1; }
	echo "$emu" >> "$IT_T/emudisks"
	# the emulated disk's profile (tests/unit/test_tuning.c has the same)
	printf '%s\n' '[profile]' 'version = 2' '[device]' 'request_us = 15240' '[random]' \
		'65536 = 4300000' '1048576 = 48800000' '4194304 = 104400000' '16777216 = 146000000' \
		'[sequential]' '65536 = 122200000' '1048576 = 148300000' '4194304 = 159200000' \
		'16777216 = 162700000' '[parallel]' 'size = 16777216' '1 = 146000000' '2 = 149000000' \
		> "$IT_T/emudisk.profile"
	PRIV_CACHE=256M it_private unmatched "$port" \
		"[cache]\ndirect_io = yes\n[admission]\nprofile = $IT_T/emudisk.profile\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 1000" \
		"\tpath = $emu/mnt/share" ''
	grep -q 'io_size 16M (profile' "$IT_T/log/aiod-unmatched.log" ||
		{ echo "aiod did not take its settings from the profile"; grep settings "$IT_T/log/aiod-unmatched.log"; rc=1; }
	stream_files "$emu/mnt/share" 96 c1.mov c2.mov c3.mov c4.mov
	play_streams "$port" 4 unmatched c1.mov c2.mov c3.mov c4.mov || rc=1
	played_clean unmatched 4 misses clip || rc=1
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats > "$IT_T/log/unmatched.stats" || rc=1
	grep -E '^(streams|readahead_blocks|cache_misses|disk_reads|engine_[a-z_]+)=' "$IT_T/log/unmatched.stats"
	grep -q '^streams=0$' "$IT_T/log/unmatched.stats" ||
		{ echo "a clip was taken for a stream: the test is not of best-effort readers"; rc=1; }
	# The engine's counters as the scheduler left them: the clips closed, so
	# nothing is queued or in the kernel; with queue_depth 1 and four
	# sequential readers the deadline order alone would seek between them on
	# every request, so some reads continued where the last one ended.
	grep -qx 'engine_queued=0' "$IT_T/log/unmatched.stats" &&
		grep -qx 'engine_inflight=0' "$IT_T/log/unmatched.stats" ||
		{ echo "aiodctl stats: the engine is not idle after the clips closed"; rc=1; }
	grep -q '^engine_continued=[1-9]' "$IT_T/log/unmatched.stats" ||
		{ echo "aiodctl stats: no read continued the one before it"; rc=1; }
	it_private_stop
	"$IT_ROOT/bench/emudisk/emudisk-down.sh" "$emu" > /dev/null 2>&1 || rc=1
	return $rc
}

# it_check_copy FILE CHUNK CHUNKS: FILE holds exactly what rtio-stream
# --greedy --write wrote (bench/stream/payload.c: one xorshift pattern, chunk
# k's number in its first 8 bytes), CHUNKS chunks of CHUNK bytes.
it_check_copy() {
	python3 - "$@" <<'PY'
import os, struct, sys
path, chunk, chunks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
x, m, words = 0x9e3779b97f4a7c15, (1 << 64) - 1, []
for _ in range(chunk // 8):
    x ^= (x << 13) & m
    x ^= x >> 7
    x ^= (x << 17) & m
    words.append(x)
pattern = struct.pack("<%dQ" % len(words), *words)
size = os.path.getsize(path)
if size != chunk * chunks:
    sys.exit("%s: %d bytes, the client wrote %d" % (path, size, chunk * chunks))
with open(path, "rb") as f:
    for k in range(chunks):
        if f.read(chunk) != struct.pack("<Q", k) + pattern[8:]:
            sys.exit("%s: chunk %d is not what the client wrote" % (path, k))
print("%s: %d chunks as written" % (path, chunks))
PY
}

# A bulk copy onto the share (a camera card offloaded at memory speed),
# already running when two streams start together, with the README's stream
# settings and the capacity a calibration of this disk would give (140 MB/s;
# aiod bounds a copy only where it knows it). Before any stream plays, aiod
# finds the copy steady (once it has written a second of that capacity in a
# row: left alone, the kernel let it dirty 2 GB here and then stalled one of
# its writes for 12 s) and writes it back itself (writeback.c's pump: its
# dirty data stays about a second of disk time, not gigabytes for the
# kernel's flusher to write when the streams start); once they play, aiod
# holds the copy's write answers while two of its write-back runs wait for
# the disk (writehold.c), so the copy cannot pile up runs that would come
# due before the streams' reads. Checked: the copy was a recorder with runs
# written back while no stream played, the holds happened, no stream chunk
# is late after start-up, the copy ended without an error, and every byte it
# was acknowledged is in the file. The disk (3G, its bytes in RAM) holds
# what the copy can write in its 10 s at the disk's speed.
t_streams_copy() {
	local port=$((IT_PORT + 11)) emu=$IT_T/emu3 rc=0 i n held chunks cpid
	BUILD=$BUILD "$IT_ROOT/bench/emudisk/emudisk-up.sh" "$emu" 3G > "$IT_T/log/emudisk3-up.log" 2>&1 ||
		{ cat "$IT_T/log/emudisk3-up.log"; return 1; }
	echo "$emu" >> "$IT_T/emudisks"
	it_private copy "$port" \
		'[cache]\ndirect_io = yes\n[readahead]\nio_size = 16M\n[engine]\nqueue_depth = 1\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 1000\n[admission]\ncapacity = 140000000' \
		"\tpath = $emu/mnt/share" ''
	stream_files "$emu/mnt/share" 96 c1.mxf c2.mxf
	"$BUILD/rtio-stream" --url "smb://127.0.0.1:$port/s/copy.bin" --user "$IT_USER%$IT_PASS" \
		--greedy --write --chunk 4M --duration 10 > "$IT_T/log/copy.json" 2> "$IT_T/log/copy.err" &
	cpid=$!
	it_track "$cpid" rtio-stream
	for ((i = 0; i < 25; i++)); do
		sleep 0.2
		"$BUILD/aiodctl" -s "$PRIV_SOCK" stats > "$IT_T/log/copy-alone.stats" || break
		grep -qx 'recorders=1' "$IT_T/log/copy-alone.stats" && break
	done
	echo "after $i polls with the copy alone:"
	grep -E '^(streams|recorders|writebacks|writeback_bytes|writes_held)=' "$IT_T/log/copy-alone.stats"
	grep -qx 'recorders=1' "$IT_T/log/copy-alone.stats" ||
		{ echo "aiod did not find the copy steady within 5 s"; rc=1; }
	grep -qx 'writebacks=0' "$IT_T/log/copy-alone.stats" &&
		{ echo "aiod wrote none of the copy back while no stream played"; rc=1; }
	play_streams "$port" 5 copyplay c1.mxf c2.mxf || rc=1
	wait "$cpid" || { echo "the copy failed: $(cat "$IT_T/log/copy.err")"; rc=1; }
	echo "copy: $(cat "$IT_T/log/copy.json")"
	played_clean copyplay 2 misses_after_startup stream || rc=1
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -E '^(writebacks|writeback_bytes|writes_held)='
	held=$("$BUILD/aiodctl" -s "$PRIV_SOCK" stats | sed -n 's/^writes_held=//p')
	[ "${held:-0}" -gt 0 ] || { echo "aiod never held a write of the copy"; rc=1; }
	chunks=$(json_field "$IT_T/log/copy.json" chunks)
	it_private_stop
	# The copy opened the file write-only, and this aiod runs with its
	# unit's capabilities (no CAP_DAC_OVERRIDE; the file is the test user's,
	# mode 0744): its runs must still have been waited for on a
	# description of aiod's own (writeback.c), not only started.
	ls -l "$emu/mnt/share/copy.bin"
	# (its log at level 3 names the copy's open; without it the check below proves nothing)
	grep -q "copy.bin" "$IT_T/log/aiod-copy.log" || { echo "aiod-copy.log does not name the copy"; rc=1; }
	if grep -F "copy.bin: no descriptor of aiod's own" "$IT_T/log/aiod-copy.log"; then
		echo "aiod only started the copy's write-back: it opened no descriptor to wait on"
		rc=1
	fi
	it_check_copy "$emu/mnt/share/copy.bin" $((4 << 20)) "${chunks:-0}" || rc=1
	"$IT_ROOT/bench/emudisk/emudisk-down.sh" "$emu" > /dev/null 2>&1 || rc=1
	return $rc
}
