# I/O on the rtio share goes through aiod; on the plain share it does not.
# Writes: on the rtio share smbd writes and reports them (WROTE: counted in
# bytes_written, no disk_writes of aiod's); on rtioaiod aiod writes them.
# A new file is registered when the writes reach rtio:register min size
# (IT_REGISTER_MIN): what comes before is smbd's alone.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_stats() {
	local d=$IT_T/data/stats size=$((8 * 1024 * 1024)) r0 r1 r2 w0 w1 rb0 rb1 dw0 dw1 dw2
	mkdir -p "$d"
	head -c "$size" /dev/urandom > "$d/src"
	r0=$(it_stat requests)
	it_smb plain "put $d/src stats.bin; get stats.bin $d/got-plain" >/dev/null
	r1=$(it_stat requests)
	if [ "$r1" != "$r0" ]; then
		echo "I/O on the plain share reached aiod: requests $r0 -> $r1"
		return 1
	fi
	w0=$(it_stat bytes_written)
	rb0=$(it_stat bytes_read)
	dw0=$(it_stat disk_writes)
	# (the file's pages dropped between: what the page cache holds smbd reads itself)
	it_smb rtio "put $d/src stats.bin" >/dev/null
	rtio_drop_pages "$IT_T/share/rtio/stats.bin"
	it_smb rtio "get stats.bin $d/got-rtio" >/dev/null
	r2=$(it_stat requests)
	w1=$(it_stat bytes_written)
	rb1=$(it_stat bytes_read)
	dw1=$(it_stat disk_writes)
	it_smb rtioaiod "put $d/src stats.bin" >/dev/null
	dw2=$(it_stat disk_writes)
	echo "disk_writes of aiod: $dw0 -> $dw1 (rtio share) -> $dw2 (rtioaiod share)"
	if [ "$dw1" != "$dw0" ] || [ "$dw2" -le "$dw1" ]; then
		echo "writes did not take the configured path (rtio:write = local / aiod)"
		return 1
	fi
	[ "$(it_md5 "$d/src")" = "$(it_md5 "$IT_T/share/rtioaiod/stats.bin")" ] ||
		{ echo "rtioaiod: checksum differs"; return 1; }
	echo "rtio share: requests $r1 -> $r2, bytes_written +$((w1 - w0)), bytes_read +$((rb1 - rb0))"
	if [ "$r2" -le "$r1" ] || [ $((w1 - w0)) -lt $((size - IT_REGISTER_MIN)) ] ||
	   [ $((rb1 - rb0)) -lt "$size" ]; then
		echo "I/O on the rtio share did not go through aiod"
		return 1
	fi
	[ "$(it_md5 "$d/src")" = "$(it_md5 "$d/got-plain")" ] || { echo "plain: checksum differs"; return 1; }
	[ "$(it_md5 "$d/src")" = "$(it_md5 "$d/got-rtio")" ] || { echo "rtio: checksum differs"; return 1; }
}
