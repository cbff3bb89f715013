#include "payload.h"

#include <string.h>

void payload_fill(char *buf, uint64_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15ull, i;

	for (i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
}

void payload_stamp(char *buf, uint64_t len, uint64_t k)
{
	memcpy(buf, &k, len < sizeof(k) ? len : sizeof(k));
}
