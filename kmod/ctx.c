// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts: the cancel half of Go's context package, for goroutines and
 * threads alike. A task's goroutines stop when its fd closes, a kernel
 * caller stops the work it handed out, in the same way.
 *
 * Go cancels a tree of contexts by walking down it: each child
 * registers with its parent. Here a child costs nothing until it
 * sleeps, because tasks make one per submission on the hot path:
 *
 *  - kgo_ctx_init() only links the child to its parent; nobody takes a
 *    lock, and a child is never unregistered.
 *  - kgo_ctx_err() walks up the chain (at most KGO_CTX_DEPTH_MAX loads),
 *    so a cancelled ancestor is seen at the next check.
 *  - A sleeper puts its waiter on the wait list of every context of its
 *    chain, so that whichever of them is cancelled wakes it. The chain
 *    is short, so the nodes live on the sleeper's stack.
 *
 * Lock rules. ctx->lock guards ctx->waiters and the 0 -> cause step of
 * ctx->err, and is taken with interrupts off (kgo_ctx_cancel() runs from
 * any context). A canceller holds one lock. A sleeper holds its whole
 * chain while it checks for cancellation and queues itself, then
 * releases it only once parked (kgo_waiter_block()), as a select holds
 * its channels: a canceller that finds it on a list may ready it at
 * once. The sleeper takes the locks from the context it sleeps on up to
 * the root, with lockdep subclass = distance from its context, and a
 * canceller never holds two: no cycle. A canceller may hold locks of its
 * own around kgo_ctx_cancel() (session.c holds session->lock): ctx->lock
 * and the scheduler's locks it ends in come after them.
 *
 * A cancel takes the sleepers off in batches (KGO_CTX_CANCEL_BATCH),
 * dropping the lock in between: once err is set nobody joins the list.
 * kgo_ctx_cancel() never sleeps, not even between batches: its caller
 * may hold a spinlock, which a kernel without CONFIG_PREEMPT_COUNT
 * cannot see. Only kgo_ctx_cancel_sleepable(), for a caller that holds
 * none, yields the CPU between batches.
 *
 * ctx->err is written once, under ctx->lock, and read locklessly; the
 * lock orders it against a sleeper's check, and READ_ONCE()/WRITE_ONCE()
 * are enough for a polling loop, which only needs to see it eventually.
 *
 * PREEMPT_RT: ctx->lock is a spinlock_t, which sleeps there. The
 * sleeper takes its chain with interrupts left on (kgo_lock_irq_disable()
 * in locking.h), as spin_lock_irq() leaves them on RT, and releases it
 * from its park's unlockf with interrupts off, which RT allows. "Any
 * context" for kgo_ctx_cancel() means on RT what it means for the
 * kernel's spinlock_t users: threaded handlers and spinlock_t sections,
 * not hard interrupt context or a raw spinlock.
 */

#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/sched.h>
#include <kunit/visibility.h>

#include <kgo.h>
#include "check.h"
#include "ctx.h"
#include "g.h"
#include "locking.h"
#include "m.h"
#include "sched.h"
#include "waiter.h"

int kgo_ctx_init(struct kgo_ctx *ctx, struct kgo_ctx *parent)
{
	struct kgo_ctx *p;
	int depth = 1;

	ctx->err = 0;
	ctx->parent = NULL;
	spin_lock_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->waiters);
	for (p = parent; p; p = p->parent)
		if (++depth > KGO_CTX_DEPTH_MAX)
			return -EINVAL;
	ctx->parent = parent;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kgo_ctx_init, KGO_NS);

int kgo_ctx_err(const struct kgo_ctx *ctx)
{
	int err;

	for (; ctx; ctx = ctx->parent) {
		err = READ_ONCE(ctx->err);
		if (err)
			return err;
	}
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kgo_ctx_err, KGO_NS);

/*
 * Sleepers a canceller takes off ctx->waiters per hold of ctx->lock. A
 * session's context has one per sleeping task of the fd (up to
 * max_inflight): one walk would keep interrupts off for all of them.
 */
#define KGO_CTX_CANCEL_BATCH	64

/*
 * @may_sleep: the caller holds no lock and may be rescheduled between
 * batches. Only a caller that knows it says so: without
 * CONFIG_PREEMPT_COUNT nothing can tell a spinlock's holder (session.c
 * cancels a job under session->lock), and kgo_in_atomic() would let
 * cond_resched() switch it out with the lock held.
 */
bool __kgo_ctx_cancel(struct kgo_ctx *ctx, int err, bool may_sleep)
{
	struct kgo_wait_node *n;
	unsigned long flags;
	LIST_HEAD(wake);
	int i;

	if (WARN_ONCE(err >= 0 || err < -MAX_ERRNO,
		      "kgo: %s() with cause %d, not an errno\n", __func__, err))
		err = -ECANCELED;
	spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->err) {
		spin_unlock_irqrestore(&ctx->lock, flags);
		return false;
	}
	WRITE_ONCE(ctx->err, err);
	/*
	 * From here no sleeper joins the list (each checks err under the
	 * lock before it queues), so it only shrinks: take it a batch at a
	 * time, with interrupts on in between. Claimed nodes stay ours
	 * until we wake their waiters, who cannot return before that: they
	 * may go on our own list meanwhile.
	 */
	for (;;) {
		n = NULL;
		for (i = 0; i < KGO_CTX_CANCEL_BATCH; i++) {
			n = kgo_waiter_dequeue(&ctx->waiters);
			if (!n)
				break;
			list_add_tail(&n->node, &wake);
		}
		spin_unlock_irqrestore(&ctx->lock, flags);

		/* Unlink before waking: the node is on the woken one's stack. */
		while ((n = list_first_entry_or_null(&wake, struct kgo_wait_node, node))) {
			list_del_init(&n->node);
			kgo_waiter_wake(n->w);
		}
		if (i < KGO_CTX_CANCEL_BATCH)
			return true;
		if (may_sleep)
			cond_resched();
		spin_lock_irqsave(&ctx->lock, flags);
	}
}

/* Never sleeps: callable under the caller's spinlock, and in hardirq. */
bool kgo_ctx_cancel(struct kgo_ctx *ctx, int err)
{
	return __kgo_ctx_cancel(ctx, err, false);
}
EXPORT_SYMBOL_NS_GPL(kgo_ctx_cancel, KGO_NS);

/*
 * kgo_ctx_cancel() by a caller that holds no lock and may sleep, with
 * many sleepers to wake (a session's close): rescheduled between
 * batches.
 */
bool kgo_ctx_cancel_sleepable(struct kgo_ctx *ctx, int err)
{
	might_sleep();
	return __kgo_ctx_cancel(ctx, err, true);
}

/* A sleeper's hold on its chain. */
struct kgo_ctx_chain {
	struct kgo_ctx *ctx[KGO_CTX_DEPTH_MAX];
	struct kgo_wait_node node[KGO_CTX_DEPTH_MAX];
	int n;
};

/* Releases the chain's locks; interrupts stay off. */
static void kgo_ctx_chain_unlock(void *arg)
{
	struct kgo_ctx_chain *ch = arg;
	int i;

	for (i = ch->n - 1; i >= 0; i--)
		spin_unlock(&ch->ctx[i]->lock);
}

/*
 * Sleeps on @ctx's chain for @ns. @park: a goroutine parks (its M runs
 * others); else the thread sleeps, as a goroutine blocked in the kernel
 * does (its P is handed off).
 */
int __kgo_ctx_sleep(struct kgo_ctx *ctx, u64 ns, bool park)
{
	struct kgo_ctx_chain ch;
	struct kgo_waiter w;
	struct kgo_ctx *c;
	int err, i;

	if (!kgo_may_block(park ? "kgo_ctx_sleep" : "kgo_ctx_sleep_blocking"))
		return -EPERM;
	might_sleep();
	if (!ns)
		return kgo_ctx_err(ctx);
	/* Without park the thread itself sleeps, goroutine or not. */
	kgo_waiter_init(&w, park ? kgo_preempt_check_m(kgo_g_m()) : NULL, ns,
			KGO_WAIT_REASON_SLEEP, false);

	ch.n = 0;
	kgo_lock_irq_disable();
	for (c = ctx; c; c = c->parent) {
		spin_lock_nested(&c->lock, ch.n);
		ch.ctx[ch.n++] = c;
	}
	for (i = 0; i < ch.n; i++) {
		if (ch.ctx[i]->err) {
			err = ch.ctx[i]->err;
			kgo_ctx_chain_unlock(&ch);
			kgo_lock_irq_enable();
			kgo_waiter_destroy(&w);
			return err;
		}
	}
	for (i = 0; i < ch.n; i++) {
		ch.node[i].w = &w;
		list_add_tail(&ch.node[i].node, &ch.ctx[i]->waiters);
	}
	kgo_waiter_block(&w, kgo_ctx_chain_unlock, &ch);

	/* Off the lists a canceller did not take us from. */
	for (i = 0; i < ch.n; i++) {
		spin_lock_irq(&ch.ctx[i]->lock);
		list_del_init(&ch.node[i].node);
		spin_unlock_irq(&ch.ctx[i]->lock);
	}
	err = atomic_read(&w.state) == KGO_WAIT_TIMEOUT ? 0 : kgo_ctx_err(ctx);
	kgo_waiter_destroy(&w);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(__kgo_ctx_sleep);

int kgo_ctx_sleep(struct kgo_ctx *ctx, u64 ns)
{
	return __kgo_ctx_sleep(ctx, ns, true);
}
EXPORT_SYMBOL_NS_GPL(kgo_ctx_sleep, KGO_NS);
