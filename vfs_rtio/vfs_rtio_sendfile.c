/*
 * vfs_rtio: sendfile straight from aiod's cache, and recvfile past it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * sendfile ("use sendfile = yes", "aio read size = 0", unsigned sessions):
 * what the page cache holds whole, and while nothing is owed a rate what
 * aiod's cache does not hold, the kernel sends from smbd's descriptor as on a
 * plain share (vfs_rtio_sendfile_kernel()). A stream's reads and the rest go
 * from aiod's shared cache straight to the socket, never through smbd's
 * buffers: READ0 pins the blocks, sendmsg() hands the kernel the pinned pages
 * (it copies them), READ1 unpins them. Like sys_sendfile(), the header goes
 * first (corked with MSG_MORE) and the socket is made blocking for the
 * duration, because nothing else may be sent on it in between.
 *
 * If aiod cannot serve the first piece, nothing has been sent yet and the
 * kernel's sendfile from smbd's descriptor does it all. If aiod goes away
 * mid-way, the kernel sends the rest from the descriptor: the client still
 * gets every byte once.
 */

#include "includes.h"
#include "smbd/smbd.h"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include "vfs_rtio.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_qos.h"
#include "vfs_rtio_sendfile.h"
#include "vfs_rtio_session.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

static ssize_t vfs_rtio_send_all(int fd, struct iovec *iov, int iovcnt, bool more)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = iovcnt };
	ssize_t total = 0;

	while (msg.msg_iovlen > 0) {
		ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | (more ? MSG_MORE : 0));

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -1;
		}
		total += n;
		while (msg.msg_iovlen > 0 && (size_t)n >= msg.msg_iov[0].iov_len) {
			n -= (ssize_t)msg.msg_iov[0].iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen > 0) {
			msg.msg_iov[0].iov_base = (uint8_t *)msg.msg_iov[0].iov_base + n;
			msg.msg_iov[0].iov_len -= (size_t)n;
		}
	}
	return total;
}


/* One sendfile, as one call into the client library: its pinned blocks are the client's. */
struct vfs_rtio_sendfile {
	int tofd;
	files_struct *fromfsp;
	uint64_t file_id;
	const DATA_BLOB *hdr;
	off_t offset;
	size_t n;
	bool unserved;		/* aiod did not serve the first piece: nothing was sent */
	int error;		/* errno of a failure after that */
};

/* aiod went away mid-way: the kernel sends the rest from smbd's descriptor. */
static int vfs_rtio_sendfile_rest(const struct vfs_rtio_sendfile *sf, size_t *sent)
{
	off_t pos = sf->offset + (off_t)*sent;

	while (*sent < sf->n) {
		ssize_t k = sendfile(sf->tofd, fsp_get_io_fd(sf->fromfsp), &pos, sf->n - *sent);
		if (k < 0 && errno == EINTR) {
			continue;
		}
		if (k <= 0) {
			return k < 0 ? -1 : 0;
		}
		*sent += (size_t)k;
	}
	return 0;
}

static ssize_t vfs_rtio_sendfile_call(struct rtio_client *client, void *private_data)
{
	struct vfs_rtio_sendfile *sf = private_data;
	size_t max_io = (size_t)rtio_client_max_io(client);
	struct rtio_pinned pin;
	size_t hdr_len = sf->hdr != NULL ? sf->hdr->length : 0;
	size_t sent = 0;
	ssize_t got;
	int old_flags;
	ssize_t ret = -1;

	got = rtio_client_read_pinned(client, sf->file_id, MIN(sf->n, max_io), sf->offset, &pin);
	if (got < 0) {
		return got;
	}
	sf->unserved = false;
	old_flags = fcntl(sf->tofd, F_GETFL, 0);
	if (old_flags == -1 || fcntl(sf->tofd, F_SETFL, old_flags & ~O_NONBLOCK) == -1) {
		rtio_client_release(client, &pin);
		sf->error = errno;
		return -1;
	}
	if (hdr_len > 0) {
		struct iovec iov = { .iov_base = sf->hdr->data, .iov_len = hdr_len };
		if (vfs_rtio_send_all(sf->tofd, &iov, 1, true) < 0) {
			rtio_client_release(client, &pin);
			goto out;
		}
	}
	for (;;) {
		struct iovec iov[RTIO_MAX_SEGS];
		bool last;

		for (uint32_t i = 0; i < pin.nseg; i++) {
			iov[i].iov_base = (void *)(uintptr_t)rtio_client_shm(client, pin.seg[i].shm_off,
									    pin.seg[i].len);
			iov[i].iov_len = pin.seg[i].len;
			if (iov[i].iov_base == NULL) {
				rtio_client_release(client, &pin);
				errno = EIO;
				goto out;
			}
		}
		last = sent + (size_t)got == sf->n || (size_t)got < MIN(sf->n - sent, max_io);
		if (got > 0 && vfs_rtio_send_all(sf->tofd, iov, (int)pin.nseg, !last) < 0) {
			rtio_client_release(client, &pin);
			goto out;
		}
		rtio_client_release(client, &pin);
		sent += (size_t)got;
		if (last) {
			break;	/* done, or EOF: a short count like sys_sendfile's */
		}
		got = rtio_client_read_pinned(client, sf->file_id, MIN(sf->n - sent, max_io),
					      sf->offset + (off_t)sent, &pin);
		if (got < 0) {
			if (vfs_rtio_sendfile_rest(sf, &sent) < 0) {
				goto out;
			}
			break;
		}
	}
	ret = (ssize_t)(hdr_len + sent);
	DBG_INFO("rtio: sendfile of %zu bytes of %s from aiod's cache\n", sent,
		 fsp_str_dbg(sf->fromfsp));
out:
	{
		int saved_errno = errno;
		if (fcntl(sf->tofd, F_SETFL, old_flags) == -1 && ret != -1) {
			ret = -1;
		} else {
			errno = saved_errno;
		}
	}
	if (ret == -1) {
		/* the session may log and close descriptors before our caller sees errno */
		sf->error = errno;
	}
	return ret;
}

/*
 * Whether the kernel sends [offset, offset + n) from smbd's descriptor, as on
 * a plain share, instead of aiod from its cache. Never a stream's read:
 * aiod's deadlines and read-ahead follow its every read. Any other read:
 *  - while nothing on the device is owed a rate, when aiod's cache does not
 *    hold the range: the kernel reads it into the page cache, and the next
 *    sendfile of it goes by reference. Through aiod (direct_io = yes) it
 *    would live in aiod's cache only, and every hot sendfile would copy it:
 *    0.69x a plain share's hot gets at 1.41x its CPU per GiB
 *    (smb-2026-11-24-1332.md). While a stream or a reservation is owed a
 *    rate, the device is aiod's to order, as for rtio:random = local;
 *  - when the page cache holds it whole: sent by reference, no copy, no
 *    device time (hot gets from both caches: 0.74x plain -> 0.93x,
 *    smb-2026-11-24-1319.md, -1330.md).
 * The read still moves the open's read position, as a routed read does (vfs_rtio_io.h).
 */
static bool vfs_rtio_sendfile_kernel(files_struct *fsp, struct vfs_rtio_fsp *ext,
				     const struct rtio_client *client, off_t offset, size_t n)
{
	const struct rtio_file f = { .file_id = ext->file_id, .dev = ext->dev, .ino = ext->ino };
	off_t size = fsp->fsp_name->st.st_ex_size;
	const char *why;
	uint64_t len;

	if (ext->stream || offset < 0 || offset >= size) {
		return false;
	}
	len = MIN((uint64_t)n, (uint64_t)(size - offset));
	if (rtio_client_nothing_owed(client) && !rtio_client_may_hold(client, &f, offset, len)) {
		why = "nothing is owed a rate, aiod's cache does not hold it";
	} else if (vfs_rtio_fsp_page_cached(fsp, offset, len)) {
		why = "the page cache holds it";
	} else {
		return false;
	}
	(void)rtio_client_read_continues(client, &ext->read_pos, offset, n);
	DBG_INFO("rtio: sendfile of %" PRIu64 " bytes of %s by the kernel: %s\n", len,
		 fsp_str_dbg(fsp), why);
	return true;
}

ssize_t vfs_rtio_sendfile(struct vfs_handle_struct *handle, int tofd, files_struct *fromfsp,
			  const DATA_BLOB *hdr, off_t offset, size_t n)
{
	struct vfs_rtio_fsp *ext = NULL;
	struct rtio_client *client;
	struct vfs_rtio_sendfile sf;
	ssize_t ret;

	vfs_rtio_qos_pace(vfs_rtio_fsp_qos(handle, fromfsp), false, n);
	client = vfs_rtio_fsp_client(handle, fromfsp, VFS_RTIO_ACCESS_READ, offset, n, &ext);

	/* not aiod's (yet), aiod away: the kernel's sendfile from smbd's descriptor */
	if (client == NULL || n == 0) {
		return SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset, n);
	}
	if (vfs_rtio_sendfile_kernel(fromfsp, ext, client, offset, n)) {
		vfs_rtio_session_count_local_read(ext->session, n);
		return SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset, n);
	}
	sf = (struct vfs_rtio_sendfile){
		.tofd = tofd, .fromfsp = fromfsp, .file_id = ext->file_id, .hdr = hdr,
		.offset = offset, .n = n, .unserved = true,
	};
	ret = vfs_rtio_session_call(ext->session, vfs_rtio_sendfile_call, &sf);
	if (sf.unserved) {
		return SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset, n);
	}
	if (ret == -1) {
		errno = sf.error;
	}
	return ret;
}

/*
 * recvfile ("min receivefile size", SMB1 only) splices the socket into
 * smbd's descriptor, past aiod: its cached blocks of the file are stale now.
 */
ssize_t vfs_rtio_recvfile(struct vfs_handle_struct *handle, int fromfd, files_struct *tofsp,
			  off_t offset, size_t n)
{
	ssize_t ret = SMB_VFS_NEXT_RECVFILE(handle, fromfd, tofsp, offset, n);
	int saved_errno = errno;

	if (n > 0) {
		vfs_rtio_fsp_invalidate(handle, tofsp, NULL, offset, n);
	}
	errno = saved_errno;
	return ret;
}

