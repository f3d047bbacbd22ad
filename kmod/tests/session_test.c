// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_session: a session's completion queue, driven from the kernel
 * side: every accepted task completes once, cancel takes only what has
 * not started, close leaves nothing behind.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/slab.h>

#include <linux/kgo.h>
#include "g.h"
#include "sched.h"
#include "session.h"
#include "task.h"
#include "tests/run_g.h"
#include "tests/user_mem.h"

#define NJOBS	64

/* Accepts @n tasks of @kind with tags 0..n-1, keeping their Gs unqueued. */
static void accept(struct kunit *test, struct kgo_session *s, u32 kind, u64 arg,
		   struct kgo_gqueue *q, int n)
{
	struct kgo_task t = { .kind = kind, .args = { arg } };
	int i;

	for (i = 0; i < n; i++) {
		struct kgo_g *g;

		t.tag = i;
		g = kgo_session_submit_one(s, &t, NULL);
		KUNIT_ASSERT_FALSE(test, IS_ERR(g));
		kgo_gqueue_push_back(q, g);
	}
}

/* Reads every completion; checks each tag once. Returns how many. */
static int drain(struct kunit *test, struct kgo_session *s, int n, s32 status,
		 unsigned int *cancelled)
{
	struct kgo_job *job, *tmp;
	unsigned long seen[BITS_TO_LONGS(NJOBS)] = {};
	LIST_HEAD(list);
	u32 ready;
	int got = 0;

	KUNIT_EXPECT_EQ(test, kgo_session_wait(s, n, 30ULL * NSEC_PER_SEC, &ready), 0);
	got = kgo_session_take(s, &list, NJOBS);
	list_for_each_entry_safe(job, tmp, &list, node) {
		KUNIT_EXPECT_FALSE(test, __test_and_set_bit(job->c.tag, seen));
		if (job->c.status == -ECANCELED) {
			(*cancelled)++;
			KUNIT_EXPECT_EQ(test, job->c.started_ns, 0ULL);
			KUNIT_EXPECT_EQ(test, job->c.cpu, ~0U);
		} else {
			KUNIT_EXPECT_EQ(test, job->c.status, status);
			KUNIT_EXPECT_LE(test, job->c.queued_ns, job->c.started_ns);
			KUNIT_EXPECT_LE(test, job->c.started_ns, job->c.ended_ns);
		}
		kgo_job_complete_read(job);
	}
	return got;
}

static void kgo_session_complete_once_test(struct kunit *test)
{
	struct kgo_session *s = kgo_session_create();
	struct kgo_gqueue q = {};
	unsigned int cancelled = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	accept(test, s, KGO_TASK_NOP, 0, &q, NJOBS);
	kgo_injectglist(&q, NJOBS);
	KUNIT_EXPECT_EQ(test, drain(test, s, NJOBS, 0, &cancelled), NJOBS);
	KUNIT_EXPECT_EQ(test, cancelled, 0u);
	KUNIT_EXPECT_EQ(test, s->ninflight, 0u);
	kgo_session_close(s);
}

/* Cancel wins against goroutines that have not started, and only those. */
static void kgo_session_cancel_test(struct kunit *test)
{
	struct kgo_session *s = kgo_session_create();
	struct kgo_gqueue q = {};
	unsigned int cancelled = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	accept(test, s, KGO_TASK_NOP, 0, &q, NJOBS);
	KUNIT_EXPECT_EQ(test, kgo_session_cancel(s, false, 3, false), 1u);
	KUNIT_EXPECT_EQ(test, kgo_session_cancel(s, false, 3, false), 0u);
	KUNIT_EXPECT_EQ(test, kgo_session_cancel(s, true, 0, false), (u32)NJOBS - 1);
	kgo_injectglist(&q, NJOBS);	/* they start, find themselves cancelled */
	KUNIT_EXPECT_EQ(test, drain(test, s, NJOBS, 0, &cancelled), NJOBS);
	KUNIT_EXPECT_EQ(test, cancelled, (unsigned int)NJOBS);
	/* Once run, nothing is cancellable. */
	q = (struct kgo_gqueue){};
	accept(test, s, KGO_TASK_NOP, 0, &q, 4);
	kgo_injectglist(&q, 4);
	cancelled = 0;
	KUNIT_EXPECT_EQ(test, drain(test, s, 4, 0, &cancelled), 4);
	KUNIT_EXPECT_EQ(test, kgo_session_cancel(s, true, 0, false), 0u);
	kgo_session_close(s);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(60000), 0);
}

/* Close with unstarted, running and unread tasks: no leak, no hang. */
static void kgo_session_close_inflight_test(struct kunit *test)
{
	struct kgo_session *s = kgo_session_create();
	struct kgo_gqueue q = {}, run = {};

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	accept(test, s, KGO_TASK_SPIN, 2 * NSEC_PER_MSEC, &run, 4);
	accept(test, s, KGO_TASK_NOP, 0, &q, NJOBS);
	kgo_injectglist(&run, 4);
	kgo_session_close(s);		/* s may be gone from here on */
	kgo_injectglist(&q, NJOBS);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(60000), 0);
	/* kmemleak at the end of the run checks that the jobs went away. */
}

/* Every interruptible kind, long enough that only a cancel ends it soon. */
static const struct kgo_task long_tasks[] = {
	{ .kind = KGO_TASK_SLEEP, .args = { KGO_SLEEP_MAX_NS } },
	{ .kind = KGO_TASK_BLOCK, .args = { KGO_BLOCK_MAX_US } },
	{ .kind = KGO_TASK_SPIN, .args = { KGO_SPIN_MAX_NS } },
	{ .kind = KGO_TASK_YIELD, .args = { KGO_YIELD_MAX } },
	{ .kind = KGO_TASK_PINGPONG, .args = { KGO_PINGPONG_MAX } },
	{ .kind = KGO_TASK_SELECT, .args = { KGO_SELECT_TASK_MAX, KGO_SELECT_GAP_MAX_NS } },
	{ .kind = KGO_TASK_PINGPONG_HOG, .args = { KGO_PINGPONG_HOG_MAX_NS, 1000 } },
	/* 4161 nodes: may finish before the cancel, then in full. */
	{ .kind = KGO_TASK_SPAWN, .args = { KGO_SPAWN_MAX_FANOUT, 2 } },
};

#define NLONG	ARRAY_SIZE(long_tasks)

/*
 * A cancelled task must end before its own length: 10 s for the timed
 * kinds, far longer for the counted ones; SPIN's 1 s is checked by its
 * result. That, not a guess at how slow a busy host makes an emulated
 * debug kernel, says that the cancel ended it; how long it took is
 * logged.
 */
#define LONG_TASK_NS	KGO_SLEEP_MAX_NS

static void accept_long(struct kunit *test, struct kgo_session *s, struct kgo_gqueue *q)
{
	struct kgo_task t;
	unsigned int i;

	for (i = 0; i < NLONG; i++) {
		struct kgo_g *g;

		t = long_tasks[i];
		t.tag = i;
		g = kgo_session_submit_one(s, &t, NULL);
		KUNIT_ASSERT_FALSE(test, IS_ERR(g));
		kgo_gqueue_push_back(q, g);
	}
}

/*
 * KGO_CANCEL_RUNNING: every long kind stops at once with -ECANCELED and
 * a partial result; cancelling again counts nothing.
 */
static void kgo_session_cancel_running_test(struct kunit *test)
{
	struct kgo_session *s = kgo_session_create();
	struct kgo_job *job, *tmp;
	struct kgo_gqueue q = {};
	LIST_HEAD(list);
	u32 ready, n, n0, unstarted = 0;
	u64 t0, waited, injected;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	accept_long(test, s, &q);
	injected = ktime_get_ns();
	kgo_injectglist(&q, NLONG);
	msleep(100);			/* most are running */
	/* Without the flag, only what has not started (checked below). */
	n0 = kgo_session_cancel(s, true, 0, false);
	t0 = ktime_get_ns();
	n = kgo_session_cancel(s, true, 0, true);
	KUNIT_EXPECT_GE(test, n0 + n, (u32)NLONG - 1);	/* SPAWN may be done */
	KUNIT_EXPECT_EQ(test, kgo_session_cancel(s, true, 0, true), 0u);
	KUNIT_EXPECT_EQ(test, kgo_session_wait(s, NLONG, 30ULL * NSEC_PER_SEC, &ready), 0);
	waited = ktime_get_ns() - t0;
	KUNIT_EXPECT_LT(test, t0 + waited, injected + LONG_TASK_NS);
	kunit_info(test, "every task ended %llu us after the cancel\n", waited / 1000);
	KUNIT_EXPECT_EQ(test, kgo_session_take(s, &list, NLONG), (int)NLONG);
	list_for_each_entry_safe(job, tmp, &list, node) {
		const struct kgo_task *t = &long_tasks[job->c.tag];

		if (t->kind == KGO_TASK_SPAWN && !job->c.status) {
			KUNIT_EXPECT_EQ(test, job->c.result, 4161ULL);
		} else {
			KUNIT_EXPECT_EQ_MSG(test, job->c.status, -ECANCELED, "kind %u", t->kind);
			if (!job->c.started_ns) {	/* never started */
				unstarted++;
				goto next;
			}
			/* Partial: short of the whole (SLEEP/BLOCK: in ns). */
			if (t->kind == KGO_TASK_BLOCK)
				KUNIT_EXPECT_LT(test, job->c.result, t->args[0] * NSEC_PER_USEC);
			else if (t->kind != KGO_TASK_SPAWN)
				KUNIT_EXPECT_LT_MSG(test, job->c.result, t->args[0],
						    "kind %u", t->kind);
			else
				KUNIT_EXPECT_LT(test, job->c.result, 4161ULL);
		}
next:
		kgo_job_complete_read(job);
	}
	KUNIT_EXPECT_EQ(test, unstarted, n0);
	kgo_session_close(s);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(60000), 0);
}

/* Close stops running tasks too: no goroutine outlives the fd for long. */
static void kgo_session_close_running_test(struct kunit *test)
{
	struct kgo_session *s = kgo_session_create();
	struct kgo_gqueue q = {}, unstarted = {};
	u64 injected, now;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	accept_long(test, s, &q);
	accept(test, s, KGO_TASK_SLEEP, KGO_SLEEP_MAX_NS, &unstarted, NJOBS);
	injected = ktime_get_ns();
	kgo_injectglist(&q, NLONG);
	msleep(100);
	kgo_session_close(s);
	kgo_injectglist(&unstarted, NJOBS);	/* start after the close: never run */
	/* Quiet before the long tasks could have ended on their own. */
	now = ktime_get_ns();
	KUNIT_EXPECT_LT(test, now, injected + LONG_TASK_NS);
	now = min(now, injected + LONG_TASK_NS - NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet((injected + LONG_TASK_NS - now) / NSEC_PER_MSEC),
			0);
}

static long read_call(unsigned long uaddr, void *arg)
{
	struct kgo_session *s = arg;

	return kgo_session_read(s, (char __user *)uaddr, 10 * sizeof(struct kgo_completion),
				true);
}

/* A read that faults loses nothing: the completions stay queued. */
static void kgo_session_read_fault_test(struct kunit *test)
{
	struct kgo_session *s = kgo_session_create();
	struct kgo_completion c[10];
	struct kgo_gqueue q = {};
	unsigned int cancelled = 0;
	u32 ready;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	accept(test, s, KGO_TASK_NOP, 0, &q, 8);
	kgo_injectglist(&q, 8);
	KUNIT_ASSERT_EQ(test, kgo_session_wait(s, 8, 30ULL * NSEC_PER_SEC, &ready), 0);
	KUNIT_EXPECT_EQ(test, kgo_test_user_call(read_call, s, NULL, 0), -EFAULT);
	KUNIT_EXPECT_EQ(test, s->ndone, 8u);
	KUNIT_EXPECT_EQ(test, kgo_test_user_call(read_call, s, c, sizeof(c)),
			(long)(8 * sizeof(struct kgo_completion)));
	KUNIT_EXPECT_EQ(test, s->ndone, 0u);
	KUNIT_EXPECT_EQ(test, drain(test, s, 0, 0, &cancelled), 0);
	kgo_session_close(s);
}

static int kgo_session_suite_init(struct kunit_suite *suite)
{
	return kgo_test_user_mem_init();
}

static void kgo_session_suite_exit(struct kunit_suite *suite)
{
	kgo_test_user_mem_exit();
}

static struct kunit_case kgo_session_cases[] = {
	KUNIT_CASE(kgo_session_complete_once_test),
	KUNIT_CASE(kgo_session_cancel_test),
	KUNIT_CASE(kgo_session_close_inflight_test),
	KUNIT_CASE(kgo_session_cancel_running_test),
	KUNIT_CASE(kgo_session_close_running_test),
	KUNIT_CASE(kgo_session_read_fault_test),
	{}
};

static struct kunit_suite kgo_session_suite = {
	.name = "kgo_session",
	.suite_init = kgo_session_suite_init,
	.suite_exit = kgo_session_suite_exit,
	.test_cases = kgo_session_cases,
};

kunit_test_suite(kgo_session_suite);
