// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU event counters (count.h): the events that cost more the more
 * CPUs there are, for debugfs and the benchmarks to read.
 */

#include <linux/cpumask.h>
#include <linux/export.h>
#include <linux/percpu.h>

#include <kgo.h>

#include "count.h"

DEFINE_PER_CPU(struct kgo_pcpu_counts, kgo_pcpu_counts);

/*
 * Offline CPUs included: what they counted before they went away is
 * still part of the total, and the total never goes back.
 */
u64 kgo_count_sum(enum kgo_count_event ev)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu(kgo_pcpu_counts, cpu).ev[ev]);
	return sum;
}

/**
 * kgo_counts_read() - the scheduler's costly events so far
 * @c: filled with the totals since kgo was loaded
 *
 * For a benchmark: read before and after a batch of operations, the
 * differences over the batch's size are counts per operation. The
 * totals are of the whole machine, so the batch should run alone.
 *
 * Context: any.
 */
void kgo_counts_read(struct kgo_counts *c)
{
	c->sched_lock = kgo_count_sum(KGO_COUNT_SCHED_LOCK);
	c->shared_rmw = kgo_count_sum(KGO_COUNT_SHARED_RMW);
	c->xcpu_wake = kgo_count_sum(KGO_COUNT_XCPU_WAKE);
}
EXPORT_SYMBOL_GPL(kgo_counts_read);
