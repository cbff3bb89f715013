#!/bin/bash
# Starts N paced stream clients and G greedy clients in parallel (one
# rtio-stream process, hence one SMB connection, each), waits for them and
# prints one summary JSON object.
#
#   bench/stream/run-streams.sh -n N [-g G] --url URL --user USER%PASS
#        [--bitrate 100M] [--chunk 1M] [--prebuffer 2] [--duration 10]
#        [--offset-step BYTES] [--greedy-url URL] [--greedy-chunk 8M]
#        [--bin PATH] [--keep DIR] [--out FILE]
#
# URL (and --greedy-url) may contain one printf %d, replaced by the client's
# index (streams 0..N-1, greedy clients 0..G-1), to give each its own file.
# --offset-step gives stream i the start offset i*BYTES (wrapped by the
# client), so streams sharing one file do not read the same blocks.
# Every pid is recorded; on exit, normal or not, any client still running is
# killed.  Exit status: 0 when all clients ran and reported no error (misses
# are results, not errors), 1 otherwise.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

die() { echo "run-streams: $*" >&2; exit 2; }

N= G=0 URL= USERPASS= BITRATE=100M CHUNK=1M PREBUF=2 DURATION=10
OFFSET_STEP=0 GURL= GCHUNK=8M BIN=${RTIO_STREAM_BIN:-} KEEP= OUT=
while [ $# -gt 0 ]; do
	case $1 in
	-n) N=$2; shift 2 ;;
	-g) G=$2; shift 2 ;;
	--url) URL=$2; shift 2 ;;
	--user) USERPASS=$2; shift 2 ;;
	--bitrate) BITRATE=$2; shift 2 ;;
	--chunk) CHUNK=$2; shift 2 ;;
	--prebuffer) PREBUF=$2; shift 2 ;;
	--duration) DURATION=$2; shift 2 ;;
	--offset-step) OFFSET_STEP=$2; shift 2 ;;
	--greedy-url) GURL=$2; shift 2 ;;
	--greedy-chunk) GCHUNK=$2; shift 2 ;;
	--bin) BIN=$2; shift 2 ;;
	--keep) KEEP=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
[[ $N =~ ^[0-9]+$ ]] || die "-n N (number of paced streams) is required"
[[ $G =~ ^[0-9]+$ ]] || die "-g G must be a number"
[ $((N + G)) -gt 0 ] || die "nothing to run: -n 0 -g 0"
[ -n "$URL" ] || die "--url smb://HOST:PORT/SHARE/FILE is required"
[ -n "$USERPASS" ] || die "--user USER%PASS is required"
[ -n "$GURL" ] || GURL=$URL
command -v jq >/dev/null || die "jq not found"
OFFSET_STEP_BYTES=$(numfmt --from=iec "$OFFSET_STEP" 2>/dev/null) ||
	die "--offset-step '$OFFSET_STEP' is not a size"

if [ -z "$BIN" ]; then
	BUILD=${BUILD:-$ROOT/build}
	case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
	make -s -C "$ROOT" -f bench/stream/stream.mk BUILD="$BUILD" "$BUILD/rtio-stream" ||
		die "building $BUILD/rtio-stream failed"
	BIN=$BUILD/rtio-stream
fi
[ -x "$BIN" ] || die "$BIN is not executable"

if [ -n "$KEEP" ]; then
	WORK=$KEEP
	mkdir -p "$WORK" || die "cannot create $WORK"
else
	WORK=$(mktemp -d /tmp/run-streams.XXXXXX) || die "mktemp failed"
fi

PIDS=()
cleanup() {
	local pid alive=()
	for pid in "${PIDS[@]}"; do
		kill -0 "$pid" 2>/dev/null && alive+=("$pid")
	done
	if [ ${#alive[@]} -gt 0 ]; then
		echo "run-streams: stopping ${#alive[@]} client(s): ${alive[*]}" >&2
		kill -TERM "${alive[@]}" 2>/dev/null
		sleep 1
		for pid in "${alive[@]}"; do
			kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
		done
	fi
	[ -z "$KEEP" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

url_for() { # FORMAT INDEX
	case $1 in
	*%d*|*%0*d*) printf "$1" "$2" ;;
	*) printf '%s' "$1" ;;
	esac
}

start_client() { # NAME ARGS...
	local name=$1
	shift
	"$BIN" "$@" >"$WORK/$name.json" 2>"$WORK/$name.err" </dev/null &
	PIDS+=($!)
	NAMES+=("$name")
}

NAMES=()
for ((i = 0; i < N; i++)); do
	start_client "stream-$i" --url "$(url_for "$URL" "$i")" --user "$USERPASS" \
		--bitrate "$BITRATE" --chunk "$CHUNK" --prebuffer "$PREBUF" \
		--duration "$DURATION" --offset $((i * OFFSET_STEP_BYTES))
done
for ((i = 0; i < G; i++)); do
	start_client "greedy-$i" --url "$(url_for "$GURL" "$i")" --user "$USERPASS" \
		--greedy --chunk "$GCHUNK" --duration "$DURATION"
done
printf '%s\n' "${PIDS[@]}" >"$WORK/pids"

FAILED=0
for idx in "${!PIDS[@]}"; do
	pid=${PIDS[$idx]}
	name=${NAMES[$idx]}
	wait "$pid"
	status=$?
	if [ "$status" -ne 0 ]; then
		FAILED=1
		echo "run-streams: $name (pid $pid) exited $status: $(tail -n 3 "$WORK/$name.err")" >&2
	fi
	# a client that died without a report still gets a line, so it is counted
	if ! jq -e . "$WORK/$name.json" >/dev/null 2>&1; then
		jq -cn --arg name "$name" --argjson pid "$pid" --argjson status "$status" \
			--arg err "$(tail -n 3 "$WORK/$name.err")" \
			'{mode: (if ($name | startswith("greedy")) then "greedy" else "paced" end),
			  pid: $pid, error: "no report (exit \($status)): \($err)"}' >"$WORK/$name.json"
	fi
	jq -c --arg name "$name" --argjson status "$status" '. + {client: $name, exit_status: $status}' \
		"$WORK/$name.json" >>"$WORK/all.jsonl"
done

SUMMARY=$(jq -s --arg bitrate "$BITRATE" --arg chunk "$CHUNK" --argjson prebuffer "$PREBUF" \
	--argjson duration "$DURATION" '
	def maxof(f): (map(f | select(. != null)) | max);
	(map(select(.mode == "paced"))) as $s |
	(map(select(.mode == "greedy"))) as $g |
	{
	  streams: ($s | length),
	  greedy_clients: ($g | length),
	  bitrate: $bitrate, chunk: $chunk, prebuffer: $prebuffer, duration_s: $duration,
	  total_chunks: ($s | map(.chunks // 0) | add // 0),
	  total_misses: ($s | map(.misses // 0) | add // 0),
	  streams_with_misses: ($s | map(select((.misses // 0) > 0)) | length),
	  worst_lateness_ms: ($s | maxof(.lateness_ms.max)),
	  worst_p99_lateness_ms: ($s | maxof(.lateness_ms.p99)),
	  worst_read_ms: ($s | maxof(.read_ms.max)),
	  stream_mbps_total: ($s | map(.rate_mbps // 0) | add // 0),
	  greedy_mb_per_s: ($g | map(.mb_per_s // 0) | add // 0),
	  errors: (map(select(.error != null)) | map({client, error})),
	  clients: .
	}' "$WORK/all.jsonl") || { echo "run-streams: summarising failed" >&2; exit 1; }

[ -n "$OUT" ] && { printf '%s\n' "$SUMMARY" >"$OUT" || die "cannot write $OUT"; }
printf '%s\n' "$SUMMARY"
[ "$FAILED" = 0 ] && [ "$(jq '.errors | length' <<<"$SUMMARY")" = 0 ]
