# The rtio:* parameters: bad values named in the log, include/exclude,
# and rtio:fallback = no.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_config_bad_values() {
	local log=$IT_T/log/smbd.log from
	from=$(($(wc -l < "$log") + 1))
	it_smb badparams "ls" >/dev/null
	tail -n +"$from" "$log" | grep "rtio:" || true
	tail -n +"$from" "$log" | grep -q "rtio:timeout = 5 is below 100 ms, using 100" ||
		{ echo "no log line naming rtio:timeout"; return 1; }
	tail -n +"$from" "$log" | grep -q "rtio:fallback = 'maybe' is not yes or no, using yes" ||
		{ echo "no log line naming rtio:fallback"; return 1; }
}

# it_requests_for SHARE FILE: aiod requests caused by a put + get of FILE.
it_requests_for() {
	local r0 r1 src=$IT_T/data/filter.src
	[ -f "$src" ] || head -c $((2 * 1024 * 1024)) /dev/urandom > "$src"
	r0=$(it_stat requests)
	it_smb "$1" "put $src $2; get $2 $IT_T/data/filter.got" >/dev/null 2>&1
	r1=$(it_stat requests)
	[ "$(it_md5 "$src")" = "$(it_md5 "$IT_T/data/filter.got")" ] || { echo "$2: checksum differs" >&2; }
	echo $((r1 - r0))
}

t_config_filters() {
	local name n bad=0
	for name in clip.mxf CLIP2.MOV; do
		n=$(it_requests_for filtered "$name")
		echo "$name: $n aiod requests"
		[ "$n" -gt 0 ] || { echo "$name matches rtio:include but did not go through aiod"; bad=1; }
	done
	for name in notes.txt skip/clip3.mxf; do
		n=$(it_requests_for filtered "$name")
		echo "$name: $n aiod requests"
		[ "$n" = 0 ] || { echo "$name should be left out by rtio:include/exclude"; bad=1; }
	done
	return $bad
}

# Files smaller than rtio:register min size never needed aiod (they are not
# registered until they grow): they work without aiod whatever rtio:fallback
# says. The files that would be aiod's are 2 MiB.
t_config_fallback_off() {
	local f=$IT_T/share/strict/existing.bin out size=$((2 * 1024 * 1024))
	head -c "$size" /dev/urandom > "$f"
	chown "$IT_USER" "$f"
	out=$(it_smb strict "get existing.bin $IT_T/data/strict.got" 2>&1) || true
	echo "get: $out"
	if [ -f "$IT_T/data/strict.got" ] && cmp -s "$f" "$IT_T/data/strict.got"; then
		echo "rtio:fallback = no, aiod absent: a read still succeeded"
		return 1
	fi
	head -c "$size" /dev/urandom > "$IT_T/data/strict.src"
	out=$(it_smb strict "put $IT_T/data/strict.src new.bin" 2>&1) || true
	echo "put: $out"
	if cmp -s "$IT_T/data/strict.src" "$IT_T/share/strict/new.bin"; then
		echo "rtio:fallback = no, aiod absent: a write still succeeded"
		return 1
	fi
	grep -q "rtio: aiod not available at $IT_T/no-aiod/aiod.sock" "$IT_T/log/smbd.log" ||
		{ echo "no 'aiod not available' line for the strict share"; return 1; }
	head -c 20000 /dev/urandom > "$IT_T/data/strict-small.src"
	it_smb strict "put $IT_T/data/strict-small.src small.bin; get small.bin $IT_T/data/strict-small.got" \
		> /dev/null 2>&1 || { echo "a small file (never aiod's) failed without aiod"; return 1; }
	cmp "$IT_T/data/strict-small.src" "$IT_T/data/strict-small.got" ||
		{ echo "a small file read back differs"; return 1; }
}
