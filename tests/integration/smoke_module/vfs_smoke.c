/*
 * vfs_smoke: a throwaway pass-through VFS module.  It exists only to prove
 * that mk/samba.mk's flags build a module that Debian's smbd loads and runs:
 * it logs once per connect (DBG_ERR, so the line shows at any debug level)
 * and passes async reads through, touching the usual module APIs
 * (lp_parm_*, DBG_*, SMB_VFS_NEXT_*, tevent_req, fsp_str_dbg).
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/tevent_unix.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

#define MODULE_NAME "smoke"

static int vfs_smoke_connect(struct vfs_handle_struct *handle,
			     const char *service, const char *user)
{
	int ret = SMB_VFS_NEXT_CONNECT(handle, service, user);
	int tag;

	if (ret < 0) {
		return ret;
	}
	tag = lp_parm_int(SNUM(handle->conn), MODULE_NAME, "tag", 0);
	DBG_ERR(MODULE_NAME ": module connected service=[%s] user=[%s] tag=%d\n",
		service, user, tag);
	return 0;
}

struct vfs_smoke_pread_state {
	ssize_t ret;
	struct vfs_aio_state vfs_aio_state;
};

static void vfs_smoke_pread_done(struct tevent_req *subreq);

static struct tevent_req *vfs_smoke_pread_send(struct vfs_handle_struct *handle,
					       TALLOC_CTX *mem_ctx,
					       struct tevent_context *ev,
					       struct files_struct *fsp,
					       void *data, size_t n,
					       off_t offset)
{
	struct tevent_req *req, *subreq;
	struct vfs_smoke_pread_state *state;

	req = tevent_req_create(mem_ctx, &state, struct vfs_smoke_pread_state);
	if (req == NULL) {
		return NULL;
	}
	DBG_DEBUG(MODULE_NAME ": pread %s n=%zu off=%jd\n",
		  fsp_str_dbg(fsp), n, (intmax_t)offset);
	subreq = SMB_VFS_NEXT_PREAD_SEND(state, ev, handle, fsp, data, n,
					 offset);
	if (tevent_req_nomem(subreq, req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, vfs_smoke_pread_done, req);
	return req;
}

static void vfs_smoke_pread_done(struct tevent_req *subreq)
{
	struct tevent_req *req =
		tevent_req_callback_data(subreq, struct tevent_req);
	struct vfs_smoke_pread_state *state =
		tevent_req_data(req, struct vfs_smoke_pread_state);

	state->ret = SMB_VFS_PREAD_RECV(subreq, &state->vfs_aio_state);
	TALLOC_FREE(subreq);
	tevent_req_done(req);
}

static ssize_t vfs_smoke_pread_recv(struct tevent_req *req,
				    struct vfs_aio_state *vfs_aio_state)
{
	struct vfs_smoke_pread_state *state =
		tevent_req_data(req, struct vfs_smoke_pread_state);

	if (tevent_req_is_unix_error(req, &vfs_aio_state->error)) {
		tevent_req_received(req);
		return -1;
	}
	*vfs_aio_state = state->vfs_aio_state;
	tevent_req_received(req);
	return state->ret;
}

static struct vfs_fn_pointers vfs_smoke_fns = {
	.connect_fn = vfs_smoke_connect,
	.pread_send_fn = vfs_smoke_pread_send,
	.pread_recv_fn = vfs_smoke_pread_recv,
};

/* smbd dlsym()s this name in every shared module. */
NTSTATUS samba_init_module(TALLOC_CTX *ctx);
NTSTATUS samba_init_module(TALLOC_CTX *ctx)
{
	return smb_register_vfs(SMB_VFS_INTERFACE_VERSION, MODULE_NAME,
				&vfs_smoke_fns);
}
