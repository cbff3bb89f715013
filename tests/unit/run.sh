#!/usr/bin/env bash
# Run the cmocka unit tests, each plainly and under ASan + UBSan, then the
# benchmark tools' cmocka tests (built by bench/*/*.mk, plainly only).
# Usage: BUILD=build [BENCH_TESTS="bin ..."] tests/unit/run.sh test_proto test_cache ...
# Prints one closing line "unit: N passed, M failed"; exit 1 if any failed.
set -u
BUILD=${BUILD:-build}
pass=0
fail=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# run_cmocka BIN LABEL: run one cmocka program and add its counts.
run_cmocka() {
	local bin=$1 label=$2 out rc n_ok n_bad
	if [ ! -x "$bin" ]; then
		echo "unit: $bin is missing (build it with make)"
		fail=$((fail + 1))
		return
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
		echo "unit: FAIL $label (exit $rc)"
	else
		echo "unit: ok   $label ($n_ok tests)"
	fi
}

for t in "$@"; do
	for variant in unit unit-asan; do
		run_cmocka "$BUILD/$variant/$t" "$variant/$t"
	done
done
for bin in ${BENCH_TESTS:-}; do
	run_cmocka "$bin" "$(basename "$bin")"
done
echo "unit: $pass passed, $fail failed"
[ $fail -eq 0 ]
