/*
 * QoS pacing in the module (issue 13): each tree connect is bound to the
 * flow aiod chose for its principal (user, client address, client GUID,
 * share), and every read and write is charged to that flow's slot in the
 * shared flow table before it is submitted. aiod only publishes rates; the
 * waiting happens here, so a throttle never looks like a stuck aiod, and
 * when aiod is gone the last published rates stay in force (the table stays
 * mapped).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_QOS_H
#define VFS_RTIO_QOS_H

#include "rtio_qos.h"
#include "vfs_rtio_session.h"

struct vfs_rtio_qos;

/*
 * At tree connect: who the connection's I/O belongs to, and its flow if aiod
 * is there (otherwise bound on the first I/O after aiod comes). NULL only
 * when out of memory: QoS never fails a tree connect.
 */
struct vfs_rtio_qos *vfs_rtio_qos_connect(TALLOC_CTX *mem_ctx, struct vfs_handle_struct *handle,
					  struct vfs_rtio_session *session);

/* A held I/O: the slot it was charged to (the binding may change while it waits). */
struct vfs_rtio_qos_ticket {
	struct rtio_qos_flow *slot;	/* NULL: nothing held */
	uint64_t gen;
	struct rtio_qos_hold hold;	/* when it may go, at which rates */
};

/*
 * A held I/O looks at its flow's rates at least this often (aiod's QoS
 * tick): a wait is decided at the rate of the moment, and aiod raises a
 * rate the moment the capacity is there (a reserved reader stopped).
 */
#define VFS_RTIO_QOS_RECHECK_NS 100000000ull

/*
 * Charge an I/O of n bytes; returns the ns to hold it before submitting
 * (0: go now). q may be NULL (no QoS). A result > 0 fills *t, which must be
 * given to vfs_rtio_qos_release() once the I/O was submitted or abandoned.
 */
uint64_t vfs_rtio_qos_charge(struct vfs_rtio_qos *q, bool write, uint64_t n,
			     struct vfs_rtio_qos_ticket *t);
void vfs_rtio_qos_release(struct vfs_rtio_qos_ticket *t);

/*
 * What a held I/O still waits under its flow's rates now (0: go). Sleep at
 * most VFS_RTIO_QOS_RECHECK_NS of it and ask again.
 */
uint64_t vfs_rtio_qos_left(struct vfs_rtio_qos_ticket *t);

/* The sync paths (pread, pwrite, sendfile): charge and sleep here (async: vfs_rtio_qos_gate.h). */
void vfs_rtio_qos_pace(struct vfs_rtio_qos *q, bool write, uint64_t n);

/*
 * A file's own flow, when aiod said rules on file names may apply to the
 * tree connect's principal (RTIO_QOS_FILE_RULES): bound with the file's
 * share-relative name. NULL (use the tree connect's) otherwise.
 */
struct vfs_rtio_qos *vfs_rtio_qos_for_file(TALLOC_CTX *mem_ctx, const struct vfs_rtio_qos *tree,
					   const char *name);

/*
 * The rule that applies to q's principal (and file, for a file's own flow)
 * and its configured values, asked of aiod now (QOS_POLICY): 0, -ENOTCONN
 * without aiod, -EOPNOTSUPP when aiod is too old to answer.
 */
int vfs_rtio_qos_policy(struct vfs_rtio_qos *q, struct rtio_qos_policy_rep *out);

/* The tree connect's binding, NULL if none. */
struct vfs_rtio_qos *vfs_rtio_qos_of(struct vfs_handle_struct *handle);

#endif
