# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: what `make demo` shows.

run() {
	echo "# $*"
	"$@"
}

demo() {
	run insmod /kgo/kgo.ko || return 1
	run ls -l /dev/kgo
	run kgoctl info
	run rmmod kgo
}

section output demo demo || report "KGO-FAIL demo"
