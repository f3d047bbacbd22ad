/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When a goroutine changed status, at the cost each use can bear.
 *
 * A switch changes a G's status twice, and a clock read can cost as much
 * as the rest of the switch (0.1 to 0.3 us each under emulation, where
 * reading the TSC traps). So:
 *
 *  - g->since, for debugfs's "for how long" (milliseconds do there), is
 *    jiffies: one load of a line that only the tick writes.
 *  - the runnable-to-running latency (the histogram of KGO_IOC_STATS,
 *    the kgo_g_start tracepoint) needs nanoseconds. As Go does with
 *    gTrackingPeriod, one slice in KGO_TRACKING_PERIOD of each G is
 *    tracked: only these read the clock, and only these are counted in
 *    the histogram, which is therefore a sample. While the tracepoint is
 *    on, every slice is timed; one that became runnable before it was
 *    turned on reports a latency of 0.
 */
#ifndef _KGO_GTIME_H
#define _KGO_GTIME_H

#include <linux/jiffies.h>
#include <linux/timekeeping.h>

#include "g.h"
#include "trace.h"

#define KGO_TRACKING_PERIOD	8

/* Whether @g's current slice is one of the sampled ones. */
static inline bool kgo_g_tracked(const struct kgo_g *g)
{
	return !(g->trackseq % KGO_TRACKING_PERIOD);
}

static inline bool kgo_g_timed(const struct kgo_g *g)
{
	return unlikely(kgo_g_tracked(g) || trace_kgo_g_start_enabled());
}

/* @g becomes RUNNABLE. Context: @g's owner. */
static inline void kgo_g_stamp_runnable(struct kgo_g *g)
{
	g->since = jiffies;
	g->runnable_ns = kgo_g_timed(g) ? ktime_get_mono_fast_ns() : 0;
}

/*
 * @g stopped running (the M's side of any switch back): counts the
 * slice, which decides whether the next one is tracked (one store, where
 * keeping a flag beside the count took five instructions a switch).
 * Its since is stamped by what it does next:
 * kgo_g_stamp_runnable() for a yield or preemption, the park itself.
 * Context: @g's M.
 */
static inline void kgo_g_stamp_stopped(struct kgo_g *g)
{
	g->trackseq++;
}

/* A new G: one in KGO_TRACKING_PERIOD has its first slice tracked. */
static inline void kgo_g_stamp_new(struct kgo_g *g)
{
	g->trackseq = (u8)g->goid;
	kgo_g_stamp_runnable(g);
}

#endif /* _KGO_GTIME_H */
