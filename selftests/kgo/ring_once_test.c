// SPDX-License-Identifier: GPL-2.0
/*
 * Rings under load and under loss of their owner.
 *
 * exactly_once: 8 threads on 4 rings. On each ring one thread submits
 * (the SQ side) and one reaps (the CQ side), both entering the same fd
 * at once. Mixed tasks with unique tags, one in 97 not a task at all,
 * half the NOPs and CHECKSUMs run inline (KGO_TASK_F_INLINE, posted by
 * the submitter while goroutines post theirs); every tag completes
 * exactly once, with the right status and result.
 * KGO_RING_ONCE_TASKS in the environment overrides the task count.
 *
 * kill_in_flight, close_in_flight: a process killed, or an fd closed and
 * unmapped, with long tasks running leaves nothing behind, promptly.
 * close_keeps_mapping: an fd closed while its ring stays mapped keeps
 * running its tasks, and their completions still arrive in the CQ.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "libkgo.h"
#include "kgo_util.h"
#include "kgo_crc32c.h"
#include "kselftest_harness.h"

#define NRINGS		4
#define NTASKS		20000
#define SQ		64
#define CQ		128
#define CSUM_LEN	64
#define SPIN_NS		1000
#define YIELDS		3
#define FANOUT		2
#define DEPTH		2
#define BAD_EVERY	97	/* tags that are no task: -EINVAL */
#define TIMEOUT_S	600
#define DEADLINE_NS	((TIMEOUT_S - 60) * NSEC)
#define MAX_LOGS	20
/*
 * How long the long tasks below last at the least: gone before then,
 * they were ended by the kill or close, not by themselves. How soon is
 * logged; a bound in time would be one on how busy the host is.
 */
#define LONG_NS		KGO_SLEEP_MAX_NS

struct run {
	uint64_t ntasks, deadline;
	uint8_t *seen;
	uint64_t errors, logs;
};

struct side {
	struct run *run;
	struct kgo_ring ring;
	uint64_t first, end;		/* its tags: [first, end) */
	uint64_t reaped;		/* A: by the reaper */
	unsigned char bufs[SQ][CSUM_LEN];	/* per SQ slot: CHECKSUM data */
	pthread_t submitter, reaper;
};

static void __attribute__((format(printf, 2, 3))) fail(struct run *run, const char *fmt, ...)
{
	va_list ap;

	__atomic_fetch_add(&run->errors, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&run->logs, 1, __ATOMIC_RELAXED) >= MAX_LOGS)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "# ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static uint32_t kind_of(uint64_t tag)
{
	static const uint32_t kinds[] = {
		KGO_TASK_NOP, KGO_TASK_SPIN, KGO_TASK_YIELD, KGO_TASK_SPAWN, KGO_TASK_CHECKSUM,
	};

	return tag % BAD_EVERY == 0 ? 0 : kinds[tag % 5];
}

/* Fills SQ entry @t for @tag; @buf lasts until the module consumed it. */
static void make_task(struct kgo_task *t, uint64_t tag, unsigned char *buf)
{
	t->kind = kind_of(tag);
	t->tag = tag;
	/* Half the NOPs and CHECKSUMs run in the submitter (and post from it). */
	if ((t->kind == KGO_TASK_NOP || t->kind == KGO_TASK_CHECKSUM) && (tag / 5) % 2)
		t->flags = KGO_TASK_F_INLINE;
	switch (t->kind) {
	case KGO_TASK_SPIN:
		t->args[0] = SPIN_NS;
		break;
	case KGO_TASK_YIELD:
		t->args[0] = YIELDS;
		break;
	case KGO_TASK_SPAWN:
		t->args[0] = FANOUT;
		t->args[1] = DEPTH;
		break;
	case KGO_TASK_CHECKSUM:
		fill_for_tag(buf, CSUM_LEN, tag);
		t->args[0] = (uintptr_t)buf;
		t->args[1] = CSUM_LEN;
		break;
	}
}

static void check(struct run *run, const struct kgo_completion *c)
{
	unsigned long long tag = c->tag;
	unsigned char buf[CSUM_LEN];
	uint64_t expect = 0;

	if (tag >= run->ntasks) {
		fail(run, "unknown tag %llu (status %d)", tag, c->status);
		return;
	}
	if (__atomic_fetch_add(&run->seen[tag], 1, __ATOMIC_RELAXED))
		fail(run, "tag %llu completed again (status %d)", tag, c->status);
	if (!kind_of(tag)) {
		if (c->status != -EINVAL)
			fail(run, "tag %llu, no task: status %d", tag, c->status);
		return;
	}
	if (c->status) {
		fail(run, "tag %llu: status %d", tag, c->status);
		return;
	}
	switch (c->kind) {
	case KGO_TASK_SPIN:
		if (c->result < SPIN_NS)
			fail(run, "tag %llu: spun %llu ns", tag, (unsigned long long)c->result);
		return;
	case KGO_TASK_YIELD:
		expect = YIELDS;
		break;
	case KGO_TASK_SPAWN:
		expect = 1 + FANOUT + FANOUT * FANOUT;
		break;
	case KGO_TASK_CHECKSUM:
		fill_for_tag(buf, CSUM_LEN, tag);
		expect = kgo_crc32c(buf, CSUM_LEN);
		break;
	}
	if (c->kind != kind_of(tag) || c->result != expect)
		fail(run, "tag %llu: kind %u result %#llx, not %#llx", tag, c->kind,
		     (unsigned long long)c->result, (unsigned long long)expect);
}

/* The SQ side: get, fill, submit; on a full SQ or CQ, submit and retry. */
static void *submitter(void *arg)
{
	struct side *sd = arg;
	struct kgo_ring *r = &sd->ring;
	uint64_t tag = sd->first;
	int ret;

	while (tag < sd->end || kgo_ring_sq_ready(r)) {
		struct kgo_task *t;

		if (now_ns() > sd->run->deadline) {
			fail(sd->run, "%s: deadline, at tag %llu", __func__, (unsigned long long)tag);
			break;
		}
		while (tag < sd->end && (t = kgo_ring_get_sqe(r))) {
			make_task(t, tag, sd->bufs[(r->sq_local_tail - 1) & (SQ - 1)]);
			tag++;
		}
		ret = kgo_ring_submit(r);
		if (ret == -EBUSY || ret == -EAGAIN || ret == 0) {
			usleep(200);	/* the reaper makes room */
		} else if (ret < 0) {
			fail(sd->run, "submit: %s", strerror(-ret));
			break;
		}
	}
	return NULL;
}

/* The CQ side: wait for some, check them, give their slots back. */
static void *reaper(void *arg)
{
	struct side *sd = arg;
	struct kgo_ring *r = &sd->ring;
	uint64_t want = sd->end - sd->first;

	while (__atomic_load_n(&sd->reaped, __ATOMIC_RELAXED) < want) {
		struct kgo_completion *c;
		unsigned int head, n = 0;
		int ret;

		if (now_ns() > sd->run->deadline) {
			fail(sd->run, "%s: deadline, %llu of %llu reaped", __func__,
			     (unsigned long long)sd->reaped, (unsigned long long)want);
			break;
		}
		ret = kgo_ring_enter(r, 0, 16, 0, NSEC / 10);
		if (ret < 0 && ret != -ETIMEDOUT && ret != -EINTR) {
			fail(sd->run, "enter to wait: %s", strerror(-ret));
			break;
		}
		kgo_ring_for_each_cqe(r, head, c) {
			check(sd->run, c);
			n++;
		}
		kgo_ring_cq_advance(r, n);
		__atomic_fetch_add(&sd->reaped, n, __ATOMIC_RELAXED);
		if (!n)
			usleep(100);	/* nothing in flight yet */
	}
	return NULL;
}

FIXTURE(once) {
	int unused;
};

FIXTURE_SETUP(once)
{
}

FIXTURE_TEARDOWN(once)
{
}

TEST_F_TIMEOUT(once, exactly_once, TIMEOUT_S)
{
	const char *env = getenv("KGO_RING_ONCE_TASKS");
	struct side *sides = calloc(NRINGS, sizeof(*sides));
	uint64_t missing = 0, t0 = now_ns();
	struct run run = {};

	ASSERT_NE(NULL, sides);
	run.ntasks = env ? strtoull(env, NULL, 0) : NTASKS;
	ASSERT_LT(NRINGS, run.ntasks);
	run.deadline = now_ns() + DEADLINE_NS;
	run.seen = calloc(run.ntasks, 1);
	ASSERT_NE(NULL, run.seen);
	for (int i = 0; i < NRINGS; i++) {
		struct kgo_ring_params p = { .sq_entries = SQ, .cq_entries = CQ };
		int fd = open(KGO_DEVICE_PATH, O_RDWR);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, kgo_ring_init_params(fd, &sides[i].ring, &p));
		sides[i].run = &run;
		sides[i].first = run.ntasks * i / NRINGS;
		sides[i].end = run.ntasks * (i + 1) / NRINGS;
	}
	for (int i = 0; i < NRINGS; i++) {
		ASSERT_EQ(0, pthread_create(&sides[i].submitter, NULL, submitter, &sides[i]));
		ASSERT_EQ(0, pthread_create(&sides[i].reaper, NULL, reaper, &sides[i]));
	}
	for (int i = 0; i < NRINGS; i++) {
		pthread_join(sides[i].submitter, NULL);
		pthread_join(sides[i].reaper, NULL);
		close(sides[i].ring.fd);
		kgo_ring_exit(&sides[i].ring);
	}
	for (uint64_t t = 0; t < run.ntasks; t++)
		if (run.seen[t] != 1 && missing++ < MAX_LOGS)
			TH_LOG("tag %llu completed %u times", (unsigned long long)t, run.seen[t]);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, run.errors);
	TH_LOG("%llu tasks in %.1f s", (unsigned long long)run.ntasks,
	       (now_ns() - t0) / 1e9);
	free(run.seen);
	free(sides);
}

/*
 * Waits until no more goroutines are alive than @before, at most until
 * @sub + LONG_NS (@sub: when the long tasks were submitted); how long
 * it took.
 */
static uint64_t drained(long long before, uint64_t sub, long long *n)
{
	uint64_t t0 = now_ns();

	while (now_ns() < sub + LONG_NS) {
		*n = goroutines_alive();
		if (*n <= before)
			break;
		usleep(10000);
	}
	return now_ns() - t0;
}

/* Fills @r's SQ with tasks of 10 s or more and submits them: how many. */
static int submit_long(struct kgo_ring *r)
{
	static const struct kgo_task long_tasks[] = {
		{ .kind = KGO_TASK_SLEEP, .args = { KGO_SLEEP_MAX_NS } },
		{ .kind = KGO_TASK_BLOCK, .args = { KGO_BLOCK_MAX_US } },
		{ .kind = KGO_TASK_YIELD, .args = { KGO_YIELD_MAX } },
		{ .kind = KGO_TASK_PINGPONG, .args = { KGO_PINGPONG_MAX } },
	};
	struct kgo_task *t;
	int i = 0;

	while ((t = kgo_ring_get_sqe(r))) {
		*t = long_tasks[i % 4];
		t->tag = i++;
	}
	return kgo_ring_submit(r);
}

TEST(kill_in_flight)
{
	long long before = goroutines_alive(), n = -1;
	int status, pfd[2];
	uint64_t took, sub;
	char c;
	pid_t pid;

	if (before < 0)
		SKIP(return, "no /sys/kernel/debug/kgo/sched");
	ASSERT_EQ(0, pipe(pfd));
	sub = now_ns();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kgo_ring r;

		if (kgo_ring_init(SQ, &r, 0) || submit_long(&r) != SQ)
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	took = drained(before, sub, &n);
	EXPECT_GE(before, n);
	TH_LOG("goroutines back to %lld in %llu ms after the kill", n,
	       (unsigned long long)took / 1000000);
}

TEST(close_in_flight)
{
	long long before = goroutines_alive(), n = -1;
	struct kgo_ring r;
	uint64_t took, sub;

	if (before < 0)
		SKIP(return, "no /sys/kernel/debug/kgo/sched");
	ASSERT_EQ(0, kgo_ring_init(SQ, &r, 0));
	sub = now_ns();
	ASSERT_EQ(SQ, submit_long(&r));
	kgo_ring_exit(&r);	/* unmaps and closes */
	took = drained(before, sub, &n);
	EXPECT_GE(before, n);
	TH_LOG("goroutines back to %lld in %llu ms after close", n,
	       (unsigned long long)took / 1000000);
}

/* Closing a ring whose poller is awake, or asleep, stops it. */
TEST(close_while_polling)
{
	long long before = goroutines_alive(), n = -1;
	uint64_t took, sub;

	if (before < 0)
		SKIP(return, "no /sys/kernel/debug/kgo/sched");
	for (int asleep = 0; asleep < 2; asleep++) {
		struct kgo_ring r;

		ASSERT_EQ(0, kgo_ring_init(SQ, &r, KGO_RING_SQPOLL));
		sub = now_ns();
		ASSERT_EQ(SQ, submit_long(&r));
		if (asleep)
			usleep(200000);	/* past sq_idle_ms: the poller sleeps */
		kgo_ring_exit(&r);
		took = drained(before, sub, &n);
		EXPECT_GE(before, n);
		TH_LOG("poller %s: goroutines back to %lld in %llu ms after close",
		       asleep ? "asleep" : "awake", n, (unsigned long long)took / 1000000);
	}
}

TEST(close_keeps_mapping)
{
	struct kgo_ring r;
	struct kgo_task *t;
	uint64_t t0;
	int i;

	ASSERT_EQ(0, kgo_ring_init(SQ, &r, 0));
	for (i = 0; i < 16; i++) {
		t = kgo_ring_get_sqe(&r);
		t->kind = KGO_TASK_SLEEP;
		t->args[0] = NSEC / 10;
		t->tag = i;
	}
	ASSERT_EQ(16, kgo_ring_submit(&r));
	ASSERT_EQ(0, close(r.fd));
	r.fd = -1;
	t0 = now_ns();
	while (kgo_ring_cq_ready(&r) < 16 && now_ns() - t0 < 10 * NSEC)
		usleep(10000);
	EXPECT_EQ(16, kgo_ring_cq_ready(&r));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, r.cqes[i].status);
	kgo_ring_exit(&r);
}

TEST_HARNESS_MAIN
