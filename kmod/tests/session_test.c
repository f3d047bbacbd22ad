// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_task: descriptor validation and the catalogue's arithmetic.
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

struct validate_case {
	const char *name;
	struct kgo_task t;
	int want;
};

#define T(k, a0, a1, a2) { .kind = (k), .args = { (a0), (a1), (a2) } }

static const struct validate_case validate_cases[] = {
	{ "nop", T(KGO_TASK_NOP, 0, 0, 0), 0 },
	{ "nop with an arg", T(KGO_TASK_NOP, 1, 0, 0), -EINVAL },
	{ "nop inline", { .kind = KGO_TASK_NOP, .flags = KGO_TASK_F_INLINE }, 0 },
	{ "nop flag 2", { .kind = KGO_TASK_NOP, .flags = 2 }, -EINVAL },
	{ "checksum inline", { .kind = KGO_TASK_CHECKSUM, .flags = KGO_TASK_F_INLINE,
			       .args = { 4096, KGO_CHECKSUM_MAX_LEN } }, 0 },
	{ "checksum inline over max", { .kind = KGO_TASK_CHECKSUM, .flags = KGO_TASK_F_INLINE,
					.args = { 4096, KGO_CHECKSUM_MAX_LEN + 1 } }, -E2BIG },
	{ "spin inline", { .kind = KGO_TASK_SPIN, .flags = KGO_TASK_F_INLINE,
			   .args = { 1 } }, -EINVAL },
	{ "block inline", { .kind = KGO_TASK_BLOCK, .flags = KGO_TASK_F_INLINE,
			    .args = { 1 } }, -EINVAL },
	{ "unknown kind 0", T(0, 0, 0, 0), -EINVAL },
	{ "unknown kind 99", T(99, 0, 0, 0), -EINVAL },
	{ "spin max", T(KGO_TASK_SPIN, KGO_SPIN_MAX_NS, 0, 0), 0 },
	{ "spin over max", T(KGO_TASK_SPIN, KGO_SPIN_MAX_NS + 1, 0, 0), -EINVAL },
	{ "spin unused arg", T(KGO_TASK_SPIN, 1, 0, 1), -EINVAL },
	{ "yield max", T(KGO_TASK_YIELD, KGO_YIELD_MAX, 0, 0), 0 },
	{ "yield over max", T(KGO_TASK_YIELD, KGO_YIELD_MAX + 1, 0, 0), -EINVAL },
	{ "spawn 2x16", T(KGO_TASK_SPAWN, 2, 16, 0), 0 },
	{ "spawn 2x17", T(KGO_TASK_SPAWN, 2, 17, 0), -E2BIG },
	{ "spawn fanout 0", T(KGO_TASK_SPAWN, 0, 1, 0), -EINVAL },
	{ "spawn fanout over max", T(KGO_TASK_SPAWN, KGO_SPAWN_MAX_FANOUT + 1, 1, 0), -EINVAL },
	{ "spawn huge depth", T(KGO_TASK_SPAWN, 64, ~0ULL, 0), -E2BIG },
	{ "checksum max", T(KGO_TASK_CHECKSUM, 0x1000, KGO_CHECKSUM_MAX_LEN, 0), 0 },
	{ "checksum over max", T(KGO_TASK_CHECKSUM, 0x1000, KGO_CHECKSUM_MAX_LEN + 1, 0), -E2BIG },
	{ "checksum unused arg", T(KGO_TASK_CHECKSUM, 0x1000, 1, 1), -EINVAL },
	{ "sleep max", T(KGO_TASK_SLEEP, KGO_SLEEP_MAX_NS, 0, 0), 0 },
	{ "sleep over max", T(KGO_TASK_SLEEP, KGO_SLEEP_MAX_NS + 1, 0, 0), -EINVAL },
	{ "pingpong max", T(KGO_TASK_PINGPONG, KGO_PINGPONG_MAX, 0, 0), 0 },
	{ "pingpong over max", T(KGO_TASK_PINGPONG, KGO_PINGPONG_MAX + 1, 0, 0), -EINVAL },
	{ "select", T(KGO_TASK_SELECT, 10, KGO_SELECT_GAP_MAX_NS, 0), 0 },
	{ "select gap over max", T(KGO_TASK_SELECT, 10, KGO_SELECT_GAP_MAX_NS + 1, 0), -EINVAL },
	{ "select unused arg", T(KGO_TASK_SELECT, 10, 1, 1), -EINVAL },
	{ "block max", T(KGO_TASK_BLOCK, KGO_BLOCK_MAX_US, 0, 0), 0 },
	{ "block over max", T(KGO_TASK_BLOCK, KGO_BLOCK_MAX_US + 1, 0, 0), -EINVAL },
	{ "block unused arg", T(KGO_TASK_BLOCK, 10, 1, 0), -EINVAL },
	{ "pingpong hog max", T(KGO_TASK_PINGPONG_HOG, KGO_PINGPONG_HOG_MAX_NS,
				KGO_PINGPONG_HOG_MAX_LOOP, 0), 0 },
	{ "pingpong hog 0 ns", T(KGO_TASK_PINGPONG_HOG, 0, 1, 0), -EINVAL },
	{ "pingpong hog over max ns", T(KGO_TASK_PINGPONG_HOG, KGO_PINGPONG_HOG_MAX_NS + 1,
					1, 0), -EINVAL },
	{ "pingpong hog loop 0", T(KGO_TASK_PINGPONG_HOG, 1, 0, 0), -EINVAL },
	{ "pingpong hog loop over max", T(KGO_TASK_PINGPONG_HOG, 1,
					  KGO_PINGPONG_HOG_MAX_LOOP + 1, 0), -EINVAL },
	{ "pingpong hog unused arg", T(KGO_TASK_PINGPONG_HOG, 1, 1, 1), -EINVAL },
};

static void validate_desc(const struct validate_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(validate, validate_cases, validate_desc);

static void kgo_task_validate_test(struct kunit *test)
{
	const struct validate_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, kgo_task_validate(&c->t), c->want);
}

static void kgo_task_flags_reserved_test(struct kunit *test)
{
	struct kgo_task t = T(KGO_TASK_NOP, 0, 0, 0);

	t.flags = 2;	/* one the module lacks */
	KUNIT_EXPECT_EQ(test, kgo_task_validate(&t), -EINVAL);
	t.flags = ~KGO_TASK_FLAGS;
	KUNIT_EXPECT_EQ(test, kgo_task_validate(&t), -EINVAL);
	t.flags = 0;
	t.__reserved = 1;
	KUNIT_EXPECT_EQ(test, kgo_task_validate(&t), -EINVAL);
}

static void kgo_task_spawn_nodes_test(struct kunit *test)
{
	const u64 max = KGO_SPAWN_MAX_NODES;

	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(2, 0, max), 1ULL);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(2, 1, max), 3ULL);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(3, 3, max), 40ULL);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(1, 1000, max), 1001ULL);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(2, 16, max), (1ULL << 17) - 1);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(2, 17, max), max + 1);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(64, ~0ULL, max), max + 1);
}

static void kgo_task_checksum_test(struct kunit *test)
{
	/* The CRC32C check value (RFC 3720 uses the same CRC). */
	KUNIT_EXPECT_EQ(test, kgo_task_checksum("123456789", 9), 0xe3069283u);
	KUNIT_EXPECT_EQ(test, kgo_task_checksum("", 0), 0u);
}

static struct kunit_case kgo_task_cases[] = {
	KUNIT_CASE_PARAM(kgo_task_validate_test, validate_gen_params),
	KUNIT_CASE(kgo_task_flags_reserved_test),
	KUNIT_CASE(kgo_task_spawn_nodes_test),
	KUNIT_CASE(kgo_task_checksum_test),
	{}
};

static struct kunit_suite kgo_task_suite = {
	.name = "kgo_task",
	.test_cases = kgo_task_cases,
};

/* --- kgo_session ---------------------------------------------------- */

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

struct inline_call {
	u64 len;
	u64 result;
};

static long inline_call(unsigned long uaddr, void *arg)
{
	struct inline_call *a = arg;
	struct kgo_task t = {
		.kind = KGO_TASK_CHECKSUM,
		.flags = KGO_TASK_F_INLINE,
		.args = { uaddr, a->len },
	};

	return kgo_task_run_inline(&t, &a->result);
}

/*
 * CHECKSUM run inline reads user memory in chunks: the CRC is the one
 * over the whole buffer at every length around a chunk, and a buffer
 * that faults is -EFAULT.
 */
static void kgo_task_run_inline_test(struct kunit *test)
{
	static const u64 lens[] = { 0, 1, 255, 256, 257, 511, 513, PAGE_SIZE };
	u8 *buf = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct kgo_task nop = { .kind = KGO_TASK_NOP, .flags = KGO_TASK_F_INLINE };
	struct inline_call a;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < PAGE_SIZE; i++)
		buf[i] = i * 7 + (i >> 8);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		a = (struct inline_call){ .len = lens[i], .result = ~0ULL };
		KUNIT_EXPECT_EQ(test, kgo_test_user_call(inline_call, &a, buf, PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ_MSG(test, a.result, (u64)kgo_task_checksum(buf, lens[i]),
				    "length %llu", lens[i]);
	}
	/* Address 0: nothing mapped there. */
	a = (struct inline_call){ .len = 64 };
	KUNIT_EXPECT_EQ(test, kgo_test_user_call(inline_call, &a, NULL, 0), -EFAULT);
	a.result = ~0ULL;
	KUNIT_EXPECT_EQ(test, kgo_task_run_inline(&nop, &a.result), 0);
	KUNIT_EXPECT_EQ(test, a.result, 0ULL);
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
	KUNIT_CASE(kgo_task_run_inline_test),
	{}
};

static struct kunit_suite kgo_session_suite = {
	.name = "kgo_session",
	.suite_init = kgo_session_suite_init,
	.suite_exit = kgo_session_suite_exit,
	.test_cases = kgo_session_cases,
};

kunit_test_suites(&kgo_task_suite, &kgo_session_suite);
