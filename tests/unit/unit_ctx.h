/*
 * An aiod context built the way main.c builds one, for the unit tests that
 * run aiod's layers in-process (test_session.c, test_dataplane.c): defaults,
 * a small unlocked cache, the region, the cache, the engine (the real one
 * or tests/unit/fake_engine.c, whichever is linked), admission with a known
 * capacity, the QoS flow table, and the handler table. Fails the test on any error.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef UNIT_CTX_H
#define UNIT_CTX_H

#include "aiod.h"
#include "files.h"
#include "handlers.h"
#include "qos.h"
#include "region.h"
#include "streams.h"

static inline struct aiod_ctx *unit_ctx_new(TALLOC_CTX *mem_ctx, uint64_t cache_size,
					    uint32_t block_size)
{
	struct aiod_ctx *ctx = talloc_zero(mem_ctx, struct aiod_ctx);
	char err[256];

	assert_non_null(ctx);
	ctx->listen_fd = -1;
	ctx->region.fd = -1;
	assert_int_equal(aiod_config_load(ctx, NULL, &ctx->cfg, err, sizeof(err)), 0);
	ctx->cfg->cache_size = cache_size;
	ctx->cfg->block_size = block_size;
	ctx->cfg->mlock = false;
	ctx->cfg->log_level = 0;
	ctx->cfg->admission_capacity = 1000000000;	/* no device profile to read */
	ctx->mq_msg_max = 10;	/* what an unprivileged aiod gets (fs.mqueue.msg_max) */
	aiod_log_open(true, 0);
	ctx->ev = tevent_context_init(ctx);
	assert_non_null(ctx->ev);
	ctx->handlers = &aiod_handlers;
	assert_int_equal(aiod_files_init(ctx), 0);
	assert_int_equal(aiod_region_create(ctx, err, sizeof(err)), 0);
	ctx->cache = aiod_region_cache(ctx);
	assert_non_null(ctx->cache);
	ctx->engine = aiod_engine_create(ctx, ctx->ev, ctx->cfg->queue_depth, ctx->region.blocks,
					 ctx->region.block_size, ctx->region.nblocks, err,
					 sizeof(err));
	assert_non_null(ctx->engine);
	aiod_admission_init(ctx);
	assert_int_equal(aiod_qos_init(ctx, err, sizeof(err)), 0);
	return ctx;
}

#endif
