/*
 * Integration tests: libsmbclient helpers (see itest_smb.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "itest_smb.h"

#define ITEST_SMB_CHUNK (1u << 20)

static const char *itest_user, *itest_pass;

/* smbc_set_credentials_with_fallback() ends in NT_STATUS_WRONG_CREDENTIAL_HANDLE here. */
static void itest_smb_auth(SMBCCTX *ctx, const char *server, const char *share,
			   char *workgroup, int wglen, char *user, int userlen,
			   char *pass, int passlen)
{
	(void)ctx;
	(void)server;
	(void)share;
	(void)workgroup;
	(void)wglen;
	snprintf(user, (size_t)userlen, "%s", itest_user);
	snprintf(pass, (size_t)passlen, "%s", itest_pass);
}

SMBCCTX *itest_smb_connect(void)
{
	SMBCCTX *ctx;

	itest_user = getenv("RTIO_SMB_USER");
	itest_pass = getenv("RTIO_SMB_PASS");
	if (itest_user == NULL || itest_pass == NULL) {
		fprintf(stderr, "RTIO_SMB_USER and RTIO_SMB_PASS must be set\n");
		exit(2);
	}
	ctx = smbc_new_context();
	if (ctx == NULL) {
		perror("smbc_new_context");
		exit(2);
	}
	smbc_setDebug(ctx, getenv("ITEST_SMB_DEBUG") != NULL ? atoi(getenv("ITEST_SMB_DEBUG")) : 0);
	smbc_setOptionUseKerberos(ctx, false);
	smbc_setOptionNoAutoAnonymousLogin(ctx, true);
	smbc_setFunctionAuthDataWithContext(ctx, itest_smb_auth);
	if (smbc_init_context(ctx) == NULL) {
		perror("smbc_init_context");
		exit(2);
	}
	return ctx;
}

void itest_smb_disconnect(SMBCCTX *ctx)
{
	smbc_free_context(ctx, 1);
}

SMBCFILE *itest_smb_open(SMBCCTX *ctx, const char *url, int flags)
{
	return smbc_getFunctionOpen(ctx)(ctx, url, flags, 0644);
}

int itest_smb_close(SMBCCTX *ctx, SMBCFILE *f)
{
	return smbc_getFunctionClose(ctx)(ctx, f);
}

static int itest_smb_seek(SMBCCTX *ctx, SMBCFILE *f, off_t off)
{
	off_t got = smbc_getFunctionLseek(ctx)(ctx, f, off, SEEK_SET);

	return got == off ? 0 : -1;
}

ssize_t itest_smb_pread(SMBCCTX *ctx, SMBCFILE *f, void *buf, size_t n, off_t off)
{
	size_t done = 0;

	if (itest_smb_seek(ctx, f, off) != 0) {
		return -1;
	}
	while (done < n) {
		/*
		 * One request per call: a large read makes libsmbclient pipeline
		 * reads past EOF, and the next request on the connection then
		 * fails with NT_STATUS_INVALID_NETWORK_RESPONSE.
		 */
		size_t chunk = n - done < ITEST_SMB_CHUNK ? n - done : ITEST_SMB_CHUNK;
		ssize_t got = smbc_getFunctionRead(ctx)(ctx, f, (uint8_t *)buf + done, chunk);

		if (got < 0) {
			return -1;
		}
		if (got == 0) {
			break;
		}
		done += (size_t)got;
	}
	return (ssize_t)done;
}

ssize_t itest_smb_pwrite(SMBCCTX *ctx, SMBCFILE *f, const void *buf, size_t n, off_t off)
{
	size_t done = 0;

	if (itest_smb_seek(ctx, f, off) != 0) {
		return -1;
	}
	while (done < n) {
		ssize_t put = smbc_getFunctionWrite(ctx)(ctx, f, (const uint8_t *)buf + done,
							 n - done);

		if (put <= 0) {
			if (put == 0) {
				errno = EIO;
			}
			return -1;
		}
		done += (size_t)put;
	}
	return (ssize_t)done;
}

int itest_smb_ftruncate(SMBCCTX *ctx, SMBCFILE *f, off_t size)
{
	return smbc_getFunctionFtruncate(ctx)(ctx, f, size);
}

int itest_smb_size(SMBCCTX *ctx, const char *url, off_t *size)
{
	struct stat st;

	if (smbc_getFunctionStat(ctx)(ctx, url, &st) != 0) {
		return -1;
	}
	*size = st.st_size;
	return 0;
}

int itest_smb_unlink(SMBCCTX *ctx, const char *url)
{
	return smbc_getFunctionUnlink(ctx)(ctx, url);
}

int itest_smb_rename(SMBCCTX *ctx, const char *from, const char *to)
{
	return smbc_getFunctionRename(ctx)(ctx, from, ctx, to);
}

uint64_t itest_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

void itest_fill(uint64_t *state, uint8_t *buf, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t r = itest_rand(state);
		memcpy(buf + i, &r, 8);
	}
	if (i < n) {
		uint64_t r = itest_rand(state);
		memcpy(buf + i, &r, n - i);
	}
}

ssize_t itest_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	if (memcmp(a, b, n) == 0) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (a[i] != b[i]) {
			return (ssize_t)i;
		}
	}
	return -1;
}
