/*
 * aiodctl qos [--json]: one line (or object) per QoS flow in use
 * (QOS_LIST): who it is, what it may do, and what it does now.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "aiodctl.h"
#include "aiodctl_json.h"

/* bytes/s as MiB/s with one decimal; "-" for none (0 in limits: no limit, not paced) */
static const char *mibps(uint64_t Bps, const char *zero, char *buf, size_t len)
{
	if (Bps == 0) {
		return zero;
	}
	snprintf(buf, len, "%.1f", (double)Bps / 1048576.0);
	return buf;
}

static void qos_line(const struct rtio_qos_list_rep *f)
{
	char b[7][32];

	printf("%-4" PRIu32 " %-16s %-28s %9s %9s %9s %9s %9s %9s %6" PRIu32 " %9s %7" PRIu64
	       " %9" PRIu64 "\n",
	       f->slot, f->rule[0] != '\0' ? f->rule : "(best effort)", f->principal,
	       mibps(f->rate_1s_Bps, "0", b[0], sizeof(b[0])),
	       mibps(f->rate_10s_Bps, "0", b[1], sizeof(b[1])),
	       mibps(f->limit_Bps, "-", b[2], sizeof(b[2])),
	       mibps(f->limit_read_Bps, "-", b[5], sizeof(b[5])),
	       mibps(f->limit_write_Bps, "-", b[6], sizeof(b[6])),
	       mibps(f->reserve_Bps, "-", b[3], sizeof(b[3])), f->weight,
	       mibps(f->rate_Bps, "-", b[4], sizeof(b[4])), f->waiting, f->paced);
}

static json_t *qos_json(const struct rtio_qos_list_rep *f)
{
	json_t *o = json_object();
	int err = o == NULL;

	err |= aiodctl_json_put(o, "slot", aiodctl_json_u64(f->slot));
	err |= aiodctl_json_put(o, "rule", json_string(f->rule));
	err |= aiodctl_json_put(o, "principal", json_string(f->principal));
	err |= aiodctl_json_put(o, "rate_1s_bytes_per_second", aiodctl_json_u64(f->rate_1s_Bps));
	err |= aiodctl_json_put(o, "rate_10s_bytes_per_second", aiodctl_json_u64(f->rate_10s_Bps));
	err |= aiodctl_json_put(o, "limit_bytes_per_second", aiodctl_json_u64(f->limit_Bps));
	err |= aiodctl_json_put(o, "limit_read_bytes_per_second", aiodctl_json_u64(f->limit_read_Bps));
	err |= aiodctl_json_put(o, "limit_write_bytes_per_second",
				aiodctl_json_u64(f->limit_write_Bps));
	err |= aiodctl_json_put(o, "reserve_bytes_per_second", aiodctl_json_u64(f->reserve_Bps));
	err |= aiodctl_json_put(o, "weight", aiodctl_json_u64(f->weight));
	err |= aiodctl_json_put(o, "paced_at_bytes_per_second", aiodctl_json_u64(f->rate_Bps));
	err |= aiodctl_json_put(o, "waiting", aiodctl_json_u64(f->waiting));
	err |= aiodctl_json_put(o, "paced_total", aiodctl_json_u64(f->paced));
	err |= aiodctl_json_put(o, "bytes_total", aiodctl_json_u64(f->bytes));
	err |= aiodctl_json_put(o, "binds", aiodctl_json_u64(f->binds));
	if (err != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int aiodctl_cmd_qos(struct aiodctl *ctl, int argc, char **argv)
{
	json_t *root = NULL, *flows = NULL;
	struct rtio_qos_list_rep f;
	bool json;
	int ret;

	if (aiodctl_json_flag(argc, argv, &json) != 0) {
		return aiodctl_usage_of(argv[0]);
	}
	if (aiodctl_client(ctl) == NULL) {
		return AIODCTL_EXIT_FAIL;
	}
	if (json) {
		root = json_object();
		flows = json_array();
		if (root == NULL || aiodctl_json_put(root, "flows", flows) != 0) {
			json_decref(root);
			return aiodctl_json_print(NULL);
		}
	} else {
		printf("%-4s %-16s %-28s %9s %9s %9s %9s %9s %9s %6s %9s %7s %9s\n", "slot", "rule",
		       "principal", "MiB/s_1s", "MiB/s_10s", "limit", "lim_read", "lim_write",
		       "reserve", "weight", "paced_at", "waiting", "paced");
	}
	for (uint32_t i = 0; (ret = rtio_client_qos_list(ctl->c, i, &f)) == 0; i++) {
		if (json && json_array_append_new(flows, qos_json(&f)) != 0) {
			json_decref(root);
			return aiodctl_json_print(NULL);
		} else if (!json) {
			qos_line(&f);
		}
	}
	if (ret != -ENOENT) {
		json_decref(root);
		return aiodctl_fail("qos", ret);
	}
	return json ? aiodctl_json_print(root) : (fflush(stdout) == 0 ? 0 : AIODCTL_EXIT_FAIL);
}
