# The kernel's page cache, for the tests (tests/integration/lib.sh) and the
# benchmarks (bench/smb/run.sh). Source it.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# rtio_drop_pages FILE...: drop the files' pages from the page cache (written
# back first), nothing else's. The module reads itself what the page cache
# holds of a file that is not a stream; a file just written is there, so a
# test or a run that wants aiod to read it drops its pages first.
rtio_drop_pages() {
	sync "$@" && /usr/bin/python3 -c 'import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)' "$@"
}
