#!/bin/bash
# Throwaway smbd on 127.0.0.1:4445 and a paced-stream run against it.
#
#   bench/stream/smoke-test.sh [run-streams.sh options...]
#
# Default run: 2 streams at 100 Mbit/s for 10 s, 1 MiB chunks, on a 200 MiB
# file; fails unless there are 0 misses.  With options, they go to
# run-streams.sh as they are and misses are only reported.  Everything smbd needs lives in one mktemp dir;
# smbd runs with -F (not --no-process-group, so it leads its own process
# group) and is killed by its pid, then its group, on any exit.
#
# Environment:
#   SHARE_DIR   serve this directory instead of a fresh one (e.g. an
#               emudisk mount); FILE inside it must exist or is created
#   FILE        file name in the share (default stream.bin); may hold a
#               printf %d for run-streams.sh, then the files must exist
#   FILE_SIZE   size when created (default 200M)
#   SMB_USER    non-root unix user to authenticate as (default rtiobench;
#               created with useradd --system if missing)
#   SMB_PORT    default 4445
#   KEEP=1      keep the temp dir (smbd logs) for inspection
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/smbconf.sh
. "$HERE/../../scripts/smbconf.sh"

die() { echo "smoke-test: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (smbd, smbpasswd, useradd)"
for tool in smbd smbpasswd jq; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install samba jq)"
done

SMB_USER=${SMB_USER:-rtiobench}
SMB_PORT=${SMB_PORT:-4445}
FILE=${FILE:-stream.bin}
FILE_SIZE=${FILE_SIZE:-200M}
PASS=rtio-$RANDOM-$RANDOM

if ss -ltn "sport = :$SMB_PORT" 2>/dev/null | grep -q LISTEN; then
	die "port $SMB_PORT is already in use"
fi

if ! id "$SMB_USER" >/dev/null 2>&1; then
	echo "smoke-test: creating system user $SMB_USER" >&2
	useradd --system --no-create-home --shell /usr/sbin/nologin "$SMB_USER" ||
		die "useradd $SMB_USER failed"
fi
[ "$(id -u "$SMB_USER")" -ne 0 ] || die "SMB_USER $SMB_USER must not be root"

T=$(mktemp -d /tmp/rtio-smbd.XXXXXX) || die "mktemp failed"
chmod 0755 "$T"
SMBD_PID=
RUN_PID=
cleanup() {
	set +e # errexit would abort the cleanup at the first dead pid
	# run-streams.sh kills its own clients when it gets SIGTERM
	if [ -n "$RUN_PID" ] && kill -0 "$RUN_PID" 2>/dev/null; then
		kill -TERM "$RUN_PID" 2>/dev/null
		wait "$RUN_PID" 2>/dev/null
	fi
	if [ -n "$SMBD_PID" ] && kill -0 "$SMBD_PID" 2>/dev/null; then
		kill -TERM "$SMBD_PID" 2>/dev/null
		for _ in $(seq 30); do
			kill -0 "$SMBD_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$SMBD_PID" 2>/dev/null && kill -KILL "$SMBD_PID" 2>/dev/null
	fi
	# children that outlived the parent: smbd led its own process group
	if [ -n "$SMBD_PID" ] && pgrep -g "$SMBD_PID" >/dev/null 2>&1; then
		kill -TERM -- "-$SMBD_PID" 2>/dev/null
		sleep 0.5
		kill -KILL -- "-$SMBD_PID" 2>/dev/null
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		echo "smoke-test: kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

rtio_smb_dirs "$T" || die "cannot make smbd's directories in $T"
mkdir -p "$T/log"
if [ -n "${SHARE_DIR:-}" ]; then
	SHARE=$(realpath "$SHARE_DIR") || die "SHARE_DIR $SHARE_DIR does not exist"
else
	SHARE=$T/share
	mkdir -p "$SHARE"
fi
case $FILE in
*%*)
	# a per-client pattern for run-streams.sh: the files must exist already
	chmod o+rx "$SHARE" || die "cannot make $SHARE readable"
	;;
*)
	if [ ! -f "$SHARE/$FILE" ]; then
		echo "smoke-test: writing $FILE_SIZE $SHARE/$FILE" >&2
		head -c "$(numfmt --from=iec "$FILE_SIZE")" /dev/urandom >"$SHARE/$FILE" ||
			die "cannot write $SHARE/$FILE"
	fi
	chmod o+rx "$SHARE" && chmod o+r "$SHARE/$FILE" || die "cannot make $SHARE/$FILE readable"
	;;
esac

CONF=$T/smb.conf
rtio_smb_global "$T" "$SMB_PORT" >"$CONF"
cat >>"$CONF" <<EOF
	log file = $T/log/log.%m
	max log size = 0
	map to guest = never
	server min protocol = SMB2_02

[share]
	path = $SHARE
	read only = yes
	valid users = $SMB_USER
EOF

printf '%s\n%s\n' "$PASS" "$PASS" | smbpasswd -c "$CONF" -a -s "$SMB_USER" >/dev/null ||
	die "smbpasswd -a $SMB_USER failed"

smbd -F --debug-stdout -s "$CONF" >"$T/log/smbd.out" 2>&1 </dev/null &
SMBD_PID=$!
for _ in $(seq 100); do
	ss -ltn "sport = :$SMB_PORT" 2>/dev/null | grep -q LISTEN && break
	kill -0 "$SMBD_PID" 2>/dev/null || die "smbd exited: $(tail -n 20 "$T/log/smbd.out")"
	sleep 0.1
done
ss -ltn "sport = :$SMB_PORT" | grep -q LISTEN || die "smbd is not listening on $SMB_PORT after 10 s"
echo "smoke-test: smbd pid $SMBD_PID on 127.0.0.1:$SMB_PORT serving $SHARE" >&2

EXPECT_ZERO=0
if [ $# -eq 0 ]; then
	EXPECT_ZERO=1
	set -- -n 2 --bitrate 100M --chunk 1M --prebuffer 2 --duration 10 --offset-step 64M
fi
# In the background and waited for: bash runs a trap only between foreground
# commands, but `wait` returns as soon as a trapped signal arrives.
"$HERE/run-streams.sh" --url "smb://127.0.0.1:$SMB_PORT/share/$FILE" \
	--user "$SMB_USER%$PASS" "$@" >"$T/summary.json" </dev/null &
RUN_PID=$!
rc=0
wait "$RUN_PID" || rc=$?
RUN_PID=
SUMMARY=$(cat "$T/summary.json")
printf '%s\n' "$SUMMARY"
[ "$rc" -eq 0 ] || die "run-streams.sh failed (exit $rc)"
MISSES=$(jq '.total_misses' <<<"$SUMMARY")
echo "smoke-test: $(jq -r '"\(.streams) streams, \(.total_chunks) chunks, \(.total_misses) misses, worst lateness \(.worst_lateness_ms) ms"' <<<"$SUMMARY")" >&2
if [ "$EXPECT_ZERO" = 1 ] && [ "$MISSES" != 0 ]; then
	die "expected 0 misses, got $MISSES"
fi
