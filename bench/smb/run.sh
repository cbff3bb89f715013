#!/usr/bin/env bash
# smbclient get and put of a big file through shares of one smbd: plain,
# "vfs objects = io_uring", rtio (with aiod, the README's settings) and
# rtioround (rtio with rtio:hits = aiod: every read a round trip to aiod, as
# before smbd copied cached reads itself), cache hot and cold,
# interleaved, RUNS times each. Reports median MB/s and server CPU seconds per
# GiB (smbd children's CPU as reaped by the smbd parent, plus aiod's), writes
# bench/results/smb-<date>.{json,md,png}.
#
#   bench/smb/run.sh [RUNS [SIZE_MIB]]        (defaults: 10 runs, 2048 MiB)
#   env: BUILD (build dir), BENCH_PORT (4450), BENCH_DIR (data dir, default
#        /var/tmp: the real disk, so "cold" means the device),
#        RTIO_DIRECT (1: aiod as deployed for streaming, [cache] direct_io =
#        yes and a cache that holds the file, so aiod's cache is the only
#        cache; 0: direct_io = no and a 512M cache, data copied twice),
#        THP_SHMEM (advise: shared memory may use huge pages during the run,
#        so aiod's cache gets them; restored afterwards; see bench/thp.sh),
#        BENCH_CONFIGS (default "plain iouring rtioround rtio"),
#        BENCH_OPS (default "get put"), BENCH_MODES (default "cold hot")
#        RTIO_STREAM_CLASS (1: aiod.ini also has the README's [stream.hd]
#        class, which matches none of the files here: steady writers are
#        then written back by aiod while no stream plays, as deployed)
#        RTIO_PROFILE (a device profile from aiod --calibrate for
#        [admission] profile; without one aiod knows no capacity and
#        leaves steady writers to the kernel)
#        BENCH_NET (lo: the client on 127.0.0.1, the default; veth: the
#        client in a network namespace across a veth pair, which the
#        kernel treats like a NIC's path, 10.252.0.1 <- 10.252.0.2)
#        BENCH_SENDFILE (1: every share with "use sendfile = yes" and "aio
#        read size = 0", the client unsigned: smbd's sendfile path, the
#        setting media facilities run to their edit bays. plain and
#        io_uring: the kernel's sendfile from the page cache; rtio: the
#        module's sendfile hook (vfs_rtio_sendfile.c). Before timing, a get
#        of a file aiod never read from an rtio share must show the reads
#        the hook left to the kernel in aiod's local_reads, or the run stops.)
#
# cold: page cache dropped, aiod restarted (empty cache; before every
# share's cold run, so they all follow a restart alike). hot: as a share's
# own reads leave the file: its pages dropped, then one get through the
# share, so plain and io_uring find it in the page cache and rtio with
# direct_io = yes (as deployed) in aiod's cache only (aiod reads O_DIRECT).
# BENCH_WARM=both instead fills both caches for every share (cat, and
# aiodctl cat for rtio): how rtio does when the page cache holds a file too
# (written or read outside aiod), not what rtio's own reads leave.
# BENCH_WARM=page: the page cache holds the file and aiod's cache does not
# (aiod restarted before every share's run): a file just written, render
# output or an ingest, read back.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../../scripts/smbconf.sh
. "$root/scripts/smbconf.sh"
# shellcheck source=../../scripts/pagecache.sh
. "$root/scripts/pagecache.sh"
# shellcheck source=../../scripts/aiodcaps.sh
. "$root/scripts/aiodcaps.sh"
# shellcheck source=../thp.sh
. "$root/bench/thp.sh"
# shellcheck source=../tcpcc.sh
. "$root/bench/tcpcc.sh"
BUILD=${BUILD:-$root/build}
RUNS=${1:-10}
SIZE_MIB=${2:-2048}
PORT=${BENCH_PORT:-4450}
USER_NAME=rtiotest
PASS=rtio-Bench-pw1
CONFIGS=${BENCH_CONFIGS:-plain iouring rtioround rtio}
OPS=${BENCH_OPS:-get put}
MODES=${BENCH_MODES:-cold hot}
SENDFILE=${BENCH_SENDFILE:-0}
WARM=${BENCH_WARM:-share}
NET=${BENCH_NET:-lo}
case $NET in
lo) HOST=127.0.0.1 ;;
veth) HOST=10.252.0.1 ;;
*) echo "bench/smb: BENCH_NET must be lo or veth, not '$NET'" >&2; exit 2 ;;
esac
NS=rtiosmb$$
case $WARM in
share | both | page) ;;
*) echo "bench/smb: BENCH_WARM must be share, both or page, not '$WARM'" >&2; exit 2 ;;
esac
case $SENDFILE in
0 | 1) ;;
*) echo "bench/smb: BENCH_SENDFILE must be 0 or 1, not '$SENDFILE'" >&2; exit 2 ;;
esac
RTIO_DIRECT=${RTIO_DIRECT:-1}

die() { echo "bench/smb: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (drops caches, starts smbd)"
# aiod runs with its unit's capabilities only, as deployed
rtio_aiod_as_deployed_init || die "cannot run aiod as its unit does"
[ -x "$BUILD/aiod" ] || die "$BUILD/aiod not built: run make"
smbd -b | grep -q MODULESDIR || die "smbd not installed: run make deps"
[ -f "$(smbd -b | sed -n 's/^ *MODULESDIR: *//p')/vfs/rtio.so" ] ||
	die "rtio.so not installed: run make install-module"

T=$(mktemp -d "${BENCH_DIR:-/var/tmp}/rtio-smbbench.XXXXXX") || die "mktemp failed"
chmod 755 "$T"
SMBD_PID=""
AIOD_PID=""
cleanup() {
	[ -n "$SMBD_PID" ] && kill -TERM "$SMBD_PID" 2>/dev/null && wait "$SMBD_PID" 2>/dev/null
	[ -n "$AIOD_PID" ] && kill -TERM "$AIOD_PID" 2>/dev/null && wait "$AIOD_PID" 2>/dev/null
	rm -rf "$T"
	bench_thp_restore
	bench_tcp_cc_restore
	if [ "$NET" = veth ]; then
		ip link del "${NS}a" 2>/dev/null
		ip netns del "$NS" 2>/dev/null
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_thp_enable
# the clients' TCP congestion control on 127.0.0.1 (bench/tcpcc.sh); veth
# runs go over 10.252.0.0/24 and keep the host's
tcp_cc=${BENCH_TCP_CC:-cubic}
[ "$NET" = veth ] && tcp_cc=host
bench_tcp_cc_set bench/smb "$tcp_cc" || die "BENCH_TCP_CC=$tcp_cc: see above"
CLIENT_NS=()
if [ "$NET" = veth ]; then
	ip netns add "$NS" || die "ip netns add $NS failed"
	ip link add "${NS}a" type veth peer name "${NS}b" netns "$NS" || die "veth pair failed"
	ip addr add 10.252.0.1/24 dev "${NS}a" && ip link set "${NS}a" up &&
		ip -n "$NS" addr add 10.252.0.2/24 dev "${NS}b" && ip -n "$NS" link set "${NS}b" up &&
		ip -n "$NS" link set lo up || die "veth addresses failed"
	CLIENT_NS=(ip netns exec "$NS")
fi
rtio_smb_dirs "$T"
mkdir -p "$T"/{aiod,log} "$T"/share/{plain,iouring,rtio,rtioround}
id "$USER_NAME" >/dev/null 2>&1 || useradd --system --no-create-home "$USER_NAME" ||
	die "cannot create user $USER_NAME"
chown "$USER_NAME" "$T"/share/*
if [ "$RTIO_DIRECT" = 1 ]; then
	cache="size = $((SIZE_MIB + 512))M
direct_io = yes"
else
	cache="size = 512M
direct_io = no"
fi
cat > "$T/aiod.ini" <<EOF
[global]
socket_path = $T/aiod/aiod.sock
[cache]
$cache
EOF
if [ "${RTIO_STREAM_CLASS:-0}" = 1 ]; then
	printf '[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 1000\n' >> "$T/aiod.ini"
fi
if [ -n "${RTIO_PROFILE:-}" ]; then
	[ -r "$RTIO_PROFILE" ] || die "RTIO_PROFILE $RTIO_PROFILE is not readable"
	printf '[admission]\nprofile = %s\n' "$RTIO_PROFILE" >> "$T/aiod.ini"
fi
rtio_smb_global "$T" "$PORT" > "$T/smb.conf"
# smbd sends with sendfile only for unsigned, unencrypted sessions
share_opts=""
CLIENT_OPTS=()
if [ "$SENDFILE" = 1 ]; then
	share_opts=$'\tuse sendfile = yes\n\taio read size = 0'
	CLIENT_OPTS=(--option='client signing=disabled')
fi
cat >> "$T/smb.conf" <<EOF
	log level = 0
	interfaces = lo $([ "$NET" = veth ] && echo 10.252.0.1/24)
[plain]
	path = $T/share/plain
	read only = no
$share_opts
[iouring]
	path = $T/share/iouring
	read only = no
	vfs objects = io_uring
$share_opts
[rtio]
	path = $T/share/rtio
	read only = no
	vfs objects = rtio
	rtio:socket = $T/aiod/aiod.sock
$share_opts
[rtioround]
	path = $T/share/rtioround
	read only = no
	vfs objects = rtio
	rtio:socket = $T/aiod/aiod.sock
	rtio:hits = aiod
$share_opts
EOF
printf '%s\n%s\n' "$PASS" "$PASS" | smbpasswd -c "$T/smb.conf" -a -s "$USER_NAME" >/dev/null ||
	die "smbpasswd failed"

start_aiod() {
	rm -f "$T/aiod/aiod.sock"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$T/aiod.ini" -F >> "$T/log/aiod.log" 2>&1 &
	AIOD_PID=$!
	for _ in $(seq 100); do [ -S "$T/aiod/aiod.sock" ] && return 0; sleep 0.1; done
	die "aiod did not start: $(tail -3 "$T/log/aiod.log")"
}
stop_aiod() {
	kill -TERM "$AIOD_PID" 2>/dev/null
	wait "$AIOD_PID" 2>/dev/null
	AIOD_PID=""
}
# one smbclient command on share $1 as the bench user
smb_cmd() {
	"${CLIENT_NS[@]}" smbclient "//$HOST/$1" -p "$PORT" -U "$USER_NAME%$PASS" \
		--option='client min protocol=SMB3' "${CLIENT_OPTS[@]}" -c "$2" > "$T/log/client.out" 2>&1 ||
		die "smbclient $1 '$2' failed: $(tail -2 "$T/log/client.out")"
}
drop_pages() { rtio_drop_pages "$1" || die "cannot drop the pages of $1"; }
# utime + stime of a process, plus its reaped children's (clock ticks)
cpu_ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# minor page faults of a process and its reaped children
minflt() { awk '{print $10 + $11}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# bytes aiod wrote back itself (a steady writer it found, record.c), since it started
# (0 for a share without aiod)
wb_bytes() { aiod_counter "$1" writeback_bytes; }
# one of aiod's counters for a share through aiod, 0 for one without
aiod_counter() {
	[ "$1" = 1 ] || { echo 0; return 0; }
	"$BUILD/aiodctl" -s "$T/aiod/aiod.sock" stats | sed -n "s/^$2=//p" | grep .
}

start_aiod
smbd -F --debug-stdout -s "$T/smb.conf" > "$T/log/smbd.log" 2>&1 &
SMBD_PID=$!
for _ in $(seq 200); do (exec 3<>/dev/tcp/"$HOST"/"$PORT") 2>/dev/null && break; sleep 0.1; done

echo "bench/smb: writing ${SIZE_MIB} MiB test files"
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom > "$T/src.bin" || die "cannot write $T/src.bin"
for c in $CONFIGS; do
	cp "$T/src.bin" "$T/share/$c/big.bin"
	chown "$USER_NAME" "$T/share/$c/big.bin"
done
sync

# The sendfile path is taken only when smbd's conditions hold (unsigned,
# unencrypted, no aio read): prove it on an rtio share before timing. A file
# aiod never read, its pages dropped, while nothing is owed a rate: on the
# sendfile path the module leaves it to the kernel and reports the reads as
# its own (local_reads); on any other path they go to aiod, sequential.
if [ "$SENDFILE" = 1 ]; then
	for c in $CONFIGS; do
		case $c in rtio*) ;; *) continue ;; esac
		drop_pages "$T/share/$c/big.bin"
		l0=$(aiod_counter 1 local_reads) && m0=$(aiod_counter 1 cache_misses) || die "aiodctl stats failed"
		smb_cmd "$c" "get big.bin /dev/null"
		sleep 0.5	# the session's last report
		l1=$(aiod_counter 1 local_reads) && m1=$(aiod_counter 1 cache_misses) || die "aiodctl stats failed"
		[ "$l1" -gt "$l0" ] && [ "$m1" = "$m0" ] ||
			die "share $c did not take rtio's sendfile path (local_reads $l0 -> $l1, cache_misses $m0 -> $m1)"
		echo "bench/smb: $c took rtio's sendfile path ($((l1 - l0)) reads left to the kernel)"
	done
fi

HZ=$(getconf CLK_TCK)
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
out=$T/results.jsonl
for r in $(seq "$RUNS"); do
	# Rotate the order each round so no configuration always goes first.
	set -- $CONFIGS
	for _ in $(seq $(((r - 1) % $#))); do first=$1; shift; set -- "$@" "$first"; done
	for c in "$@"; do
		case $c in rtio*) aiod_share=1 ;; *) aiod_share=0 ;; esac
		for mode in $MODES; do
			for op in $OPS; do
				if [ "$mode" = cold ]; then
					sync
					echo 3 > /proc/sys/vm/drop_caches
					# every share's cold run, not only rtio's: restarting aiod
					# frees and maps its whole cache (mlocked, huge pages), and
					# what that costs the next seconds' reads is the same for all
					stop_aiod
					start_aiod
				else
					cat "$T/src.bin" > /dev/null
					if [ "$WARM" = page ]; then
						cat "$T/share/$c/big.bin" > /dev/null
						stop_aiod
						start_aiod
					elif [ "$WARM" = both ]; then
						cat "$T/share/$c/big.bin" > /dev/null
						if [ "$aiod_share" = 1 ] && [ "$op" = get ]; then
							"$BUILD/aiodctl" -s "$T/aiod/aiod.sock" cat "$T/share/$c/big.bin" \
								> /dev/null || die "warming aiod's cache failed"
						fi
					elif [ "$op" = get ]; then
						# what the share's own last read left in its caches
						drop_pages "$T/share/$c/big.bin"
						smb_cmd "$c" "get big.bin /dev/null"
					fi
				fi
				s0=$(cpu_ticks "$SMBD_PID")
				f0=$(minflt "$SMBD_PID")
				a0=$( [ "$aiod_share" = 1 ] && cpu_ticks "$AIOD_PID" || echo 0)
				w0=$(wb_bytes "$aiod_share") || die "aiodctl stats failed"
				d0=$(aiod_counter "$aiod_share" disk_read_bytes) || die "aiodctl stats failed"
				t0=$(date +%s.%N)
				if [ "$op" = get ]; then
					cmd="get big.bin /dev/null"
				else
					cmd="put $T/src.bin put.bin"
				fi
				smb_cmd "$c" "$cmd"
				t1=$(date +%s.%N)
				sleep 0.2	# let smbd reap the connection's child
				s1=$(cpu_ticks "$SMBD_PID")
				f1=$(minflt "$SMBD_PID")
				a1=$( [ "$aiod_share" = 1 ] && cpu_ticks "$AIOD_PID" || echo 0)
				w1=$(wb_bytes "$aiod_share") || die "aiodctl stats failed"
				d1=$(aiod_counter "$aiod_share" disk_read_bytes) || die "aiodctl stats failed"
				printf '{"run":%d,"config":"%s","mode":"%s","op":"%s","seconds":%s,"mib":%d,"smbd_cpu":%s,"aiod_cpu":%s,"smbd_minflt":%d,"aiod_writeback_mib":%d,"aiod_disk_read_mib":%d,"load":"%s"}\n' \
					"$r" "$c" "$mode" "$op" "$(calc "$t1 - $t0")" "$SIZE_MIB" \
					"$(calc "($s1 - $s0) / $HZ")" "$(calc "($a1 - $a0) / $HZ")" \
					"$((f1 - f0))" "$(((w1 - w0) >> 20))" "$(((d1 - d0) >> 20))" \
					"$(cut -d' ' -f1 /proc/loadavg)" >> "$out"
				tail -n 1 "$out"
			done
		done
	done
done

stamp=$(date -u +%Y-%m-%d-%H%M)
mkdir -p "$root/bench/results"
/usr/bin/python3 "$here/report.py" "$out" "$root/bench/results/smb-$stamp" \
	"RTIO_DIRECT=$RTIO_DIRECT RTIO_STREAM_CLASS=${RTIO_STREAM_CLASS:-0} BENCH_SENDFILE=$SENDFILE BENCH_WARM=$WARM BENCH_NET=$NET${RTIO_PROFILE:+ RTIO_PROFILE=$RTIO_PROFILE} BENCH_CONFIGS='$CONFIGS' BENCH_OPS='$OPS' BENCH_MODES='$MODES' bench/smb/run.sh $RUNS $SIZE_MIB" ||
	die "report failed"
{
	printf '\nshmem_enabled during the run: %s; aiod: %s\n' "$(bench_thp_setting)" \
		"$(grep -m1 'cache:' "$T/log/aiod.log" | sed 's/.*NOTICE\] //')"
	printf 'TCP congestion control of the clients'"'"' connections (bench/tcpcc.sh): %s\n' "$BENCH_TCP_CC_IN_EFFECT"
	# how much of the puts aiod wrote back itself (a steady writer it found:
	# record.c, writeback.c), from its stats around each run
	printf '\naiod %s; of the puts through aiod, MiB aiod wrote back itself (median per put): %s\n' \
		"$(grep -m1 'settings:' "$T/log/aiod.log" | sed 's/.*NOTICE\] //')" \
		"$(python3 -c 'import json,sys,statistics as st
v=[j["aiod_writeback_mib"] for j in map(json.loads,open(sys.argv[1])) if j["op"]=="put" and j["config"].startswith("rtio")]
print(st.median(v) if v else "no put through aiod")' "$out")"
	# what the device read for aiod during the gets (loads, pass-through reads)
	printf '\nMiB the device read for aiod per get through aiod (median): %s\n' \
		"$(python3 -c 'import json,sys,statistics as st
v=[j["aiod_disk_read_mib"] for j in map(json.loads,open(sys.argv[1])) if j["op"]=="get" and j["config"].startswith("rtio")]
print(st.median(v) if v else "no get through aiod")' "$out")"
	printf '\naiod.ini of the rtio configuration (besides socket_path):\n\n```\n'
	grep -v '^socket_path' "$T/aiod.ini"
	printf '```\n'
} >> "$root/bench/results/smb-$stamp.md"
echo "bench/smb: results in bench/results/smb-$stamp.{md,json,png}"
