/*
 * aiodctl doctor, the module: does this smbd load rtio.so? A module linked
 * against one Debian Samba build needs that build's symbol versions; after
 * a Samba upgrade smbd refuses every rtio share (issue 14). dlopen() with
 * RTLD_NOW resolves every symbol as smbd would and names the missing
 * version. The Samba the module was built for is read from the file itself
 * (RTIO_SAMBA_MARK), since a module that no longer loads cannot be asked.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "aiodctl_doctor.h"

#define MODULE_FIX "rebuild rtio for this Samba and reinstall it (make && sudo make install)"

/* The value after "key: " on a line of text ("MODULESDIR: /usr/lib/..."). */
static bool line_value(const char *text, const char *key, char *out, size_t outlen)
{
	const char *p = strstr(text, key);
	size_t n;

	if (p == NULL) {
		return false;
	}
	p += strlen(key);
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	snprintf(out, outlen, "%.*s", (int)n, p);
	return n > 0;
}

static bool smbd_module_path(char *out, size_t outlen)
{
	char *argv[] = { "smbd", "-b", NULL };
	char text[65536], dir[2048];

	if (aiodctl_doctor_capture(argv, text, sizeof(text)) != 0 ||
	    !line_value(text, "MODULESDIR:", dir, sizeof(dir))) {
		return false;
	}
	return snprintf(out, outlen, "%s/vfs/rtio.so", dir) < (int)outlen;
}

/* "Version 4.22.6-Debian-..." -> "4.22.6-Debian-..." */
static bool smbd_version(char *out, size_t outlen)
{
	char *argv[] = { "smbd", "--version", NULL };
	char text[256];

	return aiodctl_doctor_capture(argv, text, sizeof(text)) == 0 &&
	       line_value(text, "Version", out, outlen);
}

/* Which Samba the module was built for and which smbd is installed; "?" for either unknown. */
struct module_versions {
	char built[256];
	char running[256];
};

static void module_versions(const char *path, struct module_versions *v)
{
	if (aiodctl_doctor_module_built_for(path, v->built, sizeof(v->built)) != 0) {
		snprintf(v->built, sizeof(v->built), "?");
	}
	if (!smbd_version(v->running, sizeof(v->running))) {
		snprintf(v->running, sizeof(v->running), "?");
	}
}

/* Load it as smbd does: every symbol now, nothing leaking into later loads. */
static bool module_loads(struct aiodctl_doctor *d, const char *path,
			 const struct module_versions *v)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	bool is_module;

	if (h == NULL) {
		aiodctl_doctor_report(d, DOCTOR_FAIL, "module", MODULE_FIX,
				      "built for Samba %s, smbd is %s, and cannot load it: %s",
				      v->built, v->running, dlerror());
		return false;
	}
	is_module = dlsym(h, "samba_init_module") != NULL;
	dlclose(h);
	if (!is_module) {
		aiodctl_doctor_report(d, DOCTOR_FAIL, "module", MODULE_FIX,
				      "%s has no samba_init_module: not a Samba module", path);
	}
	return is_module;
}

/*
 * It loads. A different build of Samba that kept the symbol versions
 * (a rebuild of the same release) may still differ in what it expects,
 * hence WARN rather than OK.
 */
static void module_compare(struct aiodctl_doctor *d, const char *path,
			   const struct module_versions *v)
{
	if (strcmp(v->built, "?") == 0) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "module", MODULE_FIX,
				      "%s loads, but does not say which Samba it was built for "
				      "(built before aiodctl doctor existed)", path);
	} else if (strcmp(v->built, v->running) != 0) {
		aiodctl_doctor_report(d, DOCTOR_WARN, "module", MODULE_FIX,
				      "%s loads, but was built for Samba %s and smbd is %s", path,
				      v->built, v->running);
	} else {
		aiodctl_doctor_report(d, DOCTOR_OK, "module", NULL,
				      "%s loads; built for Samba %s, smbd is %s", path, v->built,
				      v->running);
	}
}

void aiodctl_doctor_module(struct aiodctl_doctor *d)
{
	char found[4096];
	const char *path = d->module;
	struct module_versions v;

	if (path == NULL) {
		if (!smbd_module_path(found, sizeof(found))) {
			aiodctl_doctor_report(d, DOCTOR_FAIL, "module", "install samba (smbd)",
					      "smbd -b does not run: cannot tell where modules go");
			return;
		}
		path = found;
	}
	if (access(path, R_OK) != 0) {
		aiodctl_doctor_report(d, DOCTOR_FAIL, "module", "sudo make install (or the rtio package)",
				      "%s: %s", path, strerror(errno));
		return;
	}
	module_versions(path, &v);
	if (module_loads(d, path, &v)) {
		module_compare(d, path, &v);
	}
}
