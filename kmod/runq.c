// SPDX-License-Identifier: GPL-2.0
/*
 * Run queues: each P's lock-free ring with its runnext slot, and the
 * global queue under sched->lock. This is Go's runqput/runqget/
 * runqgrab/runqsteal/runqputslow protocol (runtime/proc.go):
 *
 *  - Only the P's owner produces: it writes slots at runqtail and
 *    publishes them with a store-release of runqtail.
 *  - Any number of consumers (the owner in runqget, thieves in
 *    runqgrab, the owner in runqputslow) claim slots [head, head+n) by
 *    a cmpxchg of runqhead, having read the slots first: once the
 *    claim succeeds the owner may overwrite them.
 *  - runnext is one slot the owner fills and anyone empties with a
 *    cmpxchg to NULL. Thieves take it only on their last pass, and
 *    only after giving a running owner a moment to take it itself.
 *
 * Indices are free-running u32s; the ring size is a power of two, so
 * "tail - head" is the length even across wrap-around.
 *
 * The fresh stack: newest first, for Gs that never ran
 *
 * Go sends a G kicked out of runnext to the ring's tail. For a spawn
 * tree that order is breadth first: a node spawns two children, the
 * second takes runnext and the first waits at the tail; when a leaf
 * ends, the ring's head is the first child of the shallowest node that
 * has one waiting, the largest subtree left. Every node started holds
 * a kernel stack (16 KiB, where Go's start at 2 KiB) until its subtree
 * is done, and a model of one P has 48,000 of them live at once for a
 * tree of 2^20 nodes: 780 MB. Depth first, the same tree holds a stack
 * per level.
 *
 * So a G that has never run (it holds no stack) and is kicked out of
 * runnext goes on a small stack of the P's own instead of the ring, and
 * the P runs the newest of those first: depth first, as Cilk's and
 * Rayon's workers run their own spawns. A G in the ring that ran before
 * (a yield, a wake-up kicked out of runnext) and the newest fresh G take
 * turns in the order they were queued: the ring's head runs first if it
 * was queued before the fresh one was pushed (its ticket, the ring's
 * tail then). So a G readied by a wake-up never waits behind a subtree
 * spawned after it, nor a fresh G behind one that keeps yielding. A G
 * in the ring that never ran (published, spilled or stolen from a fresh
 * stack) waits until the fresh stack is empty: a thief runs what it
 * stole depth first too, one subtree at a time.
 *
 * The fresh stack is the owner's alone: no atomics, no lock. Thieves
 * cannot see it. So while a P is idle or an M spins, each push, and each
 * schedule, moves the older half (rounded up) to the ring, where they
 * look (kgo_fresh_publish()): they get the oldest Gs, the largest
 * subtrees, as Cilk's thieves do, and a lone kicked G goes to the ring
 * at once, as in Go. Before a P goes idle its owner has emptied it.
 * A first version sent every kicked G to the ring while anyone spun;
 * a spawn tree on two Ps then spread breadth first again, and at
 * 2^20 nodes failed its spawns at the memory budget. Whoever takes a P
 * from its M (a handoff, a hog's relief, a P going offline) takes the
 * stack with it, as it takes the ring; so "does this P have work" (kgo_runqempty_all()) counts it,
 * while "is there anything to steal" (kgo_runqempty()) does not.
 *
 * Newest first can starve the oldest while newer ones keep coming, and
 * the ring's Gs that never ran with them. The monitor bounds that: if
 * neither the ring's head nor the oldest fresh G moved for ten slices,
 * the ring's head runs next, or else that oldest one (p->fresh_aged).
 * A full stack sends its older half to the ring. Without preempt
 * notifiers a P stays with an M that sleeps in the kernel, and only
 * thieves can help it, so there the stack is not used.
 *
 * PREEMPT_RT: the owner's side is lock-free, often with preemption off
 * (a G pins its P); only an overflow takes sched.lock, raw on RT, for a
 * batch of half a ring plus one.
 */

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/spinlock.h>
#include <kunit/visibility.h>

#include "g.h"
#include "proc.h"
#include "runq.h"

/* How long a thief lets a running owner get to its runnext, at most. */
#define KGO_RUNNEXT_GRACE_US	50
#include "sched.h"
#include "trace.h"

static_assert((KGO_RUNQ_SIZE & (KGO_RUNQ_SIZE - 1)) == 0);

#define RUNQ_SLOT(i)	((i) & (KGO_RUNQ_SIZE - 1))
#define FRESH_SLOT(i)	((i) & (KGO_FRESH_SIZE - 1))
static_assert((KGO_FRESH_SIZE & (KGO_FRESH_SIZE - 1)) == 0);

/*
 * The owner moves half of its full ring, plus @g, to the global queue.
 * Returns false if a consumer moved runqhead meanwhile; the caller
 * retries its put, which may now fit.
 *
 * Go reads the batch before its CAS like a thief does. The owner need
 * not: only the owner writes slots, so after its claim succeeds the
 * claimed slots stay as they are until it writes them again itself.
 * That lets us link the batch through schedlink instead of copying it
 * to a 129-entry array on the stack.
 */
static bool kgo_runqputslow(struct kgo_p *p, struct kgo_g *g, u32 h, u32 t)
{
	struct kgo_sched *sched = p->sched;
	struct kgo_gqueue q = {};
	unsigned long flags;
	u32 n = (t - h) / 2;
	u32 i;

	if (WARN_ON_ONCE(n != KGO_RUNQ_SIZE / 2))
		return false;
	/* Release: pairs with a thief's acquire of runqhead in runqgrab. */
	if (cmpxchg_release(&p->runqhead, h, h + n) != h)
		return false;
	for (i = 0; i < n; i++)
		kgo_gqueue_push_back(&q, READ_ONCE(p->runq[RUNQ_SLOT(h + i)]));
	kgo_gqueue_push_back(&q, g);

	kgo_sched_lock_irqsave(sched, flags);
	kgo_globrunqputbatch(sched, &q, n + 1);
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	return true;
}

/* Puts @g at the ring's tail. Context: only the owner of @p. */
static __always_inline void kgo_runqput_ring(struct kgo_p *p, struct kgo_g *g)
{
	u32 h, t;

	for (;;) {
		/* Acquire: pairs with the consumers' release in their CAS. */
		h = smp_load_acquire(&p->runqhead);
		t = p->runqtail;	/* only we write it */
		if (t - h < KGO_RUNQ_SIZE) {
			WRITE_ONCE(p->runq[RUNQ_SLOT(t)], g);
			/* Release: publishes the slot to consumers' acquire. */
			smp_store_release(&p->runqtail, t + 1);
			return;
		}
		if (kgo_runqputslow(p, g, h, t))
			return;
	}
}

/* Moves the @n oldest fresh Gs to the ring, oldest first. Owner only. */
static void kgo_fresh_spill(struct kgo_p *p, u32 n)
{
	while (n--) {
		struct kgo_g *g = p->fresh[FRESH_SLOT(p->freshhead)];

		WRITE_ONCE(p->freshhead, p->freshhead + 1);
		kgo_runqput_ring(p, g);
	}
}

/* Whether @g, just kicked out of runnext, goes on the fresh stack. */
static bool kgo_fresh_keeps(struct kgo_g *g)
{
	return IS_ENABLED(CONFIG_PREEMPT_NOTIFIERS) && !g->stack;
}

/* Whether a P is idle or an M spins: someone who could steal. */
static bool kgo_fresh_wanted(struct kgo_sched *sched)
{
	return atomic_read(&sched->npidle) || atomic_read(&sched->nmspinning);
}

static void kgo_fresh_push(struct kgo_p *p, struct kgo_g *g)
{
	if (p->freshtail - p->freshhead == KGO_FRESH_SIZE)
		kgo_fresh_spill(p, KGO_FRESH_SIZE / 2);
	p->fresh[FRESH_SLOT(p->freshtail)] = g;
	p->freshticket[FRESH_SLOT(p->freshtail)] = p->runqtail;
	WRITE_ONCE(p->freshtail, p->freshtail + 1);
	kgo_pstat_inc(p, fresh_kept);
}

/**
 * kgo_fresh_publish() - let thieves have the older half of the fresh stack
 * @p: the caller's P
 *
 * For a P that found a P idle or an M spinning: the older half, rounded
 * up (the largest subtrees, in a spawn tree), goes to the ring's tail,
 * where thieves look. The caller then wakes one (kgo_wakep()).
 * Context: only the owner of @p.
 */
void kgo_fresh_publish(struct kgo_p *p)
{
	u32 n = (kgo_fresh_len(p) + 1) / 2;

	kgo_fresh_spill(p, n);
	kgo_pstat_add(p, fresh_published, n);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_fresh_publish);

/**
 * kgo_runqput() - queue @g on @p
 * @p: the caller's P
 * @g: a RUNNABLE G
 * @next: put @g in runnext, kicking the G there to the tail (or, if it
 *	never ran, to the fresh stack)
 *
 * Context: only the owner of @p. A full ring sends half of itself to the
 * global queue.
 * Return: whether a G went where a thief may take it
 * other than runnext: the ring, or the global queue.
 */
bool kgo_runqput(struct kgo_p *p, struct kgo_g *g, bool next)
{
	if (next) {
		struct kgo_g *old = READ_ONCE(p->runnext);

		/* Full barrier: @g's fields are visible before it is. */
		while (!try_cmpxchg(&p->runnext, &old, g))
			;
		if (!old)
			return false;
		/* The kicked G is ours now: nobody else reads its stack. */
		if (kgo_fresh_keeps(old)) {
			kgo_fresh_push(p, old);
			if (!kgo_fresh_wanted(p->sched))
				return false;
			kgo_fresh_publish(p);
			return true;
		}
		g = old;	/* the old runnext goes to the tail */
	}
	kgo_runqput_ring(p, g);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_runqput);

/*
 * __kgo_runqget() with Gs on the fresh stack: if the monitor saw
 * neither the ring's head nor the stack's oldest move for ten slices,
 * the ring's head, or if none, the oldest fresh G (a mark may outlive
 * what it was for: then one other G runs early); else the ring's head
 * if it ran before and was queued before the newest fresh G was pushed,
 * else that G. With @published, the caller's schedule, it first lets an
 * idle P or a spinning M have the older half of the stack, and sets
 * *@published if it did.
 */
struct kgo_g *kgo_runqget_fresh(struct kgo_p *p, bool *published)
{
	struct kgo_g *g;
	u32 h, t;

	/* A P is idle or an M spins: let it steal the older half first. */
	if (published && kgo_fresh_wanted(p->sched)) {
		kgo_fresh_publish(p);
		*published = true;
	}
	if (unlikely(READ_ONCE(p->fresh_aged)) && p->freshtail != p->freshhead) {
		WRITE_ONCE(p->fresh_aged, false);
		kgo_pstat_inc(p, fresh_aged);
		/* The ring's head first: it may be what has waited. */
		for (;;) {
			/* Acquire: pairs with other consumers' release, as below. */
			h = smp_load_acquire(&p->runqhead);
			if (p->runqtail == h)
				break;
			g = READ_ONCE(p->runq[RUNQ_SLOT(h)]);
			if (cmpxchg_release(&p->runqhead, h, h + 1) == h)
				return g;
		}
		g = p->fresh[FRESH_SLOT(p->freshhead)];
		WRITE_ONCE(p->freshhead, p->freshhead + 1);
		return g;
	}
	for (;;) {
		/* Acquire: pairs with other consumers' release. */
		h = smp_load_acquire(&p->runqhead);
		t = p->runqtail;
		if (t == h)
			break;
		g = READ_ONCE(p->runq[RUNQ_SLOT(h)]);
		/*
		 * A G that never ran (published or stolen from a fresh stack)
		 * waits behind ours: depth first here too. One that ran goes
		 * first if it came before the newest fresh G. A thief may
		 * take and start it meanwhile: then the cmpxchg fails.
		 */
		if (p->freshtail != p->freshhead &&
		    (!READ_ONCE(g->stack) ||
		     (s32)(h - p->freshticket[FRESH_SLOT(p->freshtail - 1)]) >= 0))
			break;
		/* Release: commits the consume, pairs with runqput's acquire. */
		if (cmpxchg_release(&p->runqhead, h, h + 1) == h)
			return g;
	}
	if (p->freshtail == p->freshhead)
		return NULL;
	WRITE_ONCE(p->freshtail, p->freshtail - 1);
	return p->fresh[FRESH_SLOT(p->freshtail)];
}

/**
 * kgo_runqget() - take the next G of @p
 * @p: the caller's P
 * @inherit: set if the G came from runnext and inherits the time slice
 *
 * Context: only the owner of @p.
 * Return: a G or NULL.
 */
struct kgo_g *kgo_runqget(struct kgo_p *p, bool *inherit)
{
	return __kgo_runqget(p, inherit, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_runqget);

/*
 * A thief copies half of @p2's ring into @batch starting at slot
 * @bhead (the thief's own tail), and claims it. With @stealnext it may
 * take runnext when the ring is empty. Returns how many it took.
 */
static u32 kgo_runqgrab(struct kgo_p *p2, struct kgo_g **batch, u32 bhead,
			bool stealnext)
{
	u32 h, t, n, i;

	for (;;) {
		/* Acquire: pairs with other consumers' release of runqhead. */
		h = smp_load_acquire(&p2->runqhead);
		/* Acquire: pairs with the owner's release; slots are visible. */
		t = smp_load_acquire(&p2->runqtail);
		n = t - h;
		n = n - n / 2;
		if (n == 0) {
			struct kgo_g *next;

			if (!stealnext)
				return 0;
			next = READ_ONCE(p2->runnext);
			if (!next)
				return 0;
			/*
			 * A running owner that just readied next is about to
			 * run it (a G that readies another and parks, as in a
			 * channel hand-off). Give it the time that takes before
			 * stealing: moving the pair apart costs more than it
			 * gains. Go calls usleep(3) here, which sleeps some
			 * 50 us on Linux; a fixed 3 us wait was shorter than
			 * the hand-off under emulation, and split ping-pong
			 * pairs. So watch runnext for up to
			 * KGO_RUNNEXT_GRACE_US and go as soon as it changes:
			 * no longer than the owner needs.
			 */
			if (READ_ONCE(p2->status) == KGO_P_RUNNING) {
				unsigned int us;

				for (us = 0; us < KGO_RUNNEXT_GRACE_US; us++) {
					udelay(1);
					if (READ_ONCE(p2->runnext) != next)
						break;
				}
				if (us < KGO_RUNNEXT_GRACE_US)
					continue;
			}
			if (!try_cmpxchg(&p2->runnext, &next, NULL))
				continue;
			WRITE_ONCE(batch[RUNQ_SLOT(bhead)], next);
			return 1;
		}
		/* h and t were read at different times: retry. */
		if (n > KGO_RUNQ_SIZE / 2)
			continue;
		for (i = 0; i < n; i++)
			WRITE_ONCE(batch[RUNQ_SLOT(bhead + i)],
				   READ_ONCE(p2->runq[RUNQ_SLOT(h + i)]));
		/* Release: commits the consume. */
		if (cmpxchg_release(&p2->runqhead, h, h + n) == h)
			return n;
	}
}

/**
 * kgo_runqsteal() - steal half of @p2's Gs into @p
 * @p: the thief's own P
 * @p2: the victim
 * @stealnext: also consider @p2's runnext (the last steal pass)
 *
 * Context: only the owner of @p.
 * Return: one of the stolen Gs to run now, the rest queued on @p; NULL if
 * nothing was stolen.
 */
struct kgo_g *kgo_runqsteal(struct kgo_p *p, struct kgo_p *p2,
			    bool stealnext)
{
	u32 t = p->runqtail;
	u32 n = kgo_runqgrab(p2, p->runq, t, stealnext);
	struct kgo_g *g;

	kgo_pstat_inc(p, steal_attempts);
	if (n == 0)
		return NULL;
	kgo_pstat_inc(p, steals);
	kgo_pstat_add(p, stolen, n);
	trace_kgo_steal(p->id, p2->id, n);
	n--;
	g = READ_ONCE(p->runq[RUNQ_SLOT(t + n)]);
	if (n == 0)
		return g;
	/* The thief's own queue had room: it is empty when we steal. */
	WARN_ON_ONCE(t - smp_load_acquire(&p->runqhead) + n >= KGO_RUNQ_SIZE);
	/* Release: publishes the stolen slots. */
	smp_store_release(&p->runqtail, t + n);
	return g;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_runqsteal);

/**
 * kgo_runqempty() - whether @p has no runnable G
 * @p: any P
 *
 * Context: any. Must not report empty while a G is only moving from
 * runnext to the ring: runqput kicking runnext to the tail and runqget
 * then emptying runnext would otherwise look empty in between.
 *
 * Return: true if empty.
 */
bool kgo_runqempty(struct kgo_p *p)
{
	u32 h, t;
	struct kgo_g *next;

	for (;;) {
		/* Acquire: pairs with consumers' release of runqhead. */
		h = smp_load_acquire(&p->runqhead);
		/* Acquire: pairs with the owner's release of runqtail. */
		t = smp_load_acquire(&p->runqtail);
		/* Acquire: pairs with the full barrier of runnext's cmpxchg. */
		next = smp_load_acquire(&p->runnext);
		/* Acquire again: the tail did not move while we looked. */
		if (t == smp_load_acquire(&p->runqtail))
			return h == t && !next;
	}
}
EXPORT_SYMBOL_IF_KUNIT(kgo_runqempty);

/*
 * Racy length of the ring alone, for statistics (Go's runqsize). Head
 * is read first so that a moving queue cannot look negative; a torn
 * view past the ring's size shows as empty.
 */
u32 kgo_runq_ringlen(const struct kgo_p *p)
{
	u32 h = READ_ONCE(p->runqhead);
	u32 n = READ_ONCE(p->runqtail) - h;

	return n > KGO_RUNQ_SIZE ? 0 : n;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_runq_ringlen);

/* Racy length, for statistics: ring, runnext and the fresh stack. */
u32 kgo_runqlen(struct kgo_p *p)
{
	return kgo_runq_ringlen(p) + !!READ_ONCE(p->runnext) + kgo_fresh_len(p);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_runqlen);

/**
 * kgo_runqempty_all() - whether @p has no G queued at all
 * @p: any P
 *
 * kgo_runqempty() and the fresh stack: for whoever decides whether the
 * P needs an M, as opposed to whether there is anything to steal.
 * Context: any; the fresh stack is read racily, which is exact while
 * its owner runs no kgo code (blocked in the kernel, or running a hog).
 *
 * Return: true if nothing is queued.
 */
bool kgo_runqempty_all(struct kgo_p *p)
{
	return !kgo_fresh_len(p) && kgo_runqempty(p);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_runqempty_all);

/* The global queue. Context: sched->lock held. */
void kgo_globrunqput(struct kgo_sched *sched, struct kgo_g *g)
{
	lockdep_assert_held(&sched->lock);
	kgo_gqueue_push_back(&sched->runq, g);
	WRITE_ONCE(sched->runqsize, sched->runqsize + 1);
}

void kgo_globrunqputbatch(struct kgo_sched *sched, struct kgo_gqueue *q, u32 n)
{
	lockdep_assert_held(&sched->lock);
	kgo_gqueue_push_back_all(&sched->runq, q);
	WRITE_ONCE(sched->runqsize, sched->runqsize + n);
}

/**
 * kgo_globrunqget() - take a fair share of the global queue
 * @sched: the scheduler
 * @p: the caller's P, which receives all but the returned G
 * @max: take at most this many; 0 for no limit
 *
 * Takes runqsize/gomaxprocs + 1 Gs, at most half a ring, as Go does.
 * Callers pass @max 1 or have an empty ring, so the extra Gs always fit:
 * an overflow here would take sched->lock again in kgo_runqputslow().
 *
 * Context: sched->lock held, by the owner of @p.
 * Return: a G or NULL.
 */
struct kgo_g *kgo_globrunqget(struct kgo_sched *sched, struct kgo_p *p, u32 max)
{
	u32 size = sched->runqsize;
	u32 n;
	struct kgo_g *g;

	lockdep_assert_held(&sched->lock);
	if (!size)
		return NULL;
	n = min(size / max(READ_ONCE(sched->gomaxprocs), 1) + 1, size);
	if (max && n > max)
		n = max;
	n = min_t(u32, n, KGO_RUNQ_SIZE / 2);
	WARN_ON_ONCE(n > 1 && p->runqtail - READ_ONCE(p->runqhead) > KGO_RUNQ_SIZE / 2);
	WRITE_ONCE(sched->runqsize, size - n);
	g = kgo_gqueue_pop(&sched->runq);
	while (--n)
		kgo_runqput(p, kgo_gqueue_pop(&sched->runq), false);
	kgo_pstat_inc(p, globrunq_takes);
	return g;
}
