#!/usr/bin/env bash
# aiodctl's monitoring output (issue 14, metrics): stats --json, files
# --json, sessions (--json), metrics (-o FILE) and top, checked with real
# parsers (metrics_check.py: Python's json, prometheus_client's text
# parser) against values that a broken counter would miss: a file read
# through the client library must show in the totals and, while its reader
# holds the session, in that session's line.
#
# Needs only aiod and aiodctl: run.sh runs it against the harness's aiod;
# run directly (tests/integration/t_metrics.sh) it starts a private aiod in
# a temporary directory, no smbd and no port.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

METRICS_PY=${RTIO_PYTHON:-/usr/bin/python3}
METRICS_CHECK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/metrics_check.py

# t_metrics SOCK DIR [CLASS]: every check, aiod at SOCK, scratch files in DIR,
# CLASS a stream class aiod.ini defines (the file read matches *.mxf).
t_metrics() {
	local sock=$1 d=$2 cls=${3:-} ctl size=$((6 * 1024 * 1024)) r0
	ctl=("$BUILD/aiodctl" -s "$sock")
	mkdir -p "$d"
	"${ctl[@]}" stats > "$d/stats.txt"
	"${ctl[@]}" stats --json > "$d/stats.json"
	"$METRICS_PY" "$METRICS_CHECK" stats "$d/stats.json" "$d/stats.txt" $cls
	r0=$(awk -F= '$1 == "bytes_read" {print $2}' "$d/stats.txt")
	head -c "$size" /dev/urandom > "$d/clip.mxf"
	t_metrics_held_session "$d" "${ctl[@]}"
	"${ctl[@]}" metrics > "$d/metrics.txt"
	"$METRICS_PY" "$METRICS_CHECK" prom "$d/metrics.txt" $((r0 + size))
	t_metrics_files "$d" "${ctl[@]}"
	t_metrics_textfile "$d" "${ctl[@]}"
	t_metrics_top "${ctl[@]}"
	t_metrics_usage "$d"
}

# A reader that holds its session: aiodctl cat into a fifo nobody drains
# blocks after its first read, so its session is there to be listed.
t_metrics_held_session() {
	local d=$1 pid rc=0
	shift
	rm -f "$d/fifo"
	mkfifo "$d/fifo"
	"$@" cat "$d/clip.mxf" > "$d/fifo" &
	pid=$!
	exec 3< "$d/fifo"
	sleep 0.5
	"$@" sessions --json -i 300 > "$d/sessions.json" || rc=1
	"$@" sessions -i 0 || rc=1
	"$@" metrics > "$d/metrics-held.txt" || rc=1
	[ $rc = 0 ] && "$METRICS_PY" "$METRICS_CHECK" sessions "$d/sessions.json" "$pid" 1048576 || rc=1
	[ $rc = 0 ] && "$METRICS_PY" "$METRICS_CHECK" prom "$d/metrics-held.txt" 1048576 "$pid" \
		1048576 || rc=1
	cat <&3 > "$d/clip.got"
	exec 3<&-
	wait "$pid" || { echo "aiodctl cat failed"; rc=1; }
	cmp -s "$d/clip.mxf" "$d/clip.got" || { echo "the clip read through aiod differs"; rc=1; }
	return $rc
}

t_metrics_files() {
	local d=$1
	shift
	"$@" files --json > "$d/files.json"
	"$METRICS_PY" -c 'import json, sys
files = json.load(open(sys.argv[1]))["files"]
clip = [f for f in files if f["name"].endswith("clip.mxf")]
assert clip and clip[0]["bytes_read"] >= int(sys.argv[2]), files
print("files --json: %d files, clip read %d bytes" % (len(files), clip[0]["bytes_read"]))' \
		"$d/files.json" $((6 * 1024 * 1024))
}

# -o FILE: replaced whole (rename), readable by node_exporter, nothing left beside it.
t_metrics_textfile() {
	local d=$1 out
	shift
	mkdir -p "$d/textfile"
	out=$d/textfile/rtio.prom
	"$@" metrics -o "$out"
	"$@" metrics -o "$out"
	"$METRICS_PY" "$METRICS_CHECK" prom "$out" 1
	[ "$(stat -c %a "$out")" = 644 ] || { echo "$out: mode $(stat -c %a "$out")"; return 1; }
	[ "$(ls -A "$d/textfile")" = rtio.prom ] ||
		{ echo "left in the textfile directory: $(ls -A "$d/textfile")"; return 1; }
	if "$@" metrics -o "$d/no-such-dir/rtio.prom" 2> /dev/null; then
		echo "metrics -o into a missing directory succeeded"
		return 1
	fi
}

t_metrics_top() {
	local out
	out=$("$@" top -n 2 -i 200)
	echo "$out" | head -5
	[ "$(echo "$out" | grep -c '^aiod .* pid ')" = 2 ] || { echo "top: not 2 screens"; return 1; }
}

# Exit status 2 for a bad command line (before connecting), 1 when aiod is not there.
t_metrics_usage() {
	local d=$1 rc
	"$BUILD/aiodctl" -s "$d/no.sock" stats --bogus 2> /dev/null && rc=0 || rc=$?
	[ "$rc" = 2 ] || { echo "stats --bogus: exit $rc, expected 2"; return 1; }
	"$BUILD/aiodctl" -s "$d/no.sock" sessions -i x 2> /dev/null && rc=0 || rc=$?
	[ "$rc" = 2 ] || { echo "sessions -i x: exit $rc, expected 2"; return 1; }
	"$BUILD/aiodctl" -s "$d/no.sock" stats --json 2> /dev/null && rc=0 || rc=$?
	[ "$rc" = 1 ] || { echo "stats without aiod: exit $rc, expected 1"; return 1; }
}

# ---- run directly: a private aiod, no smbd ----

t_metrics_standalone() {
	local here t pid rc=0
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	BUILD=${BUILD:-$here/build}
	t=$(mktemp -d /tmp/rtio-metrics.XXXXXX) || return 1
	mkdir -m 700 "$t/aiod"
	printf '[global]\nsocket_path = %s\n[cache]\nsize = 64M\nmlock = no\n[admission]\nprofile = %s\n[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 1000\n' \
		"$t/aiod/aiod.sock" "$t/no-device.profile" > "$t/aiod.ini"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$t/aiod.ini" -F -d 2 > "$t/aiod.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do [ -S "$t/aiod/aiod.sock" ] && break; sleep 0.1; done
	# not "( ... ) || rc=1": on the left of || bash ignores set -e inside the subshell
	(set -e; t_metrics "$t/aiod/aiod.sock" "$t/data" hd)
	[ $? = 0 ] || rc=1
	kill -TERM "$pid"
	wait "$pid" || { echo "aiod exited with $?"; rc=1; }
	if [ $rc = 0 ]; then
		rm -rf "$t"
		echo "t_metrics: passed"
	else
		echo "t_metrics: FAILED (kept $t)"
	fi
	return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	t_metrics_standalone
	exit $?
fi
