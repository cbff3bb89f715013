# A test's own aiod and smbd, for settings the shared instance of
# tests/integration/run.sh must not have (sourced by lib.sh: uses its
# IT_* state, it_track, it_wait_up, it_wait_gone, it_listening).
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# it_ini_merge BASE EXTRA: the ini text BASE with EXTRA's keys merged into
# its sections (a key EXTRA sets replaces BASE's; new sections go last).
# aiod.ini takes each section and each key once, so a test's additions
# cannot simply be appended.
it_ini_merge() {
	EXTRA=$2 awk '
	function key(l) { sub(/[ \t]*=.*/, "", l); sub(/^[ \t]+/, "", l); return tolower(l) }
	function sec(l) { sub(/^[ \t]*\[[ \t]*/, "", l); sub(/[ \t]*\].*$/, "", l); return tolower(l) }
	function blank(l) { return l ~ /^[ \t]*($|[;#])/ }
	function flush(s,   i) { for (i = 1; i <= n[s]; i++) print line[s, i] }
	BEGIN {
		m = split(ENVIRON["EXTRA"], el, "\n")
		for (i = 1; i <= m; i++) {
			if (el[i] ~ /^[ \t]*\[/) {
				cur = sec(el[i])
				if (!(cur in hdr)) { order[++ns] = cur; hdr[cur] = el[i] }
			} else if (!blank(el[i]) && cur != "") {
				line[cur, ++n[cur]] = el[i]; ext[cur, key(el[i])] = 1
			}
		}
	}
	/^[ \t]*\[/ { flush(cs); cs = sec($0); inbase[cs] = 1; print; next }
	cs != "" && !blank($0) && ((cs, key($0)) in ext) { next }
	{ print }
	END {
		flush(cs)
		for (i = 1; i <= ns; i++) if (!(order[i] in inbase)) { print hdr[order[i]]; flush(order[i]) }
	}' <<< "$1"
}

# it_private NAME PORT AIOD_INI_EXTRA SHARE_EXTRA GLOBAL_EXTRA
# Its own aiod and smbd (port PORT) with one share [s] that loads the module,
# for tests that need settings the shared instance must not have. Sets
# PRIV_DIR, PRIV_SOCK, PRIV_AIOD_PID, PRIV_SMBD_PID; both are tracked, so
# teardown stops them even if the test does not.
it_private() {
	local name=$1 port=$2 aiod_extra=$3 share_extra=$4 global_extra=$5
	PRIV_DIR=$IT_T/$name
	PRIV_SOCK=$PRIV_DIR/aiod/aiod.sock
	rtio_smb_dirs "$PRIV_DIR"
	mkdir -p "$PRIV_DIR"/{aiod,share}
	chmod 777 "$PRIV_DIR/share"
	# no device profile: the machine's own (/var/lib/aiod) must not change the settings
	it_ini_merge "$(printf '[global]\nsocket_path = %s\n[cache]\nsize = %s\nmlock = no\n[admission]\nprofile = %s\n' \
		"$PRIV_SOCK" "${PRIV_CACHE:-64M}" "$PRIV_DIR/no-device.profile")" "$(printf '%b' "$aiod_extra")" \
		> "$PRIV_DIR/aiod.ini"
	rtio_smb_global "$PRIV_DIR" "$port" > "$PRIV_DIR/smb.conf"
	cat >> "$PRIV_DIR/smb.conf" <<EOT
$(printf '%b' "$global_extra")
[s]
	path = $PRIV_DIR/share
	read only = no
	vfs objects = rtio
	rtio:socket = $PRIV_SOCK
$(printf '%b' "$share_extra")
EOT
	printf '%s\n%s\n' "$IT_PASS" "$IT_PASS" |
		smbpasswd -c "$PRIV_DIR/smb.conf" -a -s "$IT_USER" > /dev/null 2>&1 ||
		it_die "smbpasswd for the $name instance failed"
	"${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c "$PRIV_DIR/aiod.ini" -F -d 3 > "$IT_T/log/aiod-$name.log" 2>&1 &
	PRIV_AIOD_PID=$!
	it_track "$PRIV_AIOD_PID" "aiod-$name"
	it_wait_up "$PRIV_AIOD_PID" "$IT_T/log/aiod-$name.log" "the $name aiod" test -S "$PRIV_SOCK"
	smbd -F --debug-stdout -s "$PRIV_DIR/smb.conf" > "$IT_T/log/smbd-$name.log" 2>&1 &
	PRIV_SMBD_PID=$!
	it_track "$PRIV_SMBD_PID" "smbd-$name"
	it_wait_up "$PRIV_SMBD_PID" "$IT_T/log/smbd-$name.log" "the $name smbd" it_listening "$port"
}

it_private_stop() {
	kill -TERM "$PRIV_SMBD_PID" "$PRIV_AIOD_PID" 2>/dev/null || true	# a test may have killed one
	it_wait_gone "$PRIV_SMBD_PID" 15 || kill -KILL "$PRIV_SMBD_PID" 2>/dev/null
	it_wait_gone "$PRIV_AIOD_PID" 10 || kill -KILL "$PRIV_AIOD_PID" 2>/dev/null
	wait "$PRIV_SMBD_PID" "$PRIV_AIOD_PID" 2>/dev/null || true	# killed: not the test's failure
	return 0
}
