/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_STACK_H
#define _KGO_STACK_H

struct kgo_g;
struct kgo_p;

void *kgo_stack_get(struct kgo_p *p, bool uncharged);
void kgo_stack_put(struct kgo_p *p, void *stack);
void kgo_stack_prepare(struct kgo_g *g);
void kgo_stack_drain(struct kgo_p *p);
unsigned long kgo_stack_shrink(unsigned long nr);
long kgo_stacks_cached(void);
unsigned long kgo_stack_pooled(void);
int kgo_stack_init(void);
void kgo_stack_exit(void);

#endif /* _KGO_STACK_H */
