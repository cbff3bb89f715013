# aiod as its systemd unit runs it, for the tests (tests/integration) and
# the benchmarks (bench/): root with only the capabilities
# conf/aiod.service's CapabilityBoundingSet names, and no new privileges.
# Source it; it sets RTIO_AIOD_AS_DEPLOYED, a command prefix:
#
#   "${RTIO_AIOD_AS_DEPLOYED[@]}" "$BUILD/aiod" -c aiod.ini -F &
#
# The prefix execs aiod (setpriv), so $! is aiod's pid. Unconfined root can
# do what the unit forbids (write a file through /proc/self/fd that its mode
# keeps from root without CAP_DAC_OVERRIDE), and a test run so passes where
# a deployed aiod fails: writeback.c's reopen for a write-only client did,
# until 2026-12-08. A capability the unit names that this machine's root
# lacks (CAP_SYS_RESOURCE in a container) stays missing: setpriv only drops.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# rtio_aiod_caps_from_unit UNIT: the unit's CapabilityBoundingSet as
# setpriv's list (+dac_read_search,+ipc_lock,...); fails when the unit
# names none, so a unit that lost the line is not taken for "all".
rtio_aiod_caps_from_unit() {
	local line caps="" c
	line=$(sed -n 's/^CapabilityBoundingSet=//p' "$1") || return 1
	[ -n "$line" ] || { echo "$1: no CapabilityBoundingSet line" >&2; return 1; }
	for c in $line; do
		case $c in
		CAP_[A-Z_]*) caps+=",+$(tr 'A-Z' 'a-z' <<< "${c#CAP_}")" ;;
		*) echo "$1: '$c' in CapabilityBoundingSet is not a capability" >&2; return 1 ;;
		esac
	done
	echo "${caps#,}"
}

rtio_aiod_as_deployed_init() {
	local here caps
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	caps=$(rtio_aiod_caps_from_unit "$here/../conf/aiod.service") || return 1
	command -v setpriv > /dev/null || { echo "setpriv not installed (util-linux)" >&2; return 1; }
	RTIO_AIOD_AS_DEPLOYED=(setpriv --no-new-privs --inh-caps=-all --bounding-set="-all,$caps")
}
