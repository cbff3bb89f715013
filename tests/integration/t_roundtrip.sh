# smbclient put/get round trips with checksums, on a share with and one
# without the module: around aiod's block size, and a sparse multi-GiB file.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# t_roundtrip SHARE
t_roundtrip() {
	local share=$1 d=$IT_T/data/roundtrip-$share n sizes cmds="" bad=0 from r0 r1
	local b=$IT_BLOCK
	mkdir -p "$d"
	from=$(($(wc -l < "$IT_T/log/smbd.log") + 1))
	r0=$(it_stat requests)
	sizes="0 1 $((b - 1)) $b $((b + 1)) $((5 * b + 12345))"
	for n in $sizes; do
		head -c "$n" /dev/urandom > "$d/src-$n"
		cmds="${cmds}put $d/src-$n rt-$n.bin; "
	done
	for n in $sizes; do
		cmds="${cmds}get rt-$n.bin $d/got-$n; "
	done
	it_smb "$share" "$cmds"
	for n in $sizes; do
		if [ ! -f "$d/got-$n" ]; then
			echo "size $n: get produced no file"
			bad=1
		elif [ "$(it_md5 "$d/src-$n")" != "$(it_md5 "$d/got-$n")" ]; then
			echo "size $n: checksum of the file read back differs"
			bad=1
		elif [ "$(it_md5 "$d/src-$n")" != "$(it_md5 "$IT_T/share/$share/rt-$n.bin")" ]; then
			echo "size $n: checksum of the file on the server's disk differs"
			bad=1
		fi
	done
	r1=$(it_stat requests)
	echo "aiod requests: $r0 -> $r1"
	if [ "$share" != plain ]; then
		[ "$r1" -gt "$r0" ] || { echo "no I/O went through aiod"; bad=1; }
		# a request aiod never answered in time shows up as a detach
		if tail -n +"$from" "$IT_T/log/smbd.log" | grep "rtio: detached"; then
			bad=1
		fi
	fi
	return $bad
}

# A 2 GiB file, mostly holes, with data around block edges near the start,
# the middle and the end; made once, copied (holes kept) onto each share's
# disk, read back over SMB.
#
#   0      1M+7          700M+12345        2G-1M-1   2G
#   |data|..hole..|data|..hole..|data 3M|..hole..|data 1M+1|
IT_SPARSE_SIZE=$((2 * 1024 * 1024 * 1024))

# Prints the md5 of the sparse source, made on first use.
it_sparse_source() {
	local f=$IT_T/data/sparse.bin
	if [ ! -f "$f.md5" ]; then
		truncate -s "$IT_SPARSE_SIZE" "$f"
		head -c $((1024 * 1024)) /dev/urandom |
			dd of="$f" conv=notrunc oflag=seek_bytes seek=0 status=none
		head -c 4096 /dev/urandom |
			dd of="$f" conv=notrunc oflag=seek_bytes seek=$((1024 * 1024 + 7)) status=none
		head -c $((3 * 1024 * 1024)) /dev/urandom | dd of="$f" conv=notrunc \
			oflag=seek_bytes seek=$((700 * 1024 * 1024 + 12345)) iflag=fullblock status=none
		head -c $((1024 * 1024 + 1)) /dev/urandom | dd of="$f" conv=notrunc \
			oflag=seek_bytes seek=$((IT_SPARSE_SIZE - 1024 * 1024 - 1)) iflag=fullblock status=none
		it_md5 "$f" > "$f.md5"
	fi
	cat "$f.md5"
}

# t_sparse SHARE
t_sparse() {
	local share=$1 f=$IT_T/share/$1/sparse.bin want got
	want=$(it_sparse_source)
	cp --sparse=always "$IT_T/data/sparse.bin" "$f"
	chown "$IT_USER" "$f"
	[ "$(stat -c %s "$f")" = "$IT_SPARSE_SIZE" ] || { echo "sparse file has the wrong size"; return 1; }
	got=$(it_smb "$share" "get sparse.bin -" 2>"$IT_T/data/sparse-$share.err" | md5sum | cut -d' ' -f1)
	if [ "$want" != "$got" ]; then
		echo "2 GiB sparse file read over SMB: md5 $got, want $want"
		cat "$IT_T/data/sparse-$share.err"
		return 1
	fi
	rm -f "$f"
}
