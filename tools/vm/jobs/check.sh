# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: every test that runs on this kernel.

if ! insmod /kgo/kgo.ko; then
	report "KGO-FAIL insmod kgo.ko"
	return
fi
[ -f /kgo/kgo_test.ko ] && kunit /kgo/kgo_test.ko
for t in /kgo/selftests/*; do
	selftest "$t"
done
rmmod kgo || report "KGO-FAIL rmmod kgo"
