// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_waitgroup: Go's sync.WaitGroup for goroutines and for plain
 * kernel threads alike. Goroutines wait on a list of waiters that live
 * on their own (parked) stacks; other threads wait on a wait queue.
 *
 * wg->lock is taken with interrupts off, so that kgo_wg_add() works
 * from hardirq. A goroutine parks holding it, and its M releases it in
 * kgo_wg_unlock() once the goroutine is off its stack (kgo_park()).
 */

#include <linux/export.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include <kgo.h>

/* On the stack of a goroutine in kgo_wg_wait(). */
struct kgo_wg_waiter {
	struct list_head node;	/* wg->lock */
	struct kgo_g *g;
};

void kgo_wg_init(struct kgo_waitgroup *wg)
{
	spin_lock_init(&wg->lock);
	wg->count = 0;
	INIT_LIST_HEAD(&wg->waiters);
	init_waitqueue_head(&wg->wq);
}
EXPORT_SYMBOL_GPL(kgo_wg_init);

void kgo_wg_add(struct kgo_waitgroup *wg, long delta)
{
	struct kgo_wg_waiter *w, *tmp;
	unsigned long flags;
	LIST_HEAD(wake);
	bool zero;

	spin_lock_irqsave(&wg->lock, flags);
	wg->count += delta;
	if (WARN_ONCE(wg->count < 0, "kgo: negative WaitGroup count\n"))
		wg->count = 0;
	zero = wg->count == 0;
	if (zero)
		list_splice_init(&wg->waiters, &wake);
	spin_unlock_irqrestore(&wg->lock, flags);
	if (!zero)
		return;

	/*
	 * A waiter is on its goroutine's stack: read what we need before
	 * kgo_ready(), after which the goroutine may run and return.
	 */
	list_for_each_entry_safe(w, tmp, &wake, node)
		kgo_ready(w->g);
	wake_up_all(&wg->wq);
}
EXPORT_SYMBOL_GPL(kgo_wg_add);

static bool kgo_wg_unlock(struct kgo_g *g, void *arg)
{
	struct kgo_waitgroup *wg = arg;

	spin_unlock_irq(&wg->lock);
	return true;
}

static bool kgo_wg_zero(struct kgo_waitgroup *wg)
{
	unsigned long flags;
	bool zero;

	spin_lock_irqsave(&wg->lock, flags);
	zero = wg->count == 0;
	spin_unlock_irqrestore(&wg->lock, flags);
	return zero;
}

void kgo_wg_wait(struct kgo_waitgroup *wg)
{
	struct kgo_wg_waiter w = { .g = kgo_self() };

	if (!w.g) {
		might_sleep();
		wait_event(wg->wq, kgo_wg_zero(wg));
		return;
	}
	spin_lock_irq(&wg->lock);
	if (wg->count == 0) {
		spin_unlock_irq(&wg->lock);
		return;
	}
	list_add_tail(&w.node, &wg->waiters);
	kgo_park(kgo_wg_unlock, wg);
}
EXPORT_SYMBOL_GPL(kgo_wg_wait);
