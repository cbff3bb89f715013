/*
 * Taking a snapshot of aiod (aiodctl_snapshot.h): STATS, INFO for each
 * stream class, SESSION_STATS until the end of the listing.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "aiodctl_snapshot.h"
#include "aiodctl_user.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void class_from(struct aiodctl_class *c, const struct rtio_info_rep *r)
{
	snprintf(c->name, sizeof(c->name), "%s", r->class_name);
	snprintf(c->match, sizeof(c->match), "%s", r->class_match);
	c->bitrate = r->class_bitrate;
	c->prebuffer_ms = r->class_prebuffer_ms;
}

static int take_info(struct aiodctl_snapshot *s, struct rtio_client *c)
{
	struct rtio_info_rep r;
	int ret = rtio_client_info(c, 0, &s->info);

	if (ret < 0) {
		return ret;
	}
	s->classes = talloc_zero_array(s, struct aiodctl_class, s->info.n_classes);
	if (s->classes == NULL && s->info.n_classes > 0) {
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->info.n_classes; i++) {
		ret = i == 0 ? 0 : rtio_client_info(c, i, &r);
		if (ret < 0) {
			return ret;
		}
		class_from(&s->classes[i], i == 0 ? &s->info : &r);
		s->n_classes = i + 1;
	}
	return 0;
}

static int add_session(struct aiodctl_snapshot *s, const struct rtio_session_stats_rep *r)
{
	struct aiodctl_session *all, *n;

	all = talloc_realloc(s, s->sessions, struct aiodctl_session, s->n_sessions + 1);
	if (all == NULL) {
		return -ENOMEM;
	}
	s->sessions = all;
	n = &all[s->n_sessions++];
	memset(n, 0, sizeof(*n));
	n->rep = *r;
	n->euid = aiodctl_proc_euid((pid_t)r->pid, r->uid);
	aiodctl_user_name(n->euid, n->user, sizeof(n->user));
	return 0;
}

static int take_sessions(struct aiodctl_snapshot *s, struct rtio_client *c)
{
	struct rtio_session_stats_rep r;
	int ret;

	for (uint32_t i = 0; (ret = rtio_client_session_stats(c, i, &r)) == 0; i++) {
		ret = add_session(s, &r);
		if (ret < 0) {
			return ret;
		}
	}
	return ret == -ENOENT ? 0 : ret;
}

int aiodctl_snapshot_take(TALLOC_CTX *mem_ctx, struct rtio_client *c,
			  struct aiodctl_snapshot **out)
{
	struct aiodctl_snapshot *s = talloc_zero(mem_ctx, struct aiodctl_snapshot);
	int ret;

	if (s == NULL) {
		return -ENOMEM;
	}
	s->taken_ns = now_ns();
	ret = rtio_client_stats_len(c, &s->stats, &s->stats_len);
	if (ret == 0) {
		ret = take_info(s, c);
	}
	if (ret == 0) {
		ret = take_sessions(s, c);
	}
	if (ret < 0) {
		talloc_free(s);
		return ret;
	}
	*out = s;
	return 0;
}
