/*
 * rtio's version, in one place: aiod reports it (INFO), aiodctl prints it.
 * The Makefile passes RTIO_GIT (git describe of the tree built) when the
 * source is a git checkout; a tarball build says only the release.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef RTIO_VERSION_H
#define RTIO_VERSION_H

#define RTIO_RELEASE "0.1"

#ifdef RTIO_GIT
#define RTIO_VERSION RTIO_RELEASE "+git." RTIO_GIT
#else
#define RTIO_VERSION RTIO_RELEASE
#endif

#endif
