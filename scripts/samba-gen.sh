#!/usr/bin/env bash
# Generate, from an unpacked Samba source tree, the few files that the tree
# lacks and a VFS module compile needs: include/config.h (from Samba's own
# configure) and the generated headers (pidl, the error-table scripts,
# generate_param.py).  Nothing else of Samba is built.
#
# Usage: scripts/samba-gen.sh [SAMBA_SRC [GEN]]
#   SAMBA_SRC  unpacked Samba source          (default build/src/samba)
#   GEN        output dir, used as -I<GEN>     (default build/samba-gen)
# Environment:
#   SAMBA_GEN_FORCE=1            regenerate even if the stamp is current
#   SAMBA_GEN_ALLOW_MISMATCH=1   accept a source version other than the installed smbd's
#   SAMBA_GEN_SKIP_ABI_CHECK=1   accept a config.h that disagrees with `smbd -b`
#
# Cached: $GEN/.stamp records the Samba version and source path; a second run
# with the same inputs returns at once.  Every output is written to a scratch
# dir first and moved into place, and the stamp is written last, so an
# interrupted run is simply redone.  The 1-2 min configure has its own stamp
# and is not repeated when only a later step was interrupted.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
SRC=${1:-${SAMBA_SRC:-$here/build/src/samba}}
GEN=${2:-${SAMBA_GEN:-$here/build/samba-gen}}

# Bump when the set of outputs or the way they are made changes.
GENERATOR_VERSION=2

# Samba's configure with everything off that a VFS module's headers do not
# need.  --with-profiling-data keeps WITH_PROFILE, which changes struct
# layouts in smbd/globals.h, in line with Debian's smbd (see abi_check).
CONFIGURE_OPTS=(
	--with-system-mitkrb5 --without-ad-dc --disable-python
	--without-ldap --without-ads --without-json --without-libarchive
	--disable-cups --disable-iprint --without-pam --without-systemd
	--without-gpgme --without-winbind --without-acl-support --without-quotas
	--disable-avahi --disable-glusterfs --disable-cephfs --disable-spotlight
	--without-ldb-lmdb --with-profiling-data
	--with-shared-modules='!vfs_snapper'
)

# config.h macros that change the layout of structs a module can see.
# Each must be defined in config.h exactly when `smbd -b` lists it.
ABI_MACROS="WITH_PROFILE WITH_SMB1SERVER HAVE_ROBUST_MUTEXES USE_DMAPI"

# IDL files whose --header output the VFS headers include (path relative to
# the source root).  The first line is what includes.h + smbd/smbd.h need;
# the rest is what smbd/globals.h adds (vfs_io_uring, vfs_aio_fork and
# vfs_aio_pthread include it, for smbXsrv_connection and profiling).
IDLS="librpc/idl/misc librpc/idl/security librpc/idl/server_id librpc/idl/file_id
librpc/idl/smb2_lease_struct librpc/idl/smb3posix librpc/idl/smb_acl
source3/librpc/idl/smbXsrv librpc/idl/auth librpc/idl/lsa librpc/idl/krb5pac
librpc/idl/netlogon librpc/idl/samr librpc/idl/nbt"

OUTPUTS="include/config.h
librpc/gen_ndr/misc.h
librpc/gen_ndr/ndr_misc.h
librpc/gen_ndr/security.h
librpc/gen_ndr/server_id.h
librpc/gen_ndr/file_id.h
librpc/gen_ndr/smb2_lease_struct.h
librpc/gen_ndr/smb3posix.h
librpc/gen_ndr/smb_acl.h
librpc/gen_ndr/smbXsrv.h
librpc/gen_ndr/auth.h
librpc/gen_ndr/lsa.h
librpc/gen_ndr/krb5pac.h
librpc/gen_ndr/netlogon.h
librpc/gen_ndr/samr.h
librpc/gen_ndr/nbt.h
libcli/util/ntstatus_gen.h
libcli/util/werror_gen.h
libcli/util/hresult.h
lib/param/param_local.h
source3/param/param_proto.h"

msg() { echo "samba-gen: $*"; }
die() { echo "samba-gen: error: $*" >&2; exit 1; }

# Run one step with its output in a log; on failure name the step and show
# the end of the log.
step() {
	local name=$1 log=$2
	shift 2
	if ! "$@" >"$log" 2>&1; then
		{
			echo "samba-gen: error: step '$name' failed; full log: $log"
			echo "---- last 25 lines of $log ----"
			tail -n 25 "$log"
			echo "----"
		} >&2
		exit 1
	fi
}

[ -f "$SRC/VERSION" ] && [ -f "$SRC/source3/include/vfs.h" ] ||
	die "no Samba source tree at $SRC (run scripts/deps.sh to fetch and unpack it)"
SRC=$(cd "$SRC" && pwd -P)
mkdir -p "$GEN"
GEN=$(cd "$GEN" && pwd -P)

samba_version() {
	local major minor release
	major=$(sed -n 's/^SAMBA_VERSION_MAJOR=//p' "$SRC/VERSION")
	minor=$(sed -n 's/^SAMBA_VERSION_MINOR=//p' "$SRC/VERSION")
	release=$(sed -n 's/^SAMBA_VERSION_RELEASE=//p' "$SRC/VERSION")
	[ -n "$major" ] && [ -n "$minor" ] && [ -n "$release" ] ||
		die "cannot read the version from $SRC/VERSION"
	echo "$major.$minor.$release"
}
VERSION=$(samba_version)
WANT_STAMP="samba-gen $GENERATOR_VERSION samba $VERSION src $SRC"
CONFIGURE_STAMP="samba $VERSION src $SRC configure ${CONFIGURE_OPTS[*]}"

up_to_date() {
	local f
	[ -z "${SAMBA_GEN_FORCE:-}" ] || return 1
	[ -f "$GEN/.stamp" ] && [ "$(cat "$GEN/.stamp")" = "$WANT_STAMP" ] || return 1
	for f in $OUTPUTS; do
		[ -f "$GEN/$f" ] || return 1
	done
}

if up_to_date; then
	msg "up to date (Samba $VERSION, $GEN)"
	exit 0
fi

# One run at a time per source tree (configure writes into $SRC/bin, whatever
# the output dir); the loser of a race waits and then usually finds the work
# done.
command -v flock >/dev/null 2>&1 || die "'flock' not found: install the Debian package util-linux"
exec 9>"$SRC/.samba-gen.lock"
flock 9
if up_to_date; then
	msg "up to date (Samba $VERSION, $GEN)"
	exit 0
fi
force=${SAMBA_GEN_FORCE:-}

LOGS=$GEN/logs
WORK=$GEN/.work
mkdir -p "$LOGS"
rm -f "$GEN/.stamp"

# Tools first, so that a missing package is named instead of surfacing as a
# failure deep inside configure.
need_cmd() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found: install the Debian package $2"; }
need_cmd python3 python3
need_cmd perl perl
need_cmd gcc gcc
need_cmd cpp cpp
need_cmd flex flex
need_cmd bison bison
perl -MParse::Yapp -e 1 2>/dev/null || die "perl module Parse::Yapp not found: install the Debian package libparse-yapp-perl"
need_cmd krb5-config libkrb5-dev
[ -f /usr/include/gnutls/gnutls.h ] || die "gnutls headers not found: install the Debian package libgnutls28-dev"

# Headers from one Samba version with a library from another is a silent
# ABI break, so refuse unless told otherwise.
if command -v smbd >/dev/null 2>&1; then
	installed=$(smbd --version 2>/dev/null | sed -n 's/^Version \([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p')
	if [ -n "$installed" ] && [ "$installed" != "$VERSION" ]; then
		[ -n "${SAMBA_GEN_ALLOW_MISMATCH:-}" ] ||
			die "source is Samba $VERSION but the installed smbd is $installed; re-run scripts/deps.sh (or set SAMBA_GEN_ALLOW_MISMATCH=1)"
		msg "warning: source is Samba $VERSION, installed smbd is $installed"
	fi
else
	msg "warning: smbd not installed; skipping the version and ABI checks"
fi

abi_check() {
	local config=$1 m in_config in_smbd bad=0
	local smbd_b
	smbd_b=$(smbd -b 2>/dev/null) || { msg "warning: 'smbd -b' failed; ABI check skipped"; return 0; }
	for m in $ABI_MACROS; do
		in_config=no; in_smbd=no
		grep -q "^#define $m\b" "$config" && in_config=yes
		grep -qx "   $m" <<<"$smbd_b" && in_smbd=yes
		echo "$m: config.h=$in_config smbd=$in_smbd"
		[ $in_config = $in_smbd ] || bad=1
	done
	return $bad
}

# --- step 1: config.h from Samba's configure --------------------------------
# configure writes into $SRC/bin (and $SRC/.lock-wscript); the tree is ours,
# under build/, so that is acceptable.  Only config.h is kept.
if [ -z "$force" ] && [ -f "$GEN/.configure-stamp" ] &&
	[ "$(cat "$GEN/.configure-stamp")" = "$CONFIGURE_STAMP" ] &&
	[ -f "$GEN/include/config.h" ]; then
	msg "configure: cached"
else
	rm -f "$GEN/.configure-stamp"
	rm -rf "$SRC/bin"
	msg "configure: running Samba $VERSION configure (1-2 min; log: $LOGS/configure.log)"
	t0=$SECONDS
	step configure "$LOGS/configure.log" \
		env -u LD_PRELOAD PYTHONHASHSEED=1 JOBS=1 \
		sh -c 'cd "$1" && shift && exec python3 ./buildtools/bin/waf configure "$@"' \
		sh "$SRC" "${CONFIGURE_OPTS[@]}"
	[ -f "$SRC/bin/default/include/config.h" ] ||
		die "step 'configure' succeeded but wrote no $SRC/bin/default/include/config.h"
	if command -v smbd >/dev/null 2>&1 && [ -z "${SAMBA_GEN_SKIP_ABI_CHECK:-}" ]; then
		if ! abi_check "$SRC/bin/default/include/config.h" >"$LOGS/abi-check.log" 2>&1; then
			echo "samba-gen: error: step 'abi-check': config.h and the installed smbd (smbd -b) disagree:" >&2
			cat "$LOGS/abi-check.log" >&2
			die "adjust CONFIGURE_OPTS in $0 (or set SAMBA_GEN_SKIP_ABI_CHECK=1)"
		fi
	fi
	mkdir -p "$GEN/include"
	if ! cmp -s "$SRC/bin/default/include/config.h" "$GEN/include/config.h"; then
		cp "$SRC/bin/default/include/config.h" "$GEN/include/config.h.tmp"
		mv "$GEN/include/config.h.tmp" "$GEN/include/config.h"
	fi
	echo "$CONFIGURE_STAMP" >"$GEN/.configure-stamp"
	msg "configure: done in $((SECONDS - t0)) s"
fi

# --- step 2: generated headers, into a scratch dir ---------------------------
rm -rf "$WORK"
mkdir -p "$WORK/librpc/gen_ndr" "$WORK/libcli/util" "$WORK/lib/param" \
	"$WORK/source3/param" "$WORK/docs-xml"

# pidl writes the --outputdir path verbatim into the #include lines of the
# ndr_*.h it makes, so run it from $WORK with a relative outputdir; srcdir
# makes it emit the in-tree include names (is_intree()).  One pidl per IDL
# (one run over several IDLs produced different krb5pac.h and nbt.h), all
# at once: auth and krb5pac re-parse their imports and take seconds each.
pidl_one() {
	local idl=$1 ndr=
	# Only misc's ndr_misc.h is needed.
	[ "$idl" = librpc/idl/misc ] && ndr=--ndr-parser
	srcdir=$SRC PERL_HASH_SEED=0 perl "$SRC/pidl/pidl" --quiet --header $ndr \
		--includedir="$SRC/librpc/idl" --outputdir librpc/gen_ndr \
		-- "$SRC/$idl.idl"
}
pidl_all() {
	local idl pid
	local -a pids=()
	cd "$WORK"
	for idl in $IDLS; do
		pidl_one "$idl" >"$WORK/pidl.${idl//\//_}.log" 2>&1 &
		pids+=($!)
	done
	local -a failed=()
	set -- $IDLS
	for pid in "${pids[@]}"; do
		wait "$pid" || failed+=("$1")
		shift
	done
	for idl in $IDLS; do
		echo "== $idl.idl"
		cat "$WORK/pidl.${idl//\//_}.log"
	done
	# Repeat the failures last, where the error message's tail shows them.
	for idl in "${failed[@]}"; do
		echo "== FAILED: pidl $SRC/$idl.idl"
		grep -v 'warning:' "$WORK/pidl.${idl//\//_}.log" || true
	done
	[ ${#failed[@]} = 0 ]
}
step pidl "$LOGS/pidl.log" pidl_all

error_tables() {
	local bin=$SRC/source4/scripting/bin util=$SRC/libcli/util out=$WORK/libcli/util
	python3 "$bin/gen_ntstatus.py" "$util/ntstatus_err_table.txt" \
		"$out/ntstatus_gen.h" "$out/nterr_gen.c" "$out/py_ntstatus.c" "$out/ntstatus_gen.rs" &&
	python3 "$bin/gen_werror.py" "$util/werror_err_table.txt" \
		"$out/werror_gen.h" "$out/werror_gen.c" "$out/werror_friendly_gen.c" "$out/py_werror.c" &&
	python3 "$bin/gen_hresult.py" "$util/hresult_err_table.txt" \
		"$out/hresult.h" "$out/hresult.c" "$out/py_hresult.c"
}
step error-tables "$LOGS/error-tables.log" error_tables

# docs-xml/wscript_build concatenates every smbdotconf/**/*.xml, sorted by
# file name, into parameters.all.xml; the order fixes the field order of
# struct loadparm_service in param_local.h, so keep the same sort.  The
# pathconfig.* entities only occur in descriptions: declare them empty.
parameters_all() {
	python3 - "$SRC/docs-xml/smbdotconf" "$WORK/docs-xml/parameters.all.xml" <<'EOF'
import os, re, sys
root, out = sys.argv[1], sys.argv[2]
paths = []
for d, _, files in os.walk(root):
    paths += [os.path.join(d, f) for f in files
              if f.endswith('.xml') and f != 'parameters.all.xml']
paths.sort(key=lambda p: os.path.basename(p))
body = ''.join(open(p, encoding='utf-8').read() for p in paths)
entities = sorted(set(re.findall(r'&(pathconfig\.[A-Za-z0-9_]+);', body)))
with open(out, 'w', encoding='utf-8') as f:
    f.write('<!DOCTYPE section [\n')
    f.write(''.join("<!ENTITY %s ''>\n" % e for e in entities))
    f.write(']>\n<section>\n' + body + '</section>\n')
print('%d parameter files, %d entities' % (len(paths), len(entities)))
EOF
}
param_headers() {
	local gp=$SRC/script/generate_param.py all=$WORK/docs-xml/parameters.all.xml
	parameters_all &&
	python3 "$gp" --file "$all" --output "$WORK/lib/param/param_local.h" --mode=PARAMDEFS --scope=LOCAL &&
	python3 "$gp" --file "$all" --output "$WORK/source3/param/param_proto.h" --mode=S3PROTO
}
step param "$LOGS/param.log" param_headers

# --- step 3: install; unchanged files keep their mtime so make rebuilds
# nothing when a forced run produces the same headers.
for f in $OUTPUTS; do
	[ "$f" = include/config.h ] && continue
	[ -f "$WORK/$f" ] || die "step 'install': $WORK/$f was not generated (see $LOGS)"
	mkdir -p "$GEN/$(dirname "$f")"
	if ! cmp -s "$WORK/$f" "$GEN/$f"; then
		cp "$WORK/$f" "$GEN/$f.tmp"
		mv "$GEN/$f.tmp" "$GEN/$f"
	fi
done
rm -rf "$WORK"

echo "$WANT_STAMP" >"$GEN/.stamp.tmp"
mv "$GEN/.stamp.tmp" "$GEN/.stamp"
msg "ok: Samba $VERSION headers in $GEN"
