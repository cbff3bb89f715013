#!/usr/bin/env python
#
# waf build rule for building vfs_rtio inside a Samba source tree.
# Not used by this repository's own build (see Makefile and mk/samba.mk).
#
# Place (copy or symlink) this repository at source3/modules/rtio of a Samba
# tree and add
#     bld.RECURSE('rtio')
# to source3/modules/wscript_build; Samba's RECURSE then runs build() below.
# Configure Samba with --with-shared-modules=vfs_rtio (plus whatever else you
# pass) so that the module is enabled.  See docs/building-in-samba-tree.md.
#
# Only the VFS module is built here.  aiod, the daemon the module talks to,
# needs liburing and is built with this repository's Makefile.


def build(bld):
    # Every vfs_rtio/*.c, so that splitting the module into more files needs
    # no change here; from common/ only what the client side links (aiod's
    # server-side files stay out).
    module_sources = sorted(n.path_from(bld.path)
                            for n in bld.path.ant_glob('vfs_rtio/*.c'))
    common_sources = sorted(n.path_from(bld.path)
                            for n in bld.path.ant_glob('common/rtio_client*.c')) + \
        ['common/rtio_proto.c', 'common/rtio_shm.c', 'common/rtio_qos.c', 'common/rtio_sock.c',
         'common/rtio_queue.c']

    # SAMBA3_MODULE is SAMBA_MODULE plus source3's include dirs
    # (includes.h, smbd/smbd.h), as every module in source3/modules uses.
    # A shared module only: it exports samba_init_module(), which smbd looks
    # up after dlopen().  With init_function='' Samba's convention applies:
    # configure --with-shared-modules=vfs_rtio defines
    # vfs_rtio_init=samba_init_module in config.h, so the source may name its
    # entry point either way.
    bld.SAMBA3_MODULE('vfs_rtio',
                      subsystem='vfs',
                      source=' '.join(module_sources + common_sources),
                      includes='vfs_rtio common',
                      deps='samba-util tevent talloc',
                      init_function='',
                      internal_module=False,
                      enabled=bld.SAMBA3_IS_ENABLED_MODULE('vfs_rtio'))
