/*
 * payload: what rtio-stream writes (a recorder, a bulk copy). Bytes that look
 * incompressible (xorshift), each chunk stamped with its number so no two
 * chunks are alike: nothing on the way can shortcut them as zeros or
 * duplicates.
 */
#ifndef STREAM_PAYLOAD_H
#define STREAM_PAYLOAD_H

#include <stdint.h>

/* Fills len bytes of buf with the pattern (once per run). */
void payload_fill(char *buf, uint64_t len);

/* Stamps chunk number k into the chunk's first bytes (before each write). */
void payload_stamp(char *buf, uint64_t len, uint64_t k);

#endif
