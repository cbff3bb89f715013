/*
 * vfs_rtio: MS-SQOS, FSCTL_STORAGE_QOS_CONTROL, answered from aiod's QoS
 * policy (vfs_rtio_sqos.c; the protocol in vfs_rtio_sqos_wire.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_SQOS_H
#define VFS_RTIO_SQOS_H

/*
 * The VFS fsctl op: FSCTL_STORAGE_QOS_CONTROL on a share with rtio:sqos =
 * yes is answered here, with the limits and reservation of the aiod.ini
 * rule that paces the open; every other control code, and this one when
 * aiod is too old to say its policy, goes to the next module.
 */
NTSTATUS vfs_rtio_sqos_fsctl(struct vfs_handle_struct *handle, struct files_struct *fsp,
			     TALLOC_CTX *ctx, uint32_t function, uint16_t req_flags,
			     const uint8_t *in_data, uint32_t in_len, uint8_t **out_data,
			     uint32_t max_out_len, uint32_t *out_len);

#endif
