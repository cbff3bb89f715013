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
