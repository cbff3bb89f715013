#!/usr/bin/env bash
# make bench: every benchmark, one after the other (each takes the machine to
# itself; never run them beside the tests). Results land in bench/results/.
#
#   BENCH="fio mixed smb zerocopy qos rt" bench/run.sh (default: all six; rt alone takes
#                                         about 5-6 hours with its defaults)
#   RT_ARGS="--scenario together --bitrates 100M" make bench   options for rt/run.sh
#
#   fio  bench/fio/run.sh   fio's io_uring engine directly vs fio through aiod
#   mixed bench/mixed/run.sh random reads of 4x aiod's cache, direct vs aiod (issue 12),
#         again with a 100 Mbit/s stream playing (STREAM=1, with the ordered engine),
#         then bench/mixed/smallfiles.sh (5,000 small files over SMB),
#         bench/mixed/manyconn.sh (200 clients at once over SMB) and
#         bench/mixed/smbrandom.sh (random 4 KiB / 1 MiB reads over SMB)
#   smb  bench/smb/run.sh   smbclient get/put: plain vs io_uring vs rtio shares,
#        then gets on smbd's sendfile path (BENCH_SENDFILE=1, issue 15)
#   zerocopy bench/zerocopy/run.sh  MSG_ZEROCOPY vs send() over loopback and veth (issue 15)
#   qos  bench/qos/run.sh   what QoS pacing costs, how exactly a limit holds (issue 13),
#        then bench/qos/scenario.sh (a reserved bay, a limited ingest station and
#        best-effort readers on the emulated disk, plain vs rtio, rate over time)
#   rt   bench/rt/run.sh    paced video streams on an emulated disk (issues 5, 11)
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
here=$(cd "$(dirname "$0")" && pwd)
export BUILD=${BUILD:-$(cd "$here/.." && pwd)/build}
status=0
for b in ${BENCH:-fio mixed smb zerocopy qos rt}; do
	echo "==== bench: $b ===="
	case $b in
	fio) make -C "$here/.." --no-print-directory BUILD="$BUILD" \
		"$BUILD/fio/rtio_engine.so" "$BUILD/fio/hit_rtt" && "$here/fio/run.sh" || status=1 ;;
	mixed) make -C "$here/.." --no-print-directory BUILD="$BUILD" \
		"$BUILD/fio/rtio_engine.so" && "$here/mixed/run.sh" || status=1
		STREAM=1 ENGINES="direct routed ordered" "$here/mixed/run.sh" || status=1
		"$here/mixed/smallfiles.sh" || status=1
		"$here/mixed/manyconn.sh" || status=1
		"$here/mixed/smbrandom.sh" || status=1 ;;
	smb) "$here/smb/run.sh" || status=1
		BENCH_SENDFILE=1 BENCH_OPS=get BENCH_CONFIGS="plain iouring rtio" "$here/smb/run.sh" ||
			status=1 ;;
	zerocopy) "$here/zerocopy/run.sh" || status=1 ;;
	qos) "$here/qos/run.sh" || status=1
		"$here/qos/scenario.sh" || status=1 ;;
	rt) read -r -a rt_args <<< "${RT_ARGS:-}"	# options for rt/run.sh, split on spaces
		"$here/rt/run.sh" "${rt_args[@]}" || status=1 ;;
	*) echo "bench: unknown benchmark '$b' (fio, mixed, smb, zerocopy, qos, rt)" >&2; status=2 ;;
	esac
done
exit $status
