/*
 * vfs_rtio: the rtio:* smb.conf parameters of a share (vfs_rtio_config.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_CONFIG_H
#define VFS_RTIO_CONFIG_H

#define VFS_RTIO_DEFAULT_SOCKET     "/run/aiod/aiod.sock"
#define VFS_RTIO_DEFAULT_TIMEOUT_MS 5000
#define VFS_RTIO_MIN_TIMEOUT_MS     100
#define VFS_RTIO_MAX_TIMEOUT_MS     600000

struct vfs_rtio_session;

/* Per tree connect: the share's rtio:* parameters. */
struct vfs_rtio_qos;
struct vfs_rtio_sqos;

struct vfs_rtio_config {
	const char *socket_path;
	int timeout_ms;
	const char **include;	/* NULL: every regular file */
	const char **exclude;
	bool fallback;		/* aiod failure -> local I/O (true) or EIO (false) */
	bool credit_ceiling;	/* rtio:credit ceiling: apply aiod's SMB2 credit ceiling (vfs_rtio_credits.h) */
	bool write_local;	/* rtio:write = local: smbd writes, aiod hears WROTE */
	bool hits_local;	/* rtio:hits = local: smbd copies cached reads, aiod hears HIT */
	bool random_local;	/* rtio:random = local: smbd reads random misses itself when aiod allows */
	bool case_sensitive;	/* pattern matching follows the share */
	uint64_t register_min_size;	/* smaller files are registered when they grow; 0: at open */
	struct vfs_rtio_session *session;	/* shared by the whole process */
	struct vfs_rtio_qos *qos;	/* the flow this tree connect is paced by (vfs_rtio_qos.c) */
	bool sqos;		/* rtio:sqos: answer FSCTL_STORAGE_QOS_CONTROL */
	struct vfs_rtio_sqos *sqos_opens;	/* opens in a logical flow (vfs_rtio_sqos.c), NULL: none yet */
};

int vfs_rtio_config_load(struct vfs_handle_struct *handle, TALLOC_CTX *mem_ctx,
			 struct vfs_rtio_config **out);
/* Whether a share-relative name passes rtio:include / rtio:exclude. */
bool vfs_rtio_config_wants(const struct vfs_rtio_config *config, const char *name);
/* Fallback allowed for this handle's share? */
bool vfs_rtio_fallback(struct vfs_handle_struct *handle);
/* rtio:write = local (true) or aiod (false) for this handle's share. */
bool vfs_rtio_write_local(struct vfs_handle_struct *handle);
/* rtio:hits = local (true) or aiod (false) for this handle's share. */
bool vfs_rtio_hits_local(struct vfs_handle_struct *handle);
/* rtio:random = local (true) or aiod (false) for this handle's share. */
bool vfs_rtio_random_local(struct vfs_handle_struct *handle);

#endif
