/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_BUDGET_H
#define _KGO_BUDGET_H

#include <linux/types.h>

/* The memory budget of goroutines: see budget.c. */
int kgo_budget_check_params(void);
u64 kgo_budget_bytes(void);
u64 kgo_budget_used_bytes(void);
struct kgo_p;

bool kgo_budget_spawn(struct kgo_p *p);
void kgo_budget_unspawn(struct kgo_p *p);
bool kgo_budget_stack(struct kgo_p *p);
void kgo_budget_unstack(struct kgo_p *p);
void kgo_budget_exit(struct kgo_p *p);
void kgo_budget_flush(struct kgo_p *p);
bool kgo_budget_stack_fits(void);
u64 kgo_budget_set(u64 bytes);

#endif /* _KGO_BUDGET_H */
