# smbtorture on a share without and a share with vfs_rtio: run, parse, compare.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Sourced by tests/smbtorture/run.sh (the whole allowlist, `make torture`)
# and by tests/integration/t_smbtorture.sh (a fast subset in `make check`),
# after tests/integration/lib.sh: it uses IT_PORT, IT_USER, IT_PASS.
#
# A result list has one "RESULT NAME" line per test, sorted by name; RESULT
# is smbtorture's word (success, failure, error, skip, xfail, uxsuccess).
# The rule: every test that succeeds on the plain share succeeds on the rtio
# share.

ST_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

st_version() { smbtorture --version 2>/dev/null | head -n 1; }

# st_list FILE: the entries of an allowlist file, comments and blank lines
# dropped. Fields are separated by blanks; the last one (the test name) may
# itself contain blanks ("smb2.ioctl.copy-chunk streams").
st_list() { sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^[[:space:]]*$/d' "$1"; }

# st_run SHARE SECONDS OUT NAME...: run the tests as the harness's non-root
# user; the subunit stream goes to OUT.subunit, smbtorture's chatter to
# OUT.err, the parsed results are appended to OUT.results. smbtorture is
# stopped after SECONDS (a test waiting for a reply that never comes would
# otherwise wait forever); the test it was in counts as an error. Failed
# tests are not a failure of st_run (callers may run under set -e).
st_run() {
	local share=$1 limit=$2 out=$3
	shift 3
	timeout -k 10 $((limit + 30)) smbtorture "//127.0.0.1/$share" -p "$IT_PORT" \
		-U "$IT_USER%$IT_PASS" -T samba3 --fullname --format=subunit \
		--maximum-runtime="$limit" "$@" \
		>> "$out.subunit" 2>> "$out.err" < /dev/null || true
	awk -f "$ST_HERE/parse.awk" "$out.subunit" | LC_ALL=C sort -k 2 > "$out.results"
}

# st_result NAME RESULTS: the result of one test ("" if it did not run).
st_result() { awk -v n="$1" '{r = $1; sub(/^[^ ]* /, "")} $0 == n {print r}' "$2"; }

# st_regressions PLAIN RTIO: names of the tests that succeed in PLAIN and do
# not in RTIO (missing from RTIO counts as not succeeding).
st_regressions() {
	awk 'FNR == NR { if ($1 == "success") { sub(/^[^ ]* /, ""); ok[$0] = 1 } next }
	     { r = $1; sub(/^[^ ]* /, ""); got[$0] = r }
	     END { for (n in ok) if (got[n] != "success") print n }' "$1" "$2" | sort
}

# st_counts RESULTS: "N success, N failure, ..." in a fixed order.
st_counts() {
	awk '{c[$1]++; t++}
	     END { printf "%d tests: %d success, %d failure, %d error, %d skip", t, c["success"],
			   c["failure"], c["error"], c["skip"]
		   if (c["xfail"] + c["uxsuccess"] > 0)
			   printf ", %d xfail, %d uxsuccess", c["xfail"], c["uxsuccess"]
		   print "" }' "$1"
}

# st_detail NAME SUBUNIT: smbtorture's explanation of a test's result.
st_detail() {
	awk -v n="$1" '
		inside { if ($0 == "]") exit; print "    " $0; next }
		/^(failure|error|skip|xfail|uxsuccess): / {
			s = $0; sub(/^[a-z]*: /, "", s)
			if (s == n " [" || s == n " [ multipart") inside = 1
		}' "$2"
}
