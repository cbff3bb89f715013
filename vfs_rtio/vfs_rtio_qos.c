/*
 * QoS pacing in the module: bind a tree connect's principal to its flow,
 * charge each I/O to the flow's slot (vfs_rtio_qos.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Which parts of the principal stay the same (docs/vfs_rtio.8 says it too):
 * the user and the client GUID are the same on every channel of a
 * multichannel session and after a reconnect (durable handles); the client
 * address is the one of this channel's TCP connection, so rules on
 * match_client see each channel's own address.
 */
#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/tsocket/tsocket.h"
#include "librpc/gen_ndr/smbXsrv.h"

#include <sys/mman.h>

#include "vfs_rtio.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_qos.h"
#include "vfs_rtio_credits.h"
#include "rtio_qos.h"

/* After a failed bind (aiod not there), how long until the next I/O tries again. */
#define VFS_RTIO_QOS_RETRY_MS 1000
/* A ceiling that could not move (a request out of order) is tried again after this. */
#define VFS_RTIO_CREDITS_RETRY_MS 10
/* While the ceiling is lowered, aiod hears the connection's credit state this often. */
#define VFS_RTIO_CREDITS_REPORT_MS 1000

/*
 * Requests of this smbd process (its one client connection) held by pacing
 * right now, for the CREDITS report. Process-wide on purpose: a held request's
 * ticket may outlive the tree connect that charged it.
 */
static uint32_t vfs_rtio_qos_held_now;

struct vfs_rtio_qos {
	struct vfs_rtio_session *session;
	struct rtio_qos_bind_req who;	/* the principal, as sent at every bind */
	void *map;			/* the flow table, mapped by us: outlives aiod */
	size_t map_size;
	struct rtio_qos_flow *slot;	/* NULL: not paced */
	uint64_t slot_gen;		/* the slot's generation when bound */
	uint64_t session_gen;		/* the aiod session the binding came from, 0 = none */
	uint64_t map_gen;		/* the aiod session whose table map is */
	uint64_t policy_gen;		/* the table's policy generation at the last bind */
	struct timespec last_try;	/* the last bind attempt that found no aiod */
	bool tried;
	uint32_t flags;			/* RTIO_QOS_* of the last bind */
	/* the credit-grant hook (vfs_rtio_credits.h) */
	struct smbd_server_connection *sconn;	/* the client this tree connect belongs to */
	bool credits_on;		/* rtio:credit ceiling, and the connection allows it */
	bool credits_moved;		/* this binding lowered the ceiling: restore it when no rule asks */
	struct timespec credits_try;	/* the last attempt that found the window busy */
	bool credits_later;
	struct timespec credits_report;	/* the last CREDITS report */
};

static int vfs_rtio_qos_destructor(struct vfs_rtio_qos *q)
{
	if (q->map != NULL) {
		(void)munmap(q->map, q->map_size);
	}
	return 0;
}

/* The GUID's usual text form (what aiod.ini's match_guid is written as). */
static void vfs_rtio_qos_guid(const struct GUID *g, char *buf, size_t len)
{
	snprintf(buf, len, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 (unsigned)g->time_low, (unsigned)g->time_mid, (unsigned)g->time_hi_and_version,
		 g->clock_seq[0], g->clock_seq[1], g->node[0], g->node[1], g->node[2], g->node[3],
		 g->node[4], g->node[5]);
}

/* The principal from smbd's view of the connection; unknown parts stay empty. */
static void vfs_rtio_qos_principal(struct vfs_handle_struct *handle, struct rtio_qos_bind_req *who)
{
	connection_struct *conn = handle->conn;
	const struct auth_session_info *si = conn->session_info;
	struct smbd_server_connection *sconn = conn->sconn;
	char *addr = NULL;

	memset(who, 0, sizeof(*who));
	if (si != NULL && si->unix_info != NULL && si->unix_info->unix_name != NULL) {
		snprintf(who->user, sizeof(who->user), "%s", si->unix_info->unix_name);
	}
	if (si != NULL && si->unix_token != NULL) {
		who->uid = (uint32_t)si->unix_token->uid;
	}
	if (sconn != NULL && sconn->remote_address != NULL &&
	    tsocket_address_is_inet(sconn->remote_address, "ip")) {
		addr = tsocket_address_inet_addr_string(sconn->remote_address, talloc_tos());
	}
	if (addr != NULL) {
		snprintf(who->client, sizeof(who->client), "%s", addr);
		TALLOC_FREE(addr);
	}
	if (sconn != NULL && sconn->client != NULL && sconn->client->global != NULL) {
		vfs_rtio_qos_guid(&sconn->client->global->client_guid, who->guid, sizeof(who->guid));
	}
	snprintf(who->share, sizeof(who->share), "%s", lp_const_servicename(SNUM(conn)));
}

struct vfs_rtio_qos_bind_call {
	struct vfs_rtio_qos *q;
	struct rtio_qos_bind_rep rep;
	int fd;
};

static ssize_t vfs_rtio_qos_bind_call(struct rtio_client *client, void *private_data)
{
	struct vfs_rtio_qos_bind_call *c = private_data;

	c->fd = rtio_client_qos_fd(client);
	return rtio_client_qos_bind(client, &c->q->who, &c->rep);
}

/* Map the session's flow table (a new aiod has a new one). */
static int vfs_rtio_qos_map(struct vfs_rtio_qos *q, int fd, uint64_t gen)
{
	struct stat st;
	void *map;

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(struct rtio_qos_header)) {
		return -EPROTO;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		return -errno;
	}
	if (rtio_qos_check(map, (uint64_t)st.st_size) != 0) {
		(void)munmap(map, (size_t)st.st_size);
		return -EPROTO;
	}
	if (q->map != NULL) {
		(void)munmap(q->map, q->map_size);
	}
	q->map = map;
	q->map_size = (size_t)st.st_size;
	q->map_gen = gen;
	return 0;
}

/*
 * Whether aiod has no rule in force: then a bind finds no flow, and the tree
 * connect (or the read) need not wait for aiod to say so. The policy
 * generation is kept either way; a reload moves it (vfs_rtio_qos_refresh).
 */
static bool vfs_rtio_qos_no_rules(struct vfs_rtio_qos *q, uint64_t gen)
{
	struct rtio_client *client = vfs_rtio_session_live_client(q->session);
	uint32_t n_rules;

	if (client == NULL) {
		return false;
	}
	if (q->map == NULL || q->map_gen != gen) {
		/* q->slot points into the old table: only a bind that succeeds replaces it */
		if (q->slot != NULL || vfs_rtio_qos_map(q, rtio_client_qos_fd(client), gen) != 0) {
			return false;
		}
	}
	q->policy_gen = rtio_qos_policy_get(q->map, &n_rules);
	return q->policy_gen != 0 && n_rules == 0;
}

/*
 * Ask aiod which flow paces this connection. Until a bind succeeds the old
 * binding, if any, stays: a dead aiod's last rates keep holding.
 */
static void vfs_rtio_qos_bind(struct vfs_rtio_qos *q)
{
	struct vfs_rtio_qos_bind_call c = { .q = q, .fd = -1 };
	uint64_t gen = vfs_rtio_session_generation(q->session);
	struct rtio_qos_header *hdr;
	ssize_t ret;

	clock_gettime_mono(&q->last_try);
	q->tried = true;
	if (vfs_rtio_qos_no_rules(q, gen)) {
		q->session_gen = gen;
		q->flags = 0;
		q->slot = NULL;
		return;
	}
	ret = vfs_rtio_session_call(q->session, vfs_rtio_qos_bind_call, &c);
	if (ret < 0) {
		DBG_DEBUG("rtio: QoS bind for %s@%s: %s\n", q->who.user, q->who.client,
			  strerror((int)-ret));
		return;
	}
	q->session_gen = gen;
	q->flags = c.rep.flags;
	if (c.rep.slot == RTIO_QOS_NO_FLOW) {
		q->slot = NULL;	/* no rule applies any more: not paced */
		if (q->map == NULL || q->map_gen != gen) {
			/*
			 * A new aiod: map its table now, to see its reloads. Rules in
			 * it already (a reload since the bind) mean one bind more.
			 */
			if (!vfs_rtio_qos_no_rules(q, gen) && q->map_gen == gen && q->policy_gen != 0) {
				q->policy_gen--;
			}
		}
		return;
	}
	if (q->map == NULL || q->map_gen != gen) {
		if (vfs_rtio_qos_map(q, c.fd, gen) != 0) {
			q->slot = NULL;
			return;
		}
	}
	hdr = q->map;
	if (c.rep.slot >= hdr->nflows) {
		q->slot = NULL;
		return;
	}
	q->slot = rtio_qos_slot(hdr, c.rep.slot);
	q->slot_gen = c.rep.generation;
	DBG_INFO("rtio: QoS: %s@%s on [%s] paced by flow %" PRIu32 " (%s)\n", q->who.user,
		 q->who.client, q->who.share, c.rep.slot,
		 c.rep.rule[0] != '\0' ? c.rep.rule : "best effort");
}

/* rtio:credit ceiling of the share (vfs_rtio_config.h); on unless said otherwise. */
static bool vfs_rtio_qos_config_credits(struct vfs_handle_struct *handle)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return true);
	return config->credit_ceiling;
}

struct vfs_rtio_qos *vfs_rtio_qos_connect(TALLOC_CTX *mem_ctx, struct vfs_handle_struct *handle,
					  struct vfs_rtio_session *session)
{
	struct vfs_rtio_qos *q = talloc_zero(mem_ctx, struct vfs_rtio_qos);

	if (q == NULL) {
		return NULL;
	}
	talloc_set_destructor(q, vfs_rtio_qos_destructor);
	q->session = session;
	q->sconn = handle->conn->sconn;
	q->credits_on = vfs_rtio_qos_config_credits(handle);
	vfs_rtio_qos_principal(handle, &q->who);
	if (vfs_rtio_session_live_client(session) != NULL) {
		vfs_rtio_qos_bind(q);
	}
	return q;
}

struct vfs_rtio_qos *vfs_rtio_qos_for_file(TALLOC_CTX *mem_ctx, const struct vfs_rtio_qos *tree,
					   const char *name)
{
	struct vfs_rtio_qos *q;

	if (tree == NULL || !(tree->flags & RTIO_QOS_FILE_RULES)) {
		return NULL;
	}
	q = talloc_zero(mem_ctx, struct vfs_rtio_qos);
	if (q == NULL) {
		return NULL;	/* paced as the tree connect: never fail an open for QoS */
	}
	talloc_set_destructor(q, vfs_rtio_qos_destructor);
	q->session = tree->session;
	q->sconn = tree->sconn;
	q->credits_on = tree->credits_on;
	q->who = tree->who;
	snprintf(q->who.file, sizeof(q->who.file), "%s", name);
	vfs_rtio_qos_bind(q);
	return q;
}

/*
 * Bind again when aiod came back (a new session: new table, new policy) or
 * gave the slot to another flow (a reload, an idle flow reclaimed). With no
 * aiod, keep what we have, and try at most once a second.
 */
static void vfs_rtio_qos_refresh(struct vfs_rtio_qos *q)
{
	bool stale = q->slot != NULL && !rtio_qos_current(q->slot, q->slot_gen);
	uint64_t gen = vfs_rtio_session_generation(q->session);
	uint32_t n_rules;

	/* not paced, and aiod loaded a policy since: there may be a rule now */
	if (q->slot == NULL && q->map != NULL && q->policy_gen != 0 &&
	    rtio_qos_policy_get(q->map, &n_rules) != q->policy_gen) {
		stale = true;
	}
	if (!stale && gen == q->session_gen) {
		return;
	}
	if (vfs_rtio_session_live_client(q->session) == NULL) {
		return;
	}
	if (!stale && q->tried && vfs_rtio_elapsed_ms(&q->last_try) < VFS_RTIO_QOS_RETRY_MS) {
		return;
	}
	vfs_rtio_qos_bind(q);
}

/* aiod hears the connection's credit state (aiodctl sessions); a full queue drops it. */
static void vfs_rtio_qos_credits_report(struct vfs_rtio_qos *q, const struct vfs_rtio_credits *cr)
{
	struct rtio_client *client = vfs_rtio_session_live_client(q->session);

	clock_gettime_mono(&q->credits_report);
	if (client != NULL) {
		(void)rtio_client_report_credits(client, cr->granted, cr->max, cr->orig, cr->wanted,
						 vfs_rtio_qos_held_now);
	}
}

/*
 * Follow the credit ceiling aiod published with the flow's rates. Nothing is
 * touched while no binding of this tree connect ever had a ceiling: a share
 * without QoS rules never reaches into smbd's connection.
 */
static void vfs_rtio_qos_credits(struct vfs_rtio_qos *q)
{
	uint64_t wanted = q->slot != NULL ? rtio_qos_credits(q->slot) : 0;
	struct vfs_rtio_credits cr = { 0 };

	if (!q->credits_on || (wanted == 0 && !q->credits_moved) ||
	    (q->credits_later && vfs_rtio_elapsed_ms(&q->credits_try) < VFS_RTIO_CREDITS_RETRY_MS)) {
		return;
	}
	q->credits_later = false;
	switch (vfs_rtio_credits_follow(q->sconn, (uint32_t)MIN(wanted, UINT16_MAX), &cr)) {
	case VFS_RTIO_CREDITS_NEVER:
		DBG_NOTICE("rtio: QoS credit ceiling not applied to %s@%s: not a single-channel "
			   "SMB2 connection\n", q->who.user, q->who.client);
		q->credits_on = false;
		return;
	case VFS_RTIO_CREDITS_LATER:
		q->credits_later = true;
		clock_gettime_mono(&q->credits_try);
		return;
	case VFS_RTIO_CREDITS_APPLIED:
		q->credits_moved = cr.max != cr.orig;
		vfs_rtio_qos_credits_report(q, &cr);
		return;
	case VFS_RTIO_CREDITS_UNCHANGED:
		if (cr.max != cr.orig &&
		    vfs_rtio_elapsed_ms(&q->credits_report) >= VFS_RTIO_CREDITS_REPORT_MS) {
			vfs_rtio_qos_credits_report(q, &cr);
		}
		return;
	}
}

uint64_t vfs_rtio_qos_charge(struct vfs_rtio_qos *q, bool write, uint64_t n,
			     struct vfs_rtio_qos_ticket *t)
{
	struct timespec now;
	uint64_t wait_ns;

	t->slot = NULL;
	if (q == NULL) {
		return 0;
	}
	vfs_rtio_qos_refresh(q);
	vfs_rtio_qos_credits(q);
	if (q->slot == NULL) {
		return 0;
	}
	clock_gettime_mono(&now);
	wait_ns = rtio_qos_charge_hold(q->slot, write, n,
				       (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec,
				       &t->hold);
	if (wait_ns > 0) {
		t->slot = q->slot;
		t->gen = q->slot_gen;
		vfs_rtio_qos_held_now++;
	}
	return wait_ns;
}

void vfs_rtio_qos_release(struct vfs_rtio_qos_ticket *t)
{
	if (t->slot != NULL) {
		rtio_qos_wait_done(t->slot, t->gen);
		vfs_rtio_qos_held_now--;
		t->slot = NULL;
	}
}

uint64_t vfs_rtio_qos_left(struct vfs_rtio_qos_ticket *t)
{
	struct timespec now;

	/* a slot given to another flow meanwhile dropped the backlog ahead of it */
	if (t->slot == NULL || !rtio_qos_current(t->slot, t->gen)) {
		return 0;
	}
	clock_gettime_mono(&now);
	return rtio_qos_hold_left(t->slot, &t->hold,
				  (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
}

void vfs_rtio_qos_pace(struct vfs_rtio_qos *q, bool write, uint64_t n)
{
	struct vfs_rtio_qos_ticket t;
	uint64_t wait_ns = vfs_rtio_qos_charge(q, write, n, &t);

	while (wait_ns > 0) {
		uint64_t nap = MIN(wait_ns, VFS_RTIO_QOS_RECHECK_NS);
		struct timespec ts = {
			.tv_sec = (time_t)(nap / 1000000000ull),
			.tv_nsec = (long)(nap % 1000000000ull),
		};

		/* an interrupted sleep goes on with what is left */
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
		}
		wait_ns = vfs_rtio_qos_left(&t);
	}
	vfs_rtio_qos_release(&t);
}

struct vfs_rtio_qos_policy_call {
	const struct rtio_qos_bind_req *who;
	struct rtio_qos_policy_rep *rep;
};

static ssize_t vfs_rtio_qos_policy_call(struct rtio_client *client, void *private_data)
{
	struct vfs_rtio_qos_policy_call *c = private_data;

	return rtio_client_qos_policy(client, c->who, c->rep);
}

int vfs_rtio_qos_policy(struct vfs_rtio_qos *q, struct rtio_qos_policy_rep *out)
{
	struct vfs_rtio_qos_policy_call c = { .who = &q->who, .rep = out };

	/* (re)attaches at most as often as any I/O would: MS-SQOS asks about once a second */
	if (vfs_rtio_session_client(q->session, true) == NULL) {
		return -ENOTCONN;
	}
	return (int)vfs_rtio_session_call(q->session, vfs_rtio_qos_policy_call, &c);
}

struct vfs_rtio_qos *vfs_rtio_qos_of(struct vfs_handle_struct *handle)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return NULL);
	return config->qos;
}
