# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: what `make bench` measures (see tools/bench/bench.sh).
#
# kgo and its peers: every benchmark once, then again, $KGO_BENCH_RUNS
# times, each time in another order (run_plan); KGO_BENCH_SMOKE=1 makes
# every run tiny. Both come from the kernel command line, which hands
# unknown NAME=VALUE words to init as its environment.
#
# Every run's JSON lines go to the result port as soon as it ends,
# inside one "output bench" section, so a VM that dies half-way still
# leaves the figures it got. A failed run is a KGO-FAIL, which fails the
# VM run; the benchmark's other runs are skipped, the next benchmark
# goes on. So is a run that ends well but prints no figure. The console
# gets a progress line per run, which bench.sh shows on the host while
# the VM runs.

runs=${KGO_BENCH_RUNS:-5}
smoke=${KGO_BENCH_SMOKE:-0}
bin=/kgo/bench
size=
[ "$smoke" = 1 ] && size=-smoke

# kgo's side of spawn, the ping-pongs and the trees: the in-kernel
# module runs its whole suite at load and logs a JSON line per metric,
# "kgo_bench: {...}". Clearing the log first leaves only this run's.
kernel_suite() {
	dmesg -c >/dev/null
	insmod /kgo/kgo_bench.ko smoke="$smoke" || return 1
	dmesg | sed -n 's/^.*kgo_bench: \({.*}\)[[:space:]]*$/\1/p' >/tmp/kgo_bench.out
	cat /tmp/kgo_bench.out
	rmmod kgo_bench || return 1
	# A workload that failed logs an "error" line instead of a figure.
	! grep -q '"error"' /tmp/kgo_bench.out
}

# One kgo_bench.ko workload that runs only when named (bench/kmod/fair.c).
kmod_only() {
	dmesg -c >/dev/null
	insmod /kgo/kgo_bench.ko smoke="$smoke" only="$1" || return 1
	dmesg | sed -n 's/^.*kgo_bench: \({.*}\)[[:space:]]*$/\1/p' >/tmp/kgo_bench.only
	cat /tmp/kgo_bench.only
	rmmod kgo_bench || return 1
	! grep -q '"error"' /tmp/kgo_bench.only
}

# An in-kernel kgo_go() behind an fd's backlog: fairbench queues it,
# loads kgo_bench.ko only=fair_kgo_go while it lasts, and prints the
# goal; the module logs the figure.
fair_kgo_go() {
	local rc
	dmesg -c >/dev/null
	$bin/fairbench $size -run kgo_go \
		-insmod "insmod /kgo/kgo_bench.ko smoke=$smoke only=fair_kgo_go"
	rc=$?
	dmesg | sed -n 's/^.*kgo_bench: \({.*}\)[[:space:]]*$/\1/p' >/tmp/kgo_bench.only
	cat /tmp/kgo_bench.only
	rmmod kgo_bench 2>/dev/null
	[ $rc = 0 ] && ! grep -q '"error"' /tmp/kgo_bench.only
}

# The most goroutines queued before the first allocation failure: once,
# last (the structs stay with kgo until it is unloaded), full mode only.
max_queued() {
	dmesg -c >/dev/null
	insmod /kgo/kgo_bench.ko only=max_queued || return 1
	dmesg | sed -n 's/^.*kgo_bench: \({.*}\)[[:space:]]*$/\1/p'
	rmmod kgo_bench
}

# Steals during a load of kgo_bench.ko with only=tree_allp (its warm-up
# tree of an eighth of the size, then the timed tree), from kgo's
# debugfs counters: "steals" (successful tries) and "stolen" (goroutines
# moved), summed over the Ps before and after.
steal_sum() {
	grep -o " $1=[0-9]*" /sys/kernel/debug/kgo/procs | cut -d= -f2 |
		awk '{ s += $1 } END { print s + 0 }'
}
tree_steals() {
	s0=$(steal_sum steals) g0=$(steal_sum stolen)
	insmod /kgo/kgo_bench.ko smoke="$smoke" only=tree_allp >/dev/null || return 1
	rmmod kgo_bench
	s1=$(steal_sum steals) g1=$(steal_sum stolen)
	echo "{\"metric\":\"tree_steals\",\"impl\":\"kgo\",\"unit\":\"steals\",\"better\":\"higher\",\"value\":$((s1 - s0)),\"stolen\":$((g1 - g0))}"
}

# Handoff latency: from a goroutine blocking in the kernel (BLOCK tasks
# of 1 ms, 16 in flight) to its P running a goroutine again on another
# M. kgo:kgo_handoff gives the P and how long its M had been blocked
# (blocked_ns, on the clock that trace_clock "mono" reads), the next
# kgo:kgo_g_start on that P when it ran again. A handoff with nothing
# queued leaves the P idle until new work comes; with 16 tasks in flight
# on 2 Ps that happens only as the run drains, in the tail. Prints the
# 50th and 90th percentiles (nearest rank); fails if it saw no handoff.
handoff() {
	local T=/sys/kernel/tracing n q rc v
	[ -e $T/trace ] || mount -t tracefs nodev $T || return 1
	echo mono >$T/trace_clock
	echo 4096 >$T/buffer_size_kb
	echo >$T/trace
	echo 1 >$T/events/kgo/kgo_handoff/enable
	echo 1 >$T/events/kgo/kgo_g_start/enable
	kgoctl run block 1000 --count $([ "$smoke" = 1 ] && echo 64 || echo 2000) \
		--batch 16 >/dev/null
	rc=$?
	echo 0 >$T/events/kgo/enable
	if [ $rc != 0 ]; then
		echo local >$T/trace_clock
		return $rc
	fi
	awk '
	/ kgo_handoff: / || / kgo_g_start: / {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/) {
				split(substr($i, 1, length($i) - 1), t, ".")
				ns = t[1] * 1000000000 + t[2] * 1000
			} else if ($i ~ /^p=/) {
				p = substr($i, 3)
			} else if ($i ~ /^blocked_ns=/) {
				blocked = substr($i, 12)
			}
		if ($0 ~ / kgo_handoff: /)
			since[p] = ns - blocked
		else if (p in since) {
			print ns - since[p]
			delete since[p]
		}
	}' $T/trace | sort -n >/tmp/handoff.ns
	echo local >$T/trace_clock	# the default; this empties the buffer
	n=$(wc -l </tmp/handoff.ns)
	if [ "$n" = 0 ]; then
		echo "no kgo_handoff event followed by a start on its P"
		return 1
	fi
	for q in 50 90; do
		v=$(sed -n "$(((n * q + 99) / 100))p" /tmp/handoff.ns)
		echo "{\"metric\":\"handoff_p$q\",\"impl\":\"kgo\",\"unit\":\"ns\",\"value\":$v,\"handoffs\":$n}"
	done
}

# Go's trees are as deep as kgo's were: kgo_bench.ko picks its depth
# for the VM's memory and says it in its tree lines.
kgo_tree_depth() {
	sed -n 's/.*"metric":"tree_allp".*"depth":\([0-9][0-9]*\).*/\1/p' \
		/tmp/kgo_bench.out 2>/dev/null | head -n 1
}

# The "net" group (bench/net): echo servers over loopback TCP, each
# loaded by netload with N connections in closed loops of 64-byte round
# trips, every echoed byte checked: kgo's echo sample (kgo_echo.ko, a
# goroutine per connection), Go (go_echo, a goroutine per connection),
# C epoll (epoll_echo, a thread per CPU) and the kernel's own way
# (kthread_echo.ko, a kthread per connection). Each server has its own
# port, so that no run meets the last one's TIME_WAITs on its own.
# KGO_BENCH_NET_STANDIN=1 (KGO_VM_APPEND) runs kthread_echo.ko in kgo's
# place: only to try the group's plumbing where kgo_echo.ko is not built.
net_sizes="100 1000 10000"
net_time="-secs 3 -warmup 1"
if [ "$smoke" = 1 ]; then
	net_sizes="10 50"
	net_time="-secs 1 -warmup 0"
fi
net_kgo_ko=/kgo/kgo_echo.ko
[ "${KGO_BENCH_NET_STANDIN:-0}" = 1 ] && net_kgo_ko=/kgo/kthread_echo.ko
net_largest=${net_sizes##* }

net_port() {
	case "$1" in
	kgo) echo 7007 ;;
	go) echo 7101 ;;
	epoll) echo 7102 ;;
	kthread) echo 7103 ;;
	esac
}

# Whether something listens on TCP port $1, from /proc/net/tcp.
net_listening() {
	grep -q ":$(printf %04X "$1") 00000000:0000 0A " /proc/net/tcp
}

# net_run IMPL N: starts IMPL's server, waits until it listens, runs
# netload against it, stops it. Memory per connection is netload's
# -mem: MemTotal - MemFree with every connection open and at rest, less
# the same before it connects, over N (bench/net/netload.c says why that
# measure is the one fair to all four). During kgo's largest run netload
# also samples kgo's Ms (threads= of debugfs's sched) while it measures.
net_run() {
	local impl=$1 conns=$2 port pid= i rc ms=
	port=$(net_port "$impl")
	ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up || return 1
	# The client's ports, from above the servers' up.
	echo "16384 65535" >/proc/sys/net/ipv4/ip_local_port_range
	if net_listening "$port"; then
		echo "port $port is already taken"
		return 1
	fi
	case "$impl" in
	kgo)
		insmod $net_kgo_ko port="$port" || return 1
		[ "$conns" = "$net_largest" ] && ms=-kgo-ms
		;;
	kthread) insmod /kgo/kthread_echo.ko port="$port" max_conns="$conns" || return 1 ;;
	go) $bin/go_echo -port "$port" & pid=$! ;;
	epoll) $bin/epoll_echo -port "$port" & pid=$! ;;
	esac
	i=0
	while ! net_listening "$port" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if net_listening "$port"; then
		# shellcheck disable=SC2086 # the words of $net_time
		$bin/netload -impl "$impl" -conns "$conns" -port "$port" $net_time \
			-verify -mem $ms
		rc=$?
	else
		echo "$impl: nothing listens on port $port after 10 s"
		rc=1
	fi
	# What made kgo's Ms, for a reader of the log: handoffs (an M that
	# slept in the kernel) and hog reliefs; and its parks and wakes.
	# (stdout is the step's, which keeps only JSON lines: the console.)
	[ -n "$ms" ] && sed -n 's/^\(P[0-9]*\):.* \(mparks=.*\)$/net: kgo \1 \2/p' \
		/sys/kernel/debug/kgo/procs >/dev/console 2>/dev/null &&
		sed 's/^/net: kgo /' /sys/kernel/debug/kgo/sched >/dev/console
	case "$impl" in
	kgo) rmmod "$(basename $net_kgo_ko .ko)" || rc=1 ;;
	kthread) rmmod kthread_echo || rc=1 ;;
	*) kill "$pid" && wait "$pid" ;;
	esac
	if net_listening "$port"; then
		echo "$impl: port $port still listens after the server stopped"
		rc=1
	fi
	return $rc
}
# The CRC32C of a tmpfs file of $1 MiB three ways (samples/crc32c):
# kgo's goroutines, one thread, a workqueue. One write runs all three;
# each line of its result becomes a figure of metric $2.
crc32c_file() {
	local d=/sys/kernel/debug/kgo_crc32c f=/tmp/crc32c.data m rc
	[ -f $f ] || dd if=/dev/urandom of=$f bs=1M count="$1" 2>/dev/null || return 1
	for m in $(cat /kgo/deps/order 2>/dev/null); do
		insmod /kgo/deps/"$m" 2>/dev/null
	done
	insmod /kgo/kgo_crc32c.ko || return 1
	echo $f >$d/control &&
		sed -n "s/^\([a-z]*\) crc=[^ ]* ns=\([0-9]*\).*/{\"metric\":\"$2\",\"impl\":\"\1\",\"unit\":\"ns\",\"value\":\2}/p" $d/result
	rc=$?
	rmmod kgo_crc32c
	return $rc
}
crc32c_steps() {
	local mb=64
	[ "$smoke" = 1 ] && mb=1
	[ -f /kgo/kgo_crc32c.ko ] || return
	step "crc32c_${mb}m" kgo,thread,workqueue crc32c_file $mb "crc32c_${mb}m"
	rm -f /tmp/crc32c.data
}

# step METRIC IMPL CMD...: one benchmark, planned. steps() lists them
# all in /tmp/bench.plan, one a line; run_plan then runs the plan
# $runs times, each run in its own order (see run_plan).
# KGO_BENCH_ONLY=<glob> (on KGO_VM_APPEND) plans only the steps whose
# METRIC it matches, e.g. 'fair_*'.
wanted() {
	[ -z "${KGO_BENCH_ONLY:-}" ] && return 0
	# shellcheck disable=SC2254 # the glob is the point
	case "$1" in
	$KGO_BENCH_ONLY) return 0 ;;
	esac
	return 1
}
step() {
	wanted "$1" || return
	if [ "$3" = kernel_suite ] || [ "$3" = kmod_only ] || [ "$3" = fair_kgo_go ] &&
		[ ! -f /kgo/kgo_bench.ko ]; then
		echo "$1 $2: skipped: no /kgo/kgo_bench.ko (bench/kmod not built)"
		return
	fi
	if [ "$3" = net_run ] && [ "$2" = kgo ] && [ ! -f "$net_kgo_ko" ]; then
		echo "$1 $2: skipped: no $net_kgo_ko (samples/echo not built)"
		return
	fi
	echo "$*" >>/tmp/bench.plan
}

# run_one N TOTAL METRIC IMPL CMD...: one run of one step. A step that
# failed before is not run again; one that exits 0 must have printed a
# figure (a JSON line), or it failed too.
run_one() {
	local what="[$1/$2] $3 $4" key="$3 $4"
	shift 4
	if grep -qxF "$key" /tmp/bench.failed 2>/dev/null; then
		echo "$what: skipped: it failed before"
		return
	fi
	echo "$what ..."
	t0=$(date +%s)
	"$@" >/tmp/bench.out 2>/tmp/bench.err
	rc=$?
	grep '^{' /tmp/bench.out >&3
	if [ $rc = 0 ] && ! grep -q '^{' /tmp/bench.out; then
		echo "$what: printed no figure"
		rc=1
	fi
	if [ $rc != 0 ]; then
		echo "$what: failed (exit $rc):"
		sed 's/^/bench:   /' /tmp/bench.out /tmp/bench.err
		report "KGO-FAIL bench $what: exited $rc"
		echo "$key" >>/tmp/bench.failed
		return
	fi
	echo "$what: done in $(($(date +%s) - t0)) s"
}

# Runs the plan $runs times. Steps of one metric (kgo and its peers)
# form a group. Run r (from 0) turns the order of the groups left by r,
# and the order within each group by r as well: so that no benchmark is
# always first into a fresh boot or always follows the same one (the
# net group's kthread server leaves 10,000 exiting threads behind), and
# run r of kgo and run r of a peer, which the report pairs, ran close
# together. The net group did this alone before; all do now.
run_plan() {
	local r=0 n=0 total
	total=$(($(wc -l </tmp/bench.plan) * runs))
	while [ $r -lt "$runs" ]; do
		awk -v r=$r '
		{ if ($1 != last) { g++; last = $1 } line[g, ++cnt[g]] = $0 }
		END {
			for (i = 0; i < g; i++) {
				k = (i + r) % g + 1
				for (j = 0; j < cnt[k]; j++)
					print line[k, (j + r) % cnt[k] + 1]
			}
		}' /tmp/bench.plan >/tmp/bench.order
		exec 4</tmp/bench.order
		# shellcheck disable=SC2086 # a plan line is words
		while read -r line <&4; do
			n=$((n + 1))
			run_one $n "$total" $line
		done
		exec 4<&-
		r=$((r + 1))
	done
}

# gobench's tree at kgo's depth: kgo_bench.ko picks it for the VM's
# memory and says it in its tree lines (run_plan may run Go's tree
# before this run's kernel suite: the depth is the last suite's).
gobench_tree() {
	local depth
	depth=$(kgo_tree_depth)
	$bin/gobench $size ${depth:+-depth $depth} -run "$1"
}

# The order of the first run; each later one turns it (run_plan).
steps() {
	step kgo_bench.ko kgo+peers kernel_suite
	step tree_steals kgo tree_steals
	step handoff kgo handoff
	for m in spawn yield_pingpong chan_pingpong; do
		step "$m" go $bin/gobench $size -run "$m"
	done
	for m in tree_1p tree_allp; do
		step "$m" go gobench_tree "$m"
	done
	# kgo's rings (impl kgo), its older ioctl path, and io_uring.
	for b in 1 32; do
		step "nop_b$b" kgo $bin/nop_ring $size -batch $b
		step "nop_b$b" kgo_ioctl $bin/nop_kgo $size -batch $b
		step "nop_b$b" io_uring $bin/nop_uring $size -batch $b
	done
	# 4096 in flight: sustained ops/s and the submitter's CPU per op.
	step nop_pipe kgo $bin/nop_ring $size -pipe 4096
	step nop_pipe io_uring $bin/nop_uring $size -pipe 4096
	# Each NOP run elsewhere: a goroutine, against io_uring's io-wq.
	for b in 1 32; do
		step "nop_async_b$b" kgo $bin/nop_ring $size -batch $b -async
		step "nop_async_b$b" io_uring $bin/nop_uring $size -batch $b -async
	done
	# Blocking work: kgo, CMWQ and a kthread per task, in one load
	# (bench/kmod/blocking.c).
	step blk kgo,system_wq,unbound_wq,kthread kmod_only blocking
	# kgo's costly events per operation (bench/kmod/counts.c): sched.lock
	# acquisitions, shared atomics, cross-CPU wake-ups of an M.
	step counts kgo kmod_only counts
	# The scheduler under load: N runnable goroutines yielding, a
	# buffered channel, select over 4, fan-in, a contended mutex; kgo
	# (bench/kmod/sched_load.c) and Go (bench/go/load.go), one step each.
	step sched_load kgo kmod_only yield_n,chan_buf,select4,chan_fanin,mutex_contended
	step sched_load go $bin/gobench $size \
		-run yield_n2,yield_n100,yield_n10000,chan_buf,select4,chan_fanin,mutex_contended
	# The fairness group: each against its goal (bench/fair).
	for f in sleep session block; do
		step "fair_$f" kgo $bin/fairbench $size -run $f
	done
	step fair_kgo_go kgo fair_kgo_go
	step fair_pingpong_hog kgo kmod_only fair_pingpong_hog
	# The net group: each size, every server.
	for c in $net_sizes; do
		for impl in kgo go epoll kthread; do
			step "net_c$c" "$impl" net_run "$impl" "$c"
		done
	done
	crc32c_steps
}

echo "bench: $runs run(s) each$([ "$smoke" = 1 ] && echo ', smoke sizes'), $(nproc) CPUs, $(uname -r)"
insmod /kgo/kgo.ko || report "KGO-FAIL insmod kgo.ko"
rm -f /tmp/bench.plan /tmp/bench.failed
steps
report "KGO-BEGIN output bench"
run_plan
# The most goroutines queued: once, last (the structs stay with kgo
# until it is unloaded), full mode only.
if [ "$smoke" != 1 ] && [ -f /kgo/kgo_bench.ko ] && wanted max_queued; then
	run_one 1 1 max_queued kgo max_queued
fi
report "KGO-END output bench rc=0"
rmmod kgo || report "KGO-FAIL rmmod kgo"
