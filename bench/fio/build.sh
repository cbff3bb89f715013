#!/usr/bin/env bash
# Build the fio benchmark: fio's config-host.h (configure run in a copy of
# fio's source), the rtio fio ioengine, the cache-hit probe (under
# $BUILD/fio/), and aiod + aiodctl from the same tree, through the
# Makefile's recipes (bench/fio/fio.mk). aiod is built too because the
# benchmark must measure the aiod that matches the client library it links.
#
# Usage: bench/fio/build.sh            (BUILD defaults to ./build, FIO_SRC to $BUILD/src/fio)
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
BUILD=${BUILD:-$here/build}
FIO_SRC=${FIO_SRC:-$BUILD/src/fio}
OUT=$BUILD/fio

die() { echo "bench/fio/build.sh: $*" >&2; exit 1; }

mkdir -p "$OUT"
pkg-config --exists talloc tevent liburing || die "talloc, tevent and liburing dev packages are needed (scripts/deps.sh)"
[ -f "$FIO_SRC/configure" ] || die "no fio source in $FIO_SRC: run scripts/deps.sh"

# One recipe for everything, the Makefile's (it includes bench/fio/fio.mk):
# the fio engine and hit_rtt with fio's configure run in a copy of its
# source, and aiod and aiodctl with the same flags and file lists as what is
# installed. A second recipe here fell behind the tree twice.
built="$OUT/rtio_engine.so $OUT/hit_rtt $BUILD/aiod $BUILD/aiodctl"
# shellcheck disable=SC2086
make -s -C "$here" BUILD="$BUILD" FIO_SRC="$FIO_SRC" $built || die "the fio benchmark does not build (make)"
echo "build.sh: built $built"
