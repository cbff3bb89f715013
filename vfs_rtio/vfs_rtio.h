/*
 * vfs_rtio: internal interfaces between the module's files.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   vfs_rtio.c          the VFS function table, connect, open/close, namespace ops
 *   vfs_rtio_config.c   rtio:* smb.conf parameters, read once per tree connect
 *   vfs_rtio_session.c  the one aiod session of this smbd process
 *   vfs_rtio_io.c       data operations (sync and tevent async) and their fallback
 *
 * Include after Samba's includes.h / smbd/smbd.h.
 */
#ifndef VFS_RTIO_H
#define VFS_RTIO_H

#include "rtio_client.h"

#define MODULE_NAME "rtio"

#define VFS_RTIO_DEFAULT_SOCKET     "/run/aiod/aiod.sock"
#define VFS_RTIO_DEFAULT_TIMEOUT_MS 5000
#define VFS_RTIO_MIN_TIMEOUT_MS     100
#define VFS_RTIO_MAX_TIMEOUT_MS     600000
/*
 * A detached process tries aiod again at most this often, on its next I/O.
 * A connect to an aiod that is alive but stuck costs rtio:timeout of smbd's
 * time, so after each attempt that timed out (or that aiod accepted and
 * dropped without an answer) the interval doubles, up to the maximum; a
 * refused connect (aiod simply gone) costs nothing and keeps the short
 * interval, so a restarted aiod is found within a second. An aiod that
 * answers it has no room for this process (max_sessions reached, no more
 * message queues) is asked again only after the maximum, and that is logged
 * once.
 */
#define VFS_RTIO_RECONNECT_MS       1000
#define VFS_RTIO_RECONNECT_MAX_MS   60000
/*
 * rtio:timeout is how long aiod may go without answering any request before
 * the session is given up; a request still waiting behind others while
 * aiod makes progress is given up only after this many timeouts.
 */
#define VFS_RTIO_MAX_WAIT_TIMEOUTS  4

/*
 * The status lines ("attached", "not available", "detached", "re-attached")
 * are what an admin looks for after setting "vfs objects = rtio"; they must
 * show at the default "log level = 1", which Samba calls the warning level.
 */
#define VFS_RTIO_STATUS(...) DEBUG(DBGLVL_WARNING, (__VA_ARGS__))

/* Per tree connect: the share's rtio:* parameters. */
struct vfs_rtio_config {
	const char *socket_path;
	int timeout_ms;
	const char **include;	/* NULL: every regular file */
	const char **exclude;
	bool fallback;		/* aiod failure -> local I/O (true) or EIO (false) */
	bool write_local;	/* rtio:write = local: smbd writes, aiod hears WROTE */
	bool case_sensitive;	/* pattern matching follows the share */
	struct vfs_rtio_session *session;	/* shared by the whole process */
};

int vfs_rtio_config_load(struct vfs_handle_struct *handle, TALLOC_CTX *mem_ctx,
			 struct vfs_rtio_config **out);
/* Whether a share-relative name passes rtio:include / rtio:exclude. */
bool vfs_rtio_config_wants(const struct vfs_rtio_config *config, const char *name);

struct vfs_rtio_aio;

/*
 * The aiod session of this smbd process. It outlives individual tree
 * connects: every share with the same rtio:socket uses it. client is NULL
 * while detached; generation grows at every attach, so a file_id learnt in an
 * older session is recognised as stale and the file is registered again.
 */
struct vfs_rtio_session {
	struct vfs_rtio_session *prev, *next;
	const char *socket_path;
	int timeout_ms;
	bool shm_write;			/* a share writes through aiod's buffer (rtio:write = aiod) */
	pid_t pid;
	unsigned nconn;			/* tree connects using this session */
	struct tevent_context *ev;
	struct rtio_client *client;
	uint64_t generation;
	uint32_t session_id;
	bool ever_attached;
	bool detach_logged;		/* the current detached state was logged */
	bool no_room;			/* detached because aiod has no room for us; logged */
	int last_error;			/* -errno of the last failure, for the log */
	struct timespec last_attempt;
	struct timespec last_answer;	/* aiod last completed one of our async requests */
	int retry_ms;			/* current reconnect interval */
	/*
	 * Calls into the client library nest (a sync wait runs callbacks of
	 * async requests). The client may only be freed at depth 0.
	 */
	unsigned depth;
	int watch_fd[2];		/* our dups of the client's event fds */
	struct tevent_fd *fde[2];
	struct vfs_rtio_aio *inflight;	/* async requests aiod currently owns */
	struct vfs_rtio_stale *stale;	/* files aiod may hold stale blocks of */
	size_t nstale;
	bool stale_overflow_logged;
};

/* Find or create the session for config's socket; NULL on ENOMEM. */
struct vfs_rtio_session *vfs_rtio_session_get(const struct vfs_rtio_config *config,
					      struct tevent_context *ev);
void vfs_rtio_session_put(struct vfs_rtio_session *s);
/*
 * The live client, or NULL when the I/O has to be done locally. Notices a
 * dead client (logs the detach once) and reconnects at most every
 * VFS_RTIO_RECONNECT_MS (logs a re-attach if log_attach; tree connect logs
 * its own line).
 */
struct rtio_client *vfs_rtio_session_client(struct vfs_rtio_session *s, bool log_attach);
/* Whether the session is detached because aiod has no room for it (already logged). */
bool vfs_rtio_session_no_room(const struct vfs_rtio_session *s);
void vfs_rtio_session_enter(struct vfs_rtio_session *s);
void vfs_rtio_session_leave(struct vfs_rtio_session *s);
/* ms since *since on the monotonic clock */
int64_t vfs_rtio_elapsed_ms(const struct timespec *since);
/* Record why a call failed, if it means the session is gone (for the log). */
void vfs_rtio_session_failed(struct vfs_rtio_session *s, int err);
/* A request's own timer fired: give up the whole session now. */
void vfs_rtio_session_abort(struct vfs_rtio_session *s);
/*
 * aiod may hold cached blocks of dev/ino that no longer match the file
 * (removed or written locally while we were detached): tell it at the next
 * attach. vfs_rtio_session_take_stale() removes an entry and says whether it
 * was there (an open then asks aiod to invalidate instead).
 */
void vfs_rtio_session_add_stale(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino);
/* Tell aiod now (if attached) or at the next attach. */
void vfs_rtio_session_forget(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino);
bool vfs_rtio_session_take_stale(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino);

/* Per open file (fsp extension) of an eligible regular file. */
struct vfs_rtio_fsp {
	struct vfs_rtio_session *session;
	int fd;			/* the descriptor aiod was given */
	uint64_t dev;
	uint64_t ino;
	uint64_t file_id;
	uint64_t generation;	/* session generation of file_id; 0: not registered */
	uint64_t tried_generation;	/* registration failed in this generation: stay local */
	bool writable;
	bool wrote_locally;	/* written behind aiod's back since registration */
};

/*
 * After a successful open: register eligible regular files. 0, or -ENOBUFS
 * when aiod's admission control refused the stream: the open must fail.
 */
int vfs_rtio_fsp_open(struct vfs_handle_struct *handle, struct files_struct *fsp,
		      const struct vfs_open_how *how, int fd);
/* Before close: unregister, unless fsp's current descriptor is not the registered one. */
void vfs_rtio_fsp_close(struct vfs_handle_struct *handle, struct files_struct *fsp);
/*
 * The client to use for fsp, registering it again if it was registered in an
 * older session; NULL means local I/O. *pext is the fsp's extension (NULL:
 * not an rtio file at all).
 */
struct rtio_client *vfs_rtio_fsp_client(struct vfs_handle_struct *handle,
					 struct files_struct *fsp,
					 struct vfs_rtio_fsp **pext);
/* Register (again) with aiod; 0 or -errno. */
int vfs_rtio_fsp_register(struct rtio_client *client, struct vfs_rtio_fsp *ext,
			  const char *name, bool invalidate);
/*
 * The file changed behind aiod's back (local write in fallback, copy_file_range,
 * punch hole, recvfile): make aiod drop its cached blocks now if the fsp is
 * registered in the live session, else at its next registration. ext may be
 * NULL (looked up; nothing to do for a file that is not ours).
 */
void vfs_rtio_fsp_invalidate(struct vfs_handle_struct *handle, struct files_struct *fsp,
			     struct vfs_rtio_fsp *ext, off_t offset, size_t length);

/* Fallback allowed for this handle's share? (vfs_rtio_config.c) */
bool vfs_rtio_fallback(struct vfs_handle_struct *handle);
/* rtio:write = local (true) or aiod (false) for this handle's share. */
bool vfs_rtio_write_local(struct vfs_handle_struct *handle);

/* An async request aiod owns is given up: complete it locally or with an error. */
void vfs_rtio_aio_abandon(struct vfs_rtio_aio *a, int err);

/* Data operations (vfs_rtio_io.c). */
ssize_t vfs_rtio_pread(struct vfs_handle_struct *handle, struct files_struct *fsp,
		       void *data, size_t n, off_t offset);
ssize_t vfs_rtio_pwrite(struct vfs_handle_struct *handle, struct files_struct *fsp,
			const void *data, size_t n, off_t offset);
struct tevent_req *vfs_rtio_pread_send(struct vfs_handle_struct *handle, TALLOC_CTX *mem_ctx,
				       struct tevent_context *ev, struct files_struct *fsp,
				       void *data, size_t n, off_t offset);
ssize_t vfs_rtio_pread_recv(struct tevent_req *req, struct vfs_aio_state *vfs_aio_state);
struct tevent_req *vfs_rtio_pwrite_send(struct vfs_handle_struct *handle, TALLOC_CTX *mem_ctx,
					struct tevent_context *ev, struct files_struct *fsp,
					const void *data, size_t n, off_t offset);
ssize_t vfs_rtio_pwrite_recv(struct tevent_req *req, struct vfs_aio_state *vfs_aio_state);
struct tevent_req *vfs_rtio_fsync_send(struct vfs_handle_struct *handle, TALLOC_CTX *mem_ctx,
				       struct tevent_context *ev, struct files_struct *fsp);
int vfs_rtio_fsync_recv(struct tevent_req *req, struct vfs_aio_state *vfs_aio_state);

#endif
