// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_runq: the local run queue protocol, on Ps of a private scheduler
 * that no M runs, with G structs that are only tokens: nothing here is
 * ever switched to.
 *
 * The fixture's scheduler has a raw lock, as kgo_sched has (sched.c,
 * "Lock order").
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "g.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"

struct runq_fixture {
	struct kgo_sched sched;
	struct kgo_p *p[3];
	struct kgo_g *g;	/* an array of tokens */
	unsigned int ng;
};

static int runq_test_init(struct kunit *test)
{
	struct runq_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	int i;

	if (!f)
		return -ENOMEM;
	raw_spin_lock_init(&f->sched.lock);
	f->sched.nprocs = ARRAY_SIZE(f->p);
	f->sched.gomaxprocs = ARRAY_SIZE(f->p);
	for (i = 0; i < ARRAY_SIZE(f->p); i++) {
		f->p[i] = kgo_p_create(&f->sched, i, 0);
		if (!f->p[i])
			return -ENOMEM;
	}
	test->priv = f;
	return 0;
}

static void runq_drain_all(struct runq_fixture *f)
{
	struct kgo_g *g;
	bool inherit;
	int i;

	for (i = 0; i < ARRAY_SIZE(f->p); i++)
		while (kgo_runqget(f->p[i], &inherit))
			;
	while ((g = kgo_gqueue_pop(&f->sched.runq)))
		;
	f->sched.runqsize = 0;
}

static void runq_test_exit(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	int i;

	runq_drain_all(f);
	for (i = 0; i < ARRAY_SIZE(f->p); i++)
		kgo_p_destroy(f->p[i]);
	vfree(f->g);
}

static struct kgo_g *runq_tokens(struct kunit *test, unsigned int n)
{
	struct runq_fixture *f = test->priv;
	unsigned int i;

	f->g = vzalloc(array_size(n, sizeof(*f->g)));
	KUNIT_ASSERT_NOT_NULL(test, f->g);
	f->ng = n;
	for (i = 0; i < n; i++)
		f->g[i].goid = i;
	return f->g;
}

/* Marks tokens as Gs that ran before: they hold a "stack". */
static char runq_stack_token;

static void runq_ran_before(struct kgo_g *g, unsigned int n)
{
	while (n--)
		g[n].stack = &runq_stack_token;
}

static void kgo_runq_fifo_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, 10);
	bool inherit;
	int i;

	KUNIT_EXPECT_TRUE(test, kgo_runqempty(f->p[0]));
	for (i = 0; i < 10; i++)
		kgo_runqput(f->p[0], &g[i], false);
	KUNIT_EXPECT_FALSE(test, kgo_runqempty(f->p[0]));
	KUNIT_EXPECT_EQ(test, kgo_runqlen(f->p[0]), 10u);
	for (i = 0; i < 10; i++) {
		KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(f->p[0], &inherit), &g[i]);
		KUNIT_EXPECT_FALSE(test, inherit);
	}
	KUNIT_EXPECT_NULL(test, kgo_runqget(f->p[0], &inherit));
	KUNIT_EXPECT_TRUE(test, kgo_runqempty(f->p[0]));
}

/* runnext runs first and inherits the slice; a newer one kicks it back. */
static void kgo_runq_runnext_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, 3);
	bool inherit;

	/* Gs that ran before: Go's order (the fresh stack: below). */
	runq_ran_before(g, 3);
	kgo_runqput(f->p[0], &g[0], false);
	kgo_runqput(f->p[0], &g[1], true);
	kgo_runqput(f->p[0], &g[2], true);	/* g1 goes to the tail */
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(f->p[0], &inherit), &g[2]);
	KUNIT_EXPECT_TRUE(test, inherit);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(f->p[0], &inherit), &g[0]);
	KUNIT_EXPECT_FALSE(test, inherit);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(f->p[0], &inherit), &g[1]);
	KUNIT_EXPECT_NULL(test, kgo_runqget(f->p[0], &inherit));
}

/*
 * A G kicked out of runnext that never ran goes to the fresh stack, one
 * that ran before to the ring. The newest fresh G and the ring's head
 * run in the order they were queued; within the stack, newest first.
 * Thieves see none of the fresh stack.
 */
static void kgo_runq_fresh_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, 16);
	struct kgo_p *p = f->p[0];
	static const int order[] = { 4, 3, 2, 1, 0, 5 };
	bool inherit;
	int i;

	runq_ran_before(&g[3], 1);
	runq_ran_before(&g[5], 1);
	KUNIT_EXPECT_FALSE(test, kgo_runqput(p, &g[0], true));
	KUNIT_EXPECT_FALSE(test, kgo_runqput(p, &g[1], true));	/* g0: fresh */
	KUNIT_EXPECT_FALSE(test, kgo_runqput(p, &g[2], true));	/* g1: fresh */
	KUNIT_EXPECT_TRUE(test, kgo_runqput(p, &g[3], false));	/* the ring */
	KUNIT_EXPECT_FALSE(test, kgo_runqput(p, &g[5], true));	/* g2: fresh, after g3 */
	KUNIT_EXPECT_TRUE(test, kgo_runqput(p, &g[4], true));	/* g5 ran: ring */
	KUNIT_EXPECT_EQ(test, kgo_fresh_len(p), 3u);
	KUNIT_EXPECT_EQ(test, kgo_runqlen(p), 6u);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		KUNIT_EXPECT_PTR_EQ_MSG(test, kgo_runqget(p, &inherit), &g[order[i]],
					"take %d", i);
		KUNIT_EXPECT_EQ(test, inherit, i == 0);
	}
	KUNIT_EXPECT_NULL(test, kgo_runqget(p, &inherit));
	KUNIT_EXPECT_TRUE(test, kgo_runqempty_all(p));
	KUNIT_EXPECT_EQ(test, p->stats.fresh_kept, 3ull);

	/* Only a fresh G left: nothing to steal, but work. */
	kgo_runqput(p, &g[6], true);
	kgo_runqput(p, &g[7], true);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[7]);
	KUNIT_EXPECT_TRUE(test, kgo_runqempty(p));
	KUNIT_EXPECT_FALSE(test, kgo_runqempty_all(p));
	KUNIT_EXPECT_NULL(test, kgo_runqsteal(f->p[1], p, true));
	/* A G that yields goes behind it, not ahead (the yield ping-pong). */
	runq_ran_before(&g[7], 1);
	kgo_runqput(p, &g[7], false);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[6]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[7]);

	/* With a P idle, a kicked fresh G goes where that P can steal it. */
	atomic_set(&f->sched.npidle, 1);
	kgo_runqput(p, &g[8], true);
	KUNIT_EXPECT_TRUE(test, kgo_runqput(p, &g[9], true));
	atomic_set(&f->sched.npidle, 0);
	KUNIT_EXPECT_EQ(test, kgo_fresh_len(p), 0u);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqsteal(f->p[1], p, false), &g[8]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[9]);

	/*
	 * With an M spinning and three fresh Gs, a fourth kick sends the
	 * two oldest to the ring, for it; the owner keeps the newest.
	 */
	for (i = 10; i < 14; i++)
		kgo_runqput(p, &g[i], true);
	atomic_set(&f->sched.nmspinning, 1);
	KUNIT_EXPECT_TRUE(test, kgo_runqput(p, &g[14], true));
	atomic_set(&f->sched.nmspinning, 0);
	KUNIT_EXPECT_EQ(test, kgo_fresh_len(p), 2u);
	KUNIT_EXPECT_EQ(test, kgo_runq_ringlen(p), 2u);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[14]);	/* runnext */
	/* The ring's two never ran: they wait behind the fresh stack. */
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[13]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[12]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqsteal(f->p[1], p, false), &g[10]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[11]);
}

/*
 * A full fresh stack sends its older half to the ring; publishing sends
 * the older half for thieves, who take the oldest; the monitor's mark
 * has the oldest run next, ahead of the ring.
 */
static void kgo_runq_fresh_spill_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, 100);
	struct kgo_p *p = f->p[0];
	bool inherit;
	int i;

	/* 66 spawns: 65 kicks, the 65th into a full stack. */
	for (i = 0; i < 66; i++)
		kgo_runqput(p, &g[i], true);
	KUNIT_EXPECT_EQ(test, kgo_fresh_len(p), 33u);
	KUNIT_EXPECT_EQ(test, kgo_runq_ringlen(p), 32u);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[65]);
	/* The spilled ones never ran: they wait behind the stack. */
	for (i = 64; i >= 32; i--)
		KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[i]);
	for (i = 0; i < 32; i++)
		KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[i]);
	KUNIT_EXPECT_NULL(test, kgo_runqget(p, &inherit));

	/* Ten fresh Gs, published: the five oldest to the ring. */
	for (i = 66; i < 77; i++)
		kgo_runqput(p, &g[i], true);
	kgo_fresh_publish(p);
	KUNIT_EXPECT_EQ(test, kgo_fresh_len(p), 5u);
	KUNIT_EXPECT_EQ(test, kgo_runq_ringlen(p), 5u);
	KUNIT_EXPECT_EQ(test, p->stats.fresh_published, 5ull);
	/* A thief takes three: g66..g68, and runs the last. */
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqsteal(f->p[1], p, false), &g[68]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(f->p[1], &inherit), &g[66]);

	/*
	 * The monitor's mark: the ring's head next, which never ran and
	 * would wait behind the stack. Then the stack, newest first, and
	 * the oldest by the mark once the ring is empty.
	 */
	WRITE_ONCE(p->fresh_aged, true);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[76]);	/* runnext */
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[69]);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(p->fresh_aged));
	KUNIT_EXPECT_EQ(test, p->stats.fresh_aged, 1ull);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[75]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[74]);
	WRITE_ONCE(p->fresh_aged, true);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[70]);
	/* Marked with the ring empty: the oldest fresh G. */
	WRITE_ONCE(p->fresh_aged, true);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[71]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[73]);
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(p, &inherit), &g[72]);
	KUNIT_EXPECT_NULL(test, kgo_runqget(p, &inherit));
	KUNIT_EXPECT_EQ(test, p->stats.fresh_aged, 3ull);
}

/* A full ring sends its older half plus the new G to the global queue. */
static void kgo_runq_overflow_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, KGO_RUNQ_SIZE + 1), *x;
	bool inherit;
	int i;

	for (i = 0; i <= KGO_RUNQ_SIZE; i++)
		kgo_runqput(f->p[0], &g[i], false);
	KUNIT_EXPECT_EQ(test, kgo_runqlen(f->p[0]), (u32)KGO_RUNQ_SIZE / 2);
	KUNIT_EXPECT_EQ(test, f->sched.runqsize, (u32)KGO_RUNQ_SIZE / 2 + 1);
	for (i = 0; i < KGO_RUNQ_SIZE / 2; i++) {
		x = kgo_gqueue_pop(&f->sched.runq);
		KUNIT_EXPECT_PTR_EQ(test, x, &g[i]);
	}
	KUNIT_EXPECT_PTR_EQ(test, kgo_gqueue_pop(&f->sched.runq), &g[KGO_RUNQ_SIZE]);
	KUNIT_EXPECT_NULL(test, kgo_gqueue_pop(&f->sched.runq));
	f->sched.runqsize = 0;
	for (i = KGO_RUNQ_SIZE / 2; i < KGO_RUNQ_SIZE; i++)
		KUNIT_EXPECT_PTR_EQ(test, kgo_runqget(f->p[0], &inherit), &g[i]);
}

/* Go's TestSchedLocalQueueSteal: half is stolen, nothing lost or doubled. */
static void kgo_runq_steal_half_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, KGO_RUNQ_SIZE), *x;
	unsigned int *seen = kunit_kcalloc(test, KGO_RUNQ_SIZE, sizeof(*seen), GFP_KERNEL);
	bool inherit;
	int i, j, s;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	for (i = 0; i < KGO_RUNQ_SIZE; i++) {
		memset(seen, 0, KGO_RUNQ_SIZE * sizeof(*seen));
		for (j = 0; j < i; j++)
			kgo_runqput(f->p[0], &g[j], false);
		s = 0;
		x = kgo_runqsteal(f->p[1], f->p[0], true);
		if (x) {
			s++;
			seen[x->goid]++;
		}
		while ((x = kgo_runqget(f->p[1], &inherit))) {
			s++;
			seen[x->goid]++;
		}
		while ((x = kgo_runqget(f->p[0], &inherit)))
			seen[x->goid]++;
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_EQ_MSG(test, seen[j], 1u, "i=%d g=%d", i, j);
		KUNIT_EXPECT_TRUE_MSG(test, s == i / 2 || s == i / 2 + 1,
				      "i=%d stole %d", i, s);
	}
}

/* Thieves leave runnext alone except on their last pass. */
static void kgo_runq_runnext_steal_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, 1);

	kgo_runqput(f->p[0], &g[0], true);
	KUNIT_EXPECT_NULL(test, kgo_runqsteal(f->p[1], f->p[0], false));
	KUNIT_EXPECT_FALSE(test, kgo_runqempty(f->p[0]));
	KUNIT_EXPECT_PTR_EQ(test, kgo_runqsteal(f->p[1], f->p[0], true), &g[0]);
	KUNIT_EXPECT_TRUE(test, kgo_runqempty(f->p[0]));
}

/*
 * Go's TestSchedLocalQueueEmpty: while the owner holds at least one G
 * throughout, moving Gs between runnext and the ring, an observer must
 * never see the queue empty.
 */
struct runq_empty_ctx {
	struct kgo_p *p;
	atomic_t ready;
	atomic_t stop;
	atomic_t empties;
	atomic_t rounds;
	int first_round;	/* diagnostics of the first empty sighting */
	u32 seen_h, seen_t;
	void *seen_next;
	struct completion done;
};

static int runq_empty_observer(void *arg)
{
	struct runq_empty_ctx *c = arg;

	while (!atomic_read(&c->stop)) {
		int r = atomic_read(&c->rounds);

		/* Meet the owner, then look while it moves things around. */
		atomic_inc(&c->ready);
		while (atomic_read(&c->ready) != 2 && !atomic_read(&c->stop))
			cpu_relax();
		if (atomic_read(&c->stop))
			break;	/* the owner is done and the queue empty */
		if (kgo_runqempty(c->p) && atomic_inc_return(&c->empties) == 1) {
			c->first_round = r;
			c->seen_h = READ_ONCE(c->p->runqhead);
			c->seen_t = READ_ONCE(c->p->runqtail);
			c->seen_next = READ_ONCE(c->p->runnext);
		}
		atomic_set(&c->ready, 3);
		while (atomic_read(&c->rounds) == r && !atomic_read(&c->stop))
			cpu_relax();
	}
	complete(&c->done);
	return 0;
}

static void kgo_runq_never_spuriously_empty_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, 2);
	struct runq_empty_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct task_struct *t;
	bool inherit;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	/* Gs that ran before: a kicked one goes to the ring, as in Go. */
	runq_ran_before(g, 2);
	c->p = f->p[0];
	init_completion(&c->done);
	t = kthread_run(runq_empty_observer, c, "kgo-runq-observer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < 10000; i++) {
		bool next0 = !(i & 1), next1 = !(i & 2);

		kgo_runqput(c->p, &g[0], next0);
		atomic_inc(&c->ready);
		while (atomic_read(&c->ready) < 2)
			cpu_relax();
		kgo_runqput(c->p, &g[1], next1);
		kgo_runqget(c->p, &inherit);
		while (atomic_read(&c->ready) != 3)
			cpu_relax();
		kgo_runqget(c->p, &inherit);
		atomic_set(&c->ready, 0);
		atomic_inc(&c->rounds);
	}
	atomic_set(&c->stop, 1);
	wait_for_completion(&c->done);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->empties), 0,
			    "first at round %d: head %u tail %u runnext %p",
			    c->first_round, c->seen_h, c->seen_t, c->seen_next);
	KUNIT_EXPECT_TRUE(test, kgo_runqempty(c->p));
}

/*
 * The owner puts and gets 100 000 Gs while two thieves steal from it
 * into their own Ps and run what they stole: every G is consumed once.
 */
#define STRESS_GS	100000

struct runq_thief {
	struct runq_fixture *f;
	struct kgo_p *mine;
	atomic_t *consumed;
	atomic_t *stop;
	unsigned long steals;
	struct completion done;
};

static void runq_consume(atomic_t *consumed, struct kgo_g *g)
{
	atomic_inc(&consumed[g->goid]);
}

static int runq_thief_fn(void *arg)
{
	struct runq_thief *t = arg;
	struct kgo_g *g;
	bool inherit;

	while (!atomic_read(t->stop)) {
		g = kgo_runqsteal(t->mine, t->f->p[0], true);
		if (g) {
			t->steals++;
			runq_consume(t->consumed, g);
			while ((g = kgo_runqget(t->mine, &inherit)))
				runq_consume(t->consumed, g);
		}
		cond_resched();
	}
	complete(&t->done);
	return 0;
}

static void kgo_runq_stress_test(struct kunit *test)
{
	struct runq_fixture *f = test->priv;
	struct kgo_g *g = runq_tokens(test, STRESS_GS), *x;
	atomic_t *consumed = vzalloc(array_size(STRESS_GS, sizeof(atomic_t)));
	struct runq_thief thief[2] = {};
	atomic_t stop = ATOMIC_INIT(0);
	unsigned int i, bad = 0;
	bool inherit;

	KUNIT_ASSERT_NOT_NULL(test, consumed);
	for (i = 0; i < 2; i++) {
		struct task_struct *t;

		thief[i] = (struct runq_thief){ .f = f, .mine = f->p[i + 1],
						.consumed = consumed, .stop = &stop };
		init_completion(&thief[i].done);
		t = kthread_run(runq_thief_fn, &thief[i], "kgo-runq-thief%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	for (i = 0; i < STRESS_GS; i++) {
		kgo_runqput(f->p[0], &g[i], i % 3 == 0);
		x = i % 2 ? kgo_runqget(f->p[0], &inherit) : NULL;
		if (x)
			runq_consume(consumed, x);
		if (i % 1024 == 0)
			cond_resched();
	}
	atomic_set(&stop, 1);
	for (i = 0; i < 2; i++)
		wait_for_completion(&thief[i].done);
	/* What is left: the owner's queue and the global queue (overflow). */
	while ((x = kgo_runqget(f->p[0], &inherit)))
		runq_consume(consumed, x);
	while ((x = kgo_gqueue_pop(&f->sched.runq)))
		runq_consume(consumed, x);
	f->sched.runqsize = 0;
	for (i = 0; i < STRESS_GS; i++)
		if (atomic_read(&consumed[i]) != 1 && bad++ < 5)
			KUNIT_FAIL(test, "G %u consumed %d times", i, atomic_read(&consumed[i]));
	KUNIT_EXPECT_EQ(test, bad, 0u);
	kunit_info(test, "thieves stole %lu and %lu times\n", thief[0].steals, thief[1].steals);
	KUNIT_EXPECT_GT(test, thief[0].steals + thief[1].steals, 0ul);
	vfree(consumed);
}

static struct kunit_case kgo_runq_cases[] = {
	KUNIT_CASE(kgo_runq_fifo_test),
	KUNIT_CASE(kgo_runq_runnext_test),
	KUNIT_CASE(kgo_runq_fresh_test),
	KUNIT_CASE(kgo_runq_fresh_spill_test),
	KUNIT_CASE(kgo_runq_overflow_test),
	KUNIT_CASE(kgo_runq_steal_half_test),
	KUNIT_CASE(kgo_runq_runnext_steal_test),
	KUNIT_CASE(kgo_runq_never_spuriously_empty_test),
	KUNIT_CASE(kgo_runq_stress_test),
	{}
};

static struct kunit_suite kgo_runq_suite = {
	.name = "kgo_runq",
	.init = runq_test_init,
	.exit = runq_test_exit,
	.test_cases = kgo_runq_cases,
};

kunit_test_suite(kgo_runq_suite);
