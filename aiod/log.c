/*
 * aiod logging. The log state is process-wide by nature (like syslog
 * itself), so it is the one piece of static state in aiod.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

enum aiod_log_sink {
	AIOD_SINK_STDERR,	/* a terminal or a file: our own timestamp */
	AIOD_SINK_JOURNAL,	/* journald's stream: "<N>" priority, its timestamp */
	AIOD_SINK_SYSLOG,	/* daemonized: stderr is gone */
};

static struct {
	enum aiod_log_sink sink;
	int level;
} aiod_log_state = { AIOD_SINK_STDERR, AIOD_LOG_NOTICE };

static const char *const level_names[] = { "ERR", "WARN", "NOTICE", "INFO", "DEBUG" };
static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

bool aiod_log_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* A child whose stderr was redirected still inherits the variable: compare. */
	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) != 0) {
		return false;
	}
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void aiod_log_open(bool foreground, int level)
{
	aiod_log_set_level(level);
	if (!foreground) {
		aiod_log_state.sink = AIOD_SINK_SYSLOG;
		openlog("aiod", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	} else {
		aiod_log_state.sink = aiod_log_stderr_is_journal() ? AIOD_SINK_JOURNAL
								   : AIOD_SINK_STDERR;
	}
}

void aiod_log_set_level(int level)
{
	if (level < AIOD_LOG_ERR) {
		level = AIOD_LOG_ERR;
	}
	if (level > AIOD_LOG_DEBUG) {
		level = AIOD_LOG_DEBUG;
	}
	aiod_log_state.level = level;
}

bool aiod_log_enabled(int level)
{
	return level <= aiod_log_state.level;
}

bool aiod_ratelimit_ok(struct aiod_ratelimit *rl, uint64_t *suppressed)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (rl->next_ns != 0 && now < rl->next_ns) {
		rl->suppressed++;
		return false;
	}
	rl->next_ns = now + AIOD_LOG_INTERVAL_MS * 1000000ull;
	*suppressed = rl->suppressed;
	rl->suppressed = 0;
	return true;
}

/* A terminal or a file: the time to the millisecond, once. */
static void log_stderr(int level, const char *func, int line, const char *msg)
{
	struct timespec ts;
	struct tm tm;
	char when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (aiod_log_state.level >= AIOD_LOG_DEBUG) {
		fprintf(stderr, "%s.%03ld aiod[%s] %s:%d: %s\n", when, ts.tv_nsec / 1000000,
			level_names[level], func, line, msg);
	} else {
		fprintf(stderr, "%s.%03ld aiod[%s] %s\n", when, ts.tv_nsec / 1000000,
			level_names[level], msg);
	}
}

/* journald stamps and tags each line itself; "<N>" (sd-daemon(3)) gives it the priority. */
static void log_journal(int level, const char *func, int line, const char *msg)
{
	if (aiod_log_state.level >= AIOD_LOG_DEBUG) {
		fprintf(stderr, "<%d>%s:%d: %s\n", syslog_prio[level], func, line, msg);
	} else {
		fprintf(stderr, "<%d>%s\n", syslog_prio[level], msg);
	}
}

void aiod_log_msg(int level, const char *func, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level < 0 || level > AIOD_LOG_DEBUG) {
		level = AIOD_LOG_DEBUG;
	}
	switch (aiod_log_state.sink) {
	case AIOD_SINK_STDERR:
		log_stderr(level, func, line, msg);
		break;
	case AIOD_SINK_JOURNAL:
		log_journal(level, func, line, msg);
		break;
	case AIOD_SINK_SYSLOG:
		syslog(syslog_prio[level], "%s", msg);
		break;
	}
}
