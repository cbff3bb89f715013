/*
 * Integration tests: a thin layer over libsmbclient's context API, so a
 * test can hold several independent SMB connections (one context each).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef ITEST_SMB_H
#define ITEST_SMB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <libsmbclient.h>

/* Credentials from RTIO_SMB_USER / RTIO_SMB_PASS. Exits on failure. */
SMBCCTX *itest_smb_connect(void);
void itest_smb_disconnect(SMBCCTX *ctx);

SMBCFILE *itest_smb_open(SMBCCTX *ctx, const char *url, int flags);
int itest_smb_close(SMBCCTX *ctx, SMBCFILE *f);
/* Whole transfers (loops over short ones); bytes done or -1 with errno. */
ssize_t itest_smb_pread(SMBCCTX *ctx, SMBCFILE *f, void *buf, size_t n, off_t off);
ssize_t itest_smb_pwrite(SMBCCTX *ctx, SMBCFILE *f, const void *buf, size_t n, off_t off);
int itest_smb_ftruncate(SMBCCTX *ctx, SMBCFILE *f, off_t size);
/* By name: libsmbclient's fstat fails with EINVAL on a reopened file. */
int itest_smb_size(SMBCCTX *ctx, const char *url, off_t *size);
int itest_smb_unlink(SMBCCTX *ctx, const char *url);
int itest_smb_rename(SMBCCTX *ctx, const char *from, const char *to);

/* xorshift64*: reproducible from a seed printed on failure. */
uint64_t itest_rand(uint64_t *state);
void itest_fill(uint64_t *state, uint8_t *buf, size_t n);

/* First differing offset of a and b, or -1. */
ssize_t itest_diff(const uint8_t *a, const uint8_t *b, size_t n);

#endif
