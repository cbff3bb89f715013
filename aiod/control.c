/*
 * Control requests from a session's socket: OPEN (with the client's
 * descriptor), CLOSE, FTRUNCATE, UNLINK, DISCONNECT, QoS (QOS_BIND,
 * QOS_POLICY: qos.c), and the monitoring ones: STATS, FILE_STATS here,
 * SESSION_STATS and INFO filled by monitor.c.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aiod.h"
#include "log.h"
#include "peer.h"
#include "rtio_sock.h"
#include "files.h"
#include "streams.h"
#include "monitor.h"
#include "requests.h"
#include "dataplane.h"
#include "session.h"
#include "qos.h"

static void fill_stats(struct aiod_ctx *ctx, struct rtio_stats_rep *r)
{
	/* Sessions that said CONNECT: not monitors, nor connections still silent. */
	r->sessions = 0;
	for (struct aiod_session *s = ctx->sessions; s != NULL; s = aiod_session_next(s)) {
		r->sessions += aiod_session_connected(s);
	}
	r->files = ctx->nfiles_open;
	r->file_records = ctx->nfiles;
	r->watches = aiod_watch_count(ctx);
	r->outside_changes = ctx->st.outside_changes;
	r->outside_blocks = ctx->st.outside_blocks;
	r->blocks_total = ctx->cache->nblocks;
	r->blocks_used = aiod_cache_used(ctx->cache);
	r->blocks_pinned = ctx->cache->pinned;
	r->cache_hits = ctx->st.cache_hits;
	r->cache_misses = ctx->st.cache_misses;
	r->disk_reads = ctx->st.disk_reads;
	r->disk_writes = ctx->st.disk_writes;
	r->bytes_read = ctx->st.bytes_read;
	r->bytes_written = ctx->st.bytes_written;
	r->requests = ctx->st.requests;
	r->errors = ctx->st.errors;
	r->protocol_errors = ctx->st.protocol_errors;
	r->deadline_misses = ctx->st.deadline_misses;
	r->readahead_blocks = ctx->st.readahead_blocks;
	r->evictions = ctx->cache->evictions;
	r->sessions_total = ctx->st.sessions_total;
	r->streams = ctx->streams;
	r->reserved_Bps = ctx->reserved_Bps;
	r->capacity_Bps = ctx->capacity_Bps;
	r->admission_refused = ctx->admission_refused;
	r->admission_demoted = ctx->admission_demoted;
	r->admission_waiting = aiod_admission_waiting(ctx);
	r->startup_debt = aiod_admission_startup_debt(ctx);
	r->writebacks = ctx->st.writebacks;
	r->writeback_bytes = ctx->st.writeback_bytes;
	r->writeback_late = ctx->st.writeback_late;
	r->writes_held = ctx->st.writes_held;
	r->writeback_errors = ctx->st.writeback_errors;
	r->recorders = ctx->recorders;
	r->disk_read_bytes = ctx->st.disk_read_bytes;
	r->passthrough_reads = ctx->st.passthrough_reads;
	r->passthrough_bytes = ctx->st.passthrough_bytes;
	r->hit_reads = ctx->st.hit_reads;
	r->hit_bytes = ctx->st.hit_bytes;
	r->local_reads = ctx->st.local_reads;
	r->local_bytes = ctx->st.local_bytes;
	{
		struct aiod_engine_stats es;

		aiod_engine_get_stats(ctx->engine, &es);
		r->engine_queued = es.queued;
		r->engine_inflight = es.inflight;
		r->engine_continued = es.continued;
		r->engine_waited_first = es.waited_first;
		r->engine_expedited = es.expedited;
		r->engine_merged = es.merged;
		r->engine_sliced = es.sliced;
		r->engine_behind = es.behind;
		r->engine_resubmits = es.resubmits;
	}
	{
		uint32_t flows, paced;

		aiod_qos_counts(ctx, &flows, &paced);
		r->qos_flows = flows;
		r->qos_paced = paced;
	}
}

/* The index-th file record; a listing that asks 0, 1, 2... is one walk (files.c). */
static int fill_file_stats(struct aiod_ctx *ctx, uint32_t index, struct rtio_file_stats_rep *r)
{
	struct aiod_file *f = aiod_file_at(ctx, index);

	if (f == NULL) {
		return -ENOENT;
	}
	r->dev = f->dev;
	r->ino = f->ino;
	r->opens = f->opens;
	for (unsigned c = 0; f->sclass != NULL && c < ctx->cfg->n_classes; c++) {
		if (&ctx->cfg->classes[c] == f->sclass) {
			r->stream_class = c + 1;
		}
	}
	r->reserved_bps = f->reserved_bps;
	r->deadline_misses = f->deadline_misses;
	r->bytes_read = f->bytes_read;
	snprintf(r->name, sizeof(r->name), "%s", f->name != NULL ? f->name : "");
	return 0;
}

/* The end of a listing (an index past the last) is no error. */
static bool listing_end(uint16_t opcode, int ret)
{
	return ret == -ENOENT && (opcode == RTIO_OP_FILE_STATS || opcode == RTIO_OP_SESSION_STATS ||
				  opcode == RTIO_OP_QOS_LIST);
}

void aiod_control_handle(struct aiod_ctx *ctx, struct aiod_session *s, const union rtio_msg *m,
			 size_t len, int *fds, unsigned nfds, int fd_err)
{
	union rtio_msg rep;
	size_t rep_len = rtio_msg_expected_len(m->hdr.opcode, 1);
	struct aiod_peer *p = aiod_peer_of(s);	/* NULL before CONNECT: STATS only */
	struct aiod_open *o;
	int send_fd = -1;	/* a descriptor the reply carries (aiod keeps its own) */
	int ret = 0;

	(void)len;
	memset(&rep, 0, sizeof(rep));
	rtio_hdr_init(&rep.hdr, m->hdr.opcode, (uint32_t)rep_len, m->hdr.req_id);
	rep.hdr.flags = RTIO_F_REPLY;
	if (m->hdr.opcode != RTIO_OP_OPEN && (nfds > 0 || fd_err != 0)) {
		ret = -EPROTO;	/* only OPEN carries a descriptor */
		goto reply;
	}
	if (p == NULL && !rtio_op_is_monitoring(m->hdr.opcode) && m->hdr.opcode != RTIO_OP_DISCONNECT) {
		ret = -EPROTO;	/* the session layer lets nothing else through before CONNECT */
		goto reply;
	}
	switch (m->hdr.opcode) {
	case RTIO_OP_OPEN: {
		char name[RTIO_NAME_MAX];

		if (fd_err != 0) {
			/* Out of descriptors: the file's I/O stays with the client. */
			SESS_WARN_RL(&ctx->resource_log, s, "OPEN: no descriptor left to take the "
				     "client's (%s)", strerror(-fd_err));
			ret = fd_err;
			goto reply;
		}
		if (nfds != 1) {
			ret = -EBADF;
			goto reply;
		}
		memcpy(name, m->open_req.name, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		ret = aiod_open_add(ctx, &p->opens, fds[0], name, m->open_req.flags, &o);
		if (ret != 0) {
			goto reply;
		}
		nfds = 0;	/* the open owns the descriptor now */
		o->qos_slot = p->qos_slot;
		aiod_peer_note_file(p, o->file->dev, o->file->ino);
		rep.open_rep.file_id = o->id;
		rep.open_rep.dev = o->file->dev;
		rep.open_rep.ino = o->file->ino;
		rep.open_rep.stream_class = 0;
		for (unsigned i = 0; o->file->sclass != NULL && i < ctx->cfg->n_classes; i++) {
			if (&ctx->cfg->classes[i] == o->file->sclass) {
				rep.open_rep.stream_class = i + 1;
				rep.open_rep.prebuffer_ms = o->file->sclass->prebuffer_ms;
			}
		}
		rep.open_rep.bitrate = o->rate_bps;
		SESS_DEBUG(s, "OPEN %s -> file %llu", name, (unsigned long long)o->id);
		break;
	}
	case RTIO_OP_CLOSE:
		o = aiod_open_find(&p->opens, m->close_req.file_id);
		if (o == NULL) {
			ret = -EBADF;
			break;
		}
		aiod_load_close(ctx, &p->opens, o);
		break;
	case RTIO_OP_FTRUNCATE:
		o = aiod_open_find(&p->opens, m->ftruncate_req.file_id);
		if (o == NULL) {
			ret = -EBADF;
			break;
		}
		if (m->ftruncate_req.length > INT64_MAX) {
			ret = -EINVAL;
			break;
		}
		/*
		 * smbd already changed the size (its VFS stack decides how: strict
		 * allocate, sparse...). We only make the cache agree (paper 3.1.3.1.7).
		 */
		(void)aiod_cache_truncate(ctx->cache, o->file->dev, o->file->ino,
					  m->ftruncate_req.length);
		o->file->known_size = m->ftruncate_req.length;
		break;
	case RTIO_OP_INVALIDATE:
		o = aiod_open_find(&p->opens, m->invalidate_req.file_id);
		if (o == NULL) {
			ret = -EBADF;
			break;
		}
		(void)aiod_cache_invalidate(ctx->cache, o->file->dev, o->file->ino,
					    m->invalidate_req.offset, m->invalidate_req.length);
		break;
	case RTIO_OP_UNLINK:
		/* It drops every cached block of the file: only for whoever had the file. */
		if (!aiod_peer_may_unlink(p, m->unlink_req.dev, m->unlink_req.ino)) {
			ret = -EPERM;
			break;
		}
		aiod_file_forget(ctx, m->unlink_req.dev, m->unlink_req.ino);
		break;
	case RTIO_OP_STATS:
		fill_stats(ctx, &rep.stats_rep);
		break;
	case RTIO_OP_FILE_STATS:
		ret = fill_file_stats(ctx, m->file_stats_req.index, &rep.file_stats_rep);
		break;
	case RTIO_OP_SESSION_STATS:
		ret = aiod_monitor_session(ctx, m->index_req.index, &rep.session_stats_rep);
		break;
	case RTIO_OP_INFO:
		aiod_monitor_info(ctx, m->index_req.index, &rep.info_rep);
		break;
	case RTIO_OP_QOS_BIND:
	case RTIO_OP_QOS_POLICY: {
		struct rtio_qos_bind_req who = m->qos_bind_req;

		/* the client's strings, our terminators */
		who.user[sizeof(who.user) - 1] = '\0';
		who.client[sizeof(who.client) - 1] = '\0';
		who.guid[sizeof(who.guid) - 1] = '\0';
		who.share[sizeof(who.share) - 1] = '\0';
		who.file[sizeof(who.file) - 1] = '\0';
		if (m->hdr.opcode == RTIO_OP_QOS_POLICY) {
			ret = aiod_qos_lookup(ctx, &who, &rep.qos_policy_rep);
			break;
		}
		ret = aiod_qos_bind(ctx, &who, &rep.qos_bind_rep);
		if (ret == 0 && who.file[0] == '\0' && p != NULL) {
			aiod_peer_set_qos_slot(p, rep.qos_bind_rep.slot);
		}
		break;
	}
	case RTIO_OP_QOS_LIST:
		ret = aiod_qos_list(ctx, m->qos_list_req.index, &rep.qos_list_rep);
		break;
	case RTIO_OP_WATCH_FD:
		/* Polled, never read: reading would take aiod's events (rtio_client_cached.c). */
		send_fd = aiod_watch_fd(ctx);
		ret = send_fd >= 0 ? 0 : -ENOSYS;
		break;
	case RTIO_OP_DISCONNECT:
		/*
		 * The client queued its last messages (a final LOCAL_READS, HITs)
		 * before it said DISCONNECT, but the queue and the socket are read
		 * in whichever order their events come: take what the queue holds
		 * first, or it would go with the session.
		 */
		aiod_session_receive(s, aiod_session_req_depth(ctx));
		if (aiod_session_dying(s)) {
			return;	/* a reply to one of them found the reply queue full */
		}
		/* The client may not wait for the answer: a failed reply is no news. */
		(void)rtio_sock_send(aiod_session_sock(s), &rep, rep_len, NULL, 0);
		aiod_session_destroy(s, "DISCONNECT");
		return;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
reply:
	for (unsigned i = 0; i < nfds; i++) {
		close(fds[i]);
	}
	if (ret < 0 && !listing_end(m->hdr.opcode, ret)) {
		ctx->st.errors++;
	}
	rep.hdr.result = ret;
	(void)aiod_session_control_reply(s, &rep, rep_len, ret == 0 ? send_fd : -1);
}
