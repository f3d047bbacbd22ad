// SPDX-License-Identifier: GPL-2.0
/*
 * Goroutines that never call kgo do not starve the others.
 *
 * A SPIN task busies its CPU without a kgo call: on every P, it used to
 * hold up everything else until it ended. Now its P goes to another M
 * of the CPU once it has run two slices with work waiting (hog.c), and
 * the kernel shares the CPU between the two Ms. After Go's
 * TestTimerFairness, TestYieldProgress and TestPingPongHog, through
 * /dev/kgo.
 *
 * Bounds are multiples of slice_ms, generous for an emulated debug
 * kernel, and far below the hogs' 1 s that the tasks waited before.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

#define MSEC		1000000ULL
#define HOG_TAG		1000
#define NSLEEP		10

FIXTURE(kgo) {
	int fd;
	unsigned int nprocs;
	uint64_t slice_ns;
};

static unsigned int param(const char *name, unsigned int dflt)
{
	char path[128];
	unsigned int v = dflt;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/kgo/parameters/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

FIXTURE_SETUP(kgo)
{
	struct kgo_info info = { .size = sizeof(info) };

	self->fd = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", KGO_DEVICE_PATH, strerror(errno));
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	self->nprocs = info.nr_procs;
	self->slice_ns = param("slice_ms", 10) * MSEC;
}

FIXTURE_TEARDOWN(kgo)
{
	close(self->fd);
}

/* A SPIN task of 1 s on every P; returns when they have begun. */
static int start_hogs(int fd, unsigned int n)
{
	struct kgo_task t = { .kind = KGO_TASK_SPIN, .args = { KGO_SPIN_MAX_NS } };
	unsigned int i;

	for (i = 0; i < n; i++) {
		t.tag = HOG_TAG + i;
		if (submit(fd, &t, 1) != 1)
			return -1;
	}
	usleep(50000);
	return 0;
}

/* Reads completions until @tag's; the hogs' are kept in @hogs. */
static int read_until(int fd, uint64_t tag, struct kgo_completion *c,
		      struct kgo_completion *hogs, unsigned int *nhogs)
{
	for (;;) {
		if (read(fd, c, sizeof(*c)) != sizeof(*c))
			return -1;
		if (c->tag == tag)
			return 0;
		if (c->tag >= HOG_TAG && c->tag < HOG_TAG + 64)
			hogs[(*nhogs)++] = *c;
	}
}

/* The first hog to end, or UINT64_MAX if none has yet. */
static uint64_t first_hog_end(const struct kgo_completion *hogs, unsigned int n)
{
	uint64_t end = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (hogs[i].ended_ns < end)
			end = hogs[i].ended_ns;
	return end;
}

static void drain_hogs(int fd, struct kgo_completion *hogs, unsigned int *nhogs,
		       unsigned int n)
{
	struct kgo_completion c;

	while (*nhogs < n && read(fd, &c, sizeof(c)) == sizeof(c))
		if (c.tag >= HOG_TAG && c.tag < HOG_TAG + 64)
			hogs[(*nhogs)++] = c;
}

/* 1 ms sleeps, one at a time, end within a few slices each. */
TEST_F(kgo, timer_fairness)
{
	struct kgo_completion c, hogs[64];
	uint64_t worst = 0, late[NSLEEP], end;
	unsigned int nhogs = 0, i;

	ASSERT_GE(64, self->nprocs);
	ASSERT_EQ(0, start_hogs(self->fd, self->nprocs));
	for (i = 0; i < NSLEEP; i++) {
		struct kgo_task t = { .kind = KGO_TASK_SLEEP, .tag = i, .args = { MSEC } };

		ASSERT_EQ(1, submit(self->fd, &t, 1));
		ASSERT_EQ(0, read_until(self->fd, i, &c, hogs, &nhogs));
		ASSERT_EQ(0, c.status);
		late[i] = c.ended_ns - c.queued_ns - MSEC;
	}
	drain_hogs(self->fd, hogs, &nhogs, self->nprocs);
	end = first_hog_end(hogs, nhogs);
	for (i = 0; i < NSLEEP; i++) {
		TH_LOG("sleep %u: %llu us late", i, (unsigned long long)late[i] / 1000);
		if (late[i] > worst)
			worst = late[i];
	}
	/* Every sleep ended while every hog still ran, and on time. */
	EXPECT_LT(c.ended_ns, end);
	EXPECT_GT(40 * self->slice_ns, worst);
	TH_LOG("worst %llu us late, slice %llu us, %u hogs",
	       (unsigned long long)worst / 1000,
	       (unsigned long long)self->slice_ns / 1000, self->nprocs);
}

/* A YIELD task gets on beside the hogs. */
TEST_F(kgo, yield_progress)
{
	struct kgo_task t = { .kind = KGO_TASK_YIELD, .tag = 1, .args = { 1000 } };
	struct kgo_completion c, hogs[64];
	unsigned int nhogs = 0;

	ASSERT_GE(64, self->nprocs);
	ASSERT_EQ(0, start_hogs(self->fd, self->nprocs));
	ASSERT_EQ(1, submit(self->fd, &t, 1));
	ASSERT_EQ(0, read_until(self->fd, 1, &c, hogs, &nhogs));
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(1000, c.result);
	drain_hogs(self->fd, hogs, &nhogs, self->nprocs);
	EXPECT_LT(c.ended_ns, first_hog_end(hogs, nhogs));
	TH_LOG("1000 yields ended %llu us after submission, beside %u hogs",
	       (unsigned long long)(c.ended_ns - c.queued_ns) / 1000, self->nprocs);
}

/*
 * Another fd's task does not wait behind one fd's backlog: fd A queues
 * a second of SPIN work per P, then one NOP on fd B ends within a few
 * slices. Before feeds (feed.c) it ended after all of A's.
 */
TEST_F(kgo, other_session)
{
	unsigned int n = 1000 * self->nprocs, i;
	struct kgo_task *t = calloc(n, sizeof(*t));
	struct kgo_task nop = { .kind = KGO_TASK_NOP, .tag = 7 };
	struct kgo_completion c;
	uint64_t took;
	int b;

	ASSERT_NE(NULL, t);
	for (i = 0; i < n; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_SPIN, .tag = i, .args = { MSEC } };
	ASSERT_EQ((int)n, submit(self->fd, t, n));
	b = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, b);
	usleep(20000);
	ASSERT_EQ(1, submit(b, &nop, 1));
	ASSERT_EQ(sizeof(c), read(b, &c, sizeof(c)));
	EXPECT_EQ(0, c.status);
	took = c.ended_ns - c.queued_ns;
	TH_LOG("NOP on fd B behind %u ms of SPIN on fd A: %llu us, slice %llu us", n,
	       (unsigned long long)took / 1000, (unsigned long long)self->slice_ns / 1000);
	EXPECT_GT(20 * self->slice_ns, took);
	close(b);
	free(t);
	/* The teardown's close cancels the rest of A's. */
}

/*
 * Go's TestPingPongHog through /dev/kgo: PINGPONG_HOG tasks, a "hog"
 * pair per P counting a million times per turn and a "light" pair per P
 * counting a thousand, submitted together, interleaved (so that the Ps
 * get both kinds) and all ending HOG_WINDOW after their acceptance.
 * Neither kind may get more than 20 times the other's count, Go's
 * bound. The hogs' loops make no kgo call: their Ps are taken from
 * them (hog.c), and a light pair inherits no slice past one (monitor.c).
 * Go runs 100 ms; here a hog's turn alone takes about 330 ms on the
 * debug kernel (KASAN under TCG), so the window is longer.
 */
#define HOG_WINDOW	(2000 * MSEC)
#define HOG_LOOP	1000000
#define LIGHT_LOOP	1000

TEST_F(kgo, pingpong_hog)
{
	unsigned int n = 2 * self->nprocs, i;
	struct kgo_task *t = calloc(n, sizeof(*t));
	uint64_t hog = 0, light = 0;
	struct kgo_completion c;

	ASSERT_NE(NULL, t);
	for (i = 0; i < n; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_PINGPONG_HOG, .tag = i,
					  .args = { HOG_WINDOW, i % 2 ? LIGHT_LOOP : HOG_LOOP } };
	ASSERT_EQ((int)n, submit(self->fd, t, n));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(sizeof(c), read(self->fd, &c, sizeof(c)));
		ASSERT_EQ(0, c.status);
		ASSERT_GT(n, c.tag);
		/* A whole number of turns. */
		EXPECT_EQ(0, c.result % t[c.tag].args[1]);
		if (c.tag % 2)
			light += c.result;
		else
			hog += c.result;
	}
	TH_LOG("hog %llu, light %llu: ratio %.2f, %u Ps",
	       (unsigned long long)hog, (unsigned long long)light,
	       light ? (double)hog / light : 0.0, self->nprocs);
	ASSERT_LT(0, hog);
	ASSERT_LT(0, light);
	EXPECT_GE(20 * light, hog);
	EXPECT_GE(20 * hog, light);
	free(t);
}

/* Bad PINGPONG_HOG descriptors are refused, and none is accepted. */
TEST_F(kgo, pingpong_hog_bad)
{
	static const struct {
		uint64_t args[3];
	} bad[] = {
		{ { 0, 1, 0 } },
		{ { KGO_PINGPONG_HOG_MAX_NS + 1, 1, 0 } },
		{ { 1, 0, 0 } },
		{ { 1, KGO_PINGPONG_HOG_MAX_LOOP + 1, 0 } },
		{ { 1, 1, 1 } },
	};
	struct kgo_wait w = { .size = sizeof(w), .min_complete = 1 };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kgo_task t = { .kind = KGO_TASK_PINGPONG_HOG, .tag = i };

		memcpy(t.args, bad[i].args, sizeof(t.args));
		errno = 0;
		EXPECT_EQ(-1, submit(self->fd, &t, 1)) TH_LOG("case %u", i);
		EXPECT_EQ(EINVAL, errno) TH_LOG("case %u", i);
	}
	/* Nothing was accepted: nothing completes. */
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_WAIT, &w));
	EXPECT_EQ(0, w.ready);
}

TEST_HARNESS_MAIN
