/*
 * Coherence with every writer on the machine. aiod's cache must never serve
 * bytes the file no longer holds, whoever changed it: an smbd that fell back
 * to local I/O (aiod stalled, or no session could be had), a local process,
 * the kernel NFS server. Writers that talk to aiod report their ranges
 * (WROTE); the others cannot, so aiod asks the kernel: every file it knows
 * carries an inotify watch, and a change to it drops the file's cached blocks.
 *
 * Why inotify: it needs no privilege (fanotify's filesystem marks need
 * CAP_SYS_ADMIN, which a hardened aiod should not hold), it reaches every
 * write(2)-family change on a local filesystem -- write, pwrite, truncate,
 * fallocate, copy_file_range, splice, nfsd's writes -- and it is queued by the
 * writer's own syscall before that syscall returns. What it cannot see are
 * stores through a shared mapping and changes made on another host of a
 * network filesystem; for those, files.c compares the file's mtime, ctime and
 * size at every OPEN against the stamp taken when its blocks were last known
 * good.
 *
 * Ordering: the event is queued before the writer's write returns, so a read
 * that anybody sends after that write finds the event queued. aiod_watch_drain()
 * runs before a read is answered, after its message was received, so no read
 * is ever answered from blocks a finished write made stale.
 *
 * An event says "this file changed", not where: the whole file's blocks go.
 * Writers that report their ranges pay that too (their own writes raise the
 * same event); correctness first, the cost is a re-read of a file being
 * written while it is read.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "aiod.h"
#include "log.h"
#include "files.h"
#include "rtio_shm.h"

/*
 * What makes cached bytes wrong: a content change (IN_MODIFY: write,
 * truncate, fallocate, copy_file_range), or the inode going away, after which
 * its number may name another file (IN_DELETE_SELF; IN_IGNORED always comes).
 */
#define WATCH_MASK (IN_MODIFY | IN_DELETE_SELF)

struct aiod_watch {
	int fd;
	struct tevent_fd *fde;
	struct aiod_file **by_wd;	/* hash on the watch descriptor */
	uint32_t mask;
	uint32_t count;
	uint64_t full_warned_ns;
};

static uint32_t wd_hash(const struct aiod_watch *w, int wd)
{
	return ((uint32_t)wd * 2654435761u) & w->mask;
}

static struct aiod_file *watch_lookup(struct aiod_watch *w, int wd)
{
	for (struct aiod_file *f = w->by_wd[wd_hash(w, wd)]; f != NULL; f = f->wnext) {
		if (f->wd == wd) {
			return f;
		}
	}
	return NULL;
}

static void watch_unhash(struct aiod_watch *w, struct aiod_file *f)
{
	struct aiod_file **pp = &w->by_wd[wd_hash(w, f->wd)];

	while (*pp != NULL && *pp != f) {
		pp = &(*pp)->wnext;
	}
	if (*pp == f) {
		*pp = f->wnext;
		w->count--;
	}
	f->wnext = NULL;
	f->wd = -1;
}

/* Keep chains short: double the table when it holds more watches than buckets. */
static void watch_grow(struct aiod_watch *w)
{
	uint32_t old_mask = w->mask;
	struct aiod_file **old = w->by_wd;
	struct aiod_file **nt = talloc_zero_array(w, struct aiod_file *, 2 * (old_mask + 1));

	if (nt == NULL) {
		return;		/* longer chains, still correct */
	}
	w->by_wd = nt;
	w->mask = 2 * old_mask + 1;
	for (uint32_t i = 0; i <= old_mask; i++) {
		while (old[i] != NULL) {
			struct aiod_file *f = old[i];
			uint32_t h = wd_hash(w, f->wd);

			old[i] = f->wnext;
			f->wnext = nt[h];
			nt[h] = f;
		}
	}
	talloc_free(old);
}

/* f changed behind aiod's back: none of its cached bytes can be trusted. */
static void watch_changed(struct aiod_ctx *ctx, struct aiod_file *f, uint32_t mask)
{
	uint32_t n = aiod_file_changed_outside(ctx, f);

	if (n > 0) {
		AIOD_DEBUG("%s changed (inotify 0x%x): dropped %u cached blocks",
			   f->name != NULL ? f->name : "(file)", mask, n);
	}
}

static void watch_event(struct aiod_ctx *ctx, const struct inotify_event *ev)
{
	struct aiod_watch *w = ctx->watch;
	struct aiod_file *f;

	if (ev->mask & IN_Q_OVERFLOW) {
		/* Events were lost: any file may have changed. */
		uint32_t n = aiod_cache_drop_all(ctx->cache);

		ctx->st.outside_changes++;
		ctx->st.outside_blocks += n;
		AIOD_WARN("inotify queue overflowed (fs.inotify.max_queued_events): "
			  "dropped the whole cache (%u blocks)", n);
		return;
	}
	f = watch_lookup(w, ev->wd);
	if (f == NULL) {
		return;		/* a file forgotten while its event was queued */
	}
	watch_changed(ctx, f, ev->mask);
	if (ev->mask & IN_IGNORED) {
		/* The kernel removed the watch (inode gone, filesystem unmounted). */
		watch_unhash(w, f);
		aiod_file_unwatched(ctx, f);
	}
}

/* The region's watch_seq (rtio_shm.h) moves on by one: odd while draining. */
static void watch_seq_bump(struct aiod_ctx *ctx)
{
	struct rtio_shm_header *h = (struct rtio_shm_header *)ctx->region.base;

	if (h != NULL) {
		__atomic_fetch_add(&h->watch_seq, 1, __ATOMIC_SEQ_CST);
	}
}

int aiod_watch_fd(const struct aiod_ctx *ctx)
{
	return ctx->watch != NULL ? ctx->watch->fd : -1;
}

void aiod_watch_drain(struct aiod_ctx *ctx)
{
	struct aiod_watch *w = ctx->watch;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	if (w == NULL) {
		return;
	}
	watch_seq_bump(ctx);	/* odd: clients copying from the cache ask aiod instead */
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno != EAGAIN) {
				AIOD_WARN("reading inotify events: %s", strerror(errno));
			}
			watch_seq_bump(ctx);	/* even: what was read is applied */
			return;
		}
		for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *ev = (const void *)(buf + off);

			watch_event(ctx, ev);
			off += (ssize_t)sizeof(*ev) + ev->len;
		}
	}
}

static void watch_ready(struct tevent_context *ev, struct tevent_fd *fde, uint16_t flags,
			void *private_data)
{
	(void)ev;
	(void)fde;
	(void)flags;
	aiod_watch_drain(private_data);
}

static int watch_destructor(struct aiod_watch *w)
{
	TALLOC_FREE(w->fde);
	if (w->fd >= 0) {
		close(w->fd);
	}
	return 0;
}

int aiod_watch_init(struct aiod_ctx *ctx)
{
	struct aiod_watch *w = talloc_zero(ctx, struct aiod_watch);

	if (w == NULL) {
		return -ENOMEM;
	}
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		int ret = -errno;
		AIOD_ERR("inotify_init1: %s: aiod cannot see writers that bypass it, so it will "
			 "not cache (raise fs.inotify.max_user_instances)", strerror(errno));
		talloc_free(w);
		return ret;
	}
	talloc_set_destructor(w, watch_destructor);
	w->mask = 1023;
	w->by_wd = talloc_zero_array(w, struct aiod_file *, w->mask + 1);
	w->fde = tevent_add_fd(ctx->ev, w, w->fd, TEVENT_FD_READ, watch_ready, ctx);
	if (w->by_wd == NULL || w->fde == NULL) {
		talloc_free(w);
		return -ENOMEM;
	}
	ctx->watch = w;
	return 0;
}

int aiod_watch_add(struct aiod_ctx *ctx, struct aiod_file *f, int fd)
{
	struct aiod_watch *w = ctx->watch;
	char path[64];
	uint32_t h;
	int wd;

	/*
	 * Asked every OPEN, not only the first: the kernel answers with the watch
	 * this inode already has, and a different answer means the record's
	 * watch belonged to an earlier inode of the same number (events lost).
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(w->fd, path, WATCH_MASK);
	if (wd < 0) {
		int ret = -errno;
		uint64_t now = aiod_now_ns();

		/* One line a minute: every OPEN of an unwatchable file would say it again. */
		if (now - w->full_warned_ns > 60000000000ull || w->full_warned_ns == 0) {
			w->full_warned_ns = now;
			AIOD_WARN("cannot watch %s for outside changes (%s%s): its I/O stays in smbd",
				  f->name != NULL ? f->name : "a file", strerror(errno),
				  errno == ENOSPC ? "; raise fs.inotify.max_user_watches" : "");
		}
		return ret;
	}
	if (wd == f->wd) {
		return 0;
	}
	if (f->wd >= 0) {
		aiod_watch_remove(ctx, f);
		(void)aiod_cache_truncate(ctx->cache, f->dev, f->ino, 0);
	}
	if (watch_lookup(w, wd) != NULL) {
		/* Another record holds this inode's watch (cannot happen: one record per inode). */
		return -EEXIST;
	}
	f->wd = wd;
	h = wd_hash(w, wd);
	f->wnext = w->by_wd[h];
	w->by_wd[h] = f;
	if (++w->count > w->mask) {
		watch_grow(w);
	}
	return 0;
}

void aiod_watch_remove(struct aiod_ctx *ctx, struct aiod_file *f)
{
	struct aiod_watch *w = ctx->watch;
	int wd = f->wd;

	if (w == NULL || wd < 0) {
		return;
	}
	watch_unhash(w, f);
	/* EINVAL: the kernel already dropped it (IN_IGNORED still queued). */
	(void)inotify_rm_watch(w->fd, wd);
}

uint32_t aiod_watch_count(const struct aiod_ctx *ctx)
{
	return ctx->watch != NULL ? ctx->watch->count : 0;
}
