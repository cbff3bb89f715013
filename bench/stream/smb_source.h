/*
 * smb_source: one file read over its own SMB connection (its own SMBCCTX),
 * sequentially, wrapping to the start at EOF.  The only file that knows
 * libsmbclient.
 */
#ifndef STREAM_SMB_SOURCE_H
#define STREAM_SMB_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "stream_opts.h"

struct smb_source;

/*
 * Connects, opens o->url read-only and positions at o->offset (modulo the
 * file size).  Returns NULL after writing the reason into err.
 */
struct smb_source *smb_source_open(const struct stream_opts *o, char *err, size_t errlen);

/* Fills buf with len bytes, wrapping at EOF.  0 or negative errno. */
int smb_source_read(struct smb_source *s, void *buf, size_t len);

uint64_t smb_source_file_size(const struct smb_source *s);

void smb_source_close(struct smb_source *s);

#endif
