/*
 * libFuzzer target for the message decoder: whatever bytes arrive, verify
 * must not crash, and anything it accepts must be exactly what the opcode
 * table describes.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtio_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int reply = 0; reply <= 1; reply++) {
		/* Copy into an exact-size buffer so ASan catches any over-read. */
		uint8_t *buf = malloc(size ? size : 1);
		struct rtio_hdr h;

		if (buf == NULL) {
			return 0;
		}
		memcpy(buf, data, size);
		if (rtio_msg_verify(buf, size, reply) == 0) {
			memcpy(&h, buf, sizeof(h));
			if (h.magic != RTIO_MAGIC || h.length != size ||
			    rtio_msg_expected_len(h.opcode, reply) != size ||
			    !!(h.flags & RTIO_F_REPLY) != reply) {
				abort();
			}
			if (reply && (h.opcode == RTIO_OP_READ0 || h.opcode == RTIO_OP_WRITE0) &&
			    ((const struct rtio_io_rep *)(const void *)buf)->nseg > RTIO_MAX_SEGS) {
				abort();
			}
			(void)rtio_op_name(h.opcode);
		}
		free(buf);
	}
	return 0;
}
