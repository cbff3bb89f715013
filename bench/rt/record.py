#!/usr/bin/python3
"""One run of the real-time stream benchmark, as one JSON record.

bench/rt/lib.sh leaves each run in a directory of its own (the clients'
reports, emudisk's and aiod's counters, a meta file of key=value lines);
this turns such a directory into the record run.sh, demo.sh and report.py
work from. Standard library only (it also runs on a machine without jq).

  record.py run DIR                 print the run's record (one line of JSON);
                                    DIR/warm holds a replay's first playback
  record.py get PATH... < JSON      print fields (dotted paths), one a line
  record.py capacity PROFILE IO     bytes/s aiod's admission control takes from
                                    an aiod --calibrate profile for IO-byte reads
  record.py admission RUN OPENED ADMITTED CAPACITY RUNDIR CALLOG
                                    summary of the admission-control run

Copyright (C) 2026 rtio developers
SPDX-License-Identifier: GPL-3.0-or-later
"""
import configparser
import glob
import json
import os
import re
import sys


def load_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep:
                meta[key] = value
    return meta


def read_aiod_stats(path):
    """aiodctl stats prints key=value lines of counters."""
    stats = {}
    try:
        with open(path) as f:
            for line in f:
                key, sep, value = line.strip().partition("=")
                if sep and value.isdigit():
                    stats[key] = int(value)
    except OSError:
        pass
    return stats


KIND_MODE = {"stream": "paced", "greedy": "greedy", "record": "record"}
KIND_ORDER = {"stream": 0, "record": 1, "greedy": 2}

# aiodctl stats lines that are levels, not counters since aiod started
AIOD_GAUGES = {"sessions", "files", "blocks_total", "blocks_used", "blocks_pinned", "streams",
               "reserved_Bps", "capacity_Bps", "file_records", "watches"}


def client_reports(rundir):
    """Every client's report; a client that died without one still counts."""
    reports = []
    for path in sorted(glob.glob(os.path.join(rundir, "*.json"))):
        name = os.path.basename(path)[:-5]
        if not re.match(r"^(stream|greedy|record)-\d+$", name):
            continue
        rep = load_json(path, None)
        if not isinstance(rep, dict):
            err = ""
            try:
                with open(os.path.join(rundir, name + ".err")) as f:
                    err = " ".join(f.read().split()[-30:])
            except OSError:
                pass
            rep = {"mode": KIND_MODE[name.split("-")[0]], "error": "no report: " + err}
        rep["client"] = name
        reports.append(rep)
    reports.sort(key=lambda r: (KIND_ORDER[r["client"].split("-")[0]], int(r["client"].split("-")[1])))
    return reports


def worst(reports, key, sub):
    vals = [r[key][sub] for r in reports if isinstance(r.get(key), dict) and r[key].get(sub) is not None]
    return max(vals) if vals else None


def summarize_clients(reports):
    paced = [r for r in reports if r.get("mode") == "paced"]
    greedy = [r for r in reports if r.get("mode") in ("greedy", "random", "copy")]
    rec = [r for r in reports if r.get("mode") == "record"]
    chunks = sum(r.get("chunks", 0) or 0 for r in paced)
    misses = sum(r.get("misses", 0) or 0 for r in paced)
    rec_misses = sum(r.get("misses", 0) or 0 for r in rec)
    return {
        "chunks": chunks,
        "misses": misses,
        "miss_rate": misses / chunks if chunks else 0.0,
        "streams_with_misses": sum(1 for r in paced if (r.get("misses") or 0) > 0),
        # misses of chunks due 2 s or more after a stream opened (rtio-stream's
        # STARTUP_S): late chunks that recur, apart from start-up latency
        "misses_after_startup": sum(r.get("misses_after_startup", 0) or 0 for r in paced),
        "last_late_s": max((r.get("last_late_s") or 0 for r in paced), default=0),
        "worst_lateness_ms": worst(paced, "lateness_ms", "max"),
        "worst_p99_lateness_ms": worst(paced, "lateness_ms", "p99"),
        "worst_read_ms": worst(paced, "read_ms", "max"),
        "stream_mbps_total": sum(r.get("rate_mbps", 0) or 0 for r in paced),
        "greedy_mb_per_s": sum(r.get("mb_per_s", 0) or 0 for r in greedy),
        "greedy_bytes": sum(r.get("bytes", 0) or 0 for r in greedy),
        # recorders (rtio-stream --write): their own misses; a run is clean
        # only when streams and recorders both have none (all_misses)
        "recorders": len(rec),
        "record_chunks": sum(r.get("chunks", 0) or 0 for r in rec),
        "record_misses": rec_misses,
        "record_worst_lateness_ms": worst(rec, "lateness_ms", "max"),
        "record_worst_write_ms": worst(rec, "write_ms", "max"),
        "record_mb_per_s": sum(r.get("mb_per_s", 0) or 0 for r in rec),
        "all_misses": misses + rec_misses,
        "errors": [{"client": r["client"], "error": r["error"]} for r in reports if r.get("error")],
        "error_count": sum(1 for r in reports if r.get("error")),
    }


def disk_summary(stats, wall_s):
    rd = stats.get("read", {}) if isinstance(stats, dict) else {}
    wr = stats.get("write", {}) if isinstance(stats, dict) else {}
    count = rd.get("count", 0) or 0
    out = {
        "read_requests": count,
        "read_bytes": rd.get("bytes", 0),
        "read_seeks": rd.get("seeks", 0),
        "read_busy_ms": rd.get("busy_ms", 0),
        "mean_request_kib": (rd.get("bytes", 0) / count / 1024) if count else 0,
        "write_requests": wr.get("count", 0) or 0,
        "write_bytes": wr.get("bytes", 0) or 0,
        "write_busy_ms": wr.get("busy_ms", 0) or 0,
    }
    if wall_s > 0:
        out["read_mb_per_s"] = rd.get("bytes", 0) / wall_s / 1e6
        out["write_mb_per_s"] = out["write_bytes"] / wall_s / 1e6
        # busy: reading and writing (the disk does one request at a time)
        out["busy_pct"] = (rd.get("busy_ms", 0) + out["write_busy_ms"]) / 10 / wall_s
    return out


def replay_summary(rundir, meta, aiod_end):
    """The replay's first playback: how long, whether aiod's cache was full."""
    if not int(meta.get("warm_streams", "0") or 0):
        return None, aiod_end
    warm = summarize_clients(client_reports(os.path.join(rundir, "warm")))
    before = read_aiod_stats(os.path.join(rundir, "aiod-stats-warm.txt"))
    out = {
        "warm_streams": int(meta["warm_streams"]),
        "warm_s": float(meta.get("warm_s") or 0),
        "warm_until": meta.get("warm_until", ""),
        "warm_chunks": warm["chunks"],
        "warm_misses": warm["misses"],
        "warm_errors": warm["errors"],
    }
    if before:
        total = before.get("blocks_total", 0)
        out.update({
            "cache_blocks_used": before.get("blocks_used"),
            "cache_blocks_total": total,
            "cache_evictions": before.get("evictions"),
            "cache_full": bool(total) and (before.get("blocks_used", 0) >= total or before.get("evictions", 0) > 0),
        })
        # the measured playback's counters: since the first playback ended
        aiod_end = {k: (v if k in AIOD_GAUGES else v - before.get(k, 0)) for k, v in aiod_end.items()}
    return out, aiod_end


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def smbd_module_state(path):
    """What smbd said about the VFS module: attached sessions, load failures."""
    attached = 0
    failures = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if "rtio: attached to aiod" in line:
                    attached += 1
                elif re.search(r"(?i)can't find a vfs module|error probing vfs module|"
                               r"failed to load module|vfs_init_custom failed", line):
                    failures.append(line.strip())
    except OSError:
        pass
    return {"rtio_attached_sessions": attached, "module_load_errors": failures[:3]}


def cmd_run(rundir):
    meta = read_meta(os.path.join(rundir, "meta"))
    tck = float(meta["clk_tck"])
    wall = float(meta["t1"]) - float(meta["t0"])
    reports = client_reports(rundir)
    summary = summarize_clients(reports)
    aiod = read_aiod_stats(os.path.join(rundir, "aiod-stats.txt"))
    replay, aiod = replay_summary(rundir, meta, aiod)
    disk = load_json(os.path.join(rundir, "emudisk.json"), {})
    smbd_s = int(meta["smbd_ticks"]) / tck
    aiod_s = int(meta["aiod_ticks"]) / tck
    record = {
        "id": meta["id"],
        "scenario": meta.get("scenario", "staggered"),
        "config": meta["config"],
        "streams": int(meta["streams"]),
        "greedy": int(meta["greedy"]),
        # the streams' bitrate, or the mix (mixed scenario)
        "bitrate": meta["bitrate"],
        "duration_s": float(meta["duration"]),
        "stagger_ms": int(meta["stagger_ms"]),
        # as given: chunks ("2") or a time ("500ms"); the chunks it came to per stream
        "client_prebuffer": meta["prebuffer"],
        "client_prebuffer_chunks": [int(x) for x in meta.get("prebuffer_chunks", "").split(",") if x],
        "record_bitrate": meta.get("record_bitrate") or None,
        "read_ahead_kb": int(meta["read_ahead_kb"]),
        "tcp_cc": meta.get("tcp_cc", ""),
        "settings": meta.get("settings", ""),
        "admission_mode": meta.get("admission_mode", ""),
    }
    record.update(summary)
    if replay is not None:
        record["replay"] = replay
        # a first playback that failed is a failed run
        record["errors"] += [{"client": "warm/" + e["client"], "error": e["error"]} for e in replay["warm_errors"]]
        record["error_count"] = len(record["errors"])
    gfile = int(meta.get("greedy_file_bytes", "0") or 0)
    # read past the end of its file: the rest came from a cache, not the disk
    record["greedy_wrapped"] = bool(record["greedy"] and gfile and summary["greedy_bytes"] > gfile)
    record.update({
        "wall_s": round(wall, 3),
        "cpu_s": {"smbd": smbd_s, "aiod": aiod_s, "total": round(smbd_s + aiod_s, 2)},
        "loadavg": {"start": float(meta["load0"]), "end": float(meta["load1"])},
        "disk": disk_summary(disk, wall),
        "disk_raw": disk,
        "aiod": aiod,
        "smbd": smbd_module_state(os.path.join(rundir, "smbd.log")),
        "clients": [{k: r.get(k) for k in ("client", "mode", "chunks", "misses", "lateness_ms",
                                           "read_ms", "write_ms", "mb_per_s", "bytes", "error",
                                           "jumps")
                     if k in r or k not in ("write_ms", "jumps")}
                    for r in reports],
        "aiod_ini": read_text(os.path.join(rundir, "aiod.ini")),
    })
    print(json.dumps(record, separators=(",", ":")))


def cmd_get(paths):
    doc = json.load(sys.stdin)
    for path in paths:
        v = doc
        for part in path.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if v is None:
            print("")
        elif isinstance(v, float):
            print("%.1f" % v)
        elif isinstance(v, (dict, list)):
            print(json.dumps(v))
        else:
            print(v)


def profile_capacity(profile, io_size):
    """What aiod's admission.c does: random-read bytes/s at the largest
    profiled request size not above io_size."""
    cp = configparser.ConfigParser()
    cp.read(profile)
    if not cp.has_section("random"):
        return 0
    sizes = sorted((int(k) for k in cp["random"] if k.isdigit()), reverse=True)
    for size in sizes:
        if size <= io_size:
            return int(float(cp["random"][str(size)]))
    return 0


def cmd_admission(run_path, opened, admitted, capacity, rundir, callog):
    try:
        with open(os.path.join(rundir, "probe.out"), errors="replace") as f:
            probe = [l.rstrip() for l in f if l.strip()][-3:]
    except OSError:
        probe = []
    run = load_json(run_path, {})
    paced = [c for c in run.get("clients", []) if c.get("mode") == "paced"]
    failed = [c for c in paced if c.get("error")]
    served = [c for c in paced if not c.get("error")]

    def grep(path, pattern):
        try:
            with open(path, errors="replace") as f:
                return [l.rstrip() for l in f if re.search(pattern, l)][:5]
        except OSError:
            return []

    try:
        with open(callog) as f:
            calibration = f.read()
    except OSError:
        calibration = ""
    print(json.dumps({
        "capacity_Bps": capacity,
        "headroom_pct": 5,
        "admitted_expected": admitted,
        "opened": opened,
        "refused_by_aiod": run.get("aiod", {}).get("admission_refused"),
        "clients_failed": [{"client": c["client"], "error": c["error"]} for c in failed],
        # libsmbclient turns NT_STATUS_INSUFFICIENT_RESOURCES into EINVAL, so
        # rtio-stream says "Invalid argument"; smbclient shows the status itself
        "smbclient_probe": probe,
        "probe_saw_insufficient_resources": any("NT_STATUS_INSUFFICIENT_RESOURCES" in l for l in probe),
        "served_streams": len(served),
        "served_chunks": sum(c.get("chunks") or 0 for c in served),
        "served_misses": sum(c.get("misses") or 0 for c in served),
        "served_by_stream": [{"client": c["client"], "chunks": c.get("chunks"), "misses": c.get("misses")}
                             for c in served],
        "aiod_log": grep(os.path.join(rundir, "aiod.log"), r"admission: refused"),
        "smbd_log": grep(os.path.join(rundir, "smbd.log"), r"(?i)rtio.*(refused|ENOBUFS|No buffer)|INSUFFICIENT"),
        "calibration": calibration,
        "run_id": run.get("id"),
    }, indent=1))


def main(argv):
    if len(argv) >= 3 and argv[1] == "run":
        cmd_run(argv[2])
    elif len(argv) >= 3 and argv[1] == "get":
        cmd_get(argv[2:])
    elif len(argv) == 4 and argv[1] == "capacity":
        print(profile_capacity(argv[2], int(argv[3])))
    elif len(argv) == 8 and argv[1] == "admission":
        cmd_admission(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), argv[6], argv[7])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
