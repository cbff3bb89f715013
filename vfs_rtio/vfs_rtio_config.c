/*
 * vfs_rtio: the rtio:* smb.conf parameters of a share.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   rtio:socket   = /run/aiod/aiod.sock   aiod's control socket (absolute path)
 *   rtio:timeout  = 5000                  ms to wait for aiod, 100..600000
 *   rtio:include  = *.mxf *.mov           only these share-relative names (default: all)
 *   rtio:exclude  = *.tmp                 never these
 *   rtio:fallback = yes                   aiod failure: local I/O (yes) or EIO (no)
 *   rtio:credit ceiling = yes             lower the connection's SMB2 credits to the
 *                                         ceiling aiod publishes with a QoS flow's rate
 *                                         (vfs_rtio_credits.h)
 *   rtio:write    = local                 local: smbd writes into the page cache and
 *                                         tells aiod (WROTE); aiod: data goes through
 *                                         aiod's shared buffer (WRITE0/WRITE1)
 *   rtio:register min size = 1M           files smaller at open are registered with
 *                                         aiod only when an I/O reaches this size
 *                                         (vfs_rtio_defer.h); 0: every file at open
 *   rtio:sqos     = yes                   answer MS-SQOS (FSCTL_STORAGE_QOS_CONTROL)
 *                                         from aiod's QoS policy (vfs_rtio_sqos.c);
 *                                         no: leave it to the next module
 *
 * Read once per tree connect. A bad value is logged with the parameter's name
 * and replaced by the default (or clamped), never refused: a typo must not
 * take a share offline. Shares naming the same socket share one aiod session
 * per smbd process, whose timeout is that of the first share to connect.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/smb_strtox.h"

#include <fnmatch.h>
#include <sys/un.h>

#include "rtio_size.h"
#include "vfs_rtio.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_defer.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

static const char *vfs_rtio_config_socket(int snum)
{
	struct sockaddr_un sun;
	const char *path = lp_parm_const_string(snum, MODULE_NAME, "socket",
						VFS_RTIO_DEFAULT_SOCKET);

	if (path[0] != '/' || strlen(path) >= sizeof(sun.sun_path)) {
		DBG_ERR("%s:socket = '%s' is not an absolute path shorter than %zu bytes, "
			"using %s\n", MODULE_NAME, path, sizeof(sun.sun_path),
			VFS_RTIO_DEFAULT_SOCKET);
		return VFS_RTIO_DEFAULT_SOCKET;
	}
	return path;
}

static int vfs_rtio_config_timeout(int snum)
{
	const char *value = lp_parm_const_string(snum, MODULE_NAME, "timeout", NULL);
	unsigned long ms;
	int err = 0;

	if (value == NULL) {
		return VFS_RTIO_DEFAULT_TIMEOUT_MS;
	}
	ms = smb_strtoul(value, NULL, 10, &err, SMB_STR_FULL_STR_CONV);
	if (err != 0) {
		DBG_ERR("%s:timeout = '%s' is not a number of milliseconds, using %d\n",
			MODULE_NAME, value, VFS_RTIO_DEFAULT_TIMEOUT_MS);
		return VFS_RTIO_DEFAULT_TIMEOUT_MS;
	}
	if (ms < VFS_RTIO_MIN_TIMEOUT_MS) {
		DBG_ERR("%s:timeout = %lu is below %d ms, using %d\n", MODULE_NAME, ms,
			VFS_RTIO_MIN_TIMEOUT_MS, VFS_RTIO_MIN_TIMEOUT_MS);
		return VFS_RTIO_MIN_TIMEOUT_MS;
	}
	if (ms > VFS_RTIO_MAX_TIMEOUT_MS) {
		DBG_ERR("%s:timeout = %lu is above %d ms, using %d\n", MODULE_NAME, ms,
			VFS_RTIO_MAX_TIMEOUT_MS, VFS_RTIO_MAX_TIMEOUT_MS);
		return VFS_RTIO_MAX_TIMEOUT_MS;
	}
	return (int)ms;
}

/* rtio:fallback, rtio:credit ceiling: yes or no, with a logged default for anything else. */
static bool vfs_rtio_config_bool(int snum, const char *option, bool dflt)
{
	const char *value = lp_parm_const_string(snum, MODULE_NAME, option, NULL);
	bool b = dflt;

	if (value == NULL) {
		return dflt;
	}
	if (!set_boolean(value, &b)) {
		DBG_ERR("%s:%s = '%s' is not yes or no, using %s\n", MODULE_NAME, option, value,
			dflt ? "yes" : "no");
		return dflt;
	}
	return b;
}

/* rtio:write, rtio:hits and rtio:random: who does it, local (smbd, the default: true) or aiod (false). */
static bool vfs_rtio_config_local(int snum, const char *option)
{
	const char *value = lp_parm_const_string(snum, MODULE_NAME, option, NULL);

	if (value == NULL || strequal(value, "local")) {
		return true;
	}
	if (strequal(value, "aiod")) {
		return false;
	}
	DBG_ERR("%s:%s = '%s' is not local or aiod, using local\n", MODULE_NAME, option, value);
	return true;
}

/* A size as aiod.ini spells one ("1M", "512K", "1MiB", "0"). */
static uint64_t vfs_rtio_config_register_min_size(int snum)
{
	const char *value = lp_parm_const_string(snum, MODULE_NAME, "register min size", NULL);
	uint64_t size;

	if (value == NULL) {
		return VFS_RTIO_DEFAULT_REGISTER_MIN_SIZE;
	}
	if (rtio_size_parse(value, &size) != 0) {
		DBG_ERR("%s:register min size = '%s' is not a size (such as 1M or 0), using %d\n",
			MODULE_NAME, value, VFS_RTIO_DEFAULT_REGISTER_MIN_SIZE);
		return VFS_RTIO_DEFAULT_REGISTER_MIN_SIZE;
	}
	return size;
}

/* The parameter's list lives in loadparm and may go on reload: keep a copy. */
static int vfs_rtio_config_patterns(TALLOC_CTX *mem_ctx, int snum, const char *option,
				    const char ***out)
{
	const char **list = lp_parm_string_list(snum, MODULE_NAME, option, NULL);

	*out = NULL;
	if (list == NULL || list[0] == NULL) {
		return 0;
	}
	*out = const_str_list(str_list_copy(mem_ctx, list));
	if (*out == NULL) {
		return -ENOMEM;
	}
	return 0;
}

int vfs_rtio_config_load(struct vfs_handle_struct *handle, TALLOC_CTX *mem_ctx,
			 struct vfs_rtio_config **out)
{
	int snum = SNUM(handle->conn);
	struct vfs_rtio_config *config;
	int ret;

	config = talloc_zero(mem_ctx, struct vfs_rtio_config);
	if (config == NULL) {
		return -ENOMEM;
	}
	config->socket_path = talloc_strdup(config, vfs_rtio_config_socket(snum));
	if (config->socket_path == NULL) {
		TALLOC_FREE(config);
		return -ENOMEM;
	}
	config->timeout_ms = vfs_rtio_config_timeout(snum);
	config->fallback = vfs_rtio_config_bool(snum, "fallback", true);
	config->credit_ceiling = vfs_rtio_config_bool(snum, "credit ceiling", true);
	config->write_local = vfs_rtio_config_local(snum, "write");
	config->hits_local = vfs_rtio_config_local(snum, "hits");
	config->random_local = vfs_rtio_config_local(snum, "random");
	config->case_sensitive = handle->conn->case_sensitive;
	config->register_min_size = vfs_rtio_config_register_min_size(snum);
	config->sqos = vfs_rtio_config_bool(snum, "sqos", true);
	ret = vfs_rtio_config_patterns(config, snum, "include", &config->include);
	if (ret == 0) {
		ret = vfs_rtio_config_patterns(config, snum, "exclude", &config->exclude);
	}
	if (ret != 0) {
		TALLOC_FREE(config);
		return ret;
	}
	DBG_DEBUG("socket=%s timeout=%dms fallback=%s credit ceiling=%s write=%s hits=%s random=%s "
		  "sqos=%s register min size=%" PRIu64 " include=%zu exclude=%zu patterns\n",
		  config->socket_path, config->timeout_ms, config->fallback ? "yes" : "no",
		  config->credit_ceiling ? "yes" : "no", config->write_local ? "local" : "aiod",
		  config->hits_local ? "local" : "aiod", config->random_local ? "local" : "aiod",
		  config->sqos ? "yes" : "no", config->register_min_size,
		  config->include != NULL ? str_list_length(config->include) : 0,
		  config->exclude != NULL ? str_list_length(config->exclude) : 0);
	*out = config;
	return 0;
}

static bool vfs_rtio_config_match(const char **patterns, const char *name, int flags)
{
	for (size_t i = 0; patterns[i] != NULL; i++) {
		if (fnmatch(patterns[i], name, flags) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * Patterns (fnmatch) match the whole share-relative name, and a star also
 * matches '/': "*.mxf" takes the .mxf files of every directory, and
 * "scratch/" followed by a star a whole subtree.
 */
bool vfs_rtio_config_wants(const struct vfs_rtio_config *config, const char *name)
{
	int flags = config->case_sensitive ? 0 : FNM_CASEFOLD;

	if (config->include != NULL && !vfs_rtio_config_match(config->include, name, flags)) {
		return false;
	}
	if (config->exclude != NULL && vfs_rtio_config_match(config->exclude, name, flags)) {
		return false;
	}
	return true;
}

bool vfs_rtio_fallback(struct vfs_handle_struct *handle)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return true);
	return config->fallback;
}

bool vfs_rtio_write_local(struct vfs_handle_struct *handle)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return true);
	return config->write_local;
}

bool vfs_rtio_hits_local(struct vfs_handle_struct *handle)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return false);
	return config->hits_local;
}

bool vfs_rtio_random_local(struct vfs_handle_struct *handle)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return false);
	return config->random_local;
}
