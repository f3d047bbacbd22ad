// SPDX-License-Identifier: GPL-2.0
/*
 * BLOCK tasks: goroutines that sleep in the kernel, not in kgo.
 *
 * After Go's TestPreemptionAfterSyscall: 8 blocking tasks of 10, 100 and
 * 1000 us and 20 ms, interleaved with CPU work (SPIN tasks), all
 * complete, each having blocked its full time.
 *
 * That blocked Ms let their Ps go is judged on order, not on time
 * (blocked_ms_let_ps_go): BLOCK tasks that stay blocked until the test
 * cancels them, more of them than there are Ps, all start, and CPU work
 * submitted after that runs to completion before the cancel. Without a
 * handoff only one per P could start, and nothing else could run until
 * one ended. How long a handoff takes does not matter, short of the
 * longest block (10 s): an emulated kernel with a busy host takes
 * milliseconds for what takes microseconds on hardware.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

#define NBLOCK		8
#define NSPIN		16
#define SPIN_NS		200000ULL	/* 200 us of CPU work each */
#define ROUNDS		5

KGO_FIXTURE(kgo)

TEST_F(kgo, block_result)
{
	struct kgo_task t = { .kind = KGO_TASK_BLOCK, .tag = 1, .args = { 20000 } };
	struct kgo_completion c;

	ASSERT_EQ(1, submit(self->fd, &t, 1));
	ASSERT_EQ(sizeof(c), read(self->fd, &c, sizeof(c)));
	EXPECT_EQ(0, c.status);
	EXPECT_LE(20000000ULL, c.result);
}

TEST_F(kgo, block_limits)
{
	struct kgo_task bad[] = {
		{ .kind = KGO_TASK_BLOCK, .args = { KGO_BLOCK_MAX_US + 1 } },
		{ .kind = KGO_TASK_BLOCK, .args = { 1, 1 } },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-1, submit(self->fd, &bad[i], 1));
		EXPECT_EQ(EINVAL, errno);
	}
}

struct interval {
	uint64_t start, end;
};

/* The most intervals of @v that hold one instant in common. */
static unsigned int max_overlap(const struct interval *v, unsigned int n)
{
	unsigned int best = 0;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int k = 0;

		for (unsigned int j = 0; j < n; j++)
			k += v[j].start <= v[i].start && v[i].start < v[j].end;
		if (k > best)
			best = k;
	}
	return best;
}

/* How many of @b hold the instant @t. */
static unsigned int holding(const struct interval *b, unsigned int n, uint64_t t)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++)
		k += b[i].start <= t && t < b[i].end;
	return k;
}

/*
 * One round: NBLOCK BLOCK tasks of @us and NSPIN SPIN tasks, alternating
 * in one submission. Returns the most BLOCK tasks blocked at once and,
 * in *@spin_during, the most blocked at the midpoint of a SPIN task.
 */
static unsigned int run_round(struct __test_metadata *_metadata, int fd,
			      uint64_t us, unsigned int *spin_during)
{
	struct kgo_task t[NBLOCK + NSPIN];
	struct kgo_completion c[NBLOCK + NSPIN];
	struct interval blk[NBLOCK], spin[NSPIN];
	unsigned int nb = 0, ns = 0, got = 0, n = 0;

	for (unsigned int i = 0; i < NBLOCK + NSPIN; i++) {
		bool b = i % 3 == 0 && n < NBLOCK;

		n += b;
		t[i] = (struct kgo_task){
			.kind = b ? KGO_TASK_BLOCK : KGO_TASK_SPIN,
			.tag = i,
			.args = { b ? us : SPIN_NS },
		};
	}
	/* Top up to exactly NBLOCK blocking tasks. */
	for (unsigned int i = NBLOCK + NSPIN; n < NBLOCK && i-- > 0;) {
		if (t[i].kind == KGO_TASK_SPIN) {
			t[i].kind = KGO_TASK_BLOCK;
			t[i].args[0] = us;
			n++;
		}
	}
	EXPECT_EQ(NBLOCK + NSPIN, submit(fd, t, NBLOCK + NSPIN));
	while (got < NBLOCK + NSPIN) {
		ssize_t r = read(fd, &c[got], sizeof(c[0]) * (NBLOCK + NSPIN - got));

		if (r <= 0)
			break;
		got += r / sizeof(c[0]);
	}
	EXPECT_EQ(NBLOCK + NSPIN, got);
	for (unsigned int i = 0; i < got; i++) {
		struct interval v = { c[i].started_ns, c[i].ended_ns };

		EXPECT_EQ(0, c[i].status);
		if (c[i].kind == KGO_TASK_BLOCK) {
			EXPECT_LE(us * 1000, c[i].result);
			blk[nb++] = v;
		} else {
			EXPECT_LE(SPIN_NS, c[i].result);
			spin[ns++] = v;
		}
	}
	EXPECT_EQ(NBLOCK, nb);
	*spin_during = 0;
	for (unsigned int i = 0; i < ns; i++) {
		unsigned int k = holding(blk, nb, spin[i].start / 2 + spin[i].end / 2);

		if (k > *spin_during)
			*spin_during = k;
	}
	return max_overlap(blk, nb);
}

/*
 * Rounds of @us blocks among CPU work. Every task completes in full;
 * how many blocks overlapped is logged, not judged: it depends on how
 * fast a handoff is against @us, which a slow host decides.
 */
static void preemption_after_block(struct __test_metadata *_metadata, int fd,
				   unsigned int nprocs, uint64_t us)
{
	unsigned int best = 0, best_spin = 0;

	for (int r = 0; r < ROUNDS; r++) {
		unsigned int during, o = run_round(_metadata, fd, us, &during);

		if (o > best)
			best = o;
		if (during > best_spin)
			best_spin = during;
	}
	TH_LOG("%llu us blocks: at most %u blocked at once, %u during CPU work, on %u Ps",
	       (unsigned long long)us, best, best_spin, nprocs);
}

TEST_F(kgo, preemption_after_block_10us)
{
	preemption_after_block(_metadata, self->fd, self->nprocs, 10);
}

TEST_F(kgo, preemption_after_block_100us)
{
	preemption_after_block(_metadata, self->fd, self->nprocs, 100);
}

TEST_F(kgo, preemption_after_block_1000us)
{
	preemption_after_block(_metadata, self->fd, self->nprocs, 1000);
}

TEST_F(kgo, preemption_after_block_20ms)
{
	preemption_after_block(_metadata, self->fd, self->nprocs, 20000);
}

/* Goroutines that have started running, over every P (KGO_IOC_STATS). */
static uint64_t gstarted(struct __test_metadata *_metadata, int fd)
{
	long long n = PSTAT_SUM(fd, gstarted);

	EXPECT_LE(0, n);
	return n < 0 ? 0 : n;
}

/* Handoffs of blocked Ms' Ps so far (debugfs); 0 without debugfs. */
static unsigned long long read_handoffs(void)
{
	FILE *f = fopen("/sys/kernel/debug/kgo/procs", "r");
	unsigned long long n = 0;
	char line[2048], *h;

	while (f && fgets(line, sizeof(line), f)) {
		h = strstr(line, " handoffs=");
		if (h)
			n += strtoull(h + strlen(" handoffs="), NULL, 10);
	}
	if (f)
		fclose(f);
	return n;
}

static unsigned int read_max_ms_per_cpu(void)
{
	FILE *f = fopen("/sys/module/kgo/parameters/max_ms_per_cpu", "r");
	unsigned int cap = 0;

	if (f && fscanf(f, "%u", &cap) != 1)
		cap = 0;
	if (f)
		fclose(f);
	return cap;
}

#define GO_SPIN		8
#define GO_SPIN_NS	1000000ULL	/* 1 ms of CPU work each */
#define GO_TAG		(1ULL << 32)	/* BLOCK tasks' tags */

/*
 * More BLOCK tasks than Ps, blocked at once, and CPU work runs while
 * they all are: blocked Ms let their Ps go. The blocks last until the
 * test cancels them (KGO_BLOCK_MAX_US at most), so nothing here is
 * timed: each step waits for the one before it.
 *  1. nblock BLOCK tasks are submitted; the test waits until all of
 *     them have started (per-P gstarted). Without handoffs, one per P
 *     starts and the rest wait for a block to end: after
 *     KGO_BLOCK_MAX_US, it fails.
 *  2. Then SPIN tasks: all of them complete before any block, which
 *     only a cancel can end before KGO_BLOCK_MAX_US.
 *  3. The cancel: every block completes cancelled, having started
 *     before the first SPIN and ended after the last.
 */
TEST_F_TIMEOUT(kgo, blocked_ms_let_ps_go, 120)
{
	unsigned int cap = read_max_ms_per_cpu(), nblock = 3 * self->nprocs, got = 0;
	unsigned long long h0 = read_handoffs();
	uint64_t base, t0, started, all_started, first_spin = UINT64_MAX, last_spin = 0;
	struct kgo_cancel cancel = {
		.size = sizeof(cancel), .flags = KGO_CANCEL_ALL | KGO_CANCEL_RUNNING,
	};
	struct kgo_completion *c;
	struct kgo_task *t;

	/* Ms beyond the blocked ones are capped per CPU: stay under it. */
	if (cap && nblock > cap - 1)
		nblock = cap - 1;
	if (nblock <= self->nprocs)
		SKIP(return, "max_ms_per_cpu=%u: too few Ms for more blocks than Ps", cap);
	t = calloc(nblock + GO_SPIN, sizeof(*t));
	c = calloc(nblock + GO_SPIN, sizeof(*c));
	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, c);
	for (unsigned int i = 0; i < nblock; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_BLOCK, .tag = GO_TAG + i,
					  .args = { KGO_BLOCK_MAX_US } };
	for (unsigned int i = 0; i < GO_SPIN; i++)
		t[nblock + i] = (struct kgo_task){ .kind = KGO_TASK_SPIN, .tag = i,
						   .args = { GO_SPIN_NS } };

	base = gstarted(_metadata, self->fd);
	t0 = now_ns();
	ASSERT_EQ(nblock, submit(self->fd, t, nblock));
	/* 1. All started, well before the first could end by itself. */
	while ((started = gstarted(_metadata, self->fd) - base) < nblock &&
	       now_ns() - t0 < KGO_BLOCK_MAX_US * 1000 / 2) {
		struct timespec ms = { .tv_nsec = 1000000 };

		nanosleep(&ms, NULL);
	}
	if (started < nblock)
		ioctl(self->fd, KGO_IOC_CANCEL, &cancel);
	ASSERT_EQ(nblock, started)
		TH_LOG("%llu of %u BLOCK tasks started within %llu s on %u Ps: blocked Ms kept their Ps",
		       (unsigned long long)started, nblock,
		       (unsigned long long)(KGO_BLOCK_MAX_US / 2000000), self->nprocs);
	all_started = now_ns() - t0;

	/* 2. CPU work, done while every block still sleeps. */
	ASSERT_EQ(GO_SPIN, submit(self->fd, t + nblock, GO_SPIN));
	while (got < GO_SPIN) {
		ssize_t r = read(self->fd, &c[got], sizeof(c[0]));

		ASSERT_EQ(sizeof(c[0]), r) TH_LOG("read: %s", strerror(errno));
		ASSERT_EQ(KGO_TASK_SPIN, c[got].kind)
			TH_LOG("a BLOCK task ended (status %d, %llu ms blocked) before the CPU work submitted after all had started",
			       c[got].status, (unsigned long long)c[got].result / 1000000);
		EXPECT_EQ(0, c[got].status);
		EXPECT_LE(GO_SPIN_NS, c[got].result);
		if (c[got].started_ns < first_spin)
			first_spin = c[got].started_ns;
		if (c[got].ended_ns > last_spin)
			last_spin = c[got].ended_ns;
		got++;
	}

	/* 3. The blocks end: cancelled, each around all the CPU work. */
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, &cancel));
	EXPECT_EQ(nblock, cancel.cancelled);
	while (got < nblock + GO_SPIN) {
		ssize_t r = read(self->fd, &c[got], sizeof(c[0]));

		ASSERT_EQ(sizeof(c[0]), r) TH_LOG("read: %s", strerror(errno));
		EXPECT_EQ(KGO_TASK_BLOCK, c[got].kind);
		EXPECT_EQ(-ECANCELED, c[got].status);
		EXPECT_NE(0, c[got].started_ns);
		EXPECT_GT(first_spin, c[got].started_ns);
		EXPECT_LT(last_spin, c[got].ended_ns);
		EXPECT_GT(KGO_BLOCK_MAX_US * 1000, c[got].result);
		got++;
	}
	TH_LOG("%u BLOCK tasks blocked at once on %u Ps: all started %llu ms after the submission; %u ms of CPU work then ran in %llu ms; %llu handoffs",
	       nblock, self->nprocs, (unsigned long long)all_started / 1000000,
	       (unsigned int)(GO_SPIN * GO_SPIN_NS / 1000000),
	       (unsigned long long)(last_spin - first_spin) / 1000000, read_handoffs() - h0);
	free(c);
	free(t);
}

/* KGO_IOC_STATS without the per-P records: how many Ms there are. */
static unsigned int nr_ms(struct __test_metadata *_metadata, int fd)
{
	struct kgo_stats st = { .size = sizeof(st) };

	EXPECT_EQ(0, ioctl(fd, KGO_IOC_STATS, &st));
	return st.nr_ms;
}

/*
 * A flood of BLOCK tasks, one every 11 ms: each blocks its M, the
 * monitor hands the P off after 10 ms with nothing queued (so it goes
 * idle), and the next task wants an M again. Past max_ms_per_cpu Ms a
 * CPU makes no more; its work waits for one to come back, or for
 * another CPU's Ms. Every task still completes, exactly once.
 */
TEST_F_TIMEOUT(kgo, block_flood_ms_cap, 300)
{
	unsigned long long cap = 0;
	unsigned int n, most = 0;
	struct kgo_completion *c;
	FILE *f = fopen("/sys/module/kgo/parameters/max_ms_per_cpu", "r");
	size_t got = 0;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%llu", &cap));
	fclose(f);
	n = cap * self->nprocs + 32;	/* enough to pass the cap without it */
	c = calloc(n, sizeof(*c));
	ASSERT_NE(NULL, c);
	for (unsigned int i = 0; i < n; i++) {
		/* Long enough that every one is still blocked at the end. */
		struct kgo_task t = { .kind = KGO_TASK_BLOCK, .tag = i,
				      .args = { 11000ULL * n + 1000000 } };
		struct timespec gap = { .tv_nsec = 11000000 };
		unsigned int ms;

		ASSERT_EQ(1, submit(self->fd, &t, 1)) TH_LOG("%s", strerror(errno));
		nanosleep(&gap, NULL);
		ms = nr_ms(_metadata, self->fd);
		most = ms > most ? ms : most;
	}
	while (got < n) {
		ssize_t r = read(self->fd, c + got, (n - got) * sizeof(*c));

		ASSERT_LT(0, r) TH_LOG("%s", strerror(errno));
		got += r / sizeof(*c);
	}
	TH_LOG("%u BLOCK tasks: at most %u Ms (cap %llu per CPU, %u CPUs)", n, most, cap,
	       self->nprocs);
	EXPECT_GE(cap * self->nprocs, most);
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(0, c[i].status) TH_LOG("tag %llu", (unsigned long long)c[i].tag);
		EXPECT_GT(n, c[i].tag);
	}
	free(c);
}

TEST_HARNESS_MAIN
