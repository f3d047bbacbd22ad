#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boots a kernel under QEMU (TCG, 2 vCPUs) with an initramfs holding
# busybox, the kgo modules built for that kernel, the static test
# binaries and a job, and judges the run from the result port.
#
#   run.sh --kernel K --job JOB [--name NAME] [--smp N] [--only GLOB]
#          [--kunit-only] [--icount OPTS] [--timeout S] [--append STR]
#   run.sh --help
#
# K: debug, kcsan, stock, stock-6.12, stock-7, rt, rt-6.12 or rt-7.
# The job's settings go on the guest's kernel command line, where /init
# finds them in its environment: --only GLOB is KGO_ONLY=GLOB (the
# check job's selftests that GLOB names), --kunit-only KGO_KUNIT_ONLY=1,
# --append STR any other VAR=VALUE words (a job's own, e.g. KGO_LOOPS=5).
# They come after KGO_VM_APPEND, and the last of two settings of one
# variable is the one the guest sees: a flag wins over the environment.
#
# Needs: out/build/<kernel>/ and out/bin/ (tools/build-all.sh K).
# Writes: out/logs/NAME.console.log, NAME.results.log, NAME.counts
# ("passed failed skipped"), NAME.boot1.console.log if a first boot
# died before /init, and NAME.hang.log if the run reached its time limit
# (see below). Exits 0 only if the run passed.
#
# Environment: KGO_VM_TIMEOUT (seconds, --timeout says the same; default
# 3600 debug, 1200 stock: a bound on a guest that is slow but alive),
# KGO_VM_STALL (seconds of a silent console that end a run as hung;
# default 300), KGO_VM_APPEND (extra kernel command line), KGO_VM_MEM,
# KGO_VM_EXTRA (a directory whose files go to the VM's /kgo too: make
# bench's), KGO_VM_QEMU (extra QEMU arguments, for a person debugging a
# hang: say "-monitor unix:/tmp/mon,server,nowait" for a monitor of
# one's own; run.sh's own reads the registers just before the limit,
# see below), KGO_VM_ICOUNT (QEMU's -icount option, --icount says the
# same, e.g. "shift=0,sleep=off": the guest's clock counts instructions
# instead of following the host's; single-threaded TCG only; see the
# README on make bench), KGO_VM_SMP (vCPUs, default 2; --smp N says the
# same).
set -euo pipefail
. "$(dirname "$0")/common.sh"

kernel='' job='' name='' only='' kunit_only='' extra=''
flags_parse "usage: run.sh --kernel K --job JOB [OPTION...]

Boots kernel K under QEMU with kgo and runs tools/vm/jobs/JOB.sh in it;
the logs are out/logs/NAME.*. The comment at the top of tools/vm/run.sh
says more, and which environment variables it reads." "
--kernel     kernel          K     debug, kcsan, ${KGO_STOCK_KERNELS// /, }, ${KGO_RT_KERNELS// /, }
--job        job             JOB   tools/vm/jobs/JOB.sh: check, demo, kselftest, unload...
--name       name            NAME  the logs' name (default JOB-K)
--smp        KGO_VM_SMP      N     vCPUs (KGO_VM_SMP; default 2)
--only       only            GLOB  the check job: only the selftests GLOB names (KGO_ONLY=GLOB in the guest)
--kunit-only kunit_only      -     the check job: the KUnit suites alone (KGO_KUNIT_ONLY=1 in the guest)
--icount     KGO_VM_ICOUNT   OPTS  QEMU's -icount OPTS, e.g. shift=0,sleep=off (KGO_VM_ICOUNT)
--timeout    KGO_VM_TIMEOUT  S     the run's limit in seconds (KGO_VM_TIMEOUT; default 3600 debug, 1200 stock)
--append     extra           STR   more kernel command line, after KGO_VM_APPEND: a job's VAR=VALUE words
" "$@"
[ ${#KGO_ARGS[@]} = 0 ] || die "run.sh: unexpected argument ${KGO_ARGS[0]} (run.sh --help)"
if [ -z "$kernel" ] || [ -z "$job" ]; then
	die "run.sh: --kernel and --job are needed (run.sh --help)"
fi
[[ "${KGO_VM_SMP:-2}" =~ ^[1-9][0-9]?$ ]] || die "run.sh: --smp is a number of vCPUs, not '$KGO_VM_SMP'"
[[ "${KGO_VM_TIMEOUT:-1}" =~ ^[1-9][0-9]*$ ]] || die "run.sh: --timeout is in seconds, not '$KGO_VM_TIMEOUT'"
[ -z "$only" ] || guest_word --only "$only"
# The job's settings, on the command line after KGO_VM_APPEND.
settings="${only:+KGO_ONLY=$only}${kunit_only:+ KGO_KUNIT_ONLY=1}${extra:+ $extra}"
jobfile=$KGO_TOP/tools/vm/jobs/$job.sh
[ -f "$jobfile" ] || die "no job $jobfile"
name=${name:-$job-$kernel}

case "$kernel" in
stock*|rt*)
	kroot=$(stock_root "$kernel")
	kver=$(basename "$kroot" | sed 's/_[^_]*$//')
	image=$(stock_image "$kernel")
	# Debian's modules: under /lib before 7.x, under /usr/lib from it.
	kmods=$kroot/lib/modules/$kver
	[ -d "$kmods" ] || kmods=$kroot/usr/lib/modules/$kver
	mem=${KGO_VM_MEM:-1G}
	timeout=${KGO_VM_TIMEOUT:-1200}
	append=""
	;;
debug|kcsan)
	image=$("$KGO_TOP/tools/vm/debug-kernel.sh" "$kernel")/arch/x86/boot/bzImage
	mem=${KGO_VM_MEM:-2G}
	timeout=${KGO_VM_TIMEOUT:-3600}
	# Any WARN, oops, lockup or hung task ends the run (and so fails it).
	append="panic_on_warn=1 oops=panic softlockup_panic=1 hung_task_panic=1"
	;;
*) die "run.sh: --kernel is debug, kcsan, $KGO_STOCK_KERNELS or $KGO_RT_KERNELS" ;;
esac

mods=$KGO_OUT/build/$kernel
[ -f "$mods/kmod/kgo.ko" ] || die "no $mods/kmod/kgo.ko: build with tools/build-all.sh $kernel"
if [ -n "${kver:-}" ]; then
	vermagic=$(modinfo -F vermagic "$mods/kmod/kgo.ko")
	[ "${vermagic%% *}" = "$kver" ] ||
		die "$mods/kmod/kgo.ko is built for ${vermagic%% *}, not $kver: tools/build-all.sh $kernel"
fi
bins=$KGO_OUT/bin
[ -f "$bins/selftests.list" ] || die "no $bins/selftests.list: build with tools/build-all.sh $kernel"
logs=$KGO_OUT/logs
mkdir -p "$logs"
console=$logs/$name.console.log
results=$logs/$name.results.log
counts=$logs/$name.counts
rm -f "$console" "$results" "$counts" "$logs/$name.boot1.console.log"

# The initramfs.
root=$(mktemp -d)
chmod 755 "$root"	# the VM's /: mktemp's 0700 kept everyone but root out
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,tmp,kgo/selftests}
cp /bin/busybox "$root/bin/busybox"
cp "$KGO_TOP/tools/vm/init.sh" "$root/init"
cp "$jobfile" "$root/job.sh"
mkdir -p "$root/kgo/jobs"
cp "$KGO_TOP"/tools/vm/jobs/*.sh "$root/kgo/jobs/"	# jobs may use each other
cp "$mods/kmod/kgo.ko" "$root/kgo/"
[ -f "$mods/kmod/tests/kgo_test.ko" ] && cp "$mods/kmod/tests/kgo_test.ko" "$root/kgo/"
cp "$mods"/kmod/misuse/*.ko "$root/kgo/"	# kgo_misuse, kgo_unload_hold
for ko in "$mods"/samples/*/*.ko; do
	[ -f "$ko" ] && cp "$ko" "$root/kgo/"
done
# samples/hello, built against the installed kit (tools/build-all.sh).
[ -f "$mods/kit/hello/kgo_hello.ko" ] && cp "$mods/kit/hello/kgo_hello.ko" "$root/kgo/"
# The Debian kernel's own modules that samples need (built in on the
# debug kernels), uncompressed, in /kgo/deps; deps/order lists them in
# the order to load them: crc32c() is libcrc32c's, which wants a
# crc32c provider loaded first.
if [ -n "${kver:-}" ]; then
	mkdir -p "$root/kgo/deps"
	for m in crypto/crc32c_generic lib/libcrc32c; do
		ko=$kmods/kernel/$m.ko dst=$root/kgo/deps/${m#*/}.ko
		if [ -f "$ko.xz" ]; then
			xz -dc "$ko.xz" >"$dst"
		elif [ -f "$ko" ]; then
			cp "$ko" "$dst"
		else
			continue
		fi
		echo "${m#*/}.ko" >>"$root/kgo/deps/order"
	done
fi
# The selftests, and the order to run them in (tools/vm/jobs/check.sh).
cp "$bins"/selftests/* "$root/kgo/selftests/"
cp "$bins/selftests.list" "$root/kgo/"
cp "$bins/kgoctl" "$root/bin/"
[ -n "${KGO_VM_EXTRA:-}" ] && cp -r "$KGO_VM_EXTRA"/. "$root/kgo/"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$root.cpio.gz"
trap 'rm -rf "$root" "$root.cpio.gz"' EXIT

# One host thread runs both vCPUs, in turns. QEMU 7.2's multi-threaded
# TCG can keep executing a stale translation of kernel text that another
# vCPU has just patched (a jump label or a tracepoint: int3 first, then
# the new instruction): memory holds the new instruction, the vCPU runs
# its cached int3 forever, the kernel's int3 handler rewinds it to the
# "removed" breakpoint each time, and with interrupts off it never
# answers the patcher's IPI. Seen under kgo load/unload and tracepoint
# flips; tools/vm/jobs/patch-stress.sh reproduces it within a few
# hundred rounds, and QEMU's "singlestep on" (new translations) unsticks
# the hung guest, which is how it was told apart from a guest bug. With
# one thread, no vCPU translates code while another writes it.
# KGO_VM_TCG_THREAD=multi brings back parallel vCPUs (make bench).
tcg_thread=${KGO_VM_TCG_THREAD:-single}

# No CMPXCHG16B for the 6.12 kernels: QEMU 7.2's TCG computes the
# instruction's flags from a stale record of which operation last set
# them, and takes the source operand of the instruction before it as
# RFLAGS. In 6.12's SLUB fast path that operand is the freelist pointer
# (an "add" just before the cmpxchg16b in this_cpu_try_cmpxchg128), and
# "jne" reads ZF straight from the bad value. When the vCPU leaves its
# translation loop at that branch (the other vCPU's turn), QEMU folds
# the whole value into its RFLAGS: reserved bits, NT, and VM, with which
# the next interrupt raises #GP on its own delivery, then a double
# fault. Seen in kthreadd and kworkers allocating under preempt=full:
# the double-fault frame's RFLAGS was the freelist pointer's low 32 bits
# with ZF cleared, in each of four crashes, and "-d int" showed the bad
# RFLAGS already in the interrupted state. 6.1 tests ZF with sete and
# test in the same block, before the value can leave it, so 6.1 keeps
# the instruction. Without CX16 the kernel patches in its own emulation.
cpu=max
case "${kver:-}" in
6.1.*|"") ;;
*) cpu=max,cx16=off ;;
esac

# -icount: virtual time from the number of instructions run, not from
# the host's clock, so that timings do not depend on the host's load.
icount=()
if [ -n "${KGO_VM_ICOUNT:-}" ]; then
	[ "$tcg_thread" = single ] ||
		die "KGO_VM_ICOUNT: QEMU's -icount needs KGO_VM_TCG_THREAD=single"
	icount=(-icount "$KGO_VM_ICOUNT")
fi

# At most one VM per host core (KGO_VM_SLOTS, default the machine's
# cores): a single-threaded TCG VM keeps one core busy, and a third VM
# would only share a core and make every run slower. A multi-threaded
# one (make bench) takes every slot, so that its figures have the
# machine to themselves. Each slot is a lock file; a VM holds its own
# until it ends. Timing tests must pass beside another VM all the same:
# CI machines are shared and noisy.
mkdir -p "$KGO_CACHE"
nslots=${KGO_VM_SLOTS:-$(nproc)}
slot_file() { if [ "$1" = 0 ]; then echo "$KGO_CACHE/vm.lock"; else echo "$KGO_CACHE/vm.lock.$1"; fi; }
if [ "$tcg_thread" = multi ]; then
	for ((i = 0; i < nslots; i++)); do
		exec {fd}>"$(slot_file $i)"
		if ! flock -n "$fd"; then
			note "$name: waiting for the other kgo VMs to end"
			flock "$fd"
		fi
	done
else
	waited=
	while :; do
		for ((i = 0; i < nslots; i++)); do
			exec {fd}>"$(slot_file $i)"
			flock -n "$fd" && break 2
			exec {fd}>&-
		done
		[ -n "$waited" ] || note "$name: $nslots kgo VMs are running; waiting for one to end"
		waited=1
		sleep 2
	done
fi

note "$name: booting the $kernel kernel (timeout ${timeout}s, TCG thread=$tcg_thread${icount[1]:+, icount $KGO_VM_ICOUNT}${settings:+, $settings}; console: $console)"
start=$SECONDS

# The watchdog. /init writes a heartbeat to the kernel log every 30 s
# (init.sh), so a console silent for KGO_VM_STALL seconds (default 300)
# means that not even the guest's userspace runs: the run ends there as
# hung. A guest that is slow but alive, on a busy host, goes on up to
# KGO_VM_TIMEOUT, a bound far above any healthy run; each test has its
# own time limit inside the guest too. Either way the run leaves
# evidence first: the vCPUs' registers, read three times through a QEMU
# monitor socket and named from the kernel's System.map
# (tools/vm/hang-dump, which is why every VM boots with nokaslr), in
# NAME.hang.log. A slow guest shows different places each time, a hung
# one the same place: "a hang is a bug to explain".
# Debian's /boot/System.map is a stub that points to the -dbg package.
case "$kernel" in
debug|kcsan) sysmap=${image%/arch/x86/boot/bzImage}/System.map ;;
*) sysmap=$kroot/usr/lib/debug/boot/System.map-$kver ;;
esac
hang=$logs/$name.hang.log
ended=$logs/$name.ended
stall=${KGO_VM_STALL:-300}
rm -f "$hang" "$ended"
mon=$(mktemp -u /tmp/kgo-mon.XXXXXX)
trap 'rm -rf "$root" "$root.cpio.gz" "$mon"' EXIT
watchdog() {	# PID: the QEMU to end
	set +eu
	trap 'exit 0' TERM
	local last=-1 size quiet=0 t=0 why=
	while sleep 10; do
		t=$((t + 10))
		size=$(stat -c %s "$console" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size quiet=0
		else
			quiet=$((quiet + 10))
		fi
		if [ $quiet -ge "$stall" ]; then
			why="no console output for ${quiet}s (the guest's heartbeat stopped)"
		elif [ $t -ge "$timeout" ]; then
			why="still running at its limit of ${timeout}s"
		else
			continue
		fi
		echo "$why" >"$ended"
		[ -S "$mon" ] && "$KGO_TOP/tools/vm/hang-dump" "$mon" "$sysmap" >"$hang" 2>&1
		kill "$1"
		exit 0
	done
}

# Progress while the VM runs, on stderr: a line per KUnit suite (from
# the console, where KUnit prints each suite's result as it ends) and
# per selftest program (from the result port), with the seconds since
# boot. The debug VM runs for many minutes; this says it is alive and
# where it is. KGO_VM_QUIET=1 turns it off.
progress_lines() {	# FILE FROM TO SED-SCRIPT: lines FROM..TO through it
	[ "$3" -ge "$2" ] || return 0
	sed -n -e "$2,$3{" -e 's/\r$//' -e "$4" -e '}' "$1" |
		sed "s/^/kgo: $name: +$((SECONDS - start))s /" >&2
}
progress() {
	set +eu
	trap 'exit 0' TERM
	local c=0 r=0 n
	while sleep 5; do
		# Whole lines only, each once; the counts live here, not in a
		# pipeline's subshell.
		n=$(wc -l <"$console" 2>/dev/null) || n=$c
		progress_lines "$console" $((c + 1)) "$n" \
			's/^\[[ 0-9.]*\] \(\(not \)\{0,1\}ok [0-9]* \)\([a-z][a-z0-9_]*\).*/kunit \3: \1/p'
		c=$n
		n=$(wc -l <"$results" 2>/dev/null) || n=$r
		progress_lines "$results" $((r + 1)) "$n" \
			's/^KGO-END selftest \([^ ]*\) rc=\(.*\)/selftest \1: rc=\2/p'
		r=$n
	done
}

boot() {
	set +e
	rm -f "$mon" "$ended"
	# The hard limit, a minute past the watchdog's, for a watchdog
	# that could not end it. KGO_VM_QEMU is words, QEMU's arguments.
	# shellcheck disable=SC2086
	timeout -k 10 $((timeout + 60)) qemu-system-x86_64 \
		-accel tcg,thread="$tcg_thread" "${icount[@]}" -cpu "$cpu" \
		-smp "${KGO_VM_SMP:-2}" -m "$mem" \
		-display none -monitor "unix:$mon,server,nowait" -no-reboot \
		-serial "file:$console" -serial "file:$results" \
		-kernel "$image" -initrd "$root.cpio.gz" \
		-append "console=ttyS0 panic=-1 nokaslr $append ${KGO_VM_APPEND:-} $settings" \
		${KGO_VM_QEMU:-} &
	qpid=$!
	watchdog "$qpid" &
	watcher=$!
	reporter=
	if [ "${KGO_VM_QUIET:-0}" != 1 ]; then
		progress &
		reporter=$!
	fi
	wait "$qpid"
	qrc=$?
	kill "$watcher" $reporter 2>/dev/null
	wait "$watcher" $reporter 2>/dev/null
	[ -f "$ended" ] && qrc=124
	set -e
}

boot
# A kernel that died before it ran /init never loaded anything of ours:
# seen once in many boots, a KASAN report from an interrupt taken in
# early CPU setup, under TCG. Say so, keep its log, and boot once more.
# A second such death counts (below) as the failure it is.
if ! grep -q "Run /init as init process" "$console" && [ ! -s "$results" ]; then
	note "$name: the kernel died before /init, so before any kgo code ran; booting again"
	grep -E -m 3 'BUG:|Kernel panic|Oops|KASAN' "$console" | sed 's/^/    /' >&2 || true
	mv "$console" "$logs/$name.boot1.console.log"
	note "$name: that boot's console: $logs/$name.boot1.console.log"
	boot
fi
elapsed=$((SECONDS - start))

summary=$(awk -f "$KGO_TOP/tools/vm/results.awk" "$results")
read -r passed failed skipped <<<"$(tail -n 1 <<<"$summary")"
head -n -1 <<<"$summary" | sed "s/^/kgo: $name: /" >&2

if [ $qrc = 124 ] || [ $qrc = 137 ]; then
	if [ -f "$ended" ]; then
		note "$name: ended by the watchdog: $(cat "$ended")"
	else
		note "$name: timed out after $((timeout + 60))s"
	fi
	failed=$((failed + 1))
	if [ -s "$hang" ]; then
		note "$name: where the vCPUs were just before (all of it: $hang):"
		grep '^CPU#.* RIP ' "$hang" | sed 's/^/    /' >&2 || true
	fi
fi

# The kernel's own reports fail a run even where the job carried on:
# the stock kernel does not panic on WARN, and a report can come from a
# context that no test checks.
# WARNINGs that a job provoked on purpose (kgo_misuse.ko) are
# bracketed by KGO-EXPECTED-WARNINGS lines in the kernel log and do not
# count; any other report inside the brackets still does.
# KCSAN's reports ("BUG: KCSAN: data-race in ...") are failures too.
reports='WARNING:|BUG:|Oops|Kernel panic|KASAN|KCSAN:|UBSAN|general protection fault|unreferenced object|INFO: task .* blocked|soft lockup|hard LOCKUP|stack-protector|stack guard page|detected stalls'
unexpected() {
	awk '/KGO-EXPECTED-WARNINGS-BEGIN/ { expected = 1 }
	     /KGO-EXPECTED-WARNINGS-END/ { expected = 0 }
	     !(expected && /WARNING:/)' "$console" | grep -E "$@" "$reports"
}
if unexpected -q; then
	note "$name: kernel report in the console log:"
	unexpected -m 5 | sed 's/^/    /' >&2
	failed=$((failed + 1))
fi

echo "$passed $failed $skipped" >"$counts"
line="$passed passed, $failed failed"
[ "$skipped" != 0 ] && line="$line, $skipped skipped"
note "$name: $line (${elapsed}s)"
[ "$failed" = 0 ]
