/*
 * The control socket. aiod runs as root and serves file data, so who may
 * talk to it is decided here, before anything else: the kernel's SO_PEERCRED
 * says who connected (root, or a uid/group from aiod.ini), and the socket's
 * directory is 0700 unless aiod.ini allows others.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "aiod.h"
#include "log.h"
#include "rtio_sock.h"
#include "listener.h"
#include "session.h"

static bool peer_allowed(const struct aiod_config *cfg, int sock, const struct ucred *cr)
{
	gid_t groups[256];
	socklen_t glen = sizeof(groups);

	if (cr->uid == 0) {
		return true;
	}
	for (unsigned i = 0; i < cfg->n_allow_uids; i++) {
		if (cfg->allow_uids[i] == cr->uid) {
			return true;
		}
	}
	if (cfg->n_allow_gids == 0) {
		return false;
	}
	for (unsigned i = 0; i < cfg->n_allow_gids; i++) {
		if (cfg->allow_gids[i] == cr->gid) {
			return true;
		}
	}
	if (getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) != 0) {
		return false;
	}
	for (unsigned j = 0; j < glen / sizeof(gid_t); j++) {
		for (unsigned i = 0; i < cfg->n_allow_gids; i++) {
			if (cfg->allow_gids[i] == groups[j]) {
				return true;
			}
		}
	}
	return false;
}

/*
 * How long accepting pauses after accept() failed for want of descriptors
 * or memory: the waiting client stays in the backlog, and a listening socket
 * watched meanwhile would wake the loop again at once, for nothing.
 */
#define AIOD_ACCEPT_BACKOFF_MS 100

static void listener_resume(struct tevent_context *ev, struct tevent_timer *te,
			    struct timeval now, void *private_data)
{
	struct aiod_ctx *ctx = private_data;

	(void)ev;
	(void)te;
	(void)now;
	ctx->listen_backoff = NULL;
	TEVENT_FD_READABLE(ctx->listen_fde);
}

static void listener_back_off(struct aiod_ctx *ctx, int err)
{
	AIOD_WARN_RL(&ctx->accept_log, "accept: %s; new clients wait (accepting again every "
		     "%d ms)", strerror(err), AIOD_ACCEPT_BACKOFF_MS);
	if (ctx->listen_backoff != NULL) {
		return;
	}
	ctx->listen_backoff = tevent_add_timer(ctx->ev, ctx,
					       tevent_timeval_current_ofs(0, AIOD_ACCEPT_BACKOFF_MS *
									  1000),
					       listener_resume, ctx);
	if (ctx->listen_backoff != NULL) {
		/* Without the timer nothing would resume it: keep watching then. */
		TEVENT_FD_NOT_READABLE(ctx->listen_fde);
	}
}

static void listener_accept(struct tevent_context *ev, struct tevent_fd *fde, uint16_t flags,
			    void *private_data)
{
	struct aiod_ctx *ctx = private_data;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	bool monitor;
	int sock;

	(void)ev;
	(void)fde;
	(void)flags;
	sock = accept4(ctx->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (sock < 0) {
		/* A client that gave up before we accepted it costs nothing. */
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
			listener_back_off(ctx, errno);
		}
		return;
	}
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0) {
		AIOD_WARN("SO_PEERCRED: %s; dropping connection", strerror(errno));
		close(sock);
		return;
	}
	if (!peer_allowed(ctx->cfg, sock, &cr)) {
		/* A refused client may retry at will: the log must not follow it. */
		AIOD_WARN_RL(&ctx->refuse_log, "refused client pid %d uid %u gid %u: not root and "
			     "not in [global] allow_users/allow_groups", (int)cr.pid,
			     (unsigned)cr.uid, (unsigned)cr.gid);
		close(sock);
		return;
	}
	/*
	 * Sessions exhausted: a few more connections still get in, for
	 * monitoring (STATS) and to tell a CONNECT why it is refused.
	 */
	monitor = ctx->nsessions >= ctx->cfg->max_sessions;
	if (monitor && ctx->nmonitors >= AIOD_MONITOR_SLOTS) {
		AIOD_WARN_RL(&ctx->full_log, "refused client pid %d: [global] max_sessions = %u "
			     "reached and the %d monitor connections taken", (int)cr.pid,
			     ctx->cfg->max_sessions, AIOD_MONITOR_SLOTS);
		close(sock);
		return;
	}
	if (aiod_session_create(ctx, sock, cr.pid, cr.uid, monitor) == NULL) {
		close(sock);
	}
}

/* Make the socket's directory; tighten it when we created it. */
static int make_socket_dir(const struct aiod_config *cfg, char *err, size_t errlen)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool others = cfg->n_allow_uids > 0 || cfg->n_allow_gids > 0;
	mode_t mode = others ? 0711 : 0700;
	struct stat st;
	char *dir;

	snprintf(path, sizeof(path), "%s", cfg->socket_path);
	dir = dirname(path);
	if (stat(dir, &st) != 0) {
		if (errno != ENOENT || mkdir(dir, mode) != 0) {
			snprintf(err, errlen, "socket directory %s: %s", dir, strerror(errno));
			return -errno;
		}
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "socket directory %s is not a directory", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 0022) != 0) {
		AIOD_WARN("socket directory %s is writable by others or not ours: "
			  "a local user could replace the socket", dir);
	}
	return 0;
}

int aiod_listener_start(struct aiod_ctx *ctx, char *err, size_t errlen)
{
	const char *path = ctx->cfg->socket_path;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool others = ctx->cfg->n_allow_uids > 0 || ctx->cfg->n_allow_gids > 0;
	int fd, ret;

	ret = make_socket_dir(ctx->cfg, err, errlen);
	if (ret != 0) {
		return ret;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "[global] socket_path '%s' is too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* A live aiod answers on the path: never steal its socket. */
	fd = rtio_sock_connect(path, 1000);
	if (fd >= 0) {
		close(fd);
		snprintf(err, errlen, "another aiod is already serving %s", path);
		return -EADDRINUSE;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "removing stale socket %s: %s", path, strerror(errno));
		return -errno;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(path, others ? 0666 : 0600) != 0 || listen(fd, 128) != 0) {
		ret = -errno;
		snprintf(err, errlen, "listening on %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	ctx->listen_fd = fd;
	ctx->listen_fde = tevent_add_fd(ctx->ev, ctx, fd, TEVENT_FD_READ, listener_accept, ctx);
	if (ctx->listen_fde == NULL) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		ctx->listen_fd = -1;
		return -ENOMEM;
	}
	ctx->start_ns = aiod_now_ns();
	ctx->start_time = (uint64_t)time(NULL);
	AIOD_NOTICE("listening on %s", path);
	return 0;
}

void aiod_listener_stop(struct aiod_ctx *ctx)
{
	TALLOC_FREE(ctx->listen_backoff);
	TALLOC_FREE(ctx->listen_fde);
	if (ctx->listen_fd >= 0) {
		close(ctx->listen_fd);
		ctx->listen_fd = -1;
		if (unlink(ctx->cfg->socket_path) != 0 && errno != ENOENT) {
			AIOD_WARN("removing %s: %s", ctx->cfg->socket_path, strerror(errno));
		}
	}
}
