// SPDX-License-Identifier: GPL-2.0
/*
 * Waiters: how a goroutine or a thread blocks until exactly one of its
 * possible wake-ups (a channel operation, a select case, a timeout)
 * claims it. See struct kgo_waiter.
 *
 * A goroutine parks; its timeout timer is armed in the park's unlockf,
 * so that the timer can only fire once the goroutine is off its stack
 * and kgo_ready() is legal. A thread sleeps in TASK_UNINTERRUPTIBLE,
 * like a mutex waiter, and the same timer wakes it; or in TASK_KILLABLE
 * for the _killable calls, where a fatal signal claims the wake-up.
 */

#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>

#include <kgo.h>
#include "compat.h"
#include "api.h"
#include "check.h"
#include "g.h"
#include "m.h"
#include "waiter.h"

static enum hrtimer_restart kgo_waiter_timer_fn(struct hrtimer *t)
{
	struct kgo_waiter *w = container_of(t, struct kgo_waiter, timer);

	if (kgo_waiter_claim(w, KGO_WAIT_TIMEOUT))
		kgo_waiter_wake(w);
	return HRTIMER_NORESTART;
}

/* kgo_waiter_init() with a timeout: the timer, not armed yet. */
void kgo_waiter_init_timer(struct kgo_waiter *w)
{
	/* HARD: expires in hardirq even on PREEMPT_RT; kgo_ready() may. */
	kgo_hrtimer_setup_on_stack(&w->timer, kgo_waiter_timer_fn, CLOCK_MONOTONIC,
				   HRTIMER_MODE_REL_HARD);
}

/* kgo_waiter_destroy() with a timeout. */
void kgo_waiter_destroy_timer(struct kgo_waiter *w)
{
	hrtimer_cancel(&w->timer);
	destroy_hrtimer_on_stack(&w->timer);
}

/*
 * Wakes @w, whose wake-up the caller claimed. @w may return from
 * kgo_waiter_block() and its stack frame go at any moment after the
 * claim: read what we need first, and only touch the task under RCU,
 * as rcuwait does.
 */
void kgo_waiter_wake(struct kgo_waiter *w)
{
	kgo_waiter_wake_m(w, kgo_g_m());
}

/* kgo_waiter_wake() by a caller that has its M, @m = kgo_g_m(). */
void kgo_waiter_wake_m(struct kgo_waiter *w, struct kgo_m *m)
{
	struct task_struct *task;

	if (w->g) {
		/* Parked: a goroutine's claim is only possible after it is. */
		kgo_ready_m(m, w->g);
		return;
	}
	rcu_read_lock();
	task = READ_ONCE(w->task);
	/*
	 * Release: what the claimer wrote for the waiter (an element) is
	 * visible before it may return. Pairs with the acquire in
	 * kgo_waiter_block(). The claim alone cannot be the signal: it
	 * comes before the element is copied.
	 */
	smp_store_release(&w->woken, 1);
	wake_up_process(task);
	rcu_read_unlock();
}

struct kgo_waiter_park {
	struct kgo_waiter *w;
	void (*unlock)(void *arg);
	void *arg;
};

/*
 * Runs on the M once the goroutine is WAITING, with interrupts off (on
 * the M's stack, or on the next G's after a direct park, sched.c). The
 * timer is armed before the locks go: from the moment they do, a waker
 * may claim and ready the goroutine, which may then return and take
 * @park and @w (on its stack) with it. So everything needed from them is
 * read first, and the timer is pinned to this CPU, where it cannot fire
 * before we return (kgo_sleep() holds no lock that would hold the
 * goroutine back).
 */
static bool kgo_waiter_unlockf(struct kgo_g *g, void *arg)
{
	struct kgo_waiter_park *park = arg;
	struct kgo_waiter *w = park->w;
	void (*unlock)(void *arg) = park->unlock;
	void *unlock_arg = park->arg;

	lockdep_assert_irqs_disabled();
	if (w->timeout_ns != KGO_FOREVER)
		hrtimer_start(&w->timer, ns_to_ktime(w->timeout_ns),
			      HRTIMER_MODE_REL_PINNED_HARD);
	unlock(unlock_arg);
	return true;
}

static void kgo_nothing(void *arg)
{
}

/*
 * The park again of a goroutine readied with its waiter unclaimed: its
 * locks went at the first park and its timer runs. A claim made since
 * it woke has its kgo_ready() to come, or made already while the
 * goroutine ran, which refused it: so the goroutine goes on rather than
 * park if its waiter is claimed now. Readied meanwhile by the claimer,
 * it goes on all the same (kgo_park()). The full barrier orders the
 * status the park set before the read of the claim, against the
 * claimer's claim before its kgo_ready() reads the status.
 */
static bool kgo_waiter_repark(struct kgo_g *g, void *arg)
{
	struct kgo_waiter *w = arg;

	/* The status set by the park, before the claim is read: see above. */
	smp_mb();
	return atomic_read(&w->state) == KGO_WAIT_WAITING;
}

/**
 * kgo_waiter_block() - release the caller's locks and wait to be claimed
 * @w: the caller's waiter, already on the queues it waits on
 * @unlock: releases the locks that protect those queues; with interrupts
 *	    off, as they were taken; may be NULL if there are none
 * @arg: for @unlock
 *
 * Return: the claim: KGO_WAIT_TIMEOUT or a positive wake-up reason. The
 * caller then takes itself off any queue it is still on and calls
 * kgo_waiter_destroy().
 */
int kgo_waiter_block(struct kgo_waiter *w, void (*unlock)(void *arg), void *arg)
{
	struct kgo_waiter_park park = { w, unlock ? unlock : kgo_nothing, arg };

	if (w->g) {
		kgo_park_m(w->m, kgo_waiter_unlockf, &park, w->reason);
		/*
		 * Readied with nobody's claim: a kgo_ready() meant for an
		 * earlier park, or no park at all. The caller would take a
		 * wake-up that is not there (kgo_select() the case before its
		 * first) and leave its nodes on their queues. Go has the same
		 * contract and trusts it; kgo's header promises more: warn and
		 * wait on for the rightful claim (misuse.c's late ready).
		 */
		while (unlikely(atomic_read(&w->state) == KGO_WAIT_WAITING)) {
			WARN_ONCE(1, "kgo: goroutine %llu readied while it waits for %s, by a kgo_ready() not its own\n",
				  w->g->goid, kgo_waitreason_str(w->reason));
			kgo_park_m(kgo_g_m(), kgo_waiter_repark, w, w->reason);
		}
		return atomic_read(&w->state);
	}

	park.unlock(park.arg);
	local_irq_enable();
	if (w->timeout_ns != KGO_FOREVER)
		hrtimer_start(&w->timer, ns_to_ktime(w->timeout_ns), HRTIMER_MODE_REL_HARD);
	for (;;) {
		set_current_state(w->kill == KGO_WAITER_KILLABLE ?
				  TASK_KILLABLE : TASK_UNINTERRUPTIBLE);
		/* Acquire: pairs with the release in kgo_waiter_wake(). */
		if (smp_load_acquire(&w->woken))
			break;
		if (w->kill == KGO_WAITER_KILLABLE && fatal_signal_pending(current)) {
			if (kgo_waiter_claim(w, KGO_WAIT_TIMEOUT)) {
				w->kill = KGO_WAITER_KILLED;
				break;
			}
			/*
			 * Claimed by a waker, whose kgo_waiter_wake() is on
			 * its way: sleep for it uninterruptibly, rather than
			 * spin on a signal that keeps schedule() from sleeping.
			 */
			w->kill = 0;
			continue;
		}
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return atomic_read(&w->state);
}

static void kgo_waiter_spin_unlock(void *arg)
{
	spin_unlock(arg);
}

/**
 * kgo_waiter_wait_on() - wait on a list until kgo_waiter_dequeue() or a timeout
 * @q: the list
 * @lock: protects @q; held by the caller with interrupts off, released here
 * @timeout_ns: ns, or KGO_FOREVER
 * @reason: enum kgo_waitreason
 * @killable: a thread's wait ends with -EINTR at a fatal signal
 *
 * Return: 0 once dequeued and woken, -ETIMEDOUT or -EINTR (then off the
 * list).
 */
int kgo_waiter_wait_on(struct list_head *q, spinlock_t *lock, u64 timeout_ns,
		       u8 reason, bool killable)
{
	struct kgo_waiter w;
	struct kgo_wait_node n = { .w = &w };
	int why;

	lockdep_assert_held(lock);
	kgo_waiter_init(&w, kgo_g_m(), timeout_ns, reason, true);
	if (killable)
		kgo_waiter_killable(&w);
	list_add_tail(&n.node, q);
	why = kgo_waiter_block(&w, kgo_waiter_spin_unlock, lock);
	if (why == KGO_WAIT_TIMEOUT) {
		spin_lock_irq(lock);
		list_del_init(&n.node);
		spin_unlock_irq(lock);
	}
	kgo_waiter_destroy(&w);
	return why == KGO_WAIT_TIMEOUT ? kgo_waiter_err(&w) : 0;
}

/*
 * The first waiter on @q that nobody else claimed (a timeout may have),
 * claimed and unlinked; the caller wakes it once it dropped the lock.
 * Context: @q's lock held.
 */
struct kgo_wait_node *kgo_waiter_dequeue(struct list_head *q)
{
	struct kgo_wait_node *n;

	while ((n = list_first_entry_or_null(q, struct kgo_wait_node, node))) {
		list_del_init(&n->node);
		if (kgo_waiter_claim(n->w, 1))
			return n;
	}
	return NULL;
}

int kgo_sleep(u64 ns)
{
	struct kgo_waiter w;

	if (!kgo_may_block("kgo_sleep"))
		return -EPERM;
	if (!ns)
		return 0;
	might_sleep();
	kgo_preempt_check();
	kgo_waiter_init(&w, kgo_g_m(), ns, KGO_WAIT_REASON_SLEEP, false);
	local_irq_disable();	/* kgo_waiter_block() expects it */
	kgo_waiter_block(&w, NULL, NULL);
	kgo_waiter_destroy(&w);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kgo_sleep, KGO_NS);
