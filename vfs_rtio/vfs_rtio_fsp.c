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
 *
 * A file smaller than rtio:register min size at open is not registered then
 * (vfs_rtio_defer.h): until an I/O reaches that size, vfs_rtio_fsp_client()
 * answers "not ours" for it, and smbd does its I/O as without the module, at
 * no aiod round trip. Nothing of such a file is aiod's through this handle,
 * so nothing aiod holds can go stale through it either; what it writes
 * locally is covered like every other writer aiod is not told about:
 *   - aiod knows the file from another open, or still caches blocks of it:
 *     its inotify watch sees the write (IN_MODIFY, queued before our write
 *     returns) and drops the blocks before it answers any later read
 *     (README, "Files changed outside Samba");
 *   - this handle registers the file later: the registration passes
 *     RTIO_OPEN_INVALIDATE (wrote_locally), as after a fallback;
 *   - anybody else opens it later: aiod checks its stamp of the file (mtime,
 *     ctime, size) at OPEN.
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "vfs_rtio.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_defer.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_qos.h"
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

	TALLOC_FREE(ext->qos);
	if (vfs_rtio_fsp_registered(ext)) {
		ssize_t ret = vfs_rtio_session_call(s, vfs_rtio_fsp_close_call, &ext->file_id);

		if (ret < 0) {
			DBG_DEBUG("rtio: CLOSE of file %" PRIu64 ": %s\n", ext->file_id,
				  strerror((int)-ret));
		}
	}
	/*
	 * No descriptor left to re-register with: aiod drops the blocks by
	 * identity. Not for a file that was never aiod's through this handle
	 * (deferred, or refused when it grew): aiod would refuse that UNLINK
	 * from a session that never had the file, and its watch has seen the
	 * writes already.
	 */
	if (ext->wrote_locally && ext->register_at == 0) {
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
	ext->stream = c.file.stream_class != 0 || c.file.bitrate != 0;
	/*
	 * The client plays from a buffer of about the class's prebuffer_ms: a
	 * read that waits on a silent aiod for longer drops frames. Half of it
	 * leaves the other half for smbd's own read after the session is given
	 * up (never below rtio:timeout's floor).
	 */
	ext->slack_ms = c.file.prebuffer_ms == 0 ? 0 :
			MAX(c.file.prebuffer_ms / 2, VFS_RTIO_MIN_TIMEOUT_MS);
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
	struct vfs_rtio_defer_open defer;
	struct stat st;

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
	 * A round trip only where aiod said rules on file names may apply to this
	 * principal. The extension is not a talloc context: the fsp is its parent,
	 * and vfs_rtio_fsp_destroy() frees it with the extension.
	 */
	ext->qos = vfs_rtio_qos_for_file(fsp, config->qos, name);
	/*
	 * O_TRUNC changed the file behind aiod's back; so may a create, whose
	 * inode number may be that of a file removed while we were detached.
	 */
	defer = vfs_rtio_defer_open(config->register_min_size, how->flags, (uint64_t)st.st_size);
	if (defer.register_at != 0) {
		/* what the open changed is aiod's to drop when the file is registered */
		ext->register_at = defer.register_at;
		ext->wrote_locally = defer.invalidate;
		DBG_DEBUG("rtio: %s has %jd bytes: registered with aiod when an I/O reaches "
			  "%" PRIu64 " (rtio:register min size)\n", name, (intmax_t)st.st_size,
			  defer.register_at);
		return 0;
	}

	client = vfs_rtio_session_client(config->session, true);
	if (client == NULL) {
		ext->wrote_locally = defer.invalidate;
		return 0;
	}
	/*
	 * aiod answers OPEN with ENOBUFS only when admission control refused a
	 * stream ([admission] mode = refuse): the device is fully booked and the
	 * admin chose to turn the open down rather than serve the stream late.
	 * smbd maps ENOBUFS to NT_STATUS_INSUFFICIENT_RESOURCES for the client.
	 */
	if (vfs_rtio_fsp_register(ext, name, defer.invalidate) == -ENOBUFS) {
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

/* Whether an access of a deferred fsp reaches the size that registers it. */
static bool vfs_rtio_fsp_reaches(const struct vfs_rtio_fsp *ext, struct files_struct *fsp,
				 enum vfs_rtio_fsp_access access, off_t offset, size_t n)
{
	struct stat st;

	if (offset < 0) {
		return false;	/* appending: done locally in any case */
	}
	switch (access) {
	case VFS_RTIO_ACCESS_NONE:
		return false;
	case VFS_RTIO_ACCESS_WRITE:
		return vfs_rtio_defer_write_reaches(ext->register_at, (uint64_t)offset, n);
	case VFS_RTIO_ACCESS_READ:
		if (!vfs_rtio_defer_read_may_reach(ext->register_at, (uint64_t)offset, n)) {
			return false;
		}
		/*
		 * Clients ask for more than a small file holds: only a file that
		 * has grown that far (another client wrote it) is worth aiod.
		 */
		if (fstat(fsp_get_io_fd(fsp), &st) != 0) {
			return true;	/* the registration will tell */
		}
		return vfs_rtio_defer_read_reaches(ext->register_at, (uint64_t)offset, n,
						   (uint64_t)st.st_size);
	}
	return false;
}

struct rtio_client *vfs_rtio_fsp_client(struct vfs_handle_struct *handle,
					 struct files_struct *fsp,
					 enum vfs_rtio_fsp_access access, off_t offset,
					 size_t n, struct vfs_rtio_fsp **pext)
{
	struct vfs_rtio_fsp *ext = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	struct vfs_rtio_session *s;
	struct rtio_client *client;
	bool late;
	int ret;

	*pext = NULL;
	if (ext == NULL) {
		return NULL;
	}
	if (ext->register_at != 0 && !vfs_rtio_fsp_reaches(ext, fsp, access, offset, n)) {
		if (access == VFS_RTIO_ACCESS_WRITE) {
			ext->wrote_locally = true;	/* for the registration, if it comes */
		}
		return NULL;
	}
	*pext = ext;
	late = ext->register_at != 0;
	if (late) {
		/*
		 * From now on an aiod file like any other: when aiod is away, its
		 * I/O is a fallback, and it is registered when aiod is back.
		 */
		DBG_DEBUG("rtio: %s reaches %" PRIu64 " bytes: registering it with aiod\n",
			  fsp_str_dbg(fsp), ext->register_at);
		ext->register_at = 0;
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
	ret = vfs_rtio_fsp_register(ext, fsp->fsp_name->base_name, false);
	if (ret == -ENOBUFS && late) {
		/*
		 * Admission control turned the stream down (the register logged
		 * it, once: this handle never asks again). An open can be refused;
		 * a write the client was already granted cannot: the file stays
		 * smbd's, as the small file it was.
		 */
		ext->register_at = VFS_RTIO_DEFER_NEVER;
		*pext = NULL;
		return NULL;
	}
	if (ret != 0) {
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

struct vfs_rtio_qos *vfs_rtio_fsp_qos(struct vfs_handle_struct *handle, struct files_struct *fsp)
{
	struct vfs_rtio_fsp *ext = VFS_FETCH_FSP_EXTENSION(handle, fsp);

	return ext != NULL && ext->qos != NULL ? ext->qos : vfs_rtio_qos_of(handle);
}

bool vfs_rtio_fsp_page_cached(struct files_struct *fsp, off_t offset, size_t n)
{
	off_t size = fsp->fsp_name->st.st_ex_size;
	uint64_t len;
	int ret;

	if (offset < 0 || offset >= size || n == 0) {
		return false;
	}
	len = MIN((uint64_t)n, (uint64_t)(size - offset));
	/*
	 * cachestat answers only who owns or may write the file (like
	 * mincore: no page-cache side channel), and readers rarely do.
	 * Only this process learns the answer, to pick a path.
	 */
	become_root();
	ret = rtio_page_cached(fsp_get_io_fd(fsp), (uint64_t)offset, len);
	unbecome_root();
	if (ret != 1) {
		DBG_DEBUG("rtio: %s [%jd, +%" PRIu64 "): page cache %s\n", fsp_str_dbg(fsp),
			  (intmax_t)offset, len, ret == 0 ? "misses pages" : strerror(-ret));
	}
	return ret == 1;
}

ssize_t vfs_rtio_fsp_read_nowait(struct files_struct *fsp, void *buf, size_t n, off_t offset)
{
	struct iovec iov = { .iov_base = buf, .iov_len = n };

	return preadv2(fsp_get_io_fd(fsp), &iov, 1, offset, RWF_NOWAIT);
}
