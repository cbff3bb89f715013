# Random-offset reads, writes and truncates through libsmbclient, checked
# byte for byte against a model, and the server's file against the model.
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later

# t_randio SHARE SEED
t_randio() {
	local share=$1 seed=$2 model=$IT_T/data/randio-$1.model
	"$IT_T/bin/itest_randio" "$(it_url "$share")/randio.bin" "$seed" 600 $((24 * 1024 * 1024)) "$model"
	if [ "$(it_md5 "$model")" != "$(it_md5 "$IT_T/share/$share/randio.bin")" ]; then
		echo "the file on the server's disk differs from the model"
		return 1
	fi
}
