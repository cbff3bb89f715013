/*
 * aiodctl cat and write: file data through aiod, as smbd moves it. FILE is
 * opened by aiodctl itself, as the invoking user, and its descriptor passed
 * to aiod: aiod never opens paths.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aiodctl.h"

#define CHUNK (1 << 20)

/* Register path's descriptor fd with aiod; aiod keeps its own reference, fd is closed. */
static int register_fd(struct aiodctl *ctl, int fd, const char *path, uint32_t flags,
		       struct rtio_file *f)
{
	struct rtio_client *c = aiodctl_client(ctl);
	int ret;

	if (c == NULL) {
		close(fd);
		return -1;
	}
	ret = rtio_client_open(c, fd, path, flags, f);
	close(fd);
	if (ret < 0) {
		fprintf(stderr, "aiodctl: registering %s with aiod: %s\n", path, strerror(-ret));
		return -1;
	}
	return 0;
}

/* Copy up to len bytes from off to stdout; AIODCTL_EXIT_*. */
static int copy_out(struct rtio_client *c, const struct rtio_file *f, const char *path,
		    unsigned long long off, unsigned long long len, char *buf)
{
	while (len > 0) {
		size_t want = len < CHUNK ? (size_t)len : CHUNK;
		ssize_t n = rtio_client_pread(c, f->file_id, buf, want, (off_t)off);

		if (n < 0) {
			fprintf(stderr, "aiodctl: reading %s at %llu: %s\n", path, off,
				strerror((int)-n));
			return AIODCTL_EXIT_FAIL;
		}
		if (n == 0) {
			break;
		}
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) {
			fprintf(stderr, "aiodctl: writing stdout: %s\n", strerror(errno));
			return AIODCTL_EXIT_FAIL;
		}
		off += (unsigned long long)n;
		len -= (unsigned long long)n;
	}
	return fflush(stdout) == 0 ? AIODCTL_EXIT_OK : AIODCTL_EXIT_FAIL;
}

int aiodctl_cmd_cat(struct aiodctl *ctl, int argc, char **argv)
{
	unsigned long long off = 0, len = ~0ull;
	struct rtio_file f;
	char *buf;
	int fd, ret, rc;

	if (argc < 2 || argc > 4 || (argc > 2 && aiodctl_parse_u64(argv[2], "OFFSET", &off) != 0) ||
	    (argc > 3 && aiodctl_parse_u64(argv[3], "LENGTH", &len) != 0)) {
		return aiodctl_usage_of(argv[0]);
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "aiodctl: %s: %s\n", argv[1], strerror(errno));
		return AIODCTL_EXIT_FAIL;
	}
	if (register_fd(ctl, fd, argv[1], 0, &f) != 0) {
		return AIODCTL_EXIT_FAIL;
	}
	buf = malloc(CHUNK);
	if (buf == NULL) {
		return aiodctl_fail("cat", -ENOMEM);
	}
	rc = copy_out(ctl->c, &f, argv[1], off, len, buf);
	free(buf);
	ret = rtio_client_close(ctl->c, f.file_id);
	if (ret < 0) {
		return aiodctl_fail("close", ret);
	}
	return rc;
}

/* Copy stdin to the file from off; AIODCTL_EXIT_*. */
static int copy_in(struct rtio_client *c, const struct rtio_file *f, const char *path,
		   unsigned long long off, char *buf)
{
	for (;;) {
		size_t n = fread(buf, 1, CHUNK, stdin);
		ssize_t w;

		if (n == 0) {
			return ferror(stdin) ? aiodctl_fail("reading stdin", -EIO) : AIODCTL_EXIT_OK;
		}
		w = rtio_client_pwrite(c, f->file_id, buf, n, (off_t)off);
		if (w < 0 || (size_t)w != n) {
			fprintf(stderr, "aiodctl: writing %s at %llu: %s\n", path, off,
				w < 0 ? strerror((int)-w) : "short write");
			return AIODCTL_EXIT_FAIL;
		}
		off += n;
	}
}

int aiodctl_cmd_write(struct aiodctl *ctl, int argc, char **argv)
{
	unsigned long long off = 0;
	struct rtio_file f;
	char *buf;
	int fd, ret, rc;

	if (argc < 2 || argc > 3 || (argc > 2 && aiodctl_parse_u64(argv[2], "OFFSET", &off) != 0)) {
		return aiodctl_usage_of(argv[0]);
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "aiodctl: %s: %s\n", argv[1], strerror(errno));
		return AIODCTL_EXIT_FAIL;
	}
	if (register_fd(ctl, fd, argv[1], RTIO_OPEN_WRITABLE, &f) != 0) {
		return AIODCTL_EXIT_FAIL;
	}
	buf = malloc(CHUNK);
	if (buf == NULL) {
		return aiodctl_fail("write", -ENOMEM);
	}
	rc = copy_in(ctl->c, &f, argv[1], off, buf);
	free(buf);
	ret = rtio_client_close(ctl->c, f.file_id);
	if (ret < 0) {
		return aiodctl_fail("close", ret);
	}
	return rc;
}
