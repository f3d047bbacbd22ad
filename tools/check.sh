#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: builds everything, runs the KUnit suites and the
# selftests on the 6.1 debug kernel (KASAN, lockdep, kmemleak,
# panic_on_warn), the selftests on Debian's stock 6.1, 6.12 and newest
# 7.x kernels, the selftests again through the kernel's kselftest
# runner on stock 6.1 and 7.x (each built with its own series'
# framework), kgoctl's and libkgo's host-side tests, and a smoke run of
# make bench (tiny sizes), and ends with
# "N passed, N failed[, N skipped]" summed over every case of them all.
# Exits non-zero on any failure, kernel report, leak or timeout.
set -uo pipefail
. "$(dirname "$0")/vm/common.sh"

start=$SECONDS
bg=()
trap 'kill "${bg[@]}" 2>/dev/null' EXIT

# On a fresh machine the Debian unstable root (for 7.x, and the bench
# smoke's peers) is made while the debug kernel builds: debootstrap and
# apt wait mostly on the network and dpkg.
"$KGO_TOP/tools/deps.sh"
"$KGO_TOP/tools/vm/sid-root.sh" --peers >/dev/null &
bg+=($!)
kernels="debug $KGO_STOCK_KERNELS"
if ! "$KGO_TOP/tools/build-all.sh" debug; then
	echo "kgo: the build failed" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

# The 7.x kernel is the newest Debian unstable offers today: resolved
# once, so that every step of this run uses the same one.
if ! KGO_KVER_7=$(stock_kver stock-7); then
	echo "kgo: no 7.x kernel to test (see above)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
export KGO_KVER_7
note "kernels: stock $KGO_KVER_61 (pinned), stock-6.12 $KGO_KVER_612 (pinned), stock-7 $KGO_KVER_7 (newest in Debian unstable)"

# The debug VM is the long one (KASAN under TCG), and a single-threaded
# TCG VM keeps one host core busy: it runs on one core while the stock
# kernels are built and their VMs run on the other (tools/vm/run.sh's
# slots). Its progress lines say check-debug.
# Two stress tests whose work grows with their size and not their
# coverage run smaller there: 1,000 echo connections and 65,536 killed
# tasks each took ten minutes and more of its hour beside a CPU hog,
# most of it TCP retransmits and a queue draining under KASAN. The
# stock kernels run them at full size, and make matrix runs the debug
# kernel at full size.
KGO_VM_APPEND="KGO_ECHO_CONNS=250 KGO_KILL_TASKS=8192 ${KGO_VM_APPEND:-}" \
	"$KGO_TOP/tools/vm/run.sh" --kernel debug --job check --name check-debug &
debug_vm=$!
bg+=($debug_vm)

rc=0
if ! "$KGO_TOP/tools/build-all.sh" $KGO_STOCK_KERNELS; then
	echo "kgo: the build failed" >&2
	kill "$debug_vm" 2>/dev/null
	wait "$debug_vm"
	echo "0 passed, 1 failed"
	exit 1
fi

passed=0 failed=0 skipped=0
# counts FILE: adds a run's "passed failed skipped", or a failure where
# the runner left none.
counts() {
	local p f s
	if [ -f "$1" ]; then
		read -r p f s <"$1"
	else
		p=0 f=1 s=0
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# kgoctl and libkgo on the host, no VM and no /dev/kgo needed (make
# check-tools): help, --json, the man page and completion in step with
# the code, the exports, a program built against an installed libkgo
# through pkg-config, and tools/bench/report's tests (report_test.py).
# Each TAP line is a case.
note "host: kgoctl, libkgo and the bench report (make check-tools)"
mkdir -p "$KGO_OUT/logs"
tlog=$KGO_OUT/logs/check-tools.log
trc=0
make -s -C "$KGO_TOP" check-tools >"$tlog" 2>&1 || trc=1
p=$(grep -c '^ok ' "$tlog") || true
s=$(grep -c '^ok .*# SKIP' "$tlog") || true
f=$(grep -c '^not ok ' "$tlog") || true
[ $trc != 0 ] && [ "$f" = 0 ] && f=1	# it failed before its tests: see the log
note "host: $((p - s)) passed, $f failed, $s skipped: $tlog"
passed=$((passed + p - s)) failed=$((failed + f)) skipped=$((skipped + s))
[ "$f" = 0 ] || rc=1

for k in $KGO_STOCK_KERNELS; do
	rm -f "$KGO_OUT/logs/check-$k.counts"
	"$KGO_TOP/tools/vm/run.sh" --kernel "$k" --job check --name "check-$k" || rc=1
	counts "$KGO_OUT/logs/check-$k.counts"
done

# kgo's selftests built inside each kernel's own kselftest framework
# (lib.mk, tools/kselftest.sh) and run by its run_kselftest.sh on the
# stock kernels: one result per program, as the runner counts them.
note "kselftest: selftests/kgo as tools/testing/selftests/kgo of each kernel's tree"
for k in stock stock-7; do
	rm -f "$KGO_OUT/logs/kselftest-$k.counts"
	if "$KGO_TOP/tools/kselftest.sh" --kernel "$k" >"$KGO_OUT/logs/kselftest-build-$k.out" 2>&1; then
		KGO_VM_EXTRA=$KGO_OUT/kselftest/$k "$KGO_TOP/tools/vm/run.sh" --kernel "$k" \
			--job kselftest --name "kselftest-$k" || rc=1
	else
		note "kselftest build for $k failed: $KGO_OUT/logs/kselftest-build-$k.out"
	fi
	counts "$KGO_OUT/logs/kselftest-$k.counts"
done

wait "$debug_vm" || rc=1
counts "$KGO_OUT/logs/check-debug.counts"

# A smoke run of make bench (tiny sizes), so that the benchmarks keep
# working: each figure it produced is a pass, each error line a failure.
note "bench smoke: every benchmark once, at tiny sizes"
brc=0
KGO_BENCH_SMOKE=1 "$KGO_TOP/tools/bench/bench.sh" >"$KGO_OUT/logs/bench-smoke.log" 2>&1 || brc=1
runs=$KGO_OUT/bench-smoke/runs.jsonl	# bench.sh: a smoke run has its own directory
p=$(grep -c '"value"' "$runs" 2>/dev/null) || true
f=$(grep -c '"error"' "$runs" 2>/dev/null) || true
p=${p:-0} f=${f:-0}
if [ $brc != 0 ] && [ $f = 0 ]; then
	f=1	# the VM or the build failed: see the log
	note "bench smoke failed: $KGO_OUT/logs/bench-smoke.log"
fi
note "bench smoke: $p figures, $f failed"
passed=$((passed + p)) failed=$((failed + f))
[ $failed = 0 ] || rc=1

note "logs: $KGO_OUT/logs/check-{${kernels// /,}}.{console,results}.log; took $((SECONDS - start)) s"
line="$passed passed, $failed failed"
[ $skipped != 0 ] && line="$line, $skipped skipped"
echo "$line"
exit $rc
