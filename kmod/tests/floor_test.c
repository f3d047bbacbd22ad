// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_floor: the memory floor (floor.c). Its case raises the floor above
 * all of RAM, and the suite's .exit puts it back even after a failed
 * assertion.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/mm.h>

#include <kgo.h>
#include <linux/kgo.h>
#include "budget.h"
#include "floor.h"
#include "g.h"
#include "proc.h"
#include "sched.h"
#include "session.h"
#include "stack.h"
#include "task.h"
#include "tests/run_g.h"

#define LONG_MS		30000

struct floor_saved {
	unsigned long floor;
	int procs;
};

/* Saves the floor and the Ps first: .exit puts them back even when this fails. */
static int floor_init(struct kunit *test)
{
	struct floor_saved *saved = kunit_kzalloc(test, sizeof(*saved), GFP_KERNEL);

	if (!saved)
		return -ENOMEM;
	saved->floor = kgo_floor_set(0);
	kgo_floor_set(saved->floor);
	saved->procs = kgo_gomaxprocs(0);
	test->priv = saved;
	return kgo_test_wait_quiet(LONG_MS);
}

static void floor_exit(struct kunit *test)
{
	struct floor_saved *saved = test->priv;

	if (!saved)
		return;
	kgo_floor_set(saved->floor);
	kgo_gomaxprocs(saved->procs);
}

/*
 * Below the memory floor nothing new is allocated: SUBMIT and spawns
 * fail with -ENOMEM, and goroutines already spawned run only on stacks
 * their P has cached. One P: the spawner queues more goroutines than a
 * P caches stacks, then puts the floor above all of RAM, tries one more
 * spawn, and parks; those that run hold their stacks while the floor
 * is up, so at most a cache's worth run, and the rest wait. Then the
 * floor comes back down, and all run.
 */
#define FLOOR_GS	(KGO_STACK_CACHE_MAX + 16)

struct floor_ctx {
	atomic_t running, max_below, done;
	bool below;		/* the floor is up: count who runs and waits */
	u32 max_waiting;	/* on sched.stackwait, with the floor up */
	long cached;		/* stacks the Ps and the pool held then */
	int spawned;
	s64 refused;		/* a spawn with the floor up */
	unsigned long floor;
	struct completion all;
};

static void floor_g(void *arg)
{
	struct floor_ctx *c = arg;
	int now = atomic_inc_return(&c->running);
	int max = atomic_read(&c->max_below);

	if (READ_ONCE(c->below)) {
		while (now > max && atomic_cmpxchg(&c->max_below, max, now) != max)
			max = atomic_read(&c->max_below);
	}
	/* Parked, holding its stack, while the floor is up. */
	do
		kgo_sleep(2 * NSEC_PER_MSEC);
	while (READ_ONCE(c->below));
	atomic_dec(&c->running);
	if (atomic_inc_return(&c->done) == FLOOR_GS)
		complete(&c->all);
}

static void floor_spawner(void *arg)
{
	struct floor_ctx *c = arg;
	int i;

	for (i = 0; i < FLOOR_GS; i++)
		c->spawned += kgo_go(floor_g, c, GFP_KERNEL) > 0;
	/*
	 * None ran yet: this G holds the only P. The floor goes up. Below
	 * it, only stacks that exist may be used: the P's cache and the
	 * pool (stack.c) hold them (the other Ps' caches, out of reach).
	 */
	c->cached = kgo_stacks_cached();
	WRITE_ONCE(c->below, true);
	kgo_floor_set(2 * totalram_pages());
	c->refused = kgo_go(floor_g, c, GFP_KERNEL);
	kgo_sleep(50 * NSEC_PER_MSEC);	/* they run, as far as stacks go */
	c->max_waiting = READ_ONCE(kgo_sched.nstackwait);
	WRITE_ONCE(c->below, false);
	kgo_floor_set(c->floor);
	wait_for_completion(&c->all);	/* its M sleeps: the P goes on */
}

static void kgo_floor_test(struct kunit *test)
{
	struct floor_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct kgo_task t = { .kind = KGO_TASK_NOP };
	struct kgo_session *s = kgo_session_create();
	struct kgo_g *g;
	u64 used;

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	init_completion(&c->all);
	c->floor = kgo_floor_set(totalram_pages());
	KUNIT_EXPECT_TRUE(test, kgo_floor_below());
	g = kgo_session_submit_one(s, &t, NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(g), -ENOMEM);
	kgo_floor_set(c->floor);
	kgo_session_close(s);

	used = kgo_budget_used_bytes();
	/*
	 * No stacks cached, so that the floor leaves none to run on: the
	 * pool (stack.c) may hold more than FLOOR_GS after earlier tests.
	 */
	kgo_stack_shrink(ULONG_MAX);
	kgo_gomaxprocs(1);
	KUNIT_ASSERT_EQ(test, kgo_test_run_in_g(floor_spawner, c, LONG_MS), 0);
	kunit_info(test, "%d spawned; below the floor at most %d ran at once, %u waited; %ld stacks cached\n",
		   c->spawned, atomic_read(&c->max_below), c->max_waiting, c->cached);
	KUNIT_EXPECT_EQ(test, c->spawned, FLOOR_GS);
	KUNIT_EXPECT_EQ(test, c->refused, -ENOMEM);
	KUNIT_EXPECT_LE(test, (long)atomic_read(&c->max_below), c->cached);
	KUNIT_EXPECT_GT(test, c->max_waiting, 0u);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->done), FLOOR_GS);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kgo_sched.nstackwait), 0u);
	KUNIT_EXPECT_EQ(test, kgo_budget_used_bytes(), used);
}

static struct kunit_case kgo_floor_cases[] = {
	KUNIT_CASE(kgo_floor_test),
	{}
};

static struct kunit_suite kgo_floor_suite = {
	.name = "kgo_floor",
	.init = floor_init,
	.exit = floor_exit,
	.test_cases = kgo_floor_cases,
};

kunit_test_suite(kgo_floor_suite);
