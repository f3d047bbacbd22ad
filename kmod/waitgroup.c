// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_waitgroup: Go's sync.WaitGroup, for goroutines and threads alike.
 * A waiter is a struct kgo_waiter on the waiting stack (waiter.c), so a
 * goroutine parks and a thread sleeps, and either may give up after a
 * timeout.
 *
 * wg->lock is taken with interrupts off: kgo_wg_add() works from hardirq.
 */

#include <linux/export.h>
#include <linux/list.h>
#include <linux/spinlock.h>

#include <kgo.h>
#include "check.h"
#include "g.h"
#include "waiter.h"

void kgo_wg_init(struct kgo_waitgroup *wg)
{
	spin_lock_init(&wg->lock);
	wg->count = 0;
	INIT_LIST_HEAD(&wg->waiters);
}
EXPORT_SYMBOL_GPL(kgo_wg_init);

void kgo_wg_add(struct kgo_waitgroup *wg, long delta)
{
	struct kgo_wait_node *n;
	unsigned long flags;
	LIST_HEAD(wake);

	spin_lock_irqsave(&wg->lock, flags);
	wg->count += delta;
	if (WARN_ONCE(wg->count < 0, "kgo: negative WaitGroup count\n"))
		wg->count = 0;
	if (!wg->count)
		while ((n = kgo_waiter_dequeue(&wg->waiters)))
			list_add_tail(&n->node, &wake);
	spin_unlock_irqrestore(&wg->lock, flags);

	/* Unlink before waking: the node is on the woken one's stack. */
	while ((n = list_first_entry_or_null(&wake, struct kgo_wait_node, node))) {
		list_del_init(&n->node);
		kgo_waiter_wake(n->w);
	}
}
EXPORT_SYMBOL_GPL(kgo_wg_add);

void kgo_wg_done_and_exit(struct kgo_waitgroup *wg)
{
	kgo_wg_done(wg);
	kgo_exit();	/* returns only outside a goroutine, with a WARN */
}
EXPORT_SYMBOL_GPL(kgo_wg_done_and_exit);

int kgo_wg_wait_timeout(struct kgo_waitgroup *wg, u64 timeout_ns)
{
	unsigned long flags;
	long count;

	if (timeout_ns == KGO_NOWAIT) {	/* any context */
		spin_lock_irqsave(&wg->lock, flags);
		count = wg->count;
		spin_unlock_irqrestore(&wg->lock, flags);
		return count ? -EAGAIN : 0;
	}
	if (!kgo_may_block("kgo_wg_wait_timeout"))
		return -EPERM;
	spin_lock_irq(&wg->lock);
	if (!wg->count) {
		spin_unlock_irq(&wg->lock);
		return 0;
	}
	return kgo_waiter_wait_on(&wg->waiters, &wg->lock, timeout_ns,
				  KGO_WAIT_REASON_WAITGROUP);
}
EXPORT_SYMBOL_GPL(kgo_wg_wait_timeout);
