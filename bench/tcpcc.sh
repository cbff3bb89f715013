# shellcheck shell=bash
# Sourced by the benchmarks whose clients talk to smbd over 127.0.0.1
# (bench/rt, bench/smb, bench/qos, bench/mixed's SMB benchmarks): the TCP
# congestion control of those connections, set on the local route to
# 127.0.0.1 for the run and put back afterwards. Route metrics apply to the
# accepted end too, so smbd's replies use it (checked with a Python socket
# pair: both ends cubic with the route set, the host's bbr without).
#
# Why: with bbr on loopback (no qdisc: TCP paces itself) a 1 MiB read
# reached its client 110-127 ms late about once per 100 s of a 200 Mbit/s
# stream while smbd had sent it on time, and 600-750 segments per sweep
# were sent twice; with cubic, Linux's default, neither
# (bench/results/rt-tcp-20261129-2150.md). Every share under test gets the
# same, so comparisons do not change; a client-side stall no server setting
# could avoid goes away.
#
#   bench_tcp_cc_set PROG WANT  WANT on the route (cubic, reno, bbr, ... or
#                               "host": leave the host's); 1 with a message
#                               naming the kernel's choices if WANT is not
#                               one of them; a route that cannot be changed
#                               leaves the host's, said on stderr
#   bench_tcp_cc_restore        the route as it was (call from the EXIT trap)
#   BENCH_TCP_CC_IN_EFFECT      what the run's connections use, for the results
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

BENCH_ROUTE_SAVED=""
BENCH_TCP_CC_IN_EFFECT=""

bench_tcp_cc_set() {
	local prog=$1 want=$2 route host
	host=$(sysctl -n net.ipv4.tcp_congestion_control 2>/dev/null || echo "?")
	BENCH_TCP_CC_IN_EFFECT=$host
	[ "$want" = host ] && return 0
	if ! grep -qw -- "$want" /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null; then
		echo "$prog: TCP congestion control '$want' is not one of this kernel's" \
			"($(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null))" >&2
		return 1
	fi
	route=$(ip route show table local 127.0.0.1 2>/dev/null | head -n 1)
	if [ -z "$route" ]; then
		echo "$prog: no local route to 127.0.0.1 to set TCP congestion control $want on; the host's ($host) it is" >&2
		return 0
	fi
	# shellcheck disable=SC2086 # the route's words are ip's arguments
	if ! ip route replace ${route%% congctl *} table local congctl "$want"; then
		echo "$prog: ip route replace failed; TCP congestion control stays the host's ($host)" >&2
		return 0
	fi
	BENCH_ROUTE_SAVED=$route
	BENCH_TCP_CC_IN_EFFECT=$want
	echo "$prog: TCP congestion control $want on 127.0.0.1 for this run (the host's: $host)" >&2
}

bench_tcp_cc_restore() {
	[ -n "$BENCH_ROUTE_SAVED" ] || return 0
	# shellcheck disable=SC2086
	ip route replace $BENCH_ROUTE_SAVED table local ||
		echo "bench: could not put the loopback route back: ip route replace $BENCH_ROUTE_SAVED table local" >&2
	BENCH_ROUTE_SAVED=""
}
