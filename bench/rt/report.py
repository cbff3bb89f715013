#!/usr/bin/python3
"""Tables and the plot of the real-time stream benchmark.

  report.py sweep OUT PARAMS RUNS SERIES ADMISSION [OLD.json]
      OUT.json (everything), OUT.md (tables), OUT.png (streams vs miss rate,
      one line per configuration, one panel per bitrate and greedy readers)
      from run.sh's files: PARAMS key=value lines, RUNS and SERIES JSON lines,
      ADMISSION one JSON document (or null). With OLD.json (an earlier
      OUT.json), its series that were not measured again are kept.
  report.py render DOC.json OUT
      OUT.md and OUT.png again from a sweep's OUT.json (after fixing report.py).
  report.py table RUNS
      the short table scripts/demo.sh prints.

Copyright (C) 2026 rtio developers
SPDX-License-Identifier: GPL-3.0-or-later
"""
import json
import os
import platform
import sys
from collections import OrderedDict, defaultdict

CONFIG_ORDER = ["plain", "plain-ra", "io_uring", "rtio"]
CONFIG_LABEL = {
    "plain": "plain share",
    "plain-ra": "plain, read_ahead_kb 8192",
    "io_uring": "vfs io_uring",
    "rtio": "rtio (aiod)",
}


def read_lines(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    out.append(json.loads(line))
    except OSError:
        pass
    return out


def read_params(path):
    params = OrderedDict()
    with open(path) as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep:
                params[key] = value
    return params


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = "%.1f GiB" % (kb / 1048576)
    except (OSError, ValueError, IndexError):
        pass
    return OrderedDict([
        ("host", platform.node()),
        ("kernel", platform.release()),
        ("nproc", os.cpu_count()),
        ("cpu", cpu),
        ("memory", mem),
    ])


def config_key(c):
    return (CONFIG_ORDER.index(c) if c in CONFIG_ORDER else 99, c)


def rate_bps(s):
    mul = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
    return float(s[:-1]) * mul[s[-1]] if s and s[-1] in mul else float(s)


def sweep_runs(runs):
    """Runs of the sweep (not the admission run), grouped by series and count."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in runs:
        if r.get("admission_mode") == "refuse":
            continue
        groups[(r["config"], r["bitrate"], r["greedy"])][r["streams"]].append(r)
    return groups


def clean(r):
    return r.get("error_count", 0) == 0


def fmt_rate(misses, chunks):
    if chunks == 0:
        return "-"
    if misses == 0:
        return "0"
    return "%.2g%%" % (100.0 * misses / chunks)


def fmt(v, spec="%.1f", none="-"):
    return none if v is None else spec % v


def boundary_runs(groups, s):
    key = (s["config"], s["bitrate"], s["greedy"])
    return [r for r in groups[key].get(s["max_clean_streams"], []) if clean(r)]


def summary_rows(series, groups):
    rows = []
    for s in sorted(series, key=lambda s: (rate_bps(s["bitrate"]), s["greedy"], config_key(s["config"]))):
        at = boundary_runs(groups, s)
        fail = s.get("first_failing")
        fail_runs = groups[(s["config"], s["bitrate"], s["greedy"])].get(fail, []) if fail else []
        fm = sum(r["misses"] for r in fail_runs)
        fc = sum(r["chunks"] for r in fail_runs)

        def mean(f):
            vals = [f(r) for r in at]
            return sum(vals) / len(vals) if vals else None

        rows.append(OrderedDict([
            ("config", s["config"]),
            ("bitrate", s["bitrate"]),
            ("greedy", s["greedy"]),
            ("max_clean_streams", s["max_clean_streams"]),
            ("runs_at_max", len(at)),
            ("first_failing", fail),
            ("misses_at_first_failing", "%d/%d" % (fm, fc) if fail_runs else None),
            ("greedy_mb_per_s_at_max", mean(lambda r: r["greedy_mb_per_s"]) if s["greedy"] else None),
            ("greedy_wrapped_at_max", any(r.get("greedy_wrapped") for r in at)),
            ("cpu_s_at_max", mean(lambda r: r["cpu_s"]["total"])),
            ("cpu_pct_at_max", mean(lambda r: 100.0 * r["cpu_s"]["total"] / r["wall_s"])),
            ("disk_mb_per_s_at_max", mean(lambda r: r["disk"].get("read_mb_per_s", 0))),
            ("mean_request_kib_at_max", mean(lambda r: r["disk"].get("mean_request_kib", 0))),
            ("loadavg_at_max", mean(lambda r: r["loadavg"]["start"])),
        ]))
    return rows


def md_sweep(doc, groups, rows):
    p = doc["parameters"]
    m = doc["machine"]
    out = []
    w = out.append
    w("# Real-time streams on an emulated single-spindle disk (%s)" % p.get("date", ""))
    w("")
    if p.get("complete") != "true":
        w("**Incomplete: the sweep was interrupted; these are the runs it finished.**")
        w("")
    w("Command: `%s` (%s s)" % (p.get("command", ""), p.get("elapsed_s", "?")))
    w("")
    if p.get("note"):
        w("**Note:** %s" % p["note"])
        w("")
    if p.get("merged_from"):
        w("Merged: this command measured some series again; the others, and their runs, are kept "
          "from an earlier sweep with the same settings: `%s`." % p["merged_from"])
        w("")
    w("Machine: %s, kernel %s, %s CPUs (%s), %s RAM; load average %s at the start, %s at the end "
      "(shared with other work: every run below carries its own load average)." % (
          m["host"], m["kernel"], m["nproc"], m["cpu"], m["memory"], p.get("loadavg_start", "?"),
          p.get("loadavg_end", "?")))
    w("Software: %s, %s." % (p.get("smbd_version", "smbd ?"), p.get("aiod_version", "aiod ?")))
    w("")
    w("Method: emudisk (%s; one request at a time, a seek unless a request starts where the last ended) "
      "with ext4 on a direct-I/O loop device, its bytes in RAM. One %s-chunk paced client per stream "
      "(rtio-stream: own process, own SMB connection, own file), prebuffer %s chunks, streams started %s ms "
      "apart, each playing %s s; greedy reader: %s reads of its own file for as long as streams play. "
      "Every run starts cold: fresh smbd (and aiod), page cache of the files dropped. "
      "A count is *clean* when every one of its %d runs had zero late chunks; the boundary count is "
      "re-run, so one late chunk anywhere decides." % (
          p.get("emudisk", "seek 14.5 ms, 168 MB/s"), p.get("chunk"), p.get("client_prebuffer_chunks"),
          p.get("stagger_ms"), p.get("duration_s"), p.get("greedy_chunk"),
          1 + int(p.get("confirm_runs", "1"))))
    if p.get("stream_file_layout"):
        w("")
        w("Stream files: %s." % p["stream_file_layout"].rstrip("; "))
    w("")
    w("rtio settings: cache %s of %s blocks (direct_io = %s), read-ahead io_size %s, engine queue_depth %s, "
      "best_effort_deadline_ms %s, stream class `*.mxf` at the streams' bitrate with prebuffer_ms %s "
      "(aiod reads ahead (prebuffer_ms + 1 s) x bitrate); admission off except in the admission run. "
      "plain-ra: loop read_ahead_kb %s instead of %s. Why these values: bench/rt/README.md." % (
          p.get("rtio.cache.size"), p.get("rtio.cache.block_size"), p.get("rtio.cache.direct_io"),
          p.get("rtio.readahead.io_size"), p.get("rtio.engine.queue_depth"),
          p.get("rtio.readahead.best_effort_deadline_ms"),
          p.get("rtio.stream.prebuffer_ms"), p.get("read_ahead_kb_plain_ra"), p.get("read_ahead_kb")))
    w("")
    w("## Most streams with zero misses")
    w("")
    w("| bitrate | greedy | configuration | streams, 0 misses | next count: misses/chunks | greedy MB/s | "
      "CPU s (smbd+aiod) | CPU % of a core | disk MB/s | mean request KiB | load avg |")
    w("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        w("| %s | %d | %s | **%d** | %s | %s | %s | %s | %s | %s | %s |" % (
            r["bitrate"], r["greedy"], CONFIG_LABEL.get(r["config"], r["config"]), r["max_clean_streams"],
            ("%d: %s" % (r["first_failing"], r["misses_at_first_failing"])) if r["first_failing"] else "-",
            fmt(r["greedy_mb_per_s_at_max"]) + ("*" if r["greedy_wrapped_at_max"] else ""),
            fmt(r["cpu_s_at_max"], "%.2f"),
            fmt(r["cpu_pct_at_max"]), fmt(r["disk_mb_per_s_at_max"]), fmt(r["mean_request_kib_at_max"], "%.0f"),
            fmt(r["loadavg_at_max"], "%.2f")))
    w("")
    w("Greedy MB/s, CPU, disk and load are means over the runs at the boundary count. "
      "CPU counts smbd (all its processes) and aiod, not the clients and not the emulated disk. "
      "\\* the greedy reader read past the end of its file: part of its rate came from the page cache "
      "or aiod's cache, not the disk.")
    w("")

    w("## Miss rate per stream count")
    w("")
    w("Late chunks / all chunks over every run at that count (runs in brackets when more than one).")
    w("")
    keys = sorted(groups, key=lambda k: (rate_bps(k[1]), k[2], config_key(k[0])))
    counts = sorted({n for k in keys for n in groups[k]})
    if counts:
        w("| bitrate | greedy | configuration | " + " | ".join(str(n) for n in counts) + " |")
        w("|---|---|---|" + "---:|" * len(counts))
        for k in keys:
            cells = []
            for n in counts:
                rs = groups[k].get(n, [])
                if not rs:
                    cells.append("")
                    continue
                cell = fmt_rate(sum(r["misses"] for r in rs), sum(r["chunks"] for r in rs))
                if any(not clean(r) for r in rs):
                    cell += " (err)"
                if len(rs) > 1:
                    cell += " [%d]" % len(rs)
                cells.append(cell)
            w("| %s | %d | %s | %s |" % (k[1], k[2], CONFIG_LABEL.get(k[0], k[0]), " | ".join(cells)))
        w("")

    adm = doc.get("admission")
    w("## Admission control")
    w("")
    if not adm:
        w("Not run.")
    else:
        w("`aiod --calibrate` on the emulated disk, then `[admission] mode = refuse` with that profile: "
          "capacity %.1f MB/s for %s reads, minus %d %% headroom, admits %d streams; %d were opened, "
          "%s ms apart." % (adm["capacity_Bps"] / 1e6, p.get("rtio.readahead.io_size"), adm["headroom_pct"],
                          adm["admitted_expected"], adm["opened"], p.get("stagger_ms")))
        w("")
        w("| opens refused by aiod | clients whose open failed | smbclient probe: NT_STATUS_INSUFFICIENT_RESOURCES | "
          "streams served | their chunks | their misses |")
        w("|---:|---:|---|---:|---:|---:|")
        w("| %s | %d | %s | %d | %d | %d |" % (
            adm.get("refused_by_aiod"), len(adm["clients_failed"]),
            "yes" if adm.get("probe_saw_insufficient_resources") else "no",
            adm["served_streams"], adm["served_chunks"], adm["served_misses"]))
        w("")
        w("aiod counts every refused open (the paced client's and the probe's). The probe is `smbclient` "
          "opening the refused stream's file while the admitted streams play: it prints the NT status; "
          "rtio-stream only gets libsmbclient's errno, which maps NT_STATUS_INSUFFICIENT_RESOURCES to EINVAL.")
        w("")
        for c in adm["clients_failed"]:
            w("- %s: `%s`" % (c["client"], c["error"]))
        for l in adm.get("smbclient_probe", []):
            w("- smbclient: `%s`" % l)
        if adm.get("aiod_log"):
            w("- aiod log: `%s`" % adm["aiod_log"][-1])
        if adm.get("smbd_log"):
            w("- smbd log: `%s`" % adm["smbd_log"][0])
        w("")
        w("Calibration:")
        w("")
        w("```")
        w(adm.get("calibration", "").strip())
        w("```")
    w("")

    w("## Every run")
    w("")
    w("| run | chunks | misses | worst lateness ms | worst read ms | greedy MB/s | CPU smbd s | CPU aiod s | "
      "disk MB/s | disk busy % | requests | seeks | mean KiB | aiod late reads | aiod RA blocks | "
      "aiod disk reads | load |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in doc["runs"]:
        d = r["disk"]
        a = r.get("aiod") or {}
        w("| %s%s | %d | %d | %s | %s | %s | %.2f | %.2f | %.1f | %.0f | %d | %d | %.0f | %s | %s | %s | %.2f |" % (
            r["id"], " (errors: %d)" % r["error_count"] if r.get("error_count") else "",
            r["chunks"], r["misses"], fmt(r["worst_lateness_ms"]), fmt(r["worst_read_ms"]),
            (fmt(r["greedy_mb_per_s"]) + ("*" if r.get("greedy_wrapped") else "")) if r["greedy"] else "-",
            r["cpu_s"]["smbd"], r["cpu_s"]["aiod"],
            d.get("read_mb_per_s", 0), d.get("busy_pct", 0), d.get("read_requests", 0),
            d.get("read_seeks", 0), d.get("mean_request_kib", 0),
            a.get("deadline_misses", "-"), a.get("readahead_blocks", "-"), a.get("disk_reads", "-"),
            r["loadavg"]["start"]))
    w("")
    w("aiod late reads = aiod's `deadline_misses` (a stream read that found its block not yet in the "
      "cache; runs recorded before 2026-11-22 04:50 also counted every stream's first reads, so their "
      "count is not zero even when no chunk was late).")
    w("")
    return "\n".join(out)


def plot(path, doc, groups):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(k[1], k[2]) for k in groups}, key=lambda b: (rate_bps(b[0]), b[1]))
    if not panels:
        return
    cols = 2 if len(panels) > 1 else 1
    rows_n = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(6.5 * cols, 4.2 * rows_n), squeeze=False)
    markers = {"plain": "o", "plain-ra": "s", "io_uring": "^", "rtio": "D"}
    # plain and io_uring often coincide: dashes keep both visible
    styles = {"plain": "-", "plain-ra": "-", "io_uring": "--", "rtio": "-"}
    for ax, (bitrate, g) in zip(axes.flat, panels):
        for config in sorted({k[0] for k in groups if k[1] == bitrate and k[2] == g}, key=config_key):
            pts = groups[(config, bitrate, g)]
            xs = sorted(pts)
            ys = [100.0 * sum(r["misses"] for r in pts[n]) / max(1, sum(r["chunks"] for r in pts[n])) for n in xs]
            ax.plot(xs, ys, marker=markers.get(config, "x"), linestyle=styles.get(config, "-"),
                    markerfacecolor="none" if config == "io_uring" else None,
                    label=CONFIG_LABEL.get(config, config))
        ax.set_yscale("symlog", linthresh=0.1)
        ax.set_ylim(bottom=-0.02)
        ax.set_xlabel("concurrent streams at %sbit/s" % bitrate)
        ax.set_ylabel("late chunks, % (0 = none)")
        ax.set_title("%sbit/s, %d greedy reader%s" % (bitrate, g, "" if g == 1 else "s"))
        ax.grid(True, alpha=0.3)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    p = doc["parameters"]
    fig.suptitle("rtio: streams vs miss rate, emulated disk (%s); %s, %s CPUs, load avg %s" % (
        p.get("emudisk", ""), doc["machine"]["kernel"], doc["machine"]["nproc"], p.get("loadavg_start", "?")),
        fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)


def series_key(x):
    return (x["config"], x["bitrate"], x["greedy"])


def merge(old_path, runs, series, admission, params):
    """Series measured now replace the same series of an earlier sweep."""
    with open(old_path) as f:
        old = json.load(f)
    fresh = {series_key(x) for x in series}
    kept = [x for x in old.get("series", []) if series_key(x) not in fresh]
    old_runs = [r for r in old.get("runs", [])
                if r.get("admission_mode") == "refuse" and admission is None
                or r.get("admission_mode") != "refuse" and series_key(r) not in fresh]
    op = old.get("parameters", {})
    earlier = "%s (%s): %s" % (
        old.get("command"), old.get("date"),
        ", ".join("%s %s g=%d" % series_key(x) for x in kept) +
        (", admission" if admission is None and old.get("admission") else ""))
    # an earlier merge's sources stay named
    params["merged_from"] = earlier + ("; before that " + op["merged_from"] if op.get("merged_from") else "")
    if op.get("stream_file_layout"):
        params["stream_file_layout"] = "%s; earlier sweep: %s" % (
            params.get("stream_file_layout", "").rstrip("; "), op["stream_file_layout"].rstrip("; "))
    return (old_runs + runs, kept + series,
            admission if admission is not None else old.get("admission"))


def cmd_sweep(out, params_path, runs_path, series_path, admission_path, old_path=None):
    params = read_params(params_path)
    runs = read_lines(runs_path)
    series = read_lines(series_path)
    try:
        with open(admission_path) as f:
            admission = json.load(f)
    except (OSError, ValueError):
        admission = None
    if old_path:
        runs, series, admission = merge(old_path, runs, series, admission, params)
    groups = sweep_runs(runs)
    rows = summary_rows(series, groups)
    doc = OrderedDict([
        ("command", params.get("command")),
        ("date", params.get("date")),
        ("complete", params.get("complete") == "true"),
        ("machine", machine()),
        ("parameters", params),
        ("summary", rows),
        ("series", series),
        ("admission", admission),
        ("runs", [{k: v for k, v in r.items() if k != "disk_raw"} for r in runs]),
    ])
    with open(out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(out + ".md", "w") as f:
        f.write(md_sweep(doc, groups, rows))
    plot(out + ".png", doc, groups)
    return 0


def cmd_render(doc_path, out):
    with open(doc_path) as f:
        doc = json.load(f, object_pairs_hook=OrderedDict)
    # documents from before a run knew whether its greedy reader wrapped
    gfile = int(doc["parameters"].get("greedy_file_mib", "0")) << 20
    for r in doc["runs"]:
        if "greedy_wrapped" not in r:
            r["greedy_wrapped"] = bool(r["greedy"] and gfile and r["greedy_bytes"] > gfile)
    groups = sweep_runs(doc["runs"])
    with open(out + ".md", "w") as f:
        f.write(md_sweep(doc, groups, summary_rows(doc["series"], groups)))
    plot(out + ".png", doc, groups)
    return 0


def cmd_table(runs_path):
    runs = read_lines(runs_path)
    print("%-10s %7s %6s %7s %7s %15s %12s %9s" % ("config", "streams", "greedy", "chunks", "misses",
                                                    "worst late ms", "greedy MB/s", "CPU s"))
    for r in runs:
        print("%-10s %7d %6d %7d %7d %15s %12s %9.2f%s" % (
            r["config"], r["streams"], r["greedy"], r["chunks"], r["misses"],
            fmt(r["worst_lateness_ms"], "%+.1f"),
            (fmt(r["greedy_mb_per_s"]) + ("*" if r.get("greedy_wrapped") else "")) if r["greedy"] else "-",
            r["cpu_s"]["total"], "   errors: %d" % r["error_count"] if r.get("error_count") else ""))
    return 0


def main(argv):
    if len(argv) in (7, 8) and argv[1] == "sweep":
        return cmd_sweep(*argv[2:])
    if len(argv) == 4 and argv[1] == "render":
        return cmd_render(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "table":
        return cmd_table(argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
