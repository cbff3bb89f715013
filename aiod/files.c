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

static uint32_t file_hash(const struct aiod_ctx *ctx, uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ ino;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return (uint32_t)h & ctx->files_mask;
}

int aiod_files_init(struct aiod_ctx *ctx)
{
	ctx->files_mask = 4095;
	ctx->files = talloc_zero_array(ctx, struct aiod_file *, ctx->files_mask + 1);
	return ctx->files != NULL ? 0 : -ENOMEM;
}

struct aiod_file *aiod_file_find(struct aiod_ctx *ctx, uint64_t dev, uint64_t ino)
{
	for (struct aiod_file *f = ctx->files[file_hash(ctx, dev, ino)]; f != NULL; f = f->next) {
		if (f->dev == dev && f->ino == ino) {
			return f;
		}
	}
	return NULL;
}

struct aiod_file *aiod_file_get(struct aiod_ctx *ctx, uint64_t dev, uint64_t ino)
{
	struct aiod_file *f = aiod_file_find(ctx, dev, ino);
	uint32_t h;

	if (f != NULL) {
		return f;
	}
	f = talloc_zero(ctx->files, struct aiod_file);
	if (f == NULL) {
		return NULL;
	}
	f->dev = dev;
	f->ino = ino;
	f->mtime_ns = -1;	/* never seen: nothing cached to validate */
	h = file_hash(ctx, dev, ino);
	f->next = ctx->files[h];
	ctx->files[h] = f;
	ctx->nfiles++;
	return f;
}

static void file_unlink(struct aiod_ctx *ctx, struct aiod_file *f)
{
	struct aiod_file **pp = &ctx->files[file_hash(ctx, f->dev, f->ino)];

	while (*pp != NULL && *pp != f) {
		pp = &(*pp)->next;
	}
	if (*pp == f) {
		*pp = f->next;
		ctx->nfiles--;
	}
	talloc_free(f);
}

/*
 * Last open of f went: remember how the file looked so the next open can tell
 * whether someone changed it behind our back (then its cached blocks go).
 */
void aiod_file_put(struct aiod_ctx *ctx, struct aiod_file *f)
{
	(void)ctx;
	if (f->opens > 0) {
		f->opens--;
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

struct aiod_open *aiod_open_find(struct aiod_session *s, uint64_t id)
{
	for (struct aiod_open *o = *aiod_session_opens(s); o != NULL; o = o->next) {
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

int aiod_open_add(struct aiod_ctx *ctx, struct aiod_session *s, int fd, const char *name,
		  uint32_t flags, struct aiod_open **out)
{
	struct aiod_open *o;
	struct aiod_file *f;
	struct stat st;
	int fl;

	*out = NULL;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0) {
		return -errno;
	}
	if ((fl & O_PATH) == O_PATH) {
		return -EBADF;	/* path-only descriptors do no I/O */
	}
	if (fstat(fd, &st) != 0) {
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		return -EINVAL;
	}
	f = aiod_file_get(ctx, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (f == NULL) {
		return -ENOMEM;
	}
	if (f->opens == 0 && f->mtime_ns >= 0 &&
	    (f->mtime_ns != ts_ns(&st.st_mtim) || f->ctime_ns != ts_ns(&st.st_ctim) ||
	     f->size != (uint64_t)st.st_size)) {
		uint32_t n = aiod_cache_truncate(ctx->cache, f->dev, f->ino, 0);
		AIOD_INFO("%s changed while nobody had it open: dropped %u cached blocks",
			  name, n);
	} else if (flags & RTIO_OPEN_INVALIDATE) {
		(void)aiod_cache_truncate(ctx->cache, f->dev, f->ino, 0);
	}
	o = talloc_zero(s, struct aiod_open);
	if (o == NULL) {
		return -ENOMEM;
	}
	o->fd = fd;
	o->direct_fd = -1;
	talloc_set_destructor(o, open_destructor);
	o->id = aiod_session_next_file_id(s);
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
	f->opens++;
	o->next = *aiod_session_opens(s);
	*aiod_session_opens(s) = o;
	if (f->name == NULL || strcmp(f->name, o->name) != 0) {
		talloc_free(f->name);
		f->name = talloc_strdup(f, o->name);
	}
	aiod_stream_classify(ctx, o);
	if (f->sclass != NULL && o->readable) {
		int ret = aiod_admission_admit(ctx, o, f->sclass->bitrate);
		if (ret != 0) {
			o->fd = -1;	/* the caller still owns fd and closes it */
			aiod_open_close(ctx, s, o);	/* also puts the file */
			return ret;
		}
	}
	*out = o;
	return 0;
}

static void open_free(struct aiod_ctx *ctx, struct aiod_open *o)
{
	struct aiod_file *f = o->file;
	struct stat st;

	if (f->opens == 1 && fstat(o->fd, &st) == 0) {
		f->mtime_ns = ts_ns(&st.st_mtim);
		f->ctime_ns = ts_ns(&st.st_ctim);
		f->size = (uint64_t)st.st_size;
	}
	aiod_admission_release(ctx, o);
	aiod_file_put(ctx, f);
	/* Keep the file while it has cached blocks: its stamp validates them later. */
	talloc_free(o);
}

void aiod_open_close(struct aiod_ctx *ctx, struct aiod_session *s, struct aiod_open *o)
{
	struct aiod_open **pp = aiod_session_opens(s);

	while (*pp != NULL && *pp != o) {
		pp = &(*pp)->next;
	}
	if (*pp == o) {
		*pp = o->next;
	}
	o->next = NULL;
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
