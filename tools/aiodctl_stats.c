/*
 * aiodctl stats and files: aiod's counters and its files, as key=value
 * lines and a table (what scripts have always parsed) or as JSON.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "aiodctl.h"
#include "aiodctl_fields.h"
#include "aiodctl_json.h"
#include "aiodctl_snapshot.h"
#include "rtio_version.h"

/*
 * key=value needs only STATS: it works against an aiod older than this
 * aiodctl (an upgrade that has not restarted aiod yet); INFO's lines follow
 * when aiod answers it.
 */
static int stats_text(struct rtio_client *c)
{
	struct rtio_stats_rep st;
	struct rtio_info_rep info;
	size_t len;
	int ret = rtio_client_stats_len(c, &st, &len);

	if (ret < 0) {
		return aiodctl_fail("stats", ret);
	}
	for (size_t i = 0; i < aiodctl_n_stat_fields; i++) {
		const struct aiodctl_stat_field *f = &aiodctl_stat_fields[i];

		if (aiodctl_stat_sent(len, f)) {
			printf("%s=%" PRIu64 "\n", f->key, aiodctl_stat_value(&st, f));
		}
	}
	aiodctl_stats_note(len);
	if (rtio_client_info(c, 0, &info) == 0) {
		printf("version=%s\nuptime_s=%" PRIu64 "\nstream_classes=%u\n", info.version,
		       info.uptime_ms / 1000, info.n_classes);
	}
	return fflush(stdout) == 0 ? AIODCTL_EXIT_OK : AIODCTL_EXIT_FAIL;
}

static int stats_json(const struct aiodctl_snapshot *s)
{
	json_t *root = json_object();
	int err = 0;

	if (root == NULL) {
		return aiodctl_json_print(NULL);
	}
	err |= aiodctl_json_put(root, "aiodctl_version", json_string(RTIO_VERSION));
	err |= aiodctl_json_put(root, "aiod", aiodctl_json_daemon(s));
	err |= aiodctl_json_put(root, "stats", aiodctl_json_stats(&s->stats, s->stats_len));
	if (err != 0) {
		json_decref(root);
		root = NULL;
	}
	return aiodctl_json_print(root);
}

int aiodctl_cmd_stats(struct aiodctl *ctl, int argc, char **argv)
{
	struct aiodctl_snapshot *s;
	bool json;
	int ret, rc;

	if (aiodctl_json_flag(argc, argv, &json) != 0) {
		return aiodctl_usage_of(argv[0]);
	}
	if (aiodctl_client(ctl) == NULL) {
		return AIODCTL_EXIT_FAIL;
	}
	if (!json) {
		return stats_text(ctl->c);
	}
	ret = aiodctl_snapshot_take(NULL, ctl->c, &s);
	if (ret < 0) {
		return aiodctl_fail("stats", ret);
	}
	rc = stats_json(s);
	aiodctl_stats_note(s->stats_len);
	talloc_free(s);
	return rc;
}

static void file_line(const struct rtio_file_stats_rep *f)
{
	printf("%-40s %5u %5u %12" PRIu64 " %8" PRIu64 " %14" PRIu64 "\n", f->name[0] ? f->name : "?",
	       f->opens, f->stream_class, f->reserved_bps, f->deadline_misses, f->bytes_read);
}

/* Every file, in the table or appended to files (JSON); -errno of a call that failed. */
static int list_files(struct rtio_client *c, json_t *files)
{
	struct rtio_file_stats_rep f;
	int ret;

	if (files == NULL) {
		printf("%-40s %5s %5s %12s %8s %14s\n", "file", "opens", "class", "reserved_bps",
		       "misses", "bytes_read");
	}
	for (uint32_t i = 0; (ret = rtio_client_file_stats(c, i, &f)) == 0; i++) {
		if (files == NULL) {
			file_line(&f);
		} else if (json_array_append_new(files, aiodctl_json_file(&f)) != 0) {
			return -ENOMEM;
		}
	}
	return ret == -ENOENT ? 0 : ret;
}

int aiodctl_cmd_files(struct aiodctl *ctl, int argc, char **argv)
{
	json_t *root = NULL, *files = NULL;
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
		files = json_array();
		if (root == NULL || aiodctl_json_put(root, "files", files) != 0) {
			json_decref(root);
			return aiodctl_json_print(NULL);
		}
	}
	ret = list_files(ctl->c, files);
	if (ret < 0) {
		json_decref(root);
		return aiodctl_fail("files", ret);
	}
	return json ? aiodctl_json_print(root) : (fflush(stdout) == 0 ? 0 : AIODCTL_EXIT_FAIL);
}
