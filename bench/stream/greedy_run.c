#include "pacing.h"
#include "payload.h"
#include "stream_run.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* --random: the next chunk-aligned offset (xorshift64; one stream per process is enough) */
static int random_seek(struct smb_source *src, uint64_t chunk, uint64_t *state)
{
	uint64_t nchunks = smb_source_file_size(src) / chunk;

	if (nchunks == 0)
		return -EINVAL;	/* smaller than one chunk: nowhere to seek to */
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return smb_source_seek(src, (*state % nchunks) * chunk);
}

/* Reads (or, a bulk copy, writes) one chunk after another, as fast as the server goes. */
int greedy_run(struct smb_source *src, const struct stream_opts *o,
	       struct stream_result *r, volatile sig_atomic_t *stop)
{
	int64_t t0, end_ns;
	uint64_t rnd = (((uint64_t)time(NULL) * 2654435761u) ^ ((uint64_t)getpid() << 32)) | 1;
	char *buf;
	int rc = 0;

	buf = malloc(o->chunk);
	if (buf == NULL)
		return r->error = -ENOMEM;
	if (o->write)
		payload_fill(buf, o->chunk);
	t0 = stream_result_start(r);
	end_ns = t0 + (int64_t)(o->duration_s * 1e9);

	while (!*stop && mono_now_ns() < end_ns) {
		int64_t started = mono_now_ns(), arrived;

		if (o->random && (rc = random_seek(src, o->chunk, &rnd)) != 0)
			break;
		if (o->write) {
			payload_stamp(buf, o->chunk, r->chunks);
			rc = smb_source_write(src, buf, o->chunk);
		} else {
			rc = smb_source_read(src, buf, o->chunk);
		}
		arrived = mono_now_ns();
		if (rc != 0)
			break;
		r->chunks++;
		r->bytes += o->chunk;
		r->elapsed_ns = arrived - t0;
		if (timeline_add(&r->timeline, arrived - t0, o->chunk) != 0) {
			rc = -ENOMEM;
			break;
		}
		if (samples_add(&r->read_ms, (double)(arrived - started) / 1e6) != 0) {
			rc = -ENOMEM;
			break;
		}
	}
	r->interrupted = *stop != 0;
	free(buf);
	r->error = rc;
	return rc;
}
