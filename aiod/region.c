/*
 * The shared buffer region: an anonymous memfd (no name any other process
 * could open), mapped shared, pre-faulted and locked so a cache hit never
 * waits for a page fault or swap (paper 3.1.3.2.1). Clients receive a
 * descriptor over the control socket.
 *
 * Every client maps it, so no client may break it for the others: its size
 * is sealed (a client's ftruncate would SIGBUS every other mapping), and a
 * client that does not copy writes into it (the module's default) gets a
 * read-only descriptor, which cannot be mapped writable. A root process can
 * still reopen it through /proc; root is trusted (it can read the files
 * anyway), and only root may attach to aiod with data access (listener.c).
 *
 * Huge pages matter beyond aiod: every smbd maps the region afresh and pays a
 * page fault for each 64 KiB it first touches, where a 2 MiB page needs one
 * (bench/micro/run.sh here: 44 ms of faults per GiB, 5 ms with huge pages).
 * The kernel gives shared memory huge pages only when
 * /sys/kernel/mm/transparent_hugepage/shmem_enabled allows it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "aiod.h"
#include "log.h"
#include "rtio_shm.h"
#include "region.h"
#include "clock.h"
#include "cache_dir.h"

/* KiB of shared memory this process maps with huge pages (smaps_rollup), 0 if unknown. */
static unsigned long long region_huge_kib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "re");
	char line[128];
	unsigned long long kib = 0;

	if (f == NULL) {
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "ShmemPmdMapped:", 15) == 0) {
			kib = strtoull(line + 15, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kib;
}

int aiod_region_create(struct aiod_ctx *ctx, char *err, size_t errlen)
{
	struct aiod_region *r = &ctx->region;
	struct rtio_shm_header *h;
	uint32_t nblocks = (uint32_t)(ctx->cfg->cache_size / ctx->cfg->block_size);
	struct rtio_shm_layout l;
	unsigned long long huge_kib;
	char path[64];
	int ret;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->ro_fd = -1;
	r->block_size = ctx->cfg->block_size;
	r->nblocks = nblocks;
	rtio_shm_layout(r->block_size, nblocks, &l);
	r->size = l.size;
	r->fd = memfd_create("rtio-cache", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -errno;
	}
	if (ftruncate(r->fd, (off_t)r->size) != 0) {
		ret = -errno;
		snprintf(err, errlen, "sizing the %llu byte cache region: %s",
			 (unsigned long long)r->size, strerror(errno));
		aiod_region_destroy(r);
		return ret;
	}
	if (fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		ret = -errno;
		snprintf(err, errlen, "sealing the cache region: %s", strerror(errno));
		aiod_region_destroy(r);
		return ret;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
	r->ro_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->ro_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "opening the cache region read-only (%s): %s", path,
			 strerror(errno));
		aiod_region_destroy(r);
		return ret;
	}
	/* Not populated yet: the huge page advice must come before the first touch. */
	r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		ret = -errno;
		r->base = NULL;
		snprintf(err, errlen, "mapping the cache region: %s", strerror(errno));
		aiod_region_destroy(r);
		return ret;
	}
	if (ctx->cfg->hugepages && madvise(r->base, r->size, MADV_HUGEPAGE) != 0) {
		AIOD_DEBUG("madvise(MADV_HUGEPAGE) on the cache: %s", strerror(errno));
	}
	if (ctx->cfg->mlock) {
		if (mlock(r->base, r->size) != 0) {
			ret = -errno;
			snprintf(err, errlen,
				 "locking the %llu MiB cache in memory: %s (raise RLIMIT_MEMLOCK / "
				 "LimitMEMLOCK=, lower [cache] size, or set [cache] mlock = no)",
				 (unsigned long long)(r->size >> 20), strerror(errno));
			aiod_region_destroy(r);
			return ret;
		}
		r->locked = true;
	}
	/* Touch every page so the memory is really there before the first client. */
	for (uint64_t off = 0; off < r->size; off += 4096) {
		r->base[off] = 0;
	}
	h = (struct rtio_shm_header *)r->base;
	h->magic = RTIO_SHM_MAGIC;
	h->version = RTIO_SHM_VERSION;
	h->size = r->size;
	h->block_size = r->block_size;
	h->nblocks = nblocks;
	h->data_off = l.data_off;
	h->dir_off = l.dir_off;
	h->hash_off = l.hash_off;
	h->hash_mask = l.hash_mask;
	h->aiod_pid = (uint64_t)getpid();
	r->data_off = l.data_off;
	r->blocks = r->base + l.data_off;
	r->dir = (struct rtio_shm_dirent *)(r->base + l.dir_off);
	r->buckets = (uint32_t *)(r->base + l.hash_off);
	r->hash_mask = l.hash_mask;
	huge_kib = region_huge_kib();
	AIOD_NOTICE("cache: %u blocks of %u KiB (%llu MiB)%s, %llu MiB in huge pages", nblocks,
		    r->block_size >> 10, (unsigned long long)(r->size >> 20),
		    r->locked ? ", locked in memory" : "", huge_kib >> 10);
	if (ctx->cfg->hugepages && huge_kib == 0) {
		AIOD_NOTICE("cache: no huge pages; every smbd pays a page fault per 64 KiB it "
			    "first reads (echo advise > "
			    "/sys/kernel/mm/transparent_hugepage/shmem_enabled, then restart aiod)");
	}
	return 0;
}

struct aiod_cache *aiod_region_cache(struct aiod_ctx *ctx)
{
	struct aiod_region *r = &ctx->region;
	struct aiod_cache *c = aiod_cache_create(ctx, r->blocks, r->block_size, r->nblocks);

	if (c != NULL) {
		aiod_cache_dir_attach(c, r->dir, r->buckets, r->hash_mask);
	}
	return c;
}

void aiod_region_stop_heartbeat(struct aiod_region *r)
{
	if (r->beat_running) {
		__atomic_store_n(&r->beat_stop, 1, __ATOMIC_RELEASE);
		(void)pthread_join(r->beat_thread, NULL);
		r->beat_running = false;
	}
}

void aiod_region_destroy(struct aiod_region *r)
{
	aiod_region_stop_heartbeat(r);
	if (r->base != NULL) {
		munmap(r->base, r->size);
		r->base = NULL;
	}
	if (r->fd >= 0) {
		close(r->fd);
		r->fd = -1;
	}
	if (r->ro_fd >= 0) {
		close(r->ro_fd);
		r->ro_fd = -1;
	}
}

/*
 * The heartbeat in the region header (rtio_shm.h heartbeat_ns): a client
 * whose request waits sees that aiod is busy, not hung. A thread writes it
 * every RTIO_SHM_HEARTBEAT_MS while the event loop has beaten within
 * AIOD_LOOP_STALL_MS: the loop itself may block for a moment (an open or an
 * fstat on a filesystem that is busy serving the reads the clients wait
 * for; seven streams opened at once on the emulated disk kept it from
 * beating for over half a second, and their clients went around aiod), but
 * a loop stuck for longer, or a stopped aiod, stops the heartbeat.
 */
#define AIOD_LOOP_STALL_MS 2000

static void *region_beat_thread(void *arg)
{
	struct aiod_region *r = arg;
	struct rtio_shm_header *h = (struct rtio_shm_header *)r->base;
	const struct timespec tick = { 0, RTIO_SHM_HEARTBEAT_MS * 1000000L };

	while (__atomic_load_n(&r->beat_stop, __ATOMIC_ACQUIRE) == 0) {
		uint64_t now = aiod_now_ns();

		if (now - __atomic_load_n(&r->loop_ns, __ATOMIC_ACQUIRE) <
		    AIOD_LOOP_STALL_MS * 1000000ull) {
			__atomic_store_n(&h->heartbeat_ns, now, __ATOMIC_RELEASE);
		}
		(void)nanosleep(&tick, NULL);	/* EINTR only shortens a beat */
	}
	return NULL;
}

static void region_loop_beat(struct tevent_context *ev, struct tevent_timer *te,
			     struct timeval now, void *private_data)
{
	struct aiod_ctx *ctx = private_data;

	(void)te;
	(void)now;
	__atomic_store_n(&ctx->region.loop_ns, aiod_now_ns(), __ATOMIC_RELEASE);
	if (tevent_add_timer(ev, ctx, tevent_timeval_current_ofs(0, RTIO_SHM_HEARTBEAT_MS * 1000),
			     region_loop_beat, ctx) == NULL) {
		/* the thread's check then stops the heartbeat: clients treat aiod as hung */
		AIOD_ERR("out of memory: the event loop's beat stops");
	}
}

void aiod_region_start_heartbeat(struct aiod_ctx *ctx)
{
	struct aiod_region *r = &ctx->region;
	int ret;

	region_loop_beat(ctx->ev, NULL, tevent_timeval_zero(), ctx);
	/*
	 * The first beat now, not when the thread first runs: a client that
	 * attaches before it is scheduled would read 0, "an aiod without a
	 * heartbeat" (the unit test of the heartbeat failed that way once
	 * under load).
	 */
	__atomic_store_n(&((struct rtio_shm_header *)r->base)->heartbeat_ns, aiod_now_ns(),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&r->beat_stop, 0, __ATOMIC_RELEASE);
	ret = pthread_create(&r->beat_thread, NULL, region_beat_thread, r);
	if (ret != 0) {
		/* clients then wait for a silent aiod as long as for one without a heartbeat */
		AIOD_ERR("cannot start the heartbeat thread: %s", strerror(ret));
		return;
	}
	r->beat_running = true;
}
