#!/usr/bin/env bash
# Does MSG_ZEROCOPY save the sender's CPU on this machine? (issue 15's choice)
# Sends SIZE_MIB MiB over TCP with plain send() and with MSG_ZEROCOPY, over
# loopback and over a veth pair into a network namespace (which behaves like
# a NIC on the sender's side), RUNS interleaved rounds; reports the medians of
# wall time and sender CPU per GiB, and how many zero-copy sends the kernel
# completed with SO_EE_CODE_ZEROCOPY_COPIED (it copied them after all).
# Writes bench/results/zerocopy-<date>.{md,json}.
#
#   bench/zerocopy/run.sh [RUNS [SIZE_MIB]]       (defaults: 10, 2048)
#   env: BENCH_PORT (4490)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RUNS=${1:-10}
SIZE_MIB=${2:-2048}
PORT=${BENCH_PORT:-4490}
NS=rtiozc$$
die() { echo "bench/zerocopy: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (network namespace, veth pair)"

T=$(mktemp -d /tmp/rtio-zc.XXXXXX) || die "mktemp failed"
RECV_PID=""
cleanup() {
	[ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null && wait "$RECV_PID" 2>/dev/null
	ip link del "${NS}a" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -Wall -Wextra -Werror -O2 -o "$T/zc_probe" "$here/zc_probe.c" || die "cannot build zc_probe"
ip netns add "$NS" || die "ip netns add failed"
ip link add "${NS}a" type veth peer name "${NS}b" netns "$NS" || die "veth failed"
ip addr add 10.251.0.1/24 dev "${NS}a" && ip link set "${NS}a" up &&
	ip -n "$NS" addr add 10.251.0.2/24 dev "${NS}b" && ip -n "$NS" link set "${NS}b" up &&
	ip -n "$NS" link set lo up || die "veth addresses failed"

# one transfer: start the receiver (in the namespace for veth), send, wait for both
one() {	# path mode
	local path=$1 mode=$2 host
	if [ "$path" = veth ]; then
		ip netns exec "$NS" "$T/zc_probe" recv "$PORT" > "$T/recv.out" 2>&1 &
		host=10.251.0.2
	else
		"$T/zc_probe" recv "$PORT" > "$T/recv.out" 2>&1 &
		host=127.0.0.1
	fi
	RECV_PID=$!
	for _ in $(seq 50); do grep -q listening "$T/recv.out" && break; sleep 0.05; done
	"$T/zc_probe" send "$host" "$PORT" "$SIZE_MIB" "$mode" > "$T/send.out" 2>&1 ||
		die "send failed: $(cat "$T/send.out")"
	wait "$RECV_PID" || die "receiver failed: $(cat "$T/recv.out")"
	RECV_PID=""
	grep -q "received $((SIZE_MIB * 1024 * 1024)) bytes" "$T/recv.out" ||
		die "receiver got the wrong amount: $(cat "$T/recv.out")"
	sed "s/^{/{\"path\":\"$path\",\"run\":$r,\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",/" \
		"$T/send.out" | tee -a "$T/results.jsonl"
}

for r in $(seq "$RUNS"); do
	set -- "loopback copy" "loopback zc" "veth copy" "veth zc"
	for _ in $(seq $(((r - 1) % 4))); do first=$1; shift; set -- "$@" "$first"; done
	for pm in "$@"; do
		# shellcheck disable=SC2086
		one $pm
	done
done

stamp=$(date -u +%Y-%m-%d-%H%M%S)
mkdir -p "$root/bench/results"
python3 - "$T/results.jsonl" "$root/bench/results/zerocopy-$stamp" \
	"bench/zerocopy/run.sh $RUNS $SIZE_MIB" <<'PY' || die "report failed"
import json, os, platform, statistics, sys
src, prefix, command = sys.argv[1:4]
rows = [json.loads(l) for l in open(src) if l.strip()]
cpu = "unknown"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
summary = []
for path in ("loopback", "veth"):
    for mode in ("copy", "zc"):
        rs = [r for r in rows if r["path"] == path and r["mode"] == mode]
        if not rs:
            continue
        gib = rs[0]["mib"] / 1024.0
        summary.append({
            "path": path, "mode": mode, "runs": len(rs),
            "median_MBps": statistics.median(r["mib"] * 1.048576 / r["seconds"] for r in rs),
            "median_cpu_s_per_GiB": statistics.median(r["sender_cpu"] / gib for r in rs),
            "zc_sends": sum(r["zc_sends"] for r in rs),
            "zc_copied": sum(r["zc_copied"] for r in rs),
            "median_load": statistics.median(float(r["load"]) for r in rs)})
json.dump({"command": command, "cpu": cpu, "cpus": os.cpu_count(),
           "kernel": platform.release(), "summary": summary, "runs": rows},
          open(prefix + ".json", "w"), indent=1)
lines = ["# MSG_ZEROCOPY against send() on this machine", "",
         "Command: `%s`" % command, "",
         "Machine: %s, %d CPUs, kernel %s" % (cpu, os.cpu_count(), platform.release()), "",
         "Sender: 1 MiB send() calls from a 64 MiB buffer to a receiver that reads and drops; "
         "medians over interleaved runs. CPU = the sender process (user + system). "
         "copied = zero-copy sends the kernel completed with SO_EE_CODE_ZEROCOPY_COPIED.", "",
         "| path | mode | runs | MB/s | sender CPU s/GiB | zero-copy sends | copied by the kernel | load |",
         "|---|---|---|---|---|---|---|---|"]
for s in summary:
    lines.append("| %s | %s | %d | %.0f | %.3f | %d | %s | %.1f |" % (
        s["path"], s["mode"], s["runs"], s["median_MBps"], s["median_cpu_s_per_GiB"],
        s["zc_sends"], ("%d (%.0f%%)" % (s["zc_copied"], 100.0 * s["zc_copied"] / s["zc_sends"]))
        if s["zc_sends"] else "-", s["median_load"]))
open(prefix + ".md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "bench/zerocopy: results in bench/results/zerocopy-$stamp.{md,json}"
