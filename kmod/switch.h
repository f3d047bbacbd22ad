/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_SWITCH_H
#define _KGO_SWITCH_H

#include <linux/compiler.h>
#include <linux/percpu.h>
#include <linux/sched.h>

#include "compat.h"

struct kgo_g;
struct kgo_m;
struct kgo_sched;
struct work_struct;

/* switch_64.S */
struct kgo_g *kgo_switch(unsigned long *save_sp, unsigned long *load_sp,
			 struct kgo_g *prev);
void kgo_g_entry(void);
void __noreturn kgo_g_main(struct kgo_g *g);

/*
 * switch.c: the M's side, for its loop (kgo_schedule(), sched.c). Its
 * kgo_execute() is static: core.c builds switch.c and sched.c as one unit.
 */
void kgo_stackwait_kick(struct kgo_sched *sched, u32 n);
void kgo_stackwait_retry_fn(struct work_struct *work);

/* switch.c: the G's side */
struct kgo_m *kgo_preempt_now(struct kgo_m *m);
void kgo_switch_via_m(struct kgo_m *m, int req);
void kgo_switch_finish(struct kgo_g *prev);

/*
 * All Ms share one stack canary. A goroutine's frames carry the canary
 * of the kthread they were pushed on; a goroutine resumed by another M
 * would fail __stack_chk_fail on its first return if each M had its own.
 * The kernel reloads the per-CPU copy from task->stack_canary at every
 * context switch, so setting both keeps them in step. Called with
 * preemption disabled, from a function with no protected frame of its
 * own: its frame's canary would change under it.
 */
static __always_inline unsigned long kgo_canary_swap(unsigned long canary)
{
#ifdef CONFIG_STACKPROTECTOR
	unsigned long old = current->stack_canary;

	current->stack_canary = canary;
	kgo_canary_percpu_write(canary);
	return old;
#else
	return 0;
#endif
}

#endif /* _KGO_SWITCH_H */
