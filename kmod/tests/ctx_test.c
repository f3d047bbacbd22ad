// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: contexts (ctx.c). A cancellation reaches children, wakes a
 * sleeper at once whether it is a goroutine, a goroutine's thread or a
 * plain thread, and comes from any context (an hrtimer here, a section
 * that may not sleep).
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

#include <kgo.h>
#include "compat.h"
#include "ctx.h"
#include "tests/run_g.h"

#define MS		((u64)NSEC_PER_MSEC)
/* A sleep nobody waits out: a cancel must end it. */
#define LONG_NS		(30ULL * NSEC_PER_SEC)

static void kgo_ctx_chain_test(struct kunit *test)
{
	struct kgo_ctx c[KGO_CTX_DEPTH_MAX + 1];
	int i;

	KUNIT_EXPECT_EQ(test, kgo_ctx_init(&c[0], NULL), 0);
	for (i = 1; i < KGO_CTX_DEPTH_MAX; i++)
		KUNIT_EXPECT_EQ(test, kgo_ctx_init(&c[i], &c[i - 1]), 0);
	/* One too deep: refused, and a root of its own. */
	KUNIT_EXPECT_EQ(test, kgo_ctx_init(&c[i], &c[i - 1]), -EINVAL);
	KUNIT_EXPECT_EQ(test, kgo_ctx_err(&c[KGO_CTX_DEPTH_MAX - 1]), 0);

	/* A child's cancel stays below it. */
	KUNIT_EXPECT_TRUE(test, kgo_ctx_cancel(&c[2], -ETIMEDOUT));
	KUNIT_EXPECT_FALSE(test, kgo_ctx_cancel(&c[2], -ECANCELED));
	KUNIT_EXPECT_EQ(test, kgo_ctx_err(&c[1]), 0);
	KUNIT_EXPECT_EQ(test, kgo_ctx_err(&c[2]), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, kgo_ctx_err(&c[3]), -ETIMEDOUT);
	/* The root's reaches every descendant not cancelled on its own. */
	KUNIT_EXPECT_TRUE(test, kgo_ctx_cancel(&c[0], -ECANCELED));
	KUNIT_EXPECT_EQ(test, kgo_ctx_err(&c[1]), -ECANCELED);
	KUNIT_EXPECT_EQ(test, kgo_ctx_err(&c[3]), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, kgo_ctx_err(&c[KGO_CTX_DEPTH_MAX]), 0);
	/* Already cancelled: no sleep at all. */
	KUNIT_EXPECT_EQ(test, kgo_ctx_sleep(&c[1], LONG_NS), -ECANCELED);
	KUNIT_EXPECT_EQ(test, kgo_ctx_sleep(&c[1], 0), -ECANCELED);
}

struct sleep_case {
	struct kgo_ctx root, mid, leaf;
	struct hrtimer timer;
	struct kgo_ctx *target;	/* what the timer cancels */
	bool park;		/* how the goroutine sleeps */
	u64 ns;			/* how long it asks for */
	int ret;
	u64 slept;
};

static enum hrtimer_restart cancel_fn(struct hrtimer *t)
{
	struct sleep_case *x = container_of(t, struct sleep_case, timer);

	kgo_ctx_cancel(x->target, -ECANCELED);
	return HRTIMER_NORESTART;
}

static void sleep_body(void *arg)
{
	struct sleep_case *x = arg;
	u64 t0 = ktime_get_ns();

	x->ret = __kgo_ctx_sleep(&x->leaf, x->ns, x->park);
	x->slept = ktime_get_ns() - t0;
}

/*
 * Sleeps @ns on a grandchild; an hrtimer cancels @target after 20 ms if
 * a cancel is wanted, else only long after the sleep's end: a host that
 * stalls the guest for 20 ms would otherwise cancel a 2 ms sleep too.
 */
static void run_sleep_case(struct kunit *test, struct kgo_ctx *(*pick)(struct sleep_case *x),
			   bool park, bool in_g, u64 ns, int want)
{
	struct sleep_case *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	u64 cancel_ns = want ? 20 * MS : LONG_NS;

	KUNIT_ASSERT_NOT_NULL(test, x);
	kgo_ctx_init(&x->root, NULL);
	kgo_ctx_init(&x->mid, &x->root);
	kgo_ctx_init(&x->leaf, &x->mid);
	x->target = pick(x);
	x->park = park;
	x->ns = ns;
	kgo_hrtimer_setup(&x->timer, cancel_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	hrtimer_start(&x->timer, ns_to_ktime(cancel_ns), HRTIMER_MODE_REL_HARD);
	if (in_g)
		KUNIT_ASSERT_EQ(test, kgo_test_run_in_g(sleep_body, x, 60000), 0);
	else
		sleep_body(x);
	hrtimer_cancel(&x->timer);
	KUNIT_EXPECT_EQ(test, x->ret, want);
	/*
	 * Cancelled: ended before its own time, so by the cancel. How soon
	 * after is the host's to say as much as kgo's: logged.
	 */
	if (want)
		KUNIT_EXPECT_LT(test, x->slept, ns);
	else
		KUNIT_EXPECT_GE(test, x->slept, ns);
	kunit_info(test, "slept %llu us of %llu, ret %d\n", x->slept / 1000, ns / 1000, x->ret);
}

static struct kgo_ctx *pick_root(struct sleep_case *x) { return &x->root; }
static struct kgo_ctx *pick_mid(struct sleep_case *x) { return &x->mid; }
static struct kgo_ctx *pick_leaf(struct sleep_case *x) { return &x->leaf; }

/* A parked goroutine, woken by a cancel of each link of its chain. */
static void kgo_ctx_sleep_g_test(struct kunit *test)
{
	run_sleep_case(test, pick_leaf, true, true, LONG_NS, -ECANCELED);
	run_sleep_case(test, pick_mid, true, true, LONG_NS, -ECANCELED);
	run_sleep_case(test, pick_root, true, true, LONG_NS, -ECANCELED);
}

/* A goroutine asleep in the kernel (its P handed off), as BLOCK tasks do. */
static void kgo_ctx_sleep_blocking_test(struct kunit *test)
{
	run_sleep_case(test, pick_root, false, true, LONG_NS, -ECANCELED);
}

/* Not a goroutine: this thread sleeps. */
static void kgo_ctx_sleep_thread_test(struct kunit *test)
{
	run_sleep_case(test, pick_mid, true, false, LONG_NS, -ECANCELED);
}

/* A sleep shorter than the cancel's delay ends on time, with 0. */
static void kgo_ctx_sleep_timeout_test(struct kunit *test)
{
	run_sleep_case(test, pick_root, true, true, 2 * MS, 0);
	run_sleep_case(test, pick_root, true, false, 2 * MS, 0);
}

/* Many sleepers on one context: one cancel wakes every one. */
struct herd {
	struct kgo_ctx ctx;
	struct kgo_waitgroup wg;
	atomic_t cancelled;
};

static void herd_body(void *arg)
{
	struct herd *h = arg;

	if (kgo_ctx_sleep(&h->ctx, LONG_NS) == -ECANCELED)
		atomic_inc(&h->cancelled);
	kgo_wg_done(&h->wg);
}

static void kgo_ctx_herd_test(struct kunit *test)
{
	struct herd *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	const int n = 200;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, h);
	kgo_ctx_init(&h->ctx, NULL);
	kgo_wg_init(&h->wg);
	kgo_wg_add(&h->wg, n);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_GT(test, kgo_go(herd_body, h, GFP_KERNEL), 0LL);
	kgo_sleep(20 * MS);
	KUNIT_EXPECT_TRUE(test, kgo_ctx_cancel(&h->ctx, -ECANCELED));
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&h->wg, 60ULL * NSEC_PER_SEC), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&h->cancelled), n);
}

/*
 * kgo_ctx_cancel() never sleeps, however many sleepers it wakes: its
 * caller may hold a spinlock (session.c holds session->lock), which a
 * kernel without CONFIG_PREEMPT_COUNT cannot see, so no check of kgo's
 * could tell that a cond_resched() between two batches of wake-ups
 * (KGO_CTX_CANCEL_BATCH, 64) would switch out the lock's holder. The
 * case stands in for that caller with non_block_start(): a section that
 * may not sleep, which neither preempt_count() nor kgo_in_atomic() shows.
 * A cond_resched() in it is "BUG: sleeping function called from invalid
 * context" on a CONFIG_DEBUG_ATOMIC_SLEEP kernel, and any such report in
 * the console fails the run (tools/vm/run.sh). A real spinlock would
 * prove nothing on the debug kernel: its PREEMPT_COUNT shows the lock.
 */
#define CANCEL_SLEEPERS	(3 * 64 + 1)

/* Started with kgo_go_wg(): its end is counted on h->wg. */
static void herd_forever_body(void *arg)
{
	struct herd *h = arg;

	if (kgo_ctx_sleep(&h->ctx, KGO_FOREVER) == -ECANCELED)
		atomic_inc(&h->cancelled);
}

/* Sleepers queued on @ctx itself (a chain of one: one node each). */
static int ctx_nsleepers(struct kgo_ctx *ctx)
{
	struct list_head *pos;
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&ctx->lock, flags);
	list_for_each(pos, &ctx->waiters)
		n++;
	spin_unlock_irqrestore(&ctx->lock, flags);
	return n;
}

static void kgo_ctx_cancel_never_sleeps_test(struct kunit *test)
{
	struct herd *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	/* A bound on a hang only: every sleeper queues in far less. */
	unsigned long end = jiffies + msecs_to_jiffies(60000);
	int i, n = 0;

	KUNIT_ASSERT_NOT_NULL(test, h);
	if (!IS_ENABLED(CONFIG_DEBUG_ATOMIC_SLEEP))
		kunit_info(test, "no CONFIG_DEBUG_ATOMIC_SLEEP: a sleep here goes unseen\n");
	kgo_ctx_init(&h->ctx, NULL);
	kgo_wg_init(&h->wg);
	/* Those started must be cancelled, even if not all could be. */
	for (i = 0; i < CANCEL_SLEEPERS; i++)
		if (kgo_go_wg(&h->wg, herd_forever_body, h, GFP_KERNEL) <= 0)
			break;
	KUNIT_EXPECT_EQ(test, i, CANCEL_SLEEPERS);
	/* Every one asleep on the context: more than two batches to wake. */
	while ((n = ctx_nsleepers(&h->ctx)) < i && time_before(jiffies, end))
		msleep(1);
	KUNIT_EXPECT_EQ(test, n, CANCEL_SLEEPERS);

	non_block_start();
	KUNIT_EXPECT_TRUE(test, kgo_ctx_cancel(&h->ctx, -ECANCELED));
	non_block_end();

	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&h->wg, 60ULL * NSEC_PER_SEC), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&h->cancelled), CANCEL_SLEEPERS);
}

static struct kunit_case kgo_ctx_cases[] = {
	KUNIT_CASE(kgo_ctx_chain_test),
	KUNIT_CASE(kgo_ctx_sleep_g_test),
	KUNIT_CASE(kgo_ctx_sleep_blocking_test),
	KUNIT_CASE(kgo_ctx_sleep_thread_test),
	KUNIT_CASE(kgo_ctx_sleep_timeout_test),
	KUNIT_CASE(kgo_ctx_herd_test),
	KUNIT_CASE(kgo_ctx_cancel_never_sleeps_test),
	{}
};

static struct kunit_suite kgo_ctx_suite = {
	.name = "kgo_ctx",
	.test_cases = kgo_ctx_cases,
};

kunit_test_suite(kgo_ctx_suite);
