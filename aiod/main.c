/*
 * aiod: the rtio surrogate I/O daemon. Start-up, signals and the event loop.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "aiod.h"
#include "dataplane.h"
#include "engine.h"
#include "config_dump.h"
#include "log.h"
#include "notify.h"
#include "rtio_size.h"
#include "region.h"
#include "listener.h"
#include "qos.h"
#include "files.h"
#include "streams.h"
#include "calibrate.h"
#include "handlers.h"
#include "requests.h"
#include "session.h"
#include "tuning.h"

#include "rtio_version.h"
#define AIOD_VERSION RTIO_VERSION
#define AIOD_DEFAULT_CONFIG "/etc/aiod/aiod.ini"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: aiod [-c FILE] [-F] [-d LEVEL]\n"
		"       aiod --print-defaults | --check-config [-c FILE] | --dump-config [-c FILE]\n"
		"       aiod --version | --help\n"
		"       aiod --calibrate DIR [-c FILE] [--profile OUT] [--calibrate-size SIZE]\n"
		"\n"
		"The rtio I/O daemon: serves smbd's vfs_rtio module from a shared, locked\n"
		"buffer cache with deadline-ordered io_uring I/O.\n"
		"\n"
		"  -c, --config FILE     configuration (default " AIOD_DEFAULT_CONFIG ")\n"
		"  -F, --foreground      stay in the foreground, log to stderr\n"
		"  -d, --debug LEVEL     log level 0..4 (overrides [global] log_level)\n"
		"      --check-config    validate the configuration and exit (78 if it is wrong)\n"
		"      --dump-config     print the effective configuration: every key, its value\n"
		"                        and where it came from (default, aiod.ini, profile)\n"
		"      --print-defaults  print every key with its default (a sample aiod.ini)\n"
		"      --calibrate DIR   measure the device under DIR (random and sequential reads,\n"
		"                        64K..16M, and parallel reads) and write the profile that\n"
		"                        admission control and the derived settings use\n"
		"      --profile OUT     where --calibrate writes (default: [admission] profile)\n"
		"      --calibrate-size SIZE  test file size (default 1G); --calibrate-seconds S per point\n"
		"  -V, --version         print the version\n"
		"  -h, --help            this text\n");
}

/* A failed notification is worth a line, never worth stopping for. */
static void notify_or_warn(const char *state)
{
	int ret = aiod_notify(state);

	if (ret != 0) {
		AIOD_WARN("cannot notify systemd ($NOTIFY_SOCKET): %s", strerror(-ret));
	}
}

/* STATUS= for systemctl status: what aiod serves, and what just happened. */
static void notify_status(const struct aiod_ctx *ctx, const char *what)
{
	char state[512];

	snprintf(state, sizeof(state), "STATUS=%s: %s, cache %llu MiB, queue depth %u, "
		 "%u stream classes", what, ctx->cfg->socket_path,
		 (unsigned long long)(ctx->cfg->cache_size >> 20), ctx->cfg->queue_depth,
		 ctx->cfg->n_classes);
	notify_or_warn(state);
}

static void on_signal(struct tevent_context *ev, struct tevent_signal *se, int signum, int count,
		      void *siginfo, void *private_data)
{
	struct aiod_ctx *ctx = private_data;

	(void)ev;
	(void)se;
	(void)count;
	(void)siginfo;
	if (signum == SIGHUP) {
		struct aiod_config *next;
		struct aiod_profile *profile;
		char err[512];
		unsigned restart;

		if (aiod_config_load(ctx, ctx->config_path, &next, err, sizeof(err)) != 0) {
			AIOD_ERR("reload refused, keeping the running configuration: %s", err);
			notify_status(ctx, "reload refused (see the log); running with the previous "
				      "configuration");
			return;
		}
		/* The profile may have been rewritten too: derive again before comparing. */
		aiod_tuning_setup(ctx, next, ctx->cfg->queue_depth, &profile);
		restart = aiod_config_reload(ctx->cfg, next);
		talloc_free(ctx->profile);
		ctx->profile = profile;
		aiod_admission_init(ctx);
		aiod_qos_reload(ctx, next);	/* against the capacity just derived */
		aiod_admission_publish(ctx);	/* reservations may have come or gone */
		talloc_free(next);
		AIOD_NOTICE("configuration reloaded from %s%s", ctx->config_path,
			    restart ? " (some changes need a restart, see above)" : "");
		notify_status(ctx, restart ? "reloaded; some changes need a restart" : "reloaded");
		return;
	}
	AIOD_NOTICE("%s: shutting down", strsignal(signum));
	notify_or_warn("STOPPING=1\nSTATUS=shutting down");
	ctx->stopping = true;
}

/*
 * Each session's queues count against RLIMIT_MSGQUEUE of aiod's user and
 * their depth against fs.mqueue.msg_max, unless aiod has CAP_SYS_RESOURCE
 * (systemd gives it: see conf/aiod.service). Find out what we may use.
 */
static void mq_limits(struct aiod_ctx *ctx)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	unsigned long msg_max = 10;
	FILE *f;

	if (setrlimit(RLIMIT_MSGQUEUE, &rl) == 0) {
		ctx->mq_msg_max = 0;	/* privileged: the sysctl does not bind us */
		return;
	}
	f = fopen("/proc/sys/fs/mqueue/msg_max", "r");
	if (f != NULL) {
		if (fscanf(f, "%lu", &msg_max) != 1) {
			msg_max = 10;
		}
		fclose(f);
	}
	ctx->mq_msg_max = (uint32_t)msg_max;
	if (getrlimit(RLIMIT_MSGQUEUE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		unsigned long per_session = 2 * (msg_max + 4) * (RTIO_MQ_MSGSIZE + 64);
		AIOD_NOTICE("no CAP_SYS_RESOURCE: sessions limited to %lu requests in flight "
			    "(fs.mqueue.msg_max); message queues for about %lu sessions "
			    "(RLIMIT_MSGQUEUE %lu bytes, fs.mqueue.queues_max), socket pairs beyond",
			    msg_max < ctx->cfg->session_inflight ? msg_max
								 : (unsigned long)ctx->cfg->session_inflight,
			    (unsigned long)rl.rlim_cur / per_session, (unsigned long)rl.rlim_cur);
	}
}

/*
 * Every session holds four descriptors (socket, pidfd, two queues) and every
 * file an smbd registered one or two: take all the hard limit allows. What
 * happens at the limit: new clients wait (accept pauses), a registration
 * fails with EMFILE (that file's I/O stays in smbd); nothing else breaks.
 */
static void raise_nofile(const struct aiod_ctx *ctx)
{
	struct rlimit rl;
	/* max_sessions sessions with a few files each, and aiod's own descriptors */
	rlim_t want = (rlim_t)ctx->cfg->max_sessions * 8 + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		AIOD_WARN("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			AIOD_WARN("cannot raise RLIMIT_NOFILE to %llu: %s",
				  (unsigned long long)rl.rlim_max, strerror(errno));
			if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
				return;
			}
		}
	}
	if (rl.rlim_cur < want) {
		AIOD_WARN("only %llu descriptors (RLIMIT_NOFILE): short of [global] max_sessions "
			  "= %u; beyond it new clients wait and files are served by smbd itself "
			  "(raise LimitNOFILE)", (unsigned long long)rl.rlim_cur,
			  ctx->cfg->max_sessions);
	} else {
		AIOD_INFO("up to %llu descriptors (RLIMIT_NOFILE)", (unsigned long long)rl.rlim_cur);
	}
}

/* WATCHDOG=1 from the event loop itself: if the loop hangs, the pings stop and systemd acts. */
struct aiod_watchdog {
	uint64_t interval_usec;		/* half of what systemd allows */
};

static void watchdog_ping(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
			  void *private_data)
{
	struct aiod_watchdog *wd = private_data;

	(void)te;
	(void)now;
	notify_or_warn("WATCHDOG=1");
	if (tevent_add_timer(ev, wd, tevent_timeval_current_ofs(wd->interval_usec / 1000000,
								wd->interval_usec % 1000000),
			     watchdog_ping, wd) == NULL) {
		AIOD_ERR("cannot re-arm the watchdog timer: systemd will restart aiod");
	}
}

static int start_watchdog(struct aiod_ctx *ctx)
{
	uint64_t usec = aiod_notify_watchdog_usec();
	struct aiod_watchdog *wd;

	if (usec == 0) {
		return 0;
	}
	wd = talloc(ctx, struct aiod_watchdog);
	if (wd == NULL) {
		return -ENOMEM;
	}
	wd->interval_usec = usec / 2 > 0 ? usec / 2 : 1;
	AIOD_INFO("systemd watchdog: a ping every %llu ms", (unsigned long long)wd->interval_usec / 1000);
	watchdog_ping(ctx->ev, NULL, tevent_timeval_current(), wd);
	return 0;
}

/* daemon() changes to /: a relative -c must be made absolute first, or SIGHUP reloads nothing. */
static const char *absolute_path(TALLOC_CTX *mem, const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/') {
		return path;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		return NULL;
	}
	return talloc_asprintf(mem, "%s/%s", cwd, path);
}

/* Into the journal with its priority when that is where stderr goes, else plainly. */
static void config_error(const char *err)
{
	if (aiod_log_stderr_is_journal()) {
		AIOD_ERR("%s", err);
	} else {
		fprintf(stderr, "aiod: %s\n", err);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'F' },
		{ "debug", required_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "check-config", no_argument, NULL, 1 },
		{ "print-defaults", no_argument, NULL, 2 },
		{ "calibrate", required_argument, NULL, 3 },
		{ "profile", required_argument, NULL, 4 },
		{ "calibrate-size", required_argument, NULL, 5 },
		{ "calibrate-seconds", required_argument, NULL, 6 },
		{ "dump-config", no_argument, NULL, 7 },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = AIOD_DEFAULT_CONFIG;
	bool foreground = false, check_only = false, config_given = false, dump_config = false;
	const char *calibrate_dir = NULL, *profile_out = NULL;
	uint64_t calibrate_size = 1ull << 30;
	double calibrate_seconds = 2.0;
	int debug = -1;
	struct aiod_ctx *ctx;
	char err[512];
	int c, ret;

	while ((c = getopt_long(argc, argv, "c:Fd:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			config_given = true;
			break;
		case 'F':
			foreground = true;
			break;
		case 'd': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 0 || v > 4) {
				fprintf(stderr, "aiod: -d: log level must be 0..4, not '%s'\n", optarg);
				return 2;
			}
			debug = (int)v;
			break;
		}
		case 'V':
			printf("aiod %s (rtio protocol %d)\n", AIOD_VERSION, RTIO_PROTO_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case 1:
			check_only = true;
			break;
		case 2:
			aiod_config_print_defaults(stdout);
			return 0;
		case 3:
			calibrate_dir = optarg;
			break;
		case 4:
			profile_out = optarg;
			break;
		case 5:
			if (rtio_size_parse(optarg, &calibrate_size) != 0 || calibrate_size < (64u << 20)) {
				fprintf(stderr, "aiod: --calibrate-size: a size of at least 64M, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 6: {
			char *end = NULL;

			errno = 0;
			calibrate_seconds = strtod(optarg, &end);
			/* "2x" or "" is a typo, not 2 or 0 s */
			if (errno != 0 || end == optarg || *end != '\0' || !(calibrate_seconds >= 0.1) ||
			    calibrate_seconds > 600) {
				fprintf(stderr, "aiod: --calibrate-seconds: 0.1..600, not '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 7:
			dump_config = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "aiod: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	ctx = talloc_zero(NULL, struct aiod_ctx);
	if (ctx == NULL) {
		fprintf(stderr, "aiod: out of memory\n");
		return 1;
	}
	ctx->listen_fd = -1;
	ctx->region.fd = -1;
	aiod_log_open(true, AIOD_LOG_NOTICE);	/* until the configuration says otherwise */
	config_path = ctx->config_path = absolute_path(ctx, config_path);
	if (config_path == NULL) {
		fprintf(stderr, "aiod: cannot make -c absolute: %s\n", strerror(errno));
		talloc_free(ctx);
		return 1;
	}
	if (calibrate_dir != NULL && !config_given && access(config_path, F_OK) != 0) {
		config_path = NULL;	/* calibrating needs no configuration */
	}
	ret = aiod_config_load(ctx, config_path, &ctx->cfg, err, sizeof(err));
	if (ret != 0) {
		config_error(err);
		talloc_free(ctx);
		return AIOD_EXIT_CONFIG;
	}
	if (dump_config) {
		ret = aiod_config_dump(ctx, stdout, ctx->cfg, config_path);
		talloc_free(ctx);
		return ret == 0 ? 0 : 1;
	}
	if (calibrate_dir != NULL) {
		ret = aiod_calibrate(ctx->cfg, calibrate_dir,
				     profile_out != NULL ? profile_out : ctx->cfg->admission_profile,
				     calibrate_size, calibrate_seconds);
		talloc_free(ctx);
		return ret == 0 ? 0 : 1;
	}
	if (check_only) {
		/* Show what the profile makes of the settings aiod.ini leaves unset. */
		aiod_tuning_setup(ctx, ctx->cfg, 0, &ctx->profile);
		printf("%s: ok\n", config_path != NULL ? config_path : "(built-in defaults)");
		talloc_free(ctx);
		return 0;
	}
	if (debug >= 0) {
		ctx->cfg->log_level = debug;
	}
	if (!foreground && daemon(0, 0) != 0) {
		fprintf(stderr, "aiod: daemon: %s\n", strerror(errno));
		talloc_free(ctx);
		return 1;
	}
	aiod_log_open(foreground, ctx->cfg->log_level);
	raise_nofile(ctx);
	mq_limits(ctx);
	/* Before the engine: its ring is made for the queue depth this settles. */
	aiod_tuning_setup(ctx, ctx->cfg, 0, &ctx->profile);

	ctx->ev = tevent_context_init(ctx);
	ctx->handlers = &aiod_handlers;
	ctx->written_back = aiod_data_written_back;
	if (ctx->ev == NULL || aiod_files_init(ctx) != 0) {
		AIOD_ERR("out of memory");
		talloc_free(ctx);
		return 1;
	}
	if (aiod_region_create(ctx, err, sizeof(err)) != 0) {
		AIOD_ERR("%s", err);
		talloc_free(ctx);
		return 1;
	}
	aiod_region_start_heartbeat(ctx);
	ctx->cache = aiod_region_cache(ctx);
	ctx->engine = ctx->cache == NULL ? NULL :
		      aiod_engine_create(ctx, ctx->ev, ctx->cfg->queue_depth, ctx->region.blocks,
					 ctx->region.block_size, ctx->region.nblocks, err,
					 sizeof(err));
	if (ctx->engine == NULL) {
		AIOD_ERR("%s", ctx->cache == NULL ? "out of memory" : err);
		aiod_region_destroy(&ctx->region);
		talloc_free(ctx);
		return 1;
	}
	aiod_engine_set_grow(ctx->engine, aiod_load_grow, ctx);
	aiod_engine_set_slice(ctx->engine, aiod_load_slice, ctx);
	aiod_engine_set_rekey(ctx->engine, aiod_load_rekey, ctx);
	aiod_engine_set_waited(ctx->engine, aiod_load_waited, ctx);
	if (aiod_qos_init(ctx, err, sizeof(err)) != 0) {
		AIOD_ERR("%s", err);
		aiod_region_destroy(&ctx->region);
		talloc_free(ctx);
		return 1;
	}
	if (tevent_add_signal(ctx->ev, ctx, SIGTERM, 0, on_signal, ctx) == NULL ||
	    tevent_add_signal(ctx->ev, ctx, SIGINT, 0, on_signal, ctx) == NULL ||
	    tevent_add_signal(ctx->ev, ctx, SIGHUP, 0, on_signal, ctx) == NULL) {
		AIOD_ERR("cannot install signal handlers");
		aiod_region_destroy(&ctx->region);
		talloc_free(ctx);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	aiod_admission_init(ctx);
	if (aiod_qos_check_policy(ctx, ctx->cfg, err, sizeof(err)) != 0) {
		AIOD_ERR("%s: %s", config_path, err);
		aiod_region_destroy(&ctx->region);
		talloc_free(ctx);
		return AIOD_EXIT_CONFIG;
	}
	if (aiod_listener_start(ctx, err, sizeof(err)) != 0) {
		AIOD_ERR("%s", err);
		aiod_region_destroy(&ctx->region);
		talloc_free(ctx);
		return 1;
	}
	AIOD_NOTICE("aiod %s ready (pid %d, config %s, queue depth %u, max I/O %u KiB)",
		    AIOD_VERSION, (int)getpid(), config_path, ctx->cfg->queue_depth,
		    ctx->cfg->max_io >> 10);
	/* Only now: smbd (ordered after aiod) can connect the moment systemd lets it start. */
	notify_or_warn("READY=1");
	notify_status(ctx, "serving");
	if (start_watchdog(ctx) != 0) {
		AIOD_ERR("out of memory");
		aiod_listener_stop(ctx);
		aiod_region_destroy(&ctx->region);
		talloc_free(ctx);
		return 1;
	}

	while (!ctx->stopping) {
		if (tevent_loop_once(ctx->ev) != 0) {
			AIOD_ERR("event loop failed: %s", strerror(errno));
			break;
		}
	}

	aiod_listener_stop(ctx);
	while (ctx->sessions != NULL) {
		aiod_session_destroy(ctx->sessions, "aiod shutting down");
	}
	/*
	 * Held write replies answer nobody now: end them while their opens
	 * (kept by them) are still there, not in talloc_free(ctx)'s order.
	 */
	aiod_data_written_back(ctx);
	/* Let the engine finish what the kernel already has, so no write is cut in half. */
	for (int i = 0; i < 1000; i++) {
		struct aiod_engine_stats es;
		aiod_engine_get_stats(ctx->engine, &es);
		if (es.inflight == 0 && es.queued == 0) {
			break;
		}
		if (tevent_loop_once(ctx->ev) != 0) {
			break;
		}
	}
	TALLOC_FREE(ctx->engine);
	aiod_region_destroy(&ctx->region);
	AIOD_NOTICE("stopped");
	talloc_free(ctx);
	return 0;
}
