#!/usr/bin/env bash
# Run the cmocka unit tests, each plainly and under ASan + UBSan.
# Usage: BUILD=build [BENCH_TESTS="bin ..."] tests/unit/run.sh test_proto test_cache ...
# Prints one closing line "unit: N passed, M failed"; exit 1 if any failed.
set -u
BUILD=${BUILD:-build}
pass=0
fail=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "$@"; do
	for variant in unit unit-asan; do
		bin=$BUILD/$variant/$t
		if [ ! -x "$bin" ]; then
			echo "unit: $bin is missing (build it with make)"
			fail=$((fail + 1))
			continue
		fi
		out=$("$bin" 2>&1)
		rc=$?
		n_ok=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p')
		n_bad=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p')
		n_ok=${n_ok:-0}
		n_bad=${n_bad:-0}
		if [ $rc -ne 0 ] && [ "$n_bad" = 0 ]; then
			n_bad=1	# crashed or sanitizer abort
		fi
		pass=$((pass + n_ok))
		fail=$((fail + n_bad))
		if [ $rc -ne 0 ]; then
			printf '%s\n' "$out"
			echo "unit: FAIL $variant/$t (exit $rc)"
		else
			echo "unit: ok   $variant/$t ($n_ok tests)"
		fi
	done
done
# The benchmark tools' own unit tests print "ok   NAME" / "FAIL NAME".
for bin in ${BENCH_TESTS:-}; do
	if [ ! -x "$bin" ]; then
		echo "unit: $bin is missing (build it with make)"
		fail=$((fail + 1))
		continue
	fi
	out=$("$bin" 2>&1)
	rc=$?
	n_ok=$(printf '%s\n' "$out" | grep -c '^ok ')
	n_bad=$(printf '%s\n' "$out" | grep -c '^FAIL ')
	if [ $rc -ne 0 ] && [ "$n_bad" = 0 ]; then
		n_bad=1
	fi
	pass=$((pass + n_ok))
	fail=$((fail + n_bad))
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out"
		echo "unit: FAIL $(basename "$bin") (exit $rc)"
	else
		echo "unit: ok   $(basename "$bin") ($n_ok tests)"
	fi
done
echo "unit: $pass passed, $fail failed"
[ $fail -eq 0 ]
