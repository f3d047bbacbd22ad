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
#include "api.h"
#include "check.h"
#include "g.h"
#include "waiter.h"

void kgo_mutex_init(struct kgo_mutex *m)
{
	spin_lock_init(&m->lock);
	m->locked = false;
	INIT_LIST_HEAD(&m->waiters);
}
EXPORT_SYMBOL_NS_GPL(kgo_mutex_init, KGO_NS);

static int __kgo_mutex_lock(struct kgo_mutex *m, u64 timeout_ns, bool killable,
			    const char *fn)
{
	unsigned long flags;
	bool got;

	if (timeout_ns == KGO_NOWAIT) {	/* trylock: any context */
		spin_lock_irqsave(&m->lock, flags);
		got = !m->locked;
		m->locked = true;
		spin_unlock_irqrestore(&m->lock, flags);
		return got ? 0 : -EAGAIN;
	}

	if (!kgo_may_block(fn))
		return -EPERM;
	might_sleep();
	kgo_preempt_check();
	spin_lock_irq(&m->lock);
	if (!m->locked) {
		m->locked = true;
		spin_unlock_irq(&m->lock);
		return 0;
	}
	/* Woken by unlock: the mutex was handed to us, still locked. */
	return kgo_waiter_wait_on(&m->waiters, &m->lock, timeout_ns,
				  KGO_WAIT_REASON_MUTEX, killable);
}

int kgo_mutex_lock_timeout(struct kgo_mutex *m, u64 timeout_ns)
{
	return __kgo_mutex_lock(m, timeout_ns, false, __func__);
}
EXPORT_SYMBOL_NS_GPL(kgo_mutex_lock_timeout, KGO_NS);

int kgo_mutex_lock_killable(struct kgo_mutex *m, u64 timeout_ns)
{
	return __kgo_mutex_lock(m, timeout_ns, true, __func__);
}
EXPORT_SYMBOL_NS_GPL(kgo_mutex_lock_killable, KGO_NS);

void kgo_mutex_unlock(struct kgo_mutex *m)
{
	struct kgo_wait_node *n;
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	WARN_ONCE(!m->locked, "kgo: unlock of an unlocked kgo_mutex\n");
	n = kgo_waiter_dequeue(&m->waiters);
	if (!n)
		m->locked = false;
	/* else handed over: it stays locked, owned by the waiter. */
	spin_unlock_irqrestore(&m->lock, flags);
	if (n)
		kgo_waiter_wake(n->w);
}
EXPORT_SYMBOL_NS_GPL(kgo_mutex_unlock, KGO_NS);

int kgo_once_do(struct kgo_once *o, void (*fn)(void *arg), void *arg)
{
	int err;

	/* Acquire: pairs with the release below; fn's effects are visible. */
	if (atomic_read_acquire(&o->done))
		return 0;
	err = kgo_mutex_lock(&o->m);
	if (err)
		return err;
	if (!atomic_read(&o->done)) {
		fn(arg);
		atomic_set_release(&o->done, 1);
	}
	kgo_mutex_unlock(&o->m);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kgo_once_do, KGO_NS);
