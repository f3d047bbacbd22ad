/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_RUNQ_H
#define _KGO_RUNQ_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/types.h>

#include "proc.h"

struct kgo_g;
struct kgo_gqueue;
struct kgo_p;
struct kgo_sched;

bool kgo_runqput(struct kgo_p *p, struct kgo_g *g, bool next);
struct kgo_g *kgo_runqget(struct kgo_p *p, bool *inherit);
struct kgo_g *kgo_runqget_fresh(struct kgo_p *p, bool *published);
struct kgo_g *kgo_runqsteal(struct kgo_p *p, struct kgo_p *p2, bool stealnext);
bool kgo_runqempty(struct kgo_p *p);
bool kgo_runqempty_all(struct kgo_p *p);
void kgo_fresh_publish(struct kgo_p *p);
u32 kgo_runq_ringlen(const struct kgo_p *p);
u32 kgo_runqlen(struct kgo_p *p);

void kgo_globrunqput(struct kgo_sched *sched, struct kgo_g *g);
void kgo_globrunqputbatch(struct kgo_sched *sched, struct kgo_gqueue *q, u32 n);
struct kgo_g *kgo_globrunqget(struct kgo_sched *sched, struct kgo_p *p, u32 max);

/* Racy: Gs on @p's fresh stack (runq.c); exact for its owner. */
static inline u32 kgo_fresh_len(const struct kgo_p *p)
{
	return READ_ONCE(p->freshtail) - READ_ONCE(p->freshhead);
}

/**
 * kgo_runqput_tail() - kgo_runqput(@p, @g, false), inline up to a full ring
 * @p: the caller's P
 * @g: a RUNNABLE G
 *
 * For a yield: the G goes to the ring's tail, as in kgo_runqput().
 * Context: only the owner of @p.
 */
static __always_inline void kgo_runqput_tail(struct kgo_p *p, struct kgo_g *g)
{
	/* Acquire: pairs with the consumers' release in their CAS. */
	u32 h = smp_load_acquire(&p->runqhead);
	u32 t = p->runqtail;	/* only we write it */

	if (unlikely(t - h >= KGO_RUNQ_SIZE)) {
		kgo_runqput(p, g, false);
		return;
	}
	WRITE_ONCE(p->runq[t & (KGO_RUNQ_SIZE - 1)], g);
	/* Release: publishes the slot to consumers' acquire. */
	smp_store_release(&p->runqtail, t + 1);
}

/* kgo_runqget(), inline for the owner's schedule; see runq.c. */
static __always_inline struct kgo_g *__kgo_runqget(struct kgo_p *p, bool *inherit,
						   bool *published)
{
	struct kgo_g *next = READ_ONCE(p->runnext);
	u32 h, t;

	/* Only we set runnext; thieves may empty it, hence the cmpxchg. */
	if (next && try_cmpxchg(&p->runnext, &next, NULL)) {
		*inherit = true;
		return next;
	}
	*inherit = false;
	if (unlikely(p->freshtail != p->freshhead))
		return kgo_runqget_fresh(p, published);
	for (;;) {
		/* Acquire: pairs with other consumers' release. */
		h = smp_load_acquire(&p->runqhead);
		t = p->runqtail;
		if (t == h)
			return NULL;
		next = READ_ONCE(p->runq[h & (KGO_RUNQ_SIZE - 1)]);
		/* Release: commits the consume, pairs with runqput's acquire. */
		if (cmpxchg_release(&p->runqhead, h, h + 1) == h)
			return next;
	}
}

/**
 * kgo_runqget_sched() - kgo_runqget() for the owner's schedule
 * @p: the caller's P
 * @inherit: as for kgo_runqget()
 * @published: set if the older half of the fresh stack went to the ring
 *	first, for a P that is idle or an M that spins (kgo_fresh_publish()):
 *	the caller then wakes a thief for it (kgo_wakep())
 *
 * Context: only the owner of @p, no lock held.
 * Return: as kgo_runqget().
 */
static __always_inline struct kgo_g *kgo_runqget_sched(struct kgo_p *p, bool *inherit,
						       bool *published)
{
	return __kgo_runqget(p, inherit, published);
}

#endif /* _KGO_RUNQ_H */
