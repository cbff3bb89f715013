/*
 * aiodctl metrics: Prometheus text for node_exporter's textfile collector.
 * With -o FILE the text goes to a temporary file in FILE's directory that
 * is renamed over FILE when complete: the collector reads whenever it is
 * scraped and must never see half a file (nor a name ending in .prom
 * before it is whole).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aiodctl.h"
#include "aiodctl_prom.h"
#include "aiodctl_snapshot.h"

/* Write s to f and close it; 0 or -errno. The data is on the disk before a rename shows it. */
static int write_close(FILE *f, const struct aiodctl_snapshot *s, bool sync)
{
	int ret = aiodctl_prom_write(f, s);

	if (ret == 0 && fflush(f) != 0) {
		ret = -errno;
	}
	if (ret == 0 && sync && fsync(fileno(f)) != 0) {
		ret = -errno;
	}
	if (fclose(f) != 0 && ret == 0) {
		ret = -errno;
	}
	return ret;
}

/* The temporary file's path: FILE's directory, a hidden name the collector skips. */
static char *temp_path(TALLOC_CTX *mem_ctx, const char *path)
{
	char *copy = talloc_strdup(mem_ctx, path);

	if (copy == NULL) {
		return NULL;
	}
	return talloc_asprintf(mem_ctx, "%s/.aiodctl-metrics.XXXXXX", dirname(copy));
}

/* Through tmp (a mkstemp template) to path; 0 or -errno, tmp removed on failure. */
static int write_via(char *tmp, const char *path, const struct aiodctl_snapshot *s)
{
	int fd = mkstemp(tmp), ret;
	FILE *f;

	if (fd < 0) {
		return -errno;
	}
	/* mkstemp makes it 0600; node_exporter usually runs as another user */
	f = fchmod(fd, 0644) == 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		ret = -errno;
		close(fd);
	} else {
		ret = write_close(f, s, true);
	}
	if (ret == 0 && rename(tmp, path) != 0) {
		ret = -errno;
	}
	if (ret != 0) {
		(void)unlink(tmp);	/* best effort: the error that matters is ret */
	}
	return ret;
}

static int write_atomic(const char *path, const struct aiodctl_snapshot *s)
{
	TALLOC_CTX *frame = talloc_new(NULL);
	char *tmp = frame != NULL ? temp_path(frame, path) : NULL;
	int ret = tmp != NULL ? write_via(tmp, path, s) : -ENOMEM;

	talloc_free(frame);
	return ret;
}

int aiodctl_cmd_metrics(struct aiodctl *ctl, int argc, char **argv)
{
	struct aiodctl_snapshot *s;
	const char *out = NULL;
	int opt, ret;

	optind = 0;	/* GNU getopt: start over on the subcommand's arguments */
	while ((opt = getopt(argc, argv, "+o:")) != -1) {
		if (opt != 'o') {
			return aiodctl_usage_of(argv[0]);
		}
		out = optarg;
	}
	if (optind != argc) {
		return aiodctl_usage_of(argv[0]);
	}
	if (aiodctl_client(ctl) == NULL) {
		return AIODCTL_EXIT_FAIL;
	}
	ret = aiodctl_snapshot_take(NULL, ctl->c, &s);
	if (ret < 0) {
		return aiodctl_fail("metrics", ret);
	}
	ret = out != NULL ? write_atomic(out, s) : write_close(stdout, s, false);
	talloc_free(s);
	if (ret < 0) {
		return aiodctl_fail(out != NULL ? out : "writing stdout", ret);
	}
	return AIODCTL_EXIT_OK;
}
