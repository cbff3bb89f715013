#!/usr/bin/env bash
# Build the fio benchmark without make: fio's config-host.h (configure run in
# a copy of fio's source), the rtio fio ioengine, the cache-hit probe, and a
# private aiod + aiodctl from the same tree, all under $BUILD/fio/.
# Same result as bench/fio/fio.mk; aiod is built here too because the
# benchmark must measure the aiod that matches the client library it links.
#
# Usage: bench/fio/build.sh            (BUILD defaults to ./build, FIO_SRC to $BUILD/src/fio)
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
BUILD=${BUILD:-$here/build}
FIO_SRC=${FIO_SRC:-$BUILD/src/fio}
OUT=$BUILD/fio
CFG=$OUT/fio-src
CC=${CC:-gcc}

die() { echo "bench/fio/build.sh: $*" >&2; exit 1; }

mkdir -p "$OUT"
pkg-config --exists talloc tevent liburing || die "talloc, tevent and liburing dev packages are needed (scripts/deps.sh)"
CFLAGS="-Wall -Wextra -Werror -O2 -g -std=gnu11 -D_GNU_SOURCE -fPIC -Icommon $(pkg-config --cflags talloc)"
CLIENT="$(echo common/rtio_client*.c) common/rtio_proto.c common/rtio_shm.c common/rtio_sock.c common/rtio_queue.c"

if [ ! -f "$CFG/config-host.h" ]; then
	[ -f "$FIO_SRC/configure" ] || die "no fio source in $FIO_SRC: run scripts/deps.sh"
	echo "build.sh: configuring a copy of fio's source in $CFG"
	rm -rf "$CFG"; mkdir -p "$CFG"
	cp -a "$FIO_SRC"/. "$CFG"/
	(cd "$CFG" && ./configure --disable-native --prefix=/usr > configure.log 2>&1) \
		|| { cat "$CFG/configure.log" >&2; die "fio configure failed"; }
fi

# fio's headers are not -Wextra clean: include them as system headers.
# shellcheck disable=SC2086
$CC $CFLAGS -isystem "$CFG" -include "$CFG/config-host.h" -shared -o "$OUT/rtio_engine.so" \
	bench/fio/rtio_engine.c $CLIENT $(pkg-config --libs talloc)
# shellcheck disable=SC2086
$CC $CFLAGS -o "$OUT/hit_rtt" bench/fio/hit_rtt.c $CLIENT $(pkg-config --libs talloc) -lrt

built="$OUT/rtio_engine.so $OUT/hit_rtt"
# aiod and aiodctl are the Makefile's (the same flags and file lists as
# what is installed); a second recipe here fell behind the tree once.
make -s -C "$here" BUILD="$BUILD" "$BUILD/aiod" "$BUILD/aiodctl" || die "aiod does not build (make)"
built="$built $BUILD/aiod $BUILD/aiodctl"
echo "build.sh: built $built"
