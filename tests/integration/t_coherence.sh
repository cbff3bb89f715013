# Two SMB connections (two smbd processes, two aiod sessions) writing and
# reading the same files, with truncate, unlink and rename while aiod has
# their blocks cached.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# Distinct aiod sessions that attached since line $1 of smbd's log.
it_sessions_since() {
	tail -n +"$1" "$IT_T/log/smbd.log" |
		sed -n 's/.*rtio: attached to aiod at .* (session \([0-9]*\)[,)].*/\1/p' | sort -u | wc -l
}

# t_coherence SHARE SEED
t_coherence() {
	local share=$1 seed=$2 from
	from=$(($(wc -l < "$IT_T/log/smbd.log") + 1))
	"$IT_T/bin/itest_coherence" "$(it_url "$share")" "$seed" 80
	if [ "$share" != plain ] && [ "$(it_sessions_since "$from")" -lt 2 ]; then
		echo "the two connections did not get two smbd processes with their own aiod sessions"
		return 1
	fi
}
