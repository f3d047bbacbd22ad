// SPDX-License-Identifier: GPL-2.0
/*
 * P creation and teardown. The scheduling logic that moves Ps between
 * Ms is in sched.c.
 */

#include <linux/slab.h>
#include <linux/topology.h>
#include <kunit/visibility.h>

#include "g.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "stack.h"

/**
 * kgo_p_create() - a new, idle P
 * @sched: the scheduler it belongs to (its global queue takes overflow)
 * @id: its index in @sched->allp
 * @cpu: the CPU its Ms run on
 *
 * Context: process.
 * Return: the P or NULL.
 */
struct kgo_p *kgo_p_create(struct kgo_sched *sched, int id, int cpu)
{
	struct kgo_p *p = kzalloc_node(sizeof(*p), GFP_KERNEL, cpu_to_node(cpu));

	if (!p)
		return NULL;
	p->id = id;
	p->cpu = cpu;
	p->sched = sched;
	p->status = KGO_P_IDLE;
	INIT_LIST_HEAD(&p->midle);
	spin_lock_init(&p->stack_lock);
	return p;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_p_create);

/* Context: no M holds or will take @p; its run queue is empty. */
void kgo_p_destroy(struct kgo_p *p)
{
	if (!p)
		return;
	WARN_ON_ONCE(!kgo_runqempty_all(p));
	kgo_g_drain_free(p);
	kgo_stack_drain(p);
	kfree(p);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_p_destroy);
