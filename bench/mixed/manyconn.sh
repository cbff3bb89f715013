#!/usr/bin/env bash
# Many clients at once (issue 12, part 4): CLIENTS concurrent SMB connections
# (one rtio-stream --greedy process each, so one smbd each), every one
# reading its own FILE_MIB file sequentially in 1 MiB reads for DURATION
# seconds, through a plain share and through an rtio share of one private
# smbd, interleaved (order rotated each round), RUNS times after one
# uncounted warm-up round per share. Reports per share: clients that
# finished without an error, total MB/s, server CPU seconds per GiB (smbd's
# process group and aiod), and aiod's sessions during the run (how many of
# them had to use socket pairs: aiod started by hand has no CAP_SYS_RESOURCE).
# Writes bench/results/manyconn-<date>.{md,json}.
#
#   bench/mixed/manyconn.sh [RUNS [CLIENTS [DURATION]]]   (defaults 5, 200, 30)
#   env: BUILD, BENCH_PORT, BENCH_DIR (as lib.sh says), MC_FILE_MIB (16),
#        MC_CACHE (aiod's [cache] size, default 4G: holds every file, as
#        the README's 8G would on a server), MC_CONFIGS ("plain rtio"),
#        MC_BITRATE (each client plays at this rate, e.g. 10M for proxies,
#        instead of reading greedily: connection set-up without the load)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
NAME=manyconn
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
RUNS=${1:-5}
CLIENTS=${2:-200}
DURATION=${3:-30}
FILE_MIB=${MC_FILE_MIB:-16}
CACHE=${MC_CACHE:-4G}
CONFIGS=${MC_CONFIGS:-plain rtio}
STREAM=$BUILD/rtio-stream
if [ -n "${MC_BITRATE:-}" ]; then
	HOW=(--bitrate "$MC_BITRATE" --chunk 256K)
else
	HOW=(--greedy --chunk 1M)
fi

mixed_need_root_tools
[ -x "$STREAM" ] || die "$STREAM not built: run make"
[ "$RUNS" -ge 1 ] && [ "$CLIENTS" -ge 1 ] && [ "$DURATION" -ge 1 ] ||
	die "usage: manyconn.sh [RUNS [CLIENTS [DURATION]]]"
PORT=$(mixed_port)
mixed_tmp
mixed_aiod_ini "$CACHE"
mixed_smb_conf "$PORT" $CONFIGS
# smbd's own limit on open files is per process; nothing to raise for CLIENTS processes.

echo "bench/mixed/$NAME: $CLIENTS files of $FILE_MIB MiB"
first=""
for c in $CONFIGS; do
	if [ -z "$first" ]; then
		first=$c
		for i in $(seq -w 1 "$CLIENTS"); do
			head -c $((FILE_MIB << 20)) /dev/urandom > "$T/share/$c/f$i.bin" ||
				die "cannot write the test files"
		done
	else
		# the same bytes: hard links, one copy on the disk
		for i in $(seq -w 1 "$CLIENTS"); do ln "$T/share/$first/f$i.bin" "$T/share/$c/f$i.bin"; done
	fi
done
sync
mixed_start

HZ=$(getconf CLK_TCK)
out=$T/results.jsonl

# TCP connections the kernel dropped because a listen queue was full (the
# whole machine: only this benchmark connects meanwhile). A dropped SYN is
# sent again after 1, 3, 7, 15 s: a client that meets a full queue waits.
listen_drops() {
	awk '/^TcpExt:/ { if (!h) { split($0, k); h = 1 } else { for (i = 2; i <= NF; i++)
		if (k[i] == "ListenDrops") print $i } }' /proc/net/netstat
}

# The module's attach times (ms) in smbd's log from line $1 on, comma
# separated: vfs_rtio logs them at log level 1 (MIXED_SMB_LOG_LEVEL=1).
attach_ms() {
	tail -n +"$1" "$T/log/smbd.log" |
		sed -n 's/.*rtio: attached to aiod at .* (session [0-9]*, \([0-9]*\) ms).*/\1/p' |
		paste -s -d, -
}

# One round: CLIENTS readers of share $1 for $2 seconds; prints a JSON line.
round() {
	local c=$1 secs=$2 i pids=() s0 s1 a0 a1 sess=0 t0 t1 d0 d1 l0
	rm -f "$T"/log/client.*
	l0=$(($(wc -l < "$T/log/smbd.log") + 1))
	mixed_settle 400
	s0=$(mixed_smbd_ticks)
	a0=$(mixed_aiod_ticks "$c")
	d0=$(listen_drops)
	t0=$(date +%s.%N)
	for i in $(seq -w 1 "$CLIENTS"); do
		"$STREAM" --url "smb://127.0.0.1:$PORT/$c/f$i.bin" --user "$USER_NAME%$PASS" \
			"${HOW[@]}" --duration "$secs" > "$T/log/client.$i" 2>&1 &
		pids+=($!)
	done
	MIXED_EXTRA_PIDS="${pids[*]}"
	sleep "$(mixed_calc "$secs / 2")"
	[ "$c" = plain ] || sess=$(mixed_aiod_stat sessions)
	wait "${pids[@]}" 2>/dev/null
	MIXED_EXTRA_PIDS=""
	t1=$(date +%s.%N)
	d1=$(listen_drops)
	mixed_settle 400
	s1=$(mixed_smbd_ticks)
	a1=$(mixed_aiod_ticks "$c")
	/usr/bin/python3 - "$T/log" "$c" "$CLIENTS" "$(mixed_calc "$t1 - $t0")" \
		"$(mixed_calc "($s1 - $s0) / $HZ")" "$(mixed_calc "($a1 - $a0) / $HZ")" "${sess:-0}" \
		"$(grep -c "use a socket pair instead" "$T/log/aiod.log")" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$((d1 - d0))" "$(attach_ms "$l0")" <<'PY'
import glob, json, statistics, sys
logdir, config, clients, wall, smbd_cpu, aiod_cpu, sessions, sockq_lines, load, drops, \
    attach = sys.argv[1:12]
ok = errors = 0
nbytes = 0
opens = []
rate = 0.0
first_error = None
for path in sorted(glob.glob(logdir + "/client.*")):
    text = open(path).read().strip().splitlines()
    try:
        r = json.loads(text[-1])
    except (IndexError, ValueError):
        errors += 1
        first_error = first_error or "%s: no result: %s" % (path, " ".join(text)[-200:])
        continue
    if "open_ms" in r:
        opens.append(r["open_ms"])
    if r.get("error") or r.get("interrupted"):
        errors += 1
        first_error = first_error or "%s: %s" % (path, r.get("error"))
        continue
    ok += 1
    nbytes += r["bytes"]
    rate += r["bytes"] / r["elapsed_s"] / 1e6
missing = int(clients) - ok - errors
print(json.dumps({"config": config, "clients": int(clients), "ok": ok, "errors": errors + missing,
                  "first_error": first_error, "bytes": nbytes, "mb_per_s": round(rate, 1),
                  "wall_s": float(wall), "smbd_cpu": float(smbd_cpu), "aiod_cpu": float(aiod_cpu),
                  "cpu_s_per_gib": round((float(smbd_cpu) + float(aiod_cpu)) / (nbytes / 2**30), 3)
                  if nbytes else None,
                  "open_ms_p50": statistics.median(opens) if opens else None,
                  "open_ms_max": max(opens) if opens else None,
                  "aiod_sessions": int(sessions), "socket_pair_log_lines": int(sockq_lines),
                  "listen_drops": int(drops),
                  "attach_ms": [int(x) for x in attach.split(",") if x],
                  "load": load}))
PY
}

for c in $CONFIGS; do
	echo "bench/mixed/$NAME: warm-up, $c"
	round "$c" $((DURATION / 3 > 5 ? DURATION / 3 : 5)) > /dev/null
done
load0=$(cut -d' ' -f1 /proc/loadavg)
mixed_rounds "$out" "$RUNS" "$DURATION" $CONFIGS
load1=$(cut -d' ' -f1 /proc/loadavg)

stamp=$(date -u +%Y-%m-%d-%H%M%S)
mkdir -p "$mixed_root/bench/results"
command="bench/mixed/manyconn.sh $RUNS $CLIENTS $DURATION"
for v in MC_BITRATE MC_CONFIGS MC_CACHE MC_FILE_MIB MIXED_SMB_LOG_LEVEL; do
	[ -n "${!v:-}" ] && command="$v=\"${!v}\" $command"
done
how="one rtio-stream --greedy process (one SMB connection, one smbd) reading its own $FILE_MIB MiB file in 1 MiB reads"
[ -n "${MC_BITRATE:-}" ] &&
	how="one rtio-stream process (one SMB connection, one smbd) playing its own $FILE_MIB MiB file at $MC_BITRATE bit/s in 256 KiB reads"
/usr/bin/python3 - "$out" "$mixed_root/bench/results/manyconn-$stamp" "$command" "$FILE_MIB" \
	"$load0" "$load1" "$T/aiod.ini" "$(git -C "$mixed_root" rev-parse --short HEAD)" "$how" <<'PY' ||
import json, os, platform, statistics, subprocess, sys
src, prefix, command, file_mib, load0, load1, ini, commit, how = sys.argv[1:10]
rows = [json.loads(l) for l in open(src) if l.strip()]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
smbd = subprocess.run(["smbd", "--version"], capture_output=True, text=True).stdout.strip()
configs = list(dict.fromkeys(r["config"] for r in rows))
summary = {}
for c in configs:
    rs = [r for r in rows if r["config"] == c]
    # None where no run has a value (every client failed: no bytes, no CPU per GiB)
    summary[c] = {k: statistics.median(v) if v else None
                  for k in ("mb_per_s", "cpu_s_per_gib", "aiod_sessions", "ok", "open_ms_p50")
                  for v in [[r[k] for r in rs if r.get(k) is not None]]}
    summary[c]["open_ms_max"] = max((r["open_ms_max"] for r in rs if r.get("open_ms_max") is not None),
                                    default=None)
    summary[c]["errors_total"] = sum(r["errors"] for r in rs)
    summary[c]["listen_drops"] = sum(r.get("listen_drops", 0) for r in rs)
    summary[c]["runs"] = len(rs)
    summary[c]["first_error"] = next((r["first_error"] for r in rs if r["first_error"]), None)
info = {"command": command, "commit": commit, "machine": {"kernel": platform.release(),
        "cpus": os.cpu_count(), "cpu": cpu, "mem_GiB": round(mem_gib, 1), "smbd": smbd},
        "file_MiB": int(file_mib), "load_before": load0, "load_after": load1,
        "aiod_ini": open(ini).read(), "summary": summary, "runs": rows}
json.dump(info, open(prefix + ".json", "w"), indent=1)
base = summary.get("plain")
out = ["# Many clients at once: plain vs rtio", "", "Command: `%s` (commit %s)" % (command, commit), "",
       "Machine: %s, %s CPUs, %.1f GiB, kernel %s; %s" % (cpu, os.cpu_count(), mem_gib,
                                                          platform.release(), smbd), "",
       "TCP congestion control (the clients' connections to smbd on 127.0.0.1, bench/tcpcc.sh): %s" % os.environ.get("BENCH_TCP_CC_IN_EFFECT", "?"), "",
       "Each client is %s, all started at once. Medians over %d interleaved runs after "
       "one uncounted warm-up round per share; load average %s before, %s after. Server CPU = "
       "smbd's process group + aiod. Connect+open: the client's libsmbclient context, TCP "
       "connect, negotiate, session set-up, tree connect, create and fstat, timed in the client "
       "(which runs on the same 2 vCPUs)." % (how, max(s["runs"] for s in summary.values()),
                                                  load0, load1), "",
       "| share | clients ok | client errors (all runs) | MB/s | vs plain | CPU s/GiB | vs plain "
       "| connect+open ms, median / worst | connections dropped (listen queue full), all runs "
       "| aiod sessions mid-run |",
       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for c in configs:
    s = summary[c]
    rel = lambda k: ("%.2fx" % (s[k] / base[k])) if (base and c != "plain" and base[k]
                                                       and s[k] is not None) else ""
    num = lambda k, f: f % s[k] if s.get(k) is not None else "-"
    out.append("| %s | %s of %d | %d | %s | %s | %s | %s | %s / %s | %d | %s |" % (
        c, num("ok", "%d"), rows[0]["clients"], s["errors_total"], num("mb_per_s", "%.0f"),
        rel("mb_per_s"), num("cpu_s_per_gib", "%.3f"), rel("cpu_s_per_gib"),
        num("open_ms_p50", "%.0f"), num("open_ms_max", "%.0f"), s["listen_drops"],
        num("aiod_sessions", "%d") if c == "rtio" else "-"))
for c in configs:
    # the module's own attach times, pooled over the counted runs (smbd log level >= 1)
    a = sorted(x for r in rows if r["config"] == c for x in r.get("attach_ms", []))
    if a:
        q = lambda p: a[min(len(a) - 1, int(p * len(a)))]
        out += ["", "vfs_rtio's attach to aiod on %s (its log line; the JSON has every run's), "
                "%d tree connects: median %d ms, mean %d, p90 %d, p99 %d, worst %d." % (
                    c, len(a), q(0.5), round(sum(a) / len(a)), q(0.9), q(0.99), a[-1])]
for c in configs:
    if summary[c]["first_error"]:
        out.append("")
        out.append("First client error on %s: `%s`" % (c, summary[c]["first_error"]))
out += ["", "aiod.ini:", "", "```", info["aiod_ini"].strip(), "```", ""]
open(prefix + ".md", "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
	die "report failed"
echo "bench/mixed/$NAME: results in bench/results/manyconn-$stamp.{md,json}"
