# kill -9 aiod while four clients read and write: every transfer completes
# with the right bytes (the module finishes in-flight requests locally);
# aiod restarted, a connection that lived through it and a new one both do
# their I/O through aiod again.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# it_fault_copier N STOP: put + get a 48 MiB file in rounds until STOP exists.
it_fault_copier() {
	local i=$1 stop=$2 d=$IT_T/data/fault-$1 round=0 want
	mkdir -p "$d"
	head -c $((48 * 1024 * 1024)) /dev/urandom > "$d/src"
	want=$(it_md5 "$d/src")
	while [ ! -e "$stop" ] || [ $round -lt 2 ]; do
		round=$((round + 1))
		rm -f "$d/got"
		it_smb "$IT_FAULT_SHARE" "put $d/src fault-$i.bin; get fault-$i.bin $d/got" > "$d/out-$round" 2>&1 || true
		if [ ! -f "$d/got" ] || [ "$(it_md5 "$d/got")" != "$want" ]; then
			echo "copier $i round $round: the file read back differs"
			cat "$d/out-$round"
			return 1
		fi
	done
	if [ "$(it_md5 "$IT_T/share/$IT_FAULT_SHARE/fault-$i.bin")" != "$want" ]; then
		echo "copier $i: the file on the server's disk differs"
		return 1
	fi
	echo "ok copier $i: $round rounds of put + get, 48 MiB each"
}

# it_wait_size FILE SIZE SECONDS
it_wait_size() {
	local n=$(($3 * 10))
	while [ "$(stat -c %s "$1" 2>/dev/null)" != "$2" ] && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	[ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ]
}

# t_fault SEED [SHARE]   (SHARE: rtio, default, or rtioaiod: the two write paths)
t_fault() {
	IT_FAULT_SHARE=${2:-rtio}	# global: the background copiers read it
	local seed=$1 d=$IT_T/data stop=$IT_T/data/fault.stop fifo=$IT_T/data/held.fifo
	local hfd held from pids=() p i bad=0 r0 r1 r2 size=$((3 * 1024 * 1024))

	from=$(($(wc -l < "$IT_T/log/smbd.log") + 1))
	rm -f "$stop" "$d"/held.*	# an earlier run's files must not pass for this run's
	# A connection that lives through the fault: smbclient reading commands from a fifo.
	head -c "$size" /dev/urandom > "$d/held.src"
	rm -f "$fifo"
	mkfifo "$fifo"
	smbclient //127.0.0.1/"$IT_FAULT_SHARE" -p "$IT_PORT" -U "$IT_USER%$IT_PASS" < "$fifo" > "$d/held.out" 2>&1 &
	held=$!
	it_track "$held" held-smbclient
	exec {hfd}> "$fifo"
	echo "put $d/held.src held.bin" >&"$hfd"
	it_wait_size "$IT_T/share/$IT_FAULT_SHARE/held.bin" "$size" 10 || { echo "held connection: put did not finish"; return 1; }

	for i in 1 2; do
		it_fault_copier "$i" "$stop" > "$d/fault-$i.result" 2>&1 &
		pids+=($!)
		it_track "$!" "copier-$i"
	done
	for i in 3 4; do
		"$IT_T/bin/itest_randio" "$(it_url "$IT_FAULT_SHARE")/fault-$i.bin" $((seed + i)) 0 \
			$((16 * 1024 * 1024)) "$d/fault-$i.model" "$stop" > "$d/fault-$i.result" 2>&1 &
		pids+=($!)
		it_track "$!" "randio-$i"
	done
	sleep 1
	r0=$(it_stat requests)
	echo "aiod served $r0 requests; kill -9 now"
	it_kill_aiod
	sleep 2
	touch "$stop"
	for p in "${pids[@]}"; do
		wait "$p" || bad=1
	done
	cat "$d"/fault-[1-4].result
	for i in 3 4; do
		if [ ! -f "$d/fault-$i.model" ] ||
		   [ "$(it_md5 "$d/fault-$i.model")" != "$(it_md5 "$IT_T/share/$IT_FAULT_SHARE/fault-$i.bin")" ]; then
			echo "random I/O client $i: the file on the server's disk differs from its model"
			bad=1
		fi
	done
	[ "$r0" -gt 0 ] || { echo "no I/O went through aiod before the kill"; bad=1; }
	if ! tail -n +"$from" "$IT_T/log/smbd.log" | grep -q "rtio: detached from aiod"; then
		echo "no smbd process logged that it detached from aiod"
		bad=1
	fi

	# aiod is back; the surviving connection returns to it on its next I/O
	it_start_aiod
	sleep 1.2
	echo "get held.bin $d/held.got" >&"$hfd"
	it_wait_size "$d/held.got" "$size" 10 || { echo "held connection: get did not finish"; bad=1; }
	[ "$(it_md5 "$d/held.got")" = "$(it_md5 "$d/held.src")" ] || { echo "held connection: checksum differs"; bad=1; }
	r1=$(it_stat requests)
	echo "restarted aiod served $r1 requests for the surviving connection"
	[ "$r1" -gt 0 ] || { echo "the surviving connection did not use the restarted aiod"; bad=1; }
	if ! tail -n +"$from" "$IT_T/log/smbd.log" | grep -q "rtio: re-attached to aiod"; then
		echo "the surviving smbd process never logged 're-attached'"
		bad=1
	fi
	echo quit >&"$hfd"
	exec {hfd}>&-
	it_wait_gone "$held" 10 || { echo "held smbclient did not quit"; bad=1; }

	# and a new connection as well
	it_smb "$IT_FAULT_SHARE" "get held.bin $d/held.got2" >/dev/null
	r2=$(it_stat requests)
	[ "$r2" -gt "$r1" ] || { echo "a new connection did not use the restarted aiod"; bad=1; }
	[ "$(it_md5 "$d/held.got2")" = "$(it_md5 "$d/held.src")" ] || { echo "new connection: checksum differs"; bad=1; }
	tail -n +"$from" "$IT_T/log/smbd.log" | grep "rtio:" | sort | uniq -c
	return $bad
}
