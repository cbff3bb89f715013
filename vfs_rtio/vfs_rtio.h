/*
 * vfs_rtio: what every file of the module shares, and which file may call
 * which.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Files, top down. Calls go down only: a file names no file above it, and
 * hears back from below only through return values and the callbacks it
 * handed down.
 *
 *   vfs_rtio.c            the VFS function table, tree connect, open/close
 *   vfs_rtio_aio.c        tevent pread/pwrite/fsync through aiod            (data)
 *   vfs_rtio_aio_local.c  their local path: smbd's descriptor, failover     (data)
 *   vfs_rtio_sync.c       sync pread/pwrite through aiod, fallback          (data)
 *   vfs_rtio_sendfile.c   sendfile from aiod's cache; recvfile              (data)
 *   vfs_rtio_coherence.c  truncate, fallocate, unlink, rename, server-side
 *                         copy: changes aiod's cache must hear of
 *   vfs_rtio_sqos.c       FSCTL_STORAGE_QOS_CONTROL (MS-SQOS) from aiod's policy
 *   vfs_rtio_fsp.c        registration of open files with aiod
 *   vfs_rtio_qos.c        QoS: a tree connect's (or file's) flow, pacing
 *   vfs_rtio_session.c    the one aiod session of this smbd process (opaque)
 *   vfs_rtio_retry.c      when a detached session asks aiod again           } owned by
 *   vfs_rtio_stale.c      files aiod must forget at the next attach         } the session
 *   vfs_rtio_watch.c      the client's event fds on tevent                  }
 *   vfs_rtio_config.c     rtio:* smb.conf parameters, read per tree connect
 *   vfs_rtio_defer.c      which small files are registered only once they grow
 *   vfs_rtio_sqos_wire.c  MS-SQOS requests decoded and answered (no Samba)
 *   common/rtio_client.c  the client library
 *
 * Each .c has a header of its own; include them after Samba's includes.h /
 * smbd/smbd.h.
 */
#ifndef VFS_RTIO_H
#define VFS_RTIO_H

#define MODULE_NAME "rtio"

/*
 * The status lines ("attached", "not available", "detached", "re-attached")
 * are what an admin looks for after setting "vfs objects = rtio"; they must
 * show at the default "log level = 1", which Samba calls the warning level.
 */
#define VFS_RTIO_STATUS(...) DEBUG(DBGLVL_WARNING, (__VA_ARGS__))

/* The data operations, as aiod or the next module is asked for them. */
enum vfs_rtio_op {
	VFS_RTIO_OP_PREAD,
	VFS_RTIO_OP_PWRITE,
	VFS_RTIO_OP_FSYNC,
	VFS_RTIO_OP_WROTE,	/* smbd wrote the range itself: aiod drops its copy (aiod only) */
};

/* ms since *since on the monotonic clock */
static inline int64_t vfs_rtio_elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime_mono(&now);
	return (int64_t)(now.tv_sec - since->tv_sec) * 1000 +
	       (now.tv_nsec - since->tv_nsec) / 1000000;
}

#endif
