/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_LOCKING_H
#define _KGO_LOCKING_H

/*
 * The one legend of kgo's field rules, after kernel/workqueue.c's: every
 * struct's fields carry one of these tags, and each tag means the same
 * rule in every file.
 *
 *   I: set at init or creation, read-only while the object lives
 *   A: atomic, or written with WRITE_ONCE() and read racily where the
 *      field's comment says so ("racy")
 *   O: only the owner: a G's, as g.h's state rules say; a P's, the M
 *      holding it; an M's, its own kthread; a job's, its goroutine until
 *      it completes the job
 *   L: under kgo_sched.lock (sched.h), irq-safe, raw (see below),
 *      taken only through kgo_sched_lock_irq*(), which count each
 *      acquisition (count.h)
 *   P: under p->stack_lock (proc.h)
 *   X: an M's relieved flag: set under L by the M that takes its P
 *      (kgo_hog_takeover()), cleared by the M under affinity_lock and L
 *   S: under session->lock (session.h)
 *   R: under ring->submit_lock (ring.h)
 *   W: under ring->wait_lock (ring.h)
 *   U: in a ring's shared pages, written by userspace
 *   K: in a ring's shared pages, written by the kernel only
 *   C: under chan->lock (chan.c), irq-safe where it does not sleep
 *   F: under feed->lock (feed.h), a leaf
 *
 * The order in which the locks nest is sched.c's essay's ("Lock order").
 * A field without a tag, or under a lock of its own, says so beside it.
 *
 * PREEMPT_RT, where a spinlock_t is a sleeping lock: L's lock is the one
 * raw_spinlock_t, as it is taken from a HARD hrtimer, the sched_in
 * preempt notifier and with preemption off; its sections stay short
 * and bounded (sched.c, "Lock order"). Every other lock here is a
 * spinlock_t or a mutex and sleeps on RT, C's, a WaitGroup's, a
 * kgo_mutex's and a context's included: none is taken under L, and
 * none with interrupts off, which is what the helpers below are for.
 * The API's "any context, hardirq included" of the calls that take them
 * means on RT threaded handlers and spinlock_t sections (README,
 * "PREEMPT_RT").
 */

#include <linux/irqflags.h>
#include <linux/kconfig.h>

/*
 * kgo_lock_irq_disable(), kgo_lock_irq_enable(), kgo_lock_irq_save(),
 * kgo_lock_irq_restore() - interrupts off around spinlock_t sections,
 * as spin_lock_irq() puts them
 *
 * For the paths that take several spinlock_t's (a select's channels, a
 * context chain) or do more than lock with interrupts off, one
 * local_irq_disable() and plain spin_lock()s. On PREEMPT_RT a spinlock_t
 * sleeps, and spin_lock_irq() leaves interrupts on there: so do these,
 * as taking a sleeping lock with interrupts off is a bug. Only the
 * switch of a park needs them off, and kgo_park_m() turns them off
 * itself; a parking goroutine's unlockf then releases its spinlock_t's
 * with interrupts off, which RT allows (an unlock never sleeps).
 */
static __always_inline void kgo_lock_irq_disable(void)
{
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		local_irq_disable();
}

static __always_inline void kgo_lock_irq_enable(void)
{
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		local_irq_enable();
}

static __always_inline unsigned long kgo_lock_irq_save(void)
{
	unsigned long flags = 0;

	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		local_irq_save(flags);
	return flags;
}

static __always_inline void kgo_lock_irq_restore(unsigned long flags)
{
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		local_irq_restore(flags);
}

#endif /* _KGO_LOCKING_H */
