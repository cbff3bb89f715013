# smbtorture --format=subunit (v1) on stdin -> "RESULT NAME" lines (unsorted).
#
# Copyright (C) 2026 rtio developers
# SPDX-License-Identifier: GPL-3.0-or-later
#
# RESULT is smbtorture's own word: success, failure, error, skip, xfail or
# uxsuccess. A test that started and never reported (smbtorture died, or was
# killed by the runner's time limit) is "error". Detail blocks between
# "RESULT: NAME [" and a line "]" are skipped: they may quote anything.

BEGIN { indetail = 0; n = 0 }

indetail {
	if ($0 == "]")
		indetail = 0
	next
}

/^test: / {
	name = substr($0, 7)
	if (!(name in result)) {
		order[n++] = name
		result[name] = ""
	}
	next
}

/^(success|successful|failure|fail|error|skip|xfail|uxsuccess): / {
	word = substr($0, 1, index($0, ":") - 1)
	name = substr($0, length(word) + 3)
	if (name ~ / \[( multipart)?$/) {
		sub(/ \[( multipart)?$/, "", name)
		indetail = 1
	}
	if (word == "successful")
		word = "success"
	if (word == "fail")
		word = "failure"
	if (!(name in result))
		order[n++] = name
	result[name] = word
}

END {
	for (i = 0; i < n; i++)
		print (result[order[i]] == "" ? "error" : result[order[i]]) " " order[i]
}
