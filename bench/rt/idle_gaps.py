#!/usr/bin/env python3
"""How long the device sat idle between aiod's requests, from aiod's debug
trace (`RT_AIOD_LOG_LEVEL=4` with `RT_KEEP=1`: each run's aiod.log has an
"engine: submit" and an "engine: done" line per request).

An idle gap runs from a "done" that left nothing in the kernel to the next
"submit". Gaps of 50 ms or more are the workload pausing (nothing to read),
not the hand-over between requests, and are left out of the total. The log's
timestamps have millisecond resolution, so single gaps below 1 ms read as 0;
the total over hundreds of gaps is what compares two builds.

    bench/rt/idle_gaps.py RUN_DIR/runs/001-*/aiod.log [more aiod.log ...]

One line per log: the gaps, their total (ms), median, 90th percentile and
how many were 2 ms or longer.
"""
import re
import sys

LINE = re.compile(r"(\d\d):(\d\d):(\d\d\.\d+) .*engine: (submit|done) ")
PAUSE_MS = 50.0


def gaps_of(path):
    inflight, last_done, gaps = 0, None, []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            t = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
            if m.group(4) == "submit":
                if inflight == 0 and last_done is not None:
                    gaps.append((t - last_done) * 1000.0)
                inflight += 1
            else:
                inflight = max(inflight - 1, 0)
                if inflight == 0:
                    last_done = t
    return sorted(gaps)


def main(paths):
    if not paths:
        sys.exit(__doc__.strip())
    for path in paths:
        try:
            gaps = gaps_of(path)
        except OSError as e:
            sys.exit("idle_gaps.py: %s: %s" % (path, e.strerror))
        n = len(gaps)
        if n == 0:
            print("%s: no engine trace (run aiod with log_level 4)" % path)
            continue
        print("%s: %d idle gaps, %.0f ms in all (gaps under %.0f ms), median %.1f ms, "
              "p90 %.1f ms, %d of 2 ms or more"
              % (path, n, sum(g for g in gaps if g < PAUSE_MS), PAUSE_MS, gaps[n // 2],
                 gaps[int(n * 0.9)], sum(1 for g in gaps if 2.0 <= g < PAUSE_MS)))


if __name__ == "__main__":
    main(sys.argv[1:])
