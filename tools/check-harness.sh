#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-harness`: shows that `make check` can fail. Each case
# breaks a scratch copy of the committed tree in one way and runs
# `make check` there, which must exit non-zero:
#
#   kunit     a KUnit expectation that cannot hold
#   selftest  a selftest expectation that cannot hold
#   warn      a WARN_ON(1) in the module's init (debug kernel: panic_on_warn)
#   hang      a guest that never finishes (with a 120 s VM timeout)
#
# The debug kernel comes from the same cache as for `make check`.
# Usage: check-harness.sh [CASE...]; prints one line per case and
# exits non-zero if any case was not caught.
set -uo pipefail
. "$(dirname "$0")/vm/common.sh"

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(kunit selftest warn hang)

sabotage() {
	case "$1" in
	kunit)
		sed -i 's/KUNIT_EXPECT_EQ(test, info.flags, 0u);/KUNIT_EXPECT_EQ(test, info.flags, 1u);/' \
			kmod/tests/ioctl_test.c ;;
	selftest)
		sed -i '0,/EXPECT_EQ(KGO_ABI_VERSION, info.abi_version);/s//EXPECT_EQ(KGO_ABI_VERSION + 1, info.abi_version);/' \
			selftests/kgo/get_info_test.c ;;
	warn)
		sed -i 's/^\tpr_info("loaded: /\tWARN_ON(1);\n&/' kmod/main.c ;;
	hang)
		echo 'sleep 100000' >>tools/vm/jobs/check.sh ;;
	*)
		return 1 ;;
	esac
}

rc=0
for c in "${cases[@]}"; do
	tmp=$(mktemp -d)
	git -C "$KGO_TOP" archive HEAD | tar -x -C "$tmp"
	(cd "$tmp" && sabotage "$c") || die "unknown case $c"
	if git -C "$tmp" diff --no-index --quiet "$KGO_TOP" "$tmp" 2>/dev/null; then
		die "case $c changed nothing"
	fi
	start=$SECONDS
	(cd "$tmp" && KGO_VM_TIMEOUT=120 KGO_OUT="$tmp/out" make check) >"$tmp.log" 2>&1
	crc=$?
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp.log" | tail -n 1)
	if [ $crc != 0 ]; then
		echo "$c: caught: make check exited $crc with \"$last\" ($((SECONDS - start)) s)"
	else
		echo "$c: NOT CAUGHT: make check exited 0 (log: $tmp.log)"
		rc=1
	fi
	[ $crc != 0 ] && rm -rf "$tmp" "$tmp.log"
done
exit $rc
