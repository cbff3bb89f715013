# Building a Samba VFS module against the installed (Debian) Samba.
#
# Include from the top-level Makefile:   include mk/samba.mk
#
# Headers come from Samba's source tree of exactly the installed version
# (fetched by scripts/deps.sh) plus the files scripts/samba-gen.sh generates
# into $(SAMBA_GEN); the module links against the installed libraries, so
# that its symbol versions match the smbd that loads it.
#
# A module rule looks like:
#   build/vfs_x.o: vfs_x.c | $(SAMBA_GEN_STAMP)
#           $(CC) $(CFLAGS) $(SAMBA_CFLAGS) $(SAMBA_WARN_RELAX) $(SAMBA_CPPFLAGS) -c -o $@ $<
#   build/x.so: build/vfs_x.o
#           $(CC) $(SAMBA_LDFLAGS) -o $@ $^ $(SAMBA_LIBS)
# and installs as $(SAMBA_VFS_DIR)/x.so; smb.conf then says `vfs objects = x`.
#
# Everything that asks the system (dpkg-architecture, smbd, the source tree)
# is evaluated lazily and at most once, and tolerates absence, so `make help`
# or `make clean` work on a machine without Samba.

_samba_saved_default_goal := $(.DEFAULT_GOAL)

ifndef SAMBA_ROOT
SAMBA_ROOT      := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
endif
# Follows the includer's BUILD (which scripts/deps.sh also honours) if set.
SAMBA_BUILD_DIR ?= $(or $(BUILD),$(SAMBA_ROOT)/build)
SAMBA_SRC       ?= $(SAMBA_BUILD_DIR)/src/samba
SAMBA_GEN       ?= $(SAMBA_BUILD_DIR)/samba-gen
SAMBA_GEN_STAMP := $(SAMBA_GEN)/.stamp

# $(call _samba_once,VAR,shell command): define VAR so that the command runs
# on first use only and its output is then remembered.
_samba_once = $(eval $(1) = $$(eval $(1) := $$$$(shell $(2)))$$($(1)))

# Debian multiarch triplet, e.g. x86_64-linux-gnu.
$(call _samba_once,SAMBA_MULTIARCH,dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $(CC) -print-multiarch 2>/dev/null)
# Where Debian keeps Samba's private libraries.
SAMBA_LIBDIR = /usr/lib/$(SAMBA_MULTIARCH)/samba
# smbd's module base dir; VFS modules live in its vfs/ subdir.  Empty when
# smbd is not installed; SAMBA_VFS_DIR then stops make (only when a recipe
# that installs actually uses it) rather than install into /vfs.
$(call _samba_once,SAMBA_MODULESDIR,smbd -b 2>/dev/null | sed -n 's/^ *MODULESDIR: *//p')
SAMBA_VFS_DIR = $(if $(SAMBA_MODULESDIR),$(SAMBA_MODULESDIR)/vfs,$(error mk/samba.mk: smbd not found, cannot tell where VFS modules go; install samba (scripts/deps.sh)))
# The VFS ABI number the headers were written for (vfs_rtio can assert it).
$(call _samba_once,SAMBA_VFS_VERSION,sed -n 's/^\#define SMB_VFS_INTERFACE_VERSION \([0-9][0-9]*\).*/\1/p' $(SAMBA_SRC)/source3/include/vfs.h 2>/dev/null)

# Generated dir first: its include/config.h and gen_ndr headers stand in for
# what a waf build would have put under bin/default.
SAMBA_CPPFLAGS = \
	-D_SAMBA_BUILD_=4 -DHAVE_CONFIG_H=1 -D_GNU_SOURCE=1 \
	-D_XOPEN_SOURCE_EXTENDED=1 -D__STDC_WANT_LIB_EXT1__=1 -D_REENTRANT \
	-I$(SAMBA_GEN)/include -I$(SAMBA_GEN) \
	-I$(SAMBA_SRC)/source3 -I$(SAMBA_SRC)/source3/include \
	-I$(SAMBA_SRC)/lib/replace -I$(SAMBA_SRC) \
	-I$(SAMBA_SRC)/lib/tdb/include -I$(SAMBA_SRC)/lib/talloc \
	-I$(SAMBA_SRC)/lib/tevent

SAMBA_CFLAGS = -fPIC

# Samba's headers compile cleanly with -Wall -Wextra -O2 (all of
# source3/modules/vfs_*.c that build here were checked).  What remains is the
# VFS calling convention: every op gets handle/fsp/... whether it uses them
# or not, and samba_init_module() gets a ctx that most modules ignore.
SAMBA_WARN_RELAX = -Wno-unused-parameter

# -z defs turns an ABI or library mismatch into a link error instead of a
# "Can't find a vfs module" at connect time; --as-needed drops the libraries
# below that a given module does not use.
SAMBA_LDFLAGS = -shared -fPIC -Wl,-z,defs -Wl,--as-needed \
	-L$(SAMBA_LIBDIR) -Wl,-rpath,$(SAMBA_LIBDIR)

# Private libraries (libNAME-private-samba.so.0 in $(SAMBA_LIBDIR)) a module
# typically needs, found by linking vfs_smoke, vfs_io_uring and vfs_aio_fork
# with -z defs: smbd-base (SMB_VFS_NEXT_*, smb_register_vfs, fsp_str_dbg),
# smbd-shim (become_root/unbecome_root), samba-debug (DBG_*), genrand
# (smb_panic, hence SMB_ASSERT; and generate_random_buffer), replace
# (rep_memset_s, hence ZERO_STRUCT), sys-rw (sys_pread_full & co), msghdr
# (msghdr_prep_fds & co, fd passing), samba-sockets (tsocket_address_*: the
# client's address for QoS).  vfs_aio_pthread would also need samba3-util and
# messages-dgm.
SAMBA_PRIVATE_LIBS ?= smbd-base smbd-shim samba-debug genrand replace sys-rw msghdr samba-sockets
# Public ones have no unversioned .so link without samba-dev, hence -l:.
# smbconf: lp_parm_*; samba-util: talloc_stackframe, smb_panic, ...;
# samba-errors: nt_errstr, map_nt_error_from_unix; tevent-util:
# tevent_req_is_unix_error & co.
SAMBA_LIBS = $(foreach l,$(SAMBA_PRIVATE_LIBS),-l:lib$(l)-private-samba.so.0) \
	-l:libsmbconf.so.0 -l:libsamba-util.so.0 -l:libsamba-errors.so.1 \
	-l:libtevent-util.so.0 -ltalloc -ltevent

$(SAMBA_GEN_STAMP): $(SAMBA_SRC)/.unpacked $(SAMBA_ROOT)/scripts/samba-gen.sh
	$(SAMBA_ROOT)/scripts/samba-gen.sh $(SAMBA_SRC) $(SAMBA_GEN)
	@touch $@

$(SAMBA_SRC)/.unpacked:
	@echo "mk/samba.mk: no Samba source at $(SAMBA_SRC); run 'make deps' as root first" >&2
	@false

.PHONY: samba-gen samba-info
samba-gen: $(SAMBA_GEN_STAMP)

samba-info:
	@echo "SAMBA_SRC=$(SAMBA_SRC)"
	@echo "SAMBA_GEN=$(SAMBA_GEN)"
	@echo "SAMBA_LIBDIR=$(SAMBA_LIBDIR)"
	@echo "SAMBA_MODULESDIR=$(SAMBA_MODULESDIR)"
	@echo "SAMBA_VFS_DIR=$(if $(SAMBA_MODULESDIR),$(SAMBA_VFS_DIR))"
	@echo "SAMBA_VFS_VERSION=$(SAMBA_VFS_VERSION)"
	@echo "SAMBA_CPPFLAGS=$(SAMBA_CPPFLAGS)"
	@echo "SAMBA_CFLAGS=$(SAMBA_CFLAGS) $(SAMBA_WARN_RELAX)"
	@echo "SAMBA_LDFLAGS=$(SAMBA_LDFLAGS)"
	@echo "SAMBA_LIBS=$(SAMBA_LIBS)"

# Including this file must not change the includer's default goal.
.DEFAULT_GOAL := $(_samba_saved_default_goal)
