/*
 * fio external ioengine that drives aiod through the rtio client library,
 * the same library vfs_rtio uses, so fio measures the path smbd takes.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   fio --ioengine=external:build/fio/rtio_engine.so --rtio_socket=/run/aiod/aiod.sock ...
 *
 * One rtio session per fio job (thread or process), connected in init. Every
 * file fio opens is handed to aiod by descriptor (rtio_client_open). queue()
 * starts the operation at once and returns FIO_Q_QUEUED; getevents() waits on
 * the session's descriptors and lets rtio_client_process() run the completion
 * callbacks, which is the only place they can run (see rtio_client.h).
 *
 * Depth: the library keeps requests beyond the session's in-flight limit
 * (aiod's max_inflight, at most fs.mqueue.msg_max without CAP_SYS_RESOURCE)
 * in a local queue, so any iodepth works; the excess waits client-side and
 * that wait is part of fio's completion latency, as it would be in smbd.
 *
 * Reads: rtio_route=module (the default) routes each read as vfs_rtio does
 * with its defaults (rtio:hits = local, rtio:random = local; see
 * vfs_rtio_read_route()): what aiod's cache holds whole is copied here
 * without a round trip; a random read of a large file, while aiod says
 * nothing is owed a rate, and a read the page cache holds whole, are the
 * engine's own (a private io_uring on fio's descriptor, where smbd would use
 * its thread pool); the rest goes to aiod. That is the cost a client of the
 * share sees, the library's advice included, and so the default: a plain
 * fio command line measures what rtio does for a reader. rtio_route=aiod
 * sends every read to aiod, which measures aiod itself (bench/fio/run.sh).
 *
 * Built against fio's headers with a config-host.h from fio's own configure
 * (bench/fio/build.sh or fio.mk). The fields used here (thread_data, io_u up
 * to its engine union, fio_file) do not depend on configure results, so the
 * engine loads into Debian's fio binary.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <liburing.h>
#include <talloc.h>

#include "fio.h"
#include "optgroup.h"

#include "rtio_client.h"

#define RTIO_FIO_NAME          "rtio"
#define RTIO_FIO_DEFAULT_SOCK  "/run/aiod/aiod.sock"
#define RTIO_FIO_DEFAULT_TMO   10000

struct rtio_fio_options {
	void *pad;		/* fio: an option at offset 0 is taken as "unset" */
	char *socket;
	unsigned int timeout_ms;
	unsigned int invalidate;
	unsigned int route_module;
};

static struct fio_option rtio_fio_opts[] = {
	{
		.name	= "rtio_socket",
		.lname	= "aiod control socket",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct rtio_fio_options, socket),
		.help	= "aiod control socket (default: $RTIO_SOCKET, then "
			  RTIO_FIO_DEFAULT_SOCK ")",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "rtio_timeout_ms",
		.lname	= "aiod timeout",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct rtio_fio_options, timeout_ms),
		.def	= "10000",
		.minval	= 1,
		.help	= "Give up on aiod after this long without any completion",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "rtio_invalidate",
		.lname	= "drop aiod's cached blocks at open",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct rtio_fio_options, invalidate),
		.def	= "0",
		.help	= "Open files with RTIO_OPEN_INVALIDATE (fio wrote them behind aiod's back)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "rtio_route",
		.lname	= "who serves a read",
		.type	= FIO_OPT_STR,
		.off1	= offsetof(struct rtio_fio_options, route_module),
		.def	= "module",
		.help	= "aiod: every read through aiod; module: route reads as vfs_rtio does",
		.posval	= {
			{ .ival = "aiod", .oval = 0, .help = "every read is a round trip to aiod" },
			{ .ival = "module", .oval = 1,
			  .help = "cache hits copied here, random misses and page-cache hits read here" },
		},
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= NULL,
	},
};

struct rtio_fio_data {
	struct rtio_client *c;
	int timeout_ms;
	/*
	 * Completed io_us not yet handed to fio, a ring. Only io_us in flight
	 * can be here, so iodepth entries suffice; it grows if fio ever has more.
	 */
	struct io_u **done;
	unsigned done_cap, done_head, done_count;
	/* What the last getevents() returned, for event(). */
	struct io_u **events;
	/* rtio_route=module: the engine's own reads, and how many are in flight. */
	bool route_module;
	bool ring_ready;
	struct io_uring ring;
	unsigned local_inflight;	/* prepared or in the kernel, not yet reaped */
	unsigned local_unsubmitted;	/* prepared, not yet submitted */
};

struct rtio_fio_file {
	struct rtio_file info;	/* what aiod knows the file as */
	struct rtio_read_pos pos;	/* where the reader is: random or not */
};

/* Double the completion ring, keeping its order. */
static int rtio_fio_grow(struct rtio_fio_data *d)
{
	unsigned cap = d->done_cap * 2;
	struct io_u **done = talloc_zero_array(d, struct io_u *, cap);
	struct io_u **events = talloc_realloc(d, d->events, struct io_u *, cap);

	if (done == NULL || events == NULL) {
		talloc_free(done);
		if (events != NULL) {
			d->events = events;
		}
		return -ENOMEM;
	}
	for (unsigned i = 0; i < d->done_count; i++) {
		done[i] = d->done[(d->done_head + i) % d->done_cap];
	}
	talloc_free(d->done);
	d->done = done;
	d->events = events;
	d->done_head = 0;
	d->done_cap = cap;
	return 0;
}

static void rtio_fio_done(ssize_t result, void *private_data)
{
	struct io_u *io_u = private_data;
	struct rtio_fio_data *d = io_u->engine_data;

	if (result < 0) {
		io_u->error = (unsigned int)-result;
	} else if ((unsigned long long)result < io_u->xfer_buflen) {
		io_u->resid = io_u->xfer_buflen - (unsigned long long)result;
	}
	if (d->done_count == d->done_cap && rtio_fio_grow(d) != 0) {
		/* Cannot happen within fio's iodepth; losing the io_u would hang fio. */
		log_err("%s: out of memory for completions\n", RTIO_FIO_NAME);
		abort();
	}
	d->done[(d->done_head + d->done_count) % d->done_cap] = io_u;
	d->done_count++;
}

static const char *rtio_fio_socket(const struct rtio_fio_options *o)
{
	const char *env = getenv("RTIO_SOCKET");

	if (o->socket != NULL && o->socket[0] != '\0') {
		return o->socket;
	}
	return env != NULL && env[0] != '\0' ? env : RTIO_FIO_DEFAULT_SOCK;
}

static int rtio_fio_init(struct thread_data *td)
{
	struct rtio_fio_options *o = td->eo;
	struct rtio_fio_data *d;
	const char *sock = rtio_fio_socket(o);
	int ret;

	d = talloc_zero(NULL, struct rtio_fio_data);
	if (d == NULL) {
		return 1;
	}
	d->timeout_ms = o->timeout_ms > 0 ? (int)o->timeout_ms : RTIO_FIO_DEFAULT_TMO;
	d->done_cap = td->o.iodepth > 0 ? td->o.iodepth : 1;
	d->done = talloc_zero_array(d, struct io_u *, d->done_cap);
	d->events = talloc_zero_array(d, struct io_u *, d->done_cap);
	if (d->done == NULL || d->events == NULL) {
		talloc_free(d);
		return 1;
	}
	ret = rtio_client_connect(d, sock, "fio", d->timeout_ms, &d->c);
	if (ret < 0) {
		log_err("%s: connecting to aiod at %s: %s\n", RTIO_FIO_NAME, sock, strerror(-ret));
		talloc_free(d);
		return 1;
	}
	d->route_module = o->route_module != 0;
	if (d->route_module) {
		ret = io_uring_queue_init(d->done_cap, &d->ring, 0);
		if (ret < 0) {
			log_err("%s: rtio_route=module needs an io_uring of %u entries: %s\n",
				RTIO_FIO_NAME, d->done_cap, strerror(-ret));
			talloc_free(d);
			return 1;
		}
		d->ring_ready = true;
	}
	td->io_ops_data = d;
	return 0;
}

static void rtio_fio_cleanup(struct thread_data *td)
{
	struct rtio_fio_data *d = td->io_ops_data;

	if (d != NULL && d->ring_ready) {
		/* fio reaped every io_u: nothing of ours is in flight. */
		io_uring_queue_exit(&d->ring);
		d->ring_ready = false;
	}
	if (d != NULL) {
		/* aiod counts the reads made here (aiodctl stats); best effort. */
		(void)rtio_client_report_local_reads(d->c);
	}
	/* Closes the session: aiod releases whatever it still holds for us. */
	talloc_free(d);
	td->io_ops_data = NULL;
}

/* Open failed half way: the descriptor goes, the first error is what fio reports. */
static void rtio_fio_undo_open(struct thread_data *td, struct fio_file *f)
{
	if (generic_close_file(td, f) != 0) {
		log_err("%s: closing %s after a failed open failed too\n", RTIO_FIO_NAME,
			f->file_name);
	}
}

static int rtio_fio_open_file(struct thread_data *td, struct fio_file *f)
{
	struct rtio_fio_data *d = td->io_ops_data;
	struct rtio_fio_options *o = td->eo;
	struct rtio_fio_file *rf;
	struct rtio_file info;
	const char *base;
	uint32_t flags = 0;
	int ret;

	ret = generic_open_file(td, f);
	if (ret != 0) {
		return ret;
	}
	rf = talloc_zero(d, struct rtio_fio_file);
	if (rf == NULL) {
		rtio_fio_undo_open(td, f);
		td_verror(td, ENOMEM, "rtio open");
		return 1;
	}
	if (td_write(td)) {
		flags |= RTIO_OPEN_WRITABLE;
	}
	if (o->invalidate) {
		flags |= RTIO_OPEN_INVALIDATE;
	}
	/* aiod matches stream classes on the name: give it what a share would. */
	base = strrchr(f->file_name, '/');
	base = base != NULL ? base + 1 : f->file_name;
	ret = rtio_client_open(d->c, f->fd, base, flags, &info);
	if (ret < 0) {
		log_err("%s: aiod refused %s: %s\n", RTIO_FIO_NAME, f->file_name, strerror(-ret));
		talloc_free(rf);
		rtio_fio_undo_open(td, f);
		td_verror(td, -ret, "rtio_client_open");
		return 1;
	}
	rf->info = info;
	FILE_SET_ENG_DATA(f, rf);
	return 0;
}

static int rtio_fio_close_file(struct thread_data *td, struct fio_file *f)
{
	struct rtio_fio_data *d = td->io_ops_data;
	struct rtio_fio_file *rf = FILE_ENG_DATA(f);

	if (rf != NULL) {
		/* fio closes only files without I/O in flight. */
		int ret = d != NULL ? rtio_client_close(d->c, rf->info.file_id) : 0;

		if (ret < 0 && ret != -ENOTCONN) {
			log_err("%s: closing %s in aiod: %s\n", RTIO_FIO_NAME, f->file_name,
				strerror(-ret));
		}
		talloc_free(rf);
		FILE_SET_ENG_DATA(f, NULL);
	}
	return generic_close_file(td, f);
}

/*
 * Hand the engine's prepared reads to the kernel. getevents() does it before
 * it waits, so a batch fio queued goes in one system call, as fio's own
 * io_uring engine submits in commit(): the comparison with it then measures
 * the routing, not how often each engine enters the kernel. (fio stamps a
 * read's issue time when queue() returns, before this: its latency here
 * includes the wait for the batch, never less than the kernel took.)
 */
static int rtio_fio_submit_local(struct rtio_fio_data *d)
{
	while (d->local_unsubmitted > 0) {
		int ret = io_uring_submit(&d->ring);

		if (ret < 0) {
			return ret;
		}
		d->local_unsubmitted -= (unsigned)ret < d->local_unsubmitted ? (unsigned)ret
									  : d->local_unsubmitted;
	}
	return 0;
}

/* A read the engine makes itself (rtio_route=module), on fio's descriptor. */
static int rtio_fio_local_read(struct rtio_fio_data *d, struct io_u *io_u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);

	if (sqe == NULL) {
		/* the ring holds iodepth entries: only when fio queues more */
		int ret = rtio_fio_submit_local(d);

		if (ret < 0) {
			return ret;
		}
		sqe = io_uring_get_sqe(&d->ring);
		if (sqe == NULL) {
			return -EBUSY;
		}
	}
	io_uring_prep_read(sqe, io_u->file->fd, io_u->xfer_buf, (unsigned)io_u->xfer_buflen,
			   io_u->offset);
	io_uring_sqe_set_data(sqe, io_u);
	d->local_inflight++;
	d->local_unsubmitted++;
	return 0;
}

/*
 * rtio_route=module: vfs_rtio_read_route() with the module's defaults.
 * FIO_Q_COMPLETED for a hit copied here, FIO_Q_QUEUED for a read of the
 * engine's own, FIO_Q_BUSY when aiod is to serve it.
 */
static enum fio_q_status rtio_fio_route_read(struct rtio_fio_data *d, struct rtio_fio_file *rf,
					     struct io_u *io_u)
{
	size_t n = io_u->xfer_buflen;
	off_t off = (off_t)io_u->offset;
	bool continues = rtio_client_read_continues(d->c, &rf->pos, off, n);
	int ret;

	if (rtio_client_read_cached(d->c, &rf->info, io_u->xfer_buf, n, off) == (ssize_t)n) {
		return FIO_Q_COMPLETED;
	}
	if (!rtio_client_read_yourself(d->c, &rf->info, io_u->file->real_file_size, continues,
				       off, n) &&
	    (rf->info.stream_class != 0 ||
	     rtio_page_cached(io_u->file->fd, io_u->offset, n) != 1)) {
		return FIO_Q_BUSY;
	}
	ret = rtio_fio_local_read(d, io_u);
	if (ret < 0) {
		io_u->error = (unsigned int)-ret;
		return FIO_Q_COMPLETED;
	}
	return FIO_Q_QUEUED;
}

/* Completions of the engine's own reads, into the completion ring. */
static void rtio_fio_reap_local(struct rtio_fio_data *d)
{
	struct io_uring_cqe *cqe;

	while (d->local_inflight > 0 && io_uring_peek_cqe(&d->ring, &cqe) == 0) {
		struct io_u *io_u = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&d->ring, cqe);
		d->local_inflight--;
		if (res > 0) {
			(void)rtio_client_count_local_read(d->c, (size_t)res);
		}
		rtio_fio_done(res, io_u);
	}
}

static enum fio_q_status rtio_fio_queue(struct thread_data *td, struct io_u *io_u)
{
	struct rtio_fio_data *d = td->io_ops_data;
	struct rtio_fio_file *rf = FILE_ENG_DATA(io_u->file);
	struct rtio_client_io *io;
	int ret;

	fio_ro_check(td, io_u);
	io_u->engine_data = d;
	switch (io_u->ddir) {
	case DDIR_READ:
		if (d->route_module) {
			enum fio_q_status q = rtio_fio_route_read(d, rf, io_u);

			if (q != FIO_Q_BUSY) {
				return q;
			}
		}
		ret = rtio_client_pread_start(d->c, rf->info.file_id, io_u->xfer_buf, io_u->xfer_buflen,
					      (off_t)io_u->offset, rtio_fio_done, io_u, &io);
		break;
	case DDIR_WRITE:
		ret = rtio_client_pwrite_start(d->c, rf->info.file_id, io_u->xfer_buf,
					       io_u->xfer_buflen, (off_t)io_u->offset,
					       rtio_fio_done, io_u, &io);
		break;
	case DDIR_SYNC:
	case DDIR_DATASYNC:
		ret = rtio_client_fsync_start(d->c, rf->info.file_id, io_u->ddir == DDIR_DATASYNC,
					      rtio_fio_done, io_u, &io);
		break;
	default:
		ret = -EOPNOTSUPP;	/* trim: aiod has no such operation */
		break;
	}
	if (ret < 0) {
		io_u->error = (unsigned int)-ret;
		return FIO_Q_COMPLETED;
	}
	return FIO_Q_QUEUED;
}

/* Move up to max completions to events[] starting at n; return the new count. */
static unsigned rtio_fio_take(struct rtio_fio_data *d, unsigned n, unsigned max)
{
	while (n < max && n < d->done_cap && d->done_count > 0) {
		d->events[n++] = d->done[d->done_head];
		d->done_head = (d->done_head + 1) % d->done_cap;
		d->done_count--;
	}
	return n;
}

static int64_t rtio_fio_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int rtio_fio_getevents(struct thread_data *td, unsigned int min, unsigned int max,
			      const struct timespec *t)
{
	struct rtio_fio_data *d = td->io_ops_data;
	int64_t start = rtio_fio_now_ms();
	int64_t limit = t != NULL ? (int64_t)t->tv_sec * 1000 + t->tv_nsec / 1000000 : -1;
	int64_t progress = start;	/* last time anything completed */
	unsigned n = 0;

	for (;;) {
		unsigned before = n + d->done_count;
		struct pollfd p[3];
		int fds[2];
		nfds_t np = 2;
		int64_t now;
		int64_t wait_ms;

		int ret = rtio_fio_submit_local(d);

		if (ret < 0) {
			td_verror(td, -ret, "io_uring_submit");
			return ret;
		}
		/*
		 * Never blocks; a dead session completes everything with
		 * -ENOTCONN here. With nothing of aiod's out there is nothing to
		 * answer (and two system calls saved per read of the engine's own).
		 */
		if (!d->route_module || rtio_client_pending(d->c) > 0) {
			(void)rtio_client_process(d->c);
		}
		if (d->route_module) {
			rtio_fio_reap_local(d);
		}
		n = rtio_fio_take(d, n, max);
		if (n >= min) {
			break;
		}
		if (rtio_client_pending(d->c) == 0 && d->local_inflight == 0 && d->done_count == 0) {
			break;	/* nothing left that could complete */
		}
		now = rtio_fio_now_ms();
		if (n + d->done_count != before) {
			progress = now;
		}
		wait_ms = d->timeout_ms - (now - progress);
		if (limit >= 0 && limit - (now - start) < wait_ms) {
			wait_ms = limit - (now - start);
			if (wait_ms <= 0) {
				break;	/* fio's own timeout: return what we have */
			}
		}
		if (wait_ms <= 0 && rtio_client_pending(d->c) == 0) {
			/* only the engine's own reads are out: the kernel answers them */
			progress = now;
			wait_ms = d->timeout_ms;
		}
		if (wait_ms <= 0) {
			/*
			 * aiod holds our requests but answers none: fail them all
			 * (-ETIMEDOUT) rather than hang the job.
			 */
			log_err("%s: no completion from aiod in %d ms, aborting the session\n",
				RTIO_FIO_NAME, d->timeout_ms);
			rtio_client_abort(d->c);
			continue;
		}
		if (d->ring_ready && d->local_inflight > 0 && rtio_client_pending(d->c) == 0) {
			/* only the engine's own reads are out: wait for the first in the ring */
			struct __kernel_timespec ts = {
				.tv_sec = wait_ms / 1000, .tv_nsec = (wait_ms % 1000) * 1000000,
			};
			struct io_uring_cqe *cqe;

			ret = io_uring_wait_cqe_timeout(&d->ring, &cqe, &ts);
			if (ret < 0 && ret != -ETIME && ret != -EINTR) {
				td_verror(td, -ret, "io_uring_wait_cqe_timeout");
				return ret;
			}
			continue;
		}
		rtio_client_event_fds(d->c, fds);
		p[0] = (struct pollfd){ .fd = fds[0], .events = POLLIN };
		p[1] = (struct pollfd){ .fd = fds[1], .events = POLLIN };
		if (d->local_inflight > 0) {
			/* an io_uring descriptor polls readable while its CQ holds a completion */
			p[np++] = (struct pollfd){ .fd = d->ring.ring_fd, .events = POLLIN };
		}
		if (poll(p, np, (int)wait_ms) < 0 && errno != EINTR) {
			int err = errno;

			td_verror(td, err, "poll");
			return -err;
		}
	}
	return (int)n;
}

static struct io_u *rtio_fio_event(struct thread_data *td, int event)
{
	struct rtio_fio_data *d = td->io_ops_data;

	return d->events[event];
}

/*
 * fio finds an external engine by this symbol (dlsym "ioengine"). No flags:
 * queue() is asynchronous and there is no commit(), so fio stamps the issue
 * time right after queue() sent READ0, as io_uring's engine does after its
 * submit. Files are ordinary files: fio's own stat() gives their size.
 */
struct ioengine_ops ioengine = {
	.name		= RTIO_FIO_NAME,
	.version	= FIO_IOOPS_VERSION,
	.init		= rtio_fio_init,
	.queue		= rtio_fio_queue,
	.getevents	= rtio_fio_getevents,
	.event		= rtio_fio_event,
	.cleanup	= rtio_fio_cleanup,
	.open_file	= rtio_fio_open_file,
	.close_file	= rtio_fio_close_file,
	.get_file_size	= generic_get_file_size,
	.options	= rtio_fio_opts,
	.option_struct_size = sizeof(struct rtio_fio_options),
};
