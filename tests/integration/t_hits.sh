# rtio:hits = local (the default): a read wholly in aiod's cache is copied by
# smbd itself out of the shared region and reported with HIT (hit_reads,
# hit_bytes), and it returns the file's current bytes: after a hot read, the
# file is replaced through SMB and changed behind Samba's back, and each get
# must see the new content, not the cached one. A file the page cache holds
# (just written locally) and aiod's cache does not is read by smbd from its
# own descriptor (local_reads), not loaded by aiod from the device.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_hits() {
	local d=$IT_T/data/hits size=$((16 * 1024 * 1024)) f=$IT_T/share/rtio/hits.bin
	local h0 h1 hb0 hb1 r0 r1
	mkdir -p "$d"
	head -c "$size" /dev/urandom > "$d/src"
	cp "$d/src" "$f"
	chown "$IT_USER" "$f"
	rtio_drop_pages "$f"	# else the page cache serves it, not aiod
	# cold: READ0 loads whole blocks (a sequential reader)
	it_smb rtio "get hits.bin $d/cold" >/dev/null
	[ "$(it_md5 "$d/src")" = "$(it_md5 "$d/cold")" ] || { echo "cold get: checksum differs"; return 1; }
	h0=$(it_stat hit_reads)
	hb0=$(it_stat hit_bytes)
	r0=$(it_stat requests)
	it_smb rtio "get hits.bin $d/hot" >/dev/null
	h1=$(it_stat hit_reads)
	hb1=$(it_stat hit_bytes)
	r1=$(it_stat requests)
	[ "$(it_md5 "$d/src")" = "$(it_md5 "$d/hot")" ] || { echo "hot get: checksum differs"; return 1; }
	echo "hot get of $size bytes: hit_reads +$((h1 - h0)), hit_bytes +$((hb1 - hb0)), requests +$((r1 - r0))"
	if [ $((hb1 - hb0)) -lt $((size / 2)) ]; then
		echo "the hot get was not copied by smbd from the cache (rtio:hits = local)"
		return 1
	fi
	# Replaced through SMB (truncate + writes, each reported to aiod): the next get sees the new file.
	head -c "$size" /dev/urandom > "$d/src2"
	it_smb rtio "put $d/src2 hits.bin; get hits.bin $d/after-put" >/dev/null
	[ "$(it_md5 "$d/src2")" = "$(it_md5 "$f")" ] || { echo "put did not write the file"; return 1; }
	[ "$(it_md5 "$d/src2")" = "$(it_md5 "$d/after-put")" ] ||
		{ echo "get after put returned other bytes than the file's: $(cmp "$d/src2" "$d/after-put" | head -1)"; it_stat hit_reads; return 1; }
	it_smb rtio "get hits.bin $d/after-put-hot" >/dev/null
	[ "$(it_md5 "$d/src2")" = "$(it_md5 "$d/after-put-hot")" ] ||
		{ echo "hot get after put: checksum differs"; return 1; }
	# Changed outside Samba, in the middle, across a block boundary (aiod's inotify watch).
	head -c $((3 * 1024 * 1024)) /dev/urandom > "$d/patch"
	dd if="$d/patch" of="$f" bs=4096 seek=$(((5 * 1024 * 1024 + 4096 * 3) / 4096)) conv=notrunc \
		status=none
	dd if="$d/patch" of="$d/src2" bs=4096 seek=$(((5 * 1024 * 1024 + 4096 * 3) / 4096)) \
		conv=notrunc status=none
	it_smb rtio "get hits.bin $d/after-local" >/dev/null
	[ "$(it_md5 "$d/src2")" = "$(it_md5 "$d/after-local")" ] ||
		{ echo "get after a local write returned old cached bytes"; return 1; }
	# In the page cache only: smbd reads it itself; aiod loads nothing.
	local g=$IT_T/share/rtio/hits-pc.bin l0 l1 m0 m1
	cp "$d/src" "$g"
	chown "$IT_USER" "$g"
	l0=$(it_stat local_reads)
	m0=$(it_stat cache_misses)
	it_smb rtio "get hits-pc.bin $d/pc" >/dev/null
	sleep 0.3	# the session's last LOCAL_READS report
	l1=$(it_stat local_reads)
	m1=$(it_stat cache_misses)
	[ "$(it_md5 "$d/src")" = "$(it_md5 "$d/pc")" ] || { echo "page-cache get: checksum differs"; return 1; }
	echo "page-cache get: local_reads +$((l1 - l0)), cache_misses +$((m1 - m0))"
	[ "$l1" -gt "$l0" ] && [ "$m1" = "$m0" ] ||
		{ echo "a file the page cache held was not read by smbd itself"; return 1; }
}
