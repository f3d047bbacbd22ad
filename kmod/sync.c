// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_mutex and kgo_once: Go's sync.Mutex and sync.Once. A contended
 * lock parks the goroutine (or sleeps the thread) on a kgo_waiter;
 * unlock hands the mutex to the first waiter still waiting, FIFO, so a
 * waiter that gave up (timed out) is skipped and nobody barges in.
 *
 * m->lock is taken with interrupts off: trylock and unlock work in any
 * context.
 */

#include <linux/export.h>
#include <linux/list.h>
#include <linux/spinlock.h>

#include <kgo.h>
#include "waiter.h"

struct kgo_mutex_node {
	struct list_head node;	/* m->lock */
	struct kgo_waiter *w;
};

void kgo_mutex_init(struct kgo_mutex *m)
{
	spin_lock_init(&m->lock);
	m->locked = false;
	INIT_LIST_HEAD(&m->waiters);
}
EXPORT_SYMBOL_GPL(kgo_mutex_init);

static void kgo_mutex_unlock_spin(void *arg)
{
	struct kgo_mutex *m = arg;

	spin_unlock(&m->lock);
}

int kgo_mutex_lock_timeout(struct kgo_mutex *m, u64 timeout_ns)
{
	struct kgo_waiter w;
	struct kgo_mutex_node n = { .w = &w };
	unsigned long flags;
	int why;

	spin_lock_irqsave(&m->lock, flags);
	if (!m->locked) {
		m->locked = true;
		spin_unlock_irqrestore(&m->lock, flags);
		return 0;
	}
	if (timeout_ns == KGO_NOWAIT) {
		spin_unlock_irqrestore(&m->lock, flags);
		return -EAGAIN;
	}
	spin_unlock_irqrestore(&m->lock, flags);

	might_sleep();
	spin_lock_irq(&m->lock);
	if (!m->locked) {	/* released meanwhile */
		m->locked = true;
		spin_unlock_irq(&m->lock);
		return 0;
	}
	kgo_waiter_init(&w, timeout_ns);
	list_add_tail(&n.node, &m->waiters);
	why = kgo_waiter_block(&w, kgo_mutex_unlock_spin, m);
	if (why == KGO_WAIT_TIMEOUT) {
		spin_lock_irq(&m->lock);
		list_del_init(&n.node);
		spin_unlock_irq(&m->lock);
	}
	kgo_waiter_destroy(&w);
	/* Woken by unlock: the mutex was handed to us, still locked. */
	return why == KGO_WAIT_TIMEOUT ? -ETIMEDOUT : 0;
}
EXPORT_SYMBOL_GPL(kgo_mutex_lock_timeout);

void kgo_mutex_unlock(struct kgo_mutex *m)
{
	struct kgo_mutex_node *n;
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	WARN_ONCE(!m->locked, "kgo: unlock of an unlocked kgo_mutex\n");
	while ((n = list_first_entry_or_null(&m->waiters, struct kgo_mutex_node, node))) {
		list_del_init(&n->node);
		if (kgo_waiter_claim(n->w, 1)) {
			/* Handed over: stays locked, owned by the waiter. */
			spin_unlock_irqrestore(&m->lock, flags);
			kgo_waiter_wake(n->w);
			return;
		}
	}
	m->locked = false;
	spin_unlock_irqrestore(&m->lock, flags);
}
EXPORT_SYMBOL_GPL(kgo_mutex_unlock);

void kgo_once_do(struct kgo_once *o, void (*fn)(void *arg), void *arg)
{
	/* Acquire: pairs with the release below; fn's effects are visible. */
	if (atomic_read_acquire(&o->done))
		return;
	kgo_mutex_lock(&o->m);
	if (!atomic_read(&o->done)) {
		fn(arg);
		atomic_set_release(&o->done, 1);
	}
	kgo_mutex_unlock(&o->m);
}
EXPORT_SYMBOL_GPL(kgo_once_do);
