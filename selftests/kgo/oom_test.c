// SPDX-License-Identifier: GPL-2.0
/*
 * Memory exhaustion: kgo's goroutines may take what its budget allows
 * (GET_INFO mem_budget), and no more; past it a spawn fails with
 * -ENOMEM, never the OOM killer.
 *
 * A bystander process holds 32 MiB it touched and sleeps; the test pins
 * all of MemAvailable but half the budget (at least half of it)
 * (MAP_POPULATE), so that kgo's allocations run into the machine's
 * memory, and its floor (floor.c), before they run into its budget; then
 * from 8 fds it submits SPAWN trees at their
 * largest (chains of fan-out 1 and depth KGO_SPAWN_MAX_NODES - 1, whose
 * every node holds a stack while it waits for its child; wide trees) and
 * 2 s SLEEP tasks (each holding a stack while it sleeps) until SUBMIT
 * refuses or a cap of count or time is reached. At kgo's peak, a late
 * bystander faults in 8 MiB it did not have: kgo must have left that
 * much (the test's own bookkeeping is faulted in beforehand, so that
 * the late bystander is the only one asking). Then it lets the pinned
 * memory go and reads every completion: status 0, or -ENOMEM/-EAGAIN for
 * trees that could not grow, each accepted task exactly once. The
 * kernel's oom_kill count must not have moved, and the bystander must
 * still be alive.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kgo_stress.h"
#include "kselftest_harness.h"

#define NFDS		8
#define BYSTANDER_MB	32
#define LATE_MB		8	/* at most half the smallest floor */
#define SLEEP_NS	(2 * NSEC)
#define BATCH		256
#define MAX_SLEEPS	(NFDS * 40000)	/* count cap: past the user's cap */
#define SUBMIT_NS	(20 * NSEC)	/* time cap of the submit phase */
#define DRAIN_NS	(150 * NSEC)
#define BOOK_CAP	(1 << 20)
#define ALLOWED		(ST_OK | ST_NOMEM | ST_AGAIN | ST_CANCELED)

FIXTURE(oom) {
	int fds[NFDS];
	int mon;
	pid_t bystander;
	void *pinned;
	size_t pinned_len;
	struct book *book;
	struct kgo_info info;
};

FIXTURE_SETUP(oom)
{
	self->info.size = sizeof(self->info);
	KGO_OPEN(self->mon, 0);
	ASSERT_EQ(0, ioctl(self->mon, KGO_IOC_GET_INFO, &self->info));
	for (int i = 0; i < NFDS; i++)
		KGO_OPEN(self->fds[i], O_NONBLOCK);
	self->book = book_init(BOOK_CAP, now_ns() << 32, false);
	ASSERT_NE(NULL, self->book);
	/* Faulted in now: under pressure, the late bystander alone faults. */
	memset(self->book->t, 0, BOOK_CAP * sizeof(*self->book->t));
	self->book->strict = true;
}

FIXTURE_TEARDOWN(oom)
{
	if (self->bystander > 0) {
		kill(self->bystander, SIGKILL);
		waitpid(self->bystander, NULL, 0);
	}
	if (self->pinned)
		munmap(self->pinned, self->pinned_len);
	for (int i = 0; i < NFDS; i++)
		if (self->fds[i] > 0)
			close(self->fds[i]);
	close(self->mon);
	book_free(self->book);
}

/* Holds @mb MiB, every page touched, until killed. Tells @wfd when it does. */
static void bystander(int wfd, size_t mb)
{
	size_t len = mb << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(1);
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	if (write(wfd, "r", 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

/*
 * Forks a process that faults in @mb MiB of fresh memory and exits.
 * Return: its wait status (0: it got the memory and exited cleanly).
 */
static int late_bystander(size_t mb)
{
	size_t len = mb << 20;
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (!pid) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* Submits one task and books it; returns 1, 0 (refused: -errno in *err). */
static int submit_one(struct book *b, int fd, int fdi, uint32_t kind, uint64_t a0,
		      uint64_t a1, uint64_t expect, int *err)
{
	struct kgo_task t = { .kind = kind, .args = { a0, a1 } };
	int r;

	t.tag = book_new(b, kind, fdi, expect, 0);
	r = submit(fd, &t, 1);
	if (r == 1) {
		book_accept(b, t.tag);
		return 1;
	}
	*err = r < 0 ? errno : EIO;
	book_refuse(b, t.tag);
	return 0;
}

static uint64_t tree_nodes(uint64_t fanout, uint64_t depth)
{
	uint64_t level = 1, total = 1;

	for (uint64_t d = 0; d < depth; d++) {
		level *= fanout;
		total += level;
	}
	return total;
}

TEST_F_TIMEOUT(oom, budget_not_oom_killer, 400)
{
	struct book *b = self->book;
	uint64_t budget = self->info.mem_budget, t0, t_sub, sleeps = 0, refused = 0;
	uint64_t trees = 0, refused_enomem = 0, refused_eagain = 0, cancelled = 0;
	long long oom_before, oom_after, avail_kb, peak_g = 0, peak_started = 0;
	long long low_avail = -1, pin_kb;
	int late;
	bool full[NFDS] = { false }, timed_out;
	int pfd[2], err = 0, status;
	char c;

	ASSERT_LT(0, budget);
	oom_before = oom_kills();
	ASSERT_LE(0, oom_before) TH_LOG("no oom_kill in /proc/vmstat, no kernel log");

	/* The bystander, outside anything kgo does. */
	ASSERT_EQ(0, pipe(pfd));
	self->bystander = fork();
	ASSERT_LE(0, self->bystander);
	if (!self->bystander) {
		close(pfd[0]);
		bystander(pfd[1], BYSTANDER_MB);
	}
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1)) TH_LOG("the bystander did not start");
	close(pfd[0]);

	/*
	 * All that is available but half the budget, or half of it if that
	 * is more, pinned in this process.
	 */
	avail_kb = meminfo_kb("MemAvailable");
	ASSERT_LT(0, avail_kb);
	pin_kb = avail_kb - (long long)(budget >> 11);
	if (pin_kb < avail_kb / 2)
		pin_kb = avail_kb / 2;
	self->pinned_len = (size_t)pin_kb * 1024;
	self->pinned = mmap(NULL, self->pinned_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->pinned) TH_LOG("pinning %zu MiB: %s",
						   self->pinned_len >> 20, strerror(errno));
	TH_LOG("budget %llu MiB (%llu stacks of %u KiB); MemAvailable %lld MiB, pinned %zu MiB, now %lld MiB available",
	       (unsigned long long)(budget >> 20),
	       (unsigned long long)(budget / self->info.stack_size),
	       self->info.stack_size >> 10, avail_kb >> 10, self->pinned_len >> 20,
	       meminfo_kb("MemAvailable") >> 10);

	t0 = now_ns();
	/*
	 * The trees: on every fd a chain as deep as allowed, then wide ones.
	 * A chain's nodes each hold a stack while they wait: the budget
	 * ends it with -ENOMEM.
	 */
	for (int i = 0; i < NFDS; i++) {
		static const uint64_t shapes[][2] = {
			{ 1, KGO_SPAWN_MAX_NODES - 1 },	/* 131072 nodes, one chain */
			{ 64, 2 },			/* 4161 */
			{ 8, 5 },			/* 37449 */
		};

		for (size_t s = 0; s < ARRAY_SIZE(shapes); s++) {
			if (s == 2 && i % 4)
				continue;	/* two of the biggest wide ones in all */
			if (submit_one(b, self->fds[i], i, KGO_TASK_SPAWN, shapes[s][0],
				       shapes[s][1], tree_nodes(shapes[s][0], shapes[s][1]), &err))
				trees++;
			else if (err == ENOMEM || err == EAGAIN)
				refused++;
			else
				ASSERT_TRUE(false) TH_LOG("SUBMIT SPAWN: %s", strerror(err));
		}
	}
	/* One binary tree of the largest size. */
	if (submit_one(b, self->fds[0], 0, KGO_TASK_SPAWN, 2, 16, tree_nodes(2, 16), &err))
		trees++;

	/* Then sleepers, round the fds, until each refuses or a cap. */
	while (sleeps < MAX_SLEEPS && now_ns() - t0 < SUBMIT_NS) {
		bool all_full = true;

		for (int i = 0; i < NFDS; i++) {
			struct kgo_task t[BATCH];
			int r;

			if (full[i])
				continue;
			all_full = false;
			for (int k = 0; k < BATCH; k++)
				t[k] = (struct kgo_task){
					.kind = KGO_TASK_SLEEP, .args = { SLEEP_NS },
					.tag = book_new(b, KGO_TASK_SLEEP, i, SLEEP_NS, 0),
				};
			r = submit(self->fds[i], t, BATCH);
			err = errno;
			for (int k = 0; k < BATCH; k++) {
				if (k < r)
					book_accept(b, t[k].tag);
				else
					book_refuse(b, t[k].tag);
			}
			if (r > 0)
				sleeps += r;
			if (r < BATCH) {
				refused++;
				if (r < 0 && err != ENOMEM && err != EAGAIN)
					ASSERT_TRUE(false) TH_LOG("SUBMIT: %s", strerror(err));
				if (r < 0) {
					full[i] = true;
					if (err == ENOMEM)
						refused_enomem++;
					else
						refused_eagain++;
				}
			}
		}
		{
			long long g = kgo_goroutines(self->mon);
			long long st = kgo_goroutines_started(self->mon);

			peak_g = g > peak_g ? g : peak_g;
			peak_started = st > peak_started ? st : peak_started;
		}
		if (all_full)
			break;
	}
	t_sub = now_ns();
	timed_out = t_sub - t0 >= SUBMIT_NS;
	/* Let the goroutines run into the budget a little longer, watching. */
	while (now_ns() - t_sub < NSEC) {
		long long g = kgo_goroutines(self->mon);
		long long st = kgo_goroutines_started(self->mon);
		long long av = meminfo_kb("MemAvailable");

		peak_g = g > peak_g ? g : peak_g;
		peak_started = st > peak_started ? st : peak_started;
		low_avail = low_avail < 0 || av < low_avail ? av : low_avail;
		usleep(20000);
	}

	late = late_bystander(LATE_MB);

	TH_LOG("in %.1f s%s: %llu trees and %llu sleeps accepted, %llu SUBMITs refused (%llu fds full on ENOMEM, %llu on EAGAIN); peak %lld goroutines, %lld running (%lld MiB of stacks); MemAvailable down to %lld MiB; late bystander %s",
	       (t_sub - t0) / 1e9, timed_out ? " (the time cap)" : "",
	       (unsigned long long)trees, (unsigned long long)sleeps,
	       (unsigned long long)refused, (unsigned long long)refused_enomem,
	       (unsigned long long)refused_eagain, peak_g, peak_started,
	       peak_started * self->info.stack_size >> 20, low_avail >> 10,
	       late ? "failed" : "got its memory");

	/*
	 * Let go of the pinned memory, cancel what has not started (or the
	 * sleepers would take minutes in waves), then read everything.
	 */
	munmap(self->pinned, self->pinned_len);
	self->pinned = NULL;
	for (int i = 0; i < NFDS; i++) {
		struct kgo_cancel cn = { .size = sizeof(cn), .flags = KGO_CANCEL_ALL };

		EXPECT_EQ(0, ioctl(self->fds[i], KGO_IOC_CANCEL, &cn));
		cancelled += cn.cancelled;
	}
	for (int i = 0; i < NFDS; i++) {
		long n = book_drain(b, self->fds[i], i, ALLOWED, DRAIN_NS);

		EXPECT_LE(0, n) TH_LOG("fd %d: %s", i, strerror(-n));
	}
	oom_after = oom_kills();
	TH_LOG("%.1f s in all; %llu cancelled unstarted; %llu completed: ok %llu, cancelled %llu, ENOMEM %llu, EAGAIN %llu, other %llu; oom_kill %lld -> %lld",
	       (now_ns() - t0) / 1e9, (unsigned long long)cancelled, (unsigned long long)b->done,
	       (unsigned long long)b->status[0], (unsigned long long)b->status[1],
	       (unsigned long long)b->status[2],
	       (unsigned long long)b->status[3], (unsigned long long)b->status[4],
	       oom_before, oom_after);

	EXPECT_EQ(0, b->errors);
	EXPECT_EQ(0, book_missing(b));
	EXPECT_EQ(b->accepted, b->done);
	EXPECT_LT(0, trees);
	EXPECT_EQ(cancelled, b->status[1]);
	/*
	 * Unless the time ran out first (a slow kernel), it ran into
	 * something: the budget (-ENOMEM), or the user's cap (-EAGAIN), which
	 * is below the count cap.
	 */
	if (!timed_out)
		EXPECT_LT(0, refused);
	EXPECT_EQ(oom_before, oom_after) TH_LOG("the OOM killer ran");
	/* The late bystander got its memory, at kgo's peak. */
	EXPECT_EQ(0, late) TH_LOG("late bystander: wait status %#x", late);
	/* The bystander lives. */
	EXPECT_EQ(0, kill(self->bystander, 0));
	EXPECT_EQ(0, waitpid(self->bystander, &status, WNOHANG)) {
		TH_LOG("bystander died: status %#x", status);
	}
	/* Nothing over the budget: the running goroutines' stacks fit in it. */
	EXPECT_GE(budget, (uint64_t)peak_started * self->info.stack_size);
	EXPECT_EQ(0, kgo_wait_quiet(self->mon, 30 * NSEC));
	err = kgo_nop_works(30 * NSEC);
	EXPECT_EQ(0, err) TH_LOG("NOP: %s", strerror(err));
}

TEST_HARNESS_MAIN
