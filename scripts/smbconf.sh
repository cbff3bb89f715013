# Shared by the tests, the benchmarks and the demo: the [global] section of a
# private smbd that touches nothing of the system's Samba. Source it, then
#
#   rtio_smb_dirs DIR                        # the directories it names
#   rtio_smb_global DIR PORT >  smb.conf     # then append shares
#
# smbd listens on 127.0.0.1:PORT only; all its state lives under DIR.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

rtio_smb_dirs() {
	mkdir -p "$1"/{private,lock,state,cache,pid,ncalrpc} && chmod 700 "$1/private"
}

rtio_smb_global() {
	printf '%s\n' \
		'[global]' \
		'	server role = standalone server' \
		"	smb ports = $2" \
		'	interfaces = lo' \
		'	bind interfaces only = yes' \
		'	disable netbios = yes' \
		"	private dir = $1/private" \
		"	lock directory = $1/lock" \
		"	state directory = $1/state" \
		"	cache directory = $1/cache" \
		"	pid directory = $1/pid" \
		"	ncalrpc dir = $1/ncalrpc" \
		'	usershare path =' \
		"	passdb backend = tdbsam:$1/private/passdb.tdb" \
		'	load printers = no' \
		'	printing = bsd' \
		'	printcap name = /dev/null' \
		'	disable spoolss = yes'
}
