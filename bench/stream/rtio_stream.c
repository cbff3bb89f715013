/*
 * rtio-stream: one paced (or greedy) reader of one file, or one paced writer
 * of a new file (--write), over its own SMB connection; prints one JSON
 * object.  See stream_opts.c for the options and pacing.h for the timeline.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pacing.h"
#include "smb_source.h"
#include "stream_opts.h"
#include "stream_run.h"
#include "timeline.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* a second signal kills: the first may be stuck inside a blocking read */
	sa.sa_flags = SA_RESETHAND;
	if (sigemptyset(&sa.sa_mask) != 0 || sigaction(SIGINT, &sa, NULL) != 0 ||
	    sigaction(SIGTERM, &sa, NULL) != 0) {
		fprintf(stderr, "rtio-stream: sigaction: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct stream_opts opts;
	struct stream_result result;
	struct smb_source *src;
	char err[512];
	char run_err[256];
	uint64_t size;
	int64_t t_open;
	int rc, crc;

	rc = stream_opts_parse(&opts, argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (install_signals() != 0)
		return 1;

	t_open = mono_now_ns();
	src = opts.write ? smb_source_create(&opts, err, sizeof(err))
			 : smb_source_open(&opts, err, sizeof(err));
	t_open = mono_now_ns() - t_open;
	if (src == NULL) {
		fprintf(stderr, "rtio-stream: %s\n", err);
		memset(&result, 0, sizeof(result));
		result.first_late_s = result.last_late_s = -1;
		result.open_ms = (double)t_open / 1e6;
		(void)stream_report_json(&opts, &result, 0, err);
		return 1;
	}

	memset(&result, 0, sizeof(result));
	result.first_late_s = result.last_late_s = -1;
	result.open_ms = (double)t_open / 1e6;
	timeline_init(&result.timeline, opts.timeline_ms);
	if (opts.greedy)
		rc = greedy_run(src, &opts, &result, &stop_requested);
	else
		rc = paced_run(src, &opts, &result, &stop_requested);
	if (rc != 0) {
		snprintf(run_err, sizeof(run_err), "%s %s after %llu chunks: %s",
			 opts.write ? "write" : "read", opts.url,
			 (unsigned long long)result.chunks, strerror(-rc));
		fprintf(stderr, "rtio-stream: %s\n", run_err);
	}
	size = smb_source_file_size(src);
	if (opts.write) {
		/* a recorder's close can fail (the last writes): report it */
		int64_t t = mono_now_ns();

		crc = smb_source_close(src);
		result.close_ms = (double)(mono_now_ns() - t) / 1e6;
		src = NULL;
		if (crc != 0 && rc == 0) {
			rc = crc;
			snprintf(run_err, sizeof(run_err), "close %s after %llu chunks: %s", opts.url,
				 (unsigned long long)result.chunks, strerror(-crc));
		}
	}
	if (stream_report_json(&opts, &result, size, rc != 0 ? run_err : NULL) != 0) {
		fprintf(stderr, "rtio-stream: writing the JSON report to stdout failed\n");
		rc = rc ? rc : -EIO;
	}
	(void)smb_source_close(src);
	stream_result_free(&result);
	return rc != 0 ? 1 : 0;
}
