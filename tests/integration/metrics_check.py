#!/usr/bin/python3
# Checks of aiodctl's machine-readable output for t_metrics.sh, with real
# parsers: Python's json and prometheus_client's text parser (Debian's
# python3-prometheus-client, hence /usr/bin/python3).
#
#   metrics_check.py stats STATS_JSON STATS_TEXT [CLASS]
#   metrics_check.py sessions SESSIONS_JSON PID MIN_BYTES_READ
#   metrics_check.py prom METRICS_TEXT MIN_READ_BYTES [PID MIN_SESSION_BYTES]
#
# Prints what it checked; exits 1 with the reason on the first failure.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def fail(why):
    print(f"metrics_check: {why}")
    sys.exit(1)


def check_stats(json_path, text_path, cls=None):
    with open(json_path) as f:
        doc = json.load(f)
    aiod, stats = doc["aiod"], doc["stats"]
    if not aiod["version"] or aiod["pid"] <= 0 or aiod["uptime_seconds"] < 0:
        fail(f"aiod identity incomplete: {aiod}")
    if aiod["start_time"] < 1_600_000_000:
        fail(f"start_time {aiod['start_time']} is not seconds since the epoch")
    text = {}
    with open(text_path) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            text[k] = v
    numeric = {k for k, v in text.items() if v.isdigit()} - {"uptime_s", "stream_classes"}
    if numeric != set(stats):
        fail(f"JSON and key=value disagree on the keys: {sorted(numeric ^ set(stats))}")
    if stats["blocks_total"] != int(text["blocks_total"]) or stats["blocks_total"] <= 0:
        fail("blocks_total differs between JSON and key=value")
    if text.get("version") != aiod["version"]:
        fail(f"version {text.get('version')} != {aiod['version']}")
    names = [c["name"] for c in aiod["stream_classes"]]
    if cls is not None and cls not in names:
        fail(f"stream class {cls} missing from {names}")
    print(f"stats --json: aiod {aiod['version']} up {aiod['uptime_seconds']} s, "
          f"{len(stats)} counters, classes {names}")


def check_sessions(json_path, pid, min_read):
    with open(json_path) as f:
        doc = json.load(f)
    mine = [s for s in doc["sessions"] if s["pid"] == pid]
    if len(mine) != 1:
        fail(f"pid {pid} not listed once in {[s['pid'] for s in doc['sessions']]}")
    s = mine[0]
    if s["bytes_read"] < min_read:
        fail(f"session of pid {pid} read {s['bytes_read']} bytes, expected >= {min_read}")
    if s["opens"] != 1 or s["user"] != "root" or s["client"] != "aiodctl":
        fail(f"session fields wrong: {s}")
    if doc["interval_ms"] > 0 and s["read_Bps"] is None:
        fail("a session seen twice has no read rate")
    print(f"sessions --json: pid {pid} user {s['user']} read {s['bytes_read']} "
          f"at {s['read_Bps']} B/s, {s['inflight']} in flight, lead {s['stream_lead_ms']} ms")


def samples(text):
    out = {}
    for fam in text_string_to_metric_families(text):
        if fam.type not in ("counter", "gauge") or not fam.documentation:
            fail(f"{fam.name}: type {fam.type}, help '{fam.documentation}'")
        for s in fam.samples:
            if fam.type == "counter" and not s.name.endswith("_total"):
                fail(f"counter sample {s.name} does not end in _total")
            if fam.type == "gauge" and s.name.endswith("_total"):
                fail(f"gauge {s.name} ends in _total")
            out.setdefault(s.name, []).append(s)
    return out


def check_prom(path, min_read, pid=None, min_session=0):
    with open(path) as f:
        text = f.read()
    for line in text.splitlines():
        if line.startswith("#") and not line.startswith(("# HELP ", "# TYPE ")):
            fail(f"stray comment line: {line}")
    got = samples(text)
    read = got["rtio_client_read_bytes_total"][0].value
    if read < min_read:
        fail(f"rtio_client_read_bytes_total {read} < {min_read}")
    if got["rtio_build_info"][0].labels.get("version", "") == "":
        fail("rtio_build_info has no version label")
    if pid is not None:
        mine = [s for s in got.get("rtio_session_read_bytes_total", [])
                if s.labels.get("pid") == str(pid)]
        if len(mine) != 1 or mine[0].value < min_session or "user" not in mine[0].labels:
            fail(f"no session series for pid {pid} with >= {min_session} bytes: {mine}")
    print(f"metrics: {len(got)} series names parsed, client read {int(read)} bytes")


def main(argv):
    if len(argv) >= 3 and argv[1] == "stats":
        check_stats(argv[2], argv[3], argv[4] if len(argv) > 4 else None)
    elif len(argv) == 5 and argv[1] == "sessions":
        check_sessions(argv[2], int(argv[3]), int(argv[4]))
    elif len(argv) in (4, 6) and argv[1] == "prom":
        extra = (int(argv[4]), int(argv[5])) if len(argv) == 6 else ()
        check_prom(argv[2], int(argv[3]), *extra)
    else:
        fail(f"usage: see {argv[0]}")


if __name__ == "__main__":
    main(sys.argv)
