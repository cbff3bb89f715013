/* stream_opts: the command line of rtio-stream. */
#ifndef STREAM_OPTS_H
#define STREAM_OPTS_H

#include <stdbool.h>
#include <stdint.h>

struct stream_opts {
	const char *url;          /* smb://host[:port]/share/path */
	char domain[128];         /* from --user DOMAIN\USER%PASS or DOMAIN/USER%PASS */
	char user[128];
	char password[256];
	double bitrate_bps;       /* decimal suffixes: 100M = 100e6 bit/s */
	uint64_t chunk;           /* bytes; binary suffixes: 1M = 1048576 */
	unsigned prebuffer;       /* chunks of slack between request and due time */
	double duration_s;
	uint64_t offset;          /* where in the file to start */
	bool greedy;
	bool random;              /* --random: greedy reads at random chunk-aligned offsets */
	bool write;               /* --write: a paced recorder of a new file */
	int debug;                /* libsmbclient debug level, to stderr */
	unsigned timeline_ms;     /* --timeline: bytes per interval in the report, 0 = none */
	bool log_late;            /* --log-late: each late chunk on stderr, with wall-clock times */
	double jump_every_s;      /* --jump-every: paced reading jumps elsewhere this often, 0 = never */
};

#define STREAM_DEFAULT_CHUNK (1u << 20)
#define STREAM_DEFAULT_GREEDY_CHUNK (8u << 20)
#define STREAM_DEFAULT_PREBUFFER 2u

/*
 * Fills o from argv.  Returns 0, 1 after printing help (exit 0), or -1 after
 * printing what was wrong (exit 2).
 */
int stream_opts_parse(struct stream_opts *o, int argc, char **argv);

/* "paced", "greedy" or "record": the JSON report's "mode". */
const char *stream_mode_name(const struct stream_opts *o);

/* Exposed for tests.  0 or -1.  (Sizes: rtio_size_parse() of common/rtio_size.h.) */
int stream_parse_bitrate(const char *s, double *bps);

#endif
