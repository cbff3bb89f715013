#!/usr/bin/env bash
# QoS (issue 13): what pacing costs and how exactly a limit holds, through a
# real smbd. One private smbd (share "plain" and share "rtio") and one aiod
# whose [qos.NAME] policy is switched by reload (SIGHUP) between rounds:
#
#   plain     no module
#   rtio      rtio, no [qos.NAME] section: no flow, nothing charged
#   rtio-qos  rtio with "[qos.all] limit = 1T": every read charged to a
#             shared flow whose limit is never reached (the cost of pacing)
#   limited   rtio with "[qos.all] limit = LIMIT": the limit's accuracy
#
# Each round: two greedy readers (rtio-stream --greedy, 1 MiB reads, one
# connection and one smbd each) on their own 256 MiB file, in aiod's cache,
# for DURATION seconds; rounds interleaved (order rotated), RUNS times.
# Reports medians of MB/s and server CPU seconds per GiB (smbd's process
# group and aiod), and the limited round's rate against the limit. Writes
# bench/results/qos-<date>.{md,json}.
#
#   bench/qos/run.sh [RUNS [DURATION [LIMIT]]]   (defaults 10, 10, 64M)
#   env: BUILD, BENCH_PORT, BENCH_DIR (bench/mixed/lib.sh)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
NAME=qos
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../mixed/lib.sh
. "$here/../mixed/lib.sh"
RUNS=${1:-10}
DURATION=${2:-10}
LIMIT=${3:-64M}
STREAM=$BUILD/rtio-stream
CONFIGS="plain rtio rtio-qos limited"

mixed_need_root_tools
[ -x "$STREAM" ] || die "$STREAM not built: run make"
PORT=$(mixed_port)
mixed_tmp
mixed_aiod_ini 1G
cp "$T/aiod.ini" "$T/aiod-base.ini"
mixed_smb_conf "$PORT" plain rtio
for s in plain rtio; do
	for i in 1 2; do
		[ -f "$T/share/plain/f$i.bin" ] || head -c $((256 << 20)) /dev/urandom > "$T/share/plain/f$i.bin"
		[ "$s" = plain ] || ln "$T/share/plain/f$i.bin" "$T/share/$s/f$i.bin"
	done
done
mixed_start
HZ=$(getconf CLK_TCK)
LIMIT_BPS=$(numfmt --from=iec "$LIMIT") || die "LIMIT: not a size: $LIMIT"

# policy NAME: aiod.ini for the round, applied by reload
policy() {
	cp "$T/aiod-base.ini" "$T/aiod.ini"
	case $1 in
	rtio-qos) printf '\n[qos.all]\nlimit = 1T\n' >> "$T/aiod.ini" ;;
	limited) printf '\n[qos.all]\nlimit = %s\n' "$LIMIT" >> "$T/aiod.ini" ;;
	esac
	local n
	n=$(grep -c "QoS policy of" "$T/log/aiod.log")
	kill -HUP "$AIOD_PID"
	for _ in $(seq 50); do
		[ "$(grep -c "QoS policy of" "$T/log/aiod.log")" -gt "$n" ] && return 0
		sleep 0.1
	done
	die "aiod did not reload: $(tail -3 "$T/log/aiod.log")"
}

# round CONFIG SECONDS: prints one JSON line
round() {
	local c=$1 secs=$2 share=rtio i pids=() s0 s1 a0 a1
	[ "$c" = plain ] && share=plain
	[ "$c" = plain ] || policy "$c"
	mixed_settle 200
	s0=$(mixed_smbd_ticks)
	a0=$(mixed_aiod_ticks "$c")
	for i in 1 2; do
		"$STREAM" --url "smb://127.0.0.1:$PORT/$share/f$i.bin" --user "$USER_NAME%$PASS" \
			--greedy --chunk 1M --duration "$secs" > "$T/log/client.$i" 2>&1 &
		pids+=($!)
	done
	MIXED_EXTRA_PIDS="${pids[*]}"
	wait "${pids[@]}"
	MIXED_EXTRA_PIDS=""
	mixed_settle 200
	s1=$(mixed_smbd_ticks)
	a1=$(mixed_aiod_ticks "$c")
	/usr/bin/python3 - "$T/log" "$c" "$(mixed_calc "($s1 - $s0) / $HZ")" \
		"$(mixed_calc "($a1 - $a0) / $HZ")" "$LIMIT_BPS" <<'PY'
import glob, json, sys
logdir, config, smbd_cpu, aiod_cpu, limit = sys.argv[1:6]
nbytes, elapsed, errors = 0, 0.0, 0
for path in sorted(glob.glob(logdir + "/client.*")):
    r = json.loads(open(path).read().strip().splitlines()[-1])
    errors += 1 if r.get("error") else 0
    nbytes += r["bytes"]
    elapsed = max(elapsed, r["elapsed_s"])
cpu = float(smbd_cpu) + float(aiod_cpu)
print(json.dumps({"config": config, "bytes": nbytes, "elapsed_s": elapsed, "errors": errors,
                  "mb_per_s": round(nbytes / elapsed / 1e6, 1),
                  "MiB_per_s": round(nbytes / elapsed / 2**20, 2),
                  "cpu_s_per_gib": round(cpu / (nbytes / 2**30), 4) if nbytes else None,
                  "limit_Bps": int(limit) if config == "limited" else 0}))
PY
}

for c in rtio rtio-qos limited; do round "$c" 3 > /dev/null; done	# into aiod's cache, flows set up
out=$T/results.jsonl
mixed_rounds "$out" "$RUNS" "$DURATION" $CONFIGS

stamp=$(date -u +%Y-%m-%d-%H%M%S)
mkdir -p "$mixed_root/bench/results"
command="bench/qos/run.sh $RUNS $DURATION $LIMIT"
/usr/bin/python3 - "$out" "$mixed_root/bench/results/qos-$stamp" "$command" "$LIMIT" \
	"$(git -C "$mixed_root" rev-parse --short HEAD)" "$T/aiod-base.ini" <<'PY' || die "report failed"
import json, os, platform, statistics, subprocess, sys
src, prefix, command, limit, commit, ini = sys.argv[1:7]
rows = [json.loads(l) for l in open(src) if l.strip()]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
smbd = subprocess.run(["smbd", "--version"], capture_output=True, text=True).stdout.strip()
configs = list(dict.fromkeys(r["config"] for r in rows))
summ = {}
for c in configs:
    rs = [r for r in rows if r["config"] == c]
    summ[c] = {"runs": len(rs), "errors": sum(r["errors"] for r in rs),
               "mb_per_s": statistics.median(r["mb_per_s"] for r in rs),
               "cpu_s_per_gib": statistics.median(r["cpu_s_per_gib"] for r in rs),
               "MiB_per_s_min": min(r["MiB_per_s"] for r in rs),
               "MiB_per_s_max": max(r["MiB_per_s"] for r in rs),
               "MiB_per_s": statistics.median(r["MiB_per_s"] for r in rs)}
json.dump({"command": command, "commit": commit, "machine": {"kernel": platform.release(),
           "cpus": os.cpu_count(), "cpu": cpu, "smbd": smbd}, "summary": summ, "runs": rows,
           "aiod_ini": open(ini).read()}, open(prefix + ".json", "w"), indent=1)
out = ["# QoS: the cost of pacing and the accuracy of a limit", "",
       "Command: `%s` (commit %s)" % (command, commit), "",
       "Machine: %s, %s CPUs, kernel %s; %s" % (cpu, os.cpu_count(), platform.release(), smbd), "",
       "TCP congestion control (the clients' connections to smbd on 127.0.0.1, bench/tcpcc.sh): %s" % os.environ.get("BENCH_TCP_CC_IN_EFFECT", "?"), "",
       "Two greedy SMB readers (1 MiB reads, one smbd each) on files in aiod's cache; medians over "
       "%d interleaved rounds. rtio: no [qos.NAME]; rtio-qos: every read charged to a flow whose "
       "limit (1T) is never reached; limited: `[qos.all] limit = %s` for both together." % (
           max(s["runs"] for s in summ.values()), limit), "",
       "| config | MB/s | CPU s/GiB | vs rtio | errors |", "|---|---:|---:|---:|---:|"]
base = summ.get("rtio")
for c in configs:
    s = summ[c]
    rel = "%+.1f %%" % (100.0 * (s["cpu_s_per_gib"] / base["cpu_s_per_gib"] - 1)) if base and c != "rtio" else ""
    out.append("| %s | %.0f | %.3f | %s | %d |" % (c, s["mb_per_s"], s["cpu_s_per_gib"], rel, s["errors"]))
if "limited" in summ:
    s = summ["limited"]
    lim = int(rows[[r["config"] for r in rows].index("limited")]["limit_Bps"]) / 2**20
    out += ["", "Limit %s (%.1f MiB/s) for both readers together: median %.2f MiB/s (%.1f %% of the "
            "limit), range %.2f-%.2f over the rounds." % (limit, lim, s["MiB_per_s"],
                                                         100.0 * s["MiB_per_s"] / lim,
                                                         s["MiB_per_s_min"], s["MiB_per_s_max"])]
out += ["", "aiod.ini (without the [qos.all] section each round adds):", "", "```",
        open(ini).read().strip(), "```", ""]
open(prefix + ".md", "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
echo "bench/qos: results in bench/results/qos-$stamp.{md,json}"
