#!/usr/bin/env bash
# make check: the benchmarks still build and their fio engine still works.
# bench/ runs only under make bench, so its parts can rot unseen: bench/fio
# once built its own aiod from a file list that fell behind the tree and
# stopped linking, and nothing said so until a benchmark was wanted. This
# checks, in a few seconds, what would break first:
#   - every bench shell script parses (bash -n), every Python script compiles;
#   - bench/rt/startup_bound.py still gives the start-up counts the README cites;
#   - bench/rt/late_reads.py sorts late chunks (in aiod, outside it, a
#     knock-on) and still parses a real aiod's read trace (log level 4);
#   - bench/rt/report.py pools a key swept twice into one row;
#   - bench/fio/build.sh builds the fio engine, hit_rtt, aiod and aiodctl;
#   - fio reads a small file through the engine and a real aiod (random
#     4 KiB and sequential 1 MiB, 2 s each), without an error, and aiod
#     counts the reads; with rtio_route=module random 4 KiB misses are the
#     engine's own reads, and aiod is told of them.
# Ends with "bench: N passed, M failed". Every process it starts is stopped
# by its pid; its files live in one temporary directory.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
BUILD=${BUILD:-$here/build}
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac
AIOD=$BUILD/aiod
AIODCTL=$BUILD/aiodctl
ENGINE=$BUILD/fio/rtio_engine.so
pass=0
fail=0
aiod_pid=""
trace_pid=""
W=$(mktemp -d "${TMPDIR:-/tmp}/rtio-benchcheck.XXXXXX")

cleanup() {
	if [ -n "$trace_pid" ]; then
		kill "$trace_pid" 2>/dev/null
		wait "$trace_pid" 2>/dev/null
	fi
	if [ -n "$aiod_pid" ]; then
		kill "$aiod_pid" 2>/dev/null
		wait "$aiod_pid" 2>/dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_aiod NAME LEVEL: an aiod with a 16 MiB cache of 1 MiB blocks, its
# socket in $W/NAME/, its log $W/NAME.log, at log level LEVEL; its pid in
# started_pid. 0 once it answers STATS (within 10 s), 1 if it does not.
start_aiod() {
	local name=$1 level=$2
	mkdir -p "$W/$name"
	cat > "$W/$name.ini" <<EOT
[global]
socket_path = $W/$name/aiod.sock
[cache]
size = 16M
block_size = 1M
EOT
	"$AIOD" -c "$W/$name.ini" -F -d "$level" > "$W/$name.log" 2>&1 &
	started_pid=$!
	for _ in $(seq 1 100); do
		"$AIODCTL" -s "$W/$name/aiod.sock" stats > /dev/null 2>&1 && return 0
		kill -0 "$started_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

ok() { echo "PASS bench $1"; pass=$((pass + 1)); }
bad() { echo "FAIL bench $1: $2"; fail=$((fail + 1)); }

# 1. every script parses
n=0 broken=""
while IFS= read -r f; do
	n=$((n + 1))
	bash -n "$f" 2> "$W/parse.err" || broken="$broken $f ($(head -1 "$W/parse.err"))"
done < <(find bench -name '*.sh' | sort)
[ -z "$broken" ] && ok "shell scripts parse ($n)" || bad "shell scripts parse" "$broken"
n=0 broken=""
while IFS= read -r f; do
	n=$((n + 1))
	/usr/bin/python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$f" \
		2> "$W/parse.err" || broken="$broken $f ($(tail -1 "$W/parse.err"))"
done < <(find bench scripts -name '*.py' | sort)
[ -z "$broken" ] && ok "Python scripts compile ($n)" || bad "Python scripts compile" "$broken"
# The start-up counts the README's stream rows cite (a scheduler that knows
# the client's buffer, on the emulated disk): 10 streams of 100 Mbit/s with
# a 0.5 s buffer, 5 of 200, 3 of 200 with a 2-chunk (84 ms) buffer, and the
# mix 4 x 200 + 4 x 50 held (bench/rt/README.md works them through).
bound=$(/usr/bin/python3 bench/rt/startup_bound.py; /usr/bin/python3 bench/rt/startup_bound.py --bitrate 200M;
	/usr/bin/python3 bench/rt/startup_bound.py --bitrate 200M --buffer-ms 84;
	/usr/bin/python3 bench/rt/startup_bound.py --mix 4x200M,4x50M)
if grep -q '^100M .*holds 10 .*none found for 11' <<< "$bound" &&
   grep -q '^200M .*504 ms .*holds 5 .*none found for 6' <<< "$bound" &&
   grep -q '^200M .*84 ms .*holds 3 .*none found for 4' <<< "$bound" &&
   grep -q 'mix 4x200M,4x50M .*holds it' <<< "$bound"; then
	ok "bench/rt/startup_bound.py: 10 at 100M, 5 at 200M, 3 at 200M with 84 ms, the mix held"
else
	bad "bench/rt/startup_bound.py" "$(tr '\n' ' ' <<< "$bound")"
fi
# ... and refuses what it cannot model with the reason, not a traceback.
/usr/bin/python3 bench/rt/startup_bound.py --mix 4x200M,4x > "$W/sb.out" 2> "$W/sb.err"; rc=$?
if [ $rc = 2 ] && grep -q "error: '4x': '' is not a bitrate" "$W/sb.err" && ! grep -q Traceback "$W/sb.err"; then
	ok "bench/rt/startup_bound.py --mix 4x200M,4x: refused, naming '4x'"
else
	bad "bench/rt/startup_bound.py --mix 4x200M,4x" "rc $rc: $(tail -1 "$W/sb.err")"
fi

# bench/tcpcc.sh: a name the kernel does not have is refused with the ones
# it has, and "host" leaves the route alone and names the host's (setting
# one would change this machine's loopback route, which a test does not do).
tcc=$(bash -c '. bench/tcpcc.sh; bench_tcp_cc_set bench-check no-such-cc; echo "rc=$?";
	bench_tcp_cc_set bench-check host; echo "host=$BENCH_TCP_CC_IN_EFFECT saved=$BENCH_ROUTE_SAVED."' 2>&1)
if grep -q "bench-check: TCP congestion control 'no-such-cc' is not one of this kernel's ($(cat /proc/sys/net/ipv4/tcp_available_congestion_control))" <<< "$tcc" &&
   grep -q '^rc=1$' <<< "$tcc" &&
   grep -q "^host=$(sysctl -n net.ipv4.tcp_congestion_control) saved=\.$" <<< "$tcc"; then
	ok "bench/tcpcc.sh: an unknown congestion control refused by name, host left alone"
else
	bad "bench/tcpcc.sh" "$(tr '\n' ' ' <<< "$tcc")"
fi

# late_reads.py puts each late chunk in aiod or outside it, from the lines
# rtio-stream --log-late and aiod's read trace (log level 4) write
mkdir -p "$W/run"
echo '{"url":"smb://127.0.0.1:4445/media/s.mxf"}' > "$W/run/stream-0.json"
cat > "$W/run/stream-0.err" <<'EOT'
late: chunk 5 offset 5242880 requested 21:00:01.000, read 90.0 ms, late by 20.0 ms
late: chunk 6 offset 6291456 requested 21:00:01.091, read 0.8 ms, late by 5.0 ms
late: chunk 40 offset 41943040 requested 21:00:03.000, read 120.0 ms, late by 36.0 ms
EOT
cat > "$W/run/aiod.log" <<'EOT'
21:00:01.089 aiod[DEBUG] aiod_read0_finish:255: read: s.mxf off 5242880 len 1048576 answered 1048576 in 88.5 ms, waited for the disk, playing
21:00:01.092 aiod[DEBUG] aiod_read_hit:330: hit: s.mxf off 6291456 len 1048576
21:00:03.001 aiod[DEBUG] aiod_read_hit:330: hit: s.mxf off 41943040 len 1048576
EOT
lr=$(/usr/bin/python3 bench/rt/late_reads.py "$W/run" 2>&1)
if grep -q 'chunk 5 .*88.5 ms in aiod (waited for the disk).*late in aiod' <<< "$lr" &&
   grep -q 'chunk 6 .*requested late' <<< "$lr" &&
   grep -q 'chunk 40 .*a hit: the smbd.s copy done by +1 ms, the chunk at the client 119 ms after it: late outside aiod' <<< "$lr"; then
	ok "bench/rt/late_reads.py: a disk wait in aiod, a knock-on, a stall outside aiod"
else
	bad "bench/rt/late_reads.py" "$(tr '\n' ' ' <<< "$lr")"
fi

# report.py: a key swept twice (--greedy 0,1,0,1) is one row of pooled runs,
# not a row per sweep (rt-20261206-2348: 2 runs per greedy, each row once)
rp=$(/usr/bin/python3 bench/rt/report.py render bench/results/rt-20261206-2348.json "$W/report" 2>&1)
if [ "$(grep -c '^| 4x200M,4x50M | 0 | .* | 2 |$' "$W/report.md" 2>/dev/null)" = 1 ] &&
   [ "$(grep -c '^| 4x200M,4x50M | 1 | .* | 2 |$' "$W/report.md")" = 1 ]; then
	ok "bench/rt/report.py: a key swept twice is one row of its 2 runs"
else
	bad "bench/rt/report.py render" "$(tr '\n' ' ' <<< "$rp") $(grep '^| 4x200M' "$W/report.md" 2>/dev/null | tr '\n' ' ')"
fi

# 2. the fio engine and what it talks to build
if BUILD=$BUILD bench/fio/build.sh > "$W/build.log" 2>&1 && [ -x "$AIOD" ] && [ -f "$ENGINE" ] &&
   [ -x "$BUILD/fio/hit_rtt" ]; then
	ok "bench/fio/build.sh"
else
	bad "bench/fio/build.sh" "$(tail -5 "$W/build.log")"
	echo "bench: $pass passed, $fail failed"
	exit 1
fi

# 3. fio through the engine and a real aiod: a cache smaller than the file,
# so the random reads take the pass-through path and the sequential ones
# the cache, as in bench/mixed and bench/fio
start_aiod aiod 1
up=$?
aiod_pid=$started_pid
if [ "$up" -ne 0 ]; then
	bad "aiod for fio" "did not come up: $(tail -3 "$W/aiod.log")"
else
	head -c $((64 << 20)) /dev/urandom > "$W/data"
	for job in "randread 4k" "read 1M"; do
		read -r rw bs <<< "$job"
		stats=$("$AIODCTL" -s "$W/aiod/aiod.sock" stats)
		before=$(sed -n "s/^requests=//p" <<< "$stats")
		disk0=$(sed -n "s/^disk_read_bytes=//p" <<< "$stats")
		# --norandommap: fio's map makes runs of adjacent reads late in a
		# pass, which are a sequential reader's (bench/mixed/README.md)
		if timeout 60 fio --name=check --filename="$W/data" --thread --rw="$rw" --bs="$bs" \
			--norandommap \
			--iodepth=4 --time_based --runtime=2 --ioengine=external:"$ENGINE" \
			--rtio_socket="$W/aiod/aiod.sock" --rtio_route=aiod --output-format=json \
			--output="$W/fio.json" \
			> "$W/fio.log" 2>&1; then
			got=$(/usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["io_bytes"], j["error"])' "$W/fio.json")
			stats=$("$AIODCTL" -s "$W/aiod/aiod.sock" stats)
			after=$(sed -n "s/^requests=//p" <<< "$stats")
			read -r bytes err <<< "$got"
			if [ "${bytes:-0}" -gt 0 ] && [ "$err" = 0 ] && [ "${after:-0}" -gt "${before:-0}" ]; then
				ok "fio $rw $bs through aiod ($((bytes >> 20)) MiB, aiod requests $before -> $after)"
			else
				bad "fio $rw $bs through aiod" "fio read $bytes bytes, error $err, aiod requests $before -> $after"
			fi
			# issue 12: aiod reads from the device what a random reader
			# asked for, not a whole 1 MiB block per 4 KiB miss (which was
			# 256x); at most 1.2x, plus 2 blocks for a stray read-ahead
			if [ "$rw" = randread ]; then
				disk1=$(sed -n "s/^disk_read_bytes=//p" <<< "$stats")
				dev=$(( ${disk1:-0} - ${disk0:-0} ))
				if [ "${bytes:-0}" -gt 0 ] && [ "$dev" -gt 0 ] &&
				   [ $((dev * 10)) -le $((bytes * 12 + (2 << 20) * 10)) ]; then
					ok "random 4k through aiod: the device read $dev bytes for fio's $bytes"
				else
					bad "random 4k through aiod: read amplification" \
						"the device read $dev bytes for fio's $bytes (more than 1.2x + 2 MiB)"
				fi
			fi
		else
			bad "fio $rw $bs through aiod" "$(tail -5 "$W/fio.log")"
		fi
	done
	# rtio_route=module: random 4 KiB misses of a file 4x the cache are the
	# engine's own reads, as they are smbd's (rtio:random = local), and aiod
	# is told how many (LOCAL_READS); every read through aiod they would not be
	before=$("$AIODCTL" -s "$W/aiod/aiod.sock" stats | sed -n "s/^local_reads=//p")
	if timeout 60 fio --name=check --filename="$W/data" --thread --rw=randread --bs=4k \
		--iodepth=4 --time_based --runtime=2 --ioengine=external:"$ENGINE" \
		--rtio_socket="$W/aiod/aiod.sock" --rtio_route=module --output-format=json \
		--output="$W/fio.json" > "$W/fio.log" 2>&1; then
		got=$(/usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["io_bytes"], j["read"]["total_ios"], j["error"])' "$W/fio.json")
		read -r bytes ios err <<< "$got"
		# fio's cleanup told aiod over the session's queue: aiod may take a moment
		told=0
		for _ in $(seq 1 30); do
			after=$("$AIODCTL" -s "$W/aiod/aiod.sock" stats | sed -n "s/^local_reads=//p")
			told=$(( ${after:-0} - ${before:-0} ))
			[ "$told" -ge $(( ${ios:-1} / 2 )) ] && break
			sleep 0.1
		done
		if [ "${bytes:-0}" -gt 0 ] && [ "$err" = 0 ] && [ "$told" -ge $(( ${ios:-1} / 2 )) ]; then
			ok "fio randread 4k routed as the module routes it ($ios reads, aiod told of $told local)"
		else
			bad "fio randread 4k routed as the module routes it" "fio read $bytes bytes in $ios reads, error $err, aiod local_reads $before -> $after"
		fi
	else
		bad "fio randread 4k routed as the module routes it" "$(tail -5 "$W/fio.log")"
	fi
fi

# late_reads.py parses aiod's own read trace (log level 4), not only the
# lines above: a few reads through a traced aiod, then a late chunk made at
# the time and offset of the first traced read must be found in it
mkdir -p "$W/trun"
start_aiod taiod 4
trace_pid=$started_pid
head -c $((4 << 20)) /dev/urandom > "$W/traced"
timeout 60 fio --name=trace --filename="$W/traced" --thread --rw=read --bs=1M --size=4M \
	--ioengine=external:"$ENGINE" --rtio_socket="$W/taiod/aiod.sock" --rtio_route=aiod \
	> "$W/tfio.log" 2>&1
# 12:34:56.789 aiod[DEBUG] aiod_read0_finish:255: read: traced off 0 len ... (or hit:)
tline=$(grep -m1 -E '^[0-9:.]+ .*(read|hit): [^ ]+ off [0-9]+ len' "$W/taiod.log")
if [ -n "$tline" ]; then
	read -r tt _ _ _ tname _ toff _ <<< "$tline"
	echo "{\"url\":\"smb://127.0.0.1/media/$tname\"}" > "$W/trun/stream-0.json"
	echo "late: chunk 0 offset $toff requested $tt, read 50.0 ms, late by 10.0 ms" > "$W/trun/stream-0.err"
	cp "$W/taiod.log" "$W/trun/aiod.log"
	lr=$(/usr/bin/python3 bench/rt/late_reads.py "$W/trun" 2>&1)
fi
if [ -n "$tline" ] && grep -qE 'chunk 0 .*(aiod answered|a hit)' <<< "$lr"; then
	ok "bench/rt/late_reads.py finds a late chunk in a real aiod's trace"
else
	bad "bench/rt/late_reads.py on a real aiod's trace" \
		"trace line '${tline:-none}' ($(tail -2 "$W/tfio.log" | tr '\n' ' ')): $(tr '\n' ' ' <<< "${lr:-}")"
fi
echo "bench: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
