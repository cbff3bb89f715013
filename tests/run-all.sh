#!/usr/bin/env bash
# make check: unit tests (plain + ASan/UBSan), then integration tests against a
# real smbd with the module and a real aiod. Ends with one summary line
# "N passed, M failed" over both.
set -u
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'rm -f "$log" "$log.int" "$log.deb"' EXIT

status=0
BUILD=$BUILD "$here/unit/run.sh" ${UNIT_TESTS:?set by the Makefile} 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
# Calls go down (scripts/layers.txt): the tree, and the check's own self-test.
layers_ok=0
"$here/../scripts/layers.py" && layers_ok=$((layers_ok + 1))
if selftest=$("$here/../scripts/layers.py" --self-test); then
	layers_ok=$((layers_ok + 1))
fi
echo "$selftest" | tail -n 1
echo "layers: $layers_ok passed, $((2 - layers_ok)) failed" | tee -a "$log"
[ "$layers_ok" -eq 2 ] || status=1
BUILD=$BUILD "$here/integration/run.sh" 2>&1 | tee "$log.int"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
# The integration runner closes with "N passed, M failed".
sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/integration: \1 passed, \2 failed/p' "$log.int" |
	tail -n 1 >> "$log"

# The benchmarks' build and fio engine (tests/bench-check.sh: "bench: N passed, M failed").
BUILD=$BUILD "$here/bench-check.sh" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# The Debian packages, built with the Debian toolchain and checked without
# installing them (tests/deb-check.sh ends with "deb: N passed, M failed")...
if make --no-print-directory -C "$here/.." BUILD="$BUILD" deb > "$log.deb" 2>&1; then
	"$here/deb-check.sh" "$BUILD/deb" 2>&1 | tee -a "$log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
	# ... and installed, upgraded, removed and purged in a throwaway copy of
	# this machine (tests/deb-install.sh: "deb-install: N passed, M failed").
	"$here/deb-install.sh" "$BUILD/deb" 2>&1 | tee -a "$log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
else
	tail -n 20 "$log.deb"
	echo "deb: 0 passed, 1 failed (make deb)" | tee -a "$log"
	status=1
fi

# Sum the per-suite closing lines.
read -r p f < <(sed -n 's/^\(unit\|layers\|integration\|bench\|deb\|deb-install\): \([0-9]*\) passed, \([0-9]*\) failed.*/\2 \3/p' "$log" |
	awk '{p += $1; f += $2} END {print p + 0, f + 0}')
if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
	f=1	# a suite failed without counting it (crash, missing binary)
fi
echo
echo "$p passed, $f failed"
exit $status
