/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_RUNQ_H
#define _KGO_RUNQ_H

#include <linux/compiler.h>
#include <linux/types.h>

#include "proc.h"

struct kgo_g;
struct kgo_gqueue;
struct kgo_p;
struct kgo_sched;

bool kgo_runqput(struct kgo_p *p, struct kgo_g *g, bool next);
struct kgo_g *kgo_runqget(struct kgo_p *p, bool *inherit);
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

#endif /* _KGO_RUNQ_H */
