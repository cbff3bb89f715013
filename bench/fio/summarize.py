#!/usr/bin/env python3
"""Turn the raw output of bench/fio/run.sh into OUT.json and OUT.md.

Copyright (C) 2026 rtio developers
SPDX-License-Identifier: GPL-3.0-or-later

Every number in the report is a median over the runs of one configuration;
the JSON keeps each run as well. CPU per GiB counts fio's user+system time
(whole process, from /usr/bin/time) plus aiod's utime+stime deltas from
/proc/PID/stat (every aiod process of the run; an idle one adds nothing).
"""
import argparse
import datetime
import glob
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess

GIB = float(1 << 30)
MIB = float(1 << 20)

SEQ1M_TARGET = 0.90      # 1 MiB sequential through aiod >= 90% of direct io_uring
HIT_TARGET_US = 10.0     # cache-hit round trip <= 10 microseconds


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return ""


def read_kv(path):
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            if "=" in line:
                k, v = line.strip().split("=", 1)
                try:
                    out[k] = int(v)
                except ValueError:
                    pass
    return out


def read_time(path):
    """/usr/bin/time -f '%e %U %S': elapsed, user, system (last line; time may prepend notes)."""
    with open(path, encoding="utf-8") as f:
        last = [l for l in f.read().splitlines() if l.strip()][-1]
    e, u, s = (float(x) for x in last.split())
    return e, u, s


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def one_run(row, clk_tck):
    base = row["base"]
    with open(base + ".json", encoding="utf-8") as f:
        text = f.read()
    # fio may print notes before the JSON object.
    fio = json.loads(text[text.index("{"):])
    job = fio["jobs"][0]
    rd = job["read"]
    elapsed, fio_u, fio_s = read_time(base + ".time")
    aiod_s = int(row["aiod_ticks"]) / clk_tck
    busy_s = int(row["busy_ticks"]) / clk_tck
    fio_cpu = fio_u + fio_s
    gib = rd["io_bytes"] / GIB
    pct = rd["clat_ns"].get("percentile", {})
    r = {
        "round": int(row["round"]),
        "io_bytes": rd["io_bytes"],
        "runtime_ms": rd["runtime"],
        "iops": rd["iops"],
        "bw_MiBps": rd["bw_bytes"] / MIB,
        "clat_mean_us": rd["clat_ns"]["mean"] / 1000.0,
        "clat_p50_us": pct.get("50.000000", 0) / 1000.0,
        "clat_p99_us": pct.get("99.000000", 0) / 1000.0,
        "clat_p999_us": pct.get("99.900000", 0) / 1000.0,
        "fio_cpu_s": fio_cpu,
        "aiod_cpu_s": aiod_s,
        "cpu_s_per_GiB": (fio_cpu + aiod_s) / gib if gib > 0 else None,
        "fio_cpu_s_per_GiB": fio_cpu / gib if gib > 0 else None,
        "aiod_cpu_s_per_GiB": aiod_s / gib if gib > 0 else None,
        "fio_ctx": job.get("ctx"),
        "fio_minor_faults": job.get("minf"),
        # Everything else the machine did meanwhile (other engineers, kernel threads).
        "other_cpu_s": max(0.0, busy_s - fio_cpu - aiod_s),
        "other_cpu_frac": max(0.0, busy_s - fio_cpu - aiod_s) / elapsed if elapsed > 0 else None,
        "load1": float(row["load1"]),
        "disk_read_MiB": (int(row["rd1"]) - int(row["rd0"])) * 512 / MIB,
        "disk_write_MiB": (int(row["wr1"]) - int(row["wr0"])) * 512 / MIB,
        "elapsed_s": elapsed,
    }
    if row.get("aiod"):
        s0, s1 = read_kv(base + ".stats0"), read_kv(base + ".stats1")
        d = {k: s1.get(k, 0) - s0.get(k, 0) for k in
             ("cache_hits", "cache_misses", "disk_reads", "readahead_blocks", "evictions",
              "requests", "errors")}
        r["aiod"] = d
        looked = d["cache_hits"] + d["cache_misses"]
        r["aiod_hit_pct"] = 100.0 * d["cache_hits"] / looked if looked else None
    return r


def load_runs(raw, clk_tck):
    runs = {}
    with open(os.path.join(raw, "runs.tsv"), encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(header, line.rstrip("\n").split("\t")))
            runs.setdefault(row["config"], []).append(one_run(row, clk_tck))
    return runs


METRICS = ["iops", "bw_MiBps", "clat_mean_us", "clat_p50_us", "clat_p99_us", "clat_p999_us",
           "cpu_s_per_GiB", "fio_cpu_s_per_GiB", "aiod_cpu_s_per_GiB", "aiod_hit_pct",
           "other_cpu_frac", "load1", "disk_read_MiB", "fio_minor_faults", "io_bytes"]


def summarize(runs):
    out = {}
    for cfg, rs in runs.items():
        s = {"runs": len(rs)}
        for m in METRICS:
            s[m] = med([r.get(m) for r in rs])
        s["bw_MiBps_min"] = min(r["bw_MiBps"] for r in rs)
        s["bw_MiBps_max"] = max(r["bw_MiBps"] for r in rs)
        s["iops_min"] = min(r["iops"] for r in rs)
        s["iops_max"] = max(r["iops"] for r in rs)
        out[cfg] = s
    return out


def load_hits(raw, hit_n):
    hits = {}
    for path in sorted(glob.glob(os.path.join(raw, "hit", "*.json"))):
        name = os.path.basename(path)
        m = re.match(r"(aiod|mq)\.(\w+)\.(\d+)\.json$", name)
        if not m:
            continue
        kind, variant, rnd = m.group(1), m.group(2), int(m.group(3))
        with open(path, encoding="utf-8") as f:
            r = json.loads(f.read())
        r["round"] = rnd
        if kind == "aiod":
            apath = path[:-5] + ".aiod"
            ops = hit_n + 1000 + 1          # timed + warm-up reads (hit_rtt's default -w)
            if os.path.exists(apath):
                with open(apath, encoding="utf-8") as f:
                    a = json.load(f)
                r["aiod_cpu_us_per_op"] = a["aiod_cpu_ns"] / 1000.0 / ops
                r["aiod_ctxsw_per_op"] = a["aiod_ctxsw"] / ops
        hits.setdefault(kind, {}).setdefault(variant, []).append(r)
    summary = {}
    for kind, byv in hits.items():
        for variant, rs in byv.items():
            s = {"runs": len(rs)}
            for k in ("median_us", "p90_us", "p99_us", "p999_us", "mean_us", "min_us",
                      "client_vol_cs_per_op", "client_invol_cs_per_op", "client_cpu_us_per_op",
                      "aiod_cpu_us_per_op", "aiod_ctxsw_per_op"):
                s[k] = med([r.get(k) for r in rs])
            s["median_us_worst_run"] = max(r["median_us"] for r in rs)
            s["p99_us_worst_run"] = max(r["p99_us"] for r in rs)
            if kind == "aiod":
                s["all_hits"] = all(r.get("aiod_misses", 1) == 0 for r in rs)
            summary.setdefault(kind, {})[variant] = s
    return hits, summary


def parse_strace(path, ops):
    """strace -c table -> {syscall: calls per op}, total per op."""
    if not os.path.exists(path):
        return None
    calls = {}
    total = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and re.match(r"^[\d.]+$", parts[0]) and parts[-1] != "total":
                try:
                    n = int(parts[3])
                except ValueError:
                    continue
                calls[parts[-1]] = n
                total += n
    per = {k: round(v / ops, 3) for k, v in sorted(calls.items(), key=lambda kv: -kv[1])
           if v / ops >= 0.01}
    return {"per_op": per, "total_per_op": round(total / ops, 3)}


def strace_text(side):
    if not side:
        return "-"
    calls = ", ".join(f"{k} {v}" for k, v in side["per_op"].items())
    return f"{side['total_per_op']} ({calls})"


def machine(args):
    cpu = ""
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with open("/proc/meminfo", encoding="utf-8") as f:
        mem = f.readline().split(":", 1)[1].strip()
    aiod_sha = ""
    if os.path.exists(args.aiod):
        with open(args.aiod, "rb") as f:
            aiod_sha = hashlib.sha256(f.read()).hexdigest()[:16]
    return {
        "uname_r": platform.release(),
        "nproc": os.cpu_count(),
        "cpu_model": cpu,
        "mem_total": mem,
        "disk": args.dev,
        "disk_scheduler": sh(f"cat /sys/block/{args.dev}/queue/scheduler"),
        "fio_version": sh("fio --version"),
        "mqueue_msg_max": sh("cat /proc/sys/fs/mqueue/msg_max"),
        "git_head": sh("git rev-parse --short HEAD"),
        "git_dirty_files": len([l for l in sh("git status --porcelain").splitlines() if l]),
        "aiod_binary": args.aiod,
        "aiod_sha256_16": aiod_sha,
        "aiod_built": datetime.datetime.fromtimestamp(os.path.getmtime(args.aiod)).isoformat(
            timespec="seconds") if os.path.exists(args.aiod) else "",
        "virt": sh("systemd-detect-virt 2>/dev/null") or "unknown",
    }


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.{nd}f}"
    return str(v)


def markdown(res):
    p, m, s = res["params"], res["machine"], res["summary"]
    lines = []
    add = lines.append
    add(f"# fio: direct io_uring vs fio through aiod ({res['date']})")
    add("")
    add("Generated by `bench/fio/run.sh` (`bench/fio/summarize.py`); per-run numbers are in")
    add(f"`{os.path.basename(res['json_path'])}`.")
    add("")
    add("## Command and machine")
    add("")
    add("```")
    add(res["command"])
    add("```")
    add("")
    add(f"- kernel `{m['uname_r']}`, nproc {m['nproc']}, CPU `{m['cpu_model']}`, "
        f"memory {m['mem_total']}, virtualization `{m['virt']}`")
    add(f"- file: {p['file_size'] / GIB:.1f} GiB on `/dev/{m['disk']}` "
        f"(scheduler `{m['disk_scheduler']}`) under `{p['dir']}`; {m['fio_version']}")
    add(f"- aiod: cache {p['cache_size']}, block {p['block_size']}, "
        f"readahead blocks {p.get('readahead_blocks', 'default')}, "
        f"fs.mqueue.msg_max {m['mqueue_msg_max']} (session depth limit without CAP_SYS_RESOURCE); "
        f"binary sha256 {m['aiod_sha256_16']}…, built {m['aiod_built']}, tree {m['git_head']} "
        f"with {m['git_dirty_files']} uncommitted paths (others edit concurrently)")
    add(f"- {p['runs']} runs per configuration, {p['runtime_s']} s each, order rotated every "
        f"round; iodepth {p['rand_iodepth']} (4 KiB random), {p['seq_iodepth']} (1 MiB "
        f"sequential); one job, `--thread`")
    add("")
    if not res["summary"]:
        add("(no fio configurations in this run: WORKLOADS or CACHES empty)")
        add("")
    else:
        add("## fio results (medians)")
        add("")
        add("cold: guest page cache dropped and the cold aiod restarted before each run; a run stops "
            "at EOF or after the runtime, so no byte is read twice by fio. hot: the hot aiod holds "
            "the whole file; `buffered` = io_uring without O_DIRECT on a warm page cache. "
            "CPU s/GiB = (fio usr+sys + aiod utime+stime) / GiB read. "
            "`other CPU` = share of one CPU used by everything else on the machine during the run.")
        add("")
        add("| config | IOPS | MiB/s (min-max) | p99 µs | mean µs | CPU s/GiB (fio + aiod) "
            "| aiod hit % | other CPU | runs |")
        add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for cfg in res["config_order"]:
            c = s.get(cfg)
            if c is None:
                continue
            add(f"| {cfg} | {fmt(c['iops'])} | {fmt(c['bw_MiBps'])} "
                f"({fmt(c['bw_MiBps_min'])}-{fmt(c['bw_MiBps_max'])}) | {fmt(c['clat_p99_us'])} "
                f"| {fmt(c['clat_mean_us'])} | {fmt(c['cpu_s_per_GiB'], 2)} "
                f"({fmt(c['fio_cpu_s_per_GiB'], 2)} + {fmt(c['aiod_cpu_s_per_GiB'], 2)}) "
                f"| {fmt(c['aiod_hit_pct'])} | {fmt(c['other_cpu_frac'], 2)} | {c['runs']} |")
        add("")
        add("## aiod relative to direct io_uring (ratio of medians)")
        add("")
        add("| workload | cache | IOPS / bandwidth | p99 latency | CPU per GiB |")
        add("|---|---|---:|---:|---:|")
        for r in res["ratios"]:
            add(f"| {r['workload']} | {r['cache']} | {fmt(r['bw_ratio'], 3)} | "
                f"{fmt(r['p99_ratio'], 2)} | {fmt(r['cpu_ratio'], 2)} |")
        add("")
    if not res["hit_summary"]:
        add("(cache-hit round trip not measured in this run: HIT=0)")
        add("")
    else:
        add("## Cache-hit round trip (hit_rtt, 4 KiB, medians over runs)")
        add("")
        add("`aiod`: `rtio_client_pread()` of 4 KiB already in aiod's cache (READ0, reply, copy, "
            "READ1). `mq floor`: bare request/reply over two POSIX message queues between two "
            "processes, the least this design can cost. same_cpu / split_cpu: client and aiod "
            "pinned to one CPU / to different CPUs.")
        add("")
        add("| path | placement | median µs | p90 µs | p99 µs | worst run median / p99 µs "
            "| client CPU µs/op | aiod CPU µs/op | aiod ctx sw/op | all hits |")
        add("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        hs = res["hit_summary"]
        for kind, label in (("aiod", "aiod"), ("mq", "mq floor")):
            for variant, h in hs.get(kind, {}).items():
                add(f"| {label} | {variant} | {fmt(h['median_us'], 2)} | {fmt(h['p90_us'], 2)} "
                    f"| {fmt(h['p99_us'], 2)} | {fmt(h['median_us_worst_run'], 2)} / "
                    f"{fmt(h['p99_us_worst_run'], 1)} | {fmt(h.get('client_cpu_us_per_op'), 2)} "
                    f"| {fmt(h.get('aiod_cpu_us_per_op'), 2)} | {fmt(h.get('aiod_ctxsw_per_op'), 2)} "
                    f"| {h.get('all_hits', '-')} |")
        add("")
        st = res.get("strace")
        if st:
            add("Syscalls per cache hit (strace -c, separate untimed pass): "
                f"client {strace_text(st.get('client'))}; aiod {strace_text(st.get('aiod'))}.")
            add("")
    add("## Caveats")
    add("")
    add("- The disk is virtual: dropping the guest's caches cannot drop the hypervisor's, so "
        "`cold` means cold in this machine (page cache and aiod), not necessarily cold media; "
        "`direct` cold and hot differ only by that.")
    add("- The machine is shared (see `other CPU`): other work ran during these runs; the "
        "rotation spreads it over all configurations, medians damp it, it does not vanish.")
    add("- Cold runs stop at EOF: a 1 MiB sequential cold run lasts file size / bandwidth, "
        "which can be shorter than the runtime.")
    add("- A cold 4 KiB random read of a file larger than an eighth of aiod's cache reads only "
        "its page (pass-through, aiod(8) RANDOM READS) and caches nothing; in a smaller file it "
        f"loads a whole {p['block_size']} block, and later reads in that block are hits "
        "(see `aiod hit %`).")
    add("")
    add("## Targets")
    add("")
    add("| target | measured | verdict |")
    add("|---|---|---|")
    for t in res["targets"]:
        add(f"| {t['target']} | {t['measured']} | {'met' if t['met'] else 'MISSED'} |")
    add("")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True, help="path without extension")
    ap.add_argument("--command", required=True)
    ap.add_argument("--file-size", type=int, required=True)
    ap.add_argument("--cache-size", required=True)
    ap.add_argument("--block-size", required=True)
    ap.add_argument("--runtime", type=int, required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--clk-tck", type=int, default=100)
    ap.add_argument("--dev", default="")
    ap.add_argument("--dir", default="")
    ap.add_argument("--aiod", default="")
    ap.add_argument("--readahead", default="default")
    ap.add_argument("--hit-n", type=int, default=20000)
    ap.add_argument("--rand-iodepth", type=int, default=8)
    ap.add_argument("--seq-iodepth", type=int, default=8)
    args = ap.parse_args()

    runs = load_runs(args.raw, args.clk_tck)
    summary = summarize(runs)
    hits, hit_summary = load_hits(args.raw, args.hit_n)
    strace = {
        "client": parse_strace(os.path.join(args.raw, "hit", "strace.client"), 5000),
        "aiod": parse_strace(os.path.join(args.raw, "hit", "strace.aiod"), 5000),
    }
    if not strace["client"] and not strace["aiod"]:
        strace = None

    order = [f"{wl}-{c}-{e}" for wl in ("rand4k", "seq1m") for c in ("cold", "hot")
             for e in ("direct", "rtio", "buffered")]
    order = [c for c in order if c in summary]
    ratios = []
    for wl in ("rand4k", "seq1m"):
        for cache in ("cold", "hot"):
            d, r = summary.get(f"{wl}-{cache}-direct"), summary.get(f"{wl}-{cache}-rtio")
            if not d or not r:
                continue
            key = "iops" if wl == "rand4k" else "bw_MiBps"
            ratios.append({
                "workload": wl, "cache": cache,
                "bw_ratio": r[key] / d[key] if d[key] else None,
                "p99_ratio": r["clat_p99_us"] / d["clat_p99_us"] if d["clat_p99_us"] else None,
                "cpu_ratio": (r["cpu_s_per_GiB"] / d["cpu_s_per_GiB"]
                              if d["cpu_s_per_GiB"] else None),
            })
    targets = []
    for rt in ratios:
        if rt["workload"] == "seq1m" and rt["bw_ratio"] is not None:
            d = summary[f"seq1m-{rt['cache']}-direct"]["bw_MiBps"]
            r = summary[f"seq1m-{rt['cache']}-rtio"]["bw_MiBps"]
            targets.append({
                "target": f"1 MiB sequential ({rt['cache']}) through aiod >= 90% of direct io_uring",
                "measured": f"{r:.0f} vs {d:.0f} MiB/s = {100 * rt['bw_ratio']:.1f}%",
                "met": rt["bw_ratio"] >= SEQ1M_TARGET,
            })
    for variant, h in hit_summary.get("aiod", {}).items():
        targets.append({
            "target": f"cache-hit round trip <= {HIT_TARGET_US:.0f} µs ({variant}, median)",
            "measured": f"median {h['median_us']:.2f} µs, p99 {h['p99_us']:.2f} µs",
            "met": h["median_us"] <= HIT_TARGET_US,
        })

    res = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": args.command,
        "json_path": args.out + ".json",
        "raw_dir": args.raw,
        "params": {
            "file_size": args.file_size, "cache_size": args.cache_size,
            "block_size": args.block_size, "readahead_blocks": args.readahead,
            "runtime_s": args.runtime, "runs": args.runs,
            "dir": args.dir, "hit_n": args.hit_n, "rand_iodepth": args.rand_iodepth,
            "seq_iodepth": args.seq_iodepth,
        },
        "machine": machine(args),
        "config_order": order,
        "summary": summary,
        "ratios": ratios,
        "hit_summary": hit_summary,
        "strace": strace,
        "targets": targets,
        "runs": runs,
        "hit_runs": hits,
    }
    with open(args.out + ".json", "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1, sort_keys=False)
        f.write("\n")
    with open(args.out + ".md", "w", encoding="utf-8") as f:
        f.write(markdown(res))


if __name__ == "__main__":
    main()
