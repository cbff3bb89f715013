/*
 * The credit-grant hook: see vfs_rtio_credits.h for what and why.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * How smbd 4.22 uses the ceiling (source3/smbd/smb2_server.c):
 *   - smb2_set_operation_credit() grants at most max - seq_range more
 *     credits with each response, so lowering max only slows new grants; the
 *     client keeps what it holds and spends it.
 *   - smb2_validate_sequence_number() marks a sequence number used out of
 *     order in a bitmap at (seq % max); the bitmap has room for the ceiling
 *     smbd started with. Changing max while a bit is set would map that bit
 *     to another number: a duplicate missed or a valid request refused. So
 *     we change it only while no bit in the window is set, and never above
 *     the bitmap's size.
 *   - a request whose credit charge exceeds max ends the connection, and
 *     SMB_ASSERT(max >= granted) panics smbd: the floor covers both.
 *   - the send queue smbd keeps before it stops reading requests is max/16,
 *     so a lower ceiling also holds back a flood of small requests.
 */
#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/bitmap.h"
#include "librpc/gen_ndr/smbXsrv.h"

#include "vfs_rtio_credits.h"

/* Below this smbd would starve a client that keeps a normal queue depth. */
#define VFS_RTIO_CREDITS_MIN 64u

/*
 * The size smbd gave the sequence bitmap (bitmap_talloc(xconn, max) when
 * the connection started): the first word of lib/util/bitmap.c's struct,
 * which libsamba-util does not export. Checked against what must hold
 * (at least the current ceiling, at most 16 bits) before it is trusted.
 */
static uint32_t vfs_rtio_credits_bitmap_size(const struct bitmap *bm)
{
	unsigned int n;

	memcpy(&n, bm, sizeof(n));
	return n;
}

/* The largest credit charge a client may send on this connection. */
static uint32_t vfs_rtio_credits_largest_charge(const struct smbXsrv_connection *xconn)
{
	uint32_t len = MAX(xconn->smb2.server.max_trans,
			   MAX(xconn->smb2.server.max_read, xconn->smb2.server.max_write));

	return (len + 65535u) / 65536u;
}

/* No sequence number in the window was used out of order (every bit clear). */
static bool vfs_rtio_credits_window_clear(const struct smbXsrv_connection *xconn)
{
	uint64_t seq = xconn->smb2.credits.seq_low;
	uint16_t max = xconn->smb2.credits.max;

	for (uint32_t i = 0; i < xconn->smb2.credits.seq_range; i++) {
		if (bitmap_query(xconn->smb2.credits.bitmap, (unsigned)((seq + i) % max))) {
			return false;
		}
	}
	return true;
}

enum vfs_rtio_credits_result vfs_rtio_credits_follow(struct smbd_server_connection *sconn,
						     uint32_t wanted, struct vfs_rtio_credits *out)
{
	struct smbXsrv_connection *xconn;
	uint32_t orig, floor, target;

	if (sconn == NULL || sconn->client == NULL) {
		return VFS_RTIO_CREDITS_NEVER;
	}
	xconn = sconn->client->connections;
	if (xconn == NULL || xconn->next != NULL || xconn->protocol < PROTOCOL_SMB2_02 ||
	    xconn->smb2.credits.bitmap == NULL || xconn->smb2.credits.max == 0) {
		return VFS_RTIO_CREDITS_NEVER;	/* no SMB2 yet, or several channels */
	}
	orig = vfs_rtio_credits_bitmap_size(xconn->smb2.credits.bitmap);
	if (orig > UINT16_MAX || orig < xconn->smb2.credits.max ||
	    xconn->smb2.credits.granted > xconn->smb2.credits.max ||
	    xconn->smb2.credits.seq_range > xconn->smb2.credits.max) {
		/* not what smbd 4.22 keeps there: leave the connection alone */
		return VFS_RTIO_CREDITS_NEVER;
	}
	floor = MAX(MAX(xconn->smb2.credits.granted, xconn->smb2.credits.seq_range),
		    MAX(VFS_RTIO_CREDITS_MIN, vfs_rtio_credits_largest_charge(xconn)));
	target = wanted == 0 ? orig : MIN(MAX(wanted, floor), orig);
	if (out != NULL) {
		*out = (struct vfs_rtio_credits){
			.granted = xconn->smb2.credits.granted, .max = xconn->smb2.credits.max,
			.orig = orig, .wanted = wanted,
		};
	}
	if (target == xconn->smb2.credits.max) {
		return VFS_RTIO_CREDITS_UNCHANGED;
	}
	if (!vfs_rtio_credits_window_clear(xconn)) {
		return VFS_RTIO_CREDITS_LATER;
	}
	DBG_INFO("rtio: SMB2 credit ceiling of %s: %u -> %u (aiod wants %" PRIu32 ", "
		 "client holds %u, window %u)\n", smbXsrv_connection_dbg(xconn),
		 (unsigned)xconn->smb2.credits.max, (unsigned)target, wanted,
		 (unsigned)xconn->smb2.credits.granted, (unsigned)xconn->smb2.credits.seq_range);
	xconn->smb2.credits.max = (uint16_t)target;
	if (out != NULL) {
		out->max = target;
	}
	return VFS_RTIO_CREDITS_APPLIED;
}
