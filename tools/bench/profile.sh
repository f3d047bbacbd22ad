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
# The guest keeps time with its TSC (tsc=reliable), as make bench's does
# (tools/bench/bench.sh says why).
#
#   profile.sh [--workload NAME] [--scale N] [--impl IMPL] [--freq HZ]
#              [--top N] [--icount] [--insn] [--timeout S]
#   profile.sh --help
#
# --workload NAME: kgo_bench.ko's only= name: spawn, yield_pingpong,
# chan_pingpong, wake_latency, tree_allp...; default yield_pingpong; or
# net_<impl>_c<N>: make bench's net group, server <impl> (kgo, epoll,
# go, kthread) under N connections; or nop_<impl>_b<N> /
# nop_<impl>_pipe: make bench's NOP rows, <impl> one of ring (kgo's
# rings), ioctl (its older path) or uring (io_uring), batches of N or
# 4096 in flight. --scale N: kgo_bench.ko's scale=, default 5: a few
# seconds of the workload; for net, netload's seconds. --impl IMPL:
# kgo_bench.ko's impl=, one implementation, kgo or a peer; default all,
# and kgo with --insn. --freq HZ: samples a second per CPU, default
# 1000. --top N: functions listed, default 25. --icount: as make bench's
# --icount, one vCPU under -icount, so that samples fall every N
# instructions; idle time is skipped. --insn: instead of perf, count
# instructions exactly (below). --timeout S: the VM's limit.
#
# Environment, the flags' defaults: KGO_PROFILE (the workload),
# KGO_PROFILE_SCALE, KGO_PROFILE_IMPL, KGO_PROFILE_FREQ,
# KGO_PROFILE_TOP, KGO_PROFILE_ICOUNT=1, KGO_PROFILE_INSN=1,
# KGO_VM_TIMEOUT; and KGO_VM_TCG_THREAD (default multi, as make bench's
# figures).
#
# Writes out/profile/NAME.txt (the report, also printed) and keeps
# out/profile/NAME/{perf.data,kallsyms} for `perf report --kallsyms` or
# another look; the VM's logs are out/logs/profile.{console,results}.log.
set -euo pipefail
. "$(dirname "$0")/../vm/common.sh"

flags_parse "usage: profile.sh [OPTION...]

make profile: perf in the stock kernel's VM while kgo_bench.ko runs one
workload; the top functions in out/profile/NAME.txt. The comment at the
top of tools/bench/profile.sh says more." "
--workload  KGO_PROFILE         NAME  kgo_bench.ko's only= name, net_<impl>_c<N> or nop_<impl>_<b<N>|pipe> (KGO_PROFILE; default yield_pingpong)
--scale     KGO_PROFILE_SCALE   N     kgo_bench.ko's scale= (KGO_PROFILE_SCALE; default 5)
--impl      KGO_PROFILE_IMPL    IMPL  one implementation, kgo or a peer (KGO_PROFILE_IMPL; default all, kgo with --insn)
--freq      KGO_PROFILE_FREQ    HZ    samples a second per CPU (KGO_PROFILE_FREQ; default 1000)
--top       KGO_PROFILE_TOP     N     functions listed (KGO_PROFILE_TOP; default 25)
--icount    KGO_PROFILE_ICOUNT  -     one vCPU under QEMU's -icount (KGO_PROFILE_ICOUNT=1)
--insn      KGO_PROFILE_INSN    -     count instructions exactly, with a QEMU plugin, instead of perf (KGO_PROFILE_INSN=1)
--timeout   KGO_VM_TIMEOUT      S     the VM's limit in seconds (KGO_VM_TIMEOUT)
" "$@"
[ ${#KGO_ARGS[@]} = 0 ] || die "profile.sh: unexpected argument ${KGO_ARGS[0]} (profile.sh --help)"

name=${KGO_PROFILE:-yield_pingpong}
scale=${KGO_PROFILE_SCALE:-5}
freq=${KGO_PROFILE_FREQ:-1000}
top=${KGO_PROFILE_TOP:-25}
# The workloads, from kgo_bench.ko's table, so that a typo fails here.
known=$(sed -n 's/^\t{ "\([a-z0-9_]*\)",.*/\1/p' "$KGO_TOP/bench/kmod/main.c" | paste -sd ' ')
[[ " $known " == *" $name "* ]] || [[ "$name" =~ ^net_(kgo|epoll|go|kthread)_c[1-9][0-9]{0,4}$ ]] ||
	[[ "$name" =~ ^nop_(ring|ioctl|uring)_(b[1-9][0-9]{0,3}|pipe)$ ]] ||
	die "profile.sh: --workload (KGO_PROFILE) is one of kgo_bench.ko's workloads ($known), net_<kgo|epoll|go|kthread>_c<N> or nop_<ring|ioctl|uring>_<b<N>|pipe>, not '$name'"
[[ "$scale" =~ ^[1-9][0-9]{0,2}$ ]] || die "profile.sh: --scale (KGO_PROFILE_SCALE) is 1 to 999, not '$scale'"
[[ "$freq" =~ ^[1-9][0-9]{0,4}$ ]] || die "profile.sh: --freq (KGO_PROFILE_FREQ) is in Hz, not '$freq'"
[[ "$top" =~ ^[1-9][0-9]{0,3}$ ]] || die "profile.sh: --top (KGO_PROFILE_TOP) is a count, not '$top'"
[[ "${KGO_VM_TIMEOUT:-1}" =~ ^[1-9][0-9]*$ ]] || die "profile.sh: --timeout (KGO_VM_TIMEOUT) is in seconds, not '$KGO_VM_TIMEOUT'"
insn=${KGO_PROFILE_INSN:-0}
[[ "$insn" =~ ^[01]$ ]] || die "profile.sh: KGO_PROFILE_INSN is 0 or 1, not '$insn'"
if [ "$insn" = 1 ]; then
	KGO_PROFILE_ICOUNT=1
	KGO_PROFILE_IMPL=${KGO_PROFILE_IMPL:-kgo}
fi
impl=${KGO_PROFILE_IMPL:-}
[[ "$impl" =~ ^[a-z_]*$ ]] || die "profile.sh: --impl (KGO_PROFILE_IMPL) is an implementation's name, not '$impl'"
# Like make bench's full runs: both vCPUs at once (see bench.sh); or
# like its --icount.
vm_flags=(--kernel stock --job profile --name profile)
[ -z "${KGO_VM_TIMEOUT:-}" ] || vm_flags+=(--timeout "$KGO_VM_TIMEOUT")
case "${KGO_PROFILE_ICOUNT:-0}" in
0) export KGO_VM_TCG_THREAD=${KGO_VM_TCG_THREAD:-multi} ;;
1)
	KGO_VM_ICOUNT=${KGO_VM_ICOUNT:-shift=0,sleep=off}
	export KGO_VM_TCG_THREAD=single
	vm_flags+=(--icount "$KGO_VM_ICOUNT" --smp 1)
	;;
*) die "profile.sh: KGO_PROFILE_ICOUNT is 0 or 1, not '$KGO_PROFILE_ICOUNT'" ;;
esac
perf=/usr/bin/perf
[ -x "$perf" ] || die "no $perf: apt-get install linux-perf"

out=$KGO_OUT/profile
vm=$out/vm			# what goes to the VM's /kgo besides kgo.ko
data=$out/$name
results=$KGO_OUT/logs/profile.results.log
mkdir -p "$out"
rm -rf "$vm" "$data"
mkdir -p "$vm/perf/lib" "$data"

# kgo and kgo_bench.ko; for net_*, the net group's servers and netload
# (kgo_echo.ko comes with the samples), and make bench's memory, which
# 10,000 kthreads need.
build=(--bench "$vm")
if [[ "$name" == net_* ]]; then
	build+=(--net)
	export KGO_VM_MEM=${KGO_VM_MEM:-2G}
fi
"$KGO_TOP/tools/build-all.sh" "${build[@]}" stock
[ -f "$vm/kgo_bench.ko" ] || die "make profile needs bench/kmod"
# The NOP rows' programs (bench/uring), as make bench's.
if [[ "$name" == nop_* ]]; then
	make -s -C "$KGO_TOP/bench/uring"
	mkdir -p "$vm/bench"
	cp "$KGO_TOP/bench/uring/nop_uring" "$KGO_TOP/bench/uring/nop_kgo" \
		"$KGO_TOP/bench/uring/nop_ring" "$vm/bench/"
fi

# perf and what it links, the dynamic loader included: the job runs
# perf through that loader, with LD_LIBRARY_PATH, so the VM's busybox
# root needs no /lib.
cp "$perf" "$vm/perf/perf"
ldd "$perf" | grep -o '/[^ ]*' | sort -u | while read -r lib; do
	cp -L "$lib" "$vm/perf/lib/"
done
[ -f "$vm/perf/lib/ld-linux-x86-64.so.2" ] || die "ldd $perf named no ld-linux-x86-64.so.2"

# profile_vm SCALE SETTING...: a boot of the profile job, the workload
# at SCALE, with the job's settings after KGO_VM_APPEND; tsc=reliable
# before it, as make bench's (tools/bench/bench.sh says why).
profile_vm() {
	local s=$1
	shift
	KGO_VM_EXTRA=$vm KGO_VM_APPEND="tsc=reliable ${KGO_VM_APPEND:-}" \
		"$KGO_TOP/tools/vm/run.sh" "${vm_flags[@]}" \
		--append "KGO_PROFILE=$name KGO_PROFILE_SCALE=$s${impl:+ KGO_PROFILE_IMPL=$impl} $*"
}

# fetch FILE...: the job's output sections FILE into $data.
fetch() {
	local f
	for f in "$@"; do
		sed -e 's/\r$//' "$results" |
			sed -n "/^KGO-BEGIN output $f\$/,/^KGO-END output $f /p" | sed '1d;$d' |
			base64 -d | gunzip >"$data/$f" 2>/dev/null || true
		[ -s "$data/$f" ] || die "profile: the VM sent no $f (see $KGO_OUT/logs/profile.console.log)"
	done
}

# KGO_PROFILE_INSN=1: QEMU's insncount plugin (tools/bench/insncount.c)
# counts every kernel instruction the guest runs, per block, under
# -icount with one vCPU. Two boots, the workload at scale and at twice
# that: what the second run executed beyond the first, over the extra
# iterations, is each function's instructions per operation, with the
# boot, the module loads and perf's absence of noise cancelling out.
# tools/bench/insn-report names the blocks from each boot's kallsyms.
insn_profile() {
	local s tag rc=0 plugin=$data/insncount.so
	gcc -O2 -Wall -Wno-unused-parameter -fPIC -shared -fvisibility=hidden \
		-o "$plugin" "$KGO_TOP/tools/bench/insncount.c" || die "building the insncount plugin"
	for s in "$scale" $((2 * scale)); do
		tag=s$s
		note "profile: $name, instructions counted (scale=$s, icount $KGO_VM_ICOUNT)"
		KGO_VM_QEMU="-plugin $plugin,out=$data/insn.$tag ${KGO_VM_QEMU:-}" \
			profile_vm "$s" KGO_PROFILE_INSN=1 || rc=$?
		[ "$rc" = 0 ] || die "profile: the VM failed (see $KGO_OUT/logs/profile.console.log)"
		[ -s "$data/insn.$tag" ] || die "profile: QEMU wrote no counts"
		fetch kallsyms
		mv "$data/kallsyms" "$data/kallsyms.$tag"
		sed -e 's/\r$//' "$KGO_OUT/logs/profile.console.log" |
			sed -n 's/^.*\({"metric".*\)$/\1/p' >"$data/metrics.$tag"
		[ -s "$data/metrics.$tag" ] || die "profile: the workload printed no figures"
	done
	"$KGO_TOP/tools/bench/insn-report" --top "$top" \
		"$data/insn.s$scale" "$data/kallsyms.s$scale" "$data/metrics.s$scale" \
		"$data/insn.s$((2 * scale))" "$data/kallsyms.s$((2 * scale))" "$data/metrics.s$((2 * scale))" \
		>"$out/$name.insn.txt" || die "insn-report failed"
	cat "$out/$name.insn.txt"
	note "profile: wrote $out/$name.insn.txt; counts and symbols in $data/"
}

if [ "$insn" = 1 ]; then
	insn_profile
	exit
fi
note "profile: $name (scale=$scale, $freq Hz, TCG thread=$KGO_VM_TCG_THREAD${KGO_VM_ICOUNT:+, icount $KGO_VM_ICOUNT})"
rc=0
profile_vm "$scale" "KGO_PROFILE_FREQ=$freq" || rc=$?

# The job's files, from the result port's output sections.
fetch perf.data kallsyms
sed -e 's/\r$//' "$KGO_OUT/logs/profile.console.log" |
	sed -n -e '/^profile: /p' -e '/^\[ perf record: /p' -e '/^{"metric"/p'

"$KGO_TOP/tools/bench/profile-report" --perf "$perf" --top "$top" \
	"$data/perf.data" "$data/kallsyms" >"$out/$name.txt" || rc=1
cat "$out/$name.txt"
note "profile: wrote $out/$name.txt; samples and symbols in $data/"
exit $rc
