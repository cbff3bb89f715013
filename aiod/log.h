/*
 * aiod logging: stderr (or the journal) in the foreground, syslog as a daemon.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_LOG_H
#define AIOD_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum aiod_log_level {
	AIOD_LOG_ERR = 0,
	AIOD_LOG_WARN = 1,
	AIOD_LOG_NOTICE = 2,
	AIOD_LOG_INFO = 3,
	AIOD_LOG_DEBUG = 4,
};

/*
 * foreground: stderr, as "<N>message" when stderr is the journal (systemd's
 * $JOURNAL_STREAM names it), else with a timestamp; otherwise syslog.
 */
void aiod_log_open(bool foreground, int level);
/* Whether stderr is journald's stream ($JOURNAL_STREAM is stderr's dev:inode). */
bool aiod_log_stderr_is_journal(void);
void aiod_log_set_level(int level);
bool aiod_log_enabled(int level);
void aiod_log_msg(int level, const char *func, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * At most one line per interval for an event that can repeat without bound
 * (a refused client that keeps retrying, accept() out of descriptors): the
 * first tells the story, the next one says how many were left out.
 */
#define AIOD_LOG_INTERVAL_MS 10000
struct aiod_ratelimit {
	uint64_t next_ns;	/* monotonic: no line before this */
	uint64_t suppressed;	/* lines left out since the last one written */
};
/*
 * Whether to write the line now (then *suppressed is how many were left out
 * before it, and the count starts again), or leave it out.
 */
bool aiod_ratelimit_ok(struct aiod_ratelimit *rl, uint64_t *suppressed);

#define aiod_log(level, ...) \
	do { \
		if (aiod_log_enabled(level)) \
			aiod_log_msg(level, __func__, __LINE__, __VA_ARGS__); \
	} while (0)
#define AIOD_ERR(...)    aiod_log(AIOD_LOG_ERR, __VA_ARGS__)
#define AIOD_WARN(...)   aiod_log(AIOD_LOG_WARN, __VA_ARGS__)
#define AIOD_NOTICE(...) aiod_log(AIOD_LOG_NOTICE, __VA_ARGS__)
#define AIOD_INFO(...)   aiod_log(AIOD_LOG_INFO, __VA_ARGS__)
#define AIOD_DEBUG(...)  aiod_log(AIOD_LOG_DEBUG, __VA_ARGS__)

/* A warning written at most once per AIOD_LOG_INTERVAL_MS of rl, with the count left out. */
#define AIOD_WARN_RL(rl, fmt, ...) \
	do { \
		uint64_t left_out_ = 0; \
		if (!aiod_ratelimit_ok(rl, &left_out_)) \
			break; \
		if (left_out_ > 0) \
			AIOD_WARN(fmt " (%llu more like this not logged since the last)", \
				  ##__VA_ARGS__, (unsigned long long)left_out_); \
		else \
			AIOD_WARN(fmt, ##__VA_ARGS__); \
	} while (0)

/* Per-session variants: prefix with the session id and smbd pid. */
#define SESS_LOG(level, s, fmt, ...) \
	aiod_log(level, "session %u (pid %d): " fmt, aiod_session_id(s), (int)aiod_session_pid(s), ##__VA_ARGS__)
#define SESS_WARN(s, ...)  SESS_LOG(AIOD_LOG_WARN, s, __VA_ARGS__)
#define SESS_INFO(s, ...)  SESS_LOG(AIOD_LOG_INFO, s, __VA_ARGS__)
#define SESS_DEBUG(s, ...) SESS_LOG(AIOD_LOG_DEBUG, s, __VA_ARGS__)
#define SESS_WARN_RL(rl, s, fmt, ...) \
	AIOD_WARN_RL(rl, "session %u (pid %d): " fmt, aiod_session_id(s), \
		     (int)aiod_session_pid(s), ##__VA_ARGS__)

#endif
