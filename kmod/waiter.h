/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_WAITER_H
#define _KGO_WAITER_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/sched.h>
#include <linux/types.h>

#include <kgo.h>
#include "m.h"

struct kgo_g;

/* A waiter's state: 0 while waiting; a claim moves it off 0 once. */
#define KGO_WAIT_WAITING	0
#define KGO_WAIT_TIMEOUT	(-1)
/* Claims by a wake-up are positive: 1 + the index of what woke it. */

/*
 * A thread that waits killable (kgo_waiter_killable()) and gets a fatal
 * signal claims its own wake-up as a timeout would, so that every
 * caller's timeout path takes it off its queues; kill tells the two
 * apart afterwards (kgo_waiter_err()). Goroutines receive no signals.
 */
#define KGO_WAITER_KILLABLE	1
#define KGO_WAITER_KILLED	2

/*
 * A goroutine or a thread blocked on something (Go's sudog, less the
 * queue links, which the user of a waiter keeps: one waiter may be on
 * several queues at once, as in select). Lives on the waiter's stack.
 *
 * Whoever moves @state off 0 with kgo_waiter_claim() owns the wake-up
 * and must call kgo_waiter_wake(); everyone else leaves the waiter
 * alone. So a timeout, and each case of a select, race with one
 * cmpxchg, and exactly one wins.
 */
struct kgo_waiter {
	struct kgo_g *g;		/* the goroutine, or NULL */
	struct kgo_m *m;		/* its M from init to its park; stale after */
	struct task_struct *task;	/* the thread, when not a goroutine */
	atomic_t state;
	/*
	 * Every claimer holds one lock: the waiter is on one queue and has
	 * no timer. kgo_waiter_claim() is then a plain read and store.
	 */
	bool single;
	int woken;			/* a thread may return: see kgo_waiter_wake() */
	u64 timeout_ns;			/* KGO_FOREVER: none */
	u8 reason;			/* enum kgo_waitreason */
	u8 kill;			/* a thread's: KGO_WAITER_KILLABLE, _KILLED */
	struct hrtimer timer;		/* only with a timeout */
};

/*
 * The common case: one waiter on one list, under a spinlock taken with
 * interrupts off (the WaitGroup, the mutex). Channels keep their own
 * node, which carries the element too.
 */
struct kgo_wait_node {
	struct list_head node;		/* the list's lock */
	struct kgo_waiter *w;
};

int kgo_waiter_wait_on(struct list_head *q, spinlock_t *lock, u64 timeout_ns,
		       u8 reason, bool killable);
struct kgo_wait_node *kgo_waiter_dequeue(struct list_head *q);

void kgo_waiter_init_timer(struct kgo_waiter *w);
void kgo_waiter_destroy_timer(struct kgo_waiter *w);

/**
 * kgo_waiter_init() - prepare the caller to wait
 * @w: on the caller's stack
 * @m: the caller's M, kgo_g_m(): NULL for a thread
 * @timeout_ns: give up after this long; KGO_FOREVER never
 * @reason: what it waits for (enum kgo_waitreason), for debugfs
 * @one_queue: it will wait on one queue, whose lock every waker holds
 *
 * Inline up to the timer, as kgo_waiter_destroy() is: a channel
 * operation that blocks makes both, mostly without a timeout.
 */
static inline void kgo_waiter_init(struct kgo_waiter *w, struct kgo_m *m,
				   u64 timeout_ns, u8 reason, bool one_queue)
{
	w->reason = reason;
	w->m = m;
	w->g = m ? m->curg : NULL;
	w->task = current;
	atomic_set(&w->state, KGO_WAIT_WAITING);
	w->single = one_queue && timeout_ns == KGO_FOREVER;
	w->woken = 0;
	w->kill = 0;
	w->timeout_ns = timeout_ns;
	/* Without a timeout, no timer: the common case stays cheap. */
	if (timeout_ns != KGO_FOREVER)
		kgo_waiter_init_timer(w);
}

/*
 * Makes a thread's wait killable, after kgo_waiter_init(). Its claim
 * then races a signal, so it is never single: claims need the cmpxchg.
 */
static inline void kgo_waiter_killable(struct kgo_waiter *w)
{
	if (!w->g) {
		w->kill = KGO_WAITER_KILLABLE;
		w->single = false;
	}
}

/* The error of a wait claimed as KGO_WAIT_TIMEOUT: a fatal signal's or the timer's. */
static inline int kgo_waiter_err(const struct kgo_waiter *w)
{
	return w->kill == KGO_WAITER_KILLED ? -EINTR : -ETIMEDOUT;
}

/* Context: the waiter itself, once it is no longer on any queue. */
static inline void kgo_waiter_destroy(struct kgo_waiter *w)
{
	if (w->timeout_ns != KGO_FOREVER)
		kgo_waiter_destroy_timer(w);
}

/*
 * Claims the wake-up of @w for @why. Context: any; for a single waiter,
 * under the lock of its queue. Inline: a channel hand-off makes it.
 */
static inline bool kgo_waiter_claim(struct kgo_waiter *w, int why)
{
	/*
	 * No other claimer can race us: no timer, and every other queue's
	 * waker would hold the lock we hold. No atomic needed, as for a
	 * plain channel operation in Go; the woken waiter reads the state
	 * after its kgo_ready() (a full barrier) or woken's release.
	 */
	if (w->single) {
		if (atomic_read(&w->state) != KGO_WAIT_WAITING)
			return false;
		atomic_set(&w->state, why);
		return true;
	}
	return atomic_cmpxchg(&w->state, KGO_WAIT_WAITING, why) == KGO_WAIT_WAITING;
}

void kgo_waiter_wake(struct kgo_waiter *w);
void kgo_waiter_wake_m(struct kgo_waiter *w, struct kgo_m *m);
int kgo_waiter_block(struct kgo_waiter *w, void (*unlock)(void *arg), void *arg);

#endif /* _KGO_WAITER_H */
