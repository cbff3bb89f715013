# sendfile straight from aiod's cache: smbd takes the sendfile path only for
# unsigned, unencrypted sessions with "use sendfile = yes" and "aio read size
# = 0", so this test runs its own smbd (guest share, log level 5 to see the
# module's sendfile line) and its own aiod with max_io = 1M, so one SMB read
# of several MiB is sent in several pinned pieces.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_sendfile() {
	local d=$IT_T/sendfile port=$((IT_PORT + 3)) apid spid n f rc=0
	mkdir -p "$d"/{private,lock,state,cache,pid,ncalrpc,aiod,share}
	chmod 755 "$d/share"
	cat > "$d/aiod.ini" <<EOT
[global]
socket_path = $d/aiod/aiod.sock
[cache]
size = 64M
mlock = no
[engine]
max_io = 1M
EOT
	cat > "$d/smb.conf" <<EOT
[global]
	server role = standalone server
	smb ports = $port
	interfaces = lo
	bind interfaces only = yes
	disable netbios = yes
	private dir = $d/private
	lock directory = $d/lock
	state directory = $d/state
	cache directory = $d/cache
	pid directory = $d/pid
	ncalrpc dir = $d/ncalrpc
	passdb backend = tdbsam:$d/private/passdb.tdb
	load printers = no
	map to guest = bad user
	log level = 1 vfs:5
[sf]
	path = $d/share
	read only = yes
	guest ok = yes
	vfs objects = rtio
	rtio:socket = $d/aiod/aiod.sock
	use sendfile = yes
	aio read size = 0
EOT
	"$BUILD/aiod" -c "$d/aiod.ini" -F > "$IT_T/log/aiod-sendfile.log" 2>&1 &
	apid=$!
	it_track "$apid"
	smbd -F --debug-stdout -s "$d/smb.conf" > "$IT_T/log/smbd-sendfile.log" 2>&1 &
	spid=$!
	it_track "$spid"
	for _ in $(seq 100); do
		(exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
		sleep 0.1
	done
	for n in 1 4095 $((3 * 1024 * 1024 + 17)) $((7 * 1024 * 1024)); do
		f=$d/share/f.$n
		head -c "$n" /dev/urandom > "$f"
		chmod 644 "$f"
		smbclient "//127.0.0.1/sf" -p "$port" -N -c "get f.$n $d/got.$n" > /dev/null 2>&1 || rc=1
		cmp "$f" "$d/got.$n" || { echo "size $n: content differs"; rc=1; }
	done
	# The module's own line proves the cache path was taken, not the kernel's.
	grep -q "rtio: sendfile of 7340032 bytes of f.7340032 from aiod's cache" \
		"$IT_T/log/smbd-sendfile.log" || { echo "no sendfile from the cache logged"; rc=1; }
	"$BUILD/aiodctl" -s "$d/aiod/aiod.sock" stats | grep -E '^(requests|blocks_pinned)='
	"$BUILD/aiodctl" -s "$d/aiod/aiod.sock" stats | grep -q '^blocks_pinned=0$' || rc=1
	kill -TERM "$spid" "$apid"
	wait "$spid" "$apid" 2>/dev/null
	return $rc
}
