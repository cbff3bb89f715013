#!/usr/bin/env bash
# rtio integration tests against a real smbd and aiod.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Usage: tests/integration/run.sh [PATTERN]
#   PATTERN  run only the tests whose name contains it (e.g. "fault", "rtio")
# Environment: BUILD (dir with aiod, aiodctl; default <repo>/build),
#   RTIO_SMB_PORT (4445), RTIO_SEED (random I/O seed), RTIO_KEEP=1 (keep logs).
# Needs root, rtio.so installed in smbd's module dir. Ends with "N passed, M failed".
# BUILD may hold links to installed binaries: tests/deb-install.sh runs the
# harness so against the packages (aiod, aiodctl from /usr, the packaged rtio.so).

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# t_*.sh: the module's tests; aiod_tests.sh: aiod's own (every t_aiod_* function runs)
for t in "$here"/t_*.sh "$here"/aiod_tests.sh; do
	# shellcheck disable=SC1090
	[ -f "$t" ] && . "$t"
done

PATTERN=${1:-}
SEED=${RTIO_SEED:-$(date +%s)}

want() { [ -z "$PATTERN" ] || [[ $1 == *"$PATTERN"* ]]; }
run() { if want "$1"; then it_run "$@"; fi; }

it_setup
echo "rtio integration tests: run dir $IT_T, seed $SEED"
it_start_aiod
it_start_smbd
# loads the module in a real smbd; fails loudly if it did not load or attach
it_smb rtio "ls" > "$IT_T/log/first-connect.out" 2>&1
it_run module-loaded it_check_module_loaded
if [ "$IT_FAILED" != 0 ]; then
	echo "=================================================================="
	echo "smbd did not load vfs_rtio or it never attached to aiod; log tail:"
	tail -n 30 "$IT_T/log/smbd.log"
	echo "=================================================================="
	it_finish
	exit 1
fi

for fn in $(declare -F | awk '$3 ~ /^t_aiod_/ {print $3}'); do
	name=${fn#t_}
	run "${name//_/-}" "$fn"
done

for share in plain rtio rtioaiod rtiosync; do
	run "roundtrip-$share" t_roundtrip "$share"
done
run asan-stress t_asan_stress
run stats-through-aiod t_stats
run hits-copied-by-smbd t_hits
run random-reads-local-without-streams t_random
run metrics t_metrics "$IT_T/aiod/aiod.sock" "$IT_T/data/metrics"
run doctor t_doctor "$IT_T/aiod/aiod.sock" "$IT_T/data/doctor" "$IT_T/aiod.ini"
run config-bad-values t_config_bad_values
run config-filters t_config_filters
run config-fallback-off t_config_fallback_off
for share in plain rtio; do
	run "randio-$share" t_randio "$share" "$SEED"
done
for share in plain rtio rtioaiod; do
	run "coherence-$share" t_coherence "$share" "$SEED"
done
for share in plain rtio; do
	run "sparse-2GiB-$share" t_sparse "$share"
done
run smallfiles-rtio t_smallfiles rtio "$SEED"
run smallfiles-rtioaiod t_smallfiles rtioaiod "$SEED"
run smallfiles-register-min-size-0 t_smallfiles_eager
for share in rtio rtioaiod; do
	run "smallgrow-$share" t_smallgrow "$share" "$SEED"
done
run writer-local t_writer_local
run writer-fallback-limit t_writer_fallback_limit
run writer-fallback-stall t_writer_fallback_stall
run writer-growing-file t_writer_growing
run stall-aiod t_stall
run stall-aiod-stream-slack t_stall_stream
run fault-kill-aiod t_fault "$SEED" rtio
run fault-kill-aiod-aiodwrites t_fault "$SEED" rtioaiod
run sendfile-from-cache t_sendfile
run admission-smb t_admission
run admission-demote-promote t_admission_demote
run admission-streams-that-start-together t_admission_startup
run no-room-fallback t_noroom
run smbtorture-fast t_smbtorture
run streams-emudisk t_streams
run streams-together-and-replay t_streams_together
run streams-unmatched-together t_streams_unmatched
run streams-next-to-a-bulk-copy t_streams_copy
run qos-limit-reload-kill t_qos_limit
run qos-file-rule t_qos_file_rule
run qos-rule-added-by-reload t_qos_added
run qos-aiod-restarted-without-rules t_qos_restart_added
run qos-reserve-emudisk t_qos_reserve
run qos-write-limit t_qos_write_limit
run qos-readahead-bounded t_qos_readahead_bounded
run qos-credit-ceiling-flood t_qos_credits_flood
run qos-copy-charged t_qos_copy_charged
run sqos-fsctl t_sqos

it_finish
