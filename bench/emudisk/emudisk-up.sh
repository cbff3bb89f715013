#!/bin/bash
# Brings up an emulated single-spindle disk and mounts ext4 on it.
#
#   bench/emudisk/emudisk-up.sh DIR SIZE [emudisk options...]
#
#   DIR/backing   tmpfs holding the disk's bytes (backing/disk.raw)
#   DIR/fuse      FUSE mount of emudisk: fuse/disk.img, fuse/stats
#   DIR/mnt       ext4 on a loop device (direct I/O) over fuse/disk.img
#   DIR/state     what was set up, one key=value a line, appended as each
#                 step succeeds; bench/emudisk/emudisk-down.sh DIR reads it
#   DIR/emudisk.log  the FUSE daemon's stderr
#
# Extra options go to emudisk, e.g. --seek-ms=14.5 --mbps=168.
# Environment: BUILD (default <repo>/build), EMUDISK_BIN (skip the build),
# EMUDISK_MAX_SECTORS_KB (loop request cap, default 1024 = FUSE's max request),
# EMUDISK_READ_AHEAD_KB (ext4 readahead on the loop device, default 128).
set -euo pipefail

usage() {
	echo "usage: $0 DIR SIZE [emudisk options...]   (SIZE like 4G)" >&2
	exit 2
}

die() {
	echo "emudisk-up: $*" >&2
	exit 1
}

[ $# -ge 2 ] || usage
[ "$(id -u)" -eq 0 ] || die "must run as root (mount, losetup, FUSE)"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DIR=$(realpath -m "$1")
SIZE=$2
shift 2

BYTES=$(numfmt --from=iec "$SIZE" 2>/dev/null) ||
	die "SIZE '$SIZE' is not a size like 4G"
[ "$BYTES" -ge $((64 * 1024 * 1024)) ] || die "SIZE $SIZE is below 64M"
[ $((BYTES % 4096)) -eq 0 ] || die "SIZE $SIZE is not a multiple of 4096"

for tool in losetup mkfs.ext4 fusermount3 mountpoint numfmt; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install fuse3 e2fsprogs util-linux)"
done

STATE=$DIR/state
if [ -e "$STATE" ]; then
	die "$STATE exists: already up or not torn down; run $HERE/emudisk-down.sh $DIR"
fi

if [ -n "${EMUDISK_BIN:-}" ]; then
	BIN=$EMUDISK_BIN
else
	BUILD=${BUILD:-$ROOT/build}
	case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
	make -s -C "$ROOT" -f bench/emudisk/emudisk.mk BUILD="$BUILD" "$BUILD/emudisk" ||
		die "building $BUILD/emudisk failed"
	BIN=$BUILD/emudisk
fi
[ -x "$BIN" ] || die "emudisk binary $BIN is not executable"

mkdir -p "$DIR/backing" "$DIR/fuse" "$DIR/mnt"
: >"$STATE"
note() { echo "$1=$2" >>"$STATE"; }

# Any exit from here on before the end leaves a partial setup: undo it.
UP_DONE=0
undo_partial_setup() {
	local rc=$?
	set +e
	[ "$UP_DONE" = 1 ] && return
	echo "emudisk-up: setup failed (exit $rc), tearing down what was set up" >&2
	"$HERE/emudisk-down.sh" "$DIR" >&2 || true
	exit "$rc"
}
trap undo_partial_setup EXIT
trap 'exit 130' INT TERM HUP

note dir "$DIR"
note size "$BYTES"

# 1. tmpfs for the bytes; a little slack over SIZE for tmpfs' own rounding.
note backing_mnt "$DIR/backing"
mount -t tmpfs -o "size=$((BYTES + 16 * 1024 * 1024)),mode=0700" emudisk-backing "$DIR/backing" ||
	die "mounting tmpfs on $DIR/backing failed"

# 2. the FUSE daemon, in the foreground of its own background job so $! is it.
note fuse_mnt "$DIR/fuse"
"$BIN" --backing="$DIR/backing/disk.raw" --size="$BYTES" "$@" -f "$DIR/fuse" \
	>"$DIR/emudisk.log" 2>&1 </dev/null &
FUSE_PID=$!
note fuse_pid "$FUSE_PID"
for _ in $(seq 100); do
	[ -e "$DIR/fuse/disk.img" ] && break
	kill -0 "$FUSE_PID" 2>/dev/null ||
		die "emudisk exited during startup: $(tail -n 5 "$DIR/emudisk.log")"
	sleep 0.05
done
[ -e "$DIR/fuse/disk.img" ] || die "emudisk did not show $DIR/fuse/disk.img within 5 s"

# 3. loop device with direct I/O, so neither the loop's page cache nor the
#    FUSE file's hides the model.  Plain loop is a fallback and says so.
DIO=on
if ! LOOP=$(losetup --direct-io=on --show -f "$DIR/fuse/disk.img" 2>"$DIR/losetup.err"); then
	echo "emudisk-up: WARNING: losetup --direct-io=on failed: $(cat "$DIR/losetup.err");" \
		"using a buffered loop device: the page cache will absorb repeated reads" >&2
	DIO=off
	LOOP=$(losetup --show -f "$DIR/fuse/disk.img") || die "losetup on $DIR/fuse/disk.img failed"
fi
note loop "$LOOP"
[ -s "$DIR/losetup.err" ] || rm -f "$DIR/losetup.err"
LOOPSYS=/sys/block/$(basename "$LOOP")
if [ "$DIO" = on ] && [ "$(cat "$LOOPSYS/loop/dio")" != 1 ]; then
	echo "emudisk-up: WARNING: $LOOP accepted --direct-io=on but reports dio=0" >&2
	DIO=off
fi
note dio "$DIO"
# loop allows 1280 KiB; FUSE carries at most 1 MiB per request, so a 1280 KiB
# request would arrive as 1 MiB + 256 KiB.  Cap it at what FUSE carries.
MAXKB=${EMUDISK_MAX_SECTORS_KB:-1024}
echo "$MAXKB" >"$LOOPSYS/queue/max_sectors_kb" ||
	die "cannot set $LOOPSYS/queue/max_sectors_kb to $MAXKB"
GOTKB=$(cat "$LOOPSYS/queue/max_sectors_kb")
[ "$GOTKB" = "$MAXKB" ] ||
	echo "emudisk-up: note: $LOOP clamped max_sectors_kb $MAXKB to $GOTKB" >&2
note max_sectors_kb "$GOTKB"
# report it as what it emulates: a spinning disk
echo 1 >"$LOOPSYS/queue/rotational" 2>/dev/null ||
	echo "emudisk-up: note: cannot mark $LOOP rotational (harmless)" >&2

# 4. ext4.  Inode tables and journal written now, not by ext4lazyinit in the
#    middle of a measurement; no discard (emudisk has no fallocate).
mkfs.ext4 -q -F -L emudisk -T largefile \
	-E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$LOOP" ||
	die "mkfs.ext4 on $LOOP failed"
note mnt "$DIR/mnt"
mount -t ext4 -o noatime "$LOOP" "$DIR/mnt" || die "mounting $LOOP on $DIR/mnt failed"

# The kernel sets readahead to twice max_sectors_kb (2 MiB) whenever the queue
# limits change, and mkfs/mount change them.  A SATA disk gets 128 KiB, and
# readahead decides how plain smbd fares with several streams, so pin it now
# that nothing else will touch the limits.
RAKB=${EMUDISK_READ_AHEAD_KB:-128}
echo "$RAKB" >"$LOOPSYS/queue/read_ahead_kb" ||
	die "cannot set $LOOPSYS/queue/read_ahead_kb to $RAKB"
[ "$(cat "$LOOPSYS/queue/read_ahead_kb")" = "$RAKB" ] ||
	die "$LOOPSYS/queue/read_ahead_kb did not keep $RAKB"
note read_ahead_kb "$RAKB"
note up 1
UP_DONE=1
echo "emudisk: $DIR/mnt is ext4 on $LOOP (dio=$DIO, read_ahead_kb=$RAKB) over $DIR/fuse/disk.img" \
	"(FUSE pid $FUSE_PID; counters: cat $DIR/fuse/stats, reset: : > $DIR/fuse/stats)"
