/*
 * The values of [qos.NAME] keys (qos_values.c): byte rates, client
 * addresses and prefixes, client GUIDs; and how the log spells them back.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_QOS_VALUES_H
#define AIOD_QOS_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * RATES (for aiod(8), QOS). limit, limit_read, limit_write and reserve are
 * byte rates, in bytes per second. They are written like every size in
 * aiod.ini ([cache] size, [admission] capacity): a number, then optionally
 * K, M, G or T, which are BINARY multiples (1M = 1 MiB = 1048576 bytes),
 * then optionally "i" and "B". "/s" may follow. So "200M", "200M/s",
 * "200MB/s" and "200MiB/s" all mean 200 MiB/s = 209715200 bytes/s, just as
 * "[cache] size = 200MB" means 200 MiB.
 *
 * A rate may also be given in bits per second with "bit": "1600Mbit/s" or
 * "1600Mbit". Bit multiples are DECIMAL (k = 1e3, M = 1e6, G = 1e9), as in
 * the bitrate of a [stream.NAME] class and on every network data sheet:
 * 1600Mbit/s = 200000000 bytes/s. To give a decimal byte rate, write it in
 * bytes ("200000000") or in bits.
 *
 * "bps", "Bps" and "MBps" are refused: they are read as bits by some tools
 * and as bytes by others, and a factor of eight in a limit is the mistake a
 * QoS policy must not make silently. Fractions ("1.5G") are refused like in
 * every other aiod.ini size. A [stream.NAME] bitrate stays in bits per
 * second ("100M" there is 100 Mbit/s): it describes a video format, these
 * describe a disk.
 *
 * Rates are at least 1 and at most AIOD_QOS_RATE_MAX (1 TiB/s), which keeps
 * every sum of a policy's rates far from overflowing. Returns 0 or -EINVAL
 * with what was wrong in why.
 */
#define AIOD_QOS_RATE_MAX (1ull << 40)
int aiod_qos_parse_rate(const char *s, uint64_t *Bps, char *why, size_t whylen);

/*
 * A client address prefix: "192.0.2.7" (one address: /32), "192.0.2.0/24",
 * "2001:db8::/32", "::1". Host bits beyond the prefix must be zero (a
 * "10.1.2.3/16" is more likely a typo for /24 than a wish for 10.1.0.0/16).
 * An IPv4-mapped IPv6 prefix of at least /96 is stored as the IPv4 prefix it
 * names, so it matches the IPv4 client it describes.
 */
struct aiod_qos_prefix {
	int family;		/* AF_INET or AF_INET6 */
	unsigned bits;		/* 0..32 or 0..128 */
	uint8_t addr[16];	/* network byte order; the first 4 bytes for IPv4 */
};

int aiod_qos_parse_prefix(const char *s, struct aiod_qos_prefix *out, char *why, size_t whylen);
/* Whether addr (AF_INET, AF_INET6 or IPv4-mapped AF_INET6) lies inside prefix. */
bool aiod_qos_prefix_contains(const struct aiod_qos_prefix *prefix,
			      const struct sockaddr_storage *addr);

/*
 * An SMB client GUID as Windows prints it, 8-4-4-4-12 hex digits in any
 * case, optionally in braces. The 16 bytes are the 32 hex digits in the
 * order written (RFC 4122 order): the module converts Samba's struct GUID
 * (time_low, time_mid, ... in host order) to this form, so nobody has to
 * know which fields the wire stores little-endian.
 */
#define AIOD_QOS_GUID_STRLEN 37	/* 36 characters and the NUL */
int aiod_qos_parse_guid(const char *s, uint8_t guid[16]);
void aiod_qos_format_guid(const uint8_t guid[16], char buf[AIOD_QOS_GUID_STRLEN]);

/*
 * A byte count (per_second: a rate) as the log and error messages show it:
 * "300 MiB/s" when it is a whole number of MiB, else KiB, else bytes; units
 * the parser above reads back to the same value.
 */
void aiod_qos_format_bytes(uint64_t n, bool per_second, char *buf, size_t len);
/* The prefix as "192.0.2.0/24" / "2001:db8::/32". */
void aiod_qos_format_prefix(const struct aiod_qos_prefix *prefix, char *buf, size_t len);

/* A message built piece by piece into a fixed buffer; what does not fit is cut. */
struct aiod_qos_msg {
	char *buf;
	size_t len;
	size_t used;		/* strlen(buf) */
};

struct aiod_qos_msg aiod_qos_msg_start(char *buf, size_t len);
void aiod_qos_msg_add(struct aiod_qos_msg *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
