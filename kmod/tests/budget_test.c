// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_budget: the memory budget (budget.c). Each case shrinks the budget
 * to a few goroutines' worth above what is in use, and the suite's .exit
 * puts it back even after a failed assertion.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/thread_info.h>

#include <kgo.h>
#include <linux/kgo.h>
#include "budget.h"
#include "g.h"
#include "proc.h"
#include "sched.h"
#include "session.h"
#include "stack.h"
#include "task.h"
#include "tests/run_g.h"

#define LONG_MS		30000
/* What one running goroutine holds. */
#define G_UNIT		((u64)THREAD_SIZE + sizeof(struct kgo_g))

struct budget_saved {
	u64 budget;
	int procs;
};

/* Saves the budget and the Ps first: .exit puts them back even when this fails. */
static int budget_init(struct kunit *test)
{
	struct budget_saved *saved = kunit_kzalloc(test, sizeof(*saved), GFP_KERNEL);

	if (!saved)
		return -ENOMEM;
	saved->budget = kgo_budget_bytes();
	saved->procs = kgo_gomaxprocs(0);
	test->priv = saved;
	return kgo_test_wait_quiet(LONG_MS);
}

static void budget_exit(struct kunit *test)
{
	struct budget_saved *saved = test->priv;

	if (!saved)
		return;
	kgo_budget_set(saved->budget);
	kgo_gomaxprocs(saved->procs);
}

/* Leaves room for @stacks running goroutines and @structs queued ones. */
static void budget_room(u64 stacks, u64 structs)
{
	kgo_budget_set(kgo_budget_used_bytes() + stacks * G_UNIT +
		       structs * sizeof(struct kgo_g));
}

static void nothing(void *arg)
{
}

/* A full budget refuses a spawn, with -ENOMEM, and charges nothing. */
static void kgo_budget_refuse_test(struct kunit *test)
{
	u64 used = kgo_budget_used_bytes();

	budget_room(0, 0);
	KUNIT_EXPECT_EQ(test, kgo_go(nothing, NULL, GFP_KERNEL), (s64)-ENOMEM);
	KUNIT_EXPECT_EQ(test, kgo_budget_used_bytes(), used);
}

/*
 * The panic: a SPAWN chain (fan-out 1) whose every node waits
 * for its child while it holds a stack. Within the budget the chain
 * cannot grow past its room, and the task completes with -ENOMEM and the
 * nodes that ran, instead of asking for a stack per node.
 */
static void kgo_budget_chain_test(struct kunit *test)
{
	struct kgo_task t = { .kind = KGO_TASK_SPAWN, .args = { 1, 100000 } };
	struct kgo_session *s = kgo_session_create();
	struct kgo_gqueue q = {};
	struct kgo_job *job;
	LIST_HEAD(list);
	struct kgo_g *g;
	u64 used;
	u32 ready;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	used = kgo_budget_used_bytes();
	budget_room(8, 0);
	g = kgo_session_submit_one(s, &t, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	kgo_gqueue_push_back(&q, g);
	kgo_injectglist(&q, 1);
	KUNIT_EXPECT_EQ(test, kgo_session_wait(s, 1, LONG_MS * NSEC_PER_MSEC, &ready), 0);
	KUNIT_ASSERT_EQ(test, kgo_session_take(s, &list, 1), 1);
	job = list_first_entry(&list, struct kgo_job, node);
	kunit_info(test, "chain stopped at %llu nodes, status %d\n", job->c.result,
		   job->c.status);
	KUNIT_EXPECT_EQ(test, job->c.status, -ENOMEM);
	KUNIT_EXPECT_GE(test, job->c.result, 2ULL);
	KUNIT_EXPECT_LE(test, job->c.result, 8ULL);
	kgo_job_complete_read(job);
	kgo_session_close(s);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
	KUNIT_EXPECT_EQ(test, kgo_budget_used_bytes(), used);
}

/*
 * Goroutines let in while there was room, that find no stack within the
 * budget at their first run, wait, parked and holding nothing, and all
 * run in the end. One P: the spawner queues them all before any runs,
 * then leaves room for two more stacks and waits; at most two run at
 * once, and an exit lets the next one in.
 */
#define WAIT_GS		16

struct stackwait_ctx {
	atomic_t running, max_running, done;
	u32 max_waiting;
	int spawned;
	struct completion all;
};

static void stackwait_g(void *arg)
{
	struct stackwait_ctx *c = arg;
	int now = atomic_inc_return(&c->running);
	int max = atomic_read(&c->max_running);

	while (now > max && atomic_cmpxchg(&c->max_running, max, now) != max)
		max = atomic_read(&c->max_running);
	WRITE_ONCE(c->max_waiting,
		   max_t(u32, READ_ONCE(c->max_waiting), READ_ONCE(kgo_sched.nstackwait)));
	kgo_sleep(2 * NSEC_PER_MSEC);	/* parked, holding its stack */
	atomic_dec(&c->running);
	if (atomic_inc_return(&c->done) == WAIT_GS)
		complete(&c->all);
}

static void stackwait_spawner(void *arg)
{
	struct stackwait_ctx *c = arg;
	int i;

	for (i = 0; i < WAIT_GS; i++)
		c->spawned += kgo_go(stackwait_g, c, GFP_KERNEL) > 0;
	kgo_budget_set(kgo_budget_used_bytes() + 2 * (u64)THREAD_SIZE);
	wait_for_completion(&c->all);	/* its M sleeps: the P goes on */
}

static void kgo_budget_stackwait_test(struct kunit *test)
{
	struct stackwait_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u64 used;

	KUNIT_ASSERT_NOT_NULL(test, c);
	init_completion(&c->all);
	used = kgo_budget_used_bytes();
	kgo_gomaxprocs(1);
	KUNIT_ASSERT_EQ(test, kgo_test_run_in_g(stackwait_spawner, c, LONG_MS), 0);
	kunit_info(test, "%d spawned, at most %d running, %u waiting for a stack\n",
		   c->spawned, atomic_read(&c->max_running), c->max_waiting);
	KUNIT_EXPECT_EQ(test, c->spawned, WAIT_GS);
	KUNIT_EXPECT_LE(test, atomic_read(&c->max_running), 2);
	KUNIT_EXPECT_GT(test, c->max_waiting, 0u);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kgo_sched.nstackwait), 0u);
	KUNIT_EXPECT_EQ(test, kgo_budget_used_bytes(), used);
}

static struct kunit_case kgo_budget_cases[] = {
	KUNIT_CASE(kgo_budget_refuse_test),
	KUNIT_CASE(kgo_budget_chain_test),
	KUNIT_CASE(kgo_budget_stackwait_test),
	{}
};

static struct kunit_suite kgo_budget_suite = {
	.name = "kgo_budget",
	.init = budget_init,
	.exit = budget_exit,
	.test_cases = kgo_budget_cases,
};

kunit_test_suite(kgo_budget_suite);
