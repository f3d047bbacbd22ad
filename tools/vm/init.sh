#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test VMs. Runs /job.sh, then reports through the second
# serial port (ttyS1), which the host backs with a file: that file, not
# the console, says whether the run passed. The protocol, one line each:
#
#   KGO-BEGIN <kind> <name>   ... raw output ...   KGO-END <kind> <name> rc=<n>
#   KGO-FAIL <what>           a failure outside any test's own output
#   KGO-DONE                  the run got to the end; missing = crash/hang
#
# <kind> is kunit (KTAP from debugfs), selftest (TAP) or output (shown,
# not counted).

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
# Loopback, for the socket tests and the net bench (no other interface).
ip link set lo up 2>/dev/null
stty -F /dev/ttyS1 raw -echo
exec 3>/dev/ttyS1

report() { echo "$*" >&3; }

# The heartbeat that run.sh's watchdog listens for on the console: a
# console silent for minutes means that not even this shell runs.
( while :; do echo "kgo-vm: alive" >/dev/kmsg; sleep 30; done ) &

# section KIND NAME CMD...: runs CMD, its output framed in a section.
section() {
	kind=$1 name=$2
	shift 2
	report "KGO-BEGIN $kind $name"
	"$@" >/tmp/section.out 2>&1
	rc=$?
	cat /tmp/section.out >&3
	report "KGO-END $kind $name rc=$rc"
	return $rc
}

# A module that uses kgo's API holds a reference on kgo: as TAP.
api_user_holds_kgo() {
	echo "1..1"
	if rmmod kgo 2>/dev/null; then
		echo "not ok 1 kgo was unloaded while $1 used it"
		return 1
	fi
	echo "ok 1 rmmod kgo refused while $(basename "$1") is loaded"
}

# kunit MODULE.ko: loading the module runs its suites; report each.
kunit() {
	ls /sys/kernel/debug/kunit >/tmp/suites.before 2>/dev/null
	if ! insmod "$1"; then
		report "KGO-FAIL insmod $1"
		return
	fi
	for s in $(ls /sys/kernel/debug/kunit); do
		grep -qx "$s" /tmp/suites.before && continue
		section kunit "$s" cat "/sys/kernel/debug/kunit/$s/results"
	done
	section selftest api_user_holds_kgo api_user_holds_kgo "$1"
	rmmod "$(basename "$1" .ko)" || report "KGO-FAIL rmmod $1"
}

selftest() {
	section selftest "$(basename "$1")" "$1"
}

kmemleak=/sys/kernel/debug/kmemleak
if [ -e $kmemleak ]; then
	# Forget what booting left behind: only the job's leaks count.
	echo scan >$kmemleak
	echo clear >$kmemleak
fi

# The KCSAN kernel: races that the kernel's own code has by design, not
# kgo's, are not reported (by the function they are seen in; its
# debugfs file takes "!FUNCTION"). Every other report fails the run.
# ktime_get_mono_fast_ns(): a seqcount latch read; its plain loads of
# the fast timekeeper race with the update, and the read retries.
# pollwake(): poll(2)'s wake-up sets pwq->triggered after a barrier
# while the poller reads it before sleeping; a missed store only
# costs a sleep that the wake-up ends (a report names either side).
# tracing_start_sched_switch(): enabling a trace event bumps the
# tracer's cmdline/tgid recording counts under a mutex while its
# probe_sched_switch()/probe_sched_wakeup() read them without one; a
# task name recorded or not around that moment is all it decides.
# (KCSAN checks both sides' frames, so the writer covers every probe.)
# tick_nohz_idle_stop_tick() / tick_sched_do_timer(): an idle CPU gives
# up tick_do_timer_cpu with a plain store while another CPU's tick reads
# it with a plain load; 6.1 does not annotate it, and whichever CPU
# takes over the jiffies update next is all it decides.
# lookup_object(): debugobjects' statistic debug_objects_maxchain, a
# plain "if (cnt > max) max = cnt" under each hash bucket's own lock, so
# two CPUs in two buckets race on it; a maximum off by one is all it
# decides (lib/debugobjects.c, not annotated in 6.1). The name is the
# KCSAN kernel's symbol for it (GCC's clone), which the file looks up.
# _find_next_and_bit(): the scheduler's tick scans nohz.idle_cpus_mask
# (trigger_load_balance()) without a lock while CPUs entering or leaving
# idle set and clear their bits with atomic bitops; a stale bit only
# picks another CPU for idle balancing. KCSAN sees the value change
# under the plain read ("race at unknown origin"). kgo calls no
# find_next_and_bit() user, so no race of kgo's hides behind it.
kcsan=/sys/kernel/debug/kcsan
if [ -e $kcsan ]; then
	for f in ktime_get_mono_fast_ns pollwake tracing_start_sched_switch \
		 probe_sched_switch probe_sched_wakeup \
		 tick_nohz_idle_stop_tick tick_sched_do_timer lookup_object.isra.0 \
		 _find_next_and_bit; do
		echo "!$f" >$kcsan
	done
fi

. /job.sh

if [ -e $kmemleak ]; then
	# kmemleak does not report objects younger than 5 s.
	sleep 6
	echo scan >$kmemleak
	if [ -s $kmemleak ]; then
		section output kmemleak cat $kmemleak
		report "KGO-FAIL kmemleak"
	fi
fi

report "KGO-DONE"
sync
poweroff -f
