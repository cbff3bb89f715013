#include "req_stats.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void req_stats_clear(struct req_stats *s)
{
	memset(s, 0, sizeof(*s));
}

void req_stats_note(struct req_stats *s, int dir, uint64_t len, int seek,
		    int64_t cost_ns, int64_t wait_ns)
{
	struct req_dir_stats *d = &s->dir[dir];
	uint64_t slot = (len + REQ_STATS_UNIT - 1) / REQ_STATS_UNIT;

	if (slot >= REQ_STATS_SLOTS)
		slot = REQ_STATS_SLOTS - 1;
	d->count++;
	d->bytes += len;
	d->seeks += seek ? 1 : 0;
	d->unaligned += (len % REQ_STATS_UNIT) ? 1 : 0;
	if (len > d->max_len)
		d->max_len = len;
	d->busy_ns += cost_ns;
	d->wait_ns += wait_ns;
	if (wait_ns > d->max_wait_ns)
		d->max_wait_ns = wait_ns;
	d->by_size[slot]++;
}

/* snprintf that keeps counting past the end of buf */
struct sink {
	char *buf;
	size_t size;
	size_t used;
};

__attribute__((format(printf, 2, 3)))
static void sink_printf(struct sink *k, const char *fmt, ...)
{
	va_list ap;
	size_t room = k->used < k->size ? k->size - k->used : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? k->buf + k->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		k->used += (size_t)n;
}

static void format_dir(struct sink *k, const char *name, const struct req_dir_stats *d)
{
	const char *sep = "";
	uint32_t i;

	sink_printf(k, "\"%s\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
		    ",\"seeks\":%" PRIu64 ",\"unaligned\":%" PRIu64
		    ",\"max_len\":%" PRIu64 ",\"busy_ms\":%.3f"
		    ",\"wait_ms_total\":%.3f,\"wait_ms_max\":%.3f,\"sizes\":{",
		    name, d->count, d->bytes, d->seeks, d->unaligned, d->max_len,
		    (double)d->busy_ns / 1e6, (double)d->wait_ns / 1e6,
		    (double)d->max_wait_ns / 1e6);
	for (i = 0; i < REQ_STATS_SLOTS; i++) {
		if (d->by_size[i] == 0)
			continue;
		if (i == REQ_STATS_SLOTS - 1)
			sink_printf(k, "%s\"over\":%" PRIu64, sep, d->by_size[i]);
		else
			sink_printf(k, "%s\"%u\":%" PRIu64, sep, i * REQ_STATS_UNIT,
				    d->by_size[i]);
		sep = ",";
	}
	sink_printf(k, "}}");
}

size_t req_stats_format_json(const struct req_stats *s, char *buf, size_t size)
{
	struct sink k = { .buf = buf, .size = size, .used = 0 };

	if (size)
		buf[0] = '\0';
	sink_printf(&k, "{");
	format_dir(&k, "read", &s->dir[0]);
	sink_printf(&k, ",");
	format_dir(&k, "write", &s->dir[1]);
	sink_printf(&k, "}\n");
	return k.used;
}
