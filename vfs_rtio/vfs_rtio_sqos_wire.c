/*
 * vfs_rtio: MS-SQOS requests decoded and answered, without Samba
 * (vfs_rtio_sqos_wire.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "vfs_rtio_sqos_wire.h"

/* Little-endian fields, byte by byte: the buffer may sit at any address. */
static uint16_t sqos_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t sqos_get32(const uint8_t *p)
{
	return (uint32_t)sqos_get16(p) | (uint32_t)sqos_get16(p + 2) << 16;
}

static uint64_t sqos_get64(const uint8_t *p)
{
	return (uint64_t)sqos_get32(p) | (uint64_t)sqos_get32(p + 4) << 32;
}

static void sqos_put32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static void sqos_put64(uint8_t *p, uint64_t v)
{
	sqos_put32(p, (uint32_t)v);
	sqos_put32(p + 4, (uint32_t)(v >> 32));
}

static bool sqos_guid_empty(const uint8_t g[16])
{
	static const uint8_t zero[16];

	return memcmp(g, zero, sizeof(zero)) == 0;
}

enum vfs_rtio_sqos_result vfs_rtio_sqos_parse(const uint8_t *in, size_t len,
					      struct vfs_rtio_sqos_req *req)
{
	size_t fixed;

	memset(req, 0, sizeof(*req));
	if (in == NULL || len < 2) {
		return VFS_RTIO_SQOS_INVALID_PARAMETER;
	}
	/* the version first: the spec checks it before anything else */
	req->version = sqos_get16(in);
	if (req->version == VFS_RTIO_SQOS_V1_0) {
		fixed = VFS_RTIO_SQOS_REQ_V1_0_LEN;
	} else if (req->version == VFS_RTIO_SQOS_V1_1) {
		fixed = VFS_RTIO_SQOS_REQ_V1_1_LEN;
	} else {
		return VFS_RTIO_SQOS_REVISION_MISMATCH;
	}
	/* a 1.0-sized request that claims 1.1 is short, as Microsoft's tests expect */
	if (len < fixed) {
		return VFS_RTIO_SQOS_INVALID_PARAMETER;
	}
	req->size = len;
	req->options = sqos_get32(in + 4);
	memcpy(req->flow_id, in + 8, 16);
	memcpy(req->policy_id, in + 24, 16);
	memcpy(req->initiator_id, in + 40, 16);
	req->limit = sqos_get64(in + 56);
	req->reservation = sqos_get64(in + 64);
	req->name_off = sqos_get16(in + 72);
	req->name_len = sqos_get16(in + 74);
	req->node_off = sqos_get16(in + 76);
	req->node_len = sqos_get16(in + 78);
	/* 80..111: the initiator's counters, which the server may only note (3.2.5.1.3) */
	if (req->version == VFS_RTIO_SQOS_V1_1) {
		req->bandwidth_limit = sqos_get64(in + 112);
	}
	if ((req->options & VFS_RTIO_SQOS_OPTIONS) == 0) {
		return VFS_RTIO_SQOS_INVALID_PARAMETER;
	}
	return VFS_RTIO_SQOS_OK;
}

/* A name (offset, length) the spec accepts: bounded, after the fixed fields, inside the request. */
static bool sqos_name_ok(const struct vfs_rtio_sqos_req *req, uint16_t off, uint16_t len)
{
	if (len == 0) {
		return true;
	}
	return len <= VFS_RTIO_SQOS_NAME_MAX && off >= VFS_RTIO_SQOS_NAME_MIN_OFF &&
	       (size_t)off + len <= req->size;
}

/* The policy fields of a SET_POLICY or PROBE_POLICY, checked as Windows checks them (<8>). */
static bool sqos_policy_ok(const struct vfs_rtio_sqos_req *req)
{
	bool asks = req->limit > 0 || req->reservation > 0 || req->bandwidth_limit > 0;

	if (!sqos_name_ok(req, req->name_off, req->name_len) ||
	    !sqos_name_ok(req, req->node_off, req->node_len)) {
		return false;
	}
	if (req->limit > VFS_RTIO_SQOS_RATE_MAX || req->reservation > VFS_RTIO_SQOS_RATE_MAX ||
	    req->bandwidth_limit > VFS_RTIO_SQOS_RATE_MAX) {
		return false;
	}
	if (req->limit > 0 && req->reservation > req->limit) {
		return false;
	}
	/* values, or a policy that names them: not both */
	return !(asks && !sqos_guid_empty(req->policy_id));
}

enum vfs_rtio_sqos_result vfs_rtio_sqos_apply(struct vfs_rtio_sqos_flow *flow,
					      const struct vfs_rtio_sqos_req *req, size_t max_out)
{
	struct vfs_rtio_sqos_flow next = *flow;
	/* a probe only counts for an open not yet in a flow (3.2.5.1) */
	bool probe = (req->options & VFS_RTIO_SQOS_PROBE_POLICY) && !flow->associated;
	bool set_flow = req->options & VFS_RTIO_SQOS_SET_LOGICAL_FLOW_ID;

	/* 3.2.5.1.1: join, or leave with an empty GUID */
	if (probe && sqos_guid_empty(req->flow_id)) {
		return VFS_RTIO_SQOS_INVALID_PARAMETER;
	}
	if ((set_flow || probe) && !sqos_guid_empty(req->flow_id)) {
		if (!next.associated || memcmp(next.flow_id, req->flow_id, 16) != 0) {
			/* another flow: none of the old one's policy */
			memset(&next, 0, sizeof(next));
			memcpy(next.flow_id, req->flow_id, 16);
		}
		next.associated = true;
	} else if (set_flow) {
		memset(&next, 0, sizeof(next));
	}
	/* 3.2.5.1.2: the initiator's policy, remembered (aiod.ini's is the one applied) */
	if ((req->options & VFS_RTIO_SQOS_SET_POLICY) && !next.associated) {
		return VFS_RTIO_SQOS_NOT_FOUND;
	}
	if ((req->options & VFS_RTIO_SQOS_SET_POLICY) || probe) {
		if (!sqos_policy_ok(req)) {
			return VFS_RTIO_SQOS_INVALID_PARAMETER;
		}
		memcpy(next.policy_id, req->policy_id, 16);
		memcpy(next.initiator_id, req->initiator_id, 16);
		next.limit = req->limit;
		next.reservation = req->reservation;
		next.bandwidth_limit = req->bandwidth_limit;
	}
	/* 3.2.5.1.3: the counters are noted by nobody: aiod measures the flow itself */
	if ((req->options & VFS_RTIO_SQOS_UPDATE_COUNTERS) && !next.associated) {
		return VFS_RTIO_SQOS_NOT_FOUND;
	}
	/* 3.2.5.1.4 */
	if (req->options & VFS_RTIO_SQOS_GET_STATUS) {
		if (max_out < VFS_RTIO_SQOS_RESP_MIN_LEN) {
			return VFS_RTIO_SQOS_INVALID_PARAMETER;
		}
		if (!next.associated) {
			return VFS_RTIO_SQOS_NOT_FOUND;
		}
	}
	*flow = next;
	return VFS_RTIO_SQOS_OK;
}

/* What the flow's status is, given that aiod.ini, not the initiator, sets the policy. */
static uint32_t sqos_status_code(const struct vfs_rtio_sqos_flow *flow,
				 const struct vfs_rtio_sqos_policy *policy, bool v1_1)
{
	bool asked = flow->limit > 0 || flow->reservation > 0 || (v1_1 && flow->bandwidth_limit > 0);

	if (!policy->available) {
		return VFS_RTIO_SQOS_STATUS_NOT_AVAILABLE;
	}
	if (!sqos_guid_empty(flow->policy_id)) {
		return VFS_RTIO_SQOS_STATUS_UNKNOWN_POLICY_ID;	/* no Windows policy store here */
	}
	if (asked && (flow->limit != policy->max_iops || flow->reservation != policy->min_iops ||
		      (v1_1 && flow->bandwidth_limit != policy->max_kibps))) {
		return VFS_RTIO_SQOS_STATUS_CONFIGURATION_MISMATCH;
	}
	return VFS_RTIO_SQOS_STATUS_OK;
}

size_t vfs_rtio_sqos_status(const struct vfs_rtio_sqos_flow *flow,
			    const struct vfs_rtio_sqos_req *req,
			    const struct vfs_rtio_sqos_policy *policy, size_t max_out, uint8_t *out)
{
	bool v1_1 = req->version == VFS_RTIO_SQOS_V1_1;
	size_t len = v1_1 ? VFS_RTIO_SQOS_RESP_V1_1_LEN : VFS_RTIO_SQOS_RESP_V1_0_LEN;
	bool avail = policy->available;

	memset(out, 0, VFS_RTIO_SQOS_RESP_V1_1_LEN);
	out[0] = (uint8_t)req->version;
	out[1] = (uint8_t)(req->version >> 8);
	/* 2: Reserved, 4: Options, both 0 */
	memcpy(out + 8, flow->flow_id, 16);
	memcpy(out + 24, flow->policy_id, 16);
	memcpy(out + 40, flow->initiator_id, 16);
	sqos_put32(out + 56, VFS_RTIO_SQOS_TTL_MS);
	sqos_put32(out + 60, sqos_status_code(flow, policy, v1_1));
	sqos_put64(out + 64, avail ? policy->max_iops : 0);
	sqos_put64(out + 72, avail ? policy->min_iops : 0);
	sqos_put32(out + 80, VFS_RTIO_SQOS_BASE_IO_SIZE);
	if (v1_1) {
		sqos_put64(out + 88, avail ? policy->max_kibps : 0);
	}
	return len < max_out ? len : max_out;
}

/* x / unit, but at least 1 when x is not 0: a limit must not turn into "none". */
static uint64_t sqos_limit_units(uint64_t x, uint64_t unit)
{
	return x == 0 ? 0 : x / unit > 0 ? x / unit : 1;
}

void vfs_rtio_sqos_policy_from(uint64_t limit_Bps, uint64_t limit_read_Bps,
			       uint64_t limit_write_Bps, uint64_t limit_iops, uint64_t reserve_Bps,
			       struct vfs_rtio_sqos_policy *out)
{
	uint64_t total = limit_Bps;
	uint64_t by_bytes;

	if (limit_read_Bps > 0 && limit_write_Bps > 0) {
		uint64_t both = limit_read_Bps + limit_write_Bps;

		if (both < limit_read_Bps) {
			both = UINT64_MAX;	/* absurd sizes: no wrap into a tiny limit */
		}
		total = total == 0 || both < total ? both : total;
	}
	by_bytes = sqos_limit_units(total, VFS_RTIO_SQOS_BASE_IO_SIZE);
	out->available = true;
	out->max_iops = by_bytes;
	if (limit_iops > 0 && (by_bytes == 0 || limit_iops < by_bytes)) {
		out->max_iops = limit_iops;
	}
	out->min_iops = reserve_Bps / VFS_RTIO_SQOS_BASE_IO_SIZE;
	out->max_kibps = sqos_limit_units(total, 1024);
}
