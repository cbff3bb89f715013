/*
 * Message verification: the only place that decides whether bytes received
 * from another process are a message.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>

#include "rtio_proto.h"
#include "rtio_shm.h"

struct rtio_op_desc {
	const char *name;
	size_t req_len;		/* 0: clients never send it */
	size_t rep_len;		/* 0: aiod never replies to it */
};

static const struct rtio_op_desc rtio_ops[RTIO_OP_MAX] = {
	[RTIO_OP_CONNECT]    = { "CONNECT", sizeof(struct rtio_connect_req), sizeof(struct rtio_connect_rep) },
	[RTIO_OP_DISCONNECT] = { "DISCONNECT", sizeof(struct rtio_hdr), sizeof(struct rtio_simple_rep) },
	[RTIO_OP_OPEN]       = { "OPEN", sizeof(struct rtio_open_req), sizeof(struct rtio_open_rep) },
	[RTIO_OP_CLOSE]      = { "CLOSE", sizeof(struct rtio_close_req), sizeof(struct rtio_simple_rep) },
	[RTIO_OP_READ0]      = { "READ0", sizeof(struct rtio_io_req), sizeof(struct rtio_io_rep) },
	[RTIO_OP_READ1]      = { "READ1", sizeof(struct rtio_release_req), 0 },
	[RTIO_OP_WRITE0]     = { "WRITE0", sizeof(struct rtio_io_req), sizeof(struct rtio_io_rep) },
	[RTIO_OP_WRITE1]     = { "WRITE1", sizeof(struct rtio_release_req), sizeof(struct rtio_simple_rep) },
	[RTIO_OP_FTRUNCATE]  = { "FTRUNCATE", sizeof(struct rtio_ftruncate_req), sizeof(struct rtio_simple_rep) },
	[RTIO_OP_UNLINK]     = { "UNLINK", sizeof(struct rtio_unlink_req), sizeof(struct rtio_simple_rep) },
	[RTIO_OP_FSYNC]      = { "FSYNC", sizeof(struct rtio_io_req), sizeof(struct rtio_simple_rep) },
	[RTIO_OP_STATS]      = { "STATS", sizeof(struct rtio_hdr), sizeof(struct rtio_stats_rep) },
	[RTIO_OP_FILE_STATS] = { "FILE_STATS", sizeof(struct rtio_file_stats_req),
				 sizeof(struct rtio_file_stats_rep) },
	[RTIO_OP_INVALIDATE] = { "INVALIDATE", sizeof(struct rtio_invalidate_req),
				 sizeof(struct rtio_simple_rep) },
	[RTIO_OP_WROTE]      = { "WROTE", sizeof(struct rtio_io_req), sizeof(struct rtio_simple_rep) },
	[RTIO_OP_SESSION_STATS] = { "SESSION_STATS", sizeof(struct rtio_index_req),
				    sizeof(struct rtio_session_stats_rep) },
	[RTIO_OP_INFO]       = { "INFO", sizeof(struct rtio_index_req), sizeof(struct rtio_info_rep) },
	[RTIO_OP_QOS_BIND]   = { "QOS_BIND", sizeof(struct rtio_qos_bind_req),
				 sizeof(struct rtio_qos_bind_rep) },
	[RTIO_OP_QOS_LIST]   = { "QOS_LIST", sizeof(struct rtio_qos_list_req),
				 sizeof(struct rtio_qos_list_rep) },
	[RTIO_OP_HIT]        = { "HIT", sizeof(struct rtio_io_req), 0 },
	[RTIO_OP_WATCH_FD]   = { "WATCH_FD", sizeof(struct rtio_hdr), sizeof(struct rtio_simple_rep) },
	[RTIO_OP_CREDITS]    = { "CREDITS", sizeof(struct rtio_credits_req), 0 },
	[RTIO_OP_QOS_POLICY] = { "QOS_POLICY", sizeof(struct rtio_qos_bind_req),
				 sizeof(struct rtio_qos_policy_rep) },
	[RTIO_OP_LOCAL_READS] = { "LOCAL_READS", sizeof(struct rtio_local_reads_req), 0 },
};

const char *rtio_op_name(unsigned opcode)
{
	if (opcode == 0 || opcode >= RTIO_OP_MAX || rtio_ops[opcode].name == NULL) {
		return "?";
	}
	return rtio_ops[opcode].name;
}

size_t rtio_msg_expected_len(unsigned opcode, int reply)
{
	if (opcode == 0 || opcode >= RTIO_OP_MAX) {
		return 0;
	}
	return reply ? rtio_ops[opcode].rep_len : rtio_ops[opcode].req_len;
}

void rtio_hdr_init(struct rtio_hdr *h, unsigned opcode, uint32_t length, uint64_t req_id)
{
	memset(h, 0, sizeof(*h));
	h->magic = RTIO_MAGIC;
	h->version = RTIO_PROTO_VERSION;
	h->opcode = (uint16_t)opcode;
	h->length = length;
	h->req_id = req_id;
}

int rtio_msg_verify(const void *buf, size_t len, int reply)
{
	struct rtio_hdr h;
	size_t want;

	if (buf == NULL || len < sizeof(h)) {
		return -EMSGSIZE;
	}
	memcpy(&h, buf, sizeof(h));	/* the buffer may be unaligned */
	if (h.magic != RTIO_MAGIC || h.version != RTIO_PROTO_VERSION || h.reserved != 0) {
		return -EPROTO;
	}
	if ((h.flags & ~RTIO_F_REPLY) != 0 || !!(h.flags & RTIO_F_REPLY) != !!reply) {
		return -EPROTO;
	}
	if (!reply && h.result != 0) {
		return -EPROTO;
	}
	want = rtio_msg_expected_len(h.opcode, reply);
	if (want == 0) {
		return -EPROTO;
	}
	if (reply && h.opcode == RTIO_OP_STATS && len >= RTIO_STATS_REP_MIN_LEN &&
	    (len - sizeof(h)) % sizeof(uint64_t) == 0) {
		want = len;	/* older or newer than ours: whole counters (rtio_proto.h) */
	}
	if (h.length != len || len != want) {
		return -EMSGSIZE;
	}
	if (h.opcode == RTIO_OP_READ0 || h.opcode == RTIO_OP_WRITE0) {
		if (reply) {
			const struct rtio_io_rep *r = buf;
			if (r->nseg > RTIO_MAX_SEGS) {
				return -EPROTO;
			}
		}
	}
	return 0;
}
