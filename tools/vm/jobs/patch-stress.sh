# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: kernel text patching while kgo's Ms run.
#
# Each round loads kgo (which flips the preempt-notifier static key, a
# jump label in __schedule), starts goroutines that block in the kernel
# (P handoffs) and goroutines that spin, flips kgo's tracepoints and
# sched_switch on and off under them (each flip patches text on every
# CPU through int3 and an IPI), tries a load that must be refused, and
# unloads kgo. A hang anywhere fails the run by its timeout.
#
# KGO_LOOPS (kernel command line) sets the number of rounds; default 200.

loops=${KGO_LOOPS:-200}
T=/sys/kernel/tracing

patch_stress() {
	[ -e $T/trace ] || mount -t tracefs nodev $T || return 1
	echo "1..$loops"
	i=1
	while [ $i -le "$loops" ]; do
		if ! insmod /kgo/kgo.ko; then
			echo "not ok $i insmod kgo"
			return 1
		fi
		kgoctl run block 200 --count 64 --batch 16 >/tmp/block.out 2>&1 &
		b=$!
		kgoctl run spin 200000 --count 32 --batch 8 >/tmp/spin.out 2>&1 &
		s=$!
		for k in 1 2 3; do
			echo 1 >$T/events/kgo/enable
			echo 1 >$T/events/sched/sched_switch/enable
			echo 0 >$T/events/sched/sched_switch/enable
			echo 0 >$T/events/kgo/enable
		done
		ok=1
		wait $b || { ok=0; cat /tmp/block.out; }
		wait $s || { ok=0; cat /tmp/spin.out; }
		# Out of range: refused before anything starts.
		insmod /kgo/kgo.ko dev_mode=0777 2>/dev/null && ok=0
		rmmod kgo || ok=0
		if [ $ok = 0 ]; then
			echo "not ok $i round $i"
			return 1
		fi
		echo "ok $i round $i"
		i=$((i + 1))
	done
}

section selftest patch_stress patch_stress
