#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: kgo against its peers, in one boot of Debian's stock
# kernel under QEMU (tools/vm/run.sh: TCG, 2 vCPUs, 2 GiB here). The peers
# are Go's own scheduler (bench/go) for spawning, switching and
# ping-ponging goroutines, against kgo's in-kernel benchmark module
# (bench/kmod), and io_uring for NOPs submitted from userspace, against
# /dev/kgo (bench/uring). The VM runs tools/vm/jobs/bench.sh; its
# progress is shown here as it comes, then tools/bench/report prints the
# table. TCG makes every figure slow: the ratios are the result.
#
#   bench.sh [--runs N] [--smoke] [--icount] [--kernel K] [--only GLOB]
#            [--baseline FILE] [--timeout S]
#   bench.sh --help
#
# --runs N: runs of each benchmark, the median is shown (default 5, or 1
# with --smoke, which makes every run tiny: for make check). --icount:
# QEMU's -icount, one vCPU (see below); results in out/bench-icount/,
# logs out/logs/bench-icount.*. --kernel K: stock, Debian's 6.1, the
# default; stock-6.12: results in out/bench-6.12/, or
# out/bench-6.12-icount/; stock-7, Debian unstable's 7.x: out/bench-7/.
# --only GLOB: only the benchmark steps GLOB names (KGO_BENCH_ONLY=GLOB
# in the guest: tools/vm/jobs/bench.sh). --baseline FILE: a
# results.json or runs.jsonl to compare kgo's figures with; default: the
# previous run's, of the same kind. --timeout S: the VM's limit (default
# 3600 s, smoke 600 s).
#
# Environment, the flags' defaults: KGO_BENCH_RUNS, KGO_BENCH_SMOKE=1,
# KGO_BENCH_ICOUNT=1, KGO_BENCH_KERNEL, KGO_BENCH_ONLY (or, as before,
# KGO_BENCH_ONLY=GLOB on KGO_VM_APPEND), KGO_BENCH_BASELINE,
# KGO_VM_TIMEOUT.
#
# Writes: out/bench/runs.jsonl (every run's line), host.json (the
# host's side of the configuration: Go, liburing, QEMU), results.json
# and results.svg (see tools/bench/report), which also keeps the
# previous results.json as baseline.json and prints kgo's changes
# against it; the VM's logs are out/logs/bench.{console,results}.log.
# A smoke run (make check's) writes all of it to out/bench-smoke/ (and
# logs bench-smoke.*) instead, so that it never overwrites the last
# full run's figures, and its report is --strict: a failed run, a
# malformed line, a figure missing without a reason, or a row of
# tools/bench/rows that gave no line at all fails it. Exits non-zero if
# a benchmark failed or the VM did not finish, after reporting what it
# got.
set -euo pipefail
. "$(dirname "$0")/../vm/common.sh"

flags_parse "usage: bench.sh [OPTION...]

make bench: kgo against its peers in one VM of Debian's stock kernel; a
table, and out/bench*/results.json. The comment at the top of
tools/bench/bench.sh says more." "
--runs      KGO_BENCH_RUNS      N     runs of each benchmark, the median is shown (KGO_BENCH_RUNS; default 5, smoke 1)
--smoke     KGO_BENCH_SMOKE     -     every benchmark at tiny sizes, results in out/bench-smoke (KGO_BENCH_SMOKE=1)
--icount    KGO_BENCH_ICOUNT    -     QEMU's -icount, one vCPU: instructions, not times (KGO_BENCH_ICOUNT=1)
--kernel    KGO_BENCH_KERNEL    K     stock (the default), stock-6.12 or stock-7 (KGO_BENCH_KERNEL)
--only      KGO_BENCH_ONLY      GLOB  only the benchmark steps GLOB names (KGO_BENCH_ONLY in the guest)
--baseline  KGO_BENCH_BASELINE  FILE  a results.json or runs.jsonl to compare with (KGO_BENCH_BASELINE)
--timeout   KGO_VM_TIMEOUT      S     the VM's limit in seconds (KGO_VM_TIMEOUT; default 3600, smoke 600)
" "$@"
[ ${#KGO_ARGS[@]} = 0 ] || die "bench.sh: unexpected argument ${KGO_ARGS[0]} (bench.sh --help)"
[ -z "${KGO_BENCH_ONLY:-}" ] || guest_word --only "$KGO_BENCH_ONLY"
# Some steps alone, by --only or, as before it, KGO_BENCH_ONLY=GLOB on
# KGO_VM_APPEND: a smoke run then expects no full set of rows.
partial=${KGO_BENCH_ONLY:+1}
[[ " ${KGO_VM_APPEND:-} " != *" KGO_BENCH_ONLY="* ]] || partial=1

smoke=${KGO_BENCH_SMOKE:-0}
case "$smoke" in
0) runs=${KGO_BENCH_RUNS:-5} timeout=${KGO_VM_TIMEOUT:-3600} ;;
1) runs=${KGO_BENCH_RUNS:-1} timeout=${KGO_VM_TIMEOUT:-600} ;;
*) die "bench.sh: KGO_BENCH_SMOKE is 0 or 1, not '$smoke'" ;;
esac
[[ "$runs" =~ ^[1-9][0-9]{0,2}$ ]] || die "bench.sh: --runs (KGO_BENCH_RUNS) is a count of runs, not '$runs'"
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || die "bench.sh: --timeout (KGO_VM_TIMEOUT) is in seconds, not '$timeout'"

# Under -icount the guest's clock counts the instructions run, 1 ns each
# (shift=0), and skips idle time (sleep=off): figures that neither the
# host's speed nor its load change, nearly the same from run to run.
# QEMU 7.2 hangs the guest's SMP bring-up under -icount (README), so
# this VM has one vCPU: what needs two (tree_allp's parallelism, steals,
# cross-CPU wake-ups) is not measured there. -icount needs one TCG thread.
# --kernel: the Debian kernel the figures are taken on, stock (6.1, the
# default), stock-6.12 or stock-7; its results go to out/bench-6.12 or
# out/bench-7.
kernel=${KGO_BENCH_KERNEL:-stock}
case "$kernel" in
stock) name=bench ;;
stock-6.12) name=bench-6.12 ;;
stock-7) name=bench-7 ;;
*) die "bench.sh: --kernel (KGO_BENCH_KERNEL) is stock, stock-6.12 or stock-7, not '$kernel'" ;;
esac
icount=${KGO_BENCH_ICOUNT:-0}
case "$icount" in
0) ;;
1)
	name=$name-icount
	KGO_VM_ICOUNT=${KGO_VM_ICOUNT:-shift=0,sleep=off}
	export KGO_VM_TCG_THREAD=single
	;;
*) die "bench.sh: KGO_BENCH_ICOUNT is 0 or 1, not '$icount'" ;;
esac
[ "$smoke" = 1 ] && name=$name-smoke

start=$SECONDS
out=$KGO_OUT/$name
vm=$out/vm			# what goes to the VM's /kgo besides kgo.ko
mkdir -p "$out" "$KGO_OUT/logs"
rm -rf "$vm"
mkdir -p "$vm/bench"

# kgo, with kgo_bench.ko (bench/kmod), kgo's side of the in-kernel
# benchmarks, and the net group's servers and load generator
# (bench/net); kgo's echo server is samples/echo, which run.sh copies
# with the other samples.
"$KGO_TOP/tools/build-all.sh" --bench "$vm" --net "$kernel"

# The peers, and kgo's NOP programs beside io_uring's, with the Debian
# unstable root's Go, liburing and compiler (peer_run, common.sh).
peer_run make -s -C "$KGO_TOP/bench/go"
peer_run make -s -C "$KGO_TOP/bench/uring"
make -s -C "$KGO_TOP/bench/fair"
mkdir -p "$KGO_OUT/bin/bench"
cp "$KGO_TOP/bench/go/gobench" "$KGO_TOP/bench/uring/nop_uring" \
	"$KGO_TOP/bench/uring/nop_kgo" "$KGO_TOP/bench/uring/nop_ring" \
	"$KGO_TOP/bench/fair/fairbench" "$KGO_OUT/bin/bench/"
cp "$KGO_OUT/bin/bench/"* "$vm/bench/"

# The host's side of the configuration, which the guest cannot see: the
# peers' versions (Go's runtime is linked into gobench and go_echo,
# liburing into nop_uring) and the emulator. The guest's side is
# kgo_bench.ko's config line. The CPU model is run.sh's choice for the
# kernel (max, without CX16 after 6.1: run.sh says why).
qemu_cpu=max
case "$kernel" in stock) ;; *) qemu_cpu=max,cx16=off ;; esac
read -r go_version uring_version < <(peer_versions)
python3 - "$out/host.json" "$go_version" "$uring_version" \
	"$(qemu-system-x86_64 --version 2>/dev/null | head -n 1)" "$qemu_cpu" \
	"${KGO_VM_ICOUNT:-}" "$([ "$smoke" = 1 ] && echo single || echo "${KGO_VM_TCG_THREAD:-multi}")" \
	<<'PY'
import json, sys
path, go, uring, qemu, cpu, icount, thread = sys.argv[1:]
host = {"go": go or "unknown",
        "liburing": uring or "unknown", "qemu": qemu or "unknown", "qemu_cpu": cpu,
        "tcg": f"{thread}-threaded" + (f", -icount {icount}" if icount else "")}
with open(path, "w") as f:
    json.dump(host, f)
PY

# Figures need both vCPUs running at once (a parallel tree, cross-CPU
# wake-ups), so a full run uses QEMU's multi-threaded TCG, which
# run.sh otherwise avoids: it can hang the guest when the kernel patches
# its text, and this job does (tracepoints for handoff). Rare at the
# handful of flips a run makes, and a hang fails by the timeout. The
# smoke run of make check only shows that every benchmark works: one
# thread, as every other test VM.
[ "$smoke" = 1 ] || export KGO_VM_TCG_THREAD=${KGO_VM_TCG_THREAD:-multi}

# 2 GiB, not run.sh's 1: the net group's kthread server holds 10,000
# connections, each a kthread with its stack and task (about 59 KB a
# connection with both sockets, measured), after kgo's and Go's runs of
# the same size; in 1 GiB it ran out at about 8,700. Only max_queued,
# which fills memory, gives a larger figure for it.
export KGO_VM_MEM=${KGO_VM_MEM:-2G}

# The job's settings travel on the kernel command line (see the job),
# after KGO_VM_APPEND: they are what the report counts with.
# run.sh's own lines come after the progress, which lags behind them.
#
# tsc=reliable: the clock of a real machine. TCG's TSCs look
# unsynchronised to the kernel (QEMU derives every vCPU's from one host
# clock, so they are not), which then keeps time with the HPET, an
# emulated device: each read is an exit to QEMU under its global lock,
# for kgo, its peers and Go's vDSO alike. That inflated every figure
# that reads the clock, and let two vCPUs reading it slow each other.
# KGO_VM_APPEND=clocksource=hpet, which comes after it, undoes it.
console=$KGO_OUT/logs/$name.console.log
rm -f "$console"
vm_flags=(--kernel "$kernel" --job bench --name "$name" --timeout "$timeout"
	--append "KGO_BENCH_RUNS=$runs KGO_BENCH_SMOKE=$smoke${KGO_BENCH_ONLY:+ KGO_BENCH_ONLY=$KGO_BENCH_ONLY}")
[ "$icount" = 1 ] && vm_flags+=(--icount "$KGO_VM_ICOUNT" --smp 1)
note "bench: booting the $kernel kernel (console: $console)"
KGO_VM_EXTRA=$vm KGO_VM_APPEND="tsc=reliable ${KGO_VM_APPEND:-}" \
	"$KGO_TOP/tools/vm/run.sh" "${vm_flags[@]}" 2>"$out/run.log" &
vmpid=$!
# The job's progress lines from the console, until run.sh is done.
tail -F -n +1 --pid=$vmpid "$console" 2>/dev/null |
	sed -un -e 's/\r$//' -e '/^\[[0-9]*\/[0-9]*\] /p' -e '/^bench: /p' || true
rc=0
wait $vmpid || rc=$?
cat "$out/run.log" >&2

# Every run's line, from the result port's "output bench" section.
sed -e 's/\r$//' "$KGO_OUT/logs/$name.results.log" 2>/dev/null |
	sed -n '/^KGO-BEGIN output bench$/,/^KGO-END output bench /p' |
	grep '^{' >"$out/runs.jsonl" || true
echo
report_args=(-o "$out" --config "$out/host.json")
if [ "$smoke" = 1 ]; then
	report_args+=(--smoke --strict)
	[ -n "$partial" ] || report_args+=(--expect "$KGO_TOP/tools/bench/rows")
fi
[ "$icount" = 1 ] && report_args+=(--icount)
[ -n "${KGO_BENCH_BASELINE:-}" ] && report_args+=(--baseline "$KGO_BENCH_BASELINE")
"$KGO_TOP/tools/bench/report" "${report_args[@]}" "$out/runs.jsonl" || rc=1
if [ "$icount" = 1 ]; then
	note "$runs run(s) each$([ "$smoke" = 1 ] && echo ', smoke sizes'); one vCPU under -icount $KGO_VM_ICOUNT: figures are instructions (insn), not times; took $((SECONDS - start)) s"
else
	note "$runs run(s) each$([ "$smoke" = 1 ] && echo ', smoke sizes'); emulated (TCG): compare the ratios, not the times; took $((SECONDS - start)) s"
fi
[ $rc = 0 ] || note "bench: a benchmark or the VM failed: see $console"
exit $rc
