/*
 * aiodctl doctor: the checks of a deployment, each in a small function,
 * grouped by what they look at (aiodctl_doctor_module.c: rtio.so against
 * this smbd, with aiodctl_doctor_mark.c; aiodctl_doctor_ini.c: aiod.ini;
 * aiodctl_doctor_shares.c: smb.conf through testparm;
 * aiodctl_doctor_host.c: kernel settings, aiod's limits, the device
 * profile, streams waiting for room). aiodctl_doctor.c runs them and
 * keeps the score.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIODCTL_DOCTOR_H
#define AIODCTL_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "aiodctl.h"

enum aiodctl_doctor_level { DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL };

struct aiodctl_doctor {
	struct aiodctl *ctl;
	const char *module;	/* --module, or NULL: rtio.so in smbd's MODULESDIR/vfs */
	const char *smbconf;	/* --smbconf, or NULL: testparm's default smb.conf */
	const char *config;	/* -c: aiod.ini, for [cache] mlock and [admission] profile */
	bool have_aiod;		/* aiod answered STATS and INFO: the two below are valid */
	struct rtio_stats_rep stats;
	struct rtio_info_rep info;
	unsigned warns, fails;
};

/* One result line: "LEVEL check: what" then, unless OK, "      fix: ..." */
void aiodctl_doctor_report(struct aiodctl_doctor *d, enum aiodctl_doctor_level level,
			   const char *check, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * Run argv (no shell) and read its standard output into out (NUL-terminated,
 * cut to fit); stderr goes to /dev/null. The exit status, or -errno when it
 * could not run.
 */
int aiodctl_doctor_capture(char *const argv[], char *out, size_t outlen);

/* aiodctl_doctor_ini.c: the value of [section] key in an ini file: 1, 0 if absent, -errno. */
int aiodctl_doctor_ini_get(const char *path, const char *section, const char *key,
			   char *out, size_t outlen);

/* aiodctl_doctor_module.c */
void aiodctl_doctor_module(struct aiodctl_doctor *d);
/* aiodctl_doctor_mark.c: the Samba version a module file says it was built for (RTIO_SAMBA_MARK); 0, -ENOENT, -errno. */
int aiodctl_doctor_module_built_for(const char *path, char *out, size_t outlen);
/* aiodctl_doctor_shares.c */
void aiodctl_doctor_shares(struct aiodctl_doctor *d);
/* aiodctl_doctor_host.c */
void aiodctl_doctor_hugepages(struct aiodctl_doctor *d);
void aiodctl_doctor_mqueue(struct aiodctl_doctor *d);
void aiodctl_doctor_memlock(struct aiodctl_doctor *d);
void aiodctl_doctor_profile(struct aiodctl_doctor *d);
void aiodctl_doctor_admission(struct aiodctl_doctor *d);

#endif
