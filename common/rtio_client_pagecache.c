/*
 * rtio client library: whether the kernel's page cache holds a file range.
 *
 * smbd's sendfile path hands the kernel page-cache pages by reference: a
 * plain share sends a hot file without copying a byte. aiod's cache can
 * only be sent by copying (its blocks are reused for other files, and the
 * kernel cannot tell us when a socket, or on loopback the receiving socket,
 * stops referencing pages it was given: MSG_ZEROCOPY copies there for that
 * reason, bench/results/zerocopy-*.md). So where the page cache holds the
 * whole range, the module lets the kernel send it, as a plain share would,
 * and asks aiod only for what the page cache does not hold.
 *
 * cachestat(2) (Linux 6.5) counts a range's cached pages in one call
 * without touching them; it is not in glibc 2.36, hence the raw syscall.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rtio_client.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451	/* the same number on every architecture (since 6.5) */
#endif

/* include/uapi/linux/mman.h, 6.5 (Debian 12's kernel headers are 6.1) */
struct rtio_cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct rtio_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

int rtio_page_cached(int fd, uint64_t off, uint64_t len)
{
	struct rtio_cachestat_range range = { .off = off, .len = len };
	struct rtio_cachestat cs = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pages;

	/* (cachestat's len 0 means "to the end of the file": never ask that) */
	if (len == 0 || page <= 0 || off > UINT64_MAX - len) {
		return -EINVAL;
	}
	/* ENOSYS before 6.5 costs a syscall per call: less than one SMB read */
	if (syscall(__NR_cachestat, fd, &range, &cs, 0) != 0) {
		return -errno;
	}
	pages = (off + len + (uint64_t)page - 1) / (uint64_t)page - off / (uint64_t)page;
	return cs.nr_cache >= pages ? 1 : 0;
}
