// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_waitgroup: Go's sync.WaitGroup, for goroutines and threads alike.
 * A waiter is a struct kgo_waiter on the waiting stack (waiter.c), so a
 * goroutine parks and a thread sleeps, and either may give up after a
 * timeout.
 *
 * A fork-join program adds and is done once per child, and waits once
 * per parent: the adds are the hot path. So the count lives in one
 * atomic word with a flag beside it, as Go packs its counter and waiter
 * count into one, and an add that leaves the count above zero, or takes
 * it to zero with nobody waiting, is one cmpxchg: no lock, and no
 * interrupts turned off (which costs more than the rest under
 * emulation).
 *
 *   state = count * KGO_WG_ONE + KGO_WG_WAITERS (0 or 1)
 *
 * KGO_WG_WAITERS says a waiter may be queued. It is set, and waiters
 * queue, only under wg->lock. An add that would take the count to zero
 * or below with the flag set does its add under the lock instead, and
 * wakes the waiters there: so a waiter either saw the count at zero
 * when it set the flag (the fetch_or returns both at once), or is on
 * the list before that add, which then finds it. The flag is cleared
 * under the lock when the waiters are woken, or by a waiter that found
 * the count at zero and nobody else queued; a waiter that timed out
 * may leave it set, which costs the next add to zero the lock, once.
 *
 * wg->lock is taken with interrupts off: kgo_wg_add() works from hardirq.
 */

#include <linux/atomic.h>
#include <linux/export.h>
#include <linux/list.h>
#include <linux/spinlock.h>

#include <kgo.h>
#include "check.h"
#include "g.h"
#include "waiter.h"

#define KGO_WG_WAITERS	1L
#define KGO_WG_ONE	2L

static inline long kgo_wg_count(long state)
{
	return state >> 1;	/* arithmetic: a count below zero stays so */
}

void kgo_wg_init(struct kgo_waitgroup *wg)
{
	spin_lock_init(&wg->lock);
	atomic_long_set(&wg->state, 0);
	INIT_LIST_HEAD(&wg->waiters);
}
EXPORT_SYMBOL_NS_GPL(kgo_wg_init, KGO_NS);

/* An add that may wake: under the lock, so no waiter queues meanwhile. */
static void kgo_wg_add_locked(struct kgo_waitgroup *wg, long delta)
{
	struct kgo_wait_node *n;
	unsigned long flags;
	long state, count;
	LIST_HEAD(wake);

	spin_lock_irqsave(&wg->lock, flags);
	/* Full barrier: the done()s before it are seen by whom it wakes. */
	state = atomic_long_add_return(delta * KGO_WG_ONE, &wg->state);
	count = kgo_wg_count(state);
	if (WARN_ONCE(count < 0, "kgo: negative WaitGroup count\n")) {
		/* Lock-free adds may land meanwhile: take back only ours. */
		atomic_long_sub(count * KGO_WG_ONE, &wg->state);
		count = 0;
	}
	if (!count) {
		while ((n = kgo_waiter_dequeue(&wg->waiters)))
			list_add_tail(&n->node, &wake);
		atomic_long_andnot(KGO_WG_WAITERS, &wg->state);
	}
	spin_unlock_irqrestore(&wg->lock, flags);

	/* Unlink before waking: the node is on the woken one's stack. */
	while ((n = list_first_entry_or_null(&wake, struct kgo_wait_node, node))) {
		list_del_init(&n->node);
		kgo_waiter_wake(n->w);
	}
}

void kgo_wg_add(struct kgo_waitgroup *wg, long delta)
{
	long state = atomic_long_read(&wg->state);

	do {
		long count = kgo_wg_count(state) + delta;

		if (count < 0 || (count == 0 && (state & KGO_WG_WAITERS))) {
			kgo_wg_add_locked(wg, delta);
			return;
		}
		/* Full barrier on success, as the locked add's. */
	} while (!atomic_long_try_cmpxchg(&wg->state, &state,
					  state + delta * KGO_WG_ONE));
}
EXPORT_SYMBOL_NS_GPL(kgo_wg_add, KGO_NS);

void kgo_wg_done_and_exit(struct kgo_waitgroup *wg)
{
	kgo_wg_done(wg);
	kgo_exit();	/* returns only outside a goroutine, with a WARN */
}
EXPORT_SYMBOL_NS_GPL(kgo_wg_done_and_exit, KGO_NS);

static int __kgo_wg_wait(struct kgo_waitgroup *wg, u64 timeout_ns, bool killable,
			 const char *fn)
{
	long state;

	/* Acquire: pairs with the adds' full barriers. */
	if (!kgo_wg_count(atomic_long_read_acquire(&wg->state)))
		return 0;
	if (timeout_ns == KGO_NOWAIT)	/* any context */
		return -EAGAIN;
	if (!kgo_may_block(fn))
		return -EPERM;
	might_sleep();
	spin_lock_irq(&wg->lock);
	/* Full barrier: the count read is the one at the flag's setting. */
	state = atomic_long_fetch_or(KGO_WG_WAITERS, &wg->state);
	if (!kgo_wg_count(state)) {
		if (list_empty(&wg->waiters))
			atomic_long_andnot(KGO_WG_WAITERS, &wg->state);
		spin_unlock_irq(&wg->lock);
		return 0;
	}
	return kgo_waiter_wait_on(&wg->waiters, &wg->lock, timeout_ns,
				  KGO_WAIT_REASON_WAITGROUP, killable);
}

int kgo_wg_wait_timeout(struct kgo_waitgroup *wg, u64 timeout_ns)
{
	return __kgo_wg_wait(wg, timeout_ns, false, __func__);
}
EXPORT_SYMBOL_NS_GPL(kgo_wg_wait_timeout, KGO_NS);

int kgo_wg_wait_killable(struct kgo_waitgroup *wg, u64 timeout_ns)
{
	return __kgo_wg_wait(wg, timeout_ns, true, __func__);
}
EXPORT_SYMBOL_NS_GPL(kgo_wg_wait_killable, KGO_NS);
