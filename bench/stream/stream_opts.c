#include "stream_opts.h"

#include "rtio_size.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "rtio-stream"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --url smb://HOST[:PORT]/SHARE/FILE --user [DOM\\]USER%%PASS\n"
		"                   [--bitrate 100M] [--chunk 1M] [--prebuffer 2]\n"
		"                   [--duration 10] [--offset 0] [--greedy [--random | --write] | --write]\n"
		"                   [--debug N] [--timeline MS] [--log-late] [--jump-every S]\n"
		"\n"
		"Paced (default): chunk k is requested at t0 + k*period and due at\n"
		"t0 + (k + prebuffer)*period, period = chunk*8/bitrate; one read in\n"
		"flight, so at most `prebuffer` chunks are ever buffered or in flight\n"
		"ahead of playback.  A chunk arriving after its due time is a miss.\n"
		"--greedy reads back to back (default chunk 8M) and reports throughput;\n"
		"with --random each read is at a random chunk-aligned offset (a scrub\n"
		"of a timeline, or a database-like small random read).\n"
		"--write records: creates (or truncates) the file and writes it\n"
		"sequentially on the same timeline: chunk k is written no earlier than\n"
		"t0 + k*period, and a write completing after t0 + (k + prebuffer)*period\n"
		"is a miss.  The file wraps to its start at EOF (reading only).\n"
		"--greedy --write is a bulk copy onto the share: it creates (or\n"
		"truncates) the file and writes it back to back (default chunk 8M),\n"
		"like a camera card offloaded next to the editors.\n"
		"One JSON object goes to stdout.\n"
		"\n"
		"  --bitrate  bit/s, decimal suffixes K M G (100M = 100,000,000)\n"
		"  --chunk    bytes, binary suffixes K M G T (1M = 1,048,576)\n"
		"  --offset   bytes into the file to start at (binary suffixes)\n"
		"  --duration seconds (fractions allowed) during which chunks are requested\n"
		"  --timeline bytes completed per MS milliseconds since t0 in the report\n"
		"             (\"timeline\": t0 on the wall clock and one count per interval)\n"
		"  --log-late a line on stderr for each late chunk: its offset, when it was\n"
		"             requested (wall clock, as aiod's log), how long the read took\n"
		"  --jump-every  paced reading only: every S seconds (fractions allowed)\n"
		"             the player jumps 0.382 of the file ahead (wrapping) and plays\n"
		"             from there on a new timeline, its prebuffer again, as an\n"
		"             editor scrubbing to another scene\n");
}

int stream_parse_bitrate(const char *s, double *bps)
{
	char *end;
	double v, mult = 1.0;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': mult = 1e3; end++; break;
	case 'm': case 'M': mult = 1e6; end++; break;
	case 'g': case 'G': mult = 1e9; end++; break;
	default: break;
	}
	if (*end != '\0' || !(v > 0.0) || !isfinite(v * mult))
		return -1;
	*bps = v * mult;
	return 0;
}

static int copy_field(char *dst, size_t size, const char *src, size_t len, const char *what)
{
	if (len >= size) {
		fprintf(stderr, PROG ": --user: %s longer than %zu bytes\n", what, size - 1);
		return -1;
	}
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

/* [DOMAIN\ or DOMAIN/]USER%PASSWORD; the password may itself contain '%' */
static int parse_user(struct stream_opts *o, const char *s)
{
	const char *pct = strchr(s, '%');
	const char *sep;
	size_t ulen;

	if (pct == NULL) {
		fprintf(stderr, PROG ": --user '%s': expected USER%%PASSWORD\n", s);
		return -1;
	}
	sep = strpbrk(s, "\\/");
	if (sep != NULL && sep < pct) {
		if (copy_field(o->domain, sizeof(o->domain), s, (size_t)(sep - s), "domain") != 0)
			return -1;
		s = sep + 1;
	}
	ulen = (size_t)(pct - s);
	if (ulen == 0) {
		fprintf(stderr, PROG ": --user: empty user name\n");
		return -1;
	}
	if (copy_field(o->user, sizeof(o->user), s, ulen, "user") != 0 ||
	    copy_field(o->password, sizeof(o->password), pct + 1, strlen(pct + 1), "password") != 0)
		return -1;
	return 0;
}

enum { OPT_URL = 256, OPT_USER, OPT_BITRATE, OPT_CHUNK, OPT_PREBUFFER,
       OPT_DURATION, OPT_OFFSET, OPT_GREEDY, OPT_RANDOM, OPT_WRITE, OPT_DEBUG, OPT_TIMELINE, OPT_LOG_LATE, OPT_JUMP_EVERY, OPT_HELP };

int stream_opts_parse(struct stream_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, OPT_URL },
		{ "user", required_argument, NULL, OPT_USER },
		{ "bitrate", required_argument, NULL, OPT_BITRATE },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "prebuffer", required_argument, NULL, OPT_PREBUFFER },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "greedy", no_argument, NULL, OPT_GREEDY },
		{ "random", no_argument, NULL, OPT_RANDOM },
		{ "write", no_argument, NULL, OPT_WRITE },
		{ "debug", required_argument, NULL, OPT_DEBUG },
		{ "timeline", required_argument, NULL, OPT_TIMELINE },
		{ "log-late", no_argument, NULL, OPT_LOG_LATE },
		{ "jump-every", required_argument, NULL, OPT_JUMP_EVERY },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	bool have_chunk = false, have_user = false, have_offset = false;
	char *end;
	long l;
	int c;

	memset(o, 0, sizeof(*o));
	o->bitrate_bps = 100e6;
	o->prebuffer = STREAM_DEFAULT_PREBUFFER;
	o->duration_s = 10.0;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_URL:
			o->url = optarg;
			break;
		case OPT_USER:
			if (parse_user(o, optarg) != 0)
				return -1;
			have_user = true;
			break;
		case OPT_BITRATE:
			if (stream_parse_bitrate(optarg, &o->bitrate_bps) != 0) {
				fprintf(stderr, PROG ": --bitrate '%s': expected a positive rate like 100M\n", optarg);
				return -1;
			}
			break;
		case OPT_CHUNK:
			if (rtio_size_parse(optarg, &o->chunk) != 0 || o->chunk == 0 ||
			    o->chunk > (64u << 20)) {
				fprintf(stderr, PROG ": --chunk '%s': expected 1..64M like 1M\n", optarg);
				return -1;
			}
			have_chunk = true;
			break;
		case OPT_PREBUFFER:
			errno = 0;
			l = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || l < 1 || l > 100000) {
				fprintf(stderr, PROG ": --prebuffer '%s': expected a chunk count >= 1\n", optarg);
				return -1;
			}
			o->prebuffer = (unsigned)l;
			break;
		case OPT_DURATION:
			errno = 0;
			o->duration_s = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || end == optarg ||
			    !(o->duration_s > 0.0 && o->duration_s < 1e6)) {
				fprintf(stderr, PROG ": --duration '%s': expected seconds > 0\n", optarg);
				return -1;
			}
			break;
		case OPT_OFFSET:
			if (rtio_size_parse(optarg, &o->offset) != 0) {
				fprintf(stderr, PROG ": --offset '%s': expected bytes like 512M\n", optarg);
				return -1;
			}
			have_offset = true;
			break;
		case OPT_GREEDY:
			o->greedy = true;
			break;
		case OPT_WRITE:
			o->write = true;
			break;
		case OPT_RANDOM:
			o->random = true;
			break;
		case OPT_DEBUG:
			errno = 0;
			l = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || l < 0 || l > 10) {
				fprintf(stderr, PROG ": --debug '%s': expected 0..10\n", optarg);
				return -1;
			}
			o->debug = (int)l;
			break;
		case OPT_TIMELINE:
			errno = 0;
			l = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || l < 1 || l > 3600000) {
				fprintf(stderr, PROG ": --timeline '%s': expected milliseconds 1..3600000\n", optarg);
				return -1;
			}
			o->timeline_ms = (unsigned)l;
			break;
		case OPT_LOG_LATE:
			o->log_late = true;
			break;
		case OPT_JUMP_EVERY:
			errno = 0;
			o->jump_every_s = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || end == optarg ||
			    !(o->jump_every_s >= 0.1 && o->jump_every_s < 1e6)) {
				fprintf(stderr, PROG ": --jump-every '%s': expected seconds >= 0.1\n", optarg);
				return -1;
			}
			break;
		case OPT_HELP:
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->url == NULL || strncmp(o->url, "smb://", 6) != 0) {
		fprintf(stderr, PROG ": --url smb://HOST[:PORT]/SHARE/FILE is required\n");
		return -1;
	}
	if (!have_user) {
		fprintf(stderr, PROG ": --user USER%%PASSWORD is required\n");
		return -1;
	}
	if (o->random && (!o->greedy || o->write)) {
		fprintf(stderr, PROG ": --random needs --greedy and no --write (random reads back to back)\n");
		return -1;
	}
	if (o->jump_every_s > 0 && (o->greedy || o->write)) {
		fprintf(stderr, PROG ": --jump-every is for paced reading (no --greedy, no --write)\n");
		return -1;
	}
	if (o->write && have_offset) {
		/* a recorder writes a new file from its start */
		fprintf(stderr, PROG ": --offset makes no sense with --write (a new file)\n");
		return -1;
	}
	if (!have_chunk)
		o->chunk = o->greedy ? STREAM_DEFAULT_GREEDY_CHUNK : STREAM_DEFAULT_CHUNK;
	return 0;
}

const char *stream_mode_name(const struct stream_opts *o)
{
	if (o->greedy && o->write)
		return "copy";
	if (o->greedy)
		return o->random ? "random" : "greedy";
	return o->write ? "record" : "paced";
}
