/*
 * vfs_rtio: FSCTL_STORAGE_QOS_CONTROL (MS-SQOS) answered from aiod's QoS
 * policy (vfs_rtio_sqos.h). The protocol itself is vfs_rtio_sqos_wire.c;
 * this file finds the open's logical flow, asks aiod for the rule that
 * paces the open, and speaks NTSTATUS.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The spec's logical flow table is kept per tree connect, as a list of the
 * opens that joined a flow: an entry lives as long as its open (a talloc
 * child of the fsp) and unlinks itself when the open goes.
 */
#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/dlinklist.h"

#include "vfs_rtio.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_qos.h"
#include "vfs_rtio_sqos.h"
#include "vfs_rtio_sqos_wire.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

_Static_assert(VFS_RTIO_SQOS_FSCTL == FSCTL_STORAGE_QOS_CONTROL, "MS-SQOS control code");

/* An open in a logical flow. */
struct vfs_rtio_sqos_open {
	struct vfs_rtio_sqos_open *prev, *next;
	struct vfs_rtio_sqos *owner;	/* NULL once the tree connect's list is gone */
	const struct files_struct *fsp;
	struct vfs_rtio_sqos_flow flow;
	/* aiod's last answer: it stands while aiod is away, as its last published rates do */
	struct vfs_rtio_sqos_policy last;
};

/* The tree connect's opens in a logical flow (config->sqos_opens). */
struct vfs_rtio_sqos {
	struct vfs_rtio_sqos_open *opens;
};

static int vfs_rtio_sqos_open_destructor(struct vfs_rtio_sqos_open *o)
{
	if (o->owner != NULL) {
		DLIST_REMOVE(o->owner->opens, o);
	}
	return 0;
}

/* The opens outlive the list only in theory (smbd closes them before the tree goes). */
static int vfs_rtio_sqos_destructor(struct vfs_rtio_sqos *s)
{
	for (struct vfs_rtio_sqos_open *o = s->opens; o != NULL; o = o->next) {
		o->owner = NULL;
	}
	return 0;
}

static struct vfs_rtio_sqos_open *vfs_rtio_sqos_find(const struct vfs_rtio_config *config,
						     const struct files_struct *fsp)
{
	for (struct vfs_rtio_sqos_open *o = config->sqos_opens != NULL ? config->sqos_opens->opens
								      : NULL;
	     o != NULL; o = o->next) {
		if (o->fsp == fsp) {
			return o;
		}
	}
	return NULL;
}

static struct vfs_rtio_sqos_open *vfs_rtio_sqos_add(struct vfs_rtio_config *config,
						    struct files_struct *fsp)
{
	struct vfs_rtio_sqos_open *o;

	if (config->sqos_opens == NULL) {
		config->sqos_opens = talloc_zero(config, struct vfs_rtio_sqos);
		if (config->sqos_opens == NULL) {
			return NULL;
		}
		talloc_set_destructor(config->sqos_opens, vfs_rtio_sqos_destructor);
	}
	o = talloc_zero(fsp, struct vfs_rtio_sqos_open);
	if (o == NULL) {
		return NULL;
	}
	o->owner = config->sqos_opens;
	o->fsp = fsp;
	DLIST_ADD(o->owner->opens, o);
	talloc_set_destructor(o, vfs_rtio_sqos_open_destructor);
	return o;
}

static NTSTATUS vfs_rtio_sqos_ntstatus(enum vfs_rtio_sqos_result r)
{
	switch (r) {
	case VFS_RTIO_SQOS_OK:
		return NT_STATUS_OK;
	case VFS_RTIO_SQOS_REVISION_MISMATCH:
		return NT_STATUS_REVISION_MISMATCH;
	case VFS_RTIO_SQOS_NOT_FOUND:
		return NT_STATUS_NOT_FOUND;
	case VFS_RTIO_SQOS_INVALID_PARAMETER:
		break;
	}
	return NT_STATUS_INVALID_PARAMETER;
}

/* The open's new flow state in place: joined (a new entry if need be) or left. */
static NTSTATUS vfs_rtio_sqos_commit(struct vfs_rtio_config *config, struct files_struct *fsp,
				     struct vfs_rtio_sqos_open **po,
				     const struct vfs_rtio_sqos_flow *flow)
{
	if (!flow->associated) {
		TALLOC_FREE(*po);
		return NT_STATUS_OK;
	}
	if (*po == NULL) {
		*po = vfs_rtio_sqos_add(config, fsp);
		if (*po == NULL) {
			return NT_STATUS_NO_MEMORY;
		}
	}
	(*po)->flow = *flow;
	return NT_STATUS_OK;
}

/*
 * What the status answers with: aiod's rule for the open now, else the
 * last answer (aiod away), else nothing (Status NotAvailable).
 */
static void vfs_rtio_sqos_policy(struct vfs_rtio_sqos_open *o, int ret,
				 const struct rtio_qos_policy_rep *rep,
				 struct vfs_rtio_sqos_policy *out)
{
	if (ret == 0) {
		vfs_rtio_sqos_policy_from(rep->limit_Bps, rep->limit_read_Bps,
					  rep->limit_write_Bps, rep->limit_iops, rep->reserve_Bps,
					  out);
		o->last = *out;
		return;
	}
	*out = o->last;	/* available only if aiod answered once */
}

NTSTATUS vfs_rtio_sqos_fsctl(struct vfs_handle_struct *handle, struct files_struct *fsp,
			     TALLOC_CTX *ctx, uint32_t function, uint16_t req_flags,
			     const uint8_t *in_data, uint32_t in_len, uint8_t **out_data,
			     uint32_t max_out_len, uint32_t *out_len)
{
	struct vfs_rtio_config *config = NULL;
	struct vfs_rtio_qos *q;
	struct rtio_qos_policy_rep rep = { .weight = 0 };
	struct vfs_rtio_sqos_req req;
	struct vfs_rtio_sqos_flow flow = { .associated = false };
	struct vfs_rtio_sqos_policy policy;
	struct vfs_rtio_sqos_open *o;
	enum vfs_rtio_sqos_result r;
	NTSTATUS status;
	uint8_t *buf;
	int ret;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config,
				return NT_STATUS_INTERNAL_ERROR);
	if (function != FSCTL_STORAGE_QOS_CONTROL || !config->sqos) {
		return SMB_VFS_NEXT_FSCTL(handle, fsp, ctx, function, req_flags, in_data, in_len,
					  out_data, max_out_len, out_len);
	}
	/* the rule that paces this open: its own (match_file) or its tree connect's */
	q = vfs_rtio_fsp_qos(handle, fsp);
	ret = q != NULL ? vfs_rtio_qos_policy(q, &rep) : -ENOMEM;
	if (ret == -EOPNOTSUPP) {
		/* an older aiod: answered as without the module (Samba: INVALID_DEVICE_REQUEST) */
		return SMB_VFS_NEXT_FSCTL(handle, fsp, ctx, function, req_flags, in_data, in_len,
					  out_data, max_out_len, out_len);
	}
	*out_data = NULL;
	*out_len = 0;
	r = vfs_rtio_sqos_parse(in_data, in_len, &req);
	o = vfs_rtio_sqos_find(config, fsp);
	if (o != NULL) {
		flow = o->flow;
	}
	if (r == VFS_RTIO_SQOS_OK) {
		r = vfs_rtio_sqos_apply(&flow, &req, max_out_len);
	}
	DBG_DEBUG("rtio: MS-SQOS on %s: version 0x%04x options 0x%x, %u bytes in, %u out: %d\n",
		  fsp_str_dbg(fsp), req.version, (unsigned)req.options, (unsigned)in_len,
		  (unsigned)max_out_len, (int)r);
	if (r != VFS_RTIO_SQOS_OK) {
		return vfs_rtio_sqos_ntstatus(r);
	}
	status = vfs_rtio_sqos_commit(config, fsp, &o, &flow);
	if (!NT_STATUS_IS_OK(status) || !(req.options & VFS_RTIO_SQOS_GET_STATUS)) {
		return status;
	}
	/* a status needs a flow: apply() made sure, so commit() kept o */
	vfs_rtio_sqos_policy(o, ret, &rep, &policy);
	buf = talloc_zero_array(ctx, uint8_t, VFS_RTIO_SQOS_RESP_V1_1_LEN);
	if (buf == NULL) {
		return NT_STATUS_NO_MEMORY;
	}
	*out_len = (uint32_t)vfs_rtio_sqos_status(&o->flow, &req, &policy, max_out_len, buf);
	*out_data = buf;
	DBG_INFO("rtio: MS-SQOS status of %s: rule '%s', max %" PRIu64 " min %" PRIu64
		 " normalized IOPS, max %" PRIu64 " KiB/s%s\n", fsp_str_dbg(fsp),
		 ret == 0 ? rep.rule : "?", policy.max_iops, policy.min_iops, policy.max_kibps,
		 policy.available ? "" : " (aiod not reachable: not available)");
	return NT_STATUS_OK;
}
