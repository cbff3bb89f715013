/*
 * aiodctl doctor, the host: kernel settings aiod benefits from (huge pages
 * for the shared cache, deeper and more message queues), whether the
 * running aiod may lock its cache, whether [admission] has a device
 * profile, and whether streams wait for room on the device. aiod's pid
 * comes from INFO, its limits and capabilities from /proc, so doctor
 * judges the daemon as it runs, not the shell it runs in.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aiodctl_doctor.h"

/* conf/90-rtio-mqueue.conf: keep these equal to it (t_doctor.sh checks). */
#define WANT_MSG_MAX	64
#define WANT_QUEUES_MAX	4096

#define CAP_BIT_IPC_LOCK	14	/* linux/capability.h */
#define CAP_BIT_SYS_RESOURCE	24

#define PROFILE_DEFAULT "/var/lib/aiod/device.profile"	/* aiod/config.c */

/* A small /proc or /sys file, NUL-terminated; -errno. */
static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		return -errno;
	}
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

/* Whether process pid has capability bit in its effective set: 1, 0, -errno. */
static int proc_has_cap(uint32_t pid, int bit)
{
	char path[64], text[4096], *p;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", pid);
	if (read_text(path, text, sizeof(text)) < 0) {
		return -errno;
	}
	p = strstr(text, "CapEff:");
	if (p == NULL) {
		return -EINVAL;
	}
	return (strtoull(p + strlen("CapEff:"), NULL, 16) >> bit) & 1;
}

void aiodctl_doctor_hugepages(struct aiodctl_doctor *d)
{
	static const char path[] = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
	char text[256], *open_b, *close_b;

	if (read_text(path, text, sizeof(text)) < 0 || (open_b = strchr(text, '[')) == NULL ||
	    (close_b = strchr(open_b, ']')) == NULL) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "hugepages", "a kernel with transparent huge pages",
				      "%s unreadable: the cache uses 4 KiB pages", path);
		return;
	}
	*close_b = '\0';
	if (strcmp(open_b + 1, "never") == 0 || strcmp(open_b + 1, "deny") == 0) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "hugepages",
				      "echo advise > /sys/kernel/mm/transparent_hugepage/shmem_enabled "
				      "(and make it permanent: aiod(8))",
				      "shmem_enabled is %s: every smbd faults the cache in 4 KiB pages",
				      open_b + 1);
		return;
	}
	aiodctl_doctor_report(d, DOCTOR_OK, "hugepages", NULL, "shmem_enabled is %s", open_b + 1);
}

static long read_sysctl(const char *path)
{
	char text[64];

	return read_text(path, text, sizeof(text)) == 0 ? strtol(text, NULL, 10) : -1;
}

/* What a missing CAP_SYS_RESOURCE costs: said either way, it explains socket-pair sessions. */
static const char *mqueue_cap_note(const struct aiodctl_doctor *d)
{
	if (!d->have_aiod) {
		return "";
	}
	if (proc_has_cap(d->info.pid, CAP_BIT_SYS_RESOURCE) == 1) {
		return "; aiod has CAP_SYS_RESOURCE";
	}
	return "; aiod lacks CAP_SYS_RESOURCE: past queues_max and RLIMIT_MSGQUEUE its sessions "
	       "use socket pairs (they work; see common/rtio_queue.h)";
}

void aiodctl_doctor_mqueue(struct aiodctl_doctor *d)
{
	long msg_max = read_sysctl("/proc/sys/fs/mqueue/msg_max");
	long queues_max = read_sysctl("/proc/sys/fs/mqueue/queues_max");
	bool low = msg_max < WANT_MSG_MAX || queues_max < WANT_QUEUES_MAX;

	aiodctl_doctor_report(d, low ? DOCTOR_WARN : DOCTOR_OK, "mqueue",
			      "install /etc/sysctl.d/90-rtio-mqueue.conf and run sudo sysctl --system",
			      "fs.mqueue.msg_max = %ld (want >= %d), fs.mqueue.queues_max = %ld "
			      "(want >= %d)%s", msg_max, WANT_MSG_MAX, queues_max, WANT_QUEUES_MAX,
			      mqueue_cap_note(d));
}

/* "Max locked memory   SOFT   HARD   bytes": the soft limit, UINT64_MAX for unlimited. */
static int aiod_memlock(uint32_t pid, uint64_t *limit)
{
	char path[64], text[8192], *p, soft[32];

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/limits", pid);
	if (read_text(path, text, sizeof(text)) < 0) {
		return -errno;
	}
	p = strstr(text, "Max locked memory");
	if (p == NULL || sscanf(p + strlen("Max locked memory"), "%31s", soft) != 1) {
		return -EINVAL;
	}
	*limit = strcmp(soft, "unlimited") == 0 ? UINT64_MAX : strtoull(soft, NULL, 10);
	return 0;
}

static bool config_mlock(const struct aiodctl_doctor *d)
{
	char v[32];

	if (aiodctl_doctor_ini_get(d->config, "cache", "mlock", v, sizeof(v)) != 1) {
		return true;	/* aiod's default */
	}
	return !(strcmp(v, "no") == 0 || strcmp(v, "false") == 0 || strcmp(v, "off") == 0 ||
		 strcmp(v, "0") == 0);
}

void aiodctl_doctor_memlock(struct aiodctl_doctor *d)
{
	uint64_t cache, limit;

	if (!d->have_aiod) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "memlock", "start aiod, then run doctor again",
				      "aiod not reachable: its memlock limit is unknown");
		return;
	}
	cache = d->stats.blocks_total * d->info.block_size;
	if (!config_mlock(d)) {
		aiodctl_doctor_report(d, DOCTOR_OK, "memlock", NULL,
				      "[cache] mlock = no in %s: the %" PRIu64 " MiB cache may be swapped",
				      d->config, cache >> 20);
		return;
	}
	if (proc_has_cap(d->info.pid, CAP_BIT_IPC_LOCK) == 1) {
		aiodctl_doctor_report(d, DOCTOR_OK, "memlock", NULL,
				      "aiod has CAP_IPC_LOCK: its %" PRIu64 " MiB cache is locked",
				      cache >> 20);
		return;
	}
	if (aiod_memlock(d->info.pid, &limit) != 0 || limit < cache) {
		aiodctl_doctor_report(d, DOCTOR_FAIL, "memlock",
				      "LimitMEMLOCK=infinity in aiod.service, or [cache] mlock = no",
				      "aiod (pid %u) may not lock its %" PRIu64 " MiB cache: "
				      "RLIMIT_MEMLOCK unknown or smaller, no CAP_IPC_LOCK",
				      d->info.pid, cache >> 20);
		return;
	}
	aiodctl_doctor_report(d, DOCTOR_OK, "memlock", NULL,
			      "RLIMIT_MEMLOCK of aiod holds its %" PRIu64 " MiB cache", cache >> 20);
}

void aiodctl_doctor_profile(struct aiodctl_doctor *d)
{
	char path[4096];
	int ret = aiodctl_doctor_ini_get(d->config, "admission", "profile", path, sizeof(path));

	if (ret < 0) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "profile", "give doctor aiod's config: -c PATH",
				      "cannot read %s: %s", d->config, strerror(-ret));
		return;
	}
	if (ret == 0) {
		snprintf(path, sizeof(path), "%s", PROFILE_DEFAULT);
	}
	if (access(path, R_OK) != 0) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "profile",
				      "aiod --calibrate DIR (on the media filesystem), then restart aiod",
				      "no device profile at %s: admission cannot tell what the disk "
				      "sustains and aiod uses generic tuning", path);
		return;
	}
	aiodctl_doctor_report(d, DOCTOR_OK, "profile", NULL, "device profile %s", path);
}

/*
 * Streams admission demoted and that still wait for room: clips that play
 * as best effort (they stutter next to streams that use their reservation)
 * until an admitted stream closes. aiod logs each one; this says it is
 * happening now.
 */
void aiodctl_doctor_admission(struct aiodctl_doctor *d)
{
	const struct rtio_stats_rep *st = &d->stats;

	if (!d->have_aiod) {
		return;	/* the aiod check said why */
	}
	if (st->admission_waiting > 0) {
		char owed[128] = "";

		/* Streams opened together: the ones waiting go in once the others have started. */
		if (st->startup_debt > 0) {
			snprintf(owed, sizeof(owed), "; the streams that started still owe %.1f MB of "
				 "their windows ([admission] startup_s): admitted once that is paid",
				 st->startup_debt / 1e6);
		}
		aiodctl_doctor_report(d, DOCTOR_WARN, "admission",
				      "fewer streams at once or a faster device; [admission] mode = "
				      "refuse turns the extra ones away at open instead",
				      "%" PRIu64 " class stream(s) served best effort, waiting for room: "
				      "%" PRIu64 " admitted reserve %.1f of %.1f MB/s (%" PRIu64
				      " demoted since aiod started)%s",
				      st->admission_waiting, st->streams, st->reserved_Bps / 1e6,
				      st->capacity_Bps / 1e6, st->admission_demoted, owed);
		return;
	}
	aiodctl_doctor_report(d, DOCTOR_OK, "admission", NULL,
			      "%" PRIu64 " streams admitted, reserving %.1f of %.1f MB/s; none waiting",
			      st->streams, st->reserved_Bps / 1e6, st->capacity_Bps / 1e6);
}
