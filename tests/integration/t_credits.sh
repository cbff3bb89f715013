# QoS (issue 13) beyond pacing reads and writes, through the real smbd:
#   - the credit-grant hook: a connection whose flow is limited gets a lower
#     SMB2 credit ceiling (vfs_rtio_credits.c), and a client that floods it
#     with outstanding requests sees no error, smbd no panic and no hang;
#   - a server-side copy is charged to the flow (vfs_rtio_coherence.c):
#     copy_file_range() inside smbd would otherwise move any amount of data
#     past the limit.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# credits_sample: the first session's credits as "granted max smbd_max held", or nothing
credits_sample() {
	"$BUILD/aiodctl" -s "$PRIV_SOCK" sessions --json -i 0 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]:
    if s["credits_max"] is not None:
        print(s["credits_granted"], s["credits_max"], s["credits_smbd_max"], s["qos_held"])
        break'
}

# smbtorture's smb2.bench.read keeps 64 reads of 1 MiB outstanding on one
# connection and asks for all of smbd's 8192 credits, under a limit of
# 64 MiB/s: aiod publishes a ceiling of 1024 credits with that rate (a
# second of it). A server cannot take back credits it granted, so the module
# follows what the client holds down as it spends them (1024 a second at
# this rate) until the ceiling is reached; from then on smbd grants no more
# than 1024, and the client queues the rest of its reads on its own side.
t_qos_credits_flood() {
	local port=$((IT_PORT + 9)) out rc=0 tpid granted max orig held first last
	it_private qoscred "$port" '[qos.capped]\nmatch_user = rtiotest\nlimit = 64M' '' ''
	smbtorture "//127.0.0.1/s" -p "$port" -U "$IT_USER%$IT_PASS" \
		--option=torture:nprocs=1 --option=torture:qdepth=64 \
		--option=torture:io_size=1048576 --option=torture:timelimit=10 \
		smb2.bench.read > "$PRIV_DIR/torture.out" 2>&1 &
	tpid=$!
	it_track "$tpid" smbtorture
	: > "$PRIV_DIR/credits.samples"
	for _ in $(seq 18); do
		sleep 0.5
		credits_sample >> "$PRIV_DIR/credits.samples"
	done
	wait "$tpid" || { echo "smbtorture smb2.bench.read failed:"; tail -n 15 "$PRIV_DIR/torture.out"; rc=1; }
	grep -E "^(success|failure|error)" "$PRIV_DIR/torture.out" | sed 's/^/    /'
	first=$(head -n 1 "$PRIV_DIR/credits.samples")
	last=$(tail -n 1 "$PRIV_DIR/credits.samples")
	read -r granted max orig held <<< "$last"
	echo "credits (granted ceiling smbd's held): first sample $first, last $last ($(wc -l < "$PRIV_DIR/credits.samples") samples)"
	if [ -z "$last" ]; then
		echo "aiodctl sessions never showed a credit ceiling"
		rc=1
	elif [ "$max" != 1024 ] || [ "$orig" != 8192 ]; then
		echo "the ceiling did not reach the 1024 credits of a second at 64 MiB/s"
		rc=1
	fi
	# smbd never grants above the ceiling, and the ceiling only comes down
	awk 'NF == 4 { if ($1 > $2 || (n++ > 0 && $2 > prev)) bad = 1; prev = $2 } END { exit bad }' \
		"$PRIV_DIR/credits.samples" ||
		{ echo "granted above the ceiling, or the ceiling went up:"; sed 's/^/    /' "$PRIV_DIR/credits.samples"; rc=1; }
	if grep -E "PANIC|smb_panic|credit charge > max credits|terminating connection" \
		"$IT_T/log/smbd-qoscred.log" > "$PRIV_DIR/panic.txt"; then
		echo "smbd's log:"
		head -n 5 "$PRIV_DIR/panic.txt"
		rc=1
	fi
	# the server still answers: a new connection lists the share
	out=$(timeout 20 smbclient "//127.0.0.1/s" -p "$port" -U "$IT_USER%$IT_PASS" -c ls 2>&1) ||
		{ echo "smbclient after the flood: $out"; rc=1; }
	kill -0 "$PRIV_SMBD_PID" 2>/dev/null || { echo "smbd is gone"; rc=1; }
	it_private_stop
	return $rc
}

# A 24 MiB server-side copy under a 16 MiB/s limit reads and writes 48 MiB
# on the server: charged both ways it takes about 3 s; uncharged it takes
# well under a second (copy_file_range in the page cache); with its write
# charged twice (a MAX() of a charge did that until 2026-11-24), 4.5 s.
t_qos_copy_charged() {
	local port=$((IT_PORT + 9)) out el rc=0
	it_private qoscopy "$port" '[qos.capped]\nmatch_user = rtiotest\nlimit = 16M' '' ''
	head -c $((24 << 20)) /dev/urandom > "$PRIV_DIR/share/src.bin"
	chmod a+rw "$PRIV_DIR/share/src.bin"
	out=$(timeout 60 "$IT_T/bin/itest_copy" "smb://127.0.0.1:$port/s/src.bin" \
		"smb://127.0.0.1:$port/s/dst.bin" $((24 << 20)) 2>&1) || true
	case $out in
	"ok copy "*) ;;
	*) echo "server-side copy failed: $out"; it_private_stop; return 1 ;;
	esac
	el=${out##* }
	echo "24 MiB server-side copy under a 16 MiB/s limit (48 MiB read and written): $el s"
	awk -v e="$el" 'BEGIN { exit !(e >= 2.4) }' || { echo "the copy was not charged (want >= 2.4 s)"; rc=1; }
	awk -v e="$el" 'BEGIN { exit !(e <= 3.9) }' ||
		{ echo "the copy was charged more than once each way (want <= 3.9 s)"; rc=1; }
	cmp "$PRIV_DIR/share/src.bin" "$PRIV_DIR/share/dst.bin" || { echo "the copy differs"; rc=1; }
	it_private_stop
	return $rc
}
