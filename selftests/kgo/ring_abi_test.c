// SPDX-License-Identifier: GPL-2.0
/*
 * The ring ABI (KGO_IOC_RING_SETUP, mmap, KGO_IOC_ENTER) with bad input:
 * every mistake gets its errno and loses nothing. Setup sizes and
 * flags, a second setup, mmap before setup or at a wrong offset, length
 * or mode, a sq_tail or cq_head that is garbage, SQ entries that are
 * not tasks, a full CQ (-EBUSY, then every completion still comes),
 * unmapping with tasks in flight, and a child after fork().
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "libkgo.h"
#include "kgo_util.h"
#include "kselftest_harness.h"

#define SQ	8
#define CQ	16

static int setup(int fd, struct kgo_ring_params *p, uint32_t sq, uint32_t cq)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->sq_entries = sq;
	p->cq_entries = cq;
	return ioctl(fd, KGO_IOC_RING_SETUP, p);
}

static int enter(int fd, uint32_t to_submit, uint32_t min, uint64_t timeout)
{
	struct kgo_enter e = {
		.size = sizeof(e), .to_submit = to_submit,
		.min_complete = min, .timeout_ns = timeout,
	};

	return ioctl(fd, KGO_IOC_ENTER, &e);
}

/* Queues one task of @kind with @tag; the caller submits. */
static struct kgo_task *put(struct kgo_ring *r, uint32_t kind, uint64_t tag)
{
	struct kgo_task *t = kgo_ring_get_sqe(r);

	if (!t)
		abort();
	t->kind = kind;
	t->tag = tag;
	return t;
}

/*
 * Reaps up to @max completions, checking each tag once against @seen
 * and its status against @want_status.
 */
static unsigned int reap_max(struct kgo_ring *r, uint8_t *seen, unsigned int nseen,
			     int want_status, unsigned int *bad, unsigned int max)
{
	struct kgo_completion *c;
	unsigned int head, n = 0;

	kgo_ring_for_each_cqe(r, head, c) {
		if (n == max)
			break;
		if (c->tag >= nseen || seen[c->tag]++ || c->status != want_status)
			(*bad)++;
		n++;
	}
	kgo_ring_cq_advance(r, n);
	return n;
}

static unsigned int reap(struct kgo_ring *r, uint8_t *seen, unsigned int nseen,
			 int want_status, unsigned int *bad)
{
	return reap_max(r, seen, nseen, want_status, bad, ~0U);
}

FIXTURE(ring) {
	int fd;
	struct kgo_ring r;
};

FIXTURE_SETUP(ring)
{
	KGO_OPEN(self->fd, 0);
	memset(&self->r, 0, sizeof(self->r));
}

FIXTURE_TEARDOWN(ring)
{
	if (self->r.mem)
		munmap(self->r.mem, self->r.mem_size);
	close(self->fd);
}

/* Sizes, flags and reserved fields; nothing is set up by a failure. */
TEST_F(ring, setup_bad_params)
{
	struct kgo_ring_params p;

	EXPECT_EQ(-1, setup(self->fd, &p, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, &p, KGO_RING_SQ_MAX + 1, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, &p, 8, KGO_RING_CQ_MAX + 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, &p, 16, 8));	/* CQ smaller than SQ */
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.sq_entries = 8;
	p.flags = 1U << 31;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_RING_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	p.flags = 0;
	p.__reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_RING_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	p.__reserved = 0;
	p.size = 8;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_RING_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_RING_SETUP, NULL));
	EXPECT_EQ(EFAULT, errno);

	/* Rounded up to powers of two; the CQ twice the SQ by default. */
	ASSERT_EQ(0, setup(self->fd, &p, 5, 0));
	EXPECT_EQ(8, p.sq_entries);
	EXPECT_EQ(16, p.cq_entries);
	EXPECT_EQ(0, p.mmap_size % getpagesize());
	EXPECT_LE(p.off.cqes + 16 * sizeof(struct kgo_completion), p.mmap_size);
	EXPECT_LE(p.off.sqes + 8 * sizeof(struct kgo_task), p.off.cqes);
	/* One ring per fd. */
	EXPECT_EQ(-1, setup(self->fd, &p, 8, 0));
	EXPECT_EQ(EBUSY, errno);
}

/*
 * mmap_size and off are the module's answers: input there must be 0
 * (-EINVAL, as the header says), and a refused setup leaves the fd
 * without a ring, free to set one up.
 */
TEST_F(ring, setup_output_fields_in)
{
	struct kgo_ring_params p;

	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.sq_entries = 8;
	p.mmap_size = 4096;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_RING_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	p.mmap_size = 0;
	p.off.cqes = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_RING_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	p.off.cqes = 0;
	p.off.__reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_RING_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, enter(self->fd, 0, 0, 0));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(0, setup(self->fd, &p, 8, 0));
}

TEST_F(ring, enter_without_ring)
{
	EXPECT_EQ(-1, enter(self->fd, 1, 0, 0));
	EXPECT_EQ(EBADFD, errno);
}

/* ENTER's argument follows the size/flags convention of every ioctl. */
TEST_F(ring, enter_bad_args)
{
	struct kgo_ring_params p;
	struct {
		struct kgo_enter e;
		uint64_t tail;
	} a = { .e = { .size = sizeof(a.e) } };

	ASSERT_EQ(0, setup(self->fd, &p, SQ, 0));
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_ENTER, NULL));
	EXPECT_EQ(EFAULT, errno);
	a.e.size = sizeof(a.e) - 8;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_ENTER, &a));
	EXPECT_EQ(EINVAL, errno);
	a.e.size = sizeof(a);
	a.tail = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_ENTER, &a));
	EXPECT_EQ(E2BIG, errno);
	a.tail = 0;
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_ENTER, &a));
	a.e.flags = 1U << 31;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_ENTER, &a));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(ring, bad_mmap)
{
	struct kgo_ring_params p;
	void *m;

	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(ENXIO, errno);
	ASSERT_EQ(0, setup(self->fd, &p, SQ, CQ));
	m = mmap(NULL, p.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 4096);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, p.mmap_size + 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, p.mmap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	/* A right one, which cannot grow. */
	m = mmap(NULL, p.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(MAP_FAILED, mremap(m, p.mmap_size, p.mmap_size + 4096, MREMAP_MAYMOVE));
	EXPECT_EQ(0, munmap(m, p.mmap_size));
}

/* A round trip, through libkgo on the fixture's fd. */
TEST_F(ring, nop)
{
	struct kgo_ring_params p = { .sq_entries = SQ };
	struct kgo_completion *c;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	put(&self->r, KGO_TASK_NOP, 42);
	ASSERT_EQ(1, kgo_ring_submit_and_wait(&self->r, 1));
	ASSERT_EQ(0, kgo_ring_peek_cqe(&self->r, &c));
	EXPECT_EQ(42, c->tag);
	EXPECT_EQ(0, c->status);
	EXPECT_EQ(KGO_TASK_NOP, c->kind);
	EXPECT_NE(~0U, c->cpu);
	kgo_ring_cqe_seen(&self->r, c);
	EXPECT_EQ(-EAGAIN, kgo_ring_peek_cqe(&self->r, &c));
	/* Nothing in flight: a wait for more returns at once. */
	EXPECT_EQ(0, enter(self->fd, 0, 4, KGO_WAIT_FOREVER));
	/* poll(2) sees the CQ. */
	put(&self->r, KGO_TASK_NOP, 43);
	ASSERT_EQ(1, kgo_ring_submit(&self->r));
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };

	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	EXPECT_EQ(1, kgo_ring_cq_ready(&self->r));
}

/*
 * SQ polling: published tasks are consumed without ENTER; an idle
 * poller sleeps, says so in sq_flags, and ENTER's SQ_WAKEUP wakes it.
 * CHECKSUM is refused there. KGO_IOC_STATS counts what pollers did.
 */
TEST_F(ring, sqpoll)
{
	struct kgo_ring_params p = { .sq_entries = SQ, .flags = KGO_RING_SQPOLL,
				     .sq_idle_ms = 20 };
	struct kgo_stats st0 = { .size = sizeof(st0) }, st1 = { .size = sizeof(st1) };
	uint8_t seen[16] = {};
	unsigned int bad = 0, i, got = 0;
	struct kgo_completion *c;
	uint64_t t0;

	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_STATS, &st0));
	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	EXPECT_EQ(20, p.sq_idle_ms);
	for (i = 0; i < 8; i++)
		put(&self->r, KGO_TASK_NOP, i);
	/* Published: the poller takes them, whether we enter or not. */
	kgo_ring_store_release(self->r.sq_tail, self->r.sq_local_tail);
	t0 = now_ns();
	while (kgo_ring_cq_ready(&self->r) < 8 && now_ns() - t0 < 10 * NSEC) {
		if (*self->r.sq_flags & KGO_SQ_NEED_WAKEUP)
			kgo_ring_submit(&self->r);	/* it fell asleep first */
		usleep(1000);
	}
	got += reap(&self->r, seen, 16, 0, &bad);
	EXPECT_EQ(8, got);

	/* Idle for longer than sq_idle_ms: asleep, and woken by ENTER. */
	t0 = now_ns();
	while (!(__atomic_load_n(self->r.sq_flags, __ATOMIC_ACQUIRE) & KGO_SQ_NEED_WAKEUP) &&
	       now_ns() - t0 < 10 * NSEC)
		usleep(10000);
	EXPECT_TRUE(*self->r.sq_flags & KGO_SQ_NEED_WAKEUP);
	for (i = 8; i < 12; i++)
		put(&self->r, KGO_TASK_NOP, i);
	ASSERT_EQ(4, kgo_ring_submit_and_wait(&self->r, 4));
	got += reap(&self->r, seen, 16, 0, &bad);
	EXPECT_EQ(12, got);
	EXPECT_EQ(0, bad);

	/* No user memory for the poller to copy from. */
	put(&self->r, KGO_TASK_CHECKSUM, 12)->args[1] = 8;
	ASSERT_EQ(1, kgo_ring_submit_and_wait(&self->r, 1));
	ASSERT_EQ(0, kgo_ring_peek_cqe(&self->r, &c));
	EXPECT_EQ(-EOPNOTSUPP, c->status);
	kgo_ring_cqe_seen(&self->r, c);

	/* The poller counts a batch once its submission returns, after the CQE. */
	t0 = now_ns();
	do {
		ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_STATS, &st1));
	} while (st1.sqpoll_tasks < st0.sqpoll_tasks + 13 && now_ns() - t0 < NSEC &&
		 !usleep(1000));
	EXPECT_LE(st0.sqpoll_tasks + 13, st1.sqpoll_tasks);
	EXPECT_LT(st0.sqpoll_ns, st1.sqpoll_ns);
}

/* Times unless the ring asked for none; flags the module lacks are refused. */
TEST_F(ring, no_times)
{
	struct kgo_ring_params p = { .sq_entries = SQ, .flags = KGO_RING_NO_TIMES };
	struct kgo_completion *c;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	put(&self->r, KGO_TASK_NOP, 1);
	ASSERT_EQ(1, kgo_ring_submit_and_wait(&self->r, 1));
	ASSERT_EQ(0, kgo_ring_peek_cqe(&self->r, &c));
	EXPECT_EQ(0, c->status);
	EXPECT_EQ(0, c->queued_ns);
	EXPECT_EQ(0, c->started_ns);
	EXPECT_EQ(0, c->ended_ns);
	EXPECT_NE(~0U, c->cpu);
	kgo_ring_cqe_seen(&self->r, c);
}

TEST_F(ring, times)
{
	struct kgo_ring_params p = { .sq_entries = SQ };
	struct kgo_completion *c;
	uint64_t t0 = now_ns();

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	put(&self->r, KGO_TASK_NOP, 1);
	ASSERT_EQ(1, kgo_ring_submit_and_wait(&self->r, 1));
	ASSERT_EQ(0, kgo_ring_peek_cqe(&self->r, &c));
	EXPECT_LE(t0, c->queued_ns);
	EXPECT_LE(c->queued_ns, c->started_ns);
	EXPECT_LE(c->started_ns, c->ended_ns);
	EXPECT_GE(now_ns(), c->ended_ns);
	kgo_ring_cqe_seen(&self->r, c);
}

/* Entries that are no tasks are consumed and complete with their error. */
TEST_F(ring, garbage_entries)
{
	struct kgo_ring_params p = { .sq_entries = SQ };
	uint8_t seen[8] = {};
	struct kgo_completion *c;
	struct kgo_task *t;
	unsigned int head, n = 0;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	put(&self->r, 0, 0);				/* no such kind */
	put(&self->r, KGO_TASK_NOP, 1)->flags = 6;	/* flags it lacks */
	put(&self->r, KGO_TASK_SPIN, 2)->args[0] = KGO_SPIN_MAX_NS + 1;
	t = put(&self->r, KGO_TASK_CHECKSUM, 3);
	t->args[0] = 8;					/* unmapped */
	t->args[1] = 64;
	put(&self->r, KGO_TASK_NOP, 4);			/* a good one */
	ASSERT_EQ(5, kgo_ring_submit_and_wait(&self->r, 5));
	kgo_ring_for_each_cqe(&self->r, head, c) {
		static const int want[] = { -EINVAL, -EINVAL, -EINVAL, -EFAULT, 0 };

		ASSERT_GT(5, c->tag);
		EXPECT_EQ(0, seen[c->tag]++);
		EXPECT_EQ(want[c->tag], c->status) TH_LOG("tag %llu", (unsigned long long)c->tag);
		n++;
	}
	kgo_ring_cq_advance(&self->r, n);
	EXPECT_EQ(5, n);
}

/* A sq_tail too far ahead is refused; nothing is consumed. */
TEST_F(ring, bad_sq_tail)
{
	struct kgo_ring_params p = { .sq_entries = SQ };
	uint8_t seen[1] = {};
	unsigned int bad = 0;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	kgo_ring_store_release(self->r.sq_tail, SQ + 1);
	EXPECT_EQ(-1, enter(self->fd, SQ, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, *self->r.sq_head);
	kgo_ring_store_release(self->r.sq_tail, -5);
	EXPECT_EQ(-1, enter(self->fd, SQ, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	/* Put right, it works. */
	*self->r.sq_tail = 0;
	self->r.sq_local_tail = 0;
	put(&self->r, KGO_TASK_NOP, 0);
	ASSERT_EQ(1, kgo_ring_submit_and_wait(&self->r, 1));
	EXPECT_EQ(1, reap(&self->r, seen, 1, 0, &bad));
	EXPECT_EQ(0, bad);
}

/*
 * No completion is dropped: with the CQ's slots all promised, ENTER
 * refuses more with -EBUSY and leaves them in the SQ; each completion
 * then arrives, and once the caller consumes some, the rest go in. A
 * garbage cq_head counts as a full CQ.
 */
TEST_F(ring, overflow)
{
	struct kgo_ring_params p = { .sq_entries = SQ, .cq_entries = CQ };
	uint8_t seen[CQ + SQ] = {};
	unsigned int bad = 0, i, got = 0;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	for (i = 0; i < CQ; i++) {
		put(&self->r, KGO_TASK_NOP, i);
		if (kgo_ring_sq_space_left(&self->r) == 0 || i == CQ - 1)
			ASSERT_EQ(SQ, kgo_ring_submit(&self->r));
	}
	for (i = CQ; i < CQ + SQ; i++)
		put(&self->r, KGO_TASK_NOP, i);
	ASSERT_EQ(-EBUSY, kgo_ring_submit_and_wait(&self->r, 0));
	EXPECT_EQ(SQ, kgo_ring_sq_ready(&self->r));	/* still there */
	ASSERT_EQ(0, enter(self->fd, 0, CQ, KGO_WAIT_FOREVER));
	EXPECT_EQ(CQ, kgo_ring_cq_ready(&self->r));

	/* A cq_head past the tail is garbage: still full. */
	*self->r.cq_head += 100;
	EXPECT_EQ(-EBUSY, kgo_ring_submit(&self->r));
	*self->r.cq_head -= 100;

	/* Consume 3: exactly 3 more go in. */
	ASSERT_EQ(3, reap_max(&self->r, seen, CQ + SQ, 0, &bad, 3));
	EXPECT_EQ(3, kgo_ring_submit(&self->r));
	EXPECT_EQ(0, enter(self->fd, 0, CQ, KGO_WAIT_FOREVER));
	got = 3;
	while (got < CQ + SQ) {
		unsigned int n = reap(&self->r, seen, CQ + SQ, 0, &bad);

		got += n;
		if (kgo_ring_sq_ready(&self->r))
			ASSERT_LT(0, kgo_ring_submit(&self->r));
		if (!n)
			ASSERT_EQ(0, enter(self->fd, 0, 1, 10 * NSEC));
	}
	EXPECT_EQ(0, bad);
	for (i = 0; i < CQ + SQ; i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("tag %u", i);
}

/* A wait gives up at its timeout, and 0 does not wait at all. */
TEST_F(ring, wait_timeout)
{
	struct kgo_ring_params p = { .sq_entries = SQ };
	struct kgo_task *t;
	uint64_t t0;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	t = kgo_ring_get_sqe(&self->r);
	t->kind = KGO_TASK_SLEEP;
	t->args[0] = 2 * NSEC;
	ASSERT_EQ(1, kgo_ring_submit(&self->r));
	EXPECT_EQ(-1, enter(self->fd, 0, 1, 0));
	EXPECT_EQ(ETIMEDOUT, errno);
	t0 = now_ns();
	EXPECT_EQ(-1, enter(self->fd, 0, 1, NSEC / 10));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_LE(NSEC / 10, now_ns() - t0);
	EXPECT_EQ(0, enter(self->fd, 0, 1, KGO_WAIT_FOREVER));
	EXPECT_EQ(1, kgo_ring_cq_ready(&self->r));
}

/*
 * The module writes through its own mapping: unmapping with tasks in
 * flight loses nothing, and a new mapping sees their completions. A
 * cancel posts each cancelled task's completion to the CQ.
 */
TEST_F(ring, unmap_in_flight_and_cancel)
{
	struct kgo_ring_params p = { .sq_entries = SQ };
	struct kgo_cancel cn = { .size = sizeof(cn), .flags = KGO_CANCEL_ALL | KGO_CANCEL_RUNNING };
	struct kgo_completion *c;
	unsigned int i, head, n = 0;
	void *m;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	for (i = 0; i < SQ; i++) {
		struct kgo_task *t = kgo_ring_get_sqe(&self->r);

		t->kind = KGO_TASK_SLEEP;
		t->args[0] = KGO_SLEEP_MAX_NS;
		t->tag = i;
	}
	ASSERT_EQ(SQ, kgo_ring_submit(&self->r));
	ASSERT_EQ(0, munmap(self->r.mem, self->r.mem_size));
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, &cn));
	EXPECT_EQ(SQ, cn.cancelled);
	/* Where it was: the ring's pointers point there. */
	m = mmap(self->r.mem, p.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 self->fd, 0);
	ASSERT_EQ(self->r.mem, m);
	ASSERT_EQ(0, enter(self->fd, 0, SQ, 10 * NSEC));
	kgo_ring_for_each_cqe(&self->r, head, c) {
		EXPECT_EQ(-ECANCELED, c->status);
		n++;
	}
	kgo_ring_cq_advance(&self->r, n);
	EXPECT_EQ(SQ, n);
}

/* A child shares the mapped ring; its exit leaves the parent's working. */
TEST_F(ring, fork)
{
	struct kgo_ring_params p = { .sq_entries = SQ };
	uint8_t seen[2] = {};
	unsigned int bad = 0;
	int status;
	pid_t pid;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		put(&self->r, KGO_TASK_NOP, 0);
		_exit(kgo_ring_submit_and_wait(&self->r, 1) != 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	/* The child's entry is in the parent's view, one past its own. */
	self->r.sq_local_tail = *self->r.sq_tail;
	EXPECT_EQ(1, reap(&self->r, seen, 2, 0, &bad));
	put(&self->r, KGO_TASK_NOP, 1);
	ASSERT_EQ(1, kgo_ring_submit_and_wait(&self->r, 1));
	EXPECT_EQ(1, reap(&self->r, seen, 2, 0, &bad));
	EXPECT_EQ(0, bad);
}

/* The old path keeps working beside a ring, on the same fd. */
TEST_F(ring, ioctl_beside_ring)
{
	struct kgo_ring_params p = { .sq_entries = SQ };
	struct kgo_task t = { .kind = KGO_TASK_NOP, .tag = 7 };
	struct kgo_wait w = { .size = sizeof(w), .min_complete = 1,
			      .timeout_ns = KGO_WAIT_FOREVER };
	struct kgo_completion c;

	ASSERT_EQ(0, kgo_ring_init_params(self->fd, &self->r, &p));
	ASSERT_EQ(1, submit(self->fd, &t, 1));
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_WAIT, &w));
	ASSERT_EQ(sizeof(c), read(self->fd, &c, sizeof(c)));
	EXPECT_EQ(7, c.tag);
	EXPECT_EQ(0, kgo_ring_cq_ready(&self->r));
	/* And WAIT with nothing in flight returns, the ring's slots aside. */
	w.timeout_ns = 0;
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_WAIT, &w));
}

/* ----- the user's goroutine cap and the SQ poller ----- */

#define PARAMS		"/sys/module/kgo/parameters/"

static long read_param(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int write_param(const char *name, long v)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	snprintf(buf, sizeof(buf), "%ld", v);
	return write_str(path, buf);
}

/* max_user_goroutines and max_user_rings, put back after each test. */
FIXTURE(capped) {
	long goroutines, rings;
	int fd;
};

FIXTURE_SETUP(capped)
{
	self->goroutines = read_param("max_user_goroutines");
	ASSERT_LT(0, self->goroutines);
	self->rings = read_param("max_user_rings");
	KGO_OPEN(self->fd, 0);
}

FIXTURE_TEARDOWN(capped)
{
	close(self->fd);
	write_param("max_user_goroutines", self->goroutines);
	if (self->rings > 0)
		write_param("max_user_rings", self->rings);
}

static uint64_t sqpoll_ns(struct __test_metadata *_metadata, int fd)
{
	struct kgo_stats st = { .size = sizeof(st) };

	EXPECT_EQ(0, ioctl(fd, KGO_IOC_STATS, &st));
	return st.sqpoll_ns;
}

/*
 * An SQ entry the poller must refuse for a reason not its own (the
 * user's goroutine cap is full): the poller backs off instead of
 * retrying flat out, says why in sq_flags, and consumes the entry once
 * the cap has room again.
 */
TEST_F(capped, sqpoll_refused_backs_off)
{
	struct kgo_ring_params p = { .sq_entries = SQ, .flags = KGO_RING_SQPOLL,
				     .sq_idle_ms = 10 };
	/* Longer than the look for the flag and the measurement together. */
	struct kgo_task sleep = { .kind = KGO_TASK_SLEEP, .args = { KGO_SLEEP_MAX_NS } };
	struct kgo_cancel cn = { .size = sizeof(cn),
				 .flags = KGO_CANCEL_ALL | KGO_CANCEL_RUNNING };
	struct kgo_ring r = { .fd = -1 };
	struct kgo_completion *c;
	uint64_t t0, busy, wall;
	unsigned int held = 0;
	int rfd;

	ASSERT_EQ(0, write_param("max_user_goroutines", 4));
	rfd = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, rfd);
	ASSERT_EQ(0, kgo_ring_init_params(rfd, &r, &p));
	/*
	 * Fill the cap with SLEEPs, up to SUBMIT's -EAGAIN; again after a
	 * while, for goroutines of earlier tests that were still exiting.
	 */
	for (int round = 0; round < 2; round++) {
		while (held < 8 && submit(self->fd, &sleep, 1) == 1)
			held++;
		EXPECT_EQ(EAGAIN, errno);
		usleep(200000);
	}
	ASSERT_LT(0, held);

	put(&r, KGO_TASK_NOP, 1);
	EXPECT_EQ(1, kgo_ring_submit(&r));
	t0 = now_ns();
	while (!(__atomic_load_n(r.sq_flags, __ATOMIC_ACQUIRE) & KGO_SQ_EAGAIN) &&
	       now_ns() - t0 < 2 * NSEC)
		usleep(1000);
	EXPECT_TRUE(*r.sq_flags & KGO_SQ_EAGAIN) TH_LOG("sq_flags %#x", *r.sq_flags);
	EXPECT_FALSE(*r.sq_flags & KGO_SQ_ENOMEM);

	/* A second of refusals: the poller is awake for a small part of it. */
	t0 = now_ns();
	busy = sqpoll_ns(_metadata, rfd);
	usleep(1000000);
	busy = sqpoll_ns(_metadata, rfd) - busy;
	wall = now_ns() - t0;
	EXPECT_GT(wall / 5, busy) TH_LOG("poller awake %llu of %llu ns",
					 (unsigned long long)busy, (unsigned long long)wall);
	EXPECT_EQ(0, kgo_ring_cq_ready(&r));
	EXPECT_EQ(1, kgo_ring_sq_ready(&r));

	/* Room again: the entry is consumed, and the flag goes. */
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, &cn));
	EXPECT_EQ(held, cn.cancelled);
	t0 = now_ns();
	while (!kgo_ring_cq_ready(&r) && now_ns() - t0 < 10 * NSEC)
		usleep(1000);
	ASSERT_EQ(0, kgo_ring_peek_cqe(&r, &c));
	EXPECT_EQ(1, c->tag);
	EXPECT_EQ(0, c->status);
	kgo_ring_cqe_seen(&r, c);
	/* Cleared once the poller's submission returns, just after the CQE. */
	t0 = now_ns();
	while ((__atomic_load_n(r.sq_flags, __ATOMIC_ACQUIRE) & (KGO_SQ_EAGAIN | KGO_SQ_ENOMEM)) &&
	       now_ns() - t0 < 2 * NSEC)
		usleep(1000);
	EXPECT_FALSE(*r.sq_flags & (KGO_SQ_EAGAIN | KGO_SQ_ENOMEM))
		TH_LOG("sq_flags %#x", *r.sq_flags);
	kgo_ring_exit(&r);
	close(rfd);
}

/* An SQPOLL ring of one entry on @fd: 0, or -1 with errno. */
static int sqpoll_setup(int fd)
{
	struct kgo_ring_params p = {
		.size = sizeof(p), .sq_entries = 1, .cq_entries = 1,
		.flags = KGO_RING_SQPOLL,
	};

	return ioctl(fd, KGO_IOC_RING_SETUP, &p);
}

/*
 * Opens @n fds and sets up a ring on each with @fn, retrying (for up to
 * 5 s) until at least @want are set up: goroutines and rings of earlier
 * tests go away asynchronously. Returns how many were; *@other counts
 * refusals other than -EAGAIN.
 */
static int rings_on(int *fds, bool *has, int n, int want, int (*fn)(int), int *other)
{
	int made = 0;

	for (int attempt = 0; attempt < 100; attempt++) {
		made = 0;
		for (int i = 0; i < n; i++) {
			fds[i] = open(KGO_DEVICE_PATH, O_RDWR);
			has[i] = fds[i] >= 0 && fn(fds[i]) == 0;
			if (has[i])
				made++;
			else if (errno != EAGAIN)
				(*other)++;
		}
		if (made >= want)
			break;
		for (int i = 0; i < n; i++)
			close(fds[i]);
		usleep(50000);
	}
	return made;
}

/*
 * A poller is a goroutine the user caused: it counts against
 * max_user_goroutines. With the cap at 4, 8 fds each setting up an
 * SQPOLL ring: 4 are set up and the others get -EAGAIN, as a task does
 * then; closing one ring's fd gives its place back.
 */
TEST_F(capped, sqpoll_counts_against_cap)
{
	struct kgo_task t = { .kind = KGO_TASK_NOP };
	int fds[8], i, made, other = 0, with = -1, without = -1;
	bool has[8];

	ASSERT_EQ(0, write_param("max_user_goroutines", 4));
	made = rings_on(fds, has, 8, 4, sqpoll_setup, &other);
	EXPECT_EQ(4, made);
	EXPECT_EQ(0, other);
	/* No goroutine left for a task either. */
	EXPECT_EQ(-1, submit(self->fd, &t, 1));
	EXPECT_EQ(EAGAIN, errno);
	for (i = 0; i < 8; i++) {
		if (has[i] && with < 0)
			with = i;
		if (!has[i])
			without = i;
	}
	ASSERT_LE(0, with);
	ASSERT_LE(0, without);
	/* A poller gone gives its place back (its exit is asynchronous). */
	close(fds[with]);
	for (i = 0; i < 1000; i++) {
		if (sqpoll_setup(fds[without]) == 0)
			break;
		ASSERT_EQ(EAGAIN, errno);
		usleep(10000);
	}
	EXPECT_GT(1000, i);
	for (i = 0; i < 8; i++)
		if (i != with)
			close(fds[i]);
}

static int small_setup(int fd)
{
	struct kgo_ring_params p;

	return setup(fd, &p, 1, 1);
}

/*
 * Rings are capped per user, whatever their size, before anything is
 * allocated: the third of two is -EAGAIN, and that fd can set one up
 * once another fd's ring is gone.
 */
TEST_F(capped, rings_cap)
{
	int fds[3], i, made, other = 0, with = -1, without = -1;
	bool has[3];

	ASSERT_LT(0, self->rings) TH_LOG("no max_user_rings parameter");
	ASSERT_EQ(0, write_param("max_user_rings", 2));
	made = rings_on(fds, has, 3, 2, small_setup, &other);
	EXPECT_EQ(2, made);
	EXPECT_EQ(0, other);
	for (i = 0; i < 3; i++) {
		if (has[i] && with < 0)
			with = i;
		if (!has[i])
			without = i;
	}
	ASSERT_LE(0, with);
	ASSERT_LE(0, without);
	/* Unmapped and closed, with nothing in flight: freed at close. */
	close(fds[with]);
	EXPECT_EQ(0, small_setup(fds[without])) TH_LOG("%s", strerror(errno));
	for (i = 0; i < 3; i++)
		if (i != with)
			close(fds[i]);
}

TEST_HARNESS_MAIN
