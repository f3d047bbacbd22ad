#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   matrix.sh [CONFIG...]     run every configuration, or those named
#   matrix.sh --report        the table of the last run of each one
#
# `make matrix`: what does not fit CI's 90 minutes next to make check.
# The stock kernels' selftests (the check job) under preempt=none and
# preempt=full (7.x: full and lazy, the two modes x86 has since 7.0),
# stock 6.1 with 4 vCPUs, the KUnit suites and selftests on the debug
# kernel with the stress tests at their full sizes (make check gives it
# smaller ones) and on the KCSAN debug kernel (a data race is a
# failure), and the selftests on the PREEMPT_RT kernels. Prints a table,
# kernel x config x result, and ends with "N passed, N failed" summed
# over every case.
# Exits non-zero on any failure. Logs: out/logs/matrix-CONFIG.*.
set -uo pipefail
. "$(dirname "$0")/vm/common.sh"

# name kernel job vCPUs extra-command-line
configs="
6.1-none       stock      check     2 preempt=none
6.1-full       stock      check     2 preempt=full
6.12-none      stock-6.12 check     2 preempt=none
6.12-full      stock-6.12 check     2 preempt=full
7-full         stock-7    check     2 preempt=full
7-lazy         stock-7    check     2 preempt=lazy
6.1-smp4       stock      check     4 -
6.1-debug      debug      check     2 -
6.1-kcsan      kcsan      check     2 -
6.1-rt         rt         check     2 -
6.12-rt        rt-6.12    check     2 -
"

# row NAME: the table's line for NAME from its counts file.
row() {
	local name=$1 kernel=$2 cfg=$3 p f s res
	if [ -f "$KGO_OUT/logs/matrix-$name.counts" ]; then
		read -r p f s <"$KGO_OUT/logs/matrix-$name.counts"
		res=passed
		[ "$f" = 0 ] || res=FAILED
	else
		p=0 f=1 s=0 res=not-run	# not built, or the runner died
	fi
	printf "$fmt" "$name" "$kernel" "$cfg" "$res" "$p" "$f" "$s"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# what NAME: the configuration as the table says it.
what() {
	local kernel=$1 job=$2 smp=$3 append=$4 w
	w=$job
	[ "$append" != - ] && w="$w $append"
	[ "$kernel" = kcsan ] && w="$w KCSAN"
	[ "$smp" != 2 ] && w="$w -smp $smp"
	echo "$w"
}

# wanted NAME CONFIG...: NAME is one of the CONFIGs.
wanted() {
	local n
	for n in "${@:2}"; do [ "$n" = "$1" ] && return 0; done
	return 1
}

report=0
[ "${1:-}" = --report ] && { report=1; shift; }
for n in "$@"; do
	grep -q "^$n " <<<"$configs" || die "matrix.sh: no configuration $n"
done

start=$SECONDS
rc=0
built=" "
if [ $report = 0 ]; then
	while read -r name kernel job smp append; do
		[ -n "$name" ] && { [ $# = 0 ] || wanted "$name" "$@"; } || continue
		rm -f "$KGO_OUT/logs/matrix-$name.counts"
		# Each kernel built once; one that does not build fails its
		# configurations, not the others.
		case "$built" in
		*" $kernel "*) ;;
		*" !$kernel "*) rc=1; continue ;;
		*)
			if "$KGO_TOP/tools/build-all.sh" "$kernel"; then
				built="$built$kernel "
			else
				note "matrix: the build for $kernel failed"
				built="$built!$kernel "
				rc=1
				continue
			fi ;;
		esac
		[ "$append" = - ] && append=
		# The debug kernels at full sizes: an hour and more beside
		# other work, where make check's smaller run takes half that.
		limit=
		case $kernel in debug|kcsan) limit=${KGO_VM_TIMEOUT:-7200} ;; esac
		KGO_VM_APPEND="$append ${KGO_VM_APPEND:-}" KGO_VM_TIMEOUT=${limit:-${KGO_VM_TIMEOUT:-}} \
			"$KGO_TOP/tools/vm/run.sh" --kernel "$kernel" --job "$job" \
			--smp "$smp" --name "matrix-$name" || rc=1
	done <<<"$configs"
fi

passed=0 failed=0 skipped=0
echo
fmt='%-10s %-11s %-22s %-7s %5s %5s %5s\n'
printf "$fmt" name kernel config result pass fail skip
while read -r name kernel job smp append; do
	[ -n "$name" ] || continue
	if [ $# != 0 ]; then wanted "$name" "$@" || continue; fi
	row "$name" "$kernel" "$(what "$kernel" "$job" "$smp" "$append")"
done <<<"$configs"
[ $report = 1 ] || note "matrix: took $((SECONDS - start)) s; logs: $KGO_OUT/logs/matrix-*.{console,results}.log"
line="$passed passed, $failed failed"
[ $skipped != 0 ] && line="$line, $skipped skipped"
echo "$line"
[ $failed = 0 ] && [ $rc = 0 ]
