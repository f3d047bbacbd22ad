# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: what `make profile` records (see tools/bench/profile.sh).
#
# perf record, cpu-clock samples (a software event: TCG has no PMU) on
# every CPU with kernel call chains, while kgo_bench.ko runs one
# workload: KGO_PROFILE (its only= name), KGO_PROFILE_SCALE (its
# scale=) and KGO_PROFILE_FREQ (Hz), from the kernel command line.
# perf and its shared libraries are in /kgo/perf, run through their own
# dynamic loader, so that the busybox root needs no /lib.
#
# The guest names no symbol: it sends perf.data and /proc/kallsyms
# (gzip, base64) to the result port, and the host makes the report.
# kallsyms is read once insmod has returned (reading it costs the guest
# a while under TCG, which would show in the profile), with kgo_bench.ko
# still loaded. Its init text is gone by then, so the start of that,
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

# perf's workload: loading kgo_bench.ko runs the benchmark in its init.
cat >/tmp/load.sh <<LOAD
insmod /kgo/kgo_bench.ko only=$name scale=$scale &
ins=\$!
s=/sys/module/kgo_bench/sections/.init.text
until [ -e \$s ] || ! kill -0 \$ins 2>/dev/null; do
	sleep 0.1
done
[ -e \$s ] && echo "\$(cut -c3- \$s) t .init.text	[kgo_bench]" >/tmp/init.text
wait \$ins
LOAD

echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo "profile: $name scale=$scale at $freq Hz, $(nproc) CPUs, $(uname -r)"
insmod /kgo/kgo.ko || report "KGO-FAIL insmod kgo.ko"
dmesg -c >/dev/null
t0=$(date +%s)
# perf starts the workload once its counters are on, and ends with it.
if ! LD_LIBRARY_PATH=$P/lib $P/lib/ld-linux-x86-64.so.2 $P/perf record \
	-e cpu-clock -F "$freq" -a -g -o /tmp/perf.data -- sh /tmp/load.sh; then
	report "KGO-FAIL perf record of insmod kgo_bench.ko only=$name"
fi
echo "profile: recorded in $(($(date +%s) - t0)) s"
cat /proc/kallsyms /tmp/init.text >/tmp/kallsyms 2>/dev/null
dmesg | sed -n 's/^.*kgo_bench: //p'
rmmod kgo_bench || report "KGO-FAIL rmmod kgo_bench"
rmmod kgo || report "KGO-FAIL rmmod kgo"
if [ -s /tmp/perf.data ]; then
	send perf.data /tmp/perf.data
	send kallsyms /tmp/kallsyms
else
	report "KGO-FAIL no perf.data"
fi
