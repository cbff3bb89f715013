#!/usr/bin/env python3
"""How many streams started at the same instant a single disk can carry
with no late chunk, whatever the scheduler: a bound for bench/rt's
"together" scenario (issue 11).

Model (bench/stream/README.md, bench/rt/README.md): N clients open at t = 0;
chunk k of every stream is due at buffer + k x period (the client's clock
starts at open). The disk serves one request at a time; a request of s chunks
costs seek + s x transfer. The schedule tried is least-lead-first: serve the
stream whose next chunk is due first, with the largest request (up to
--max-chunks) after which every other stream can still get its next chunk
in time, one chunk each in due order. It is a good schedule, not a proven
optimal one: the count it reaches is what a scheduler can hope for, and a
count it misses by a wide margin is out of reach for any.

    bench/rt/startup_bound.py                       # the emulated disk, 100M, 0.5 s
    bench/rt/startup_bound.py --bitrate 200M
    bench/rt/startup_bound.py --buffer-ms 1000
    bench/rt/startup_bound.py --mix 4x200M,4x50M      # one mix, the margin it leaves
"""
import argparse


def rate(text):
    mult = {'k': 1e3, 'M': 1e6, 'G': 1e9}
    return float(text[:-1]) * mult[text[-1]] if text[-1] in mult else float(text)


def holds(n, a, margin_ms):
    """True when n streams of a.bitrate get every chunk margin_ms before it is due."""
    return holds_mix([rate(a.bitrate)] * n, a, margin_ms)


def holds_mix(bitrates, a, margin_ms):
    """True when streams of these bitrates, started together, get every
    chunk margin_ms before it is due."""
    periods = [a.chunk_mib * 1048576 * 8 / b * 1000.0 for b in bitrates]
    n = len(periods)
    xfer = a.chunk_mib * 1048576 / (a.mb_per_s * 1e6) * 1000.0
    have = [0] * n
    t = 0.0

    def due(i, k):
        return a.buffer_ms + periods[i] * k - margin_ms

    while t < a.seconds * 1000.0:
        order = sorted(range(n), key=lambda i: due(i, have[i]))
        first = order[0]
        if due(first, have[first]) < t + a.seek_ms + xfer:
            return False
        size = 1
        for s in range(a.max_chunks, 0, -1):
            end = t + a.seek_ms + xfer * s
            ok = True
            for j in order[1:]:
                end += a.seek_ms + xfer
                if due(j, have[j]) < end:
                    ok = False
                    break
            if ok:
                size = s
                break
        t += a.seek_ms + xfer * size
        have[first] += size
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--seek-ms', type=float, default=14.5, help='per request (emudisk: 14.5)')
    p.add_argument('--mb-per-s', type=float, default=168.0, help='media rate, 10^6 B/s (emudisk: 168)')
    p.add_argument('--bitrate', default='100M', help='per stream, bit/s [100M]')
    p.add_argument('--chunk-mib', type=float, default=1.0, help="the client's read [1]")
    p.add_argument('--buffer-ms', type=float, default=504.0,
                   help="the client's buffer: chunk 0 is due then [504: 6 chunks at 100M]")
    p.add_argument('--seconds', type=float, default=20.0, help='how long they play [20]')
    p.add_argument('--max-chunks', type=int, default=16, help='largest request [16: io_size 16M]')
    p.add_argument('--mix', help='instead of --bitrate: one mix started together, '
                   'COUNTxBITRATE,... e.g. 4x200M,4x50M (bench/rt --mix)')
    a = p.parse_args()
    if a.mix:
        bitrates = []
        for part in a.mix.split(','):
            count, _, bitrate = part.partition('x')
            bitrates += [rate(bitrate)] * int(count)
        if not holds_mix(bitrates, a, 0.0):
            print('mix %s started together, %.0f ms client buffer, disk %.1f ms + %.0f MB/s: '
                  'least-lead-first is late' % (a.mix, a.buffer_ms, a.seek_ms, a.mb_per_s))
            return
        margin = 0
        while margin < 2000 and holds_mix(bitrates, a, margin + 5.0):
            margin += 5
        print('mix %s started together, %.0f ms client buffer, disk %.1f ms + %.0f MB/s: '
              'least-lead-first holds it (every chunk at least %d ms early)'
              % (a.mix, a.buffer_ms, a.seek_ms, a.mb_per_s, margin))
        return
    best = 0
    for n in range(1, 40):
        if not holds(n, a, 0.0):
            break
        best = n
    margin = 0
    while best > 0 and margin < 2000 and holds(best, a, margin + 5.0):
        margin += 5
    print('%s streams started together, %.0f ms client buffer, disk %.1f ms + %.0f MB/s: '
          'least-lead-first holds %d (every chunk at least %d ms early), %d is late'
          % (a.bitrate, a.buffer_ms, a.seek_ms, a.mb_per_s, best, margin, best + 1))


if __name__ == '__main__':
    main()
