/*
 * aiodctl's subcommands: each group in its own file (aiodctl_io.c,
 * aiodctl_stats.c, aiodctl_sessions.c, aiodctl_metrics.c, aiodctl_top.c),
 * dispatched by the table in aiodctl.c. A new group (qos...) adds a file
 * and a row.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIODCTL_H
#define AIODCTL_H

#include <stdbool.h>
#include <stdio.h>

#include "rtio_client.h"

#define AIODCTL_DEFAULT_SOCKET "/run/aiod/aiod.sock"

/* Exit statuses (aiodctl(8), EXIT STATUS). */
#define AIODCTL_EXIT_OK    0
#define AIODCTL_EXIT_FAIL  1	/* aiod unreachable, a call or an output failed */
#define AIODCTL_EXIT_USAGE 2	/* bad command line */

/* What every command shares: where aiod is, and the connection once made. */
struct aiodctl {
	const char *sock;
	int timeout_ms;
	bool monitor;		/* the command only monitors: no session (queues, region) */
	struct rtio_client *c;
};

/*
 * One subcommand: argv[0] is its name, its arguments follow. It checks them
 * before it connects (aiodctl_client), so a usage error is told as one
 * whether aiod runs or not.
 */
struct aiodctl_cmd {
	const char *name;
	bool monitor;
	int (*run)(struct aiodctl *ctl, int argc, char **argv);
	const char *usage;	/* "stats [--json]": the line after "aiodctl [-s SOCKET] " */
};

/* aiodctl.c: the connection, made on first use; NULL (and a message) when aiod is not there. */
struct rtio_client *aiodctl_client(struct aiodctl *ctl);

/* aiodctl_qos.c: the QoS flows (aiod(8), QOS) */
int aiodctl_cmd_qos(struct aiodctl *ctl, int argc, char **argv);

/* aiodctl_doctor.c: what makes or breaks a deployment (aiodctl(8), DOCTOR) */
int aiodctl_cmd_doctor(struct aiodctl *ctl, int argc, char **argv);

/* aiodctl_io.c */
int aiodctl_cmd_cat(struct aiodctl *ctl, int argc, char **argv);
int aiodctl_cmd_write(struct aiodctl *ctl, int argc, char **argv);
/* aiodctl_stats.c */
int aiodctl_cmd_stats(struct aiodctl *ctl, int argc, char **argv);
int aiodctl_cmd_files(struct aiodctl *ctl, int argc, char **argv);
/* aiodctl_sessions.c */
int aiodctl_cmd_sessions(struct aiodctl *ctl, int argc, char **argv);
/* aiodctl_metrics.c */
int aiodctl_cmd_metrics(struct aiodctl *ctl, int argc, char **argv);
/* aiodctl_top.c */
int aiodctl_cmd_top(struct aiodctl *ctl, int argc, char **argv);

/* aiodctl.c: "aiodctl: what: strerror(-err)" on stderr; returns AIODCTL_EXIT_FAIL. */
int aiodctl_fail(const char *what, int err);
/* A subcommand's bad arguments: its usage line on stderr; returns AIODCTL_EXIT_USAGE. */
int aiodctl_usage_of(const char *name);
/* A non-negative decimal, hex or octal number; -1 and a message naming what otherwise. */
int aiodctl_parse_u64(const char *s, const char *what, unsigned long long *out);
/* --json (or -j) as a subcommand's only option; -1 on anything else. */
int aiodctl_json_flag(int argc, char **argv, bool *json);

#endif
