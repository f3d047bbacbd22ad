// SPDX-License-Identifier: GPL-2.0
/*
 * BLOCK tasks: goroutines that sleep in the kernel, not in kgo.
 *
 * After Go's TestPreemptionAfterSyscall: 8 blocking tasks of 10, 100 and
 * 1000 us, interleaved with CPU work (SPIN tasks), all complete. For the
 * longer blocks, more of them are blocked at once than there are Ps, and
 * CPU work runs while every P's first M is blocked: that is only
 * possible if blocked Ms let their Ps go.
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

FIXTURE(kgo) {
	int fd;
	unsigned int nprocs;
};

FIXTURE_SETUP(kgo)
{
	struct kgo_info info = { .size = sizeof(info) };

	self->fd = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", KGO_DEVICE_PATH, strerror(errno));
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	self->nprocs = info.nr_procs;
}

FIXTURE_TEARDOWN(kgo)
{
	close(self->fd);
}

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

static void preemption_after_block(struct __test_metadata *_metadata, int fd,
				   unsigned int nprocs, uint64_t us, bool check_overlap)
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
	if (check_overlap) {
		/* More blocked than Ps: blocked Ms let their Ps go. */
		EXPECT_LT(nprocs, best);
		/* CPU work ran while as many were blocked as there are Ps. */
		EXPECT_LE(nprocs, best_spin);
	}
}

TEST_F(kgo, preemption_after_block_10us)
{
	preemption_after_block(_metadata, self->fd, self->nprocs, 10, false);
}

TEST_F(kgo, preemption_after_block_100us)
{
	preemption_after_block(_metadata, self->fd, self->nprocs, 100, false);
}

TEST_F(kgo, preemption_after_block_1000us)
{
	preemption_after_block(_metadata, self->fd, self->nprocs, 1000, true);
}

TEST_F(kgo, preemption_after_block_20ms)
{
	preemption_after_block(_metadata, self->fd, self->nprocs, 20000, true);
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
