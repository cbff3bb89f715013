#!/usr/bin/env python3
"""Turn the raw output of bench/mixed/run.sh into OUT.json and OUT.md.

Copyright (C) 2026 rtio developers
SPDX-License-Identifier: GPL-3.0-or-later

Every number in the report is a median over the runs of one configuration;
the JSON keeps each run as well. The machine description, time parsing and
number formatting are bench/fio/summarize.py's.
"""
import argparse
import datetime
import importlib.util
import json
import os
import re

_spec = importlib.util.spec_from_file_location(
    "fio_summarize", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fio",
                                  "summarize.py"))
fio = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fio)

GIB = float(1 << 30)

# Issue 12's targets for random reads through aiod, against direct io_uring.
IOPS_TARGET = 0.90        # throughput within 10 % of direct
CPU_TARGET = 1.10         # CPU per operation within 10 % of direct
AMPLIFICATION_TARGET = 1.2  # device bytes read <= 1.2 x the bytes the client asked for

AIOD_COUNTERS = ("cache_hits", "cache_misses", "disk_reads", "disk_read_bytes",
                 "passthrough_reads", "passthrough_bytes", "bytes_read", "readahead_blocks",
                 "evictions", "requests", "errors")


def one_run(row, clk_tck):
    base = row["base"]
    with open(base + ".json", encoding="utf-8") as f:
        text = f.read()
    jobs = json.loads(text[text.index("{"):])["jobs"]     # fio may print notes first
    job = jobs[0]
    rd = job["read"]
    elapsed, fio_u, fio_s = fio.read_time(base + ".time")
    fio_cpu = fio_u + fio_s
    aiod_cpu = int(row["aiod_ticks"]) / clk_tck
    busy = int(row["busy_ticks"]) / clk_tck
    ops = rd["total_ios"]
    gib = rd["io_bytes"] / GIB
    dev_read = (int(row["rd1"]) - int(row["rd0"])) * 512
    pct = rd["clat_ns"].get("percentile", {})
    r = {
        "round": int(row["round"]),
        "io_bytes": rd["io_bytes"],
        "ops": ops,
        "iops": rd["iops"],
        "MBps": rd["bw_bytes"] / 1e6,
        "clat_p50_us": pct.get("50.000000", 0) / 1000.0,
        "clat_p99_us": pct.get("99.000000", 0) / 1000.0,
        "clat_mean_us": rd["clat_ns"]["mean"] / 1000.0,
        "dev_read_bytes": dev_read,
        "dev_read_per_client_byte": dev_read / rd["io_bytes"] if rd["io_bytes"] else None,
        "fio_cpu_s": fio_cpu,
        "aiod_cpu_s": aiod_cpu,
        "aiod_cpu_s_per_GiB": aiod_cpu / gib if gib else None,
        "aiod_cpu_us_per_op": aiod_cpu * 1e6 / ops if ops else None,
        "fio_cpu_us_per_op": fio_cpu * 1e6 / ops if ops else None,
        "cpu_us_per_op": (fio_cpu + aiod_cpu) * 1e6 / ops if ops else None,
        "cpu_s_per_GiB": (fio_cpu + aiod_cpu) / gib if gib else None,
        "other_cpu_frac": max(0.0, busy - fio_cpu - aiod_cpu) / elapsed if elapsed else None,
        "elapsed_s": elapsed,
    }
    if len(jobs) > 1:   # STREAM=1: the stream played next to the random reader
        st = jobs[1]["read"]
        r["stream_MBps"] = st["bw_bytes"] / 1e6
        r["stream_clat_max_ms"] = st["clat_ns"]["max"] / 1e6
    s0, s1 = fio.read_kv(base + ".stats0"), fio.read_kv(base + ".stats1")
    if s1:
        d = {k: s1.get(k, 0) - s0.get(k, 0) for k in AIOD_COUNTERS}
        r["aiod"] = d
        # aiod's own view of amplification: what it read / what it answered
        if d["bytes_read"] and "disk_read_bytes" in s1:
            r["aiod_read_per_client_byte"] = d["disk_read_bytes"] / d["bytes_read"]
        if ops and "passthrough_reads" in s1:
            r["passthrough_pct"] = 100.0 * d["passthrough_reads"] / ops
    return r


METRICS = ("iops", "MBps", "clat_p50_us", "clat_p99_us", "clat_mean_us", "dev_read_bytes",
           "dev_read_per_client_byte", "aiod_read_per_client_byte", "passthrough_pct",
           "fio_cpu_us_per_op", "aiod_cpu_us_per_op", "cpu_us_per_op", "aiod_cpu_s_per_GiB",
           "cpu_s_per_GiB", "other_cpu_frac", "io_bytes", "stream_MBps", "stream_clat_max_ms")


def load(raw, clk_tck):
    runs, meta = {}, {}
    with open(os.path.join(raw, "runs.tsv"), encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(header, line.rstrip("\n").split("\t")))
            runs.setdefault(row["config"], []).append(one_run(row, clk_tck))
            meta[row["config"]] = (row["workload"], int(row["qd"]), row["engine"])
    summary = {}
    for cfg, rs in runs.items():
        s = {"runs": len(rs)}
        for m in METRICS:
            s[m] = fio.med([r.get(m) for r in rs])
        s["iops_min"] = min(r["iops"] for r in rs)
        s["iops_max"] = max(r["iops"] for r in rs)
        worst = [r["stream_clat_max_ms"] for r in rs if "stream_clat_max_ms" in r]
        s["stream_clat_worst_ms"] = max(worst) if worst else None
        summary[cfg] = s
    return runs, meta, summary


def block_of(workload):
    """rand4k -> 4 (KiB), for ordering."""
    m = re.search(r"(\d+)k$", workload)
    return int(m.group(1)) if m else 0


# Engines measured against direct io_uring: every read through aiod, and
# reads routed as the module routes them (rtio_route=module).
ENGINE_LABEL = {"rtio": "every read through aiod", "routed": "routed as vfs_rtio routes reads",
                "ordered": "routed, aiod with local_random_us = 0 (every random miss aiod's "
                           "while a rate is owed)",
                "orderedqd1": "ordered with [engine] queue_depth = 1"}


def ratios(meta, summary):
    out = []
    pairs = sorted({(wl, qd) for wl, qd, _ in meta.values()},
                   key=lambda p: (block_of(p[0]), p[1]))
    for eng in ENGINE_LABEL:
        for wl, qd in pairs:
            d, r = summary.get(f"{wl}-qd{qd}-direct"), summary.get(f"{wl}-qd{qd}-{eng}")
            if not d or not r:
                continue

            def div(a, b):
                return a / b if a is not None and b else None
            out.append({
                "engine": eng, "workload": wl, "qd": qd,
                "iops_ratio": div(r["iops"], d["iops"]),
                "cpu_per_op_ratio": div(r["cpu_us_per_op"], d["cpu_us_per_op"]),
                "p99_ratio": div(r["clat_p99_us"], d["clat_p99_us"]),
                "dev_read_ratio": div(r["dev_read_per_client_byte"],
                                      d["dev_read_per_client_byte"]),
                "rtio_dev_read_per_client_byte": r["dev_read_per_client_byte"],
                "rtio_aiod_read_per_client_byte": r.get("aiod_read_per_client_byte"),
            })
    return out


def targets(rat, stream=False):
    out = []
    for x in rat:
        name = f"{x['workload']} QD{x['qd']} ({x['engine']})"
        # aiod's own ratio is per byte aiod served; routed, aiod serves only
        # the few reads that looked sequential: the device's is per byte fio got
        amp = x["rtio_aiod_read_per_client_byte"]
        if amp is None or x["engine"] != "rtio":
            amp = x["rtio_dev_read_per_client_byte"]
        amp_what = "device bytes <= 1.2 x asked"
        if stream:
            # the device also read the stream's bytes, in every engine's runs alike
            amp, amp_what = x["dev_read_ratio"], "device bytes <= 1.2 x direct's (stream's in both)"
        for what, v, ok in (
                ("IOPS >= 0.90 x direct", x["iops_ratio"],
                 x["iops_ratio"] is not None and x["iops_ratio"] >= IOPS_TARGET),
                ("CPU/op <= 1.10 x direct", x["cpu_per_op_ratio"],
                 x["cpu_per_op_ratio"] is not None and x["cpu_per_op_ratio"] <= CPU_TARGET),
                (amp_what, amp,
                 amp is not None and amp <= AMPLIFICATION_TARGET)):
            out.append({"target": f"{name}: {what}", "measured": fio.fmt(v, 2), "met": ok})
    return out


def markdown(res):
    p, m, s = res["params"], res["machine"], res["summary"]
    lines = []
    add = lines.append
    add(f"# mixed part 1: random reads larger than aiod's cache, direct io_uring vs aiod "
        f"({res['date']})")
    add("")
    add("Generated by `bench/mixed/run.sh` (`bench/mixed/summarize.py`); per-run numbers are in")
    add(f"`{os.path.basename(res['json_path'])}`.")
    add("")
    add("## Command and machine")
    add("")
    add("```")
    add(res["command"])
    add("```")
    add("")
    add(f"- kernel `{m['uname_r']}`, nproc {m['nproc']}, CPU `{m['cpu_model']}`, memory "
        f"{m['mem_total']}, virtualization `{m['virt']}`")
    add(f"- file: {p['file_size'] / GIB:.2f} GiB on `/dev/{m['disk']}` (scheduler "
        f"`{m['disk_scheduler']}`) under `{p['dir']}`; {m['fio_version']}")
    add(f"- aiod: cache {p['cache_size']} (the file is {p['file_size'] / p['cache_bytes']:.1f}x "
        f"that), block {p['block_size']}, direct_io = yes, hugepages = yes (shmem_enabled "
        f"`{p['thp']}`, cache mapped with huge pages: {p['huge']}); binary sha256 "
        f"{m['aiod_sha256_16']}…, built {m['aiod_built']}, tree {m['git_head']} with "
        f"{m['git_dirty_files']} uncommitted paths")
    add(f"- {p['runs']} runs per configuration, {p['runtime_s']} s each, time based, order "
        f"rotated every round; one fio job, `--thread`, `--direct=1` on every engine; aiod "
        f"started with an empty cache before each run that uses it")
    if p.get("stream"):
        add("- **a 100 Mbit/s stream plays next to every run** (`STREAM=1`): a second fio job reads "
            "`clip.mxf` (stream class hd, 100M, admitted: checked mid-run in `aiodctl stats`) at "
            "12.5 MB/s in 1 MiB reads through the rtio engine, for every engine alike; the "
            "numbers below are the random job's (fio's and aiod's CPU and the device bytes "
            "include the stream's). aiod ran with the profile `aiod --calibrate` measured "
            "under the same directory:")
        add("")
        add("```")
        add(p["profile"].rstrip())
        add("```")
    add("")
    add("## Results (medians)")
    add("")
    add("dev B/B: bytes the disk read (/proc/diskstats) per byte fio got; aiod B/B: the same "
        "from aiod's counters (disk_read_bytes / bytes_read); pass %: reads aiod served by "
        "pass-through. CPU µs/op = fio usr+sys + aiod utime+stime, per read. `other CPU`: "
        "share of one CPU used by everything else on the machine meanwhile.")
    add("")
    add("| config | IOPS (min-max) | MB/s | p50 µs | p99 µs | dev B/B | aiod B/B | pass % "
        "| CPU µs/op (fio + aiod) | aiod CPU s/GiB | other CPU | runs |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cfg in res["config_order"]:
        c = s[cfg]
        add(f"| {cfg} | {fio.fmt(c['iops'])} ({fio.fmt(c['iops_min'])}-{fio.fmt(c['iops_max'])}) "
            f"| {fio.fmt(c['MBps'])} | {fio.fmt(c['clat_p50_us'])} | {fio.fmt(c['clat_p99_us'])} "
            f"| {fio.fmt(c['dev_read_per_client_byte'], 2)} "
            f"| {fio.fmt(c['aiod_read_per_client_byte'], 2)} | {fio.fmt(c['passthrough_pct'])} "
            f"| {fio.fmt(c['cpu_us_per_op'], 1)} ({fio.fmt(c['fio_cpu_us_per_op'], 1)} + "
            f"{fio.fmt(c['aiod_cpu_us_per_op'], 1)}) | {fio.fmt(c['aiod_cpu_s_per_GiB'], 2)} "
            f"| {fio.fmt(c['other_cpu_frac'], 2)} | {c['runs']} |")
    if p.get("stream"):
        add("")
        add("The stream next to each configuration (fio's second job: 12.5 MB/s asked, 1 MiB "
            "reads; its worst read is what a client's prebuffer, 0.5-1 s, must cover):")
        add("")
        add("| config | stream MB/s (median) | slowest stream read, ms: median of runs / worst |")
        add("|---|---:|---:|")
        for cfg in res["config_order"]:
            c = s[cfg]
            add(f"| {cfg} | {fio.fmt(c['stream_MBps'], 2)} | {fio.fmt(c['stream_clat_max_ms'], 1)} "
                f"/ {fio.fmt(c['stream_clat_worst_ms'], 1)} |")
    add("")
    add("## rtio relative to direct io_uring (ratio of medians)")
    add("")
    add("Engines: " + "; ".join(f"`{e}` {label}" for e, label in ENGINE_LABEL.items()) +
        " (`bench/fio/rtio_engine.c`, `rtio_route=module`: aiod's cache hits copied in the "
        "engine, random misses read by the engine itself while aiod says nothing is owed a "
        "rate or the device is too fast for them to matter).")
    add("")
    add("| engine | workload | QD | IOPS | CPU per op | p99 latency | device bytes per client byte |")
    add("|---|---|---:|---:|---:|---:|---:|")
    for x in res["ratios"]:
        add(f"| {x['engine']} | {x['workload']} | {x['qd']} | {fio.fmt(x['iops_ratio'], 3)} "
            f"| {fio.fmt(x['cpu_per_op_ratio'], 2)} | {fio.fmt(x['p99_ratio'], 2)} "
            f"| {fio.fmt(x['dev_read_ratio'], 2)} |")
    add("")
    add("## Targets (issue 12)")
    add("")
    add("| target | measured | verdict |")
    add("|---|---|---|")
    for t in res["targets"]:
        add(f"| {t['target']} | {t['measured']} | {'met' if t['met'] else 'MISSED'} |")
    add("")
    add("## Caveats")
    add("")
    add("- The disk is virtual: the hypervisor may cache what the guest reads, so device "
        "bytes are what this machine asked its disk for, and repeated random reads may be "
        "served from the host's memory for both engines alike.")
    add("- The machine is shared (see `other CPU`); rotation and medians damp the effect, "
        "they do not remove it.")
    add("- Device bytes include anything else that read the same disk during a run.")
    add("")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True, help="path without extension")
    ap.add_argument("--command", required=True)
    ap.add_argument("--file-size", type=int, required=True)
    ap.add_argument("--cache-size", required=True)
    ap.add_argument("--cache-bytes", type=int, required=True)
    ap.add_argument("--block-size", required=True)
    ap.add_argument("--runtime", type=int, required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--clk-tck", type=int, default=100)
    ap.add_argument("--dev", default="")
    ap.add_argument("--dir", default="")
    ap.add_argument("--aiod", default="")
    ap.add_argument("--thp", default="unknown")
    ap.add_argument("--huge", default="unknown")
    ap.add_argument("--stream-profile", default="",
                    help="STREAM=1: the calibration profile aiod ran with")
    args = ap.parse_args()

    runs, meta, summary = load(args.raw, args.clk_tck)
    order = sorted(summary, key=lambda c: (block_of(meta[c][0]), meta[c][1], meta[c][2]))
    rat = ratios(meta, summary)
    res = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": args.command,
        "machine": fio.machine(args),
        "params": {"file_size": args.file_size, "cache_size": args.cache_size,
                   "cache_bytes": args.cache_bytes, "block_size": args.block_size,
                   "runtime_s": args.runtime, "runs": args.runs, "dir": args.dir,
                   "thp": args.thp, "huge": args.huge, "stream": bool(args.stream_profile),
                   "profile": open(args.stream_profile, encoding="utf-8").read()
                   if args.stream_profile else None},
        "config_order": order,
        "summary": summary,
        "ratios": rat,
        "targets": targets(rat, bool(args.stream_profile)),
        "runs": runs,
        "json_path": args.out + ".json",
        "raw": args.raw,
    }
    with open(args.out + ".json", "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    with open(args.out + ".md", "w", encoding="utf-8") as f:
        f.write(markdown(res))


if __name__ == "__main__":
    main()
