/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_COUNT_H
#define _KGO_COUNT_H

#include <linux/percpu.h>
#include <linux/types.h>

/*
 * Events whose cost grows with the CPUs: each moves a cache line that
 * other CPUs write, or sends an IPI. They are counted to be driven to
 * zero on the hot paths (issue 45), and read around a batch of
 * operations as counts per operation (kgo_counts_read(), the bench's
 * "counts" workload, debugfs's counts).
 *
 * Always on: a count is this_cpu_inc() of a line only its own CPU
 * writes, one instruction on x86 (an add to a %gs-relative address,
 * neither locked nor a barrier), where every event it counts costs a
 * transfer of a contended line (100s of cycles) or an IPI. Not atomic
 * against other CPUs, and need not be: each CPU writes only its own,
 * and a reader sums a snapshot that may lag by an event in flight.
 */
enum kgo_count_event {
	KGO_COUNT_SCHED_LOCK,	/* sched.lock taken (kgo_sched_lock_*) */
	KGO_COUNT_SHARED_RMW,	/* an atomic RMW of scheduler-global state */
	KGO_COUNT_XCPU_WAKE,	/* an M woken from another CPU than its own */
	KGO_NR_COUNT_EVENTS
};

/*
 * One CPU's counters, written by that CPU only (A: this_cpu_*()), read
 * racily by anyone summing them.
 */
struct kgo_pcpu_counts {
	u64 ev[KGO_NR_COUNT_EVENTS];
};

DECLARE_PER_CPU(struct kgo_pcpu_counts, kgo_pcpu_counts);

/* Context: any; preemption and interrupts may be on. */
static __always_inline void kgo_count(enum kgo_count_event ev)
{
	this_cpu_inc(kgo_pcpu_counts.ev[ev]);
}

/* The sum over possible CPUs of one counter. Context: any. */
u64 kgo_count_sum(enum kgo_count_event ev);

#endif /* _KGO_COUNT_H */
