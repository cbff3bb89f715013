#!/usr/bin/env python3
"""How many streams started at the same instant a single disk can carry
with no late chunk, for a scheduler that knows each client's buffer: the
target for bench/rt's "together" scenario (issue 11).

Model (bench/stream/README.md, bench/rt/README.md): N clients open at t = 0;
chunk k of every stream is due at buffer + k x period (the client's clock
starts at open). The disk serves one request at a time; a request of s chunks
costs seek + s x transfer. The schedules tried are least-lead-first: serve
the stream whose next chunk is due first, with the largest request (up to a
cap) after which every other stream can still get its next chunk a planning
margin before it is due, one chunk each in due order. The tool tries every
cap up to --max-chunks and every margin from 0 to the buffer (10 ms steps)
and reports the best: the smaller caps and the margins keep one stream's
large request from eating the slack the next round needs (until 2026-12-06
it tried only the cap 16 and no margin, and called what that held, 8 at
100 Mbit/s with a 0.5 s buffer, a bound: capped at 7 chunks, 10 hold).

These are good schedules, not proven optimal ones: a count found is
reachable, a count not found may still be. Each plans with the client's
buffer, which a server does not see (a paced client's requests look the
same whatever it keeps); aiod plans without it (bench/rt/README.md).

    bench/rt/startup_bound.py                       # the emulated disk, 100M, 0.5 s
    bench/rt/startup_bound.py --bitrate 200M
    bench/rt/startup_bound.py --buffer-ms 1000
    bench/rt/startup_bound.py --mix 4x200M,4x50M      # one mix, the margin it leaves
    bench/rt/startup_bound.py --margins 8            # how wrong a planned buffer may be
"""
import argparse


def rate(text):
    """Bits/s from 100M, 1.5G, 50000000 (argparse type: a clear error otherwise)."""
    mult = {'k': 1e3, 'M': 1e6, 'G': 1e9}
    try:
        r = float(text[:-1]) * mult[text[-1]] if text[-1:] in mult else float(text)
    except ValueError:
        r = 0.0
    if not r > 0:
        raise argparse.ArgumentTypeError("'%s' is not a bitrate (e.g. 100M)" % text)
    return r


def mix(text):
    """Every stream's bits/s from 4x200M,4x50M (argparse type)."""
    bitrates = []
    for part in text.split(','):
        count, x, bitrate = part.partition('x')
        if not x or not count.isdigit() or int(count) == 0:
            raise argparse.ArgumentTypeError("'%s' is not COUNTxBITRATE (e.g. 4x200M)" % part)
        try:
            bitrates += [rate(bitrate)] * int(count)
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError("'%s': %s" % (part, e))
    return bitrates


def positive(text):
    """A number above 0 (argparse type)."""
    try:
        v = float(text)
    except ValueError:
        v = 0.0
    if not v > 0:
        raise argparse.ArgumentTypeError("'%s' is not a number above 0" % text)
    return v


def earliest_slack(bitrates, a, cap, plan_ms):
    """Play the schedule once: least-lead-first, each request the largest of
    at most cap chunks after which every other stream can still get its next
    chunk plan_ms before it is due (one chunk each, in due order), else one
    chunk. Returns how early the least early chunk came (ms), or None as
    soon as a chunk is late (the search looks no further)."""
    periods = [a.chunk_mib * 1048576 * 8 / b * 1000.0 for b in bitrates]
    n = len(periods)
    xfer = a.chunk_mib * 1048576 / (a.mb_per_s * 1e6) * 1000.0
    one = a.seek_ms + xfer
    have = [0] * n
    t = 0.0
    least = float('inf')
    while t < a.seconds * 1000.0:
        order = sorted(range(n), key=lambda i: periods[i] * have[i])
        first = order[0]
        due_first = a.buffer_ms + periods[first] * have[first]
        size = 1
        for s in range(cap, 1, -1):
            end = t + a.seek_ms + xfer * s
            if due_first - plan_ms < end:
                continue
            ok = True
            for j in order[1:]:
                end += one
                if a.buffer_ms + periods[j] * have[j] - plan_ms < end:
                    ok = False
                    break
            if ok:
                size = s
                break
        t += a.seek_ms + xfer * size
        least = min(least, due_first - t)
        if least < 0:
            return None
        have[first] += size
    return least


def best(bitrates, a):
    """The best of the schedule family: every request-size cap up to
    --max-chunks, every planning margin from 0 to the buffer in 10 ms steps.
    Returns (least slack ms, cap, planning margin) or None when none holds."""
    found = None
    for cap in range(1, a.max_chunks + 1):
        for plan_ms in range(0, int(a.buffer_ms) + 1, 10):
            least = earliest_slack(bitrates, a, cap, plan_ms)
            if least is not None and (found is None or least > found[0]):
                found = (least, cap, plan_ms)
    return found


def margins(bitrates, a):
    """For each cap: the planning margins (ms) with which the schedule holds.
    A margin m is a scheduler planning with a buffer m smaller than the
    client's: how wrong a server's guess of it may be."""
    rows = []
    for cap in range(1, a.max_chunks + 1):
        held = [m for m in range(0, int(a.buffer_ms) + 1, 10)
                if earliest_slack(bitrates, a, cap, m) is not None]
        if held:
            rows.append((cap, held))
    return rows


def how(found):
    return ('every chunk at least %d ms early; requests of at most %d chunks, '
            'each leaving the others %d ms to spare' % (int(found[0]), found[1], found[2]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--seek-ms', type=positive, default=14.5, help='per request (emudisk: 14.5)')
    p.add_argument('--mb-per-s', type=positive, default=168.0, help='media rate, 10^6 B/s (emudisk: 168)')
    p.add_argument('--bitrate', default='100M', help='per stream, bit/s [100M]')
    p.add_argument('--chunk-mib', type=positive, default=1.0, help="the client's read [1]")
    p.add_argument('--buffer-ms', type=positive, default=504.0,
                   help="the client's buffer: chunk 0 is due then [504: 6 chunks at 100M]")
    p.add_argument('--seconds', type=positive, default=20.0, help='how long they play [20]')
    p.add_argument('--max-chunks', type=int, default=16, help='largest request tried [16: io_size 16M]')
    p.add_argument('--mix', help='instead of --bitrate: one mix started together, '
                   'COUNTxBITRATE,... e.g. 4x200M,4x50M (bench/rt --mix)')
    p.add_argument('--margins', type=int, metavar='N',
                   help='instead of the count: for N streams of --bitrate (or the --mix, '
                        'N ignored), each cap with the planning margins that hold')
    a = p.parse_args()
    try:
        per_stream = rate(a.bitrate)
        mixed = mix(a.mix) if a.mix else None
    except argparse.ArgumentTypeError as e:
        p.error(str(e))
    if a.max_chunks < 1:
        p.error("--max-chunks %d: at least 1" % a.max_chunks)
    disk = '%.0f ms client buffer, disk %.1f ms + %.0f MB/s' % (a.buffer_ms, a.seek_ms, a.mb_per_s)
    if a.margins is not None:
        if a.margins < 1 and not a.mix:
            p.error('--margins %d: at least 1 stream' % a.margins)
        bitrates = mixed if a.mix else [per_stream] * a.margins
        what = 'mix %s' % a.mix if a.mix else '%d x %s' % (a.margins, a.bitrate)
        rows = margins(bitrates, a)
        if not rows:
            print('%s started together, %s: no schedule found' % (what, disk))
        for cap, held in rows:
            print('%s started together, %s: requests of at most %d chunks hold with '
                  'planning margins %d-%d ms (%d of the %d tried)'
                  % (what, disk, cap, held[0], held[-1], len(held), int(a.buffer_ms) // 10 + 1))
        return
    if a.mix:
        found = best(mixed, a)
        if found is None:
            print('mix %s started together, %s: no schedule found' % (a.mix, disk))
        else:
            print('mix %s started together, %s: a schedule holds it (%s)' % (a.mix, disk, how(found)))
        return
    n, held = 0, None
    while n < 40:
        found = best([per_stream] * (n + 1), a)
        if found is None:
            break
        n, held = n + 1, found
    if held is None:
        print('%s streams started together, %s: no schedule found for 1' % (a.bitrate, disk))
        return
    beyond = 'none found for %d' % (n + 1) if n < 40 else 'more not tried'
    print('%s streams started together, %s: a schedule holds %d (%s), %s'
          % (a.bitrate, disk, n, how(held), beyond))


if __name__ == '__main__':
    main()
