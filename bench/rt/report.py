#!/usr/bin/python3
"""Tables and the plot of the real-time stream benchmark.

  report.py sweep OUT PARAMS RUNS SERIES ADMISSION [OLD.json]
      OUT.json (everything), OUT.md (one table per scenario, report_md.py),
      OUT.png (one panel per scenario: the most clean streams per
      configuration) from run.sh's files: PARAMS key=value lines, RUNS and
      SERIES JSON lines, ADMISSION one JSON document (or null). With OLD.json
      (an earlier OUT.json), its series that were not measured again are kept.
  report.py render DOC.json OUT
      OUT.md and OUT.png again from a sweep's OUT.json (after fixing report.py).
  report.py table RUNS
      the short table scripts/demo.sh prints.

Sweeps from before the scenarios (issue 11) read as scenario "staggered".

Copyright (C) 2026 rtio developers
SPDX-License-Identifier: GPL-3.0-or-later
"""
import json
import os
import platform
import sys
from collections import OrderedDict, defaultdict

from report_md import CONFIG_LABEL, config_key, md_sweep, prebuffer_key, rate_bps, scenario_key


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
        ("uname", " ".join(platform.uname())),
        ("nproc", os.cpu_count()),
        ("cpu", cpu),
        ("memory", mem),
    ])


def old_stagger(params):
    v = str(params.get("stagger_ms", ""))
    return int(v) if v.isdigit() else None


def normalize_run(r, params):
    """Runs of sweeps before the scenarios: staggered, prebuffer as a number."""
    r.setdefault("scenario", "staggered")
    r["client_prebuffer"] = str(r.get("client_prebuffer", params.get("client_prebuffer_chunks", "2")))
    r.setdefault("all_misses", r.get("misses", 0))
    r.setdefault("record_misses", 0)
    r.setdefault("record_chunks", 0)
    r.setdefault("recorders", 0)
    return r


def normalize_series(s, params):
    s.setdefault("scenario", "staggered")
    s["prebuffer"] = str(s.get("prebuffer", params.get("client_prebuffer_chunks", "2")))
    s.setdefault("stagger_ms", old_stagger(params))
    s.setdefault("kind", "search")
    s.setdefault("recorders", 0)
    return s


def series_key(x):
    """One series: scenario, configuration, bitrate or mix, greedy, prebuffer, stagger."""
    return (x.get("scenario", "staggered"), x["config"], x["bitrate"], x["greedy"],
            str(x.get("prebuffer", x.get("client_prebuffer", "2"))), x.get("stagger_ms"))


def sweep_runs(runs):
    """Runs of the sweep (not the admission run), grouped by series and count."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in runs:
        if r.get("admission_mode") == "refuse" or r.get("scenario") == "admission":
            continue
        groups[series_key(r)][r["streams"]].append(r)
    return groups


def clean(r):
    return r.get("error_count", 0) == 0


def late(rs):
    """Late chunks and all chunks of runs, streams and recorders together."""
    return (sum(r["all_misses"] for r in rs),
            sum(r["chunks"] + r.get("record_chunks", 0) for r in rs))


def mean_of(runs, f):
    vals = [v for v in (f(r) for r in runs) if v is not None]
    return sum(vals) / len(vals) if vals else None


def summary_rows(series, groups):
    rows = []
    order = lambda s: (scenario_key(s["scenario"]), rate_bps(s["bitrate"]), s["greedy"],
                       prebuffer_key(s["prebuffer"]), config_key(s["config"]))
    seen = set()
    for s in sorted(series, key=order):
        # a key swept twice (--greedy 0,1,0,1 interleaves repeats) is one
        # row: its runs are pooled in groups already
        if series_key(s) in seen:
            continue
        seen.add(series_key(s))
        runs = groups[series_key(s)]
        best = s["max_clean_streams"]
        # the runs at the count reported: the largest clean one, or a fixed count
        at = [r for r in runs.get(s.get("count") or best, []) if clean(r)]
        fail = s.get("first_failing")
        fail_runs = runs.get(fail, []) if fail else []
        fm, fc = late(fail_runs)
        am, ac = late(at)
        worst = [r["worst_lateness_ms"] for r in at if r.get("worst_lateness_ms") is not None]
        rows.append(OrderedDict([
            ("scenario", s["scenario"]),
            ("config", s["config"]),
            ("bitrate", s["bitrate"]),
            ("greedy", s["greedy"]),
            ("prebuffer", s["prebuffer"]),
            ("stagger_ms", s.get("stagger_ms")),
            ("kind", s["kind"]),
            ("max_clean_streams", best),
            ("count", s.get("count")),
            ("clean", s.get("clean")),
            ("runs_at_max", len(at)),
            ("misses_at_count", "%d/%d" % (am, ac) if s["kind"] == "fixed" and at else None),
            ("first_failing", fail),
            ("misses_at_first_failing", "%d/%d" % (fm, fc) if fail_runs else None),
            ("prebuffer_chunks", sorted({c for r in at or fail_runs for c in r.get("client_prebuffer_chunks", [])})),
            ("recorder_misses_at_max", "%d/%d" % (sum(r["record_misses"] for r in at),
                                                  sum(r["record_chunks"] for r in at))
             if s.get("recorders") and at else None),
            ("recorder_misses_at_first_failing", "%d/%d" % (sum(r["record_misses"] for r in fail_runs),
                                                           sum(r["record_chunks"] for r in fail_runs))
             if s.get("recorders") and fail_runs else None),
            ("worst_lateness_ms_at_max", max(worst) if worst else None),
            # rtio only: whether aiod's cache was full after the first playback
            ("replay_cache_full", [r["replay"]["cache_full"] for r in at
                                   if "cache_full" in (r.get("replay") or {})] or None),
            ("replay_warm_s", mean_of(at, lambda r: (r.get("replay") or {}).get("warm_s"))),
            ("greedy_mb_per_s_at_max", mean_of(at, lambda r: r["greedy_mb_per_s"]) if s["greedy"] else None),
            ("greedy_wrapped_at_max", any(r.get("greedy_wrapped") for r in at)),
            ("cpu_s_at_max", mean_of(at, lambda r: r["cpu_s"]["total"])),
            ("cpu_pct_at_max", mean_of(at, lambda r: 100.0 * r["cpu_s"]["total"] / r["wall_s"])),
            ("disk_mb_per_s_at_max", mean_of(at, lambda r: r["disk"].get("read_mb_per_s", 0))),
            ("disk_busy_pct_at_max", mean_of(at, lambda r: r["disk"].get("busy_pct"))),
            ("mean_request_kib_at_max", mean_of(at, lambda r: r["disk"].get("mean_request_kib", 0))),
            ("loadavg_at_max", mean_of(at, lambda r: r["loadavg"]["start"])),
        ]))
    return rows


def plot(path, doc, rows):
    """One panel per scenario: bars of the most clean streams per
    configuration, grouped by bitrate (or mix), greedy readers and prebuffer."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("report.py: matplotlib is not installed; no plot (%s)\n" % path)
        return
    scenarios = sorted({r["scenario"] for r in rows}, key=scenario_key)
    if not scenarios:
        return
    cols = 2 if len(scenarios) > 1 else 1
    nrows = (len(scenarios) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(7.5 * cols, 4.4 * nrows), squeeze=False)
    configs = sorted({r["config"] for r in rows}, key=config_key)
    width = 0.8 / max(1, len(configs))
    for ax, scen in zip(axes.flat, scenarios):
        mine = [r for r in rows if r["scenario"] == scen]
        groups = []
        for r in mine:
            g = (r["bitrate"], r["greedy"], r["prebuffer"])
            if g not in groups:
                groups.append(g)
        for i, config in enumerate(configs):
            xs, ys, notes = [], [], []
            for j, g in enumerate(groups):
                for r in mine:
                    if r["config"] == config and (r["bitrate"], r["greedy"], r["prebuffer"]) == g:
                        xs.append(j + (i - (len(configs) - 1) / 2) * width)
                        ys.append(r["max_clean_streams"])
                        notes.append("late" if r["kind"] == "fixed" and not r["clean"] else "")
            bars = ax.bar(xs, ys, width, label=CONFIG_LABEL.get(config, config))
            for b, y, note in zip(bars, ys, notes):
                ax.annotate(note or str(y), (b.get_x() + b.get_width() / 2, y), ha="center", va="bottom",
                            fontsize=7, rotation=90 if note else 0)
        # a mix is too long for a tick: "mix N", the mixes listed in the title
        mixes = []
        for g in groups:
            if "x" in g[0] and g[0] not in mixes:
                mixes.append(g[0])
        name = lambda b: "mix %d" % (mixes.index(b) + 1) if b in mixes else b
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(["%s\ng=%d pb=%s" % (name(g[0]), g[1], g[2]) for g in groups], fontsize=7)
        fixed = all(r["kind"] == "fixed" for r in mine)
        ax.set_ylabel("streams, played clean" if fixed else "most streams with 0 late chunks")
        stagger = sorted({r["stagger_ms"] for r in mine if r["stagger_ms"] is not None})
        ax.set_title("%s (start %s ms apart)%s" % (
            scen, "/".join(str(s) for s in stagger) or "?",
            "".join("\nmix %d: %s" % (i + 1, m) for i, m in enumerate(mixes))), fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(scenarios):]:
        ax.axis("off")
    p = doc["parameters"]
    fig.suptitle("rtio: clean streams per scenario, emulated disk (%s); rtio settings %s; %s, %s CPUs" % (
        p.get("emudisk", ""), p.get("rtio.settings", "?"), doc["machine"]["kernel"], doc["machine"]["nproc"]),
        fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)


def merge(old_path, runs, series, admission, params):
    """Series measured now replace the same series of an earlier sweep."""
    with open(old_path) as f:
        old = json.load(f)
    op = old.get("parameters", {})
    fresh = {series_key(x) for x in series}
    kept = [normalize_series(x, op) for x in old.get("series", [])]
    kept = [x for x in kept if series_key(x) not in fresh]
    old_runs = [normalize_run(r, op) for r in old.get("runs", [])]
    is_adm = lambda r: r.get("admission_mode") == "refuse" or r.get("scenario") == "admission"
    old_runs = [r for r in old_runs
                if is_adm(r) and admission is None or not is_adm(r) and series_key(r) not in fresh]
    earlier = "%s (%s; rtio settings: %s): %s" % (
        old.get("command"), old.get("date"),
        op.get("rtio.settings_label", "tuned (issue 5's bench-only settings)"),
        ", ".join("%s %s %s g=%d pb=%s" % (x["scenario"], x["config"], x["bitrate"], x["greedy"], x["prebuffer"])
                  for x in kept) +
        (", admission" if admission is None and old.get("admission") else ""))
    # an earlier merge's sources stay named
    params["merged_from"] = earlier + ("; before that " + op["merged_from"] if op.get("merged_from") else "")
    if op.get("stream_file_layout"):
        params["stream_file_layout"] = "%s; earlier sweep: %s" % (
            params.get("stream_file_layout", "").rstrip("; "), op["stream_file_layout"].rstrip("; "))
    return (old_runs + runs, kept + series,
            admission if admission is not None else old.get("admission"))


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except (OSError, TypeError):
        return None


def write_outputs(out, doc):
    groups = sweep_runs(doc["runs"])
    rows = summary_rows(doc["series"], groups)
    doc["summary"] = rows
    with open(out + ".md", "w") as f:
        f.write(md_sweep(doc, groups, rows))
    plot(out + ".png", doc, rows)


def cmd_sweep(out, params_path, runs_path, series_path, admission_path, old_path=None):
    params = read_params(params_path)
    runs = [normalize_run(r, params) for r in read_lines(runs_path)]
    series = [normalize_series(s, params) for s in read_lines(series_path)]
    try:
        with open(admission_path) as f:
            admission = json.load(f)
    except (OSError, ValueError):
        admission = None
    if old_path:
        runs, series, admission = merge(old_path, runs, series, admission, params)
    doc = OrderedDict([
        ("command", params.get("command")),
        ("date", params.get("date")),
        ("complete", params.get("complete") == "true"),
        ("machine", machine()),
        ("parameters", params),
        ("summary", []),
        ("series", series),
        ("admission", admission),
        # the profile rtio ran with (RT_PROFILE=1): how the disk was measured
        ("calibration", read_text(params.get("calibration_log")) if params.get("rtio.profile", "none") != "none"
         else None),
        ("runs", [{k: v for k, v in r.items() if k != "disk_raw"} for r in runs]),
    ])
    write_outputs(out, doc)
    with open(out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return 0


def cmd_render(doc_path, out):
    with open(doc_path) as f:
        doc = json.load(f, object_pairs_hook=OrderedDict)
    params = doc["parameters"]
    # documents from before a run knew whether its greedy reader wrapped
    gfile = int(params.get("greedy_file_mib", "0")) << 20
    for r in doc["runs"]:
        normalize_run(r, params)
        if "greedy_wrapped" not in r:
            r["greedy_wrapped"] = bool(r["greedy"] and gfile and r["greedy_bytes"] > gfile)
    doc["series"] = [normalize_series(s, params) for s in doc["series"]]
    doc.setdefault("calibration", None)
    write_outputs(out, doc)
    return 0


def cmd_table(runs_path):
    runs = read_lines(runs_path)
    print("%-10s %7s %6s %7s %7s %15s %12s %9s" % ("config", "streams", "greedy", "chunks", "misses",
                                                    "worst late ms", "greedy MB/s", "CPU s"))
    for r in runs:
        print("%-10s %7d %6d %7d %7d %15s %12s %9.2f%s" % (
            r["config"], r["streams"], r["greedy"], r["chunks"], r["misses"],
            "-" if r["worst_lateness_ms"] is None else "%+.1f" % r["worst_lateness_ms"],
            ("%.1f" % r["greedy_mb_per_s"] + ("*" if r.get("greedy_wrapped") else "")) if r["greedy"] else "-",
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
