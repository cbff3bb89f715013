# The sendfile path. smbd takes it only for unsigned, unencrypted sessions
# with "use sendfile = yes" and "aio read size = 0", so this runs a private
# instance: a guest share, vfs log level 5 to see the module's sendfile
# lines, and aiod with max_io = 1M so one SMB read of several MiB goes out in
# several pinned pieces. Every file is read three times, once down each
# path (nothing is owed a rate here: no stream, no reservation):
#   kernel      aiod never read it: the kernel sends it, as a plain share
#               would (through aiod it would live in aiod's cache only, and
#               every later sendfile would copy it);
#   aiod        loaded into aiod's cache (aiodctl cat), its pages dropped:
#               sent from aiod's pinned blocks;
#   page-cache  in aiod's cache and read back into the page cache: the
#               kernel sends the page cache's pages, without a copy.
# A stream's file (class t) goes through aiod even from the page cache: its
# deadlines and read-ahead follow every read.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_sendfile() {
	local port=$((IT_PORT + 3)) n f pass line rc=0
	it_private sendfile "$port" '[engine]\nmax_io = 1M\n[stream.t]\nmatch = v.*\nbitrate = 10M\nprebuffer_ms = 100' \
		'\tguest ok = yes\n\tuse sendfile = yes\n\taio read size = 0' \
		'\tmap to guest = bad user\n\tlog level = 1 vfs:5'
	for n in 1 4095 $((3 * 1024 * 1024 + 17)) $((7 * 1024 * 1024)); do
		f=$PRIV_DIR/share/f.$n
		head -c "$n" /dev/urandom > "$f"
		chmod 644 "$f"
	done
	for pass in kernel aiod page-cache; do
		case $pass in
		aiod)
			for f in "$PRIV_DIR"/share/f.*; do
				"$BUILD/aiodctl" -s "$PRIV_SOCK" cat "$f" > /dev/null ||
					{ echo "aiodctl cat $f failed"; rc=1; }
			done
			rtio_drop_pages "$PRIV_DIR"/share/f.* || { echo "cannot drop the files' pages"; rc=1; }
			;;
		page-cache) cat "$PRIV_DIR"/share/f.* > /dev/null ;;
		esac
		for n in 1 4095 $((3 * 1024 * 1024 + 17)) $((7 * 1024 * 1024)); do
			f=$PRIV_DIR/share/f.$n
			rm -f "$PRIV_DIR/got.$n"
			smbclient "//127.0.0.1/s" -p "$port" -N -c "get f.$n $PRIV_DIR/got.$n" > /dev/null 2>&1 ||
				{ echo "$pass: get of $n bytes failed"; rc=1; }
			cmp "$f" "$PRIV_DIR/got.$n" || { echo "$pass: size $n: content differs"; rc=1; }
		done
		# The module's own lines prove which path was taken, not the kernel's alone.
		case $pass in
		page-cache) line="rtio: sendfile of 7340032 bytes of f.7340032 by the kernel: the page cache holds it" ;;
		kernel) line="rtio: sendfile of 7340032 bytes of f.7340032 by the kernel: nothing is owed a rate, aiod's cache does not hold it" ;;
		aiod) line="rtio: sendfile of 7340032 bytes of f.7340032 from aiod's cache" ;;
		esac
		# (a line no earlier pass can have written)
		grep -qF "$line" "$IT_T/log/smbd-sendfile.log" || { echo "$pass: not logged: $line"; rc=1; }
	done
	f=$PRIV_DIR/share/v.mxf
	head -c $((5 * 1024 * 1024)) /dev/urandom > "$f"
	chmod 644 "$f"
	smbclient "//127.0.0.1/s" -p "$port" -N -c "get v.mxf $PRIV_DIR/got.v" > /dev/null 2>&1 ||
		{ echo "stream: get failed"; rc=1; }
	cmp "$f" "$PRIV_DIR/got.v" || { echo "stream: content differs"; rc=1; }
	grep -qF "rtio: sendfile of 5242880 bytes of v.mxf from aiod's cache" "$IT_T/log/smbd-sendfile.log" ||
		{ echo "stream: not sent from aiod's cache"; rc=1; }
	! grep -qF "of v.mxf by the kernel" "$IT_T/log/smbd-sendfile.log" ||
		{ echo "stream: a read went to the kernel"; rc=1; }
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -E '^(requests|blocks_pinned)='
	"$BUILD/aiodctl" -s "$PRIV_SOCK" stats | grep -q '^blocks_pinned=0$' || rc=1
	it_private_stop
	return $rc
}
