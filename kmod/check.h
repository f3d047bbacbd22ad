/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_CHECK_H
#define _KGO_CHECK_H

#include <linux/bug.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/kconfig.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>

struct kgo_m;

/*
 * Per-task kernel state that must not be live when a goroutine switches:
 * the next goroutine on this kthread would inherit it, or the goroutine
 * would carry it to another kthread that never took it.
 */
enum {
	KGO_SWITCH_PREEMPT	= 1 << 0,	/* preemption disabled, spinlock held */
	KGO_SWITCH_IRQS		= 1 << 1,	/* interrupts disabled */
	KGO_SWITCH_RCU		= 1 << 2,	/* in an RCU read-side section */
	KGO_SWITCH_LOCKS	= 1 << 3,	/* lockdep: a lock is held */
	KGO_SWITCH_PAGEFAULT	= 1 << 4,	/* pagefault_disable() */
	KGO_SWITCH_MIGRATE	= 1 << 5,	/* migrate_disable() */
	KGO_SWITCH_MEMALLOC	= 1 << 6,	/* a memalloc_*_save() scope */
	KGO_SWITCH_IO		= 1 << 7,	/* journal_info, plug or bio_list set */
	KGO_SWITCH_STATE	= 1 << 8,	/* task state not TASK_RUNNING */
};

/* Debug kernels check every switch; others pay nothing. */
#define KGO_CHECK_SWITCHES \
	(IS_ENABLED(CONFIG_DEBUG_ATOMIC_SLEEP) || IS_ENABLED(CONFIG_PROVE_LOCKING))

unsigned int kgo_switch_violations(unsigned int memalloc_base);
void kgo_switch_baseline(struct kgo_m *m);
void __kgo_switch_check(struct kgo_m *m, const char *where, unsigned int allowed);

static inline void kgo_switch_check(struct kgo_m *m, const char *where)
{
	if (KGO_CHECK_SWITCHES)
		__kgo_switch_check(m, where, 0);
}

/*
 * The same, for a switch finished by the next G with interrupts still
 * off, as they must be there (sched.c's direct park).
 */
static inline void kgo_switch_check_irqsoff(struct kgo_m *m, const char *where)
{
	if (KGO_CHECK_SWITCHES)
		__kgo_switch_check(m, where, KGO_SWITCH_IRQS);
}

/**
 * kgo_in_atomic() - whether the caller may not block
 *
 * Production kernels check this too, unlike might_sleep(): a blocking
 * kgo call from atomic context would switch stacks with a lock held or
 * sleep in an interrupt, and corrupt more than the caller. Interrupt
 * context, interrupts off and an RCU read side (PREEMPT_RCU) are always
 * seen; preemption off (a spinlock) only with CONFIG_PREEMPT_COUNT,
 * which Debian's kernels have (PREEMPT_DYNAMIC). Inline: every call
 * that may block makes it, a channel operation among them.
 *
 * Context: any.
 * Return: true if the caller must not block.
 */
static inline bool kgo_in_atomic(void)
{
	if (!in_task() || irqs_disabled() || rcu_preempt_depth())
		return true;
	return IS_ENABLED(CONFIG_PREEMPT_COUNT) && preempt_count();
}

/*
 * At the top of every kgo call that may block: false, with a warning
 * once per call site, when the caller is in atomic context and the call
 * must fail (-EPERM) rather than sleep or switch stacks there.
 */
#define kgo_may_block(fn)						\
	(!WARN_ONCE(kgo_in_atomic(),					\
		    "kgo: %s() may block: called from atomic context\n", fn))

#endif /* _KGO_CHECK_H */
