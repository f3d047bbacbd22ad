// SPDX-License-Identifier: GPL-2.0
/*
 * "switch_raw", ns per switch: kgo's stack switch (kmod/switch_64.S, see
 * switch_asm.S) alone, back and forth between this thread's stack and
 * one other, in a tight loop: the floor under every goroutine switch,
 * with no scheduler around it. As in kgo, each switch first points
 * current->stack at the stack it goes to, and interrupts are off across
 * it (an interrupt must find %rsp inside current->stack).
 *
 * The other stack is laid out as kgo_stack_prepare() lays out a new
 * goroutine's, so that the first switch returns into kgo_g_entry's
 * twin, which calls kgo_bench_g_main(). That never returns: it switches
 * back, forever. When the benchmark is done its stack is simply freed,
 * with the "goroutine" suspended on it; it holds nothing.
 *
 * Interrupts are off for a batch of switches at a time only, so that a
 * long run cannot stall RCU or the tick.
 */

#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/magic.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "bench.h"

/* Round trips per interrupts-off window: well under a millisecond. */
#define SW_BATCH	4096

struct sw_ctx {
	unsigned long main_sp;	/* this thread's %rsp, while on the other */
	unsigned long alt_sp;	/* the other stack's, while on ours */
	void *main_stack;	/* this thread's task stack */
	void *alt_stack;	/* THREAD_SIZE, vmalloc'd like kgo's */
};

/* The other side: entered by the first switch, with interrupts off. */
void __noreturn kgo_bench_g_main(void *arg)
{
	struct sw_ctx *c = arg;

	for (;;) {
		current->stack = c->main_stack;
		kgo_bench_switch(&c->alt_sp, &c->main_sp, NULL);
	}
}

/* As kgo_stack_prepare(): the frame kgo_switch pops, then the entry. */
static void sw_prepare(struct sw_ctx *c)
{
	unsigned long top = (unsigned long)c->alt_stack + THREAD_SIZE;
	unsigned long *sp;

	*(unsigned long *)c->alt_stack = STACK_END_MAGIC;
	memset((void *)(top - sizeof(struct pt_regs)), 0, sizeof(struct pt_regs));
	sp = (unsigned long *)ALIGN_DOWN(top - sizeof(struct pt_regs), 16);
	*--sp = (unsigned long)kgo_bench_g_entry;	/* kgo_switch's RET */
	*--sp = 0;					/* rbp */
	*--sp = (unsigned long)c;			/* rbx: the argument */
	*--sp = 0;					/* r12 */
	*--sp = 0;					/* r13 */
	*--sp = 0;					/* r14 */
	*--sp = 0;					/* r15 */
	c->alt_sp = (unsigned long)sp;
}

/* @rounds round trips (two switches each); returns their ns. */
static u64 sw_batch(struct sw_ctx *c, unsigned int rounds)
{
	unsigned long flags;
	unsigned int i;
	u64 t0, t1;

	local_irq_save(flags);
	t0 = ktime_get_ns();
	for (i = 0; i < rounds; i++) {
		current->stack = c->alt_stack;
		kgo_bench_switch(&c->main_sp, &c->alt_sp, NULL);
	}
	t1 = ktime_get_ns();
	local_irq_restore(flags);
	return t1 - t0;
}

/* @n switches in batches; their total ns. */
static u64 sw_run(struct sw_ctx *c, u64 n)
{
	u64 rounds = n / 2, ns = 0;
	unsigned int b;

	while (rounds) {
		b = min_t(u64, rounds, SW_BATCH);
		ns += sw_batch(c, b);
		rounds -= b;
		cond_resched();
	}
	return ns;
}

void kgo_bench_switch_raw(const struct kgo_bench_cfg *cfg)
{
	u64 n = kgo_bench_size(cfg, 2000000, 10000) / 2 * 2, ns;
	struct sw_ctx c = { .main_stack = current->stack };

	c.alt_stack = vmalloc(THREAD_SIZE);
	if (!c.alt_stack) {
		kgo_bench_report_error("switch_raw", "kgo", -ENOMEM);
		return;
	}
	sw_prepare(&c);
	sw_run(&c, kgo_bench_warm_size(n));
	ns = sw_run(&c, n);
	vfree(c.alt_stack);
	kgo_bench_report("switch_raw", "kgo", "ns/op", ns, n,
			 "\"iters\":%llu", n);
}
