/*
 * vfs_rtio: the aiod session of this smbd process (vfs_rtio_session.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The session is the module's transport: it owns the client library's
 * session and calls nothing of the module above it. It hears back from the
 * layers above only through the functions they hand it (vfs_rtio_session_call's
 * fn, a request's abandon).
 */
#ifndef VFS_RTIO_SESSION_H
#define VFS_RTIO_SESSION_H

#include "rtio_client.h"
#include "vfs_rtio_config.h"

/*
 * One per smbd process and socket path, shared by every tree connect of the
 * process. Opaque: only vfs_rtio_session.c sees inside.
 */
struct vfs_rtio_session;

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
/* The client if attached and alive, else NULL; never reconnects. */
struct rtio_client *vfs_rtio_session_live_client(const struct vfs_rtio_session *s);

/*
 * One call into the client library: fn(client, private_data) with the
 * session's client, which stays valid until fn returns, however many
 * completion callbacks run inside it. fn returns bytes, 0 or -errno; an
 * -errno that means aiod is gone is remembered for the log, and a client
 * that died is given up once the outermost call returns. Returns what fn
 * returned, or -ENOTCONN without calling it when detached.
 */
typedef ssize_t (*vfs_rtio_session_fn)(struct rtio_client *client, void *private_data);
ssize_t vfs_rtio_session_call(struct vfs_rtio_session *s, vfs_rtio_session_fn fn,
			      void *private_data);

/*
 * A read vfs_rtio_read_route() gave to smbd itself (VFS_RTIO_READ_LOCAL)
 * returned bytes: counted in the client and told to aiod, at most once a
 * second (rtio_client_count_local_read()), so aiodctl stats shows it as
 * local_reads. While detached there is nobody to tell: not counted.
 */
void vfs_rtio_session_count_local_read(struct vfs_rtio_session *s, size_t bytes);

/* err (-errno) says the session is gone: aiod died, dropped us or stopped answering. */
bool vfs_rtio_session_lost(ssize_t err);

/*
 * An asynchronous request aiod owns, as the session sees it. Listed from
 * vfs_rtio_session_req_add() until vfs_rtio_session_req_done() or _remove(),
 * or until the session gives up its client: then the session takes it off
 * the list and calls abandon(private_data, -errno), and its owner completes
 * it some other way. The owner embeds this; the session only links it.
 */
struct vfs_rtio_session_req {
	struct vfs_rtio_session_req *prev, *next;
	struct vfs_rtio_session *session;	/* NULL: not listed */
	void (*abandon)(void *private_data, int err);
	void *private_data;
};

void vfs_rtio_session_req_add(struct vfs_rtio_session *s, struct vfs_rtio_session_req *req,
			      void (*abandon)(void *private_data, int err), void *private_data);
/* aiod answered req (bytes or -errno): off the list; any answer but a lost session shows aiod alive. */
void vfs_rtio_session_req_done(struct vfs_rtio_session_req *req, ssize_t result);
/* Off the list, if listed. */
void vfs_rtio_session_req_remove(struct vfs_rtio_session_req *req);
/* A request's own timer fired: give up the whole session now. */
void vfs_rtio_session_abort(struct vfs_rtio_session *s);

/*
 * Grows at every attach: a file_id learnt in an older session is
 * recognised as stale and the file is registered again.
 */
uint64_t vfs_rtio_session_generation(const struct vfs_rtio_session *s);
/* aiod's number for the current (or last) attach, for the log. */
uint32_t vfs_rtio_session_id(const struct vfs_rtio_session *s);
/* -errno of the last failure, 0 if none; for the log. */
int vfs_rtio_session_last_error(const struct vfs_rtio_session *s);
/* Whether the session is detached because aiod has no room for it (already logged). */
bool vfs_rtio_session_no_room(const struct vfs_rtio_session *s);
/* The event context aiod's replies are watched on. */
struct tevent_context *vfs_rtio_session_ev(const struct vfs_rtio_session *s);
/* rtio:timeout of the session (that of the first share to connect). */
int vfs_rtio_session_timeout_ms(const struct vfs_rtio_session *s);
/*
 * ms since aiod last answered one of our async requests (or since the
 * attach), or since its event loop last beat in the shared region if that
 * is more recent: how long aiod has been silent, not merely busy.
 */
int64_t vfs_rtio_session_silent_ms(const struct vfs_rtio_session *s);

/*
 * aiod may hold cached blocks of dev/ino that no longer match the file
 * (removed or written locally while we were detached): tell it at the next
 * attach. vfs_rtio_session_take_stale() removes an entry and says whether it
 * was there (an open then asks aiod to invalidate instead).
 */
void vfs_rtio_session_add_stale(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino);
bool vfs_rtio_session_take_stale(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino);
/* Tell aiod now (if attached) or at the next attach. */
void vfs_rtio_session_forget(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino);

#endif
