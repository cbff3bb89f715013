# Small files through rtio cost aiod nothing: a file smaller than
# rtio:register min size (1 MiB by default) is not registered at open, and
# smbd does its I/O as without the module until an I/O reaches that size. An
# unpack of small files, a directory of thumbnails: no OPEN, no WROTE, no
# READ0, no CLOSE, no UNLINK. A big file on the same share still goes
# through aiod, and rtio:register min size = 0 registers every file again.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# it_aiod_files PATTERN: how many files aiod knows by a name matching PATTERN (grep -E).
it_aiod_files() {
	"$BUILD/aiodctl" -s "$IT_T/aiod/aiod.sock" files | awk 'NR > 1 {print $1}' |
		grep -c -E "$1" || true
}

# it_small_tree DIR N SEED: N files of 4..64 KiB of random bytes, s001.bin...
it_small_tree() {
	local dir=$1 n=$2 i size
	RANDOM=$3
	mkdir -p "$dir"
	for i in $(seq -f '%03g' 1 "$n"); do
		size=$((4096 + (RANDOM * 2 + RANDOM % 2) % (65536 - 4096 + 1)))
		head -c "$size" /dev/urandom > "$dir/s$i.bin"
	done
}

# it_same_files SRC GOT: every file of SRC has a byte-exact copy in GOT.
it_same_files() {
	local f bad=0
	for f in "$1"/*; do
		cmp -s "$f" "$2/$(basename "$f")" || { echo "$(basename "$f"): differs or missing"; bad=1; }
	done
	return $bad
}

# t_smallfiles SHARE SEED: 200 small files written, read back and deleted
# through SHARE with smbclient, without a single message to aiod; then a
# 4 MiB file that is registered.
t_smallfiles() {
	local share=$1 seed=$2 n=200 d=$IT_T/data/small-$1 sd=small-$1 bad=0
	local r0 r1 fr0 fr1 e0 e1 k0 k1 rb0 rb1
	it_small_tree "$d/src" $n "$seed"
	mkdir -p "$d/got"
	r0=$(it_stat requests)
	fr0=$(it_stat file_records)
	e0=$(it_stat errors)
	k0=$(it_aiod_files "^$sd/")
	it_smb "$share" "mkdir $sd; cd $sd; lcd $d/src; prompt off; mput s*.bin" \
		> "$d/put.out" 2>&1 || { cat "$d/put.out"; echo "mput failed"; return 1; }
	it_smb "$share" "cd $sd; lcd $d/got; prompt off; mget s*.bin" \
		> "$d/get.out" 2>&1 || { cat "$d/get.out"; echo "mget failed"; return 1; }
	it_same_files "$d/src" "$d/got" || { echo "files read back differ"; bad=1; }
	it_same_files "$d/src" "$IT_T/share/$share/$sd" ||
		{ echo "files on the server's disk differ"; bad=1; }
	it_smb "$share" "cd $sd; del s*.bin" > "$d/del.out" 2>&1 ||
		{ cat "$d/del.out"; echo "del failed"; return 1; }
	if [ -n "$(ls "$IT_T/share/$share/$sd")" ]; then
		echo "files left after del: $(ls "$IT_T/share/$share/$sd" | head -n 5)"
		bad=1
	fi
	r1=$(it_stat requests)
	fr1=$(it_stat file_records)
	e1=$(it_stat errors)
	k1=$(it_aiod_files "^$sd/s[0-9]+\\.bin\$")
	echo "$n small files written, read, deleted: aiod requests $r0 -> $r1," \
		"file records $fr0 -> $fr1, errors $e0 -> $e1, $sd/ files aiod knows: $k0 -> $k1"
	# registered files would have sent READ0/WROTE (requests) and left records
	[ "$r1" = "$r0" ] || { echo "small files sent data requests to aiod"; bad=1; }
	[ "$fr1" -le "$fr0" ] || { echo "aiod got new file records: small files were registered"; bad=1; }
	[ "$k1" = 0 ] || { echo "aiod knows $k1 of the small files by name"; bad=1; }
	# an UNLINK aiod refuses (the session never had the file) counts as an error
	[ "$e1" = "$e0" ] || { echo "aiod answered errors: UNLINK of unregistered files?"; bad=1; }

	# a big file on the same share: registered (when the put reaches 1 MiB, then
	# at the get's open) and read through aiod (its pages dropped between: what
	# the page cache holds smbd reads itself)
	head -c $((4 * 1024 * 1024)) /dev/urandom > "$d/big.src"
	rb0=$(it_stat bytes_read)
	it_smb "$share" "cd $sd; put $d/big.src big.bin" > "$d/big.out" 2>&1 &&
		rtio_drop_pages "$IT_T/share/$share/$sd/big.bin" &&
		it_smb "$share" "cd $sd; get big.bin $d/big.got" >> "$d/big.out" 2>&1 ||
		{ cat "$d/big.out"; echo "big put/get failed"; return 1; }
	r1=$(it_stat requests)
	rb1=$(it_stat bytes_read)
	echo "4 MiB file: aiod requests +$((r1 - r0)), bytes_read +$((rb1 - rb0))," \
		"known as $sd/big.bin: $(it_aiod_files "^$sd/big\\.bin\$")"
	[ "$(it_md5 "$d/big.src")" = "$(it_md5 "$d/big.got")" ] || { echo "big file differs"; bad=1; }
	[ "$r1" -gt "$r0" ] || { echo "the 4 MiB file did not go through aiod"; bad=1; }
	[ $((rb1 - rb0)) -ge $((4 * 1024 * 1024)) ] ||
		{ echo "the 4 MiB file was not read through aiod"; bad=1; }
	[ "$(it_aiod_files "^$sd/big\\.bin\$")" = 1 ] || { echo "aiod does not know $sd/big.bin"; bad=1; }
	it_smb "$share" "cd $sd; del big.bin; cd ..; rmdir $sd" > /dev/null 2>&1 || true
	return $bad
}

# rtio:register min size = 0 ([rtioeager]): every file is registered at
# open, small ones too, as before the option existed.
t_smallfiles_eager() {
	local d=$IT_T/data/small-eager r0 r1 k bad=0
	it_small_tree "$d/src" 20 7
	mkdir -p "$d/got"
	r0=$(it_stat requests)
	# (their pages dropped between: what the page cache holds smbd reads itself)
	it_smb rtioeager "mkdir eager; cd eager; lcd $d/src; prompt off; mput s*.bin" > "$d/out" 2>&1 &&
		rtio_drop_pages "$IT_T/share/rtioeager/eager/"s*.bin &&
		it_smb rtioeager "cd eager; lcd $d/got; prompt off; mget s*.bin" >> "$d/out" 2>&1 ||
		{ cat "$d/out"; echo "mput/mget failed"; return 1; }
	r1=$(it_stat requests)
	k=$(it_aiod_files '^eager/s[0-9]+\.bin$')
	echo "20 small files with rtio:register min size = 0: aiod requests $r0 -> $r1, aiod knows $k"
	it_same_files "$d/src" "$d/got" || bad=1
	# each file: WROTE for its write(s), READ0 for its read(s); their blocks stay cached
	[ $((r1 - r0)) -ge 40 ] || { echo "small files did not go through aiod"; bad=1; }
	[ "$k" -ge 1 ] || { echo "aiod knows none of the small files"; bad=1; }
	return $bad
}

# t_smallgrow SHARE SEED: small files grown past the size, shrunk, overwritten,
# across three connections (itest_smallgrow.c): every read sees the last write.
t_smallgrow() {
	local share=$1 seed=$2 from
	from=$(($(wc -l < "$IT_T/log/smbd.log") + 1))
	"$IT_T/bin/itest_smallgrow" "$(it_url "$share")" "$seed"
	if tail -n +"$from" "$IT_T/log/smbd.log" | grep "rtio: detached"; then
		return 1
	fi
}
