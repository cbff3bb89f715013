/*
 * aiodctl doctor: which Samba a module file says it was built for. Read
 * from the bytes of the file (RTIO_SAMBA_MARK, common/rtio_version.h), not
 * by loading it: the module that matters most is the one this smbd can no
 * longer load.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aiodctl_doctor.h"
#include "rtio_version.h"

int aiodctl_doctor_module_built_for(const char *path, char *out, size_t outlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const char *map, *mark;
	int ret = -ENOENT;

	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (st.st_size == 0) {
		goto out;	/* nothing to map; no mark */
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	mark = memmem(map, st.st_size, RTIO_SAMBA_MARK, strlen(RTIO_SAMBA_MARK));
	if (mark != NULL) {
		const char *v = mark + strlen(RTIO_SAMBA_MARK);

		snprintf(out, outlen, "%.*s", (int)strnlen(v, map + st.st_size - v), v);
		ret = 0;
	}
	munmap((void *)map, st.st_size);
out:
	if (fd >= 0) {
		close(fd);
	}
	return ret;
}
