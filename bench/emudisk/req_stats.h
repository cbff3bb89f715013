/*
 * req_stats: what arrived at the emulated disk, so a run can show which
 * request sizes the kernel (ext4 -> loop -> FUSE) really produced.
 */
#ifndef EMUDISK_REQ_STATS_H
#define EMUDISK_REQ_STATS_H

#include <stddef.h>
#include <stdint.h>

#define REQ_STATS_UNIT 512u
/* exact sizes up to 8 MiB in 512-byte steps; bigger ones land in the last slot */
#define REQ_STATS_SLOTS (8u * 1024u * 1024u / REQ_STATS_UNIT + 1u)

struct req_dir_stats {
	uint64_t count;
	uint64_t bytes;
	uint64_t seeks;
	uint64_t unaligned;          /* length not a multiple of REQ_STATS_UNIT */
	uint64_t max_len;
	int64_t busy_ns;             /* seek + transfer time charged */
	int64_t wait_ns;             /* arrival -> start, summed */
	int64_t max_wait_ns;
	uint64_t by_size[REQ_STATS_SLOTS];
};

struct req_stats {
	struct req_dir_stats dir[2]; /* indexed by enum disk_dir */
};

void req_stats_clear(struct req_stats *s);
void req_stats_note(struct req_stats *s, int dir, uint64_t len, int seek,
		    int64_t cost_ns, int64_t wait_ns);

/*
 * Formats s as one JSON object into buf (NUL-terminated).  Returns the
 * length that was needed, like snprintf; a result >= size means truncated.
 */
size_t req_stats_format_json(const struct req_stats *s, char *buf, size_t size);

#endif
