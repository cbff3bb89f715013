# sendfile straight from aiod's cache. smbd takes its sendfile path only for
# unsigned, unencrypted sessions with "use sendfile = yes" and "aio read size
# = 0", so this runs a private instance: a guest share, vfs log level 5 to see
# the module's sendfile line, and aiod with max_io = 1M so one SMB read of
# several MiB goes out in several pinned pieces.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_sendfile() {
	local port=$((IT_PORT + 3)) n f rc=0
	it_private sendfile "$port" '[engine]\nmax_io = 1M' \
		'\tguest ok = yes\n\tuse sendfile = yes\n\taio read size = 0' \
		'\tmap to guest = bad user\n\tlog level = 1 vfs:5'
	for n in 1 4095 $((3 * 1024 * 1024 + 17)) $((7 * 1024 * 1024)); do
		f=$PRIV_DIR/share/f.$n
		head -c "$n" /dev/urandom > "$f"
		chmod 644 "$f"
		smbclient "//127.0.0.1/s" -p "$port" -N -c "get f.$n $PRIV_DIR/got.$n" > /dev/null 2>&1 ||
			{ echo "get of $n bytes failed"; rc=1; }
		cmp "$f" "$PRIV_DIR/got.$n" || { echo "size $n: content differs"; rc=1; }
	done
	# The module's own line proves the cache path was taken, not the kernel's.
	grep -q "rtio: sendfile of 7340032 bytes of f.7340032 from aiod's cache" \
		"$IT_T/log/smbd-sendfile.log" || { echo "no sendfile from the cache logged"; rc=1; }
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -E '^(requests|blocks_pinned)='
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -q '^blocks_pinned=0$' || rc=1
	it_private_stop
	return $rc
}
