/*
 * A fake of aiod's engine (aiod/engine.h) for unit tests of the request
 * layer: operations wait in a list until the test runs them with
 * fake_engine_run(), which does the I/O with plain pread/pwrite and calls
 * back in EDF order. Linking aiod without engine.c and with this file is
 * also the proof that engine.h is the only door to liburing.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/uio.h>

#include "engine.h"
#include "fake_engine.h"

enum fake_kind { FAKE_READ, FAKE_READV, FAKE_WRITE, FAKE_FSYNC, FAKE_WRITEBACK };

struct fake_op {
	struct fake_op *next;
	enum fake_kind kind;
	int fd;
	uint8_t *buf;
	uint32_t len;
	uint64_t off;
	uint32_t n;			/* READV: blocks */
	bool wait;			/* WRITEBACK */
	bool behind;			/* WRITEBACK: AIOD_WB_BEHIND */
	uint32_t blocks[64];
	uint64_t deadline_ns;
	bool io_done;			/* fake_engine_io_now() did the I/O: result is its result */
	int result;
	aiod_engine_done_fn done;
	void *private_data;
};

struct aiod_engine {
	uint8_t *bufs;
	uint32_t block_size, nblocks;
	struct fake_op *ops;
	struct aiod_engine_stats st;
	int fail_next;			/* 0, or the result of the next operation run */
	aiod_engine_slice_fn slice;	/* aiod_engine_set_slice(): asked by fake_engine_op() */
	void *slice_arg;
	bool wb_behind_on;		/* aiod_engine_set_writeback_behind() */
};

void aiod_engine_set_costs(struct aiod_engine *e, uint64_t request_ns, uint64_t media_Bps)
{
	(void)e;
	(void)request_ns;
	(void)media_Bps;	/* the fake serves in the order a test asks for */
}

struct aiod_engine *aiod_engine_create(TALLOC_CTX *mem_ctx, struct tevent_context *ev,
				       uint32_t queue_depth, uint8_t *bufs, uint32_t block_size,
				       uint32_t nblocks, char *err, size_t errlen)
{
	struct aiod_engine *e = talloc_zero(mem_ctx, struct aiod_engine);

	(void)ev;
	(void)queue_depth;
	(void)err;
	(void)errlen;
	if (e != NULL) {
		e->bufs = bufs;
		e->block_size = block_size;
		e->nblocks = nblocks;
		e->wb_behind_on = true;
	}
	return e;
}

bool fake_engine_writeback_behind(const struct aiod_engine *e)
{
	return e->wb_behind_on;
}

static int fake_push(struct aiod_engine *e, struct fake_op *op, uint64_t deadline_ns,
		     aiod_engine_done_fn done, void *private_data)
{
	op->deadline_ns = deadline_ns;
	op->done = done;
	op->private_data = private_data;
	op->next = e->ops;
	e->ops = op;
	e->st.queued++;
	return 0;
}

static struct fake_op *fake_new(struct aiod_engine *e, enum fake_kind kind, int fd, uint64_t off)
{
	struct fake_op *op = talloc_zero(e, struct fake_op);

	if (op != NULL) {
		op->kind = kind;
		op->fd = fd;
		op->off = off;
	}
	return op;
}

static int fake_flat(struct aiod_engine *e, enum fake_kind kind, int fd, uint32_t block,
		     uint32_t buf_off, uint32_t len, uint64_t off, uint64_t deadline_ns,
		     aiod_engine_done_fn done, void *private_data)
{
	struct fake_op *op;

	if (block >= e->nblocks || buf_off + len > e->block_size) {
		return -EINVAL;
	}
	op = fake_new(e, kind, fd, off);
	if (op == NULL) {
		return -ENOMEM;
	}
	op->buf = e->bufs + (uint64_t)block * e->block_size + buf_off;
	op->len = len;
	return fake_push(e, op, deadline_ns, done, private_data);
}

int aiod_engine_read(struct aiod_engine *e, int fd, uint32_t block, uint32_t buf_off, uint32_t len,
		     uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data)
{
	return fake_flat(e, FAKE_READ, fd, block, buf_off, len, off, deadline_ns, done,
			 private_data);
}

int aiod_engine_write(struct aiod_engine *e, int fd, uint32_t block, uint32_t buf_off, uint32_t len,
		      uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data)
{
	return fake_flat(e, FAKE_WRITE, fd, block, buf_off, len, off, deadline_ns, done,
			 private_data);
}

int aiod_engine_readv(struct aiod_engine *e, int fd, const uint32_t *blocks, uint32_t n,
		      uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data)
{
	struct fake_op *op;

	if (n == 0 || n > 64) {
		return -EINVAL;
	}
	op = fake_new(e, FAKE_READV, fd, off);
	if (op == NULL) {
		return -ENOMEM;
	}
	op->n = n;
	for (uint32_t i = 0; i < n; i++) {
		if (blocks[i] >= e->nblocks) {
			talloc_free(op);
			return -EINVAL;
		}
		op->blocks[i] = blocks[i];
	}
	return fake_push(e, op, deadline_ns, done, private_data);
}

int aiod_engine_fsync(struct aiod_engine *e, int fd, bool datasync, uint64_t deadline_ns,
		      aiod_engine_done_fn done, void *private_data)
{
	struct fake_op *op = fake_new(e, FAKE_FSYNC, fd, 0);

	(void)datasync;
	return op == NULL ? -ENOMEM : fake_push(e, op, deadline_ns, done, private_data);
}

int aiod_engine_writeback(struct aiod_engine *e, int fd, uint64_t off, uint32_t len,
			  unsigned flags, uint64_t deadline_ns, aiod_engine_done_fn done,
			  void *private_data)
{
	struct fake_op *op = fake_new(e, FAKE_WRITEBACK, fd, off);

	if (op == NULL) {
		return -ENOMEM;
	}
	op->len = len;
	op->wait = (flags & AIOD_WB_WAIT) != 0;
	op->behind = (flags & AIOD_WB_BEHIND) != 0;
	return fake_push(e, op, deadline_ns, done, private_data);
}

void aiod_engine_set_writeback_behind(struct aiod_engine *e, bool on)
{
	e->wb_behind_on = on;
}

bool aiod_engine_expedite(struct aiod_engine *e, aiod_engine_match_fn match, void *arg,
			  uint64_t deadline_ns)
{
	bool matched = false;

	for (struct fake_op *op = e->ops; op != NULL; op = op->next) {
		if (match(arg, op->done, op->private_data)) {
			matched = true;
			if (deadline_ns < op->deadline_ns) {
				op->deadline_ns = deadline_ns;
				e->st.expedited++;
			}
		}
	}
	return matched;
}

/* The fake runs every operation whole; fake_engine_op() says what the owner would cut. */
void aiod_engine_set_slice(struct aiod_engine *e, aiod_engine_slice_fn fn, void *arg)
{
	e->slice = fn;
	e->slice_arg = arg;
}

/* The fake serves operations in arrival order: there is no deadline order to restore. */
void aiod_engine_set_rekey(struct aiod_engine *e, aiod_engine_rekey_fn fn, void *arg)
{
	(void)e;
	(void)fn;
	(void)arg;
}

void aiod_engine_rekey(struct aiod_engine *e, uint64_t old_round_ns, uint64_t new_round_ns)
{
	(void)e;
	(void)old_round_ns;
	(void)new_round_ns;
}

unsigned aiod_engine_cancel(struct aiod_engine *e, aiod_engine_done_fn done,
			    bool (*match)(void *private_data, void *arg), void *arg)
{
	struct fake_op **pp = &e->ops;
	unsigned n = 0;

	while (*pp != NULL) {
		struct fake_op *op = *pp;

		if (op->done == done && match(op->private_data, arg)) {
			*pp = op->next;
			e->st.queued--;
			op->done(op->private_data, -ECANCELED);
			talloc_free(op);
			n++;
		} else {
			pp = &op->next;
		}
	}
	return n;
}

void aiod_engine_get_stats(const struct aiod_engine *e, struct aiod_engine_stats *out)
{
	*out = e->st;
}

static int fake_do(struct aiod_engine *e, const struct fake_op *op)
{
	ssize_t n = 0;

	switch (op->kind) {
	case FAKE_READ:
		n = pread(op->fd, op->buf, op->len, (off_t)op->off);
		break;
	case FAKE_WRITE:
		n = pwrite(op->fd, op->buf, op->len, (off_t)op->off);
		break;
	case FAKE_READV: {
		struct iovec iov[64];

		for (uint32_t i = 0; i < op->n; i++) {
			iov[i].iov_base = e->bufs + (uint64_t)op->blocks[i] * e->block_size;
			iov[i].iov_len = e->block_size;
		}
		n = preadv(op->fd, iov, (int)op->n, (off_t)op->off);
		break;
	}
	case FAKE_FSYNC:
		n = fsync(op->fd);
		break;
	case FAKE_WRITEBACK:
		/* The real call: a descriptor that cannot take it fails the test's checks. */
		n = sync_file_range(op->fd, (off_t)op->off, op->len,
				    op->wait ? SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
						SYNC_FILE_RANGE_WAIT_AFTER
					     : SYNC_FILE_RANGE_WRITE);
		break;
	}
	return n < 0 ? -errno : (int)n;
}

unsigned fake_engine_pending(const struct aiod_engine *e)
{
	unsigned n = 0;

	for (const struct fake_op *op = e->ops; op != NULL; op = op->next) {
		n++;
	}
	return n;
}

uint64_t fake_engine_first_deadline(const struct aiod_engine *e)
{
	uint64_t best = UINT64_MAX;

	for (const struct fake_op *op = e->ops; op != NULL; op = op->next) {
		if (op->deadline_ns < best) {
			best = op->deadline_ns;
		}
	}
	return best;
}

/* The queued operations in device order: earliest deadline, then arrival (the list is newest first). */
static unsigned fake_order(const struct aiod_engine *e, struct fake_op **out, unsigned max)
{
	unsigned n = 0;

	for (struct fake_op *op = e->ops; op != NULL && n < max; op = op->next) {
		out[n++] = op;
	}
	for (unsigned i = 0; i < n / 2; i++) {	/* arrival order */
		struct fake_op *t = out[i];

		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	for (unsigned i = 1; i < n; i++) {	/* stable insertion sort on the deadline */
		struct fake_op *t = out[i];
		unsigned j = i;

		while (j > 0 && out[j - 1]->deadline_ns > t->deadline_ns) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = t;
	}
	return n;
}

bool fake_engine_op(const struct aiod_engine *e, unsigned i, struct fake_engine_op_info *out)
{
	struct fake_op *ord[512];
	unsigned n = fake_order(e, ord, 512);

	if (i >= n) {
		return false;
	}
	out->fd = ord[i]->fd;
	out->off = ord[i]->off;
	out->len = ord[i]->kind == FAKE_READV ? (uint64_t)ord[i]->n * e->block_size : ord[i]->len;
	out->deadline_ns = ord[i]->deadline_ns;
	out->done = ord[i]->done;
	out->private_data = ord[i]->private_data;
	out->behind = false;
	out->piece = e->slice == NULL ? 0 : e->slice(e->slice_arg, ord[i]->done, ord[i]->private_data,
						     &out->behind);
	return true;
}

bool fake_engine_io_now(struct aiod_engine *e, unsigned i)
{
	struct fake_op *ord[512];
	unsigned n = fake_order(e, ord, 512);

	if (i >= n) {
		return false;
	}
	ord[i]->result = fake_do(e, ord[i]);
	ord[i]->io_done = true;
	return true;
}

bool fake_engine_run_one(struct aiod_engine *e)
{
	struct fake_op *ord[512], **pp;

	if (fake_order(e, ord, 512) == 0) {
		return false;
	}
	for (pp = &e->ops; *pp != ord[0]; pp = &(*pp)->next) {
	}
	*pp = ord[0]->next;
	e->st.queued--;
	e->st.completed++;
	if (e->fail_next != 0) {
		int result = e->fail_next;

		e->fail_next = 0;
		ord[0]->done(ord[0]->private_data, result);
	} else if (ord[0]->io_done) {
		ord[0]->done(ord[0]->private_data, ord[0]->result);
	} else {
		ord[0]->done(ord[0]->private_data, fake_do(e, ord[0]));
	}
	talloc_free(ord[0]);
	return true;
}

unsigned fake_engine_run(struct aiod_engine *e)
{
	unsigned ran = 0;

	/* Earliest deadline first, as the real engine hands them to the device. */
	while (fake_engine_run_one(e)) {
		ran++;
	}
	return ran;
}

unsigned fake_engine_writebacks(const struct aiod_engine *e, struct fake_writeback *out,
				unsigned max)
{
	unsigned n = 0;

	for (const struct fake_op *op = e->ops; op != NULL; op = op->next) {
		if (op->kind != FAKE_WRITEBACK) {
			continue;
		}
		if (n < max) {
			out[n] = (struct fake_writeback){ .fd = op->fd, .off = op->off, .len = op->len,
							  .wait = op->wait,
							  .behind = op->behind,
							  .deadline_ns = op->deadline_ns };
		}
		n++;
	}
	/* By offset (a handful of entries: insertion sort). */
	for (unsigned i = 1; i < n && i < max; i++) {
		for (unsigned j = i; j > 0 && out[j - 1].off > out[j].off; j--) {
			struct fake_writeback t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	}
	return n;
}

void fake_engine_fail_next(struct aiod_engine *e, int result)
{
	e->fail_next = result;
}
