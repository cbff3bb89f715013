/*
 * vfs_rtio: registration of open files with aiod.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * smbd opens every file itself, with the user's rights; aiod receives a
 * duplicate of that descriptor (rtio_client_open passes it with SCM_RIGHTS)
 * and never opens a path. The fsp keeps its own descriptor for everything
 * that is not data I/O (fstat, locks, xattrs, leases).
 *
 * An fsp's extension exists for every eligible file (regular, not a stream,
 * passes rtio:include/exclude), registered or not: its presence is what
 * makes an aiod failure a "fallback" rather than "not ours".
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "vfs_rtio.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_session.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

static bool vfs_rtio_fsp_registered(const struct vfs_rtio_fsp *ext)
{
	const struct vfs_rtio_session *s = ext->session;

	return ext->generation != 0 && ext->generation == vfs_rtio_session_generation(s) &&
	       vfs_rtio_session_live_client(s) != NULL;
}

static ssize_t vfs_rtio_fsp_close_call(struct rtio_client *client, void *private_data)
{
	const uint64_t *file_id = private_data;

	return rtio_client_close(client, *file_id);
}

/* The fsp is closed or its descriptor replaced: aiod lets go of its duplicate. */
static void vfs_rtio_fsp_destroy(void *p_data)
{
	struct vfs_rtio_fsp *ext = p_data;
	struct vfs_rtio_session *s = ext->session;

	if (vfs_rtio_fsp_registered(ext)) {
		ssize_t ret = vfs_rtio_session_call(s, vfs_rtio_fsp_close_call, &ext->file_id);

		if (ret < 0) {
			DBG_DEBUG("rtio: CLOSE of file %" PRIu64 ": %s\n", ext->file_id,
				  strerror((int)-ret));
		}
	}
	if (ext->wrote_locally) {
		/* no descriptor left to re-register with: aiod drops the blocks by identity */
		vfs_rtio_session_forget(s, ext->dev, ext->ino);
	}
}

struct vfs_rtio_fsp_open_call {
	int fd;
	const char *name;
	uint32_t flags;
	struct rtio_file file;
};

static ssize_t vfs_rtio_fsp_open_call(struct rtio_client *client, void *private_data)
{
	struct vfs_rtio_fsp_open_call *c = private_data;

	return rtio_client_open(client, c->fd, c->name, c->flags, &c->file);
}

/* Register (again) with aiod in the live session; 0 or -errno. */
static int vfs_rtio_fsp_register(struct vfs_rtio_fsp *ext, const char *name, bool invalidate)
{
	struct vfs_rtio_session *s = ext->session;
	bool was_stale = vfs_rtio_session_take_stale(s, ext->dev, ext->ino);
	bool replaces = vfs_rtio_fsp_registered(ext);
	uint64_t old_id = ext->file_id;
	struct vfs_rtio_fsp_open_call c = { .fd = ext->fd, .name = name };
	uint32_t flags = 0;
	int ret;

	if (ext->writable) {
		flags |= RTIO_OPEN_WRITABLE;
	}
	if (invalidate || was_stale || ext->wrote_locally) {
		flags |= RTIO_OPEN_INVALIDATE;
	}
	c.flags = flags;
	ret = (int)vfs_rtio_session_call(s, vfs_rtio_fsp_open_call, &c);
	if (replaces && vfs_rtio_session_live_client(s) != NULL) {
		/* The new registration replaces the old one, which may hold stale blocks. */
		vfs_rtio_session_call(s, vfs_rtio_fsp_close_call, &old_id);
	}

	if (ret < 0) {
		if (was_stale) {
			vfs_rtio_session_add_stale(s, ext->dev, ext->ino);
		}
		if (flags & RTIO_OPEN_INVALIDATE) {
			ext->wrote_locally = true;
		}
		ext->generation = 0;
		ext->tried_generation = vfs_rtio_session_generation(s);
		/* A dead session is logged once by the session; a refusal is per file. */
		if (vfs_rtio_session_lost(ret)) {
			DBG_DEBUG("rtio: OPEN of %s: %s\n", name, strerror(-ret));
		} else {
			DBG_NOTICE("rtio: aiod refused %s (%s), doing its I/O locally\n", name,
				   strerror(-ret));
		}
		return ret;
	}
	ext->file_id = c.file.file_id;
	ext->generation = vfs_rtio_session_generation(s);
	ext->wrote_locally = false;
	DBG_DEBUG("rtio: %s is file %" PRIu64 " in session %" PRIu32 "%s (class %" PRIu32 ")\n",
		  name, c.file.file_id, vfs_rtio_session_id(s),
		  (flags & RTIO_OPEN_INVALIDATE) ? ", cache invalidated" : "", c.file.stream_class);
	return 0;
}

int vfs_rtio_fsp_open(struct vfs_handle_struct *handle, struct files_struct *fsp,
		      const struct vfs_open_how *how, int fd)
{
	struct vfs_rtio_config *config = NULL;
	const char *name = fsp->fsp_name->base_name;
	struct vfs_rtio_fsp *ext;
	struct rtio_client *client;
	struct stat st;
	bool invalidate;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return 0);

	/* path references (O_PATH) do no I/O; streams are not files of their own */
	if ((how->flags & O_PATH) || fsp->fsp_flags.is_pathref || fsp_is_alternate_stream(fsp)) {
		return 0;
	}
	if (!vfs_rtio_config_wants(config, name)) {
		return 0;
	}
	if (fstat(fd, &st) != 0) {
		DBG_ERR("rtio: fstat of %s failed: %s, doing its I/O locally\n", fsp_str_dbg(fsp),
			strerror(errno));
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		return 0;
	}
	/*
	 * reopen_from_fsp() turns a path reference into a real open: the new
	 * descriptor is opened before the old one is closed. Anything we knew
	 * about this fsp belongs to an earlier descriptor.
	 */
	if (VFS_FETCH_FSP_EXTENSION(handle, fsp) != NULL) {
		VFS_REMOVE_FSP_EXTENSION(handle, fsp);
	}
	ext = VFS_ADD_FSP_EXTENSION(handle, fsp, struct vfs_rtio_fsp, vfs_rtio_fsp_destroy);
	if (ext == NULL) {
		DBG_ERR("rtio: no memory for %s, doing its I/O locally\n", fsp_str_dbg(fsp));
		return 0;
	}
	*ext = (struct vfs_rtio_fsp){
		.session = config->session,
		.fd = fd,
		.dev = (uint64_t)st.st_dev,
		.ino = (uint64_t)st.st_ino,
		.writable = (how->flags & O_ACCMODE) != O_RDONLY,
	};
	/*
	 * O_TRUNC changed the file behind aiod's back; so may a create, whose
	 * inode number may be that of a file removed while we were detached.
	 */
	invalidate = (how->flags & O_TRUNC) || ((how->flags & O_CREAT) && st.st_size == 0);

	client = vfs_rtio_session_client(config->session, true);
	if (client == NULL) {
		ext->wrote_locally = invalidate;
		return 0;
	}
	/*
	 * aiod answers OPEN with ENOBUFS only when admission control refused a
	 * stream ([admission] mode = refuse): the device is fully booked and the
	 * admin chose to turn the open down rather than serve the stream late.
	 * smbd maps ENOBUFS to NT_STATUS_INSUFFICIENT_RESOURCES for the client.
	 */
	if (vfs_rtio_fsp_register(ext, name, invalidate) == -ENOBUFS) {
		VFS_REMOVE_FSP_EXTENSION(handle, fsp);
		return -ENOBUFS;
	}
	return 0;
}

void vfs_rtio_fsp_close(struct vfs_handle_struct *handle, struct files_struct *fsp)
{
	struct vfs_rtio_fsp *ext = VFS_FETCH_FSP_EXTENSION(handle, fsp);

	/* reopen_from_fsp() closes the old path reference after our openat: not ours */
	if (ext != NULL && ext->fd == fsp_get_pathref_fd(fsp)) {
		VFS_REMOVE_FSP_EXTENSION(handle, fsp);
	}
}

struct rtio_client *vfs_rtio_fsp_client(struct vfs_handle_struct *handle,
					 struct files_struct *fsp,
					 struct vfs_rtio_fsp **pext)
{
	struct vfs_rtio_fsp *ext = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	struct vfs_rtio_session *s;
	struct rtio_client *client;

	*pext = ext;
	if (ext == NULL) {
		return NULL;
	}
	if (fsp_get_io_fd(fsp) != ext->fd) {
		DBG_ERR("rtio: %s has descriptor %d, aiod knows %d: doing its I/O locally\n",
			fsp_str_dbg(fsp), fsp_get_io_fd(fsp), ext->fd);
		return NULL;
	}
	s = ext->session;
	client = vfs_rtio_session_client(s, true);
	if (client == NULL) {
		return NULL;
	}
	if (ext->generation == vfs_rtio_session_generation(s)) {
		return client;
	}
	if (ext->tried_generation == vfs_rtio_session_generation(s)) {
		return NULL;	/* aiod refused it in this session */
	}
	if (vfs_rtio_fsp_register(ext, fsp->fsp_name->base_name, false) != 0) {
		return NULL;
	}
	/* not client: registering may have given up a client that died meanwhile */
	return vfs_rtio_session_live_client(s);
}

struct vfs_rtio_fsp_invalidate_call {
	uint64_t file_id;
	off_t offset;
	size_t length;
};

static ssize_t vfs_rtio_fsp_invalidate_call(struct rtio_client *client, void *private_data)
{
	const struct vfs_rtio_fsp_invalidate_call *c = private_data;

	return rtio_client_invalidate(client, c->file_id, (uint64_t)c->offset,
				      (uint64_t)c->length);
}

void vfs_rtio_fsp_invalidate(struct vfs_handle_struct *handle, struct files_struct *fsp,
			     struct vfs_rtio_fsp *ext, off_t offset, size_t length)
{
	struct vfs_rtio_fsp_invalidate_call c = { .offset = offset, .length = length };
	ssize_t ret;

	if (ext == NULL) {
		ext = VFS_FETCH_FSP_EXTENSION(handle, fsp);
		if (ext == NULL) {
			return;
		}
	}
	if (!vfs_rtio_fsp_registered(ext)) {
		ext->wrote_locally = true;
		return;		/* dropped at the next registration, or by identity at close */
	}
	/* Only the bytes that changed: the rest of the file stays cached. */
	c.file_id = ext->file_id;
	ret = vfs_rtio_session_call(ext->session, vfs_rtio_fsp_invalidate_call, &c);
	if (ret != 0) {
		/* aiod is gone or refused: drop everything at the next registration. */
		ext->wrote_locally = true;
		DBG_DEBUG("rtio: INVALIDATE of %s: %s\n", fsp_str_dbg(fsp), strerror((int)-ret));
	}
}
