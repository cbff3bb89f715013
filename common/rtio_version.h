/*
 * rtio's version, in one place: aiod logs and reports it (INFO), aiodctl
 * prints it. The Makefile writes rtio_git.h (RTIO_GIT: git describe of the
 * tree built) into the build directory; a build outside git says only the
 * release.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef RTIO_VERSION_H
#define RTIO_VERSION_H

#define RTIO_RELEASE "0.1.0"

#if defined(__has_include)
#if __has_include("rtio_git.h")
#include "rtio_git.h"
#endif
#endif

#ifdef RTIO_GIT
#define RTIO_VERSION RTIO_RELEASE "+git." RTIO_GIT
#else
#define RTIO_VERSION RTIO_RELEASE
#endif

/*
 * The module carries "RTIO_SAMBA_MARK<smbd --version at build time>" as a
 * plain string, so aiodctl doctor can read which Samba it was built for
 * from the file even when this smbd can no longer load it.
 */
#define RTIO_SAMBA_MARK "rtio-built-for-samba="

#endif
