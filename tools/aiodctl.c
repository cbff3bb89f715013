/*
 * aiodctl: talk to a running aiod through the rtio client library.
 * aiodctl(8) documents every command; this file holds the global options
 * and the table of subcommands, each group in its own file (aiodctl.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "aiodctl.h"
#include "rtio_version.h"

/*
 * Monitoring commands need no session (queues, shared region): aiod answers
 * them beyond max_sessions, which is when they matter most.
 */
static const struct aiodctl_cmd cmds[] = {
	{ "stats", true, aiodctl_cmd_stats, "stats [--json]" },
	{ "files", true, aiodctl_cmd_files, "files [--json]" },
	{ "sessions", true, aiodctl_cmd_sessions, "sessions [--json] [-i INTERVAL_MS]" },
	{ "metrics", true, aiodctl_cmd_metrics, "metrics [-o FILE]" },
	{ "top", true, aiodctl_cmd_top, "top [-n COUNT] [-i INTERVAL_MS]" },
	{ "qos", true, aiodctl_cmd_qos, "qos [--json]" },
	{ "doctor", true, aiodctl_cmd_doctor,
	  "doctor [-c AIOD_INI] [--module PATH] [--smbconf PATH]" },
	{ "cat", false, aiodctl_cmd_cat, "cat FILE [OFFSET [LENGTH]]" },
	{ "write", false, aiodctl_cmd_write, "write FILE [OFFSET]   (data from stdin)" },
};
#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: aiodctl [-s SOCKET] [-t TIMEOUT_MS] COMMAND [ARGS]\n"
		   "       aiodctl --version | --help\n");
	for (size_t i = 0; i < N_CMDS; i++) {
		fprintf(f, "  %s\n", cmds[i].usage);
	}
	fprintf(f, "stats prints aiod's counters (aiod(8) explains them); sessions lists one line\n"
		   "per smbd process: join it with `smbstatus -j` by pid for the client machine and\n"
		   "share. metrics prints Prometheus text for node_exporter's textfile collector.\n"
		   "See aiodctl(8). Default socket: " AIODCTL_DEFAULT_SOCKET "\n");
}

int aiodctl_fail(const char *what, int err)
{
	fprintf(stderr, "aiodctl: %s: %s\n", what, strerror(-err));
	return AIODCTL_EXIT_FAIL;
}

int aiodctl_usage_of(const char *name)
{
	for (size_t i = 0; i < N_CMDS; i++) {
		if (strcmp(cmds[i].name, name) == 0) {
			fprintf(stderr, "Usage: aiodctl [-s SOCKET] %s\n", cmds[i].usage);
		}
	}
	return AIODCTL_EXIT_USAGE;
}

int aiodctl_parse_u64(const char *s, const char *what, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || end == s || s[0] == '-') {
		fprintf(stderr, "aiodctl: %s: not a number: '%s'\n", what, s);
		return -1;
	}
	return 0;
}

int aiodctl_json_flag(int argc, char **argv, bool *json)
{
	*json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") != 0 && strcmp(argv[i], "-j") != 0) {
			return -1;
		}
		*json = true;
	}
	return 0;
}

static const struct aiodctl_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < N_CMDS; i++) {
		if (strcmp(cmds[i].name, name) == 0) {
			return &cmds[i];
		}
	}
	return NULL;
}

struct rtio_client *aiodctl_client(struct aiodctl *ctl)
{
	int ret;

	if (ctl->c != NULL) {
		return ctl->c;
	}
	ret = ctl->monitor ? rtio_client_monitor_connect(NULL, ctl->sock, ctl->timeout_ms, &ctl->c) :
			     rtio_client_connect(NULL, ctl->sock, "aiodctl", ctl->timeout_ms, &ctl->c);
	if (ret < 0) {
		fprintf(stderr, "aiodctl: connecting to aiod at %s: %s\n", ctl->sock, strerror(-ret));
		ctl->c = NULL;
		return NULL;
	}
	return ctl->c;
}

static int run(const struct aiodctl_cmd *cmd, struct aiodctl *ctl, int argc, char **argv)
{
	int rc;

	ctl->monitor = cmd->monitor;
	rc = cmd->run(ctl, argc, argv);
	TALLOC_FREE(ctl->c);	/* a session says DISCONNECT */
	return rc;
}

int main(int argc, char **argv)
{
	struct aiodctl ctl = { .sock = AIODCTL_DEFAULT_SOCKET, .timeout_ms = 5000 };
	const struct aiodctl_cmd *cmd;
	int opt;

	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};

	/* "+": stop at the command, whose own options follow it */
	while ((opt = getopt_long(argc, argv, "+s:t:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			ctl.sock = optarg;
			break;
		case 't':
			ctl.timeout_ms = atoi(optarg);
			if (ctl.timeout_ms <= 0) {
				fprintf(stderr, "aiodctl: -t: timeout must be a positive number of ms\n");
				return AIODCTL_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return AIODCTL_EXIT_OK;
		case 'V':
			printf("aiodctl %s\n", RTIO_VERSION);
			return AIODCTL_EXIT_OK;
		default:
			usage(stderr);
			return AIODCTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return AIODCTL_EXIT_USAGE;
	}
	cmd = find_cmd(argv[optind]);
	if (cmd == NULL) {
		fprintf(stderr, "aiodctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return AIODCTL_EXIT_USAGE;
	}
	return run(cmd, &ctl, argc - optind, argv + optind);
}
