#ifndef EMUDISK_SIZE_ARG_H
#define EMUDISK_SIZE_ARG_H

#include <stdint.h>

/*
 * Parses "4096", "64K", "1M", "4G", "1T" (binary multiples, optional
 * trailing "iB" or "B").  Returns 0, or -1 for junk, zero or overflow.
 */
int size_arg_parse(const char *s, uint64_t *out);

#endif
