# smbtorture as the non-root test user on the [plain] and [rtioeager] shares:
# every test of tests/smbtorture/fast.txt that succeeds on plain must
# succeed on rtio. smbtorture's files are small: [rtioeager] registers them
# with aiod at open (rtio:register min size = 0), so they take aiod's path.
# The whole allowlist, on shares set up for it, is `make torture`
# (tests/smbtorture/run.sh).
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

t_smbtorture() {
	local d=$IT_T/data/smbtorture share from r0 r1 name bad=0 tests
	# shellcheck source=../smbtorture/torture.sh
	. "$IT_ROOT/tests/smbtorture/torture.sh"
	command -v smbtorture >/dev/null || { echo "smbtorture not installed (samba-testsuite)"; return 1; }
	mapfile -t tests < <(st_list "$IT_ROOT/tests/smbtorture/fast.txt")
	mkdir -p "$d"
	from=$(($(wc -l < "$IT_T/log/smbd.log") + 1))
	r0=$(it_stat requests)
	for share in plain rtioeager; do
		st_run "$share" 300 "$d/$share" "${tests[@]}"
		echo "$share: $(st_counts "$d/$share.results")"
	done
	r1=$(it_stat requests)
	echo "aiod requests: $r0 -> $r1"
	[ "$r1" -gt "$r0" ] || { echo "no I/O of the rtio share went through aiod"; bad=1; }
	if tail -n +"$from" "$IT_T/log/smbd.log" | grep "rtio: detached"; then
		bad=1
	fi
	# A failure only on rtio counts if it fails again when run alone.
	while IFS= read -r name; do
		echo "success on plain, $(st_result "$name" "$d/rtioeager.results") on rtio: $name"
		st_detail "$name" "$d/rtioeager.subunit"
		st_run rtioeager 120 "$d/recheck" "$name"
		if [ "$(st_result "$name" "$d/recheck.results")" = success ]; then
			echo "    (flaky: succeeded when run again alone)"
		else
			bad=1
		fi
	done < <(st_regressions "$d/plain.results" "$d/rtioeager.results")
	return $bad
}
