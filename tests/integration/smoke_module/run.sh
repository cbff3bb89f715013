#!/usr/bin/env bash
# End-to-end proof that mk/samba.mk builds a VFS module Debian's smbd loads:
# build vfs_smoke with those flags, install it as <MODULESDIR>/vfs/smoke.so,
# start a private smbd on 127.0.0.1:4445 with `vfs objects = smoke`, put and
# get a file with smbclient, and check the data and the module's log line.
#
# Usage (as root): tests/integration/smoke_module/run.sh
# Environment: SMOKE_PORT (4445), SMOKE_USER (rtiotest), SMOKE_PASS,
#              SMOKE_KEEP=1 keeps the temp dir also on success.
# Exit 0 on success; on failure the temp dir (config, smbd log) is kept.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
# shellcheck source=../../../scripts/smbconf.sh
. "$root/scripts/smbconf.sh"
PORT=${SMOKE_PORT:-4445}
USER_NAME=${SMOKE_USER:-rtiotest}
PASS=${SMOKE_PASS:-rtio-Smoke-1}
MODULE=smoke
# What vfs_smoke.c logs with DBG_ERR from its connect hook.
CONNECT_LINE="$MODULE: module connected service=[share] user=[$USER_NAME]"

say() { echo "smoke: $*"; }
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "must run as root (installs into smbd's module dir, adds a user)"
for c in smbd smbclient smbpasswd make cc sha256sum; do
	command -v "$c" >/dev/null || fail "'$c' not found (run scripts/deps.sh)"
done

say "building $MODULE.so with mk/samba.mk"
make -s -C "$here" >/dev/null || fail "build failed (make -C $here)"
so=$root/build/smoke_module/$MODULE.so
vfs_dir=$(make -s -C "$here" print-vfs-dir)
[ -d "$vfs_dir" ] || fail "smbd's VFS module dir '$vfs_dir' does not exist"
installed=$vfs_dir/$MODULE.so

# Other test runs on this machine start their own smbd: refuse to talk to one.
listeners() { ss -Hltnp "sport = :$PORT" 2>/dev/null; }
[ -z "$(listeners)" ] || fail "port $PORT is already in use ($(listeners | grep -o 'pid=[0-9]*' | sort -u | paste -sd' ')); set SMOKE_PORT"

tmp=$(mktemp -d /tmp/rtio-smoke.XXXXXX)
smbd_pid=
ok=0
cleanup() {
	if [ -n "$smbd_pid" ] && kill -0 "$smbd_pid" 2>/dev/null; then
		kill -TERM "$smbd_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$smbd_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$smbd_pid" 2>/dev/null || true
		wait "$smbd_pid" 2>/dev/null || true
	fi
	rm -f "$installed"
	if [ $ok = 1 ] && [ -z "${SMOKE_KEEP:-}" ]; then
		rm -rf "$tmp"
	else
		echo "smoke: kept $tmp (smbd log: $tmp/smbd.log)" >&2
	fi
}
trap cleanup EXIT

install -m 0644 "$so" "$installed"

if ! id "$USER_NAME" >/dev/null 2>&1; then
	say "adding user $USER_NAME"
	useradd --no-create-home --shell /usr/sbin/nologin "$USER_NAME"
fi

rtio_smb_dirs "$tmp"
mkdir -p "$tmp"/{share,client}
chmod 0755 "$tmp"
chown "$USER_NAME" "$tmp/share"
conf=$tmp/smb.conf
rtio_smb_global "$tmp" "$PORT" >"$conf"
cat >>"$conf" <<EOF
	log file = $tmp/log.%m

[share]
	path = $tmp/share
	read only = no
	vfs objects = $MODULE
	$MODULE:tag = 7
EOF
# smbclient gets its own empty config rather than /etc/samba/smb.conf.
: >"$tmp/client.conf"

printf '%s\n%s\n' "$PASS" "$PASS" | smbpasswd -c "$conf" -a -s "$USER_NAME" >"$tmp/smbpasswd.log" 2>&1 ||
	{ cat "$tmp/smbpasswd.log" >&2; fail "smbpasswd -a failed"; }

# smbd puts itself in its own process group and kills that group on exit,
# which is why --no-process-group must never be used from a script.
say "starting smbd on 127.0.0.1:$PORT"
smbd -F --debug-stdout -s "$conf" -d 3 </dev/null >"$tmp/smbd.log" 2>&1 &
smbd_pid=$!

for _ in $(seq 100); do
	listeners | grep -q "pid=$smbd_pid," && break
	kill -0 "$smbd_pid" 2>/dev/null || { tail -n 30 "$tmp/smbd.log" >&2; fail "smbd exited during startup"; }
	sleep 0.1
done
listeners | grep -q "pid=$smbd_pid," ||
	{ tail -n 30 "$tmp/smbd.log" >&2; fail "smbd (pid $smbd_pid) not listening on $PORT after 10 s"; }

head -c $((4 * 1024 * 1024 + 123)) /dev/urandom >"$tmp/client/f"
say "smbclient put/get"
# What smbd logs (at level 0, so always) when a module does not load:
# missing file or unresolved symbol, no samba_init_module, wrong
# SMB_VFS_INTERFACE_VERSION, init error, registered under another name.
LOAD_FAILURE_RE="Error loading module|Unable to find samba_init_module|initialization failed|Failed to register vfs module|Can't find a vfs module|vfs_init_custom failed|vfs_init failed for service"
if ! (cd "$tmp/client" && smbclient "//127.0.0.1/share" -p "$PORT" -s "$tmp/client.conf" \
	-U "$USER_NAME%$PASS" -c 'put f; get f f2') >"$tmp/smbclient.log" 2>&1; then
	cat "$tmp/smbclient.log" >&2
	if grep -E "$LOAD_FAILURE_RE" "$tmp/smbd.log" >&2; then
		fail "smbd could not load the module (lines above)"
	fi
	tail -n 30 "$tmp/smbd.log" >&2
	fail "smbclient put/get failed"
fi

sum() { sha256sum "$1" | cut -d' ' -f1; }
[ -f "$tmp/client/f2" ] || fail "smbclient did not write f2"
[ "$(sum "$tmp/client/f")" = "$(sum "$tmp/client/f2")" ] || fail "checksum of f2 differs from f"
[ "$(sum "$tmp/client/f")" = "$(sum "$tmp/share/f")" ] || fail "checksum of the file on the share differs from f"
say "checksums equal ($(stat -c %s "$tmp/client/f") bytes)"

# The child smbd that served the connection logs to the same stdout; give it
# a moment in case the line is still buffered.
for _ in $(seq 20); do
	grep -qF "$CONNECT_LINE" "$tmp/smbd.log" && break
	sleep 0.1
done
grep -F "$CONNECT_LINE" "$tmp/smbd.log" >/dev/null ||
	{ grep -iE 'module|vfs' "$tmp/smbd.log" | tail -n 20 >&2; fail "smbd log lacks the module's connect line '$CONNECT_LINE'"; }
grep -qF "Module '$installed' loaded" "$tmp/smbd.log" || fail "smbd log lacks \"Module '$installed' loaded\""
! grep -E "$LOAD_FAILURE_RE" "$tmp/smbd.log" >&2 || fail "smbd logged a module load failure (lines above)"
say "smbd log: $(grep -F "$CONNECT_LINE" "$tmp/smbd.log" | head -n 1 | sed 's/^ *//')"

ok=1
say "PASS"
