#!/usr/bin/python3
"""The report of bench/qos/scenario.sh: from its runs directory (one
directory N-CONFIG per run: run.json, one rtio-stream JSON per client with
a --timeline, disk.json from the emulated disk) to PREFIX.{json,md,png}.

Every rate is MiB/s (2^20 bytes/s), over 1-second windows of the scenario's
own clock (t = 0 when the first clients started): each client's
100 ms bins are put into the window their middle falls in.

  scenario_report.py RUNS_DIR PREFIX --command ... (see scenario.sh)

Copyright (C) 2026 rtio developers
SPDX-License-Identifier: GPL-3.0-or-later
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess

MIB = 1 << 20
WHO = ["bay", "ingest", "farm", "editor"]  # the principals, in the plot's order
COLOURS = {"bay": "tab:blue", "ingest": "tab:red", "farm": "tab:orange",
           "editor": "tab:green", "total": "0.45"}


def size(s):
    """aiod.ini / rtio-stream sizes: 32M = 32 MiB."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * units[s[-1]]) if s[-1] in units else int(s)


def load(path):
    with open(path) as f:
        return json.loads(f.read().strip().splitlines()[-1])


def principal(client):
    return "farm" if client.startswith("farm") else client


def windows_of(run_dir, meta, duration):
    """{principal: [bytes in window k]} and the clients' own results."""
    win = {p: [0] * duration for p in WHO}
    clients = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "*.json"))):
        name = os.path.basename(path)[:-5]
        if name in ("run", "disk", "qos"):
            continue
        r = load(path)
        clients[name] = r
        tl = r.get("timeline")
        if not tl:
            continue
        off = tl["t0_unix_s"] - meta["t0_unix_s"]
        bin_s = tl["bin_ms"] / 1000.0
        for i, b in enumerate(tl["bytes"]):
            k = int(off + (i + 0.5) * bin_s)
            if 0 <= k < duration:  # the request in flight at D (SIGTERM) is not counted
                win[principal(name)][k] += b
    return win, clients


def start_of(clients, prefix, meta):
    """When (scenario seconds) the first client of a principal started."""
    t = [c["timeline"]["t0_unix_s"] - meta["t0_unix_s"] for n, c in clients.items()
         if principal(n) == prefix and c.get("timeline")]
    return min(t) if t else 0.0


def analyse(run_dir, a):
    meta = load(os.path.join(run_dir, "run.json"))
    d = a.duration
    win, clients = windows_of(run_dir, meta, d)
    rate = {p: [b / MIB for b in win[p]] for p in WHO}
    rate["total"] = [sum(rate[p][k] for p in WHO) for k in range(d)]
    out = {"run": meta["run"], "config": meta["config"], "load1": meta["load1"],
           "t0_unix_s": meta["t0_unix_s"],
           "editor_at_s": meta["editor_at_s"], "reload_at_s": meta["reload_at_s"],
           "reload_done_s": meta["reload_done_s"], "rates_MiBps": rate}

    # the ingest limit, window by window: full windows from 1 s after the
    # station started, before the last; the second after the reload left out
    # (a reload applies within a second)
    reload_at = meta["reload_at_s"]
    l1, l2 = size(a.ingest_limit), size(a.ingest_limit2)
    first = int(start_of(clients, "ingest", meta)) + 2
    ratios = []
    for k in range(first, d - 1):
        if k + 1 > reload_at and k < reload_at + 1:
            continue
        lim = l1 if k + 1 <= reload_at else l2
        ratios.append(win["ingest"][k] / lim)
    out["ingest_ratio"] = {"windows": len(ratios), "median": statistics.median(ratios),
                           "worst": max(ratios, key=lambda x: abs(x - 1)),
                           "min": min(ratios), "max": max(ratios)}

    # the reservation, over the windows the bay read in (after its first second)
    res = size(a.bay_reserve)
    first = int(start_of(clients, "bay", meta)) + 2
    held = [win["bay"][k] / res for k in range(first, d - 1) if win["bay"][k] > 0]
    out["bay_held"] = {"windows": len(held), "median": statistics.median(held), "worst": min(held),
                       "share_ge_95": sum(1 for h in held if h >= 0.95) / len(held)}
    bay = clients.get("bay", {})
    out["bay_misses"] = bay.get("misses_after_startup")
    out["bay_chunks"] = bay.get("chunks")

    # per phase: A [0, D/3) B [D/3, D/2) C [D/2, 2D/3) D [2D/3, D)
    edges = [0, d / 3, d / 2, 2 * d / 3, d]
    out["phases"] = {}
    for name, lo, hi in zip("ABCD", edges, edges[1:]):
        ks = [k for k in range(d) if k >= lo and k + 1 <= hi + 1e-9]
        out["phases"][name] = {p: sum(rate[p][k] for k in ks) / len(ks) for p in WHO + ["total"]}

    out["total_MiBps"] = sum(rate["total"]) / d
    out["read_MiBps"] = sum(sum(rate[p]) for p in WHO if p != "ingest") / d
    out["write_MiBps"] = sum(rate["ingest"]) / d
    disk = load(os.path.join(run_dir, "disk.json"))
    out["disk_read_MiBps"] = disk["read"]["bytes"] / MIB / d
    out["disk_write_MiBps"] = disk["write"]["bytes"] / MIB / d
    out["disk_busy_pct"] = 100.0 * (disk["read"]["busy_ms"] + disk["write"]["busy_ms"]) / 1000.0 / d
    out["errors"] = {n: c["error"] for n, c in clients.items() if c.get("error")}
    out["wrapped"] = [n for n, c in clients.items()
                      if c["mode"] != "record" and c["bytes"] > c["file_bytes"] > 0]
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarise(runs, configs, d):
    s = {}
    for c in configs:
        rs = [r for r in runs if r["config"] == c]
        s[c] = {
            "runs": len(rs),
            "ingest_ratio_median": med(r["ingest_ratio"]["median"] for r in rs),
            "ingest_ratio_worst": max((r["ingest_ratio"]["worst"] for r in rs), key=lambda x: abs(x - 1)),
            "bay_held_median": med(r["bay_held"]["median"] for r in rs),
            "bay_held_worst": min(r["bay_held"]["worst"] for r in rs),
            "bay_held_share_ge_95": med(r["bay_held"]["share_ge_95"] for r in rs),
            "bay_misses": med(r["bay_misses"] for r in rs),
            "total_MiBps": med(r["total_MiBps"] for r in rs),
            "read_MiBps": med(r["read_MiBps"] for r in rs),
            "write_MiBps": med(r["write_MiBps"] for r in rs),
            "disk_read_MiBps": med(r["disk_read_MiBps"] for r in rs),
            "disk_write_MiBps": med(r["disk_write_MiBps"] for r in rs),
            "disk_busy_pct": med(r["disk_busy_pct"] for r in rs),
            "phases": {ph: {p: med(r["phases"][ph][p] for r in rs) for p in WHO + ["total"]}
                       for ph in "ABCD"},
            "rates_MiBps_median": {p: [med(r["rates_MiBps"][p][k] for r in rs) for k in range(d)]
                                   for p in WHO + ["total"]},
            "errors": sum(len(r["errors"]) for r in rs),
            "wrapped": sorted({w for r in rs for w in r["wrapped"]}),
        }
    return s


def machine(a):
    def run(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "?"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    return {"uname": run("uname", "-srvmo"), "nproc": int(run("nproc") or 0), "cpu": cpu,
            "smbd": run("smbd", "--version"), "load_start": a.load_start, "load_end": a.load_end,
            "mem_total_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "tcp_cc": os.environ.get("BENCH_TCP_CC_IN_EFFECT", "?")}


def aiod_derived(runs_dir):
    """What aiod derived from the calibration profile (first rtio run's log)."""
    logs = sorted(glob.glob(os.path.join(runs_dir, "*-rtio", "aiod.log")))
    if not logs:
        return []
    out = []
    for line in open(logs[0]):
        m = re.search(r"aiod\[\w+\] (settings: .*|admission: device capacity .*)", line)
        if m:
            what = re.sub(r" \((?:profile|from) [^)]*\)", "", m.group(1))
            if what not in out:
                out.append(what)
    return out


def plot(s, configs, a, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("scenario_report.py: matplotlib missing (apt-get install python3-matplotlib): no plot")
        return False
    d = a.duration
    fig, axes = plt.subplots(1, len(configs), figsize=(6.5 * len(configs), 4.8), sharey=True)
    if len(configs) == 1:
        axes = [axes]
    t = [k + 0.5 for k in range(d)]
    labels = {"bay": "bay (reserve %s)" % a.bay_reserve,
              "ingest": "ingest (writes; limit %s, %s after reload)" % (a.ingest_limit, a.ingest_limit2),
              "farm": "farm (%d connections, best effort)" % a.farm_conns,
              "editor": "editor (1 connection, best effort)", "total": "total"}
    for ax, c in zip(axes, configs):
        m = s[c]["rates_MiBps_median"]
        for p in WHO + ["total"]:
            ax.plot(t, m[p], color=COLOURS[p], lw=2.2 if p != "total" else 1.2,
                    ls="-" if p != "total" else "--", label=labels[p])
        if c != "plain":
            ax.hlines(size(a.bay_reserve) / MIB, 0, d, colors=COLOURS["bay"], linestyles=":", lw=1)
            ax.hlines(size(a.ingest_limit) / MIB, 0, d / 2, colors=COLOURS["ingest"], linestyles=":", lw=1)
            ax.hlines(size(a.ingest_limit2) / MIB, d / 2, d, colors=COLOURS["ingest"], linestyles=":", lw=1)
        for x, what in ((d / 3, "editor joins"), (d / 2, "reload" if c != "plain" else "(no reload)"),
                        (2 * d / 3, "editor leaves")):
            ax.axvline(x, color="0.7", lw=0.8)
            ax.text(x + 0.4, 0.97, what, transform=ax.get_xaxis_transform(), fontsize=8,
                    va="top", rotation=90, color="0.35")
        title = {"plain": "plain Samba (no module, no QoS)",
                 "rtio": "rtio with [qos.bay] reserve, [qos.ingest] limit_write"}.get(c, c)
        ax.set_title("%s, median of %d runs" % (title, s[c]["runs"]), fontsize=10)
        ax.set_xlabel("seconds")
        ax.set_xlim(0, d)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("MiB/s over 1 s windows")
    axes[0].set_ylim(bottom=0)
    handles, names = axes[-1].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=8, loc="lower center", ncol=5, frameon=False)
    fig.suptitle("QoS scenario on the emulated single-spindle disk (bench/qos/scenario.sh); "
                 "dotted: rtio's reservation and limits", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    return True


def pct(x):
    return "%.1f %%" % (100.0 * x) if x is not None else "-"


def num(x, fmt="%.1f"):
    return fmt % x if x is not None else "-"


def markdown(doc, configs, a, png):
    s, m = doc["summary"], doc["machine"]
    have_plain, have_rtio = "plain" in s, "rtio" in s
    o = ["# QoS scenario: a reserved bay, a limited ingest station, best-effort readers; plain vs rtio", "",
         "Command: `%s` (commit %s, %s)" % (a.command, a.commit, doc["date"]), "",
         "Machine: %s; %d CPUs (%s), %.0f GiB; %s; load average at start %s, at end %s "
         "(the VM is shared: other sessions' builds and tests ran beside it)." % (
             m["uname"], m["nproc"], m["cpu"], m["mem_total_gib"], m["smbd"], m["load_start"],
             m["load_end"]), "",
         "TCP congestion control (the clients' connections to smbd on 127.0.0.1, bench/tcpcc.sh): %s"
         % m.get("tcp_cc", "?"), "",
         "Disk: the emulated single spindle (`bench/emudisk`: 14.5 ms seek, 168 MB/s, one request at "
         "a time), ext4 on it. rtio's aiod calibrated it (`aiod --calibrate`, 2 s per point) and "
         "derived from the profile: %s. [cache] size = 512M, direct_io = yes." % (
             "; ".join(doc["aiod_derived"]) or "(see the runs' aiod.log)"), "",
         "Runs: %d of each configuration, %d s each, interleaved (%s); every run cold (page cache "
         "dropped, new aiod and smbd, the last run's recording deleted). Numbers are medians over "
         "the runs; \"worst\" is over every window of every run." % (
             max(x["runs"] for x in s.values()), a.duration,
             ", ".join("%d %s" % (r["run"], r["config"]) for r in doc["runs"])), "",
         "## Scenario", "",
         "| client | user | connections | does | rtio's rule |", "|---|---|---:|---|---|",
         "| bay | rtiobay | 1 | plays bay.bin at %s/s (rtio-stream paced, %s reads, 0.5 s prebuffer) "
         "| `reserve = %s` |" % (a.bay_reserve, a.read_chunk, a.bay_reserve),
         "| ingest | rtioingest | 1 | records ingest.bin at %s bit/s (rtio-stream --write, %s writes) "
         "| `limit_write = %s`, `%s` after the reload |" % (a.ingest_wants, a.write_chunk,
                                                         a.ingest_limit, a.ingest_limit2),
         "| farm | rtiofarm | %d | reads three files back to back (%s reads) | none: best effort |" % (
             a.farm_conns, a.read_chunk),
         "| editor | rtioedit | 1 | reads one file back to back, from D/3 to 2D/3 | none: best effort |",
         "", "Timeline (D = %d s): 0 bay, ingest and farm start; D/3 the editor joins; D/2 aiod.ini's "
         "ingest limit is raised and aiod gets SIGHUP (rtio; plain has nothing to reload); 2D/3 the "
         "editor leaves. Both configurations serve the same files from the same disk through one "
         "smbd: share `plain` without a VFS module, share `rtio` with `vfs objects = rtio`." % a.duration,
         "", "![rate over time per client](%s)" % os.path.basename(png), "",
         "## Results", "",
         "| | " + " | ".join(configs) + " |", "|---|" + "---:|" * len(configs)]

    def row(label, f):
        o.append("| %s | %s |" % (label, " | ".join(f(s[c]) for c in configs)))
    row("ingest write rate / its limit, 1 s windows: median", lambda x: pct(x["ingest_ratio_median"]))
    row("ingest write rate / its limit: worst window", lambda x: pct(x["ingest_ratio_worst"]))
    row("bay rate / its reservation, 1 s windows it read in: median", lambda x: pct(x["bay_held_median"]))
    row("bay rate / its reservation: worst window", lambda x: pct(x["bay_held_worst"]))
    row("bay: windows at >= 95 % of the reservation", lambda x: pct(x["bay_held_share_ge_95"]))
    row("bay: chunks late after its 2 s start-up (of ~%d)" % (
        size(a.bay_reserve) // size(a.read_chunk) * a.duration), lambda x: num(x["bay_misses"], "%.0f"))
    row("total to the clients, MiB/s (reads + writes)", lambda x: num(x["total_MiBps"]))
    row("of which reads / writes, MiB/s", lambda x: "%s / %s" % (num(x["read_MiBps"]), num(x["write_MiBps"])))
    row("the disk during the run: read / written MiB/s", lambda x: "%s / %s" % (
        num(x["disk_read_MiBps"]), num(x["disk_write_MiBps"])))
    row("the disk busy (%)", lambda x: num(x["disk_busy_pct"], "%.0f"))
    row("client errors (all runs)", lambda x: "%d" % x["errors"])
    if have_plain and have_rtio:
        r = s["rtio"]["total_MiBps"] / s["plain"]["total_MiBps"]
        o += ["", "Total throughput, rtio vs plain: %.2fx (%+.1f %%; the issue asks for no worse than "
              "-5 %%: %s)." % (r, 100 * (r - 1), "holds" if r >= 0.95 else "DOES NOT HOLD")]
    o += ["", "The limit is the window's limit in force (%s before the reload, %s after it); the "
          "first 2 s of the station and the second after the reload are left out (a reload applies "
          "within a second), as is the last window. Windows are the scenario's clock; each client's "
          "100 ms bins (rtio-stream --timeline 100, bytes counted when a read or write completes) "
          "go to the window their middle falls in." % (a.ingest_limit, a.ingest_limit2), "",
          "## Per client and phase (MiB/s, medians over runs)", "",
          "Phases: A 0-D/3 (bay, ingest at %s, farm), B D/3-D/2 (+ editor), C D/2-2D/3 (ingest at %s), "
          "D 2D/3-D (editor gone)." % (a.ingest_limit, a.ingest_limit2), "",
          "| config | phase | bay | ingest | farm (%d conn) | editor | total |" % a.farm_conns,
          "|---|---|---:|---:|---:|---:|---:|"]
    for c in configs:
        for ph in "ABCD":
            p = s[c]["phases"][ph]
            o.append("| %s | %s | %s |" % (c, ph, " | ".join(num(p[w]) for w in WHO + ["total"])))
    o += ["", "## Runs", "", "| run | config | load1 | ingest/limit median (worst) | bay held median "
          "(worst) | total MiB/s | disk r/w MiB/s | reload at (applied) s |",
          "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in doc["runs"]:
        o.append("| %d | %s | %s | %s (%s) | %s (%s) | %.1f | %.1f / %.1f | %.2f (%s) |" % (
            r["run"], r["config"], r["load1"], pct(r["ingest_ratio"]["median"]),
            pct(r["ingest_ratio"]["worst"]), pct(r["bay_held"]["median"]), pct(r["bay_held"]["worst"]),
            r["total_MiBps"], r["disk_read_MiBps"], r["disk_write_MiBps"], r["reload_at_s"],
            num(r["reload_done_s"], "%.2f")))
    wrapped = sorted({w for c in configs for w in s[c]["wrapped"]})
    if wrapped:
        o += ["", "Files read past their end (wrapped to the start, maybe from a cache): %s." % ", ".join(wrapped)]
    o += ["", "rtio's aiod.ini (the ingest limit as after the reload):", "", "```", doc["aiod_ini"].strip(),
          "```", ""]
    return "\n".join(o)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs_dir")
    ap.add_argument("prefix")
    for k in ("command", "commit", "bay-reserve", "ingest-wants", "ingest-limit", "ingest-limit2",
              "read-chunk", "write-chunk", "profile", "load-start", "load-end", "aiod-ini"):
        ap.add_argument("--" + k, default="")
    ap.add_argument("--duration", type=int, required=True)
    ap.add_argument("--farm-conns", type=int, default=3)
    a = ap.parse_args()

    dirs = glob.glob(os.path.join(a.runs_dir, "*-*"))
    runs = sorted((analyse(p, a) for p in dirs if os.path.exists(os.path.join(p, "run.json"))),
                  key=lambda r: r["t0_unix_s"])
    configs = list(dict.fromkeys(r["config"] for r in sorted(runs, key=lambda r: r["config"] != "plain")))
    doc = {"command": a.command, "commit": a.commit,
           "date": subprocess.run(["date", "-u", "-d", "@%d" % runs[0]["t0_unix_s"], "+%Y-%m-%d %H:%M UTC"],
                                  capture_output=True, text=True).stdout.strip(),
           "machine": machine(a), "duration_s": a.duration,
           "scenario": {"bay_reserve": a.bay_reserve, "ingest_wants_bps": a.ingest_wants,
                        "ingest_limit": a.ingest_limit, "ingest_limit_after_reload": a.ingest_limit2,
                        "farm_connections": a.farm_conns, "read_chunk": a.read_chunk,
                        "write_chunk": a.write_chunk},
           "aiod_derived": aiod_derived(a.runs_dir),
           "profile": open(a.profile).read() if a.profile and os.path.exists(a.profile) else None,
           "aiod_ini": open(a.aiod_ini).read() if a.aiod_ini and os.path.exists(a.aiod_ini) else "",
           "summary": summarise(runs, configs, a.duration), "runs": runs}
    if "plain" in doc["summary"] and "rtio" in doc["summary"]:
        doc["total_rtio_vs_plain"] = doc["summary"]["rtio"]["total_MiBps"] / doc["summary"]["plain"]["total_MiBps"]
    png = a.prefix + ".png"
    if not plot(doc["summary"], configs, a, png):
        png = "(no plot: matplotlib missing)"
    with open(a.prefix + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    md = markdown(doc, configs, a, png)
    with open(a.prefix + ".md", "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
