/*
 * The credit-grant hook (issue 13): apply the SMB2 credit ceiling aiod
 * publishes with a QoS flow's rates (rtio_qos_credit_ceiling()) to the
 * client's connection, on Debian's unmodified smbd, by lowering the
 * connection's "max credits" that smb2_set_operation_credit() grants up to.
 *
 * The rate itself comes from pacing (vfs_rtio_qos.c). The ceiling bounds how
 * much a throttled client can queue inside smbd while its requests wait:
 * requests, and for writes their data, at most a second's worth of the flow's
 * rate instead of smbd's 8192 credits (512 MiB).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_CREDITS_H
#define VFS_RTIO_CREDITS_H

#include <stdbool.h>
#include <stdint.h>

struct smbd_server_connection;

/* What vfs_rtio_credits_follow() found; for the log and for aiodctl sessions. */
struct vfs_rtio_credits {
	uint32_t granted;	/* credits the client holds now */
	uint32_t max;		/* the connection's ceiling now */
	uint32_t orig;		/* smbd's own ceiling ("smb2 max credits") */
	uint32_t wanted;	/* what aiod asked for, 0 = none */
};

enum vfs_rtio_credits_result {
	VFS_RTIO_CREDITS_UNCHANGED,	/* already there */
	VFS_RTIO_CREDITS_APPLIED,	/* the ceiling moved */
	VFS_RTIO_CREDITS_LATER,		/* not safe now (a request out of order): next time */
	VFS_RTIO_CREDITS_NEVER,		/* not an SMB2 connection we may touch (multichannel, SMB1, ...) */
};

/*
 * Move the connection's ceiling towards `wanted` credits (0: smbd's own),
 * under the rule that keeps smbd's sequence window intact:
 *   - never above the size of smbd's sequence bitmap (smbd's own ceiling),
 *   - never below what the client holds (granted), the window's range,
 *     64, or the charge of the largest read/write/ioctl it negotiated;
 *   - only while no sequence number in the window was used out of order
 *     (the bitmap is indexed modulo the ceiling: with every bit clear a new
 *     modulus maps nothing wrongly);
 *   - never on a multichannel client (several connections share a session).
 * Main thread only (smbd's request processing is single-threaded). *out, if
 * given, receives the state after the call.
 */
enum vfs_rtio_credits_result vfs_rtio_credits_follow(struct smbd_server_connection *sconn,
						     uint32_t wanted, struct vfs_rtio_credits *out);

#endif
