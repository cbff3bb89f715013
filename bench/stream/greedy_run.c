#include "pacing.h"
#include "stream_run.h"

#include <errno.h>
#include <stdlib.h>

int greedy_run(struct smb_source *src, const struct stream_opts *o,
	       struct stream_result *r, volatile sig_atomic_t *stop)
{
	int64_t t0, end_ns;
	char *buf;
	int rc = 0;

	buf = malloc(o->chunk);
	if (buf == NULL)
		return r->error = -ENOMEM;
	t0 = mono_now_ns();
	end_ns = t0 + (int64_t)(o->duration_s * 1e9);

	while (!*stop && mono_now_ns() < end_ns) {
		int64_t started = mono_now_ns(), arrived;

		rc = smb_source_read(src, buf, o->chunk);
		arrived = mono_now_ns();
		if (rc != 0)
			break;
		r->chunks++;
		r->bytes += o->chunk;
		r->elapsed_ns = arrived - t0;
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
