// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_check: the check run at every switch point recognises
 * per-task state that must not cross a switch. It is called directly,
 * from a goroutine, so that the WARN it drives in real use (which would
 * panic a panic_on_warn kernel) never fires here.
 */

#include <kunit/test.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include "check.h"
#include "tests/run_g.h"

struct check_ctx {
	unsigned int clean, spin, rcu, mutex, irqs, pagefault, noio, state;
};

static DEFINE_SPINLOCK(check_spin);
static DEFINE_MUTEX(check_mutex);

static void check_g(void *arg)
{
	struct check_ctx *c = arg;
	unsigned int flags;

	c->clean = kgo_switch_violations(0);

	spin_lock(&check_spin);
	c->spin = kgo_switch_violations(0);
	spin_unlock(&check_spin);

	rcu_read_lock();
	c->rcu = kgo_switch_violations(0);
	rcu_read_unlock();

	mutex_lock(&check_mutex);
	c->mutex = kgo_switch_violations(0);
	mutex_unlock(&check_mutex);

	local_irq_disable();
	c->irqs = kgo_switch_violations(0);
	local_irq_enable();

	pagefault_disable();
	c->pagefault = kgo_switch_violations(0);
	pagefault_enable();

	flags = memalloc_noio_save();
	c->noio = kgo_switch_violations(0);
	memalloc_noio_restore(flags);

	set_current_state(TASK_UNINTERRUPTIBLE);
	c->state = kgo_switch_violations(0);
	__set_current_state(TASK_RUNNING);
}

static void kgo_check_switch_test(struct kunit *test)
{
	struct check_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(check_g, c, 60000));

	KUNIT_EXPECT_EQ(test, c->clean, 0u);
	/* A spinlock: preemption off (PREEMPT_COUNT), and lockdep sees it. */
	KUNIT_EXPECT_NE(test, c->spin & KGO_SWITCH_PREEMPT, 0u);
	if (IS_ENABLED(CONFIG_LOCKDEP))
		KUNIT_EXPECT_NE(test, c->spin & KGO_SWITCH_LOCKS, 0u);
	/* RCU: a nesting count under PREEMPT_RCU, else preemption off. */
	KUNIT_EXPECT_NE(test, c->rcu & (KGO_SWITCH_RCU | KGO_SWITCH_PREEMPT), 0u);
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))
		KUNIT_EXPECT_NE(test, c->rcu & KGO_SWITCH_RCU, 0u);
	/* A mutex is visible only to lockdep. */
	if (IS_ENABLED(CONFIG_LOCKDEP))
		KUNIT_EXPECT_EQ(test, c->mutex, (unsigned int)KGO_SWITCH_LOCKS);
	KUNIT_EXPECT_NE(test, c->irqs & KGO_SWITCH_IRQS, 0u);
	KUNIT_EXPECT_EQ(test, c->pagefault, (unsigned int)KGO_SWITCH_PAGEFAULT);
	KUNIT_EXPECT_EQ(test, c->noio, (unsigned int)KGO_SWITCH_MEMALLOC);
	KUNIT_EXPECT_EQ(test, c->state, (unsigned int)KGO_SWITCH_STATE);
}

static struct kunit_case kgo_check_cases[] = {
	KUNIT_CASE(kgo_check_switch_test),
	{}
};

static struct kunit_suite kgo_check_suite = {
	.name = "kgo_check",
	.test_cases = kgo_check_cases,
};

kunit_test_suite(kgo_check_suite);
