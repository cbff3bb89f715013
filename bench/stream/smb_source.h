/*
 * smb_source: one file read over its own SMB connection (its own SMBCCTX),
 * sequentially, wrapping to the start at EOF; or (recording) one new file
 * written sequentially.  The only file that knows libsmbclient.
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

/*
 * Connects and creates o->url for writing (O_CREAT | O_TRUNC: a new, empty
 * file).  Returns NULL after writing the reason into err.
 */
struct smb_source *smb_source_create(const struct stream_opts *o, char *err, size_t errlen);

/* Fills buf with len bytes, wrapping at EOF.  0 or negative errno. */
int smb_source_read(struct smb_source *s, void *buf, size_t len);

/* Moves the read position to off (random reads).  0 or negative errno. */
int smb_source_seek(struct smb_source *s, uint64_t off);

/* Appends len bytes (a created file).  0 or negative errno. */
int smb_source_write(struct smb_source *s, const void *buf, size_t len);

/* Size at open (reading), bytes written so far (recording). */
uint64_t smb_source_file_size(const struct smb_source *s);

/* Closes the file and the connection.  0 or the close's negative errno (a
 * recorder's last writes may only fail here). */
int smb_source_close(struct smb_source *s);

#endif
