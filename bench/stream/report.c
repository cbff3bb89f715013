#include "pacing.h"
#include "stream_run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_number(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.3f", v);
	else
		fputs("null", f);
}

static void json_dist(FILE *f, const char *name, struct samples *s)
{
	fprintf(f, ",\"%s\":{\"p50\":", name);
	json_number(f, samples_quantile(s, 0.50));
	fputs(",\"p99\":", f);
	json_number(f, samples_quantile(s, 0.99));
	fputs(",\"max\":", f);
	json_number(f, samples_quantile(s, 1.0));
	fputc('}', f);
}

int stream_report_json(const struct stream_opts *o, struct stream_result *r,
		       uint64_t file_size, const char *error_text)
{
	double secs = (double)r->elapsed_ns / 1e9;
	double mbit = secs > 0 ? (double)r->bytes * 8.0 / secs / 1e6 : 0.0;
	FILE *f = stdout;

	fprintf(f, "{\"mode\":\"%s\",\"pid\":%ld,\"url\":", stream_mode_name(o),
		(long)getpid());
	json_string(f, o->url);
	fprintf(f, ",\"chunk_bytes\":%" PRIu64 ",\"duration_s\":%.3f,\"file_bytes\":%" PRIu64,
		o->chunk, o->duration_s, file_size);
	if (!o->greedy) {
		fprintf(f, ",\"bitrate_bps\":%.0f,\"prebuffer\":%u,\"period_ms\":%.3f",
			o->bitrate_bps, o->prebuffer,
			(double)o->chunk * 8.0 * 1e3 / o->bitrate_bps);
	}
	fprintf(f, ",\"open_ms\":%.1f,\"chunks\":%" PRIu64, r->open_ms, r->chunks);
	if (!o->greedy) {
		fprintf(f, ",\"misses\":%" PRIu64 ",\"misses_after_startup\":%" PRIu64
			",\"startup_s\":%.1f", r->misses, r->misses_after_startup, STARTUP_S);
		if (o->jump_every_s > 0)
			fprintf(f, ",\"jump_every_s\":%.3f,\"jumps\":%" PRIu64, o->jump_every_s, r->jumps);
		if (r->first_late_s >= 0)
			fprintf(f, ",\"first_late_s\":%.3f,\"last_late_s\":%.3f", r->first_late_s,
				r->last_late_s);
		json_dist(f, "lateness_ms", &r->lateness_ms);
	}
	json_dist(f, o->write ? "write_ms" : "read_ms", &r->read_ms);
	fprintf(f, ",\"bytes\":%" PRIu64 ",\"elapsed_s\":%.3f,\"rate_mbps\":%.3f,\"mb_per_s\":%.3f",
		r->bytes, secs, mbit, mbit / 8.0);
	if (o->write) {
		fputs(",\"close_ms\":", f);
		json_number(f, r->close_ms);
	}
	if (r->timeline.bin_ns > 0) {
		fprintf(f, ",\"timeline\":{\"t0_unix_s\":%.6f,\"bin_ms\":%u,\"bytes\":[",
			r->t0_unix_s, o->timeline_ms);
		for (size_t i = 0; i < r->timeline.n; i++)
			fprintf(f, "%s%" PRIu64, i ? "," : "", r->timeline.bytes[i]);
		fputs("]}", f);
	}
	fprintf(f, ",\"interrupted\":%s,\"error\":", r->interrupted ? "true" : "false");
	if (error_text != NULL)
		json_string(f, error_text);
	else
		fputs("null", f);
	fputs("}\n", f);
	if (fflush(f) != 0 || ferror(f))
		return -EIO;
	return 0;
}

int64_t stream_result_start(struct stream_result *r)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	r->t0_unix_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	return mono_now_ns();
}

void stream_result_free(struct stream_result *r)
{
	timeline_free(&r->timeline);
	samples_free(&r->lateness_ms);
	samples_free(&r->read_ms);
}
