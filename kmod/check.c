// SPDX-License-Identifier: GPL-2.0
/*
 * The switch-point rules of include/kgo.h, checked. Every Gs on one
 * kthread shares its task_struct, so anything the kernel keeps per task
 * that is not at its resting value when a goroutine switches leaks into
 * whatever runs next on that kthread (see KERNEL-RULES.md).
 *
 * kgo_switch_violations() only reports, so that KUnit can test it
 * without the WARN, which would panic a panic_on_warn kernel.
 */

#include <linux/hardirq.h>
#include <linux/lockdep.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>

#include "check.h"
#include "g.h"
#include "m.h"

#define KGO_PF_MEMALLOC_ALL \
	(PF_MEMALLOC | PF_MEMALLOC_NOFS | PF_MEMALLOC_NOIO | PF_MEMALLOC_PIN)

static const char * const kgo_switch_names[] = {
	"preemption disabled", "interrupts disabled", "RCU read lock",
	"locks held", "pagefaults disabled", "migration disabled",
	"memalloc scope", "journal/plug/bio_list", "task state",
};

/**
 * kgo_switch_violations() - which rules the current task breaks now
 * @memalloc_base: the PF_MEMALLOC* flags the kthread started with
 *
 * Context: process.
 * Return: a mask of KGO_SWITCH_* bits, 0 if none.
 */
unsigned int kgo_switch_violations(unsigned int memalloc_base)
{
	unsigned int v = 0;

	if (preempt_count())
		v |= KGO_SWITCH_PREEMPT;
	if (irqs_disabled())
		v |= KGO_SWITCH_IRQS;
	if (rcu_preempt_depth())
		v |= KGO_SWITCH_RCU;
#ifdef CONFIG_LOCKDEP
	if (lockdep_depth(current))
		v |= KGO_SWITCH_LOCKS;
#endif
	if (pagefault_disabled())
		v |= KGO_SWITCH_PAGEFAULT;
#ifdef CONFIG_SMP
	if (current->migration_disabled)
		v |= KGO_SWITCH_MIGRATE;
#endif
	if ((current->flags & KGO_PF_MEMALLOC_ALL) != memalloc_base)
		v |= KGO_SWITCH_MEMALLOC;
	if (current->journal_info || current->plug || current->bio_list)
		v |= KGO_SWITCH_IO;
	if (!task_is_running(current))
		v |= KGO_SWITCH_STATE;
	return v;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_switch_violations);

/* Records the M's resting state. Context: the M, on its own stack. */
void kgo_switch_baseline(struct kgo_m *m)
{
	m->memalloc_base = current->flags & KGO_PF_MEMALLOC_ALL;
}

void __kgo_switch_check(struct kgo_m *m, const char *where, unsigned int allowed)
{
	unsigned int v = kgo_switch_violations(m->memalloc_base) & ~allowed;
	int i;

	if (likely(!v))
		return;
	for (i = 0; i < ARRAY_SIZE(kgo_switch_names); i++)
		if (v & (1 << i))
			pr_err("goroutine %llu at %s: %s\n",
			       m->curg ? m->curg->goid : 0, where, kgo_switch_names[i]);
	WARN_ONCE(1, "kgo: goroutine switches with per-task state live (%#x)\n", v);
}
