/*
 * aiodctl doctor, the shares: which smb.conf shares load rtio, and whether
 * they talk to the aiod doctor reached. testparm -s prints smb.conf as smbd
 * reads it (includes, defaults, one "key = value" per line), so doctor
 * parses that rather than smb.conf itself. A share naming another socket
 * silently does all its I/O locally: that fails the check. So does a VFS
 * module in [global] "preload modules": Samba 4.22's smbd then fails to set
 * up its default VFS and dies of a segmentation fault at every tree connect
 * ("error probing vfs module '/[Default VFS]/'"; vfs_io_uring the same).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "aiodctl_doctor.h"

#define RTIO_SHARE_DEFAULT_SOCKET "/run/aiod/aiod.sock"	/* vfs_rtio_config.h */

/* What one section of testparm's output says about rtio. */
struct share {
	char name[256];
	bool rtio;		/* "vfs objects" names rtio */
	char socket[4096];	/* rtio:socket */
};

struct shares {
	struct share global;	/* [global]: what every share inherits */
	struct share cur;
	unsigned n_rtio;
	unsigned n_astray;	/* of those, naming another socket */
	bool preload_vfs;	/* [global] preload modules names a VFS module */
	char names[1024];	/* the rtio shares, for the summary line */
};

static bool names_rtio(const char *list)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, " \t,", &save); t != NULL; t = strtok_r(NULL, " \t,", &save)) {
		if (strcmp(t, "rtio") == 0) {
			return true;
		}
	}
	return false;
}

/* The section just read is complete: judge it. */
static void share_done(struct aiodctl_doctor *d, struct shares *s)
{
	struct share *sh = &s->cur;
	size_t used = strlen(s->names);

	if (sh->name[0] == '\0' || strcmp(sh->name, "global") == 0 || !sh->rtio) {
		return;
	}
	s->n_rtio++;
	snprintf(s->names + used, sizeof(s->names) - used, "%s%s", used > 0 ? ", " : "", sh->name);
	if (strcmp(sh->socket, d->ctl->sock) != 0) {
		s->n_astray++;
		aiodctl_doctor_report(d, DOCTOR_FAIL, "shares",
				      "set rtio:socket to aiod's socket_path in smb.conf",
				      "[%s] uses rtio:socket = %s, but aiod is at %s: its I/O stays local",
				      sh->name, sh->socket, d->ctl->sock);
	}
}

/* [global] preload modules: a module under a vfs/ directory breaks every tree connect. */
static void preload_line(struct aiodctl_doctor *d, struct shares *s, const char *list)
{
	char buf[4096], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, " \t,", &save); t != NULL; t = strtok_r(NULL, " \t,", &save)) {
		if (strstr(t, "/vfs/") != NULL) {
			s->preload_vfs = true;
			aiodctl_doctor_report(d, DOCTOR_FAIL, "shares",
					      "remove it from preload modules (vfs objects loads it)",
					      "[global] preload modules = %s: smbd then crashes at every "
					      "tree connect (its default VFS is not set up)", t);
		}
	}
}

static void share_line(struct aiodctl_doctor *d, struct shares *s, char *line)
{
	size_t n = strlen(line);
	char *eq, *key, *val;

	if (n >= 2 && line[0] == '[' && line[n - 1] == ']') {
		share_done(d, s);
		s->cur = s->global;
		snprintf(s->cur.name, sizeof(s->cur.name), "%.*s", (int)(n - 2), line + 1);
		return;
	}
	eq = strstr(line, " = ");
	if (eq == NULL) {
		return;
	}
	*eq = '\0';
	key = line + strspn(line, " \t");
	val = eq + 3;
	if (strcmp(key, "preload modules") == 0 && strcmp(s->cur.name, "global") == 0) {
		preload_line(d, s, val);
	} else if (strcmp(key, "vfs objects") == 0) {
		s->cur.rtio = names_rtio(val);
	} else if (strcmp(key, "rtio:socket") == 0) {
		snprintf(s->cur.socket, sizeof(s->cur.socket), "%s", val);
	}
	if (strcmp(s->cur.name, "global") == 0) {
		s->global = s->cur;
		s->global.name[0] = '\0';
	}
}

void aiodctl_doctor_shares(struct aiodctl_doctor *d)
{
	char *argv[] = { "testparm", "-s", (char *)d->smbconf, NULL };
	static char text[1 << 20];
	struct shares s = { 0 };
	char *save = NULL;
	int ret;

	snprintf(s.global.socket, sizeof(s.global.socket), "%s", RTIO_SHARE_DEFAULT_SOCKET);
	s.cur = s.global;
	ret = aiodctl_doctor_capture(argv, text, sizeof(text));
	if (ret != 0) {
		aiodctl_doctor_report(d, DOCTOR_FAIL, "shares", "testparm -s names the error in smb.conf",
				      "testparm -s %s failed (%s %d)", d->smbconf ? d->smbconf : "",
				      ret < 0 ? "error" : "exit", ret);
		return;
	}
	for (char *l = strtok_r(text, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		share_line(d, &s, l);
	}
	share_done(d, &s);
	if (s.n_rtio == 0) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "shares", "add `vfs objects = rtio` to the media shares",
				      "no share in smb.conf loads rtio");
		return;
	}
	if (s.n_astray == 0 && !s.preload_vfs) {
		aiodctl_doctor_report(d, DOCTOR_OK, "shares", NULL, "%u with rtio, all on %s: %s",
				      s.n_rtio, d->ctl->sock, s.names);
	}
}
