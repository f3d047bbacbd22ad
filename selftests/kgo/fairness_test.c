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
	KGO_OPEN(self->fd, 0);
	KGO_NR_PROCS(self->fd, self->nprocs);
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

/*
 * 1 ms sleeps, one at a time, end while a hog holds every P. Without
 * relief the first one waits for a hog to end (a second). How late
 * each one is depends on the host as much as on kgo (a relief takes two
 * slices of wall time, and the CPU time in between is the host's to
 * give): it is logged, and what is judged is that sleeps end while the
 * hogs run, at least two of them however slow the host.
 */
TEST_F(kgo, timer_fairness)
{
	struct kgo_completion c, hogs[64];
	uint64_t late[NSLEEP], ended[NSLEEP], end;
	unsigned int nhogs = 0, n, before = 0, i;

	ASSERT_GE(64, self->nprocs);
	ASSERT_EQ(0, start_hogs(self->fd, self->nprocs));
	/* Until NSLEEP are done, or a hog is. */
	for (n = 0; n < NSLEEP && !nhogs; n++) {
		struct kgo_task t = { .kind = KGO_TASK_SLEEP, .tag = n, .args = { MSEC } };

		ASSERT_EQ(1, submit(self->fd, &t, 1));
		ASSERT_EQ(0, read_until(self->fd, n, &c, hogs, &nhogs));
		ASSERT_EQ(0, c.status);
		late[n] = c.ended_ns - c.queued_ns - MSEC;
		ended[n] = c.ended_ns;
	}
	drain_hogs(self->fd, hogs, &nhogs, self->nprocs);
	end = first_hog_end(hogs, nhogs);
	for (i = 0; i < n; i++) {
		before += ended[i] < end;
		TH_LOG("sleep %u: %llu us late", i, (unsigned long long)late[i] / 1000);
	}
	TH_LOG("%u of %u sleeps ended while every hog ran; slice %llu us, %u hogs",
	       before, n, (unsigned long long)self->slice_ns / 1000, self->nprocs);
	EXPECT_LE(2, before);
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
 * a second of SPIN work per P, then one NOP on fd B runs after only a
 * few of A's tasks. Before feeds (feed.c) it ended after all of A's.
 * Judged in A's tasks, not in time: those that started after the NOP
 * was queued and ended before it did went ahead of it. A busy host
 * makes each of them take longer, not more of them go first.
 */
TEST_F(kgo, other_session)
{
	unsigned int n = 1000 * self->nprocs, ahead = 0, i;
	struct kgo_task *t = calloc(n, sizeof(*t));
	struct kgo_completion *ca = calloc(n, sizeof(*ca));
	struct kgo_task nop = { .kind = KGO_TASK_NOP, .tag = 7 };
	struct kgo_cancel cancel = { .size = sizeof(cancel), .flags = KGO_CANCEL_ALL };
	struct kgo_completion c;
	int b;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, ca);
	for (i = 0; i < n; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_SPIN, .tag = i, .args = { MSEC } };
	ASSERT_EQ((int)n, submit(self->fd, t, n));
	b = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, b);
	usleep(20000);
	ASSERT_EQ(1, submit(b, &nop, 1));
	ASSERT_EQ(sizeof(c), read(b, &c, sizeof(c)));
	EXPECT_EQ(0, c.status);
	/* The rest of A's need not run: every one completes, cancelled. */
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, &cancel));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(sizeof(ca[i]), read(self->fd, &ca[i], sizeof(ca[i])));
		ahead += !ca[i].status && ca[i].started_ns > c.queued_ns &&
			 ca[i].ended_ns < c.ended_ns;
	}
	TH_LOG("NOP on fd B behind %u ms of SPIN on fd A: %llu us, %u of A's went ahead, %u cancelled",
	       n, (unsigned long long)(c.ended_ns - c.queued_ns) / 1000, ahead, cancel.cancelled);
	EXPECT_GT(n / 4, ahead);
	close(b);
	free(ca);
	free(t);
}

/*
 * Go's TestPingPongHog through /dev/kgo: PINGPONG_HOG tasks, a "hog"
 * pair per P counting a million times per turn and a "light" pair per P
 * counting a thousand, submitted together and interleaved (so that the
 * Ps get both kinds). Neither kind may count more than 20 times the
 * other, Go's bound. The hogs' loops make no kgo call: their Ps are
 * taken from them (hog.c), and a light pair inherits no slice past one
 * (monitor.c).
 *
 * Both kinds count the same loop, so counts compare the CPU each kind's
 * loops got, but only over the same stretch of time. A pair ends at its
 * window's end yet finishes the turn it is in, and a hog's turn is a
 * large part of any window an emulated kernel allows (a third of a
 * second alone on the debug kernel, longer beside a light pair, and
 * longer still when the host is busy): with one window for both kinds,
 * the hogs went on counting alone for most of a turn after the light
 * pairs had stopped. So the hogs get the window, the light pairs one
 * that outlasts it, and the light pairs are cancelled (a partial count)
 * as soon as the last hog has ended: both kinds count over the hogs'
 * whole run, however long the host makes it.
 */
#define HOG_WINDOW	(2000 * MSEC)
#define LIGHT_WINDOW	KGO_PINGPONG_HOG_MAX_NS
#define HOG_LOOP	1000000
#define LIGHT_LOOP	1000

TEST_F(kgo, pingpong_hog)
{
	unsigned int n = 2 * self->nprocs, nhog = 0, i;
	struct kgo_task *t = calloc(n, sizeof(*t));
	struct kgo_cancel cancel = {
		.size = sizeof(cancel), .flags = KGO_CANCEL_ALL | KGO_CANCEL_RUNNING,
	};
	uint64_t hog = 0, light = 0, first = UINT64_MAX, last = 0;
	struct kgo_completion c;

	ASSERT_NE(NULL, t);
	for (i = 0; i < n; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_PINGPONG_HOG, .tag = i,
					  .args = { i % 2 ? LIGHT_WINDOW : HOG_WINDOW,
						    i % 2 ? LIGHT_LOOP : HOG_LOOP } };
	ASSERT_EQ((int)n, submit(self->fd, t, n));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(sizeof(c), read(self->fd, &c, sizeof(c)));
		ASSERT_GT(n, c.tag);
		if (c.tag % 2) {
			/* Cancelled mid-turn, unless the hogs outlived its window. */
			if (c.status != -ECANCELED) {
				ASSERT_EQ(0, c.status);
				EXPECT_EQ(0, c.result % LIGHT_LOOP);
			}
			light += c.result;
			continue;
		}
		ASSERT_EQ(0, c.status);
		/* A whole number of turns. */
		EXPECT_EQ(0, c.result % HOG_LOOP);
		hog += c.result;
		if (c.queued_ns < first)
			first = c.queued_ns;
		if (c.ended_ns > last)
			last = c.ended_ns;
		/* The last hog is done: the light pairs stop here too. */
		if (++nhog == self->nprocs)
			ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, &cancel));
	}
	TH_LOG("hog %llu (%llu turns), light %llu (%llu turns) over the hogs' %llu ms: ratio %.2f, %u Ps",
	       (unsigned long long)hog, (unsigned long long)hog / HOG_LOOP,
	       (unsigned long long)light, (unsigned long long)light / LIGHT_LOOP,
	       (unsigned long long)(last - first) / MSEC,
	       light ? (double)hog / light : 0.0, self->nprocs);
	/* Fewer only if the light pairs' window ran out first. */
	EXPECT_GE(self->nprocs, cancel.cancelled);
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
