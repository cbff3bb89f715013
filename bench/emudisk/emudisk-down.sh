#!/bin/bash
# Tears down what bench/emudisk/emudisk-up.sh DIR set up, in reverse order,
# also after a partial setup:  ext4 mount -> loop device -> emudisk daemon
# (by the pid in DIR/state) -> FUSE mount -> tmpfs backing.
# Keeps DIR and its logs.  Exit status 0 when nothing is left behind.
#
#   bench/emudisk/emudisk-down.sh DIR
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "emudisk-down: must run as root" >&2; exit 1; }

DIR=$(realpath -m "$1")
STATE=$DIR/state
FAILED=0

warn() {
	echo "emudisk-down: $*" >&2
}

fail() {
	warn "$*"
	FAILED=1
}

state_get() {
	[ -f "$STATE" ] || return 0
	sed -n "s/^$1=//p" "$STATE" | tail -n 1
}

# Unmounts $1 if it is a mount point; lazily if something holds it busy.
unmount() {
	local what=$1
	mountpoint -q "$what" 2>/dev/null || return 0
	umount "$what" 2>/dev/null && return 0
	sleep 0.5
	umount "$what" 2>/dev/null && return 0
	warn "$what is busy:"
	fuser -vm "$what" 2>&1 | grep -v '^Cannot stat' | head -n 20 >&2 || true
	if umount -l "$what"; then
		warn "detached $what lazily; its users will see I/O errors"
	else
		fail "cannot unmount $what"
	fi
}

# 1. ext4
unmount "$DIR/mnt"

# 2. every loop device backed by our disk.img (matched by path: stat on the
#    file would fail once the daemon is gone), plus the recorded one.
IMG=$DIR/fuse/disk.img
LOOPS=$(losetup -n -l -O NAME,BACK-FILE 2>/dev/null |
	awk -v img="$IMG" '{ name = $1; $1 = ""; sub(/^ /, ""); sub(/ \(deleted\)$/, "") }
	                   $0 == img { print name }')
for loop in $LOOPS; do
	losetup -d "$loop" || fail "losetup -d $loop failed"
	# still there: a lazily detached ext4 holds it; the kernel frees it
	# (autoclear) when the last user of that filesystem goes away
	if losetup "$loop" >/dev/null 2>&1; then
		warn "$loop is still held by the lazily detached ext4; it detaches itself when its last user exits"
	fi
done
REC_LOOP=$(state_get loop)
if [ -n "$REC_LOOP" ] && ! grep -qx "$REC_LOOP" <<<"$LOOPS" && losetup "$REC_LOOP" >/dev/null 2>&1; then
	warn "recorded $REC_LOOP is no longer backed by $IMG; leaving it alone"
fi

# 3. the FUSE daemon, by pid, after checking the pid is still ours
PID=$(state_get fuse_pid)
if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
	CMD=$(tr '\0' ' ' <"/proc/$PID/cmdline" 2>/dev/null || true)
	case $CMD in
	*emudisk*"$DIR/fuse"*)
		kill -TERM "$PID" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$PID" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$PID" 2>/dev/null; then
			warn "emudisk pid $PID ignored SIGTERM for 5 s; sending SIGKILL"
			kill -KILL "$PID" 2>/dev/null
			sleep 0.2
		fi
		kill -0 "$PID" 2>/dev/null && fail "emudisk pid $PID is still alive"
		;;
	*)
		warn "pid $PID is no longer emudisk for $DIR (cmdline: $CMD); not killing it"
		;;
	esac
fi

# 4. the FUSE mount (normally gone with the daemon)
if mountpoint -q "$DIR/fuse" 2>/dev/null || grep -q " $DIR/fuse fuse" /proc/self/mounts; then
	fusermount3 -u "$DIR/fuse" 2>/dev/null || fusermount3 -uz "$DIR/fuse" ||
		fail "cannot unmount FUSE at $DIR/fuse"
fi

# 5. the tmpfs holding the bytes
unmount "$DIR/backing"

if [ "$FAILED" = 0 ]; then
	rm -f "$STATE"
	rmdir "$DIR/mnt" "$DIR/fuse" "$DIR/backing" 2>/dev/null || true
	echo "emudisk: $DIR torn down"
else
	warn "teardown of $DIR incomplete; $STATE kept"
	exit 1
fi
