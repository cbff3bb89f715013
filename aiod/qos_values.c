/*
 * The values of [qos.NAME] keys: byte rates, client prefixes, client GUIDs
 * (see qos_values.h for the units and spellings), and how messages spell
 * them back.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "qos_values.h"
#include "rtio_size.h"

#define RATE_HELP "expected a byte rate like 200M (MiB/s), 200MB/s or 1600Mbit/s"

/* Copy s without surrounding blanks; -EINVAL if it does not fit. */
static int trimmed_copy(const char *s, char *buf, size_t len)
{
	size_t n;

	while (isspace((unsigned char)*s)) {
		s++;
	}
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1])) {
		n--;
	}
	if (n >= len) {
		return -EINVAL;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

/* Cut suffix (any case) off the end of buf; whether it was there. */
static bool cut_suffix(char *buf, const char *suffix)
{
	size_t n = strlen(buf);
	size_t m = strlen(suffix);

	if (n < m || strcasecmp(buf + n - m, suffix) != 0) {
		return false;
	}
	buf[n - m] = '\0';
	return true;
}

/* Decimal multiple of a bit-rate letter (k, M, G, T), 1 for none, 0 for junk. */
static uint64_t bit_multiple(const char *suffix)
{
	if (suffix[0] == '\0') {
		return 1;
	}
	if (suffix[1] != '\0') {
		return 0;
	}
	switch (toupper((unsigned char)suffix[0])) {
	case 'K': return 1000ull;
	case 'M': return 1000000ull;
	case 'G': return 1000000000ull;
	case 'T': return 1000000000000ull;
	default: return 0;
	}
}

/* "1600M" (what came before "bit"): decimal bits per second, as bytes. */
static int parse_bits(const char *s, uint64_t *Bps)
{
	unsigned long long v;
	uint64_t mul;
	char *end;

	if (!isdigit((unsigned char)s[0])) {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	mul = bit_multiple(end);
	if (errno != 0 || mul == 0 || v > AIOD_QOS_RATE_MAX * 8 / mul) {
		return -EINVAL;
	}
	*Bps = v * mul / 8;
	return 0;
}

int aiod_qos_parse_rate(const char *s, uint64_t *Bps, char *why, size_t whylen)
{
	char buf[64];
	uint64_t v = 0;
	int ret;

	if (trimmed_copy(s, buf, sizeof(buf)) != 0) {
		snprintf(why, whylen, RATE_HELP);
		return -EINVAL;
	}
	(void)cut_suffix(buf, "/s");
	if (cut_suffix(buf, "ps")) {
		snprintf(why, whylen, "'bps' is read as bits by some and bytes by others: "
			 "write 200MB/s (bytes, binary M) or 1600Mbit/s (bits, decimal M)");
		return -EINVAL;
	}
	ret = cut_suffix(buf, "bit") ? parse_bits(buf, &v) : rtio_size_parse(buf, &v);
	if (ret != 0 || v > AIOD_QOS_RATE_MAX) {
		snprintf(why, whylen, RATE_HELP ", at most 1T/s");
		return -EINVAL;
	}
	if (v == 0) {
		snprintf(why, whylen, "must be at least 1 byte/s (leave the key out for none)");
		return -EINVAL;
	}
	*Bps = v;
	return 0;
}

/* The prefix length after '/', or the whole address when there is none. */
static int parse_bits_len(const char *s, unsigned max, unsigned *bits)
{
	unsigned long v;
	char *end;

	if (s == NULL) {
		*bits = max;
		return 0;
	}
	if (!isdigit((unsigned char)s[0]) || strlen(s) > 3) {
		return -EINVAL;
	}
	v = strtoul(s, &end, 10);
	if (*end != '\0' || v > max) {
		return -EINVAL;
	}
	*bits = (unsigned)v;
	return 0;
}

/* Whether a and b agree on their first bits bits. */
static bool same_leading_bits(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8;
	unsigned rest = bits % 8;
	uint8_t mask = (uint8_t)(0xff00u >> rest);

	if (memcmp(a, b, whole) != 0) {
		return false;
	}
	return rest == 0 || ((a[whole] ^ b[whole]) & mask) == 0;
}

static bool host_bits_zero(const struct aiod_qos_prefix *p)
{
	unsigned len = p->family == AF_INET ? 4 : 16;

	for (unsigned i = p->bits; i < len * 8; i++) {
		if ((p->addr[i / 8] & (0x80u >> (i % 8))) != 0) {
			return false;
		}
	}
	return true;
}

/* ::ffff:a.b.c.d/N with N >= 96 names IPv4 a.b.c.d/(N-96): store it so. */
static void unmap_v4(struct aiod_qos_prefix *p)
{
	if (p->family != AF_INET6 || p->bits < 96 ||
	    !IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)p->addr)) {
		return;
	}
	p->family = AF_INET;
	p->bits -= 96;
	memmove(p->addr, p->addr + 12, 4);
	memset(p->addr + 4, 0, 12);
}

int aiod_qos_parse_prefix(const char *s, struct aiod_qos_prefix *out, char *why, size_t whylen)
{
	struct aiod_qos_prefix p = { 0 };
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;

	if (trimmed_copy(s, buf, sizeof(buf)) != 0) {
		goto bad;
	}
	slash = strchr(buf, '/');
	if (slash != NULL) {
		*slash++ = '\0';
	}
	p.family = strchr(buf, ':') != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(p.family, buf, p.addr) != 1 ||
	    parse_bits_len(slash, p.family == AF_INET ? 32 : 128, &p.bits) != 0) {
		goto bad;
	}
	if (!host_bits_zero(&p)) {
		snprintf(why, whylen, "address has bits set beyond the /%u prefix", p.bits);
		return -EINVAL;
	}
	unmap_v4(&p);
	*out = p;
	return 0;
bad:
	snprintf(why, whylen, "expected an IPv4 or IPv6 address or prefix like 192.0.2.0/24 or "
		 "2001:db8::/32");
	return -EINVAL;
}

bool aiod_qos_prefix_contains(const struct aiod_qos_prefix *prefix,
			      const struct sockaddr_storage *addr)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)addr;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
	const uint8_t *a;
	int family = addr->ss_family;

	if (family == AF_INET) {
		a = (const uint8_t *)&in4->sin_addr;
	} else if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		family = AF_INET;	/* a dual-stack socket's IPv4 client */
		a = (const uint8_t *)&in6->sin6_addr + 12;
	} else if (family == AF_INET6) {
		a = (const uint8_t *)&in6->sin6_addr;
	} else {
		return false;
	}
	return family == prefix->family && same_leading_bits(a, prefix->addr, prefix->bits);
}

static int hex_value(char c)
{
	if (isdigit((unsigned char)c)) {
		return c - '0';
	}
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 36 characters, dashes at 8, 13, 18 and 23, hex digits elsewhere. */
static int parse_guid36(const char *s, uint8_t guid[16])
{
	unsigned nibble = 0;

	for (unsigned i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		int h = hex_value(s[i]);

		if (dash != (s[i] == '-') || (!dash && h < 0)) {
			return -EINVAL;
		}
		if (!dash) {
			guid[nibble / 2] = (uint8_t)(nibble % 2 == 0 ? h << 4 : guid[nibble / 2] | h);
			nibble++;
		}
	}
	return 0;
}

int aiod_qos_parse_guid(const char *s, uint8_t guid[16])
{
	char buf[40];
	uint8_t g[16];
	const char *p = buf;
	size_t n;

	if (trimmed_copy(s, buf, sizeof(buf)) != 0) {
		return -EINVAL;
	}
	n = strlen(buf);
	if (n == 38 && buf[0] == '{' && buf[37] == '}') {
		buf[37] = '\0';
		p = buf + 1;
		n = 36;
	}
	if (n != 36 || parse_guid36(p, g) != 0) {
		return -EINVAL;
	}
	memcpy(guid, g, sizeof(g));
	return 0;
}

void aiod_qos_format_guid(const uint8_t g[16], char buf[AIOD_QOS_GUID_STRLEN])
{
	snprintf(buf, AIOD_QOS_GUID_STRLEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12],
		 g[13], g[14], g[15]);
}

void aiod_qos_format_bytes(uint64_t n, bool per_second, char *buf, size_t len)
{
	const char *rate = per_second ? "/s" : "";

	if (n != 0 && n % (1ull << 20) == 0) {
		snprintf(buf, len, "%llu MiB%s", (unsigned long long)(n >> 20), rate);
	} else if (n != 0 && n % 1024 == 0) {
		snprintf(buf, len, "%llu KiB%s", (unsigned long long)(n >> 10), rate);
	} else {
		snprintf(buf, len, "%llu B%s", (unsigned long long)n, rate);
	}
}

void aiod_qos_format_prefix(const struct aiod_qos_prefix *prefix, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];

	if (inet_ntop(prefix->family, prefix->addr, addr, sizeof(addr)) == NULL) {
		snprintf(addr, sizeof(addr), "?");
	}
	snprintf(buf, len, "%s/%u", addr, prefix->bits);
}

struct aiod_qos_msg aiod_qos_msg_start(char *buf, size_t len)
{
	struct aiod_qos_msg m = { buf, len, 0 };

	if (len > 0) {
		buf[0] = '\0';
	}
	return m;
}

void aiod_qos_msg_add(struct aiod_qos_msg *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->len == 0 || m->used >= m->len - 1) {
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(m->buf + m->used, m->len - m->used, fmt, ap);
	va_end(ap);
	if (n > 0) {
		m->used += (size_t)n < m->len - m->used ? (size_t)n : m->len - 1 - m->used;
	}
}
