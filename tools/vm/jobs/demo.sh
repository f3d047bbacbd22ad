# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: what `make demo` shows.

run() {
	echo
	echo "# $*"
	"$@"
}

demo() {
	run insmod /kgo/kgo.ko || return 1
	run kgoctl info || return 1
	echo
	echo "# kgoctl schedtrace 250 --count 12 &   (the scheduler while the work below runs)"
	kgoctl schedtrace 250 --count 12 &
	trace=$!
	run kgoctl run spawn 4 7 --count 8 --batch 8 || return 1
	run kgoctl run checksum --size 65536 --count 2000 --batch 64 || return 1
	run kgoctl run nop --count 20000 --batch 256 || return 1
	run kgoctl run nop --inline --count 20000 --batch 256 || return 1
	run kgoctl run pingpong 20000 --count 4 --batch 4 || return 1
	run kgoctl run select 200 100000 --count 4 --batch 4 || return 1
	wait $trace
	run kgoctl stats || return 1
	run rmmod kgo
}

section output demo demo || report "KGO-FAIL demo"
