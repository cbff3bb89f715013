/*
 * emudisk: a FUSE filesystem holding one file, disk.img, that behaves like a
 * single-spindle hard disk (see disk_model.h).  The bytes live in a backing
 * file on tmpfs so the host's real disk never shows through.
 *
 *   emudisk --backing=/run/x/backing/disk.raw --size=4G [--seek-ms=14.5]
 *           [--mbps=168] -f MOUNTPOINT
 *
 * MOUNTPOINT/disk.img  the emulated disk; open it with direct I/O in mind
 *                      (losetup --direct-io=on) since the page cache would
 *                      hide the model.
 * MOUNTPOINT/stats     JSON counters: request sizes as they arrived, seeks,
 *                      time charged.  Writing to it (or O_TRUNC) resets them.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <sched.h>
#include <linux/magic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "disk_model.h"
#include "rtio_size.h"

#define PROG "emudisk"
#define DISK_NAME "disk.img"
#define STATS_NAME "stats"
#define STATS_BUF_SIZE (256u * 1024u)

#define log_err(fmt, ...) fprintf(stderr, PROG ": " fmt "\n", ##__VA_ARGS__)

struct emudisk_opts {
	char *backing;
	char *size;
	double seek_ms;
	double mb_per_s;
	double anticipate_us;
	int rt_prio;
	int backing_any_fs;
	int show_help;
};

struct emudisk {
	int backing_fd;
	uint64_t disk_size;
	struct disk_model model;
};

/* The only global: FUSE's high-level API hands it back via fuse_get_context. */
static struct emudisk *emudisk_get(void)
{
	return fuse_get_context()->private_data;
}

enum emu_node { NODE_NONE, NODE_ROOT, NODE_DISK, NODE_STATS };

static enum emu_node node_of(const char *path)
{
	if (strcmp(path, "/") == 0)
		return NODE_ROOT;
	if (strcmp(path, "/" DISK_NAME) == 0)
		return NODE_DISK;
	if (strcmp(path, "/" STATS_NAME) == 0)
		return NODE_STATS;
	return NODE_NONE;
}

static void *emu_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	struct emudisk *ed = emudisk_get();

	/* The model must see every request: no page cache, no attribute games. */
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	cfg->auto_cache = 0;
	cfg->use_ino = 0;
	cfg->attr_timeout = 3600.0;
	cfg->entry_timeout = 3600.0;
	cfg->negative_timeout = 0.0;
	fprintf(stderr, PROG ": kernel proto %u.%u max_write=%u max_read=%u "
		"max_readahead=%u max_background=%u async_dio=%s\n",
		conn->proto_major, conn->proto_minor, conn->max_write,
		conn->max_read, conn->max_readahead, conn->max_background,
		(conn->want & FUSE_CAP_ASYNC_DIO) ? "on" : "off");
	return ed;
}

static int emu_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct emudisk *ed = emudisk_get();

	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	switch (node_of(path)) {
	case NODE_ROOT:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	case NODE_DISK:
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = (off_t)ed->disk_size;
		st->st_blocks = (blkcnt_t)(ed->disk_size / 512);
		st->st_blksize = 4096;
		return 0;
	case NODE_STATS:
		/* size 0: direct_io reads ignore it and read until we return 0 */
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		return 0;
	case NODE_NONE:
		break;
	}
	return -ENOENT;
}

static int emu_readdir(const char *path, void *buf, fuse_fill_dir_t filler,
		       off_t offset, struct fuse_file_info *fi,
		       enum fuse_readdir_flags flags)
{
	static const char *const names[] = { ".", "..", DISK_NAME, STATS_NAME };
	size_t i;

	(void)offset;
	(void)fi;
	(void)flags;
	if (node_of(path) != NODE_ROOT)
		return -ENOTDIR;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (filler(buf, names[i], NULL, 0, 0) != 0)
			return -ENOMEM;
	return 0;
}

struct stats_snapshot {
	size_t len;
	char text[];
};

static int stats_reset(struct emudisk *ed)
{
	struct req_stats *scratch = malloc(sizeof(*scratch));
	int rc;

	if (scratch == NULL)
		return -ENOMEM;
	rc = disk_model_stats(&ed->model, scratch, true);
	free(scratch);
	return rc;
}

static int stats_open(struct emudisk *ed, struct fuse_file_info *fi)
{
	struct stats_snapshot *snap;
	struct req_stats *st;
	size_t need;
	int rc;

	if (fi->flags & O_TRUNC) {
		rc = stats_reset(ed);
		if (rc != 0)
			return rc;
	}
	st = malloc(sizeof(*st));
	snap = malloc(sizeof(*snap) + STATS_BUF_SIZE);
	if (st == NULL || snap == NULL) {
		free(st);
		free(snap);
		return -ENOMEM;
	}
	rc = disk_model_stats(&ed->model, st, false);
	if (rc != 0) {
		free(st);
		free(snap);
		return rc;
	}
	need = req_stats_format_json(st, snap->text, STATS_BUF_SIZE);
	free(st);
	if (need >= STATS_BUF_SIZE) {
		log_err("stats JSON needs %zu bytes, buffer holds %u", need, STATS_BUF_SIZE);
		free(snap);
		return -EOVERFLOW;
	}
	snap->len = need;
	fi->fh = (uint64_t)(uintptr_t)snap;
	return 0;
}

static int emu_open(const char *path, struct fuse_file_info *fi)
{
	struct emudisk *ed = emudisk_get();

	switch (node_of(path)) {
	case NODE_DISK:
		fi->direct_io = 1;
		fi->keep_cache = 0;
		fi->fh = 0;
		return 0;
	case NODE_STATS:
		fi->direct_io = 1;
		return stats_open(ed, fi);
	case NODE_ROOT:
		return -EISDIR;
	case NODE_NONE:
		break;
	}
	return -ENOENT;
}

static int emu_release(const char *path, struct fuse_file_info *fi)
{
	if (node_of(path) == NODE_STATS)
		free((void *)(uintptr_t)fi->fh);
	return 0;
}

/* Moves the bytes, then sleeps until the model says the media is done. */
static int disk_io(struct emudisk *ed, enum disk_dir dir, char *buf, size_t size, off_t off)
{
	struct disk_req req;
	size_t done = 0;
	int rc, rc2;

	if (off < 0)
		return -EINVAL;
	if ((uint64_t)off >= ed->disk_size) {
		if (dir == DISK_READ)
			return 0;
		return -ENOSPC;
	}
	if (size > ed->disk_size - (uint64_t)off) {
		if (dir == DISK_WRITE)
			return -ENOSPC;
		size = (size_t)(ed->disk_size - (uint64_t)off);
	}
	if (size == 0)
		return 0;

	disk_req_init(&req, (uint64_t)off, size, dir);
	rc = disk_model_acquire(&ed->model, &req);
	if (rc != 0) {
		log_err("disk model acquire failed: %s", strerror(-rc));
		return rc;
	}
	while (done < size) {
		ssize_t n;

		if (dir == DISK_READ)
			n = pread(ed->backing_fd, buf + done, size - done, off + (off_t)done);
		else
			n = pwrite(ed->backing_fd, buf + done, size - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			log_err("%s backing file at %jd+%zu: %s",
				dir == DISK_READ ? "pread" : "pwrite",
				(intmax_t)(off + (off_t)done), size - done, strerror(-rc));
			break;
		}
		done += (size_t)n;
	}
	if (rc == 0) {
		rc = disk_model_wait_media(&req);
		if (rc != 0)
			log_err("clock_nanosleep: %s", strerror(-rc));
	}
	rc2 = disk_model_release(&ed->model, &req);
	if (rc2 != 0) {
		log_err("disk model release failed: %s", strerror(-rc2));
		if (rc == 0)
			rc = rc2;
	}
	return rc != 0 ? rc : (int)size;
}

static int emu_read(const char *path, char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct emudisk *ed = emudisk_get();

	switch (node_of(path)) {
	case NODE_DISK:
		return disk_io(ed, DISK_READ, buf, size, off);
	case NODE_STATS: {
		const struct stats_snapshot *snap = (const void *)(uintptr_t)fi->fh;

		if (off < 0 || (uint64_t)off >= snap->len)
			return 0;
		if (size > snap->len - (size_t)off)
			size = snap->len - (size_t)off;
		memcpy(buf, snap->text + off, size);
		return (int)size;
	}
	case NODE_ROOT:
		return -EISDIR;
	case NODE_NONE:
		break;
	}
	return -ENOENT;
}

static int emu_write(const char *path, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct emudisk *ed = emudisk_get();
	int rc;

	(void)fi;
	switch (node_of(path)) {
	case NODE_DISK:
		/* disk_io only reads from buf when writing */
		return disk_io(ed, DISK_WRITE, (char *)buf, size, off);
	case NODE_STATS:
		rc = stats_reset(ed);
		return rc != 0 ? rc : (int)size;
	case NODE_ROOT:
		return -EISDIR;
	case NODE_NONE:
		break;
	}
	return -ENOENT;
}

static int emu_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct emudisk *ed = emudisk_get();

	(void)fi;
	switch (node_of(path)) {
	case NODE_STATS:
		return stats_reset(ed);
	case NODE_DISK:
		/* a disk does not change size; accept the no-op O_TRUNC-free case */
		return (uint64_t)size == ed->disk_size ? 0 : -EPERM;
	case NODE_ROOT:
		return -EISDIR;
	case NODE_NONE:
		break;
	}
	return -ENOENT;
}

static int emu_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	/* every write already reached tmpfs before it was acknowledged */
	(void)path;
	(void)datasync;
	(void)fi;
	return 0;
}

static int emu_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

static const struct fuse_operations emudisk_ops = {
	.init = emu_init,
	.getattr = emu_getattr,
	.readdir = emu_readdir,
	.open = emu_open,
	.release = emu_release,
	.read = emu_read,
	.write = emu_write,
	.truncate = emu_truncate,
	.fsync = emu_fsync,
	.flush = emu_flush,
};

#define EMU_OPT(t, p) { t, offsetof(struct emudisk_opts, p), 1 }
static const struct fuse_opt emudisk_opt_spec[] = {
	EMU_OPT("--backing=%s", backing),
	EMU_OPT("--size=%s", size),
	EMU_OPT("--seek-ms=%lf", seek_ms),
	EMU_OPT("--mbps=%lf", mb_per_s),
	EMU_OPT("--anticipate-us=%lf", anticipate_us),
	EMU_OPT("--rt-prio=%d", rt_prio),
	EMU_OPT("--backing-any-fs", backing_any_fs),
	EMU_OPT("-h", show_help),
	EMU_OPT("--help", show_help),
	FUSE_OPT_END
};

static void usage(const char *argv0)
{
	printf("usage: %s --backing=FILE [--size=SIZE] [--seek-ms=MS] [--mbps=MB/s]\n"
	       "       [--backing-any-fs] [FUSE options] MOUNTPOINT\n"
	       "\n"
	       "  --backing=FILE    file holding the disk's bytes; must be on tmpfs\n"
	       "  --size=SIZE       disk size, e.g. 4G (binary suffixes K M G T);\n"
	       "                    default: the backing file's current size\n"
	       "  --seek-ms=MS      cost of a non-contiguous request (default 14.5)\n"
	       "  --mbps=MB/s       media transfer rate, MB = 10^6 bytes (default 168)\n"
	       "  --anticipate-us=US  how long a request that needs a seek waits for\n"
	       "                    the first half of its split kernel request (default\n"
	       "                    1000, at most seek/4; hidden inside the seek time)\n"
	       "  --rt-prio=N       SCHED_FIFO priority for the daemon's threads so host\n"
	       "                    CPU load does not reorder or delay requests (default\n"
	       "                    10; 0 keeps SCHED_OTHER)\n"
	       "  --backing-any-fs  allow a backing file that is not on tmpfs\n"
	       "\n"
	       "FUSE options follow (use -f to stay in the foreground):\n\n",
	       argv0);
}

static int open_backing(struct emudisk *ed, const struct emudisk_opts *o)
{
	struct statfs sfs;
	struct stat st;
	uint64_t want = 0;

	/* a zero-sized disk is no disk: a size of 0 is refused like junk */
	if (o->size != NULL && (rtio_size_parse(o->size, &want) != 0 || want == 0)) {
		log_err("--size=%s: expected a positive size like 4G", o->size);
		return -1;
	}
	ed->backing_fd = open(o->backing, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (ed->backing_fd < 0) {
		log_err("cannot open backing file %s: %s", o->backing, strerror(errno));
		return -1;
	}
	if (fstatfs(ed->backing_fd, &sfs) != 0) {
		log_err("fstatfs %s: %s", o->backing, strerror(errno));
		return -1;
	}
	if (sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC && !o->backing_any_fs) {
		log_err("backing file %s is not on tmpfs (f_type 0x%lx); a real disk "
			"underneath would distort the model (--backing-any-fs overrides)",
			o->backing, (unsigned long)sfs.f_type);
		return -1;
	}
	if (fstat(ed->backing_fd, &st) != 0) {
		log_err("fstat %s: %s", o->backing, strerror(errno));
		return -1;
	}
	if (want != 0 && (uint64_t)st.st_size != want &&
	    ftruncate(ed->backing_fd, (off_t)want) != 0) {
		log_err("ftruncate %s to %" PRIu64 " bytes: %s", o->backing, want,
			strerror(errno));
		return -1;
	}
	ed->disk_size = want != 0 ? want : (uint64_t)st.st_size;
	if (ed->disk_size == 0 || ed->disk_size % 4096 != 0) {
		log_err("disk size %" PRIu64 " must be a non-zero multiple of 4096 "
			"(give --size)", ed->disk_size);
		return -1;
	}
	return 0;
}

/*
 * FUSE worker threads inherit this.  They sleep nearly all the time, but when
 * a request arrives it must reach the model at once: on a loaded 2-CPU host a
 * preempted worker lets a later piece of the same kernel request overtake
 * it, and the model would charge a seek the disk never saw.
 */
static int set_rt_prio(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	if (prio == 0)
		return 0;
	if (prio < sched_get_priority_min(SCHED_FIFO) || prio > sched_get_priority_max(SCHED_FIFO)) {
		log_err("--rt-prio=%d: outside SCHED_FIFO's %d..%d (0 disables)", prio,
			sched_get_priority_min(SCHED_FIFO), sched_get_priority_max(SCHED_FIFO));
		return -1;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		log_err("sched_setscheduler(SCHED_FIFO, %d): %s; continuing without "
			"real-time priority, seeks may be overcounted under CPU load",
			prio, strerror(errno));
	return 0;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct emudisk_opts opts = {
		.seek_ms = 14.5, .mb_per_s = 168.0, .anticipate_us = 1000.0,
		.rt_prio = 10,
	};
	struct disk_model_params params;
	static struct emudisk ed = { .backing_fd = -1 };
	int rc;

	if (fuse_opt_parse(&args, &opts, emudisk_opt_spec, NULL) != 0) {
		log_err("cannot parse options");
		return 2;
	}
	if (opts.show_help) {
		usage(argv[0]);
		if (fuse_opt_add_arg(&args, "--help") != 0)
			return 2;
		args.argv[0][0] = '\0';
		rc = fuse_main(args.argc, args.argv, &emudisk_ops, NULL);
		fuse_opt_free_args(&args);
		return rc;
	}
	if (opts.backing == NULL) {
		log_err("--backing=FILE is required (a file on tmpfs)");
		return 2;
	}
	params.seek_ms = opts.seek_ms;
	params.mb_per_s = opts.mb_per_s;
	params.anticipate_us = opts.anticipate_us;
	rc = disk_model_init(&ed.model, &params);
	if (rc != 0) {
		log_err("bad model parameters --seek-ms=%g --mbps=%g --anticipate-us=%g: %s",
			opts.seek_ms, opts.mb_per_s, opts.anticipate_us, strerror(-rc));
		return 2;
	}
	if (open_backing(&ed, &opts) != 0)
		return 1;
	if (set_rt_prio(opts.rt_prio) != 0)
		return 2;
	/* default 50 us timer slack would smear a 0.39 ms transfer by 13 % */
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) != 0)
		log_err("PR_SET_TIMERSLACK: %s (continuing with default slack)",
			strerror(errno));
	fprintf(stderr, PROG ": %s size=%" PRIu64 " seek=%.3f ms rate=%.1f MB/s "
		"anticipate=%.0f us rt_prio=%d\n", opts.backing, ed.disk_size, opts.seek_ms,
		opts.mb_per_s, (double)ed.model.anticipate_ns / 1e3, opts.rt_prio);

	rc = fuse_main(args.argc, args.argv, &emudisk_ops, &ed);
	fuse_opt_free_args(&args);
	if (close(ed.backing_fd) != 0) {
		log_err("close backing file: %s", strerror(errno));
		rc = rc ? rc : 1;
	}
	disk_model_destroy(&ed.model);
	free(opts.backing);
	free(opts.size);
	return rc;
}
