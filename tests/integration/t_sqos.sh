# MS-SQOS (issue 13) through the real smbd and module: an initiator's
# FSCTL_STORAGE_QOS_CONTROL on an open file is answered with the limit and
# reservation of the aiod.ini rule that paces it, in normalized 8 KiB IOPS
# and KiB/s; what the module does not do or cannot accept gets the
# NTSTATUS or the Status the spec names; garbage gets a clean error; smbd
# does not panic. The checks are in sqos_check.py (Samba's own Python
# client bindings, python3-samba, which /usr/bin/python3 has).
#
# Those bindings (Samba 4.22's libsmb.Conn) always connect to port 445 (then
# 139), whatever "smb ports" says. So the private smbd runs in a network
# namespace of its own, where 445 on its loopback is nobody else's, and the
# client is run in it too; aiod's socket is a path and the queues are POSIX
# IPC, which a network namespace does not separate.
#
# With RTIO_OLD_AIOD=PATH (an aiod built before QOS_POLICY, e.g. the
# previous release's), the same smbd and module in front of it answer
# STATUS_INVALID_DEVICE_REQUEST and keep their session.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

SQOS_PY=${RTIO_PYTHON:-/usr/bin/python3}
SQOS_CHECK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/sqos_check.py

# sqos_no_panic LOG: smbd logged no panic or internal error
sqos_no_panic() {
	if grep -E "PANIC|INTERNAL ERROR|smb_panic|Signal [0-9]+ caught" "$1"; then
		echo "smbd's log ($1) has a panic"
		return 1
	fi
	echo "no panic in smbd's log"
}

sqos_netns_made() {
	[ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ]
}

# sqos_netns NAME: the private smbd (it_private) restarted in a new network
# namespace, listening on 445 there; SQOS_NS is the command prefix to enter it.
sqos_netns() {
	local name=$1
	kill -TERM "$PRIV_SMBD_PID"
	it_wait_gone "$PRIV_SMBD_PID" 15 || kill -KILL "$PRIV_SMBD_PID"
	wait "$PRIV_SMBD_PID" 2>/dev/null || true	# killed: expected
	# the namespace lives as long as this holder (unshare execs it: its pid)
	unshare --net sleep 600 &
	SQOS_NS_PID=$!
	it_track "$SQOS_NS_PID" "netns-$name"
	SQOS_NS=(nsenter --net=/proc/$SQOS_NS_PID/ns/net)
	# until unshare has made it: before, its /proc entry shows our own namespace
	it_wait_up "$SQOS_NS_PID" /dev/null "the namespace" sqos_netns_made "$SQOS_NS_PID"
	"${SQOS_NS[@]}" ip link set lo up || return 1
	sed 's/^\([[:space:]]*smb ports =\).*/\1 445/' "$PRIV_DIR/smb.conf" > "$PRIV_DIR/smb-ns.conf"
	# nsenter execs smbd: the pid is smbd's, for it_private_stop
	"${SQOS_NS[@]}" smbd -F --debug-stdout -s "$PRIV_DIR/smb-ns.conf" \
		> "$IT_T/log/smbd-$name-ns.log" 2>&1 &
	PRIV_SMBD_PID=$!
	it_track "$PRIV_SMBD_PID" "smbd-$name-ns"
	it_wait_up "$PRIV_SMBD_PID" "$IT_T/log/smbd-$name-ns.log" "smbd in its namespace" \
		"${SQOS_NS[@]}" bash -c '(exec 3<>/dev/tcp/127.0.0.1/445) 2>/dev/null'
}

sqos_netns_stop() {
	it_private_stop
	kill -TERM "$SQOS_NS_PID" 2>/dev/null || true
	wait "$SQOS_NS_PID" 2>/dev/null || true
	return 0
}

t_sqos() {
	local port=$((IT_PORT + 10)) rc=0 old
	# limit 48 MiB/s, reserve 16 MiB/s: 6144 and 2048 normalized IOPS, 49152 KiB/s
	it_private sqos "$port" '[qos.vm]\nmatch_user = rtiotest\nlimit = 48M\nreserve = 16M' '' \
		"[nosqos]\n\tpath = $IT_T/sqos/share\n\tvfs objects = rtio\n\trtio:socket = $IT_T/sqos/aiod/aiod.sock\n\trtio:sqos = no"
	sqos_netns sqos || { sqos_netns_stop; return 1; }
	head -c $((1 << 20)) /dev/urandom > "$PRIV_DIR/share/disk.vhdx"
	chmod a+rw "$PRIV_DIR/share/disk.vhdx"
	"${SQOS_NS[@]}" "$SQOS_PY" "$SQOS_CHECK" 127.0.0.1 445 s nosqos "$IT_USER" "$IT_PASS" \
		disk.vhdx $((48 << 20)) $((16 << 20)) || rc=1
	sqos_no_panic "$IT_T/log/smbd-sqos-ns.log" || rc=1
	sqos_netns_stop

	old=${RTIO_OLD_AIOD:-}
	if [ -z "$old" ]; then
		echo "RTIO_OLD_AIOD not set: the older-aiod case is not run"
		return $rc
	fi
	mkdir -p "$IT_T/old-aiod"
	ln -sf "$old" "$IT_T/old-aiod/aiod"
	BUILD=$IT_T/old-aiod it_private sqosold "$port" '[qos.vm]\nmatch_user = rtiotest\nlimit = 48M' '' ''
	sqos_netns sqosold || { sqos_netns_stop; return 1; }
	head -c $((1 << 20)) /dev/urandom > "$PRIV_DIR/share/disk.vhdx"
	chmod a+rw "$PRIV_DIR/share/disk.vhdx"
	"${SQOS_NS[@]}" "$SQOS_PY" "$SQOS_CHECK" --old 127.0.0.1 445 s "$IT_USER" "$IT_PASS" \
		disk.vhdx || rc=1
	if grep -q "protocol error" "$IT_T/log/aiod-sqosold.log"; then
		echo "the older aiod saw a protocol error"
		rc=1
	fi
	sqos_no_panic "$IT_T/log/smbd-sqosold-ns.log" || rc=1
	sqos_netns_stop
	return $rc
}
