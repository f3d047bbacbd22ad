# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: every test that runs on this kernel.

if ! insmod /kgo/kgo.ko; then
	report "KGO-FAIL insmod kgo.ko"
	return
fi

# kgoctl_json, the kgoctl step (its own file: a JSON parser and its cases).
. /kgo/jobs/kgoctl-json.sh

# The selftests in the order of selftests/kgo/Makefile's list, which
# the build wrote to /kgo/selftests.list: some of them unload kgo, so
# they run after the others.
selftests=$(cat /kgo/selftests.list 2>/dev/null)
[ -n "$selftests" ] || report "KGO-FAIL no /kgo/selftests.list (tools/build-all.sh writes it)"

# KGO_ONLY=<glob> (run.sh --only): only the selftests it names, to chase
# one failure, in that order; KGO_ONLY=kgoctl_json the kgoctl step alone.
if [ -n "$KGO_ONLY" ]; then
	matched=0
	# shellcheck disable=SC2194,SC2254 # the word is constant, the glob the pattern
	case kgoctl_json in
	$KGO_ONLY)
		section selftest kgoctl_json kgoctl_json
		section output kgoctl-json cat /tmp/kgoctl-json.out
		matched=1
		;;
	esac
	for t in $selftests; do
		# shellcheck disable=SC2254 # the glob is the pattern
		case $t in
		$KGO_ONLY)
			selftest "/kgo/selftests/$t"
			matched=1
			;;
		esac
	done
	[ $matched = 1 ] || report "KGO-FAIL KGO_ONLY=$KGO_ONLY names no selftest"
	return
fi
[ -f /kgo/kgo_test.ko ] && kunit /kgo/kgo_test.ko
# KGO_KUNIT_ONLY=1 (run.sh --kunit-only): the KUnit suites alone.
[ -n "$KGO_KUNIT_ONLY" ] && return
# The scheduler as the suites left it (shown, not counted): what is
# alive, parked or queued when a case timed out.
section output kgo-state cat /sys/kernel/debug/kgo/sched /sys/kernel/debug/kgo/procs \
	/sys/kernel/debug/kgo/ms /sys/kernel/debug/kgo/goroutines
section selftest kgoctl_json kgoctl_json
section output kgoctl-json cat /tmp/kgoctl-json.out
for t in $selftests; do
	selftest "/kgo/selftests/$t"
done

# samples/hello as a module author builds it: out of tree, against kgo
# as make install installs it (tools/build-all.sh). It does all its
# work in its init and logs "kgo_hello: ok" once every goroutine ended.
hello_sample() {
	echo "1..3"
	if ! insmod /kgo/kgo_hello.ko; then
		echo "not ok 1 insmod kgo_hello.ko"
		return 1
	fi
	echo "ok 1 insmod kgo_hello.ko (built against the installed kit)"
	rc=0
	if dmesg | grep -q 'kgo_hello: ok:'; then
		echo "ok 2 kgo_hello: ok in the kernel log"
	else
		echo "not ok 2 no 'kgo_hello: ok' in the kernel log"
		rc=1
	fi
	if rmmod kgo_hello; then
		echo "ok 3 rmmod kgo_hello"
	else
		echo "not ok 3 rmmod kgo_hello"
		rc=1
	fi
	return $rc
}
if [ -f /kgo/kgo_hello.ko ]; then
	section selftest kgo_hello hello_sample
else
	report "KGO-FAIL no /kgo/kgo_hello.ko (tools/build-all.sh builds it)"
fi

# The API misused on purpose: each case WARNs, which must neither panic
# this kernel (panic_on_warn on the debug one) nor count as a failure
# (run.sh skips WARNINGs between the two markers).
misuse() {
	pow=$(cat /proc/sys/kernel/panic_on_warn)
	echo 0 >/proc/sys/kernel/panic_on_warn
	echo "KGO-EXPECTED-WARNINGS-BEGIN" >/dev/kmsg
	if insmod /kgo/kgo_misuse.ko; then
		section selftest kgo_misuse cat /sys/kernel/debug/kgo_misuse/results
		rmmod kgo_misuse || report "KGO-FAIL rmmod kgo_misuse"
	else
		report "KGO-FAIL insmod kgo_misuse.ko"
	fi
	echo "KGO-EXPECTED-WARNINGS-END" >/dev/kmsg
	echo "$pow" >/proc/sys/kernel/panic_on_warn
}
misuse
# rmmod kgo, with a goroutine alive that it must wait for.
. /kgo/jobs/unload.sh

# Kernel text patching while Ms run (loads, unloads, tracepoint flips):
# what hung QEMU's multi-threaded TCG, a few rounds on every kernel.
KGO_LOOPS=${KGO_PATCH_LOOPS:-20}
. /kgo/jobs/patch-stress.sh
