/*
 * rtio wire protocol between vfs_rtio (in smbd) and aiod.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Two transports carry the same message format:
 *
 *  - the control socket (AF_UNIX, SOCK_SEQPACKET, path from aiod.ini): CONNECT,
 *    DISCONNECT, OPEN, CLOSE, FTRUNCATE, UNLINK, INVALIDATE, STATS, FILE_STATS,
 *    SESSION_STATS, INFO. These are rare and some
 *    carry descriptors (SCM_RIGHTS): aiod never opens a path a client names, it
 *    works on the descriptor smbd already opened with the user's rights.
 *    STATS, FILE_STATS, SESSION_STATS, INFO and DISCONNECT are answered before CONNECT too
 *    (monitoring needs no session); anything else before CONNECT closes the
 *    connection.
 *  - per-session POSIX message queues (request and reply): READ0, READ1, WRITE0,
 *    WRITE1, FSYNC, WROTE. Data never travels through a queue; it sits in the
 *    shared buffer and messages carry offsets into it (paper 3.1.1).
 *
 * Every message starts with struct rtio_hdr. Numbers are host-endian (both ends
 * run on the same host). Results are 0/positive on success, -errno on failure.
 * Opcode numbers are never reused once retired.
 */
#ifndef RTIO_PROTO_H
#define RTIO_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define RTIO_MAGIC          0x4f495452u	/* "RTIO" in memory order */
#define RTIO_PROTO_VERSION  1

/* Largest message on either transport; the queues are created with this msgsize. */
#define RTIO_MSG_MAX        512
/* Scatter list of one READ0/WRITE0 reply: data spans at most this many cache blocks. */
#define RTIO_MAX_SEGS       16
/* Share-relative name passed at OPEN for stream-class matching and logs only. */
#define RTIO_NAME_MAX       256

enum rtio_op {
	RTIO_OP_CONNECT    = 1,
	RTIO_OP_DISCONNECT = 2,
	RTIO_OP_OPEN       = 3,
	RTIO_OP_CLOSE      = 4,
	RTIO_OP_READ0      = 5,	/* read into the shared buffer, pin it */
	RTIO_OP_READ1      = 6,	/* client copied the data out: unpin (no reply) */
	RTIO_OP_WRITE0     = 7,	/* reserve shared buffer space for a write */
	RTIO_OP_WRITE1     = 8,	/* client filled it: write to the file, reply when in the kernel */
	RTIO_OP_FTRUNCATE  = 9,
	RTIO_OP_UNLINK     = 10,	/* a file was removed: forget its cached blocks */
	RTIO_OP_FSYNC      = 11,
	RTIO_OP_STATS      = 12,
	RTIO_OP_FILE_STATS = 13,
	RTIO_OP_INVALIDATE = 14,	/* the client changed a range behind aiod: drop it */
	RTIO_OP_WROTE      = 15,	/* queue: the client wrote a range itself; reply when aiod's cache agrees */
	RTIO_OP_SESSION_STATS = 16,	/* the index-th connected session (aiodctl sessions) */
	RTIO_OP_INFO       = 17,	/* aiod's version and uptime, and the index-th stream class */
	RTIO_OP_QOS_BIND   = 18,	/* which QoS flow a principal's (or a file's) I/O is paced by */
	RTIO_OP_QOS_LIST   = 19,	/* the index-th QoS flow in use (aiodctl qos) */
	RTIO_OP_HIT        = 20,	/* queue: the client copied a read from the cache itself (no reply) */
	RTIO_OP_WATCH_FD   = 21,	/* aiod's inotify descriptor, to poll only (RTIO_FEAT_HIT) */
	RTIO_OP_CREDITS    = 22,	/* queue: the client's SMB2 credit state (no reply; RTIO_FEAT_CREDITS) */
	RTIO_OP_QOS_POLICY = 23,	/* the QoS rule a principal (or file) falls under (RTIO_FEAT_QOS_POLICY) */
	RTIO_OP_LOCAL_READS = 24,	/* queue: reads the client made itself (no reply; RTIO_FEAT_LOCAL_READS) */
	RTIO_OP_MAX			/* first unassigned opcode */
};

/* rtio_hdr.flags */
#define RTIO_F_REPLY        0x0001u	/* set by aiod on every reply */

/* Feature bits negotiated at CONNECT (both sides AND their sets). */
/* 0x0001 was RTIO_FEAT_STREAMS, negotiated and never checked: the bit stays unused. */
#define RTIO_FEAT_WROTE     0x0002u	/* aiod understands RTIO_OP_WROTE */
/*
 * The client copies writes into the shared region (WRITE0/WRITE1): only then
 * does it get a descriptor it can map writable. Every other client gets a
 * read-only one, so no stray store of any smbd can change another's bytes.
 */
#define RTIO_FEAT_SHM_WRITE 0x0004u
/*
 * QoS: CONNECT's reply carries a fourth descriptor, the QoS flow table
 * (rtio_qos.h), which the client maps read-write and paces its I/O by.
 */
#define RTIO_FEAT_QOS       0x0008u
/*
 * aiod keeps the region's directory (rtio_shm.h) and understands HIT: a
 * client may copy hot reads out of the cache itself and tell aiod after.
 * It must first ask WATCH_FD for aiod's inotify descriptor: a pending event
 * there is a write aiod was not told about and has not applied yet, so the
 * client reads through aiod instead (rtio_client_cached.c).
 */
#define RTIO_FEAT_HIT       0x0010u
/*
 * aiod understands CREDITS: the module reports its connection's SMB2 credit
 * state while a QoS credit ceiling is in force, for aiodctl sessions.
 */
#define RTIO_FEAT_CREDITS   0x0020u
/*
 * aiod answers QOS_POLICY. An older aiod drops a session that sends an
 * opcode it does not know, so a client sends it only with this bit granted
 * (the module then answers MS-SQOS; without it, as if it were not loaded).
 */
#define RTIO_FEAT_QOS_POLICY 0x0040u
/*
 * aiod understands LOCAL_READS: the module reports the reads it made on its
 * own descriptor instead of asking aiod (rtio:random = local), so aiodctl
 * stats shows them. An older aiod would drop the session for the unknown
 * opcode: without the bit the client keeps its counts to itself.
 */
#define RTIO_FEAT_LOCAL_READS 0x0080u
/*
 * With RTIO_FEAT_HIT: the CONNECT reply carries aiod's inotify descriptor
 * itself, so a client needs no WATCH_FD round trip (under load each round
 * trip is a wake-up of smbd and of aiod, and every smbd process pays it on
 * its first tree connect). An older aiod does not grant it: ask WATCH_FD.
 */
#define RTIO_FEAT_CONNECT_WATCH 0x0100u
#define RTIO_FEAT_ALL       (RTIO_FEAT_WROTE | RTIO_FEAT_SHM_WRITE | RTIO_FEAT_QOS | RTIO_FEAT_HIT | \
			     RTIO_FEAT_CREDITS | RTIO_FEAT_QOS_POLICY | RTIO_FEAT_LOCAL_READS | \
			     RTIO_FEAT_CONNECT_WATCH)

struct rtio_hdr {
	uint32_t magic;		/* both: RTIO_MAGIC */
	uint16_t version;	/* both: RTIO_PROTO_VERSION */
	uint16_t opcode;	/* requester; echoed in the reply */
	uint32_t length;	/* sender: whole message length in bytes */
	uint32_t flags;		/* RTIO_F_* */
	uint64_t req_id;	/* client: matches a reply to its request; echoed */
	int32_t result;		/* aiod in replies: >= 0 ok, -errno; 0 in requests */
	uint32_t reserved;	/* must be 0 */
};

/* One contiguous piece of data in the shared buffer. */
struct rtio_seg {
	uint64_t shm_off;	/* aiod: offset from the start of the shared region */
	uint32_t len;		/* aiod: bytes valid at shm_off */
	uint32_t reserved;
};

/* ---- control socket ---- */

struct rtio_connect_req {
	struct rtio_hdr hdr;
	uint32_t pid;		/* client: smbd pid (checked against SO_PEERCRED) */
	uint32_t features;	/* client: RTIO_FEAT_* it understands */
	char client[32];	/* client: NUL-terminated name for logs ("smbd", "fio") */
	uint8_t reserved[24];
};

/*
 * Reply carries three to five descriptors (SCM_RIGHTS), in this order: request
 * mq, reply mq, shared region, then the QoS flow table if the negotiated
 * features have RTIO_FEAT_QOS, then aiod's inotify descriptor if they have
 * RTIO_FEAT_CONNECT_WATCH (rtio_connect_rep_nfds). A refusal carries none;
 * its result says why: -EUSERS when [global] max_sessions is reached,
 * -EMFILE/-ENFILE/-ENOSPC/-ENOMEM when aiod cannot create the queues
 * (RLIMIT_MSGQUEUE, fs.mqueue.queues_max, memory).
 */
struct rtio_connect_rep {
	struct rtio_hdr hdr;
	uint32_t session_id;	/* aiod */
	uint32_t features;	/* aiod: negotiated set */
	uint64_t shm_size;	/* aiod: bytes to map from the region descriptor */
	uint32_t block_size;	/* aiod: cache block size */
	uint32_t max_inflight;	/* aiod: requests a client may have outstanding on the queues */
	uint32_t max_io;	/* aiod: largest length a READ0/WRITE0 may ask for */
	uint32_t reserved0;
	uint8_t reserved[32];
};

/* How many descriptors a CONNECT reply with these negotiated features carries. */
static inline unsigned rtio_connect_rep_nfds(uint32_t features)
{
	return 3 + ((features & RTIO_FEAT_QOS) ? 1 : 0) +
	       ((features & RTIO_FEAT_CONNECT_WATCH) ? 1 : 0);
}
#define RTIO_CONNECT_MAX_FDS 5	/* RTIO_SOCK_MAX_FDS must hold it */

/* Request carries one descriptor (SCM_RIGHTS): the file smbd opened. */
struct rtio_open_req {
	struct rtio_hdr hdr;
	uint32_t flags;		/* client: RTIO_OPEN_* */
	uint32_t reserved0;
	char name[RTIO_NAME_MAX];	/* client: share-relative path, for class matching/logs */
};
#define RTIO_OPEN_INVALIDATE 0x0001u	/* client wrote the file behind aiod's back: drop cached blocks */
#define RTIO_OPEN_WRITABLE   0x0002u	/* client: the descriptor is open for writing */

struct rtio_open_rep {
	struct rtio_hdr hdr;
	uint64_t file_id;	/* aiod: handle for later requests in this session */
	uint64_t dev;		/* aiod: identity of the file, as aiod saw it */
	uint64_t ino;
	uint32_t stream_class;	/* aiod: index of the matched class, 0 = best effort */
	uint32_t prebuffer_ms;	/* aiod: the class's prebuffer_ms (its clients' buffer), 0 = none */
	uint64_t bitrate;	/* aiod: reserved bits/s for this open, 0 = none */
};

struct rtio_close_req {
	struct rtio_hdr hdr;
	uint64_t file_id;	/* client */
};

struct rtio_ftruncate_req {
	struct rtio_hdr hdr;
	uint64_t file_id;	/* client */
	uint64_t length;	/* client: size smbd just set; aiod trims its cache to it */
};

struct rtio_invalidate_req {
	struct rtio_hdr hdr;
	uint64_t file_id;	/* client */
	uint64_t offset;	/* client: first byte changed */
	uint64_t length;	/* client: bytes changed, 0 = to the end of the file */
};

struct rtio_unlink_req {
	struct rtio_hdr hdr;
	uint64_t dev;		/* client: identity of the removed file (from fstat before unlink) */
	uint64_t ino;
};

/*
 * STATS's reply is the one message that grows within a protocol version: a
 * counter aiod adds goes at its end, one uint64_t at a time. So any whole
 * number of counters after the header is a valid reply (rtio_msg_verify()):
 * a client reads what an older aiod sends, the rest zero, and leaves out what
 * a newer one adds. That keeps `aiodctl stats` working after an upgrade that
 * has not restarted aiod yet (rtio_client_stats_len()).
 */
#define RTIO_STATS_REP_MIN_LEN (sizeof(struct rtio_hdr) + sizeof(uint64_t))
/* How much longer than ours a newer aiod's reply may be (128 counters more). */
#define RTIO_STATS_REP_ROOM 1024

struct rtio_stats_rep {
	struct rtio_hdr hdr;
	uint64_t sessions;	/* aiod: sessions that completed CONNECT */
	uint64_t files;		/* aiod: files with at least one open */
	uint64_t blocks_total;
	uint64_t blocks_used;	/* holding data (cached or pinned) */
	uint64_t blocks_pinned;	/* referenced by a client or an I/O in flight */
	uint64_t cache_hits;	/* READ0 blocks answered without disk I/O */
	uint64_t cache_misses;
	uint64_t disk_reads;	/* device reads submitted */
	uint64_t disk_writes;
	uint64_t bytes_read;	/* returned to clients */
	uint64_t bytes_written;
	uint64_t requests;	/* data-path requests handled */
	uint64_t errors;	/* requests answered with an error */
	uint64_t protocol_errors;	/* malformed messages dropped */
	uint64_t deadline_misses;	/* stream reads that found their data not yet cached */
	uint64_t readahead_blocks;
	uint64_t evictions;
	uint64_t sessions_total;	/* since start */
	uint64_t streams;		/* admitted stream opens */
	uint64_t reserved_Bps;		/* bytes/s reserved for them */
	uint64_t capacity_Bps;		/* device capacity admission works with, 0 = unknown */
	uint64_t admission_refused;
	uint64_t admission_demoted;
	uint64_t writebacks;		/* write-back requests aiod queued (write aggregation) */
	uint64_t file_records;		/* files aiod keeps: open, or with cached blocks */
	uint64_t watches;		/* of them, watched for outside changes (inotify) */
	uint64_t outside_changes;	/* changes by writers aiod was not told about */
	uint64_t outside_blocks;	/* cached blocks those changes dropped */
	uint64_t writeback_bytes;	/* bytes those requests wrote back */
	uint64_t writeback_late;	/* of them, requests done after their deadline */
	uint64_t writeback_errors;	/* failed (EIO...): the data's own fsync reports them */
	uint64_t recorders;		/* opens written as streams (recorders) now */
	uint64_t disk_read_bytes;	/* bytes the device read for aiod: loads, pass-through */
	uint64_t passthrough_reads;	/* random reads served without the cache (their pages only) */
	uint64_t passthrough_bytes;	/* bytes the device read for them */
	uint64_t qos_flows;		/* QoS flows in use now (aiod(8), QOS) */
	uint64_t qos_paced;		/* of them, published with a rate (paced now) */
	uint64_t hit_reads;		/* reads clients copied from the cache themselves (HIT) */
	uint64_t hit_bytes;		/* bytes of them (also in bytes_read) */
	uint64_t local_reads;		/* reads clients made themselves, reported (LOCAL_READS) */
	uint64_t local_bytes;		/* bytes of them (not in bytes_read: aiod returned none) */
	uint64_t writes_held;		/* write replies held: the writer was ahead of the disk */
	uint64_t admission_waiting;	/* class streams served best effort now, waiting for room */
	uint64_t startup_debt;		/* bytes of their windows started streams still owe */
	/* aiod's I/O engine: what its scheduler did (aiod(8), [engine]) */
	uint64_t engine_queued;		/* device requests waiting for a slot now */
	uint64_t engine_inflight;	/* device requests in the kernel now */
	uint64_t engine_continued;	/* reads served where the last ended, before an earlier deadline */
	uint64_t engine_waited_first;	/* earliest deadlines served first because a client waited */
	uint64_t engine_expedited;	/* queued requests made due sooner because a client waited */
	uint64_t engine_merged;		/* queued stream reads taken along by the one before them */
	uint64_t engine_sliced;		/* pieces of best-effort reads after which the rest was queued */
	uint64_t engine_behind;		/* pieces handed to the kernel behind the last, every slot taken */
	uint64_t engine_resubmits;	/* short transfers and -EAGAIN, resubmitted */
};

/* FILE_STATS: the index-th file aiod knows; -ENOENT past the last. */
struct rtio_file_stats_req {
	struct rtio_hdr hdr;
	uint32_t index;		/* client */
	uint32_t reserved;
};

struct rtio_file_stats_rep {
	struct rtio_hdr hdr;
	uint64_t dev, ino;	/* aiod */
	uint32_t opens;
	uint32_t stream_class;	/* 0 = none, else index + 1 */
	uint64_t reserved_bps;	/* sum over its admitted opens */
	uint64_t deadline_misses;
	uint64_t bytes_read;
	char name[128];		/* share-relative name of the last OPEN */
};

/*
 * SESSION_STATS and INFO: the index-th entry of a listing (0, 1, 2...). A
 * listing is not atomic: sessions that come or go while it runs may be
 * missed or seen twice.
 */
struct rtio_index_req {
	struct rtio_hdr hdr;
	uint32_t index;		/* client */
	uint32_t reserved;
};

/* SESSION_STATS: the index-th session that completed CONNECT; -ENOENT past the last. */
struct rtio_session_stats_rep {
	struct rtio_hdr hdr;
	uint32_t session_id;	/* aiod: as logged, new for every CONNECT */
	uint32_t pid;		/* aiod: the client process (SO_PEERCRED): smbd's pid */
	uint32_t uid;		/* aiod: its uid at connect (SO_PEERCRED; smbd connects as root) */
	uint32_t inflight;	/* aiod: its data requests in flight now */
	uint32_t opens;		/* aiod: descriptors it registered and has not closed */
	uint32_t streams;	/* aiod: of them, opens with a bitrate (streams, recorders) */
	uint64_t bytes_read;	/* aiod: returned to it since CONNECT */
	uint64_t bytes_written;	/* aiod: it wrote through aiod or reported (WROTE) */
	uint64_t requests;	/* aiod: data requests it sent */
	uint64_t lead_ms;	/* aiod: shortest read-ahead lead of its streams, UINT64_MAX = none */
	uint32_t pinned;	/* aiod: cache blocks it holds pinned */
	uint32_t reserved0;
	char client[32];	/* aiod: the name it gave at CONNECT ("smbd") */
	/* the client's last CREDITS report; all 0 when it never sent one */
	uint32_t credits_granted;	/* aiod: credits its SMB2 client held */
	uint32_t credits_max;		/* aiod: the connection's credit ceiling then */
	uint32_t credits_orig;		/* aiod: smbd's own ceiling */
	uint32_t qos_held;		/* aiod: its requests held by QoS pacing then */
	/* the sums of its LOCAL_READS reports; 0 when it never sent one */
	uint64_t local_reads;		/* aiod: reads it made itself (rtio:random = local) */
	uint64_t local_bytes;		/* aiod: bytes they returned */
};
#define RTIO_LEAD_NONE UINT64_MAX

/*
 * INFO: who aiod is, and the index-th stream class of its configuration
 * (class fields zero when index >= n_classes, which is no error: INFO with
 * index 0 answers a daemon without classes).
 */
struct rtio_info_rep {
	struct rtio_hdr hdr;
	char version[32];	/* aiod: RTIO_VERSION it was built from */
	uint64_t start_time;	/* aiod: when it began to listen, seconds since the epoch */
	uint64_t uptime_ms;	/* aiod: since then (monotonic clock) */
	uint32_t pid;		/* aiod: its own pid */
	uint32_t n_classes;	/* aiod: [stream.NAME] classes loaded */
	uint32_t block_size;	/* aiod: cache block size (blocks_* of STATS times this = bytes) */
	uint32_t reserved0;
	uint64_t class_bitrate;	/* aiod: bits/s of the index-th class */
	uint32_t class_prebuffer_ms;
	uint32_t reserved1;
	char class_name[64];	/* aiod: NAME of [stream.NAME], cut to fit */
	char class_match[128];	/* aiod: its match pattern, cut to fit */
	uint8_t reserved[32];
};

/* ---- data path (message queues) ---- */

struct rtio_io_req {		/* READ0, WRITE0, FSYNC, WROTE, HIT */
	struct rtio_hdr hdr;
	uint64_t file_id;	/* client */
	uint64_t offset;	/* client */
	uint32_t length;	/* client: bytes; <= max_io (not WROTE). FSYNC: 1 = datasync only */
	uint32_t reserved0;
};

/*
 * CREDITS (queue, no reply): the module's view of its SMB2 connection, sent
 * when the credit ceiling moves and at most once a second while it is
 * lowered (vfs_rtio_credits.h). Only for aiodctl sessions: aiod decides
 * nothing from it.
 */
struct rtio_credits_req {
	struct rtio_hdr hdr;
	uint32_t granted;	/* client: credits the SMB2 client holds */
	uint32_t max;		/* client: the connection's ceiling now */
	uint32_t orig;		/* client: smbd's own ceiling */
	uint32_t wanted;	/* client: what the flow's slot asks for, 0 = none */
	uint32_t held;		/* client: its requests held by pacing now */
	uint32_t reserved0;
};

/*
 * LOCAL_READS (queue, no reply): reads the client made on its own
 * descriptor since its previous report (rtio_client_read_yourself() said
 * so), sent at most once a second and when the session ends cleanly. Only
 * for aiodctl stats and sessions: aiod decides nothing from it.
 */
struct rtio_local_reads_req {
	struct rtio_hdr hdr;
	uint64_t reads;		/* client: reads completed since the last report */
	uint64_t bytes;		/* client: bytes they returned */
};

struct rtio_io_rep {		/* READ0, WRITE0 */
	struct rtio_hdr hdr;	/* result: bytes available (READ0, may be short at EOF) or reserved */
	uint64_t token;		/* aiod: names the pinned buffers for READ1/WRITE1 */
	uint32_t nseg;		/* aiod: segments used */
	uint32_t reserved0;
	struct rtio_seg seg[RTIO_MAX_SEGS];
};

struct rtio_release_req {	/* READ1 (no reply), WRITE1 (reply: bytes written) */
	struct rtio_hdr hdr;
	uint64_t token;		/* client: from the READ0/WRITE0 reply */
};

/*
 * QOS_BIND: who is doing I/O, as smbd knows it; aiod matches its [qos.NAME]
 * rules and answers with the flow table slot to pace by. Text fields are
 * NUL-terminated; an empty one is unknown. Sent at each tree connect (file
 * empty) and, only when the answer had RTIO_QOS_FILE_RULES, for each file
 * opened (file = the share-relative path).
 */
struct rtio_qos_bind_req {
	struct rtio_hdr hdr;
	uint32_t uid;		/* client: the user's uid */
	uint32_t reserved0;
	char user[64];		/* client: the user's unix name */
	char client[48];	/* client: the client's IP address (inet_ntop form) */
	char guid[40];		/* client: the client's GUID (8-4-4-4-12 hex) */
	char share[64];		/* client: share name */
	char file[RTIO_NAME_MAX];	/* client: share-relative path, or "" */
};

#define RTIO_QOS_NO_FLOW    UINT32_MAX	/* QOS_BIND: not paced (no rule, or no slot left) */
#define RTIO_QOS_FILE_RULES 0x0001u	/* QOS_BIND: rules on file names may apply: bind each file */

struct rtio_qos_bind_rep {
	struct rtio_hdr hdr;
	uint32_t slot;		/* aiod: flow table slot, RTIO_QOS_NO_FLOW = none */
	uint32_t flags;		/* aiod: RTIO_QOS_* */
	uint64_t generation;	/* aiod: the slot's generation when bound (rtio_qos_current) */
	char rule[64];		/* aiod: the matched [qos.NAME]'s NAME, "" = best effort */
};

/* QOS_LIST: the index-th flow in use; -ENOENT past the last. */
struct rtio_qos_list_req {
	struct rtio_hdr hdr;
	uint32_t index;		/* client */
	uint32_t reserved;
};

struct rtio_qos_list_rep {
	struct rtio_hdr hdr;
	uint32_t slot;		/* aiod */
	uint32_t binds;		/* aiod: tree connects and files bound to it now */
	char rule[64];		/* aiod: [qos.NAME] or "" for a best-effort principal */
	char principal[64];	/* aiod: who: the rule's own name, or user@client */
	uint64_t limit_Bps;	/* aiod: configured (0 = none) */
	uint64_t reserve_Bps;
	uint32_t weight;
	uint32_t reserved0;
	uint64_t rate_Bps;	/* aiod: published now, 0 = not paced */
	uint64_t rate_1s_Bps;	/* aiod: measured over the last second */
	uint64_t rate_10s_Bps;	/* aiod: over the last ten seconds */
	uint64_t waiting;	/* clients: requests held by pacing now */
	uint64_t paced;		/* clients: requests that had to wait, since bound */
	uint64_t bytes;		/* clients: read + written since bound */
	uint64_t limit_read_Bps;	/* aiod: configured per direction (0 = none) */
	uint64_t limit_write_Bps;
};

/*
 * QOS_POLICY: the request is a struct rtio_qos_bind_req (the same principal,
 * file included, that QOS_BIND matches); the reply names the rule it
 * matches and that rule's configured values, as aiod.ini gives them. No flow
 * is bound or created: the module answers MS-SQOS with it
 * (vfs_rtio_sqos.c). All values 0 and rule "": no rule limits or reserves
 * anything for this principal (best effort, or no [qos.NAME] at all).
 */
struct rtio_qos_policy_rep {
	struct rtio_hdr hdr;
	uint32_t weight;	/* aiod: share of what is left (best effort: the default weight) */
	uint32_t reserved0;
	uint64_t limit_Bps;	/* aiod: limit, read + written together (0 = none) */
	uint64_t limit_read_Bps;	/* aiod: limit_read (0 = none) */
	uint64_t limit_write_Bps;	/* aiod: limit_write (0 = none) */
	uint64_t limit_iops;	/* aiod: limit_iops, requests/s (0 = none) */
	uint64_t reserve_Bps;	/* aiod: reserve (0 = none) */
	uint64_t burst_bytes;	/* aiod: burst (0 = the default) */
	char rule[64];		/* aiod: the matched [qos.NAME]'s NAME, "" = none */
	uint8_t reserved[32];
};

/* A plain reply: FSYNC, WRITE1, CLOSE, FTRUNCATE, UNLINK, DISCONNECT. */
struct rtio_simple_rep {
	struct rtio_hdr hdr;
};

union rtio_msg {
	struct rtio_hdr hdr;
	struct rtio_connect_req connect_req;
	struct rtio_connect_rep connect_rep;
	struct rtio_open_req open_req;
	struct rtio_open_rep open_rep;
	struct rtio_close_req close_req;
	struct rtio_ftruncate_req ftruncate_req;
	struct rtio_unlink_req unlink_req;
	struct rtio_invalidate_req invalidate_req;
	struct rtio_stats_rep stats_rep;
	struct rtio_file_stats_req file_stats_req;
	struct rtio_file_stats_rep file_stats_rep;
	struct rtio_index_req index_req;
	struct rtio_session_stats_rep session_stats_rep;
	struct rtio_info_rep info_rep;
	struct rtio_io_req io_req;
	struct rtio_credits_req credits_req;
	struct rtio_local_reads_req local_reads_req;
	struct rtio_io_rep io_rep;
	struct rtio_release_req release_req;
	struct rtio_simple_rep simple_rep;
	struct rtio_qos_bind_req qos_bind_req;
	struct rtio_qos_bind_rep qos_bind_rep;
	struct rtio_qos_list_req qos_list_req;
	struct rtio_qos_list_rep qos_list_rep;
	struct rtio_qos_bind_req qos_policy_req;	/* QOS_POLICY asks with QOS_BIND's request */
	struct rtio_qos_policy_rep qos_policy_rep;
	uint8_t raw[RTIO_MSG_MAX];
};

/* The layout is the contract: pin it. */
_Static_assert(sizeof(struct rtio_hdr) == 32, "rtio_hdr");
_Static_assert(offsetof(struct rtio_hdr, req_id) == 16, "rtio_hdr.req_id");
_Static_assert(offsetof(struct rtio_hdr, result) == 24, "rtio_hdr.result");
_Static_assert(sizeof(struct rtio_seg) == 16, "rtio_seg");
_Static_assert(sizeof(struct rtio_connect_req) == 96, "rtio_connect_req");
_Static_assert(sizeof(struct rtio_connect_rep) == 96, "rtio_connect_rep");
_Static_assert(sizeof(struct rtio_open_req) == 296, "rtio_open_req");
_Static_assert(sizeof(struct rtio_open_rep) == 72, "rtio_open_rep");
_Static_assert(sizeof(struct rtio_close_req) == 40, "rtio_close_req");
_Static_assert(sizeof(struct rtio_ftruncate_req) == 48, "rtio_ftruncate_req");
_Static_assert(sizeof(struct rtio_unlink_req) == 48, "rtio_unlink_req");
_Static_assert(sizeof(struct rtio_invalidate_req) == 56, "rtio_invalidate_req");
_Static_assert(sizeof(struct rtio_stats_rep) == 456, "rtio_stats_rep");
_Static_assert(offsetof(struct rtio_stats_rep, engine_queued) == 384, "rtio_stats_rep.engine_queued");
_Static_assert(offsetof(struct rtio_stats_rep, local_reads) == 344, "rtio_stats_rep.local_reads");
_Static_assert(sizeof(struct rtio_file_stats_req) == 40, "rtio_file_stats_req");
_Static_assert(sizeof(struct rtio_file_stats_rep) == 208, "rtio_file_stats_rep");
_Static_assert(sizeof(struct rtio_index_req) == 40, "rtio_index_req");
_Static_assert(sizeof(struct rtio_session_stats_rep) == 160, "rtio_session_stats_rep");
_Static_assert(offsetof(struct rtio_session_stats_rep, bytes_read) == 56, "session.bytes_read");
_Static_assert(offsetof(struct rtio_session_stats_rep, credits_granted) == 128,
	       "session.credits_granted");
_Static_assert(offsetof(struct rtio_session_stats_rep, local_reads) == 144,
	       "session.local_reads");
_Static_assert(sizeof(struct rtio_info_rep) == 336, "rtio_info_rep");
_Static_assert(offsetof(struct rtio_info_rep, class_name) == 112, "rtio_info_rep.class_name");
_Static_assert(sizeof(struct rtio_io_req) == 56, "rtio_io_req");
_Static_assert(sizeof(struct rtio_credits_req) == 56, "rtio_credits_req");
_Static_assert(sizeof(struct rtio_local_reads_req) == 48, "rtio_local_reads_req");
_Static_assert(offsetof(struct rtio_io_rep, seg) == 48, "rtio_io_rep.seg");
_Static_assert(sizeof(struct rtio_io_rep) == 48 + 16 * RTIO_MAX_SEGS, "rtio_io_rep");
_Static_assert(sizeof(struct rtio_release_req) == 40, "rtio_release_req");
_Static_assert(sizeof(struct rtio_qos_bind_req) == 512, "rtio_qos_bind_req");
_Static_assert(sizeof(struct rtio_qos_bind_rep) == 112, "rtio_qos_bind_rep");
_Static_assert(sizeof(struct rtio_qos_list_req) == 40, "rtio_qos_list_req");
_Static_assert(sizeof(struct rtio_qos_list_rep) == 256, "rtio_qos_list_rep");
_Static_assert(sizeof(struct rtio_qos_policy_rep) == 184, "rtio_qos_policy_rep");
_Static_assert(offsetof(struct rtio_qos_policy_rep, limit_Bps) == 40, "rtio_qos_policy_rep.limit_Bps");
_Static_assert(offsetof(struct rtio_qos_policy_rep, rule) == 88, "rtio_qos_policy_rep.rule");
_Static_assert(sizeof(union rtio_msg) == RTIO_MSG_MAX, "rtio_msg");

/*
 * Message size of the queues: the largest data-path message. Kept small
 * because every queue's size counts against RLIMIT_MSGQUEUE of aiod's user.
 */
#define RTIO_MQ_MSGSIZE sizeof(struct rtio_io_rep)
_Static_assert(sizeof(struct rtio_io_req) <= RTIO_MQ_MSGSIZE, "io_req fits a queue message");
_Static_assert(sizeof(struct rtio_release_req) <= RTIO_MQ_MSGSIZE, "release fits");
_Static_assert(sizeof(struct rtio_local_reads_req) <= RTIO_MQ_MSGSIZE, "local_reads fits");
_Static_assert(sizeof(struct rtio_simple_rep) <= RTIO_MQ_MSGSIZE, "simple_rep fits");

/*
 * Expected length of a message with this opcode, for requests (reply = 0) or
 * replies (reply = 1). 0 means "not valid on this side".
 */
size_t rtio_msg_expected_len(unsigned opcode, int reply);
/*
 * Monitoring requests (aiodctl stats, files, sessions, info, qos): aiod
 * answers them without CONNECT, so they work when the sessions are exhausted.
 */
static inline int rtio_op_is_monitoring(unsigned opcode)
{
	return opcode == RTIO_OP_STATS || opcode == RTIO_OP_FILE_STATS ||
	       opcode == RTIO_OP_SESSION_STATS || opcode == RTIO_OP_INFO ||
	       opcode == RTIO_OP_QOS_LIST;
}

/* Fill a header. */
void rtio_hdr_init(struct rtio_hdr *h, unsigned opcode, uint32_t length, uint64_t req_id);

/*
 * Check a received message of len bytes before anything in it is trusted.
 * reply: 1 when we expect a reply, 0 for a request.
 * Returns 0, -EPROTO (bad magic/version/flags/opcode/reserved) or
 * -EMSGSIZE (length field disagrees with what arrived or with the opcode).
 */
int rtio_msg_verify(const void *buf, size_t len, int reply);

/* Name of an opcode for logs ("READ0"), "?" for unknown. */
const char *rtio_op_name(unsigned opcode);

#endif
