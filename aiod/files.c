/*
 * Files and opens. A file is (device, inode): every session that opens it
 * shares its cache blocks. An open is one descriptor a client passed us; all
 * I/O for that client goes through that descriptor, so aiod can never do more
 * than the smbd process (running as the user) could.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aiod.h"
#include "log.h"
#include "files.h"
#include "streams.h"
#include "writeback.h"

static uint32_t file_hash(uint32_t mask, uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ ino;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return (uint32_t)h & mask;
}

int aiod_files_init(struct aiod_ctx *ctx)
{
	ctx->files_mask = 1023;
	ctx->files = talloc_zero_array(ctx, struct aiod_file *, ctx->files_mask + 1);
	if (ctx->files == NULL) {
		return -ENOMEM;
	}
	return aiod_watch_init(ctx);
}

struct aiod_file *aiod_file_find(struct aiod_ctx *ctx, uint64_t dev, uint64_t ino)
{
	for (struct aiod_file *f = ctx->files[file_hash(ctx->files_mask, dev, ino)]; f != NULL;
	     f = f->next) {
		if (f->dev == dev && f->ino == ino) {
			return f;
		}
	}
	return NULL;
}

/*
 * A fixed table made a lookup a list walk once there were many thousands of
 * files: double it when it holds more records than buckets. The records keep
 * their talloc parent (the context), only the bucket array is new.
 */
static void files_grow(struct aiod_ctx *ctx)
{
	uint32_t old_mask = ctx->files_mask, new_mask = 2 * old_mask + 1;
	struct aiod_file **old = ctx->files;
	struct aiod_file **nt = talloc_zero_array(ctx, struct aiod_file *, new_mask + 1);

	if (nt == NULL) {
		return;		/* longer chains, still correct */
	}
	for (uint32_t i = 0; i <= old_mask; i++) {
		while (old[i] != NULL) {
			struct aiod_file *f = old[i];
			uint32_t h = file_hash(new_mask, f->dev, f->ino);

			old[i] = f->next;
			f->next = nt[h];
			nt[h] = f;
		}
	}
	ctx->files = nt;
	ctx->files_mask = new_mask;
	ctx->files_gen++;
	talloc_free(old);
}

struct aiod_file *aiod_file_get(struct aiod_ctx *ctx, uint64_t dev, uint64_t ino)
{
	struct aiod_file *f = aiod_file_find(ctx, dev, ino);
	uint32_t h;

	if (f != NULL) {
		return f;
	}
	f = talloc_zero(ctx, struct aiod_file);
	if (f == NULL) {
		return NULL;
	}
	f->dev = dev;
	f->ino = ino;
	f->wd = -1;
	f->mtime_ns = -1;	/* never seen: nothing cached to validate */
	h = file_hash(ctx->files_mask, dev, ino);
	f->next = ctx->files[h];
	ctx->files[h] = f;
	if (++ctx->nfiles > ctx->files_mask + 1) {
		files_grow(ctx);
	}
	return f;
}

static void file_unlink(struct aiod_ctx *ctx, struct aiod_file *f)
{
	struct aiod_file **pp = &ctx->files[file_hash(ctx->files_mask, f->dev, f->ino)];

	while (*pp != NULL && *pp != f) {
		pp = &(*pp)->next;
	}
	if (*pp == f) {
		*pp = f->next;
		ctx->nfiles--;
	}
	aiod_watch_remove(ctx, f);
	ctx->files_gen++;
	talloc_free(f);
}

static void sweep_mark(void *private_data, uint64_t dev, uint64_t ino)
{
	struct aiod_file *f = aiod_file_find(private_data, dev, ino);

	if (f != NULL) {
		f->has_blocks = true;
	}
}

/*
 * Free the records of files nobody has open and nothing of which is cached
 * (their blocks were evicted since the last close). One pass over the files
 * and one over the blocks; run when closed records outnumber the cache's
 * blocks twice over, so the cost per close stays constant and the records a
 * daemon keeps are bounded by its opens plus about three times its blocks.
 */
static void files_sweep(struct aiod_ctx *ctx)
{
	uint32_t freed = 0;

	for (uint32_t i = 0; i <= ctx->files_mask; i++) {
		for (struct aiod_file *f = ctx->files[i]; f != NULL; f = f->next) {
			f->has_blocks = false;
		}
	}
	aiod_cache_for_each_file(ctx->cache, sweep_mark, ctx);
	for (uint32_t i = 0; i <= ctx->files_mask; i++) {
		struct aiod_file *f = ctx->files[i];

		while (f != NULL) {
			struct aiod_file *next = f->next;

			if (f->opens == 0 && !f->has_blocks) {
				file_unlink(ctx, f);
				freed++;
			}
			f = next;
		}
	}
	AIOD_DEBUG("file sweep: freed %u records, %u left", freed, ctx->nfiles);
}

void aiod_file_put(struct aiod_ctx *ctx, struct aiod_file *f)
{
	if (f->opens == 0) {
		return;
	}
	if (--f->opens > 0) {
		return;
	}
	ctx->nfiles_open--;
	/* Keep the file while it has cached blocks: its watch and stamp guard them. */
	if (ctx->nfiles - ctx->nfiles_open > 2 * ctx->cache->nblocks + 64) {
		files_sweep(ctx);
	}
}

void aiod_file_forget(struct aiod_ctx *ctx, uint64_t dev, uint64_t ino)
{
	struct aiod_file *f = aiod_file_find(ctx, dev, ino);

	(void)aiod_cache_truncate(ctx->cache, dev, ino, 0);
	if (f != NULL && f->opens == 0) {
		file_unlink(ctx, f);
	}
}

uint32_t aiod_file_changed_outside(struct aiod_ctx *ctx, struct aiod_file *f)
{
	uint32_t n = aiod_cache_truncate(ctx->cache, f->dev, f->ino, 0);

	ctx->st.outside_changes++;
	ctx->st.outside_blocks += n;
	/* The blocks are gone: nothing is left for a stamp to vouch for until the next OPEN. */
	f->mtime_ns = -1;
	return n;
}

void aiod_file_unwatched(struct aiod_ctx *ctx, struct aiod_file *f)
{
	if (f->opens == 0) {
		file_unlink(ctx, f);
	}
}

/* The next record after f (bucket: the one after f's), NULL at the end. */
static struct aiod_file *files_next(struct aiod_ctx *ctx, struct aiod_file *f, uint32_t *bucket)
{
	f = f != NULL ? f->next : NULL;
	while (f == NULL && *bucket <= ctx->files_mask) {
		f = ctx->files[(*bucket)++];
	}
	return f;
}

struct aiod_file *aiod_file_at(struct aiod_ctx *ctx, uint32_t index)
{
	uint32_t n = 0, bucket = 0;
	struct aiod_file *f;

	/* A listing asks 0, 1, 2...: go on from the last answer unless a record went since. */
	if (ctx->files_cursor.f != NULL && ctx->files_cursor.gen == ctx->files_gen &&
	    ctx->files_cursor.index <= index) {
		n = ctx->files_cursor.index;
		bucket = ctx->files_cursor.bucket;
		f = ctx->files_cursor.f;
	} else {
		f = files_next(ctx, NULL, &bucket);
	}
	while (f != NULL && n < index) {
		f = files_next(ctx, f, &bucket);
		n++;
	}
	ctx->files_cursor.gen = ctx->files_gen;
	ctx->files_cursor.index = n;
	ctx->files_cursor.bucket = bucket;
	ctx->files_cursor.f = f;
	return f;
}

struct aiod_open *aiod_open_find(const struct aiod_opens *os, uint64_t id)
{
	for (struct aiod_open *o = os->head; o != NULL; o = o->next) {
		if (o->id == id && !o->closing) {
			return o;
		}
	}
	return NULL;
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000ll + ts->tv_nsec;
}

static int open_destructor(struct aiod_open *o)
{
	if (o->fd >= 0) {
		close(o->fd);
	}
	if (o->direct_fd >= 0) {
		close(o->direct_fd);
	}
	return 0;
}

/*
 * [cache] direct_io: a second, O_DIRECT descriptor for reads, so file data is
 * cached once (in the shared region) rather than twice. Reopening through
 * /proc/self/fd keeps the client's access: we ask for read access only, and
 * only when the client's descriptor has it. Writes stay on the client's
 * descriptor; the kernel keeps direct reads coherent with them.
 */
static int open_direct_twin(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
}

bool aiod_opens_has(const struct aiod_opens *os, uint64_t dev, uint64_t ino)
{
	for (struct aiod_open *o = os->head; o != NULL; o = o->next) {
		if (o->file->dev == dev && o->file->ino == ino) {
			return true;
		}
	}
	return false;
}

int aiod_open_add(struct aiod_ctx *ctx, struct aiod_opens *os, int fd, const char *name,
		  uint32_t flags, struct aiod_open **out)
{
	struct aiod_open *o;
	struct aiod_file *f;
	struct stat st;
	int fl, ret;

	*out = NULL;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0) {
		return -errno;
	}
	if ((fl & O_PATH) == O_PATH) {
		return -EBADF;	/* path-only descriptors do no I/O */
	}
	/*
	 * Not O_APPEND: Linux writes such a descriptor at the end of the file
	 * whatever offset pwrite() names, so a write aiod (WRITE1) or smbd
	 * (WROTE) reports at an offset lands elsewhere, and the cache would serve
	 * bytes at offsets the file lacks.
	 */
	if (fl & O_APPEND) {
		return -EINVAL;
	}
	/* Within its share of aiod's descriptors: one smbd must not take them all. */
	if (os->count >= ctx->cfg->max_opens_per_session) {
		return -EMFILE;
	}
	if (fstat(fd, &st) != 0) {
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		return -EINVAL;
	}
	/*
	 * Changes queued before this OPEN first: they drop stale blocks, and an
	 * inode that went away (its number maybe reused by this very file) takes
	 * its record with it before we look the number up.
	 */
	aiod_watch_drain(ctx);
	f = aiod_file_get(ctx, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (f == NULL) {
		return -ENOMEM;
	}
	/* The name of the last OPEN: for stats and the watch's messages. */
	if (f->name == NULL || strcmp(f->name, name) != 0) {
		talloc_free(f->name);
		f->name = talloc_strdup(f, name);
	}
	ret = aiod_watch_add(ctx, f, fd);
	if (ret != 0) {
		/* Unwatched, a file could change unseen: aiod will not cache it at all. */
		if (f->opens == 0) {
			aiod_file_forget(ctx, f->dev, f->ino);
		}
		return ret;
	}
	if (f->mtime_ns >= 0 &&
	    (f->mtime_ns != ts_ns(&st.st_mtim) || f->ctime_ns != ts_ns(&st.st_ctim) ||
	     f->size != (uint64_t)st.st_size)) {
		uint32_t n = aiod_file_changed_outside(ctx, f);

		AIOD_INFO("%s changed without a change notification (a store through mmap, or "
			  "another host): dropped %u cached blocks", name, n);
	} else if (flags & RTIO_OPEN_INVALIDATE) {
		(void)aiod_cache_truncate(ctx->cache, f->dev, f->ino, 0);
	}
	/* What the cached blocks are good for from now on. */
	f->mtime_ns = ts_ns(&st.st_mtim);
	f->ctime_ns = ts_ns(&st.st_ctim);
	f->size = (uint64_t)st.st_size;
	o = talloc_zero(ctx, struct aiod_open);
	if (o == NULL) {
		return -ENOMEM;
	}
	o->fd = fd;
	o->direct_fd = -1;
	o->qos_slot = RTIO_QOS_NO_FLOW;	/* control.c gives it the client's */
	talloc_set_destructor(o, open_destructor);
	o->id = ++os->next_id;
	o->writable = (fl & O_ACCMODE) != O_RDONLY;
	o->readable = (fl & O_ACCMODE) != O_WRONLY;
	if (ctx->cfg->direct_io && o->readable) {
		o->direct_fd = open_direct_twin(fd);
		if (o->direct_fd < 0) {
			AIOD_INFO("%s: no O_DIRECT (%s), reading through the page cache", name,
				  strerror(errno));
		}
	}
	o->file = f;
	o->name = talloc_strdup(o, name);
	if (f->opens++ == 0) {
		ctx->nfiles_open++;
	}
	o->next = os->head;
	os->head = o;
	os->count++;
	aiod_stream_classify(ctx, o);
	/*
	 * A reader plays the class's bitrate, a writer records it (record.c):
	 * either way the device owes it that much. One reservation per open,
	 * whatever its access: smbd opens a file it writes read-write as soon
	 * as the client asked for any read access, attributes included.
	 */
	if (f->sclass != NULL) {
		ret = aiod_admission_admit(ctx, o, f->sclass->bitrate);
		if (ret != 0) {
			o->fd = -1;	/* the caller still owns fd and closes it */
			aiod_open_close(ctx, os, o);	/* also puts the file */
			return ret;
		}
	}
	*out = o;
	return 0;
}

/*
 * No stamp is taken here: a stamp taken at the last close would vouch for
 * blocks cached before a change made while the file was open (the change's
 * notification may still be queued). The stamp of the last OPEN stands.
 */
static void open_free(struct aiod_ctx *ctx, struct aiod_open *o)
{
	struct aiod_file *f = o->file;

	aiod_admission_release(ctx, o);
	talloc_free(o);
	aiod_file_put(ctx, f);
}

void aiod_open_close(struct aiod_ctx *ctx, struct aiod_opens *os, struct aiod_open *o)
{
	struct aiod_open **pp = &os->head;

	while (*pp != NULL && *pp != o) {
		pp = &(*pp)->next;
	}
	if (*pp == o) {
		*pp = o->next;
		os->count--;
	}
	o->next = NULL;
	aiod_writeback_close(ctx, o);	/* may make o busy: its fd stays for the last run */
	/*
	 * A reader that closes is owed nothing more: its reservation goes
	 * now, not when the last of its loads is back (its read-ahead the
	 * device has not begun was dropped just before, aiod_load_close()).
	 * Kept until then, a playback that had stopped held six of eight
	 * reservations when the next one opened, and admission demoted four
	 * of its streams. A recorder keeps its reservation while its last
	 * runs are written back: they are due at its rate.
	 */
	if (o->wb_queued == 0) {
		aiod_admission_release(ctx, o);
	}
	o->closing = true;
	if (o->busy == 0) {
		open_free(ctx, o);
		return;
	}
	/* Engine operations still use o->fd: the last one frees it (aiod_open_idle). */
	(void)talloc_steal(ctx, o);
}

void aiod_open_busy(struct aiod_open *o)
{
	o->busy++;
}

void aiod_open_idle(struct aiod_ctx *ctx, struct aiod_open *o)
{
	if (o->busy > 0) {
		o->busy--;
	}
	if (o->busy == 0 && o->closing) {
		open_free(ctx, o);
	}
}
