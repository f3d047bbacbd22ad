// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_sync: kgo_mutex, kgo_once and the WaitGroup's timeout.
 * The _killable waits: a fatal signal ends a thread's wait, and the
 * object it waited on is left as if the thread had never come.
 *
 * Named for sync.c; Go's sync package is two files here, and the
 * WaitGroup cases test waitgroup.c.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include <kgo.h>
#include "compat.h"
#include "tests/run_g.h"

#define MS	((u64)NSEC_PER_MSEC)

struct mutex_ctx {
	struct kgo_mutex m;
	long counter;
	int holders, max_holders;
	atomic_t lock_errs;	/* kgo_mutex_lock() failures: none here */
	struct kgo_waitgroup wg;
};

/* Holds the mutex across yields: others must park, not spin or barge. */
static void mutex_worker(void *arg)
{
	struct mutex_ctx *x = arg;
	int i;

	for (i = 0; i < 100; i++) {
		if (kgo_mutex_lock(&x->m)) {
			atomic_inc(&x->lock_errs);
			continue;
		}
		x->holders++;
		x->max_holders = max(x->max_holders, x->holders);
		kgo_yield();
		x->counter++;
		x->holders--;
		kgo_mutex_unlock(&x->m);
	}
	kgo_wg_done(&x->wg);
}

static void kgo_sync_mutex_test(struct kunit *test)
{
	struct mutex_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, x);
	kgo_mutex_init(&x->m);
	kgo_wg_init(&x->wg);
	kgo_wg_add(&x->wg, 16);
	for (i = 0; i < 16; i++)
		KUNIT_ASSERT_GT(test, kgo_go(mutex_worker, x, GFP_KERNEL), 0LL);
	/* This thread takes it too, among the goroutines. */
	for (i = 0; i < 50; i++) {
		KUNIT_ASSERT_EQ(test, kgo_mutex_lock(&x->m), 0);
		x->counter++;
		kgo_mutex_unlock(&x->m);
	}
	KUNIT_EXPECT_EQ(test, kgo_wg_wait(&x->wg), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->lock_errs), 0);
	KUNIT_EXPECT_EQ(test, x->counter, 16L * 100 + 50);
	KUNIT_EXPECT_EQ(test, x->max_holders, 1);
	KUNIT_EXPECT_TRUE(test, kgo_mutex_trylock(&x->m));
	kgo_mutex_unlock(&x->m);
}

static void mutex_try_timeout(void *arg)
{
	struct mutex_ctx *x = arg;
	u64 t0 = ktime_get_ns();

	x->holders = kgo_mutex_lock_timeout(&x->m, 20 * MS);
	x->counter = ktime_get_ns() - t0;
}

static void kgo_sync_mutex_timeout_test(struct kunit *test)
{
	struct mutex_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	kgo_mutex_init(&x->m);
	KUNIT_ASSERT_EQ(test, kgo_mutex_lock(&x->m), 0);
	KUNIT_EXPECT_FALSE(test, kgo_mutex_trylock(&x->m));
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(mutex_try_timeout, x, 60000));
	KUNIT_EXPECT_EQ(test, x->holders, -ETIMEDOUT);
	KUNIT_EXPECT_GE(test, x->counter, (long)(20 * MS));
	kgo_mutex_unlock(&x->m);
	/* The timed-out waiter left no trace: the mutex is free. */
	KUNIT_EXPECT_TRUE(test, kgo_mutex_trylock(&x->m));
	kgo_mutex_unlock(&x->m);
}

static atomic_t once_calls;

static void once_fn(void *arg)
{
	atomic_inc(&once_calls);
	kgo_sleep(5 * MS);	/* others arrive while it runs */
}

struct once_ctx {
	struct kgo_once once;
	atomic_t saw_done;
	struct kgo_waitgroup wg;
};

static void once_worker(void *arg)
{
	struct once_ctx *o = arg;

	if (!kgo_once_do(&o->once, once_fn, NULL) && atomic_read(&once_calls) == 1)
		atomic_inc(&o->saw_done);
	kgo_wg_done(&o->wg);
}

static void kgo_sync_once_test(struct kunit *test)
{
	struct once_ctx *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, o);
	kgo_mutex_init(&o->once.m);
	atomic_set(&once_calls, 0);
	kgo_wg_init(&o->wg);
	kgo_wg_add(&o->wg, 32);
	for (i = 0; i < 32; i++)
		KUNIT_ASSERT_GT(test, kgo_go(once_worker, o, GFP_KERNEL), 0LL);
	kgo_wg_wait(&o->wg);
	KUNIT_EXPECT_EQ(test, atomic_read(&once_calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->saw_done), 32);
}

struct wgt_ctx {
	struct kgo_waitgroup wg;
	int first, second;
};

static void wgt_waiter(void *arg)
{
	struct wgt_ctx *x = arg;

	x->first = kgo_wg_wait_timeout(&x->wg, 10 * MS);
	x->second = kgo_wg_wait_timeout(&x->wg, KGO_NOWAIT);
}

static void kgo_sync_wg_timeout_test(struct kunit *test)
{
	struct wgt_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	kgo_wg_init(&x->wg);
	kgo_wg_add(&x->wg, 1);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(wgt_waiter, x, 60000));
	KUNIT_EXPECT_EQ(test, x->first, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, x->second, -EAGAIN);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x->wg, 5 * MS), -ETIMEDOUT);
	kgo_wg_done(&x->wg);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x->wg, KGO_NOWAIT), 0);
}

/*
 * kgo_go_wg(): the count holds while the function runs, however it ends
 * (a return or kgo_exit()), and the wait returns once every function has
 * ended, with nothing left to run in it.
 */
#define GOWG_N	8

struct gowg_ctx {
	struct kgo_waitgroup wg;
	int held[GOWG_N];	/* a NOWAIT wait from inside the function */
	bool left[GOWG_N];	/* its last store before it ended */
};

struct gowg_arg {
	struct gowg_ctx *x;
	int i;
};

static void gowg_worker(void *arg)
{
	struct gowg_arg *a = arg;
	struct gowg_ctx *x = a->x;

	kgo_sleep(2 * MS);	/* so the test thread is waiting by now */
	x->held[a->i] = kgo_wg_wait_timeout(&x->wg, KGO_NOWAIT);
	WRITE_ONCE(x->left[a->i], true);
	if (a->i & 1)
		kgo_exit();
}

static void kgo_sync_go_wg_test(struct kunit *test)
{
	struct gowg_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct gowg_arg *a = kunit_kcalloc(test, GOWG_N, sizeof(*a), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_ASSERT_NOT_NULL(test, a);
	kgo_wg_init(&x->wg);
	for (i = 0; i < GOWG_N; i++) {
		a[i].x = x;
		a[i].i = i;
		KUNIT_ASSERT_GT(test, kgo_go_wg(&x->wg, gowg_worker, &a[i], GFP_KERNEL), 0);
	}
	KUNIT_ASSERT_EQ(test, kgo_wg_wait_timeout(&x->wg, 5000 * MS), 0);
	for (i = 0; i < GOWG_N; i++) {
		KUNIT_EXPECT_EQ(test, x->held[i], -EAGAIN);
		KUNIT_EXPECT_TRUE(test, x->left[i]);
	}
	/* Every done was kgo's: one more of ours would go below zero. */
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x->wg, KGO_NOWAIT), 0);
}

/*
 * The WaitGroup's lock-free adds against its waiters (waitgroup.c):
 * rounds of two goroutines, each done once, with a thread and then a
 * goroutine waiting; a wait never returns before both are done, and
 * never misses them. The goroutines run on both Ps while the waiter
 * sets its flag, which is the race the flag's protocol settles.
 */
#define WGR_ROUNDS	2000

struct wgr_ctx {
	struct kgo_waitgroup wg;
	atomic_t work;
	int early;		/* waits that returned before both were done */
	int errors;
};

static void wgr_worker(void *arg)
{
	struct wgr_ctx *x = arg;

	atomic_inc(&x->work);
	kgo_wg_done(&x->wg);
}

static void wgr_rounds(void *arg)
{
	struct wgr_ctx *x = arg;
	int i, k;

	for (i = 0; i < WGR_ROUNDS; i++) {
		kgo_wg_add(&x->wg, 2);
		for (k = 0; k < 2; k++) {
			if (kgo_go(wgr_worker, x, GFP_KERNEL) < 0) {
				x->errors++;
				kgo_wg_done(&x->wg);
				atomic_inc(&x->work);
			}
		}
		/* A lost wake-up times out instead of hanging the run. */
		if (kgo_wg_wait_timeout(&x->wg, 5000 * MS)) {
			x->errors++;
			break;
		}
		if (atomic_read(&x->work) != 2 * (i + 1))
			x->early++;
		atomic_set(&x->work, 2 * (i + 1));
	}
}

static void kgo_sync_wg_race_test(struct kunit *test)
{
	struct wgr_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	kgo_wg_init(&x->wg);
	wgr_rounds(x);				/* from a thread */
	atomic_set(&x->work, 0);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(wgr_rounds, x, 60000));
	KUNIT_EXPECT_EQ(test, x->errors, 0);
	KUNIT_EXPECT_EQ(test, x->early, 0);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x->wg, KGO_NOWAIT), 0);
}

/*
 * A kthread that takes SIGKILL (kthreads ignore signals unless they
 * allow one) waits killable on one of three objects. The test sends the
 * signal once the thread sleeps on the object: a state, not a time.
 */
enum kill_what { KILL_WG, KILL_MUTEX, KILL_RECV };

struct kill_ctx {
	enum kill_what what;
	struct kgo_waitgroup wg;
	struct kgo_mutex m;
	struct kgo_chan *c;
	struct completion done;
	int ret;
};

static int kill_waiter(void *arg)
{
	struct kill_ctx *x = arg;
	int v;

	allow_signal(SIGKILL);
	switch (x->what) {
	case KILL_WG:
		x->ret = kgo_wg_wait_killable(&x->wg, KGO_FOREVER);
		break;
	case KILL_MUTEX:
		x->ret = kgo_mutex_lock_killable(&x->m, KGO_FOREVER);
		break;
	case KILL_RECV:
		x->ret = kgo_chan_recv_killable(x->c, &v, NULL, KGO_FOREVER);
		break;
	}
	flush_signals(current);
	complete(&x->done);
	while (!kthread_should_stop())
		schedule_timeout_idle(HZ);
	return 0;
}

static void kill_one(struct kunit *test, enum kill_what what)
{
	struct kill_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct task_struct *t;
	int v = 7, i;

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->what = what;
	x->ret = 1;
	init_completion(&x->done);
	kgo_wg_init(&x->wg);
	kgo_wg_add(&x->wg, 1);
	kgo_mutex_init(&x->m);
	KUNIT_ASSERT_EQ(test, kgo_mutex_lock(&x->m), 0);
	x->c = kgo_chan_create(sizeof(int), 0, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, x->c);

	t = kthread_run(kill_waiter, x, "kgo-kill-waiter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	/*
	 * Asleep killable: only a waiter already on the object's queue
	 * sleeps so (kgo_waiter_block()). The bound is for a hang only.
	 */
	for (i = 0; i < 60 * HZ; i++) {
		if (READ_ONCE(t->__state) == TASK_KILLABLE)
			break;
		schedule_timeout_uninterruptible(1);
	}
	KUNIT_ASSERT_LT(test, i, 60 * HZ);
	send_sig(SIGKILL, t, 1);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&x->done, 60 * HZ) > 0);
	KUNIT_EXPECT_EQ(test, x->ret, -EINTR);

	/* Nothing lost: the object is as if the thread had never waited. */
	switch (what) {
	case KILL_WG:
		KUNIT_EXPECT_TRUE(test, list_empty(&x->wg.waiters));
		kgo_wg_done(&x->wg);
		KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x->wg, KGO_NOWAIT), 0);
		break;
	case KILL_MUTEX:
		/* Still ours, with no waiter to hand it to. */
		KUNIT_EXPECT_TRUE(test, list_empty(&x->m.waiters));
		kgo_mutex_unlock(&x->m);
		KUNIT_EXPECT_TRUE(test, kgo_mutex_trylock(&x->m));
		break;
	case KILL_RECV:
		/* No receiver left on the channel to take a send. */
		KUNIT_EXPECT_EQ(test, kgo_chan_send(x->c, &v, KGO_NOWAIT), -EAGAIN);
		break;
	}
	kgo_mutex_unlock(&x->m);
	kthread_stop(t);
	put_task_struct(t);
	kgo_chan_destroy(x->c);
}

static void kgo_sync_killable_test(struct kunit *test)
{
	kill_one(test, KILL_WG);
	kill_one(test, KILL_MUTEX);
	kill_one(test, KILL_RECV);
}

static struct kunit_case kgo_sync_cases[] = {
	KUNIT_CASE(kgo_sync_mutex_test),
	KUNIT_CASE(kgo_sync_mutex_timeout_test),
	KUNIT_CASE(kgo_sync_once_test),
	KUNIT_CASE(kgo_sync_wg_timeout_test),
	KUNIT_CASE(kgo_sync_go_wg_test),
	KUNIT_CASE(kgo_sync_killable_test),
	KUNIT_CASE(kgo_sync_wg_race_test),
	{}
};

static struct kunit_suite kgo_sync_suite = {
	.name = "kgo_sync",
	.test_cases = kgo_sync_cases,
};

kunit_test_suite(kgo_sync_suite);
