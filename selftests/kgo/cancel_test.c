// SPDX-License-Identifier: GPL-2.0
/*
 * Cancelling running tasks: KGO_IOC_CANCEL with KGO_CANCEL_RUNNING, and
 * the close of an fd (the exit of its process), stop every long kind at
 * once, each with -ECANCELED and what it did so far.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

/*
 * Each 10 s or more when left alone; a cancel must end it much sooner.
 * (SPIN's 1 s could end on its own on a slow machine: KUnit covers it.)
 */
static const struct kgo_task long_tasks[] = {
	{ .kind = KGO_TASK_SLEEP, .args = { KGO_SLEEP_MAX_NS } },
	{ .kind = KGO_TASK_BLOCK, .args = { KGO_BLOCK_MAX_US } },
	{ .kind = KGO_TASK_YIELD, .args = { KGO_YIELD_MAX } },
	{ .kind = KGO_TASK_PINGPONG, .args = { KGO_PINGPONG_MAX } },
	{ .kind = KGO_TASK_SELECT, .args = { KGO_SELECT_TASK_MAX, KGO_SELECT_GAP_MAX_NS } },
	{ .kind = KGO_TASK_SPAWN, .args = { 1, KGO_SPAWN_MAX_NODES - 1 } },
};

#define NLONG		ARRAY_SIZE(long_tasks)
/*
 * The shortest of them, from their submission: ended before then, they
 * were ended by the cancel, not by themselves. How soon is logged; a
 * bound in time would be one on how busy the host is.
 */
#define LONG_NS		KGO_SLEEP_MAX_NS
/* A goroutine on an idle kgo that has not run in this long is stuck. */
#define START_NS	(60 * NSEC)

static int cancel(int fd, uint32_t flags, uint64_t tag, uint32_t *n)
{
	struct kgo_cancel c = { .size = sizeof(c), .flags = flags, .tag = tag };
	int ret = ioctl(fd, KGO_IOC_CANCEL, &c);

	*n = c.cancelled;
	return ret;
}

KGO_FIXTURE(kgo)

TEST_F(kgo, bad_flags)
{
	uint32_t n;

	EXPECT_EQ(-1, cancel(self->fd, 1U << 2, 0, &n));
	EXPECT_EQ(EINVAL, errno);
}

struct reader {
	struct kgo_completion c[NLONG];
	bool seen[NLONG];
	unsigned int got;
};

/* Reads one completion; each tag may come once. */
static int read_one(int fd, struct reader *r)
{
	struct kgo_completion c;

	if (read(fd, &c, sizeof(c)) != sizeof(c) || c.tag >= NLONG || r->seen[c.tag])
		return -1;
	r->seen[c.tag] = true;
	r->c[c.tag] = c;
	r->got++;
	return 0;
}

/* By tag: only the tagged running task stops; then the rest. */
TEST_F(kgo, cancel_running)
{
	struct kgo_task t[NLONG];
	struct reader r = {};
	uint32_t n, n_all, early = 0;
	uint64_t t0, took, sub;
	long long base, parks;
	unsigned int i;

	for (i = 0; i < NLONG; i++) {
		t[i] = long_tasks[i];
		t[i].tag = i;
	}
	/*
	 * Task 0 alone first, and on until the scheduler says it parked:
	 * its goroutine parks in its sleep, after it took the job as
	 * running. "Running" is then a fact, not a guess at how soon a busy
	 * host gets to it. The count is the scheduler's: on a kgo that other
	 * users keep busy too, as a test VM's is not, it could move first.
	 */
	base = PSTAT_SUM(self->fd, parks);
	if (base < 0)
		SKIP(return, "KGO_IOC_STATS gives no per-P records here (CAP_SYS_ADMIN)");
	sub = now_ns();
	ASSERT_EQ(1, submit(self->fd, t, 1));
	while ((parks = PSTAT_SUM(self->fd, parks)) == base) {
		ASSERT_GT(sub + START_NS, now_ns()) TH_LOG("task 0 not parked in 60 s");
		usleep(1000);
	}
	ASSERT_LT(base, parks);
	ASSERT_EQ((int)NLONG - 1, submit(self->fd, t + 1, NLONG - 1));
	/*
	 * Time for the others to start, so that the cancel below finds them
	 * running; whether it did is only logged (started_ns), since queued
	 * ones are cancelled too.
	 */
	usleep(200000);

	/* Without the flag, a running task is left alone. */
	ASSERT_EQ(0, cancel(self->fd, 0, 0, &n));
	EXPECT_EQ(0, n);
	t0 = now_ns();
	ASSERT_EQ(0, cancel(self->fd, KGO_CANCEL_RUNNING, 0, &n));
	EXPECT_EQ(1, n);
	while (!r.seen[0])
		ASSERT_EQ(0, read_one(self->fd, &r));
	EXPECT_EQ(-ECANCELED, r.c[0].status);
	EXPECT_GT(sub + LONG_NS, now_ns());

	ASSERT_EQ(0, cancel(self->fd, KGO_CANCEL_ALL | KGO_CANCEL_RUNNING, 0, &n_all));
	/* Counted once: a second cancel finds nothing new. */
	ASSERT_EQ(0, cancel(self->fd, KGO_CANCEL_ALL | KGO_CANCEL_RUNNING, 0, &n));
	EXPECT_EQ(0, n);
	while (r.got < NLONG)
		ASSERT_EQ(0, read_one(self->fd, &r));
	took = now_ns() - t0;
	EXPECT_GT(sub + LONG_NS, t0 + took);
	for (i = 0; i < NLONG; i++) {
		const struct kgo_task *lt = &long_tasks[i];
		const struct kgo_completion *c = &r.c[i];
		uint64_t whole = lt->kind == KGO_TASK_BLOCK ? lt->args[0] * 1000 :
				 lt->kind == KGO_TASK_SPAWN ? KGO_SPAWN_MAX_NODES : lt->args[0];

		TH_LOG("kind %u: status %d, result %llu of %llu, %s", lt->kind, c->status,
		       (unsigned long long)c->result, (unsigned long long)whole,
		       c->started_ns ? "had started" : "never started");
		/* A chain may stop on the memory budget first (-ENOMEM). */
		if (lt->kind == KGO_TASK_SPAWN && c->status == -ENOMEM) {
			early++;
			continue;
		}
		EXPECT_EQ(-ECANCELED, c->status);
		EXPECT_GT(whole, c->result);
	}
	/*
	 * Each cancelled once, by tag or by the cancel of all; a chain that
	 * ran out of budget may or may not have been counted.
	 */
	EXPECT_GE(NLONG, 1 + n_all);
	EXPECT_LE(NLONG, 1 + n_all + early);
	TH_LOG("cancelled and completed in %llu us", (unsigned long long)took / 1000);
}

/* A process that exits with long tasks running leaves nothing behind. */
TEST(exit_cancels)
{
	long long before = goroutines_alive(), n = -1;
	uint64_t t0, took, sub;
	int status, i;
	pid_t pid;

	if (before < 0)
		SKIP(return, "no /sys/kernel/debug/kgo/sched");
	sub = now_ns();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kgo_task t[NLONG * 8];
		int fd = open(KGO_DEVICE_PATH, O_RDWR);

		for (i = 0; i < (int)(NLONG * 8); i++)
			t[i] = long_tasks[i % NLONG];
		_exit(fd < 0 || submit(fd, t, NLONG * 8) != NLONG * 8);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	/* Gone before any of them could have ended on its own. */
	t0 = now_ns();
	while (now_ns() < sub + LONG_NS) {
		n = goroutines_alive();
		if (n <= before)
			break;
		usleep(10000);
	}
	took = now_ns() - t0;
	EXPECT_GE(before, n);
	TH_LOG("goroutines back to %lld in %llu ms after the exit", n,
	       (unsigned long long)took / 1000000);
}

TEST_HARNESS_MAIN
