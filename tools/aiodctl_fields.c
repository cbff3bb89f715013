/*
 * The table of aiod's STATS counters (aiodctl_fields.h), in the order
 * `aiodctl stats` has always printed them. aiod(8) explains each.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "aiodctl_fields.h"

#define F(key, type, metric, help) \
	{ #key, offsetof(struct rtio_stats_rep, key), AIODCTL_##type, metric, help }

const struct aiodctl_stat_field aiodctl_stat_fields[] = {
	F(sessions, GAUGE, "rtio_sessions", "Client sessions (smbd processes) connected now."),
	F(sessions_total, COUNTER, "rtio_sessions_connected_total",
	  "Client sessions connected since aiod started."),
	F(files, GAUGE, "rtio_open_files", "Files with at least one open."),
	F(blocks_total, GAUGE, "rtio_cache_blocks", "Blocks of the shared cache."),
	F(blocks_used, GAUGE, "rtio_cache_used_blocks", "Cache blocks holding data."),
	F(blocks_pinned, GAUGE, "rtio_cache_pinned_blocks",
	  "Cache blocks referenced by a client or an I/O in flight."),
	F(cache_hits, COUNTER, "rtio_cache_hit_blocks_total",
	  "Blocks of client reads answered from the cache."),
	F(hit_reads, COUNTER, "rtio_client_copied_reads_total",
	  "Reads smbd copied from the cache itself, without a round trip to aiod."),
	F(hit_bytes, COUNTER, "rtio_client_copied_read_bytes_total",
	  "Bytes of those reads (also counted in rtio_client_read_bytes_total)."),
	F(local_reads, COUNTER, "rtio_client_local_reads_total",
	  "Reads smbd made itself, without aiod, as reported: random reads (rtio:random = local) and sendfiles left to the kernel."),
	F(local_bytes, COUNTER, "rtio_client_local_read_bytes_total",
	  "Bytes of those reads (not in rtio_client_read_bytes_total: aiod returned none)."),
	F(cache_misses, COUNTER, "rtio_cache_miss_blocks_total",
	  "Blocks of client reads that had to be loaded."),
	F(evictions, COUNTER, "rtio_cache_evicted_blocks_total", "Cache blocks evicted."),
	F(readahead_blocks, COUNTER, "rtio_readahead_blocks_total", "Blocks read ahead."),
	F(disk_reads, COUNTER, "rtio_disk_reads_total", "Device reads aiod submitted."),
	F(disk_read_bytes, COUNTER, "rtio_disk_read_bytes_total",
	  "Bytes the device read for aiod (loads and pass-through reads)."),
	F(passthrough_reads, COUNTER, "rtio_passthrough_reads_total",
	  "Random reads served without the cache."),
	F(passthrough_bytes, COUNTER, "rtio_passthrough_read_bytes_total",
	  "Bytes the device read for pass-through reads."),
	F(disk_writes, COUNTER, "rtio_disk_writes_total", "Device writes aiod submitted."),
	F(bytes_read, COUNTER, "rtio_client_read_bytes_total", "Bytes returned to clients."),
	F(bytes_written, COUNTER, "rtio_client_written_bytes_total",
	  "Bytes clients wrote through aiod or reported writing."),
	F(requests, COUNTER, "rtio_requests_total", "Data-path requests handled."),
	F(errors, COUNTER, "rtio_request_errors_total", "Requests answered with an error."),
	F(protocol_errors, COUNTER, "rtio_protocol_errors_total", "Malformed messages dropped."),
	F(deadline_misses, COUNTER, "rtio_deadline_misses_total",
	  "Stream reads that found their data not yet cached."),
	F(streams, GAUGE, "rtio_streams", "Admitted stream opens."),
	F(reserved_Bps, GAUGE, "rtio_reserved_bytes_per_second",
	  "Device bandwidth reserved for admitted streams."),
	F(capacity_Bps, GAUGE, "rtio_capacity_bytes_per_second",
	  "Device bandwidth admission control works with (0 = unknown)."),
	F(admission_refused, COUNTER, "rtio_admission_refused_total",
	  "Stream opens refused by admission control."),
	F(admission_demoted, COUNTER, "rtio_admission_demoted_total",
	  "Stream opens served best effort by admission control."),
	F(admission_waiting, GAUGE, "rtio_admission_waiting_streams",
	  "Class streams served best effort now, admitted when a stream closes and leaves room."),
	F(startup_debt, GAUGE, "rtio_admission_startup_debt_bytes",
	  "Bytes of their read-ahead windows the streams that started still owe: while any is "
	  "owed, a new stream is admitted only if it starts in time ([admission] startup_s)."),
	F(recorders, GAUGE, "rtio_recorders", "Opens written back as streams (recorders)."),
	F(writebacks, COUNTER, "rtio_writebacks_total", "Write-back requests aiod queued."),
	F(writeback_bytes, COUNTER, "rtio_writeback_bytes_total", "Bytes aiod wrote back."),
	F(writeback_late, COUNTER, "rtio_writebacks_late_total",
	  "Write-back requests done after their deadline."),
	F(writeback_errors, COUNTER, "rtio_writeback_errors_total", "Write-back requests that failed."),
	F(writes_held, COUNTER, "rtio_writes_held_total",
	  "Write replies held because the writer was ahead of its write-back."),
	F(qos_flows, GAUGE, "rtio_qos_flows", "QoS flows in use (rules and best-effort principals)."),
	F(qos_paced, GAUGE, "rtio_qos_paced_flows", "QoS flows published with a rate now."),
	F(file_records, GAUGE, "rtio_file_records", "Files aiod keeps: open or with cached blocks."),
	F(watches, GAUGE, "rtio_watches", "Files watched for outside changes (inotify)."),
	F(outside_changes, COUNTER, "rtio_outside_changes_total",
	  "Changes by writers aiod was not told about."),
	F(outside_blocks, COUNTER, "rtio_outside_dropped_blocks_total",
	  "Cached blocks dropped for outside changes."),
	F(engine_queued, GAUGE, "rtio_engine_queued_requests",
	  "Device requests waiting in aiod's deadline queue for a slot ([engine] queue_depth)."),
	F(engine_inflight, GAUGE, "rtio_engine_inflight_requests", "Device requests in the kernel."),
	F(engine_continued, COUNTER, "rtio_engine_continued_reads_total",
	  "Reads the device got where the last one ended, before an earlier deadline that stayed on time."),
	F(engine_waited_first, COUNTER, "rtio_engine_waited_first_total",
	  "Earliest-deadline requests the device got first because a client waited for them."),
	F(engine_expedited, COUNTER, "rtio_engine_expedited_total",
	  "Queued requests made due sooner because a client waited for their blocks."),
	F(engine_merged, COUNTER, "rtio_engine_merged_reads_total",
	  "Queued stream reads taken along, in one device request, by the read before them."),
	F(engine_sliced, COUNTER, "rtio_engine_sliced_pieces_total",
	  "Pieces of best-effort reads after which the rest went back in the queue ([readahead] blocks_with_streams)."),
	F(engine_behind, COUNTER, "rtio_engine_behind_pieces_total",
	  "Pieces of best-effort reads handed to the kernel right behind the request before them, every device slot taken."),
	F(engine_resubmits, COUNTER, "rtio_engine_resubmits_total",
	  "Short transfers and -EAGAIN completions the engine handed to the kernel again."),
};
#undef F

const size_t aiodctl_n_stat_fields = sizeof(aiodctl_stat_fields) / sizeof(aiodctl_stat_fields[0]);

uint64_t aiodctl_stat_value(const struct rtio_stats_rep *st, const struct aiodctl_stat_field *f)
{
	uint64_t v;

	memcpy(&v, (const char *)st + f->offset, sizeof(v));
	return v;
}

bool aiodctl_stat_sent(size_t len, const struct aiodctl_stat_field *f)
{
	return f->offset + sizeof(uint64_t) <= len;
}

void aiodctl_stats_note(size_t len)
{
	size_t sent = 0;

	for (size_t i = 0; i < aiodctl_n_stat_fields; i++) {
		sent += aiodctl_stat_sent(len, &aiodctl_stat_fields[i]);
	}
	if (sent < aiodctl_n_stat_fields) {
		fprintf(stderr,
			"aiodctl: aiod sent %zu of the %zu counters this aiodctl knows: it is older "
			"(an upgrade that has not restarted it yet); the rest are left out\n",
			sent, aiodctl_n_stat_fields);
	}
}
