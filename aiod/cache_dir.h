/*
 * The cache's index in the shared region (cache_dir.c): what cache.c tells
 * clients about its blocks. Without a directory attached (the unit tests of
 * cache.c) every call does nothing.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CACHE_DIR_H
#define AIOD_CACHE_DIR_H

#include "cache.h"
#include "rtio_shm.h"

/* Publish c's blocks in dir (nblocks entries) and buckets (hash_mask + 1): all empty now. */
void aiod_cache_dir_attach(struct aiod_cache *c, struct rtio_shm_dirent *dir, uint32_t *buckets,
			   uint32_t hash_mask);
/* b's key, valid length or bytes are about to change: readers must stop trusting it. */
void aiod_cache_dir_begin(struct aiod_cache *c, const struct aiod_block *b);
/* b holds its valid bytes of its key now: readers may copy them. */
void aiod_cache_dir_publish(struct aiod_cache *c, const struct aiod_block *b);
/* b was hashed under its key (LOADING: not readable until published). */
void aiod_cache_dir_link(struct aiod_cache *c, const struct aiod_block *b);
/* b leaves the hash: readers miss it from now on. */
void aiod_cache_dir_unlink(struct aiod_cache *c, const struct aiod_block *b);

#endif
