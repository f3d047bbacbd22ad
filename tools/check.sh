#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: builds everything, runs the KUnit suites and the
# selftests on the debug kernel (KASAN, lockdep, kmemleak,
# panic_on_warn) and the selftests on the stock kernel, and ends with
# "N passed, N failed[, N skipped]" summed over every case of both runs.
# Exits non-zero on any failure, kernel report, leak or timeout.
set -uo pipefail
. "$(dirname "$0")/vm/common.sh"

start=$SECONDS
if ! "$KGO_TOP/tools/build-all.sh" debug stock; then
	echo "kgo: the build failed" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

rc=0
passed=0 failed=0 skipped=0
for k in debug stock; do
	"$KGO_TOP/tools/vm/run.sh" --kernel "$k" --job check --name "check-$k" || rc=1
	if [ -f "$KGO_OUT/logs/check-$k.counts" ]; then
		read -r p f s <"$KGO_OUT/logs/check-$k.counts"
	else
		p=0 f=1 s=0	# the runner itself failed
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
[ $failed = 0 ] || rc=1

note "logs: $KGO_OUT/logs/check-{debug,stock}.{console,results}.log; took $((SECONDS - start)) s"
line="$passed passed, $failed failed"
[ $skipped != 0 ] && line="$line, $skipped skipped"
echo "$line"
exit $rc
