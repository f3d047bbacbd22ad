#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   kselftest.sh [--run-tests] [--kernel KERNEL] [INSTALL_PATH]
#
# Builds kgo's selftests the kernel's way: copies selftests/kgo (with
# kgo's two headers in its include/) into a throwaway copy of the
# kselftest framework of KERNEL's series (default stock, 6.1; see
# tools/vm/kselftest-src.sh), then runs
#
#   make -C tools/testing/selftests TARGETS=kgo install INSTALL_PATH=...
#
# INSTALL_PATH (default out/kselftest/KERNEL/kselftest) then holds
# run_kselftest.sh, kselftest-list.txt and kgo/ with the binaries, config
# and settings: what tools/vm/jobs/kselftest.sh runs in a VM, given
# KGO_VM_EXTRA=out/kselftest/KERNEL to tools/vm/run.sh. The cached
# source tree is only read. Log: out/logs/kselftest-build-KERNEL.log.
#
# --run-tests: then also make ... TARGETS=kgo run_tests, on this machine,
# which must have kgo loaded (modprobe kgo): the TAP goes to stdout.
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

run_tests='' k=stock
while [ $# -gt 0 ]; do
	case "$1" in
	--run-tests) run_tests=1 ;;
	--kernel) k=${2:?--kernel needs a kernel name}; shift ;;
	-*) die "kselftest.sh: unknown option $1" ;;
	*) break ;;
	esac
	shift
done
install=${1:-$KGO_OUT/kselftest/$k/kselftest}
"$KGO_TOP/tools/deps.sh" gcc make libc6-dev linux-source-6.1 rsync
ksrc=$("$KGO_TOP/tools/vm/kselftest-src.sh" "$k")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/linux
mkdir -p "$tree/tools/testing" "$tree/scripts"
cp -a "$ksrc/tools/testing/selftests" "$tree/tools/testing/"
# lib.mk includes this one file from outside tools/.
cp "$ksrc/scripts/subarch.include" "$tree/scripts/"

dst=$tree/tools/testing/selftests/kgo
[ ! -e "$dst" ] || die "$ksrc already has tools/testing/selftests/kgo"
mkdir -p "$dst/include/linux"
(cd "$KGO_TOP/selftests/kgo" && cp Makefile config settings ./*.c ./*.h "$dst/")
cp "$KGO_TOP/uapi/linux/kgo.h" "$dst/include/linux/"
cp "$KGO_TOP/tools/include/kgo_crc32c.h" "$dst/include/"
mkdir -p "$dst/libkgo"
cp "$KGO_TOP/libkgo/libkgo.h" "$KGO_TOP/libkgo/ring.c" "$dst/libkgo/"

mkdir -p "$KGO_OUT/logs"
log=$KGO_OUT/logs/kselftest-build-$k.log
rm -rf "$install"
logged_build "the kselftest build" "$log" make -C "$tree/tools/testing/selftests" \
	TARGETS=kgo KGO_STATIC=1 install INSTALL_PATH="$install"

# What run_kselftest.sh will run: every program, in the Makefile's order.
want=$(make -s -C "$KGO_TOP/selftests/kgo" list | tr ' ' '\n' | sed 's/^/kgo:/')
got=$(cat "$install/kselftest-list.txt")
[ "$want" = "$got" ] ||
	die "kselftest-list.txt is not the Makefile's TEST_GEN_PROGS: ${got//$'\n'/ }"
for f in run_kselftest.sh kselftest/runner.sh kgo/settings kgo/config; do
	[ -f "$install/$f" ] || die "no $f in $install"
done
note "kselftest: $(wc -l <"$install/kselftest-list.txt") kgo programs built with $(basename "$ksrc")'s framework, in $install"

if [ -n "$run_tests" ]; then
	[ -e /dev/kgo ] || note "kselftest: no /dev/kgo here: load kgo first (modprobe kgo); the tests will fail"
	make -s -C "$tree/tools/testing/selftests" TARGETS=kgo run_tests
fi
