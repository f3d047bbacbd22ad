# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: what `make profile` records (see tools/bench/profile.sh).
#
# perf record, cpu-clock samples (a software event: TCG has no PMU) on
# every CPU with kernel call chains, while kgo_bench.ko runs one
# workload: KGO_PROFILE (its only= name), KGO_PROFILE_SCALE (its
# scale=), KGO_PROFILE_IMPL (its impl=, if set) and KGO_PROFILE_FREQ
# (Hz), from the kernel command line. Or,
# with KGO_PROFILE=net_<impl>_c<N>, one server of make bench's net
# group (kgo, epoll, go, kthread) under netload's N connections, for
# KGO_PROFILE_SCALE seconds. Or, with KGO_PROFILE=nop_<impl>_b<N> or
# nop_<impl>_pipe, one of make bench's NOP rows: bench/uring's NOP
# program (nop_ring, nop_kgo for ioctl, nop_uring) with -batch N or
# -pipe 4096 and -iters KGO_PROFILE_SCALE/10 (the default 5: 100,000).
# perf and its shared libraries are in /kgo/perf, run through their own
# dynamic loader, so that the busybox root needs no /lib.
#
# The guest names no symbol: it sends perf.data and /proc/kallsyms
# (gzip, base64) to the result port, and the host makes the report.
# kallsyms is read once insmod has returned (reading it costs the guest
# a while under TCG, which would show in the profile), with kgo_bench.ko
# still loaded. With KGO_PROFILE_INSN=1 there is no perf: QEMU counts
# the instructions (tools/bench/insncount.c) and only kallsyms is sent.
# Its init text is gone by then, so the start of that,
# read from sysfs while init ran, is added as a symbol: ".init.text".

name=${KGO_PROFILE:-yield_pingpong}
scale=${KGO_PROFILE_SCALE:-5}
freq=${KGO_PROFILE_FREQ:-1000}
P=/kgo/perf

# send NAME FILE: FILE, gzipped and in base64, in an output section.
send() {
	report "KGO-BEGIN output $1"
	gzip -c "$2" | base64 >&3
	report "KGO-END output $1 rc=0"
}

case "$name" in
net_*_c*)
	# perf's workload: netload against a server started before perf,
	# so that its start (and kgo_echo.ko's init) is not in the samples.
	impl=${name#net_}
	impl=${impl%_c*}
	conns=${name##*_c}
	case "$impl" in
	kgo) port=7007 ;;
	go) port=7101 ;;
	epoll) port=7102 ;;
	kthread) port=7103 ;;
	*) report "KGO-FAIL profile: no net server '$impl'"; return ;;
	esac
	ip link set lo up
	echo "16384 65535" >/proc/sys/net/ipv4/ip_local_port_range
	cat >/tmp/load.sh <<LOAD
/kgo/bench/netload -impl $impl -conns $conns -port $port -secs $scale -warmup 1 -verify
LOAD
	;;
nop_*)
	# perf's workload: the NOP program alone (it opens its own ring).
	impl=${name#nop_}
	run=-${impl#*_}
	impl=${impl%%_*}
	[ "$impl" = ioctl ] && impl=kgo
	case "$run" in
	-pipe) run="-pipe 4096" ;;
	*) run="-batch ${run#-b}" ;;
	esac
	cat >/tmp/load.sh <<LOAD
/kgo/bench/nop_$impl $run -iters $(awk "BEGIN { print $scale / 10 }")
LOAD
	;;
*)
	# perf's workload: loading kgo_bench.ko runs the benchmark in its init.
	cat >/tmp/load.sh <<LOAD
insmod /kgo/kgo_bench.ko only=$name scale=$scale ${KGO_PROFILE_IMPL:+impl=$KGO_PROFILE_IMPL} &
ins=\$!
s=/sys/module/kgo_bench/sections/.init.text
until [ -e \$s ] || ! kill -0 \$ins 2>/dev/null; do
	sleep 0.1
done
[ -e \$s ] && echo "\$(cut -c3- \$s) t .init.text	[kgo_bench]" >/tmp/init.text
wait \$ins
LOAD
	;;
esac

# net_server start|stop: the net workload's server, as make bench's.
net_server() {
	[ -n "${port:-}" ] || return 0
	case "$1.$impl" in
	start.kgo) insmod /kgo/kgo_echo.ko port=$port ;;
	start.kthread) insmod /kgo/kthread_echo.ko port=$port max_conns=$conns ;;
	start.go) /kgo/bench/go_echo -port $port & srv=$! ;;
	start.epoll) /kgo/bench/epoll_echo -port $port & srv=$! ;;
	stop.kgo) rmmod kgo_echo ;;
	stop.kthread) rmmod kthread_echo ;;
	stop.*) kill "$srv" && { wait "$srv" || [ $? = 143 ]; } ;;	# 143: SIGTERM
	esac || report "KGO-FAIL profile: $1 the $impl server"
	[ "$1" = start ] || return 0
	i=0
	until grep -q ":$(printf %04X $port) 00000000:0000 0A " /proc/net/tcp ||
		[ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo "profile: $name scale=$scale at $freq Hz, $(nproc) CPUs, $(uname -r)"
insmod /kgo/kgo.ko || report "KGO-FAIL insmod kgo.ko"
net_server start
dmesg -c >/dev/null
t0=$(date +%s)
if [ "${KGO_PROFILE_INSN:-0}" = 1 ]; then
	# QEMU's insncount plugin counts the instructions: no perf, whose
	# own interrupts would be counted too.
	sh /tmp/load.sh || report "KGO-FAIL $name"
# perf starts the workload once its counters are on, and ends with it.
elif ! LD_LIBRARY_PATH=$P/lib $P/lib/ld-linux-x86-64.so.2 $P/perf record \
	-e cpu-clock -F "$freq" -a -g -o /tmp/perf.data -- sh /tmp/load.sh; then
	report "KGO-FAIL perf record of $name"
fi
echo "profile: recorded in $(($(date +%s) - t0)) s"
# Symbols while the modules are loaded: their text is named.
cat /proc/kallsyms /tmp/init.text >/tmp/kallsyms 2>/dev/null
if [[ "$name" == nop_* ]]; then
	:
elif [ -n "${port:-}" ]; then
	# kgo's counters for the run: what its Ms and the monitor did.
	[ "$impl" = kgo ] && sed 's/^/profile: /' /sys/kernel/debug/kgo/sched /sys/kernel/debug/kgo/procs
	net_server stop
else
	dmesg | sed -n 's/^.*kgo_bench: //p'
	rmmod kgo_bench || report "KGO-FAIL rmmod kgo_bench"
fi
rmmod kgo || report "KGO-FAIL rmmod kgo"
if [ "${KGO_PROFILE_INSN:-0}" = 1 ]; then
	send kallsyms /tmp/kallsyms
elif [ -s /tmp/perf.data ]; then
	send perf.data /tmp/perf.data
	send kallsyms /tmp/kallsyms
else
	report "KGO-FAIL no perf.data"
fi
