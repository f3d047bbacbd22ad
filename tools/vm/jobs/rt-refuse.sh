# SPDX-License-Identifier: GPL-2.0
# Sourced by /init on a PREEMPT_RT kernel, where kgo is not supported:
# its load must fail with one clear line in the kernel log, leave
# nothing behind, and leave the kernel working (run.sh's console scan
# fails the run on any splat). As TAP, one case each.

refuse() {
	echo "1..4"
	if insmod /kgo/kgo.ko 2>/tmp/insmod.err; then
		echo "not ok 1 insmod kgo.ko succeeded on PREEMPT_RT"
		rmmod kgo
	else
		echo "ok 1 insmod kgo.ko fails: $(cat /tmp/insmod.err)"
	fi
	line=$(dmesg | grep 'kgo: refusing to load' | tail -n 1)
	if echo "$line" | grep -q 'not supported on PREEMPT_RT kernels'; then
		echo "ok 2 the kernel log says why:$line"
	else
		echo "not ok 2 no refusal line in the kernel log"
		dmesg | tail -n 20 | sed 's/^/# /'
	fi
	if [ -e /sys/module/kgo ] || [ -e /dev/kgo ]; then
		echo "not ok 3 kgo left /sys/module/kgo or /dev/kgo behind"
	else
		echo "ok 3 nothing of kgo is left"
	fi
	# A second try refuses the same way (busybox's insmod tries
	# finit_module, then init_module: a line each); the kernel still
	# runs processes and timers.
	n1=$(dmesg | grep -c 'kgo: refusing to load')
	insmod /kgo/kgo.ko 2>/dev/null
	n2=$(dmesg | grep -c 'kgo: refusing to load')
	if [ "$n2" -gt "$n1" ] && [ ! -e /sys/module/kgo ] && sleep 1; then
		echo "ok 4 a second load is refused too, and the kernel still runs"
	else
		echo "not ok 4 a second load: $n1, then $n2 refusal lines"
	fi
}

section selftest rt_refuse refuse
