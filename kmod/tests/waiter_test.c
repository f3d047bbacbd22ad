// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_waiter: the timeout timer of a blocked goroutine or thread, and
 * kgo_sleep(): a timeout fires, a wake-up before it cancels it, a sleep
 * lasts as long as asked.
 */

#include <kunit/test.h>
#include <linux/ktime.h>

#include <kgo.h>
#include "tests/run_g.h"

#define LONG_MS		60000
#define MS		((u64)NSEC_PER_MSEC)

static struct kgo_chan *mkchan(struct kunit *test, size_t size, unsigned int cap)
{
	struct kgo_chan *c = kgo_chan_create(size, cap, GFP_KERNEL);

	KUNIT_ASSERT_FALSE(test, IS_ERR(c));
	return c;
}

struct time_ctx {
	struct kgo_chan *c;
	int ret;
	u64 elapsed;
};

static void time_recv_timeout(void *arg)
{
	struct time_ctx *t = arg;
	u64 t0 = ktime_get_ns();
	int v;

	t->ret = kgo_chan_recv(t->c, &v, NULL, 20 * MS);
	t->elapsed = ktime_get_ns() - t0;
}

static void kgo_waiter_timeout_fires_test(struct kunit *test)
{
	struct time_ctx *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	u64 t0;
	int v;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->c = mkchan(test, sizeof(int), 0);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(time_recv_timeout, t, LONG_MS));
	KUNIT_EXPECT_EQ(test, t->ret, -ETIMEDOUT);
	KUNIT_EXPECT_GE(test, t->elapsed, 20 * MS);
	/* The same from a thread. */
	t0 = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, kgo_chan_send(t->c, &v, 20 * MS), -ETIMEDOUT);
	KUNIT_EXPECT_GE(test, ktime_get_ns() - t0, 20 * MS);
	kgo_chan_destroy(t->c);
}

static void time_late_sender(void *arg)
{
	struct time_ctx *t = arg;
	int v = 1;

	kgo_sleep(10 * MS);
	kgo_chan_send(t->c, &v, KGO_FOREVER);
}

static void time_long_recv(void *arg)
{
	struct time_ctx *t = arg;
	u64 t0 = ktime_get_ns();
	int v;

	t->ret = kgo_chan_recv(t->c, &v, NULL, 30ULL * NSEC_PER_SEC);
	t->elapsed = ktime_get_ns() - t0;
	/* The cancelled timer must not wake this goroutine later. */
	kgo_sleep(50 * MS);
}

/* A wake before the timeout cancels the timer. */
static void kgo_waiter_timer_cancelled_test(struct kunit *test)
{
	struct time_ctx *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->c = mkchan(test, sizeof(int), 0);
	KUNIT_ASSERT_GT(test, kgo_go(time_late_sender, t, GFP_KERNEL), 0LL);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(time_long_recv, t, LONG_MS));
	KUNIT_EXPECT_EQ(test, t->ret, 0);
	KUNIT_EXPECT_LT(test, t->elapsed, 30ULL * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
	kgo_chan_destroy(t->c);
}

static void time_sleeper(void *arg)
{
	struct time_ctx *t = arg;
	u64 t0 = ktime_get_ns();

	kgo_sleep(20 * MS);
	t->elapsed = ktime_get_ns() - t0;
}

static void kgo_waiter_sleep_test(struct kunit *test)
{
	struct time_ctx *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	u64 t0 = ktime_get_ns();

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(time_sleeper, t, LONG_MS));
	KUNIT_EXPECT_GE(test, t->elapsed, 20 * MS);
	t0 = ktime_get_ns();
	kgo_sleep(20 * MS);	/* a thread */
	KUNIT_EXPECT_GE(test, ktime_get_ns() - t0, 20 * MS);
}

static struct kunit_case kgo_waiter_cases[] = {
	KUNIT_CASE(kgo_waiter_sleep_test),
	KUNIT_CASE(kgo_waiter_timeout_fires_test),
	KUNIT_CASE(kgo_waiter_timer_cancelled_test),
	{}
};

static struct kunit_suite kgo_waiter_suite = {
	.name = "kgo_waiter",
	.test_cases = kgo_waiter_cases,
};

kunit_test_suite(kgo_waiter_suite);
