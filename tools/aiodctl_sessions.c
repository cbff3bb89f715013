/*
 * aiodctl sessions: one line (or JSON object) per smbd process attached to
 * aiod. Rates are the growth between two looks INTERVAL_MS apart (1 s by
 * default; -i 0 looks once and shows none). The pid is smbd's: `smbstatus
 * -j` maps it to the client machine, the share and the user.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "aiodctl.h"
#include "aiodctl_json.h"
#include "aiodctl_snapshot.h"
#include "aiodctl_sessions.h"

int aiodctl_sleep_ms(unsigned long long ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0) {
		if (errno != EINTR) {
			return -errno;
		}
	}
	return 0;
}

int aiodctl_sample(struct rtio_client *c, unsigned long long interval_ms,
		   struct aiodctl_snapshot **out)
{
	struct aiodctl_snapshot *first, *second;
	int ret = aiodctl_snapshot_take(NULL, c, &first);

	if (ret < 0 || interval_ms == 0) {
		*out = ret < 0 ? NULL : first;
		return ret;
	}
	ret = aiodctl_sleep_ms(interval_ms);
	if (ret == 0) {
		ret = aiodctl_snapshot_take(NULL, c, &second);
	}
	if (ret == 0) {
		aiodctl_rates(first, second);
		*out = second;
	}
	talloc_free(first);
	return ret;
}

static void rate_col(const struct aiodctl_session *s, uint64_t v)
{
	if (s->have_rate) {
		printf(" %10" PRIu64, v);
	} else {
		printf(" %10s", "-");
	}
}

/* credits: granted/ceiling while the module reports a QoS credit ceiling, else "-" */
static void credits_col(const struct rtio_session_stats_rep *r)
{
	char buf[24];

	if (r->credits_orig == 0) {
		printf(" %11s %4s", "-", "-");
		return;
	}
	snprintf(buf, sizeof(buf), "%u/%u", r->credits_granted, r->credits_max);
	printf(" %11s %4u", buf, r->qos_held);
}

static int sessions_text(const struct aiodctl_snapshot *snap)
{
	printf("%8s %6s %-12s %-8s %10s %10s %14s %14s %8s %5s %7s %7s %11s %4s %11s\n", "pid",
	       "uid", "user", "client", "read_Bps", "write_Bps", "bytes_read", "bytes_written",
	       "inflight", "opens", "streams", "lead_ms", "credits", "held", "local_reads");
	for (uint32_t i = 0; i < snap->n_sessions; i++) {
		const struct aiodctl_session *s = &snap->sessions[i];

		printf("%8u %6u %-12s %-8s", s->rep.pid, s->euid, s->user, s->rep.client);
		rate_col(s, s->read_Bps);
		rate_col(s, s->write_Bps);
		printf(" %14" PRIu64 " %14" PRIu64 " %8u %5u %7u", s->rep.bytes_read,
		       s->rep.bytes_written, s->rep.inflight, s->rep.opens, s->rep.streams);
		if (s->rep.lead_ms == RTIO_LEAD_NONE) {
			printf(" %7s", "-");
		} else {
			printf(" %7" PRIu64, s->rep.lead_ms);
		}
		credits_col(&s->rep);
		printf(" %11" PRIu64 "\n", s->rep.local_reads);
	}
	return fflush(stdout) == 0 ? AIODCTL_EXIT_OK : AIODCTL_EXIT_FAIL;
}

static int sessions_json(const struct aiodctl_snapshot *snap, unsigned long long interval_ms)
{
	json_t *root = json_object(), *list = json_array();
	int err = 0;

	if (root == NULL || list == NULL) {
		json_decref(root);
		json_decref(list);
		return aiodctl_json_print(NULL);
	}
	for (uint32_t i = 0; i < snap->n_sessions; i++) {
		err |= json_array_append_new(list, aiodctl_json_session(&snap->sessions[i]));
	}
	err |= aiodctl_json_put(root, "interval_ms", aiodctl_json_u64(interval_ms));
	err |= aiodctl_json_put(root, "sessions", list);
	if (err != 0) {
		json_decref(root);
		root = NULL;
	}
	return aiodctl_json_print(root);
}

/* [--json] [-i INTERVAL_MS]; -1 on anything else. */
static int parse(int argc, char **argv, bool *json, unsigned long long *interval_ms)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*json = false;
	*interval_ms = 1000;
	optind = 0;	/* GNU getopt: start over on the subcommand's arguments */
	while ((opt = getopt_long(argc, argv, "+ji:", longopts, NULL)) != -1) {
		if (opt == 'j') {
			*json = true;
		} else if (opt != 'i' || aiodctl_parse_u64(optarg, "-i", interval_ms) != 0) {
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

int aiodctl_cmd_sessions(struct aiodctl *ctl, int argc, char **argv)
{
	struct aiodctl_snapshot *snap;
	unsigned long long interval_ms;
	bool json;
	int ret, rc;

	if (parse(argc, argv, &json, &interval_ms) != 0) {
		return aiodctl_usage_of(argv[0]);
	}
	if (aiodctl_client(ctl) == NULL) {
		return AIODCTL_EXIT_FAIL;
	}
	ret = aiodctl_sample(ctl->c, interval_ms, &snap);
	if (ret < 0) {
		return aiodctl_fail("sessions", ret);
	}
	rc = json ? sessions_json(snap, interval_ms) : sessions_text(snap);
	talloc_free(snap);
	return rc;
}
