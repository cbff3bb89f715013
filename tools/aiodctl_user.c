/*
 * User names for sessions. smbd switches its effective uid to the user a
 * request is for and keeps it between requests, so the effective uid is the
 * best guess aiodctl has on its own; `smbstatus -j`, joined by pid, is the
 * authority (aiodctl(8)).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "aiodctl_user.h"

uint32_t aiodctl_proc_euid(pid_t pid, uint32_t fallback)
{
	char path[64], line[256];
	unsigned ruid, euid;
	uint32_t ret = fallback;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL) {
		return fallback;	/* gone, or another pid namespace */
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2) {
			ret = euid;
			break;
		}
	}
	(void)fclose(f);	/* read only: nothing to lose */
	return ret;
}

void aiodctl_user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char scratch[1024];

	if (getpwuid_r((uid_t)uid, &pw, scratch, sizeof(scratch), &res) == 0 && res != NULL) {
		snprintf(buf, len, "%s", res->pw_name);
	} else {
		snprintf(buf, len, "%u", uid);
	}
}
