#!/usr/bin/env python3
# The report of bench/mixed/smbrandom.sh: medians of its interleaved rounds
# (JSON lines), and each configuration against plain both as a ratio of the
# medians and as the median of the per-round ratios (each round's runs are
# back to back, so a ratio within a round cancels the drift of a shared
# disk whose speed changes several-fold over minutes).
#
#   smbrandom_report.py ROUNDS.jsonl PREFIX COMMAND FILE_GIB CACHE COMMIT AIOD_INI CLIENTS
#   smbrandom_report.py --from RESULT.json PREFIX   (again, from a result's runs)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
import json, os, platform, re, statistics, subprocess, sys

if sys.argv[1] == "--from":
    old = json.load(open(sys.argv[2]))
    prefix = sys.argv[3]
    rows, command, commit = old["runs"], old["command"], old["commit"]
    aiod_ini = old["aiod_ini"]
    # what the command line and the text said: FILE_GIB, CACHE and CLIENTS
    gib = str(old.get("file_gib", 4))
    cache = re.search(r"size = (\S+)", aiod_ini).group(1)
    clients = command.split()[3] if len(command.split()) > 3 else "4"
else:
    src, prefix, command, gib, cache, commit, ini, clients = sys.argv[1:9]
    rows = [json.loads(l) for l in open(src) if l.strip()]
    aiod_ini = open(ini).read()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
smbd = subprocess.run(["smbd", "--version"], capture_output=True, text=True).stdout.strip()
configs = list(dict.fromkeys(r["config"] for r in rows))
med = lambda rs, k: statistics.median(r[k] for r in rs if r[k] is not None) if any(r[k] is not None for r in rs) else None
summ = {c: {k: med([r for r in rows if r["config"] == c], k) for k in
            ("reads_per_s", "mb_per_s", "cpu_s_per_gib", "cpu_ms_per_1000_reads", "device_bytes_per_byte")}
        for c in configs}
def paired(c, k):
    """median over rounds of c's value / plain's value in the same round"""
    base = "plain-" + c.split("-")[1]
    by_run = {r["run"]: r for r in rows if r["config"] == base}
    ratios = [r[k] / by_run[r["run"]][k] for r in rows if r["config"] == c and r["run"] in by_run
              and r[k] is not None and by_run[r["run"]][k]]
    return statistics.median(ratios) if ratios else None
for c in configs:
    rs = [r for r in rows if r["config"] == c]
    summ[c]["errors"] = sum(r["errors"] for r in rs)
    if not c.startswith("plain"):
        summ[c]["paired_reads_per_s"] = paired(c, "reads_per_s")
        summ[c]["paired_cpu_per_read"] = paired(c, "cpu_ms_per_1000_reads")
    # reads aiod made for the clients (random misses it read itself), per read asked
    summ[c]["aiod_pct"] = (statistics.median(100.0 * r.get("aiod_random_reads", 0) / r["reads"]
                                             for r in rs if r["reads"])
                           if not c.startswith("plain") and any(r["reads"] for r in rs) else None)
json.dump({"command": command, "commit": commit, "machine": {"kernel": platform.release(),
           "cpus": os.cpu_count(), "cpu": cpu, "smbd": smbd}, "summary": summ, "runs": rows,
           "aiod_ini": aiod_ini, "file_gib": int(gib)}, open(prefix + ".json", "w"), indent=1)
out = ["# Random reads over SMB: plain vs rtio", "", "Command: `%s` (commit %s)" % (command, commit), "",
       "Machine: %s, %s CPUs, kernel %s; %s; data on the VM's disk" % (cpu, os.cpu_count(),
                                                                      platform.release(), smbd), "",
       "TCP congestion control (the clients' connections to smbd on 127.0.0.1, bench/tcpcc.sh): %s" % os.environ.get("BENCH_TCP_CC_IN_EFFECT", "?"), "",
       "%s clients (one smbd each) reading random chunk-aligned pieces of one %s GiB file (aiod's "
       "cache %s); page cache dropped before every round; medians over %d interleaved rounds." % (
           clients, gib, cache, max(sum(1 for r in rows if r["config"] == c) for c in configs)), "",
       "device bytes per byte: what /proc/diskstats says the disk read, per byte the clients got. "
       "via aiod: reads aiod read for smbd as random misses (pass-through), per read the clients made.", "",
       "vs plain: ratio of the medians / median of the per-round ratios (each round runs every "
       "configuration back to back, so the second cancels the drift of the shared disk).", "",
       "| config | reads/s | vs plain | MB/s | CPU s/GiB | CPU ms/1000 reads | vs plain | device bytes per byte | via aiod | errors |",
       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for c in configs:
    s = summ[c]
    base = summ.get("plain-" + c.split("-")[1])
    pk = {"reads_per_s": "paired_reads_per_s", "cpu_ms_per_1000_reads": "paired_cpu_per_read"}
    rel = lambda k: ("%.2fx / %.2fx" % (s[k] / base[k], s[pk[k]])) if base and not c.startswith("plain") and base[k] and s.get(pk[k]) else ""
    dev = "%.2f" % s["device_bytes_per_byte"] if s["device_bytes_per_byte"] is not None else "-"
    via = "%.0f %%" % s["aiod_pct"] if s["aiod_pct"] is not None else "-"
    out.append("| %s | %.0f | %s | %.1f | %.3f | %.2f | %s | %s | %s | %d |" % (
        c, s["reads_per_s"], rel("reads_per_s"), s["mb_per_s"], s["cpu_s_per_gib"],
        s["cpu_ms_per_1000_reads"], rel("cpu_ms_per_1000_reads"), dev, via, s["errors"]))
out += ["", "aiod.ini:", "", "```", aiod_ini.strip(), "```", ""]
open(prefix + ".md", "w").write("\n".join(out) + "\n")
print("\n".join(out))
