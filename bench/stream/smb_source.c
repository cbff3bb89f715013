#include "smb_source.h"

#include <errno.h>
#include <fcntl.h>
#include <libsmbclient.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct smb_source {
	SMBCCTX *ctx;
	SMBCFILE *file;
	uint64_t size;
	const struct stream_opts *opts;  /* credentials for the auth callback */
	smbc_read_fn read_fn;
	smbc_write_fn write_fn;
	smbc_lseek_fn lseek_fn;
};

static void copy_cred(char *dst, int size, const char *src)
{
	if (size > 0)
		snprintf(dst, (size_t)size, "%s", src);
}

static void auth_fn(SMBCCTX *ctx, const char *srv, const char *shr,
		    char *wg, int wglen, char *un, int unlen, char *pw, int pwlen)
{
	const struct smb_source *s = smbc_getOptionUserData(ctx);

	(void)srv;
	(void)shr;
	if (s->opts->domain[0] != '\0')
		copy_cred(wg, wglen, s->opts->domain);
	copy_cred(un, unlen, s->opts->user);
	copy_cred(pw, pwlen, s->opts->password);
}

/* A connected context (no file yet); NULL after writing the reason into err. */
static struct smb_source *source_connect(const struct stream_opts *o, char *err, size_t errlen)
{
	struct smb_source *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->opts = o;
	s->ctx = smbc_new_context();
	if (s->ctx == NULL) {
		snprintf(err, errlen, "smbc_new_context: %s", strerror(errno));
		free(s);
		return NULL;
	}
	/* stdout carries our JSON; libsmbclient must not write there */
	smbc_setOptionDebugToStderr(s->ctx, 1);
	smbc_setDebug(s->ctx, o->debug);
	smbc_setOptionUserData(s->ctx, s);
	smbc_setFunctionAuthDataWithContext(s->ctx, auth_fn);
	smbc_setOptionUseKerberos(s->ctx, 0);
	smbc_setOptionFallbackAfterKerberos(s->ctx, 1);
	/* a wrong password must fail, not silently become a guest session */
	smbc_setOptionNoAutoAnonymousLogin(s->ctx, 1);
	if (!smbc_setOptionProtocols(s->ctx, "SMB2_02", "SMB3")) {
		snprintf(err, errlen, "smbc_setOptionProtocols(SMB2_02, SMB3) refused");
		goto fail_ctx;
	}
	if (smbc_init_context(s->ctx) == NULL) {
		snprintf(err, errlen, "smbc_init_context: %s", strerror(errno));
		goto fail_ctx;
	}
	s->read_fn = smbc_getFunctionRead(s->ctx);
	s->write_fn = smbc_getFunctionWrite(s->ctx);
	s->lseek_fn = smbc_getFunctionLseek(s->ctx);
	return s;

fail_ctx:
	smbc_free_context(s->ctx, 1);
	free(s);
	return NULL;
}

static void source_free(struct smb_source *s)
{
	smbc_free_context(s->ctx, 1);
	free(s);
}

struct smb_source *smb_source_open(const struct stream_opts *o, char *err, size_t errlen)
{
	struct smb_source *s = source_connect(o, err, errlen);
	struct stat st;
	off_t pos;

	if (s == NULL)
		return NULL;
	s->file = smbc_getFunctionOpen(s->ctx)(s->ctx, o->url, O_RDONLY, 0);
	if (s->file == NULL) {
		snprintf(err, errlen, "open %s as %s: %s", o->url, o->user, strerror(errno));
		goto fail_ctx;
	}
	if (smbc_getFunctionFstat(s->ctx)(s->ctx, s->file, &st) != 0) {
		snprintf(err, errlen, "fstat %s: %s", o->url, strerror(errno));
		goto fail_file;
	}
	if (st.st_size <= 0) {
		snprintf(err, errlen, "%s is empty; nothing to stream", o->url);
		goto fail_file;
	}
	s->size = (uint64_t)st.st_size;
	pos = (off_t)(o->offset % s->size);
	if (s->lseek_fn(s->ctx, s->file, pos, SEEK_SET) != pos) {
		snprintf(err, errlen, "lseek %s to %jd: %s", o->url, (intmax_t)pos, strerror(errno));
		goto fail_file;
	}
	return s;

fail_file:
	smbc_getFunctionClose(s->ctx)(s->ctx, s->file);
fail_ctx:
	source_free(s);
	return NULL;
}

struct smb_source *smb_source_create(const struct stream_opts *o, char *err, size_t errlen)
{
	struct smb_source *s = source_connect(o, err, errlen);

	if (s == NULL)
		return NULL;
	s->file = smbc_getFunctionOpen(s->ctx)(s->ctx, o->url, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (s->file == NULL) {
		int e = errno;

		snprintf(err, errlen, "create %s as %s: %s%s", o->url, o->user, strerror(e),
			 e == EACCES || e == EPERM || e == EROFS
				 ? " (is the share writable, the directory the user's?)" : "");
		source_free(s);
		return NULL;
	}
	return s;
}

int smb_source_seek(struct smb_source *s, uint64_t off)
{
	if (s->lseek_fn(s->ctx, s->file, (off_t)off, SEEK_SET) == (off_t)-1)
		return errno != 0 ? -errno : -EIO;
	return 0;
}

int smb_source_read(struct smb_source *s, void *buf, size_t len)
{
	char *p = buf;
	int wraps = 0;

	while (len > 0) {
		ssize_t n = s->read_fn(s->ctx, s->file, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			/* EOF: two in a row without data means the file shrank to 0 */
			if (++wraps > 1)
				return -ENODATA;
			if (s->lseek_fn(s->ctx, s->file, 0, SEEK_SET) != 0)
				return -errno;
			continue;
		}
		wraps = 0;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int smb_source_write(struct smb_source *s, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = s->write_fn(s->ctx, s->file, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		s->size += (uint64_t)n;
	}
	return 0;
}

uint64_t smb_source_file_size(const struct smb_source *s)
{
	return s->size;
}

int smb_source_close(struct smb_source *s)
{
	int rc = 0;

	if (s == NULL)
		return 0;
	if (smbc_getFunctionClose(s->ctx)(s->ctx, s->file) != 0) {
		rc = -errno;
		fprintf(stderr, "rtio-stream: close %s: %s\n", s->opts->url, strerror(errno));
	}
	source_free(s);
	return rc;
}
