#!/usr/bin/env python3
"""Time single random O_DIRECT reads of one size from a file, one at a time,
and print their mean, median, percentiles and the MiB/s each gives: how a
few reads delayed by something else on the machine move the mean of a point
of `aiod --calibrate` and not its median (aiod/calibrate.c).

    bench/emudisk/read_times.py FILE [COUNT] [SIZE_MIB]

FILE must be on a filesystem with O_DIRECT and at least SIZE_MIB (16) large,
e.g. the .aiod-calibrate.dat that `aiod --calibrate DIR` leaves in DIR.
To see the effect, run it once alone and once next to two busy loops:
    (timeout 12 sh -c 'while :; do :; done' & timeout 12 sh -c 'while :; do :; done' &
     bench/emudisk/read_times.py DIR/.aiod-calibrate.dat 60; wait)
"""
import mmap
import os
import random
import statistics
import sys
import time


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    size = (int(sys.argv[3]) if len(sys.argv) > 3 else 16) << 20
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError as e:
        sys.exit(f"read_times: {path}: {e.strerror} (needs O_DIRECT)")
    slots = os.fstat(fd).st_size // size
    if slots < 1 or count < 1:
        sys.exit(f"read_times: {path} is smaller than one {size >> 20} MiB read, or COUNT < 1")
    buf = mmap.mmap(-1, size)   # page-aligned, as O_DIRECT wants
    rnd = random.Random(7)
    ms = []
    for _ in range(count):
        off = rnd.randrange(slots) * size
        t0 = time.monotonic()
        if os.preadv(fd, [buf], off) != size:
            sys.exit(f"read_times: short read at {off}")
        ms.append((time.monotonic() - t0) * 1000)
    os.close(fd)
    ms.sort()
    mean, med = statistics.mean(ms), ms[count // 2]
    mib = size / 1048576
    print(f"n={count} size={mib:.0f}MiB mean={mean:.1f}ms median={med:.1f}ms "
          f"p10={ms[count // 10]:.1f} p90={ms[9 * count // 10]:.1f} max={ms[-1]:.1f}  "
          f"MiB/s from the mean {mib * 1000 / mean:.1f}, from the median {mib * 1000 / med:.1f}")


if __name__ == '__main__':
    main()
