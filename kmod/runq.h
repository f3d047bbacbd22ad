/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_RUNQ_H
#define _KGO_RUNQ_H

#include <linux/types.h>

struct kgo_g;
struct kgo_gqueue;
struct kgo_p;
struct kgo_sched;

void kgo_runqput(struct kgo_p *p, struct kgo_g *g, bool next);
struct kgo_g *kgo_runqget(struct kgo_p *p, bool *inherit);
struct kgo_g *kgo_runqsteal(struct kgo_p *p, struct kgo_p *p2, bool stealnext);
bool kgo_runqempty(struct kgo_p *p);
u32 kgo_runq_ringlen(const struct kgo_p *p);
u32 kgo_runqlen(struct kgo_p *p);

void kgo_globrunqput(struct kgo_sched *sched, struct kgo_g *g);
void kgo_globrunqputbatch(struct kgo_sched *sched, struct kgo_gqueue *q, u32 n);
struct kgo_g *kgo_globrunqget(struct kgo_sched *sched, struct kgo_p *p, u32 max);

#endif /* _KGO_RUNQ_H */
