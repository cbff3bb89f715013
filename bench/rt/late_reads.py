#!/usr/bin/env python3
"""Where each late chunk of a kept bench/rt run lost its time.

    bench/rt/late_reads.py RUNDIR...

RUNDIR is one run's directory of a sweep kept with RT_KEEP=1 and traced with
RT_AIOD_LOG_LEVEL=4 (runs/NNN-...: stream-N.err has rtio-stream --log-late's
lines, aiod.log aiod's read trace). For every late chunk it finds what aiod
logged for the same file and offset:

  read  aiod answered a READ0: how long the client waited in aiod, and
        whether for the disk; the rest of the chunk's time was outside aiod
  hit   the client's smbd copied the bytes from the cache itself and told
        aiod (HIT); aiod logs it when it hears of it, after the copy, so the
        time from there to the chunk's arrival was spent outside aiod
        (smbd, the network, the client)

and says which of the two took the chunk's time. A chunk whose read took
less than it was late by was requested late (the one before ran over).
Clock: both logs write the
wall clock to the millisecond (local time), so offsets are good to ~1 ms.
"""
import glob
import json
import os
import re
import sys

LATE = re.compile(r"late: chunk (\d+) offset (\d+) requested (\d\d):(\d\d):(\d\d\.\d+), "
                  r"read ([\d.]+) ms, late by ([\d.]+) ms")
TRACE = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) .*?(read|hit): (\S+) off (\d+) len (\d+)"
                   r"(?: answered \d+ in ([\d.]+) ms(, waited for the disk)?)?")


def seconds(h, m, s):
    return int(h) * 3600 + int(m) * 60 + float(s)


def aiod_events(path):
    """(file's base name, offset) -> [(time_s, kind, wait_ms or None, disk)] from aiod's read trace."""
    ev = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = TRACE.match(line)
                if m is None:
                    continue
                t = seconds(m.group(1), m.group(2), m.group(3))
                wait = float(m.group(8)) if m.group(8) else None
                # by the file's base name: aiod logs the path the client gave
                # (relative to the share for smbd), the stream's URL has the share
                ev.setdefault((os.path.basename(m.group(5)), int(m.group(6))), []).append(
                    (t, m.group(4), wait, m.group(9) is not None))
    except OSError:
        pass
    return ev


def stream_file(rundir, name):
    try:
        with open(os.path.join(rundir, name + ".json")) as f:
            return os.path.basename(json.load(f).get("url", ""))
    except (OSError, ValueError):
        return None


def explain(rundir):
    ev = aiod_events(os.path.join(rundir, "aiod.log"))
    out = []
    for err in sorted(glob.glob(os.path.join(rundir, "*.err"))):
        name = os.path.basename(err)[:-4]
        fname = stream_file(rundir, name)
        with open(err, errors="replace") as f:
            lines = [LATE.search(l) for l in f]
        for m in filter(None, lines):
            k, off = int(m.group(1)), int(m.group(2))
            req = seconds(m.group(3), m.group(4), m.group(5))
            read_ms, late_ms = float(m.group(6)), float(m.group(7))
            # the event for this read: the first at or after the request (1 ms of clock slack)
            cands = [e for e in ev.get((fname, off), []) if e[0] >= req - 0.002]
            head = "%s chunk %d (%s at %d): read %.1f ms, late by %.1f ms" % (
                name, k, fname, off, read_ms, late_ms)
            if read_ms <= late_ms:
                out.append(head + "; requested late: the chunk before it ran over")
                continue
            if not cands:
                out.append(head + "; aiod logged nothing for it (not traced, or not its file)")
                continue
            t, kind, wait, disk = min(cands)
            seen_ms = (t - req) * 1000
            if kind == "read":
                inside = wait if wait is not None else seen_ms
                outside = read_ms - inside
                why = "waited for the disk" if disk else "cached"
                out.append(head + "; aiod answered at +%.0f ms after %.1f ms in aiod (%s), "
                           "%.0f ms outside aiod: late %s" % (
                               seen_ms, inside, why, outside,
                               "in aiod" if inside >= outside else "outside aiod"))
            else:
                # aiod had no part in a hit: before the copy it was smbd's, after it the reply's
                out.append(head + "; a hit: the smbd's copy done by +%.0f ms, the chunk at the "
                           "client %.0f ms after it: late outside aiod" % (seen_ms, read_ms - seen_ms))
    return out


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2 if len(argv) < 2 else 0
    for rundir in argv[1:]:
        if not os.path.isdir(rundir):
            sys.stderr.write("late_reads.py: %s: not a directory\n" % rundir)
            return 2
        lines = explain(rundir)
        print("== %s: %d late chunks" % (rundir, len(lines)))
        for l in lines:
            print("  " + l)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
