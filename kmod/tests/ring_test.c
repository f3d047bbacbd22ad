// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_ring: the shared rings' index arithmetic (ring.h) around the 2^32
 * wrap and with garbage from the caller, their layout, and the CQ
 * protocol itself: posters on several CPUs, a waiter woken at its count.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/sched.h>

#include <linux/kgo.h>
#include "ring.h"
#include "session.h"

static void kgo_ring_reached_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, kgo_ring_reached(5, 5));
	KUNIT_EXPECT_TRUE(test, kgo_ring_reached(6, 5));
	KUNIT_EXPECT_FALSE(test, kgo_ring_reached(4, 5));
	/* Across the wrap: 2 is 4 past 0xfffffffe. */
	KUNIT_EXPECT_TRUE(test, kgo_ring_reached(2, 0xfffffffe));
	KUNIT_EXPECT_FALSE(test, kgo_ring_reached(0xfffffffe, 2));
	KUNIT_EXPECT_TRUE(test, kgo_ring_reached(0, U32_MAX));
}

static void kgo_ring_sq_ready_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kgo_ring_sq_ready(0, 0, 8), 0);
	KUNIT_EXPECT_EQ(test, kgo_ring_sq_ready(8, 0, 8), 8);
	KUNIT_EXPECT_EQ(test, kgo_ring_sq_ready(3, 0xfffffffd, 8), 6);
	KUNIT_EXPECT_EQ(test, kgo_ring_sq_ready(U32_MAX, U32_MAX - 8, 8), 8);
	/* More than the ring holds, or behind our head: garbage. */
	KUNIT_EXPECT_EQ(test, kgo_ring_sq_ready(9, 0, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, kgo_ring_sq_ready(4, 5, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, kgo_ring_sq_ready(7, 0xfffffffe, 8), -EINVAL);
}

static void kgo_ring_cq_room_test(struct kunit *test)
{
	/* Empty; some promised; all promised; some consumed. */
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(0, 0, 16), 16u);
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(10, 0, 16), 6u);
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(16, 0, 16), 0u);
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(20, 10, 16), 6u);
	/* Every one issued consumed, whatever cq_ktail says yet. */
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(10, 10, 16), 16u);
	/* Across the wrap. */
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(4, 0xfffffffc, 16), 8u);
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(12, 0xfffffffc, 16), 0u);
	/* A head past what was issued, or lapped: garbage reads as full. */
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(10, 11, 16), 0u);
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(40, 3, 16), 0u);
	KUNIT_EXPECT_EQ(test, kgo_ring_cq_room(4, 0x80000000, 16), 0u);
}

static void kgo_ring_entries_test(struct kunit *test)
{
	u32 n = 0;

	KUNIT_EXPECT_EQ(test, kgo_ring_entries(0, 64, &n), -EINVAL);
	KUNIT_EXPECT_EQ(test, kgo_ring_entries(65, 64, &n), -EINVAL);
	KUNIT_EXPECT_EQ(test, kgo_ring_entries(1, 64, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 1u);
	KUNIT_EXPECT_EQ(test, kgo_ring_entries(33, 64, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 64u);
	KUNIT_EXPECT_EQ(test, kgo_ring_entries(64, 64, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 64u);
}

/* Every size the uapi allows fits, aligned, without overlap. */
static void kgo_ring_layout_test(struct kunit *test)
{
	static const u32 sizes[][2] = {
		{ 1, 1 }, { 1, 2 }, { 8, 16 }, { 4096, 8192 },
		{ KGO_RING_SQ_MAX, KGO_RING_CQ_MAX },
	};
	struct kgo_ring_offsets off;
	size_t size;
	int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		u32 sq = sizes[i][0], cq = sizes[i][1];

		KUNIT_ASSERT_EQ(test, kgo_ring_layout(sq, cq, &off, &size), 0);
		KUNIT_EXPECT_EQ(test, size % PAGE_SIZE, 0ul);
		KUNIT_EXPECT_LE(test, size, (size_t)U32_MAX);
		/* Each index on a cache line of its own. */
		KUNIT_EXPECT_EQ(test, off.sq_tail - off.sq_head, 64u);
		KUNIT_EXPECT_EQ(test, off.cq_head - off.sq_tail, 64u);
		KUNIT_EXPECT_EQ(test, off.cq_tail - off.cq_head, 64u);
		KUNIT_EXPECT_LT(test, off.sq_flags, off.sqes);
		KUNIT_EXPECT_EQ(test, off.sqes % 8, 0u);
		KUNIT_EXPECT_EQ(test, off.cqes % 8, 0u);
		KUNIT_EXPECT_LE(test, off.sqes + (size_t)sq * sizeof(struct kgo_task),
				(size_t)off.cqes);
		KUNIT_EXPECT_LE(test, off.cqes + (size_t)cq * sizeof(struct kgo_completion),
				size);
	}
	KUNIT_EXPECT_EQ(test, kgo_ring_layout(3, 8, &off, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, kgo_ring_layout(8, 2 * KGO_RING_CQ_MAX, &off, &size), -EINVAL);
}

/* --- The CQ protocol on a real ring ------------------------------- */

#define POSTERS		2
#define PER_POSTER	5000
#define CQ_ENTRIES	(POSTERS * PER_POSTER * 2)

struct cq_fixture {
	struct kgo_session *s;
	struct kgo_ring *r;
};

struct cq_poster {
	struct cq_fixture *f;
	u32 id;
	struct completion done;
};

static int cq_poster(void *arg)
{
	struct cq_poster *cp = arg;
	struct cq_fixture *f = cp->f;
	struct kgo_completion c = { .status = 0 };
	u32 i;

	for (i = 0; i < PER_POSTER; i++) {
		c.tag = cp->id * PER_POSTER + i;
		spin_lock(&f->s->lock);
		kgo_ring_post(f->r, &c);
		spin_unlock(&f->s->lock);
		kgo_ring_wake(f->r);
		if (i % 256 == 0)
			cond_resched();
	}
	complete(&cp->done);
	return 0;
}

/*
 * Posters on two CPUs write every entry once; a waiter for all of them
 * wakes once the tail has them, not before; a wait for more than was
 * issued returns at once, and a wait that cannot be met times out.
 */
static void kgo_ring_cq_protocol_test(struct kunit *test)
{
	struct kgo_ring_params p = {
		.size = sizeof(p), .sq_entries = 8, .cq_entries = CQ_ENTRIES,
	};
	struct cq_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct cq_poster *cp = kunit_kcalloc(test, POSTERS, sizeof(*cp), GFP_KERNEL);
	u8 *seen = kunit_kzalloc(test, POSTERS * PER_POSTER, GFP_KERNEL);
	struct task_struct *t;
	u32 i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_ASSERT_NOT_NULL(test, cp);
	f->s = kgo_session_create();
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->s));
	f->r = kgo_ring_create(f->s, &p);
	if (IS_ERR(f->r)) {
		kgo_session_close(f->s);
		KUNIT_FAIL(test, "kgo_ring_create: %ld", PTR_ERR(f->r));
		return;
	}
	KUNIT_ASSERT_EQ(test, kgo_ring_install(f->s, f->r), 0);
	KUNIT_EXPECT_EQ(test, p.cq_entries, (u32)roundup_pow_of_two(CQ_ENTRIES));

	/* Nothing issued: any wait returns at once. */
	KUNIT_EXPECT_EQ(test, kgo_ring_wait(f->r, 1, KGO_WAIT_FOREVER), 0);
	/* As if ENTER had consumed them all (enter.c does this). */
	WRITE_ONCE(f->r->issued, POSTERS * PER_POSTER);
	KUNIT_EXPECT_EQ(test, kgo_ring_wait(f->r, 1, 0), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, kgo_ring_wait(f->r, 1, 1000000), -ETIMEDOUT);

	for (i = 0; i < POSTERS; i++) {
		cp[i].f = f;
		cp[i].id = i;
		init_completion(&cp[i].done);
		t = kthread_run_on_cpu(cq_poster, &cp[i], i % num_online_cpus(),
				       "kgo_cq_poster/%u");
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	/* More than issued: waits for every one issued. */
	KUNIT_EXPECT_EQ(test, kgo_ring_wait(f->r, 2 * POSTERS * PER_POSTER,
					    KGO_WAIT_FOREVER), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*f->r->cq_tail), (u32)(POSTERS * PER_POSTER));
	for (i = 0; i < POSTERS; i++)
		wait_for_completion(&cp[i].done);
	for (i = 0; i < POSTERS * PER_POSTER; i++) {
		u64 tag = f->r->cqes[i].tag;

		if (tag >= POSTERS * PER_POSTER || seen[tag]++)
			bad++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0u);
	KUNIT_EXPECT_EQ(test, READ_ONCE(f->r->nwaiters), 0u);
	kgo_session_close(f->s);
}

/*
 * kgo_ring_post_commit() stores the shared cq_tail, then cq_ktail. A
 * caller that consumes the entry in between (its cq_head one past
 * cq_ktail) has freed every slot: ENTER must find room, not -EBUSY, and
 * poll(2) must not report an entry that is not there.
 */
static void kgo_ring_consumed_before_ktail_test(struct kunit *test)
{
	struct kgo_ring_params p = {
		.size = sizeof(p), .sq_entries = 1, .cq_entries = 1,
	};
	struct kgo_session *s;
	struct kgo_ring *r;
	struct kgo_task *t;

	s = kgo_session_create();
	KUNIT_ASSERT_FALSE(test, IS_ERR(s));
	r = kgo_ring_create(s, &p);
	if (IS_ERR(r)) {
		kgo_session_close(s);
		KUNIT_FAIL(test, "kgo_ring_create: %ld", PTR_ERR(r));
		return;
	}
	KUNIT_ASSERT_EQ(test, kgo_ring_install(s, r), 0);

	/* One task consumed; its completion half posted, and consumed. */
	r->sq_khead = 1;
	WRITE_ONCE(*r->sq_head, 1);
	WRITE_ONCE(r->issued, 1);
	spin_lock(&s->lock);
	WRITE_ONCE(*r->cq_tail, 1);	/* cq_ktail is still 0 */
	spin_unlock(&s->lock);
	WRITE_ONCE(*r->cq_head, 1);
	KUNIT_EXPECT_FALSE(test, kgo_ring_cq_pending(r));

	/* The next task, run inline: no goroutine to wait for. */
	t = &r->sqes[1 & (r->sq_entries - 1)];
	memset(t, 0, sizeof(*t));
	t->kind = KGO_TASK_NOP;
	t->flags = KGO_TASK_F_INLINE;
	t->tag = 7;
	WRITE_ONCE(*r->sq_tail, 2);
	KUNIT_EXPECT_EQ(test, kgo_ring_submit(s, r, 1), 1L);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*r->sq_head), 2u);
	KUNIT_EXPECT_EQ(test, r->cqes[0].tag, 7ULL);
	kgo_session_close(s);
}

static struct kunit_case kgo_ring_cases[] = {
	KUNIT_CASE(kgo_ring_reached_test),
	KUNIT_CASE(kgo_ring_sq_ready_test),
	KUNIT_CASE(kgo_ring_cq_room_test),
	KUNIT_CASE(kgo_ring_entries_test),
	KUNIT_CASE(kgo_ring_layout_test),
	KUNIT_CASE(kgo_ring_cq_protocol_test),
	KUNIT_CASE(kgo_ring_consumed_before_ktail_test),
	{}
};

static struct kunit_suite kgo_ring_suite = {
	.name = "kgo_ring",
	.test_cases = kgo_ring_cases,
};

kunit_test_suite(kgo_ring_suite);
