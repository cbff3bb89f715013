#!/usr/bin/env bash
# smbtorture on a plain share and an rtio share: the allowlist, compared.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Usage: tests/smbtorture/run.sh [--no-record] [PATTERN]
#   PATTERN      only the allowlist entries whose test contains it
#   --no-record  leave results-plain.txt / results-rtio.txt alone (the run
#                dir still has them); implied by PATTERN
# Environment: BUILD (default <repo>/build), RTIO_SMB_PORT (4445),
#   RTIO_KEEP=1 (keep the run dir), ST_RETRIES (2: reruns of a test that
#   failed only on rtio before it counts as a regression).
# Needs root, rtio.so installed (make install-module), smbtorture
# (samba-testsuite). Ends with "N passed, M failed".
#
# Each allowlist entry runs on the plain share, then on the rtio share, each
# time on a freshly started smbd: a suite leaves state behind in smbd's
# databases (disconnected durable handles, their byte-range locks and share
# modes, until they time out) that changes what the next suite is granted,
# and the two shares must start equal. aiod runs throughout.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../integration/lib.sh
. "$here/../integration/lib.sh"
# shellcheck source=torture.sh
. "$here/torture.sh"

RECORD=1
PATTERN=""
for a in "$@"; do
	case $a in
	--no-record) RECORD=0 ;;
	-*) it_die "unknown option $a" ;;
	*) PATTERN=$a; RECORD=0 ;;
	esac
done
RETRIES=${ST_RETRIES:-2}

command -v smbtorture >/dev/null || it_die "smbtorture not installed (apt-get install samba-testsuite)"

# delay_inject is one of Samba's test modules, not in Debian's packages:
# built from the Samba source the module is built against, installed where
# smbd loads modules from (it does nothing unless a share names it).
st_delay_inject() {
	local so=$BUILD/torture/delay_inject.so src vars
	vars=$(make -s --no-print-directory -C "$IT_ROOT" BUILD="$BUILD" samba-info) ||
		it_die "make samba-info failed"
	eval "$(printf '%s\n' "$vars" | sed -n 's/^\(SAMBA_[A-Z_]*\)=\(.*\)$/\1="\2"/p')"
	src=$SAMBA_SRC/source3/modules/vfs_delay_inject.c
	[ -f "$src" ] || it_die "$src missing (scripts/deps.sh fetches Samba's source)"
	if [ ! -f "$so" ] || [ "$src" -nt "$so" ]; then
		mkdir -p "$BUILD/torture"
		# shellcheck disable=SC2086
		gcc -O2 -g $SAMBA_CFLAGS $SAMBA_CPPFLAGS -Dvfs_delay_inject_init=samba_init_module \
			-c -o "$BUILD/torture/vfs_delay_inject.o" "$src" &&
			gcc -o "$so" "$BUILD/torture/vfs_delay_inject.o" $SAMBA_LDFLAGS $SAMBA_LIBS \
				-l:libsamba3-util-private-samba.so.0 -l:libndr.so.6 ||
			it_die "building delay_inject.so failed"
	fi
	cmp -s "$so" "$SAMBA_VFS_DIR/delay_inject.so" ||
		install -D -m 0644 "$so" "$SAMBA_VFS_DIR/delay_inject.so" ||
		it_die "cannot install delay_inject.so into $SAMBA_VFS_DIR"
}

# The shares of each variant: st-VARIANT-plain and st-VARIANT-rtio, the same
# but for the module. Appended to the harness's smb.conf; a second [global]
# section adds to the first. smbtorture's files are small: the rtio shares
# register every file with aiod at open (rtio:register min size = 0), so the
# tests take aiod's path rather than smbd's own, as a small file would.
st_write_shares() {
	local variant kind opts vfs
	cat >> "$IT_T/smb.conf" <<EOF

[global]
	# FSCTLs smbtorture uses to reach corners (read response padding)
	smbd:FSCTL_SMBTORTURE = yes
EOF
	for variant in std durable delay; do
		case $variant in
		std) vfs="acl_xattr streams_xattr"; opts="" ;;
		durable)
			vfs="acl_xattr streams_xattr"
			opts=$'\tkernel share modes = no\n\tkernel oplocks = no\n\tposix locking = no\n'
			;;
		delay)
			vfs="delay_inject acl_xattr streams_xattr"
			opts=$'\tdelay_inject:pread_send = 2000\n\tdelay_inject:pwrite_send = 2000\n'
			;;
		esac
		for kind in plain rtio; do
			mkdir -p "$IT_T/share/st-$variant-$kind"
			printf '\n[st-%s-%s]\n\tpath = %s\n\tread only = no\n\tvalid users = %s\n' \
				"$variant" "$kind" "$IT_T/share/st-$variant-$kind" "$IT_USER"
			if [ "$kind" = plain ]; then
				printf '\tvfs objects = %s\n' "$vfs"
			else
				printf '\tvfs objects = %s rtio\n\trtio:socket = %s\n\trtio:timeout = %s\n' \
					"$vfs" "$IT_T/aiod/aiod.sock" "$IT_TIMEOUT_MS"
				printf '\trtio:register min size = 0\n'
			fi
			printf '%s' "$opts"
		done >> "$IT_T/smb.conf"
	done
	chown -R "$IT_USER" "$IT_T/share"
}

st_fresh_smbd() {
	[ -d "$IT_T/share" ] || it_die "the run dir $IT_T vanished (removed by someone else?)"
	it_stop_smbd
	# smbd -F exits when its stdin reaches EOF: not the allowlist's pipe
	it_start_smbd < /dev/null
}

# st_entry N VARIANT SECONDS TEST: one allowlist entry on both shares.
st_entry() {
	local n=$1 variant=$2 limit=$3 test=$4 kind t0 took=""
	for kind in plain rtio; do
		st_fresh_smbd
		t0=$(date +%s)
		st_run "st-$variant-$kind" "$limit" "$RUN/$kind/$n" "$test"
		took="$took $kind $(($(date +%s) - t0))s"
		cat "$RUN/$kind/$n.results" >> "$RUN/$kind.all"
	done
	printf '%-34s %-8s%s\n' "$test" "$variant" "$took"
}

# A variant without a single success on plain compares nothing: smbd
# refused the share, or a module of it did not load.
st_check_variants() {
	awk 'FNR == NR { if (sub(/^success /, "")) ok[$0] = 1; next }
	     { v = $0; sub(/\t.*/, "", v); n = $0; sub(/^[^\t]*\t/, "", n)
	       seen[v] = 1; if (n in ok) good[v] = 1 }
	     END { for (v in seen) if (!(v in good)) {
			print "variant " v ": no test succeeded on st-" v "-plain"; bad = 1 }
		   exit bad }' "$RUN/results-plain.txt" "$RUN/variant-of"
}

# st_recheck NAME VARIANT: run a test that failed only on rtio alone again;
# VERDICT=regression if it never succeeds, else flaky. (Not in a $(...):
# it restarts smbd, and the harness must know the pid.)
st_recheck() {
	local name=$1 variant=$2 i out
	VERDICT=regression
	for i in $(seq 1 "$RETRIES"); do
		out=$RUN/recheck/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' _).$i
		st_fresh_smbd
		st_run "st-$variant-rtio" 300 "$out" "$name"
		if [ "$(st_result "$name" "$out.results")" = success ]; then
			VERDICT=flaky
			return
		fi
	done
}

st_compare() {
	local plain=$RUN/results-plain.txt rtio=$RUN/results-rtio.txt name variant bad=0
	local n
	echo
	echo "plain: $(st_counts "$plain")"
	echo "rtio:  $(st_counts "$rtio")"
	mkdir -p "$RUN/recheck"
	while IFS= read -r name; do
		variant=$(awk -F '\t' -v n="$name" '$2 == n {print $1; exit}' "$RUN/variant-of")
		st_recheck "$name" "$variant"
		n=$(grep -l -F -x "$(st_result "$name" "$rtio") $name" "$RUN"/rtio/*.results | head -n 1)
		echo
		echo "$VERDICT: $name ($variant): success on plain, $(st_result "$name" "$rtio") on rtio"
		st_detail "$name" "${n%.results}.subunit"
		if [ "$VERDICT" = regression ]; then
			bad=1
		else
			echo "    (succeeded on rtio when run again alone)"
		fi
	done < <(st_regressions "$plain" "$rtio")
	return $bad
}

# Which variant each test ran in: a recheck uses the same share.
st_note_variants() {
	local n=$1 variant=$2
	awk -v v="$variant" '{sub(/^[^ ]* /, ""); print v "\t" $0}' "$RUN/plain/$n.results" \
		>> "$RUN/variant-of"
}

st_record() {
	local kind dst
	for kind in plain rtio; do
		dst=$here/results-$kind.txt
		if [ -f "$dst" ] && ! diff -q <(grep -v '^#' "$dst") "$RUN/results-$kind.txt" >/dev/null; then
			echo "$kind: changed against the recorded list:"
			diff <(grep -v '^#' "$dst") "$RUN/results-$kind.txt" | grep '^[<>]' | sed 's/^/    /'
		fi
		{
			echo "# $(st_version)"
			echo "# tests/smbtorture/run.sh, allowlist.txt; RESULT NAME, sorted by name"
			cat "$RUN/results-$kind.txt"
		} > "$dst"
	done
	echo "recorded: tests/smbtorture/results-plain.txt, results-rtio.txt"
}

main() {
	local n=0 variant limit test t0 r0 status=0
	st_delay_inject
	it_setup
	RUN=$IT_T/torture
	mkdir -p "$RUN/plain" "$RUN/rtio"
	st_write_shares
	it_start_aiod
	r0=$(it_stat requests)
	echo "smbtorture comparison: $(st_version), run dir $IT_T, port $IT_PORT"
	t0=$(date +%s)
	while read -r variant limit test; do
		[ -z "$PATTERN" ] || [[ $test == *"$PATTERN"* ]] || continue
		n=$((n + 1))
		st_entry "$n" "$variant" "$limit" "$test"
		st_note_variants "$n" "$variant"
	done < <(st_list "$here/allowlist.txt")
	[ "$n" -gt 0 ] || it_die "no allowlist entry matches '$PATTERN'"
	for kind in plain rtio; do
		LC_ALL=C sort -k 2 -u "$RUN/$kind.all" > "$RUN/results-$kind.txt"
	done
	echo "all entries: $(($(date +%s) - t0))s"
	if st_compare; then
		it_pass "smbtorture-rtio-vs-plain"
	else
		it_fail "smbtorture-rtio-vs-plain" "a test that succeeds on plain fails on rtio"
	fi
	if ! st_check_variants > "$RUN/variants.out"; then
		it_fail "smbtorture-shares" "$(cat "$RUN/variants.out")"
	fi
	# the rtio shares did their I/O through aiod, and never gave up on it
	if [ "$(it_stat requests)" -gt "$r0" ] && ! grep "rtio: detached" "$IT_T/log/smbd.log"; then
		it_pass "smbtorture-rtio-through-aiod"
	else
		it_fail "smbtorture-rtio-through-aiod" "aiod requests $r0 -> $(it_stat requests), or a detach above"
	fi
	[ "$RECORD" = 0 ] || st_record
	echo "total: $(($(date +%s) - t0))s"
	it_finish || status=1
	return $status
}

main
