#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make profile`: where the CPUs' time goes while kgo_bench.ko runs one
# workload, in Debian's stock 6.1 kernel under QEMU (as make bench).
# The VM runs tools/vm/jobs/profile.sh: perf record of cpu-clock
# samples (TCG has no PMU) with call chains, on every CPU. The host's
# perf reads the samples; tools/bench/profile-report names kgo's and
# kgo_bench's functions from the guest's kallsyms and prints the top
# functions (self) and their callers.
#
# perf is the host's (Debian's linux-perf, the 6.1 series as the
# guest's kernel), copied into the VM with the shared libraries that
# ldd names.
#
# Environment: KGO_PROFILE (the workload, kgo_bench.ko's only= name:
# spawn, yield_pingpong, chan_pingpong, wake_latency, tree_allp...;
# default yield_pingpong; or net_<impl>_c<N>: make bench's net group,
# server <impl> (kgo, epoll, go, kthread) under N connections),
# KGO_PROFILE_SCALE (kgo_bench.ko's scale=, default 5: a few seconds of
# the workload; for net, netload's seconds),
# KGO_PROFILE_FREQ (samples a second per CPU, default 1000),
# KGO_PROFILE_TOP (functions listed, default 25), KGO_VM_TCG_THREAD
# (default multi, as make bench's figures), KGO_VM_TIMEOUT (600 s),
# KGO_PROFILE_ICOUNT=1 (as KGO_BENCH_ICOUNT=1 make bench: one vCPU under
# -icount, so that samples fall every N instructions; idle time is
# skipped).
#
# Writes out/profile/NAME.txt (the report, also printed) and keeps
# out/profile/NAME/{perf.data,kallsyms} for `perf report --kallsyms` or
# another look; the VM's logs are out/logs/profile.{console,results}.log.
set -euo pipefail
. "$(dirname "$0")/../vm/common.sh"

name=${KGO_PROFILE:-yield_pingpong}
scale=${KGO_PROFILE_SCALE:-5}
freq=${KGO_PROFILE_FREQ:-1000}
top=${KGO_PROFILE_TOP:-25}
# The workloads, from kgo_bench.ko's table, so that a typo fails here.
known=$(sed -n 's/^\t{ "\([a-z0-9_]*\)",.*/\1/p' "$KGO_TOP/bench/kmod/main.c" | paste -sd ' ')
[[ " $known " == *" $name "* ]] || [[ "$name" =~ ^net_(kgo|epoll|go|kthread)_c[1-9][0-9]{0,4}$ ]] ||
	die "KGO_PROFILE is one of kgo_bench.ko's workloads ($known) or net_<kgo|epoll|go|kthread>_c<N>, not '$name'"
[[ "$scale" =~ ^[1-9][0-9]{0,2}$ ]] || die "KGO_PROFILE_SCALE is 1 to 999, not '$scale'"
[[ "$freq" =~ ^[1-9][0-9]{0,4}$ ]] || die "KGO_PROFILE_FREQ is in Hz, not '$freq'"
[[ "$top" =~ ^[1-9][0-9]{0,3}$ ]] || die "KGO_PROFILE_TOP is a count, not '$top'"
perf=/usr/bin/perf
[ -x "$perf" ] || die "no $perf: apt-get install linux-perf"

out=$KGO_OUT/profile
vm=$out/vm			# what goes to the VM's /kgo besides kgo.ko
data=$out/$name
results=$KGO_OUT/logs/profile.results.log
mkdir -p "$out"
rm -rf "$vm" "$data"
mkdir -p "$vm/perf/lib" "$data"

"$KGO_TOP/tools/build-all.sh" stock
"$KGO_TOP/tools/bench/build-kmod.sh" "$vm"
[ -f "$vm/kgo_bench.ko" ] || die "make profile needs bench/kmod"
# The net group's servers and netload (kgo_echo.ko comes with the
# samples), and make bench's memory, which 10,000 kthreads need.
if [[ "$name" == net_* ]]; then
	"$KGO_TOP/tools/bench/build-net.sh" "$vm"
	export KGO_VM_MEM=${KGO_VM_MEM:-2G}
fi

# perf and what it links, the dynamic loader included: the job runs
# perf through that loader, with LD_LIBRARY_PATH, so the VM's busybox
# root needs no /lib.
cp "$perf" "$vm/perf/perf"
ldd "$perf" | grep -o '/[^ ]*' | sort -u | while read -r lib; do
	cp -L "$lib" "$vm/perf/lib/"
done
[ -f "$vm/perf/lib/ld-linux-x86-64.so.2" ] || die "ldd $perf named no ld-linux-x86-64.so.2"

# Like make bench's full runs: both vCPUs at once (see bench.sh); or
# like KGO_BENCH_ICOUNT=1.
case "${KGO_PROFILE_ICOUNT:-0}" in
0) export KGO_VM_TCG_THREAD=${KGO_VM_TCG_THREAD:-multi} ;;
1) export KGO_VM_ICOUNT=${KGO_VM_ICOUNT:-shift=0,sleep=off} KGO_VM_SMP=1 KGO_VM_TCG_THREAD=single ;;
*) die "KGO_PROFILE_ICOUNT is 0 or 1, not '$KGO_PROFILE_ICOUNT'" ;;
esac
note "profile: $name (scale=$scale, $freq Hz, TCG thread=$KGO_VM_TCG_THREAD${KGO_VM_ICOUNT:+, icount $KGO_VM_ICOUNT})"
rc=0
KGO_VM_EXTRA=$vm \
	KGO_VM_APPEND="KGO_PROFILE=$name KGO_PROFILE_SCALE=$scale KGO_PROFILE_FREQ=$freq ${KGO_VM_APPEND:-}" \
	"$KGO_TOP/tools/vm/run.sh" --kernel stock --job profile --name profile || rc=$?

# The job's files, from the result port's output sections.
for f in perf.data kallsyms; do
	sed -e 's/\r$//' "$results" |
		sed -n "/^KGO-BEGIN output $f\$/,/^KGO-END output $f /p" | sed '1d;$d' |
		base64 -d | gunzip >"$data/$f" 2>/dev/null || true
	[ -s "$data/$f" ] || die "profile: the VM sent no $f (see $KGO_OUT/logs/profile.console.log)"
done
sed -e 's/\r$//' "$KGO_OUT/logs/profile.console.log" |
	sed -n -e '/^profile: /p' -e '/^\[ perf record: /p' -e '/^{"metric"/p'

"$KGO_TOP/tools/bench/profile-report" --perf "$perf" --top "$top" \
	"$data/perf.data" "$data/kallsyms" >"$out/$name.txt" || rc=1
cat "$out/$name.txt"
note "profile: wrote $out/$name.txt; samples and symbols in $data/"
exit $rc
