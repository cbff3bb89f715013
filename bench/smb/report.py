#!/usr/bin/python3
"""Summarise bench/smb/run.sh results: medians of MB/s and server CPU s/GiB
per (config, mode, op); write OUT.json, OUT.md and OUT.png.

usage: report.py RESULTS.jsonl OUT_PREFIX "COMMAND"
"""
import json
import os
import platform
import statistics
import subprocess
import sys


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    smbd = subprocess.run(["smbd", "--version"], capture_output=True, text=True).stdout.strip()
    return {"kernel": platform.release(), "cpus": os.cpu_count(), "cpu": cpu, "smbd": smbd}


def main():
    src, prefix, command = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = [json.loads(l) for l in open(src) if l.strip()]
    groups = {}
    for r in rows:
        groups.setdefault((r["config"], r["mode"], r["op"]), []).append(r)
    summary = []
    for (config, mode, op), rs in sorted(groups.items()):
        mbs = [r["mib"] * 1.048576 / r["seconds"] for r in rs]
        cpu = [(r["smbd_cpu"] + r["aiod_cpu"]) / (r["mib"] / 1024.0) for r in rs]
        summary.append({
            "config": config, "mode": mode, "op": op, "runs": len(rs),
            "median_MBps": statistics.median(mbs), "min_MBps": min(mbs), "max_MBps": max(mbs),
            "median_cpu_s_per_GiB": statistics.median(cpu),
            "median_load": statistics.median(float(r["load"]) for r in rs),
        })
    info = {"command": command, "machine": machine(), "summary": summary, "runs": rows}
    with open(prefix + ".json", "w") as f:
        json.dump(info, f, indent=1)

    def find(config, mode, op):
        for s in summary:
            if (s["config"], s["mode"], s["op"]) == (config, mode, op):
                return s
        return None

    known = ("plain", "iouring", "rtioround", "rtio")
    configs = [c for c in known if any(s["config"] == c for s in summary)] + \
        sorted({s["config"] for s in summary} - set(known))
    lines = ["# smbclient get/put: plain vs io_uring vs rtio", "",
             "Command: `%s`" % command, "",
             "Machine: %s, %s CPUs, kernel %s; %s" % (info["machine"]["cpu"], info["machine"]["cpus"],
                                                     info["machine"]["kernel"], info["machine"]["smbd"]),
             "", "Medians over the runs (interleaved, order rotated each round). CPU = smbd "
             "(children reaped by the parent) + aiod, seconds per GiB. Load = median 1-min load "
             "average during the runs. rtioround: rtio with `rtio:hits = aiod` (every read a "
             "round trip to aiod); rtio: the README's settings (`rtio:hits = local`: smbd copies "
             "cached reads itself).", "",
             "| op | cache | config | runs | MB/s median (min-max) | CPU s/GiB | vs plain MB/s | vs plain CPU | vs io_uring MB/s | vs io_uring CPU | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for op in ("get", "put"):
        for mode in ("hot", "cold"):
            base = find("plain", mode, op)
            uring = find("iouring", mode, op)

            def rel(s, b, key):
                return s[key] / b[key] if b and b[key] else float("nan")
            for config in configs:
                s = find(config, mode, op)
                if s is None:
                    continue
                lines.append("| %s | %s | %s | %d | %.0f (%.0f-%.0f) | %.2f | %.2fx | %.2fx | %.2fx | %.2fx | %.1f |" % (
                    op, mode, config, s["runs"], s["median_MBps"], s["min_MBps"], s["max_MBps"],
                    s["median_cpu_s_per_GiB"], rel(s, base, "median_MBps"),
                    rel(s, base, "median_cpu_s_per_GiB"), rel(s, uring, "median_MBps"),
                    rel(s, uring, "median_cpu_s_per_GiB"), s["median_load"]))
    with open(prefix + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    labels = ["%s %s" % (op, mode) for op in ("get", "put") for mode in ("hot", "cold")]
    width = 0.8 / len(configs)
    for i, config in enumerate(configs):
        tput, cpu = [], []
        for op in ("get", "put"):
            for mode in ("hot", "cold"):
                s = find(config, mode, op)
                tput.append(s["median_MBps"] if s else 0)
                cpu.append(s["median_cpu_s_per_GiB"] if s else 0)
        xs = [x + (i - (len(configs) - 1) / 2.0) * width for x in range(len(labels))]
        axes[0].bar(xs, tput, width, label=config)
        axes[1].bar(xs, cpu, width, label=config)
    for ax, title in ((axes[0], "median MB/s"), (axes[1], "server CPU s/GiB (smbd + aiod)")):
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels)
        ax.set_title(title)
        ax.legend()
    fig.suptitle("smbclient over loopback, %d runs each" % max(s["runs"] for s in summary))
    fig.tight_layout()
    fig.savefig(prefix + ".png", dpi=100)


if __name__ == "__main__":
    main()
