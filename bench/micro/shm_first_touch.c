/*
 * What a fresh smbd pays to read aiod's cache for the first time: a shared
 * memfd is filled through one mapping (aiod's), then read through a second,
 * new mapping (a new smbd's) twice; the first pass takes the page faults,
 * the second does not. With MADV_HUGEPAGE on both mappings (and shmem huge
 * pages allowed by the system) the faults cover 2 MiB instead of 64 KiB.
 *
 *   shm_first_touch [SIZE_MIB [huge]]     prints one line of JSON
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *map(int fd, size_t size, int huge)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "shm_first_touch: mmap: %s\n", strerror(errno));
		exit(1);
	}
	if (huge && madvise(p, size, MADV_HUGEPAGE) != 0) {
		fprintf(stderr, "shm_first_touch: madvise: %s\n", strerror(errno));
	}
	return p;
}

int main(int argc, char **argv)
{
	size_t size = (size_t)(argc > 1 ? atol(argv[1]) : 1024) << 20;
	int huge = argc > 2 && strcmp(argv[2], "huge") == 0;
	int fd = memfd_create("shm-first-touch", MFD_CLOEXEC);
	char *dst = malloc(CHUNK), *owner, *reader;
	double t0, t1, t2;

	if (size == 0 || fd < 0 || dst == NULL || ftruncate(fd, (off_t)size) != 0) {
		fprintf(stderr, "usage: shm_first_touch [SIZE_MIB [huge]] (%s)\n", strerror(errno));
		return 2;
	}
	owner = map(fd, size, huge);
	memset(owner, 0x5a, size);	/* aiod's pre-fault */
	memset(dst, 0, CHUNK);
	reader = map(fd, size, huge);	/* a new smbd maps the region */
	t0 = now_ms();
	for (size_t off = 0; off < size; off += CHUNK) {
		memcpy(dst, reader + off, CHUNK);
	}
	t1 = now_ms();
	for (size_t off = 0; off < size; off += CHUNK) {
		memcpy(dst, reader + off, CHUNK);
	}
	t2 = now_ms();
	printf("{\"size_mib\": %zu, \"huge\": %d, \"first_pass_ms\": %.1f, \"second_pass_ms\": %.1f}\n",
	       size >> 20, huge, t1 - t0, t2 - t1);
	return 0;
}
