// SPDX-License-Identifier: GPL-2.0
/*
 * KGO_TASK_F_INLINE: a NOP or CHECKSUM run in the submitting thread.
 *
 * Through SUBMIT and through a ring's ENTER: each completion is there
 * when the call returns, without waiting; a CHECKSUM run inline gives
 * the CRC its goroutine would, for lengths around the chunk the module
 * reads at a time, and -EFAULT in its completion for a bad buffer; a
 * kind that may not run inline is refused, alone (the ring consumes it
 * with -EINVAL, SUBMIT stops at it); inline and goroutine tasks mix in
 * one batch, each completing once.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "libkgo.h"
#include "kgo_crc32c.h"
#include "kgo_util.h"
#include "kselftest_harness.h"

#define REC	sizeof(struct kgo_completion)
#define N	64

/* Lengths around the 256-byte chunk and the 64 KiB resched point. */
static const uint64_t lens[] = {
	0, 1, 255, 256, 257, 4099, 65535, 65537, KGO_CHECKSUM_MAX_LEN,
};
#define NLENS	(sizeof(lens) / sizeof(lens[0]))

/* Whatever completions there are now, without waiting: how many. */
static int ready_now(int fd)
{
	struct kgo_wait w = { .size = sizeof(w), .min_complete = ~0U, .timeout_ns = 0 };

	ioctl(fd, KGO_IOC_WAIT, &w);
	return w.ready;
}

FIXTURE(inl) {
	int fd;
	struct kgo_ring r;
	unsigned char *buf;
};

FIXTURE_SETUP(inl)
{
	KGO_OPEN(self->fd, 0);
	memset(&self->r, 0, sizeof(self->r));
	self->buf = malloc(KGO_CHECKSUM_MAX_LEN);
	ASSERT_NE(NULL, self->buf);
	fill_for_tag(self->buf, KGO_CHECKSUM_MAX_LEN, 7);
}

FIXTURE_TEARDOWN(inl)
{
	if (self->r.mem)
		kgo_ring_exit(&self->r);
	free(self->buf);
	close(self->fd);
}

/* SUBMIT returns with every inline NOP's record ready to read. */
TEST_F(inl, submit_nop)
{
	struct kgo_task t[N] = {};
	struct kgo_completion c[N];
	uint8_t seen[N] = {};

	for (unsigned int i = 0; i < N; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_NOP, .flags = KGO_TASK_F_INLINE,
					  .tag = i };
	ASSERT_EQ(N, submit(self->fd, t, N));
	EXPECT_EQ(N, ready_now(self->fd));
	ASSERT_EQ((ssize_t)(N * REC), read(self->fd, c, sizeof(c)));
	for (unsigned int i = 0; i < N; i++) {
		ASSERT_GT(N, c[i].tag);
		EXPECT_EQ(0, seen[c[i].tag]++);
		EXPECT_EQ(0, c[i].status);
		EXPECT_EQ(KGO_TASK_NOP, c[i].kind);
		EXPECT_NE(~0U, c[i].cpu);
		EXPECT_LE(c[i].queued_ns, c[i].ended_ns);
	}
}

/* CHECKSUM inline, through SUBMIT: the same CRC; a bad buffer, -EFAULT. */
TEST_F(inl, submit_checksum)
{
	struct kgo_task t[NLENS + 1] = {};
	struct kgo_completion c[NLENS + 1];

	for (unsigned int i = 0; i < NLENS; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_CHECKSUM, .flags = KGO_TASK_F_INLINE,
					  .tag = i, .args = { (uintptr_t)self->buf, lens[i] } };
	t[NLENS] = (struct kgo_task){ .kind = KGO_TASK_CHECKSUM, .flags = KGO_TASK_F_INLINE,
				      .tag = NLENS, .args = { 8, 64 } };	/* unmapped */
	ASSERT_EQ((int)NLENS + 1, submit(self->fd, t, NLENS + 1));
	EXPECT_EQ((int)NLENS + 1, ready_now(self->fd));
	ASSERT_EQ((ssize_t)((NLENS + 1) * REC), read(self->fd, c, sizeof(c)));
	for (unsigned int i = 0; i <= NLENS; i++) {
		uint64_t tag = c[i].tag;

		ASSERT_GE(NLENS, tag);
		if (tag == NLENS) {
			EXPECT_EQ(-EFAULT, c[i].status);
			continue;
		}
		EXPECT_EQ(0, c[i].status);
		EXPECT_EQ(kgo_crc32c(self->buf, lens[tag]), c[i].result)
			TH_LOG("length %llu", (unsigned long long)lens[tag]);
	}
}

/* A kind that may not run inline: SUBMIT stops at it, with -EINVAL. */
TEST_F(inl, submit_refused)
{
	struct kgo_task t[2] = {
		{ .kind = KGO_TASK_NOP, .flags = KGO_TASK_F_INLINE, .tag = 1 },
		{ .kind = KGO_TASK_SLEEP, .flags = KGO_TASK_F_INLINE, .tag = 2, .args = { 1000 } },
	};
	struct kgo_completion c;

	ASSERT_EQ(1, submit(self->fd, t, 2));
	errno = 0;
	EXPECT_EQ(-1, submit(self->fd, t + 1, 1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ((ssize_t)REC, read(self->fd, &c, REC));
	EXPECT_EQ(1, c.tag);
	EXPECT_EQ(0, ready_now(self->fd));
}

/* ENTER without waiting: every inline completion is in the CQ already. */
TEST_F(inl, ring_nop)
{
	struct kgo_ring_params p = { .sq_entries = N, .flags = KGO_RING_NO_TIMES };
	struct kgo_completion *c;
	unsigned int head, n = 0;
	uint8_t seen[N] = {};

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	for (unsigned int round = 0; round < 4; round++) {
		for (unsigned int i = 0; i < N; i++) {
			struct kgo_task *t = kgo_ring_get_sqe(&self->r);

			ASSERT_NE(NULL, t);
			t->kind = KGO_TASK_NOP;
			t->flags = KGO_TASK_F_INLINE;
			t->tag = i;
		}
		ASSERT_EQ(N, kgo_ring_submit(&self->r));
		n = 0;
		memset(seen, 0, sizeof(seen));
		kgo_ring_for_each_cqe(&self->r, head, c) {
			ASSERT_GT(N, c->tag);
			EXPECT_EQ(0, seen[c->tag]++);
			EXPECT_EQ(0, c->status);
			EXPECT_EQ(0, c->queued_ns);	/* KGO_RING_NO_TIMES */
			n++;
		}
		kgo_ring_cq_advance(&self->r, n);
		EXPECT_EQ(N, n);
	}
}

/*
 * One batch mixing inline NOPs and CHECKSUMs, goroutine NOPs and
 * CHECKSUMs, a kind refused inline and a bad buffer: each completes
 * once, with its own status and result.
 */
TEST_F(inl, ring_mixed)
{
	struct kgo_ring_params p = { .sq_entries = 2 * N };
	enum { NOP_INL, NOP_GO, CSUM_INL, CSUM_GO, SLEEP_INL, CSUM_FAULT, KINDS };
	unsigned int head, n = 0, total = 2 * N;
	uint8_t seen[2 * N] = {};
	struct kgo_completion *c;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	for (unsigned int i = 0; i < total; i++) {
		struct kgo_task *t = kgo_ring_get_sqe(&self->r);

		ASSERT_NE(NULL, t);
		t->tag = i;
		switch (i % KINDS) {
		case NOP_INL:
			t->flags = KGO_TASK_F_INLINE;
			/* fallthrough */
		case NOP_GO:
			t->kind = KGO_TASK_NOP;
			break;
		case CSUM_INL:
			t->flags = KGO_TASK_F_INLINE;
			/* fallthrough */
		case CSUM_GO:
			t->kind = KGO_TASK_CHECKSUM;
			t->args[0] = (uintptr_t)self->buf + i;
			t->args[1] = 1000 + i;
			break;
		case SLEEP_INL:
			t->kind = KGO_TASK_SLEEP;
			t->flags = KGO_TASK_F_INLINE;
			t->args[0] = 1000;
			break;
		case CSUM_FAULT:
			t->kind = KGO_TASK_CHECKSUM;
			t->flags = KGO_TASK_F_INLINE;
			t->args[0] = 8;
			t->args[1] = 300;
			break;
		}
	}
	ASSERT_EQ((int)total, kgo_ring_submit_and_wait(&self->r, total));
	while (n < total) {
		unsigned int got = 0;

		kgo_ring_for_each_cqe(&self->r, head, c) {
			uint64_t i = c->tag;

			ASSERT_GT(total, i);
			EXPECT_EQ(0, seen[i]++);
			switch (i % KINDS) {
			case NOP_INL:
			case NOP_GO:
				EXPECT_EQ(0, c->status);
				break;
			case CSUM_INL:
			case CSUM_GO:
				EXPECT_EQ(0, c->status);
				EXPECT_EQ(kgo_crc32c(self->buf + i, 1000 + i), c->result);
				break;
			case SLEEP_INL:
				/* Refused: it never ran, and says so. */
				EXPECT_EQ(-EINVAL, c->status);
				EXPECT_EQ(~0U, c->cpu);
				EXPECT_EQ(0, c->started_ns) TH_LOG("tag %llu",
								   (unsigned long long)i);
				EXPECT_NE(0, c->queued_ns);
				EXPECT_LE(c->queued_ns, c->ended_ns);
				break;
			case CSUM_FAULT:
				EXPECT_EQ(-EFAULT, c->status);
				break;
			}
			got++;
		}
		kgo_ring_cq_advance(&self->r, got);
		n += got;
		if (n < total)
			ASSERT_EQ(0, kgo_ring_wait_cqe_nr(&self->r, &c, 1, 10 * NSEC));
	}
	EXPECT_EQ(total, n);
}

TEST_HARNESS_MAIN
