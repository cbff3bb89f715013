#!/bin/bash
# What `make demo` runs: a short version of the real-time stream benchmark
# (bench/rt/run.sh). On an emulated single-spindle disk, the same number of
# 100 Mbit/s streams is played from a plain Samba share and from an rtio
# share (vfs_rtio + aiod), first alone and then next to a greedy reader
# copying another file, and one table shows which configuration delivered
# every chunk on time. A few minutes; needs root.
#
# Environment (defaults in brackets):
#   BUILD           build dir with aiod, aiodctl, emudisk, rtio-stream [<repo>/build]
#   DEMO_STREAMS    streams per run [6]
#   DEMO_BITRATE    their bitrate [100M]
#   DEMO_DURATION   seconds each stream plays [20]
#   DEMO_GREEDY     1: also run each configuration with a greedy reader [1]
#   DEMO_STAGGER_MS streams start this far apart [500]
#   RT_KEEP=1       keep the temp dir with every log
#
# Exit status 0 when the demo ran, whatever the table shows; 1 when it could
# not run (not root, something not built, smbd or aiod did not start).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/rt/lib.sh
source "$HERE/../bench/rt/lib.sh"

STREAMS=${DEMO_STREAMS:-6}
BITRATE=${DEMO_BITRATE:-100M}
DURATION=${DEMO_DURATION:-20}
GREEDY=${DEMO_GREEDY:-1}
GREEDY_MIB=2048
RT_STAGGER_MS=${DEMO_STAGGER_MS:-500}

for v in "$STREAMS" "$DURATION" "$GREEDY"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "demo: '$v' is not a whole number" >&2; exit 1; }
done
[ "$STREAMS" -ge 1 ] || { echo "demo: DEMO_STREAMS must be at least 1" >&2; exit 1; }

rt_init demo

# stream files hold the whole run without wrapping
BPS=$(numfmt --from=si "$BITRATE")
MIB=$((((BPS / 8 * (DURATION + 5)) >> 20) / 8 * 8 + 8))
GMIB=0
[ "$GREEDY" = 0 ] || GMIB=$GREEDY_MIB
DISK_MIB=$(((STREAMS * MIB + GMIB) * 103 / 100 + 256))

echo "demo: $STREAMS streams of ${BITRATE}bit/s for $DURATION s each, started $RT_STAGGER_MS ms apart," \
	"1 MiB reads, prebuffer $RT_CLIENT_PREBUFFER chunks; plain share vs rtio$([ "$GREEDY" = 0 ] ||
	echo ", alone and next to a greedy reader")"
echo "demo: emulated disk: one spindle, 14.5 ms per seek, 168 MB/s (bench/emudisk); bytes in RAM"
echo "demo: rtio settings: $(rt_settings_label)"
rt_emu_up "$(((DISK_MIB + 1023) / 1024))G"
echo "demo: writing $STREAMS stream files of $MIB MiB$([ "$GMIB" = 0 ] || echo " and a $GMIB MiB file for the greedy reader")"
rt_make_files "$STREAMS" "$MIB" "$GMIB"

RUNS=$RT_T/demo-runs.jsonl
: > "$RUNS"
AIOD_LINES=()
run() { # CONFIG GREEDY
	local r
	echo "demo: running $1 with $STREAMS streams$([ "$2" = 0 ] || echo " and $2 greedy reader") ..."
	r=$(rt_measure "$1" "$STREAMS" "$2" "$BITRATE" "$DURATION") || rt_die "the $1 run failed"
	echo "$r" >> "$RUNS"
	if [ "$1" = rtio ]; then
		AIOD_LINES+=("$(printf '%s' "$r" | "$RT_PY" -c '
import json, sys
r = json.load(sys.stdin)
a = r["aiod"]
keys = ("deadline_misses", "readahead_blocks", "disk_reads", "cache_hits", "cache_misses", "bytes_read")
print("aiod (rtio, %d greedy): %s; smbd sessions attached to aiod: %d" % (r["greedy"],
      " ".join("%s=%s" % (k, a.get(k, "?")) for k in keys), r["smbd"]["rtio_attached_sessions"]))')")
	fi
}

run plain 0
run rtio 0
if [ "$GREEDY" != 0 ]; then
	run plain 1
	run rtio 1
fi

echo
"$RT_PY" "$RT_HERE/report.py" table "$RUNS"
echo
for l in "${AIOD_LINES[@]}"; do echo "$l"; done
echo "(aiod's deadline_misses: stream reads that found read-ahead behind; the clients' misses"
echo " column is what the players saw)"
echo
"$RT_PY" - "$RUNS" <<'EOF'
import json, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {(r["config"], r["greedy"]): r for r in runs}
n = runs[0]["streams"]
for g in sorted({r["greedy"] for r in runs}):
    p, t = by.get(("plain", g)), by.get(("rtio", g))
    if not p or not t:
        continue
    what = "alone" if g == 0 else "next to a greedy reader"
    if t["smbd"]["rtio_attached_sessions"] == 0:
        print("Result (%s): smbd never attached to aiod, so the rtio run did its I/O locally; "
              "it shows nothing about rtio (see smbd's log with RT_KEEP=1)." % what)
        continue
    errs = p["error_count"] + t["error_count"]
    line = ("Result (%d streams %s): plain share %d of %d chunks late (worst %+.0f ms); "
            "rtio %d of %d late (worst %+.0f ms)" % (
                n, what, p["misses"], p["chunks"], p["worst_lateness_ms"] or 0,
                t["misses"], t["chunks"], t["worst_lateness_ms"] or 0))
    if g:
        line += "; the greedy reader got %.0f MB/s on the plain share, %.0f MB/s on rtio" % (
            p["greedy_mb_per_s"], t["greedy_mb_per_s"])
    print(line + ".")
    if errs:
        print("  %d client(s) failed (errors, not late chunks): %s" % (
            errs, "; ".join(e["error"] for e in (p["errors"] + t["errors"])[:2])))
    if t["misses"] == 0 and p["misses"] > 0:
        print("  -> rtio delivered every chunk on time where the plain share could not.")
    elif t["misses"] == 0 and p["misses"] == 0:
        print("  -> both delivered every chunk on time: this many streams does not overload the "
              "plain share here; try DEMO_STREAMS=8.")
    elif t["misses"] > 0 and p["misses"] > 0:
        print("  -> neither delivered every chunk on time; rtio was late %s than the plain share." % (
            "less often" if t["misses"] < p["misses"] else "as often or more often"))
    else:
        print("  -> rtio was late where the plain share was not: this is not what rtio is for; "
              "keep the logs (RT_KEEP=1) and look at aiod's deadline_misses.")
EOF
print_load() { echo "(load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; the full sweep is bench/rt/run.sh)"; }
print_load
exit 0
