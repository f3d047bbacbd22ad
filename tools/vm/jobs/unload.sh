# SPDX-License-Identifier: GPL-2.0
# Sourced by /init, from check.sh or alone (run.sh --job unload): rmmod
# kgo with a goroutine still alive waits for it, however long, names it
# in the kernel log, and finishes once it ends, rather than free the Ps
# and the stack under it. kgo_unload_hold.ko leaves one asleep with no
# reference on kgo (see its source). Leaves kgo unloaded.
#
# Waits for states, never for a time: the drain names what holds it
# after 10 s of its own, and HOLD_BOUND is a bound on a hang only.

HOLD_BOUND=900	# seconds
hold_param=/sys/module/kgo_unload_hold/parameters/release

# What the kernel says of kgo: "live", "going" (rmmod under way), or
# "gone".
kgo_state() {
	cat /sys/module/kgo/initstate 2>/dev/null || echo gone
}

# Whether the background rmmod still runs (an ended one stays a zombie
# until waited for).
rmmod_running() {
	[ -r "/proc/$rmmod_pid/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$rmmod_pid/status"
}

unload_waits() {
	echo "1..5"
	if ! insmod /kgo/kgo_unload_hold.ko; then
		echo "not ok 1 insmod kgo_unload_hold.ko"
		rmmod kgo
		return 1
	fi
	echo "ok 1 insmod kgo_unload_hold.ko: a goroutine asleep, kgo held by nothing"
	echo "# kgo refcnt $(cat /sys/module/kgo/refcnt), holders: $(ls /sys/module/kgo/holders)"

	rmmod kgo >/tmp/rmmod.out 2>&1 &
	rmmod_pid=$!
	n=0
	while ! dmesg | grep -q 'kgo_unload_hold_body' && rmmod_running &&
	      [ $n -lt $HOLD_BOUND ]; do
		sleep 1
		n=$((n + 1))
	done
	state=$(kgo_state)
	rmmod_running || state="$state, rmmod ended"
	if [ "$state" = going ]; then
		echo "ok 2 rmmod kgo still under way while the goroutine sleeps"
	else
		echo "not ok 2 rmmod kgo with a goroutine asleep: kgo is $state after ${n}s"
	fi
	dmesg | grep -A 8 'unload waits' | sed 's/^/# /'
	if dmesg | grep 'unload waits' >/dev/null &&
	   dmesg | grep -q 'kgo_unload_hold_body.*waiting'; then
		echo "ok 3 the log names the goroutine that holds the unload"
	else
		echo "not ok 3 no 'unload waits' line naming kgo_unload_hold_body"
	fi

	# Released only where kgo still waits: after an unload that did not
	# wait, the call would go to freed text.
	if [ "$state" = going ] && echo 1 >$hold_param; then
		wait $rmmod_pid
		rc=$?
		cat /tmp/rmmod.out
		if [ $rc = 0 ] && [ "$(kgo_state)" = gone ]; then
			echo "ok 4 rmmod kgo finished once the goroutine ended"
		else
			echo "not ok 4 rmmod kgo exited $rc, kgo is $(kgo_state)"
		fi
	else
		echo "not ok 4 not released (kgo is $state)"
		rmmod_running || wait $rmmod_pid
		cat /tmp/rmmod.out
	fi
	# Its goroutine may still be asleep in it while kgo is there.
	if [ "$(kgo_state)" != gone ]; then
		echo "not ok 5 kgo_unload_hold kept: kgo is $(kgo_state)"
	elif rmmod kgo_unload_hold; then
		echo "ok 5 rmmod kgo_unload_hold"
	else
		echo "not ok 5 rmmod kgo_unload_hold"
	fi
}

# Alone, kgo is not loaded yet.
if [ "$(kgo_state)" = gone ] && ! insmod /kgo/kgo.ko; then
	report "KGO-FAIL insmod kgo.ko"
else
	section selftest unload_waits unload_waits
fi
