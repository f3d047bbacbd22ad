// SPDX-License-Identifier: GPL-2.0
/*
 * What the task kinds compute, what their completions say, and the
 * session ioctls at work: WAIT, CANCEL, STATS after a drained run, and
 * the per-fd caps on tasks and bytes in flight.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kgo_crc32c.h"
#include "kselftest_harness.h"

#define REC		sizeof(struct kgo_completion)
#define MSEC		1000000ULL
/* Generous: the test VMs emulate the CPU, with KASAN on. */
#define WAIT_NS		(60 * NSEC)
/* How long the scheduler may take to go quiet once everything is read. */
#define QUIET_NS	(10 * NSEC)
/* Caps above these are too many tasks to fill under emulation. */
#define INFLIGHT_LIMIT	(1U << 17)
#define BYTES_LIMIT	256
#define PARAMS		"/sys/module/kgo/parameters/"

FIXTURE(kgo) {
	int fd;
	unsigned int nprocs;
	long ncpus;
};

FIXTURE_SETUP(kgo)
{
	self->ncpus = sysconf(_SC_NPROCESSORS_CONF);
	KGO_OPEN(self->fd, 0);
	KGO_NR_PROCS(self->fd, self->nprocs);
}

FIXTURE_TEARDOWN(kgo)
{
	close(self->fd);
}

static struct kgo_task task(uint32_t kind, uint64_t tag, uint64_t a0, uint64_t a1)
{
	struct kgo_task t = { .kind = kind, .tag = tag, .args = { a0, a1 } };

	return t;
}

static int wait_ready(int fd, uint32_t min, uint64_t timeout_ns, uint32_t *ready)
{
	struct kgo_wait w = {
		.size = sizeof(w),
		.min_complete = min,
		.timeout_ns = timeout_ns,
	};
	int ret = ioctl(fd, KGO_IOC_WAIT, &w);

	if (ready)
		*ready = w.ready;
	return ret;
}

/*
 * Waits until @n completions are ready (or nothing more is in flight)
 * and reads up to @n of them. Returns how many it read, or -1.
 */
static long collect(int fd, struct kgo_completion *c, size_t n)
{
	size_t got = 0;

	while (got < n) {
		size_t want = n - got < 4096 ? n - got : 4096;
		uint32_t ready;
		ssize_t r;

		if (wait_ready(fd, want, WAIT_NS, &ready))
			return -1;
		if (!ready)
			break;	/* nothing more in flight */
		r = read(fd, c + got, want * REC);
		if (r <= 0 || r % REC)
			return -1;
		got += r / REC;
	}
	return got;
}

/* Reads /sys/module/kgo/parameters/@name. */
static int read_param(const char *name, unsigned long long *val)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu", val) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* Writes /sys/module/kgo/parameters/@name. */
static int write_param(const char *name, unsigned long long val)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%llu\n", val) > 0;
	return fclose(f) || !ok ? -1 : 0;
}

/* Deterministic bytes, different for every @seed. */
static void fill(unsigned char *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = x >> 24;
	}
}

/* What every completion must say whatever its kind. */
static void check_completion(struct __test_metadata *_metadata, const struct kgo_completion *c,
			     long ncpus, uint64_t before, uint64_t after)
{
	EXPECT_EQ(0, c->__reserved) TH_LOG("tag %llu", (unsigned long long)c->tag);
	EXPECT_LE(before, c->queued_ns) TH_LOG("tag %llu", (unsigned long long)c->tag);
	EXPECT_GE(after, c->ended_ns) TH_LOG("tag %llu", (unsigned long long)c->tag);
	if (c->status == -ECANCELED) {
		EXPECT_EQ(0, c->started_ns) TH_LOG("tag %llu", (unsigned long long)c->tag);
		EXPECT_EQ(~0u, c->cpu) TH_LOG("tag %llu", (unsigned long long)c->tag);
		EXPECT_LE(c->queued_ns, c->ended_ns) TH_LOG("tag %llu",
							    (unsigned long long)c->tag);
		return;
	}
	EXPECT_LE(c->queued_ns, c->started_ns) TH_LOG("tag %llu", (unsigned long long)c->tag);
	EXPECT_LE(c->started_ns, c->ended_ns) TH_LOG("tag %llu", (unsigned long long)c->tag);
	EXPECT_LT(c->cpu, ncpus) TH_LOG("tag %llu", (unsigned long long)c->tag);
}

/* A task of a table, and the result it must come back with. */
struct expect {
	struct kgo_task t;
	uint64_t result;
};

TEST_F_TIMEOUT(kgo, results, 120)
{
	const struct expect tab[] = {
		{ task(KGO_TASK_NOP, 0, 0, 0), 0 },
		/* SPIN: at least what was asked, checked apart. */
		{ task(KGO_TASK_SPIN, 1, 1, 0), 0 },
		{ task(KGO_TASK_SPIN, 2, 1000, 0), 0 },
		{ task(KGO_TASK_SPIN, 3, 5 * MSEC, 0), 0 },
		{ task(KGO_TASK_YIELD, 4, 1, 0), 1 },
		{ task(KGO_TASK_YIELD, 5, 100, 0), 100 },
		{ task(KGO_TASK_YIELD, 6, 10000, 0), 10000 },
		{ task(KGO_TASK_SPAWN, 7, 1, 0), 1 },
		{ task(KGO_TASK_SPAWN, 8, 1, 5), 6 },
		{ task(KGO_TASK_SPAWN, 9, 2, 2), 7 },
		{ task(KGO_TASK_SPAWN, 10, 3, 4), 1 + 3 + 9 + 27 + 81 },
		{ task(KGO_TASK_SPAWN, 11, 2, 10), 2047 },
		{ task(KGO_TASK_SPAWN, 12, KGO_SPAWN_MAX_FANOUT, 0), 1 },
		{ task(KGO_TASK_SPAWN, 13, KGO_SPAWN_MAX_FANOUT, 1), 65 },
		{ task(KGO_TASK_SPAWN, 14, KGO_SPAWN_MAX_FANOUT, 2), 1 + 64 + 64 * 64 },
	};
	const size_t n = ARRAY_SIZE(tab);
	struct kgo_task t[ARRAY_SIZE(tab)];
	struct kgo_completion c[ARRAY_SIZE(tab)];
	unsigned int seen[ARRAY_SIZE(tab)] = {};
	uint64_t before, after;

	for (size_t i = 0; i < n; i++)
		t[i] = tab[i].t;
	before = now_ns();
	ASSERT_EQ(n, submit(self->fd, t, n)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(n, collect(self->fd, c, n));
	after = now_ns();

	for (size_t i = 0; i < n; i++) {
		const struct expect *e;

		ASSERT_LT(c[i].tag, n);
		e = &tab[c[i].tag];
		seen[c[i].tag]++;
		check_completion(_metadata, &c[i], self->ncpus, before, after);
		EXPECT_EQ(0, c[i].status) TH_LOG("tag %llu", (unsigned long long)c[i].tag);
		EXPECT_EQ(e->t.kind, c[i].kind) TH_LOG("tag %llu", (unsigned long long)c[i].tag);
		if (e->t.kind == KGO_TASK_SPIN) {
			/* It spun at least that long, between start and end. */
			EXPECT_LE(e->t.args[0], c[i].result);
			EXPECT_LE(e->t.args[0], c[i].ended_ns - c[i].started_ns);
		} else {
			EXPECT_EQ(e->result, c[i].result)
				TH_LOG("tag %llu", (unsigned long long)c[i].tag);
		}
	}
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(1, seen[i])
			TH_LOG("tag %zu", i);
	}
}

TEST_F_TIMEOUT(kgo, checksum, 120)
{
	/* Around the edges of words, cache lines and pages; the maximum. */
	static const size_t sizes[] = {
		0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 4095, 4096, 4097, 65539,
		KGO_CHECKSUM_MAX_LEN - 1, KGO_CHECKSUM_MAX_LEN,
	};
	/* Each size twice: from an aligned and from an odd address. */
	enum { N = 2 * ARRAY_SIZE(sizes) };
	static const char check[] = "123456789";
	const size_t total = N + self->nprocs;
	unsigned char *bufs[N];
	uint32_t expect[N];
	struct kgo_task t[N];
	struct kgo_completion *c = calloc(total, sizeof(*c));
	unsigned int seen[N] = {};
	uint64_t before, after;
	size_t i, done = 0, inflight = 0;
	long got;

	ASSERT_NE(NULL, c);
	/* The helper itself: the standard check value of CRC-32C. */
	ASSERT_EQ(0xe3069283u, kgo_crc32c(check, 9));

	for (i = 0; i < N; i++) {
		size_t len = sizes[i / 2], off = i % 2;

		bufs[i] = malloc(len + 1);
		ASSERT_NE(NULL, bufs[i]);
		fill(bufs[i] + off, len, i);
		expect[i] = kgo_crc32c(bufs[i] + off, len);
		t[i] = task(KGO_TASK_CHECKSUM, i, (uintptr_t)(bufs[i] + off), len);
	}

	before = now_ns();
	/*
	 * Every P busy first, so that the CHECKSUMs are still queued when
	 * their buffers change below.
	 */
	for (i = 0; i < self->nprocs; i++) {
		struct kgo_task spin = task(KGO_TASK_SPIN, N + i, 100 * MSEC, 0);

		ASSERT_EQ(1, submit(self->fd, &spin, 1));
		inflight++;
	}
	/* All at once, unless the byte cap stops a batch part-way. */
	for (i = 0; i < N; ) {
		int r = submit(self->fd, t + i, N - i);

		if (r < 0 && errno == EAGAIN && inflight) {
			got = collect(self->fd, c + done, inflight);
			ASSERT_EQ(inflight, got);
			done += got;
			inflight = 0;
			continue;
		}
		ASSERT_LT(0, r) TH_LOG("tag %zu: %s", i, strerror(errno));
		/*
		 * The buffers were copied in: what they hold from now on,
		 * or whether they exist at all, does not matter.
		 */
		for (size_t j = i; j < i + r; j++) {
			memset(bufs[j], 0x5a, sizes[j / 2] + 1);
			free(bufs[j]);
			bufs[j] = NULL;
		}
		inflight += r;
		i += r;
	}
	got = collect(self->fd, c + done, inflight);
	ASSERT_EQ(inflight, got);
	done += got;
	ASSERT_EQ(total, done);
	after = now_ns();

	for (i = 0; i < total; i++) {
		uint64_t tag = c[i].tag;

		check_completion(_metadata, &c[i], self->ncpus, before, after);
		EXPECT_EQ(0, c[i].status) TH_LOG("tag %llu", (unsigned long long)tag);
		if (tag >= N)
			continue;	/* a SPIN */
		seen[tag]++;
		EXPECT_EQ(KGO_TASK_CHECKSUM, c[i].kind);
		EXPECT_EQ(expect[tag], c[i].result)
			TH_LOG("len %zu from offset %d", sizes[tag / 2], (int)(tag % 2));
	}
	for (i = 0; i < N; i++) {
		EXPECT_EQ(1, seen[i])
			TH_LOG("tag %zu", i);
	}
	free(c);
}

/* Every kind in one batch, more tasks than Ps: the common fields. */
TEST_F_TIMEOUT(kgo, timestamps, 120)
{
	enum { N = 200 };
	unsigned char data[256];
	struct kgo_task t[N];
	struct kgo_completion c[N];
	unsigned int seen[N] = {};
	uint64_t before, after;

	fill(data, sizeof(data), 1);
	for (size_t i = 0; i < N; i++) {
		switch (i % 5) {
		case 0:
			t[i] = task(KGO_TASK_NOP, i, 0, 0);
			break;
		case 1:
			t[i] = task(KGO_TASK_SPIN, i, 100000, 0);
			break;
		case 2:
			t[i] = task(KGO_TASK_YIELD, i, 10, 0);
			break;
		case 3:
			t[i] = task(KGO_TASK_SPAWN, i, 2, 3);
			break;
		default:
			t[i] = task(KGO_TASK_CHECKSUM, i, (uintptr_t)data, sizeof(data));
			break;
		}
	}
	before = now_ns();
	ASSERT_EQ(N, submit(self->fd, t, N)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(N, collect(self->fd, c, N));
	after = now_ns();
	for (size_t i = 0; i < N; i++) {
		ASSERT_LT(c[i].tag, N);
		seen[c[i].tag]++;
		EXPECT_EQ(0, c[i].status);
		EXPECT_EQ(t[c[i].tag].kind, c[i].kind);
		check_completion(_metadata, &c[i], self->ncpus, before, after);
	}
	for (size_t i = 0; i < N; i++) {
		EXPECT_EQ(1, seen[i])
			TH_LOG("tag %zu", i);
	}
}

/* Completions go to the fd that submitted; each fd is its own session. */
TEST_F(kgo, sessions)
{
	int other = open(KGO_DEVICE_PATH, O_RDWR | O_NONBLOCK);
	struct kgo_task t = task(KGO_TASK_NOP, 77, 0, 0);
	struct kgo_completion c;
	uint32_t ready;

	ASSERT_LE(0, other);
	ASSERT_EQ(1, submit(self->fd, &t, 1));
	ASSERT_EQ(0, wait_ready(self->fd, 1, WAIT_NS, &ready));
	EXPECT_EQ(1, ready);
	/* The other fd has nothing in flight: WAIT returns at once. */
	EXPECT_EQ(0, wait_ready(other, 1, WAIT_NS, &ready));
	EXPECT_EQ(0, ready);
	EXPECT_EQ(-1, read(other, &c, REC));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(REC, read(self->fd, &c, REC));
	EXPECT_EQ(77, c.tag);
	close(other);
}

TEST_F(kgo, wait_min_complete)
{
	struct kgo_task t[3] = {
		task(KGO_TASK_NOP, 1, 0, 0),
		task(KGO_TASK_NOP, 2, 0, 0),
		task(KGO_TASK_SPIN, 3, 100 * MSEC, 0),
	};
	struct kgo_completion c[3];
	uint64_t start;
	uint32_t ready;

	/* Nothing in flight: returns at once, not after the timeout. */
	start = now_ns();
	EXPECT_EQ(0, wait_ready(self->fd, 1, WAIT_NS, &ready));
	EXPECT_EQ(0, ready);
	EXPECT_GT(start + WAIT_NS / 2, now_ns());

	/* min_complete 0 is always met. */
	EXPECT_EQ(0, wait_ready(self->fd, 0, 0, &ready));

	/* All three ready, the SPIN included. */
	start = now_ns();
	ASSERT_EQ(3, submit(self->fd, t, 3));
	ASSERT_EQ(0, wait_ready(self->fd, 3, WAIT_NS, &ready));
	EXPECT_EQ(3, ready);
	EXPECT_LE(start + 100 * MSEC, now_ns());
	/* Asking for more than can come: returns with what there is. */
	EXPECT_EQ(0, wait_ready(self->fd, 10, WAIT_NS, &ready));
	EXPECT_EQ(3, ready);
	ASSERT_EQ(3 * REC, read(self->fd, c, sizeof(c)));
	EXPECT_EQ(6, c[0].tag + c[1].tag + c[2].tag);

	/* ready counts what is there to read, not what was asked for. */
	ASSERT_EQ(2, submit(self->fd, t, 2));
	ASSERT_EQ(0, wait_ready(self->fd, 2, WAIT_NS, &ready));
	EXPECT_EQ(2, ready);
	ASSERT_EQ(0, wait_ready(self->fd, 1, WAIT_NS, &ready));
	EXPECT_EQ(2, ready);
	ASSERT_EQ(REC, read(self->fd, c, REC));
	ASSERT_EQ(0, wait_ready(self->fd, 1, 0, &ready));
	EXPECT_EQ(1, ready);
	ASSERT_EQ(REC, read(self->fd, c, REC));
	ASSERT_EQ(0, wait_ready(self->fd, 1, 0, &ready));
	EXPECT_EQ(0, ready);
}

/*
 * The tasks waited for here end only when cancelled: a SPIN of a set
 * length, as before, could end before the wait began on a host that
 * stalls the guest that long.
 */
static int cancel_running(int fd, uint64_t tag)
{
	struct kgo_cancel c = { .size = sizeof(c), .flags = KGO_CANCEL_RUNNING, .tag = tag };

	return ioctl(fd, KGO_IOC_CANCEL, &c) ? -1 : (int)c.cancelled;
}

TEST_F(kgo, wait_timeout)
{
	struct kgo_task t = task(KGO_TASK_SLEEP, 1, KGO_SLEEP_MAX_NS, 0);
	struct kgo_completion c;
	uint64_t start, end;
	uint32_t ready;

	ASSERT_EQ(1, submit(self->fd, &t, 1));
	start = now_ns();
	EXPECT_EQ(-1, wait_ready(self->fd, 1, MSEC, NULL));
	EXPECT_EQ(ETIMEDOUT, errno);
	end = now_ns();
	EXPECT_LE(start + MSEC, end);
	/* 0 does not wait at all. */
	EXPECT_EQ(-1, wait_ready(self->fd, 1, 0, NULL));
	EXPECT_EQ(ETIMEDOUT, errno);

	/* Then it comes. */
	ASSERT_EQ(1, cancel_running(self->fd, 1));
	ASSERT_EQ(0, wait_ready(self->fd, 1, WAIT_NS, &ready));
	EXPECT_EQ(1, ready);
	ASSERT_EQ(REC, read(self->fd, &c, REC));
	EXPECT_EQ(-ECANCELED, c.status);
	/* The timeouts ran out while it was still running. */
	EXPECT_LT(end, c.ended_ns);
}

static void on_alarm(int sig)
{
}

/* A signal ends a WAIT with EINTR, not a restart. */
TEST_F(kgo, wait_eintr)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_usec = 50000 } };
	struct kgo_task t = task(KGO_TASK_SLEEP, 1, KGO_SLEEP_MAX_NS, 0);
	struct kgo_completion c;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(1, submit(self->fd, &t, 1));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(-1, wait_ready(self->fd, 1, WAIT_NS, NULL));
	EXPECT_EQ(EINTR, errno);
	/* Interrupted, not finished: nothing is there to read. */
	EXPECT_EQ(-1, wait_ready(self->fd, 1, 0, NULL));
	EXPECT_EQ(ETIMEDOUT, errno);
	ASSERT_EQ(1, cancel_running(self->fd, 1));
	ASSERT_EQ(1, collect(self->fd, &c, 1));
	EXPECT_EQ(-ECANCELED, c.status);
}

/* One round of the cancel test; returns whether it was deterministic. */
static bool cancel_round(struct __test_metadata *_metadata, int fd, unsigned int nprocs,
			 long ncpus)
{
	enum { NA = 256, NB = 256 };
	const uint64_t tag_spin = 1ULL << 32, tag_a = 0xa, tag_b = 0xb0000;
	const size_t n = nprocs + NA + NB;
	struct kgo_task *t = calloc(n, sizeof(*t));
	struct kgo_completion *c = calloc(n, sizeof(*c));
	unsigned int *seen_spin = calloc(nprocs, sizeof(*seen_spin));
	unsigned int seen_b[NB] = {}, seen_a = 0;
	unsigned int cancelled_a = 0, cancelled_other = 0;
	uint64_t spin_started = 0, spin_ended = ~0ULL, nop_queued = ~0ULL;
	uint64_t before, deadline, cancel_done;
	struct kgo_proc_stats *ps = calloc(nprocs, sizeof(*ps));
	struct kgo_cancel ca, cb;
	struct kgo_stats st;
	int other;
	bool strict, spins_done = true;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, seen_spin);
	ASSERT_NE(NULL, ps);
	other = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, other);

	/* One SPIN of a second per P: every P busy, none of them yields. */
	for (unsigned int i = 0; i < nprocs; i++)
		t[i] = task(KGO_TASK_SPIN, tag_spin + i, KGO_SPIN_MAX_NS, 0);
	before = now_ns();
	ASSERT_EQ(nprocs, submit(fd, t, nprocs));

	/*
	 * Until every SPIN runs: none queued anywhere, none done, every P
	 * held. Best effort: whether it held is judged from the completions
	 * afterwards.
	 */
	deadline = now_ns() + 10 * NSEC;
	while (now_ns() < deadline) {
		bool queued = false;
		uint32_t ready;

		st = (struct kgo_stats){
			.size = sizeof(st),
			.procs = (uintptr_t)ps,
			.procs_max = nprocs,
			.proc_size = sizeof(*ps),
		};
		ASSERT_EQ(0, ioctl(fd, KGO_IOC_STATS, &st));
		for (unsigned int i = 0; i < nprocs; i++)
			queued |= ps[i].runq_len != 0;
		if (!queued && st.global_runq == 0 && st.nr_procs_idle == 0 &&
		    st.goroutines >= nprocs &&
		    wait_ready(fd, 1, 0, &ready) == -1 && errno == ETIMEDOUT)
			break;
		usleep(1000);
	}

	/* Tag A: NA NOPs sharing one tag. Tag B: NB NOPs, one tag each. */
	for (unsigned int i = 0; i < NA; i++)
		t[nprocs + i] = task(KGO_TASK_NOP, tag_a, 0, 0);
	for (unsigned int i = 0; i < NB; i++)
		t[nprocs + NA + i] = task(KGO_TASK_NOP, tag_b + i, 0, 0);
	ASSERT_EQ(NA + NB, submit(fd, t + nprocs, NA + NB));

	/* Another fd's cancels and an unused tag touch none of them. */
	ca = (struct kgo_cancel){ .size = sizeof(ca), .flags = KGO_CANCEL_ALL };
	ASSERT_EQ(0, ioctl(other, KGO_IOC_CANCEL, &ca));
	EXPECT_EQ(0, ca.cancelled);
	ca = (struct kgo_cancel){ .size = sizeof(ca), .tag = tag_a + 1 };
	ASSERT_EQ(0, ioctl(fd, KGO_IOC_CANCEL, &ca));
	EXPECT_EQ(0, ca.cancelled);

	ca = (struct kgo_cancel){ .size = sizeof(ca), .tag = tag_a };
	ASSERT_EQ(0, ioctl(fd, KGO_IOC_CANCEL, &ca));
	cb = (struct kgo_cancel){ .size = sizeof(cb), .flags = KGO_CANCEL_ALL };
	ASSERT_EQ(0, ioctl(fd, KGO_IOC_CANCEL, &cb));
	cancel_done = now_ns();

	/* Every task completes exactly once, cancelled or not. */
	ASSERT_EQ(n, collect(fd, c, n));
	for (size_t i = 0; i < n; i++) {
		uint64_t tag = c[i].tag;
		bool cancelled = c[i].status == -ECANCELED;

		check_completion(_metadata, &c[i], ncpus, before, now_ns());
		if (!cancelled) {
			EXPECT_EQ(0, c[i].status) TH_LOG("tag %#llx", (unsigned long long)tag);
			EXPECT_NE(0, c[i].started_ns);
		}
		if (tag == tag_a) {
			seen_a++;
			cancelled_a += cancelled;
			if (c[i].queued_ns < nop_queued)
				nop_queued = c[i].queued_ns;
			continue;
		}
		cancelled_other += cancelled;
		if (tag >= tag_spin && tag < tag_spin + nprocs) {
			seen_spin[tag - tag_spin]++;
			if (cancelled) {
				spins_done = false;
				continue;
			}
			if (c[i].started_ns > spin_started)
				spin_started = c[i].started_ns;
			if (c[i].ended_ns < spin_ended)
				spin_ended = c[i].ended_ns;
		} else if (tag >= tag_b && tag < tag_b + NB) {
			seen_b[tag - tag_b]++;
			if (c[i].queued_ns < nop_queued)
				nop_queued = c[i].queued_ns;
		} else {
			EXPECT_TRUE(false) TH_LOG("unknown tag %#llx", (unsigned long long)tag);
		}
	}
	for (unsigned int i = 0; i < nprocs; i++) {
		EXPECT_EQ(1, seen_spin[i])
			TH_LOG("SPIN %u", i);
	}
	for (unsigned int i = 0; i < NB; i++) {
		EXPECT_EQ(1, seen_b[i])
			TH_LOG("NOP B %u", i);
	}
	EXPECT_EQ(NA, seen_a);

	/* cancelled counts exactly the -ECANCELED completions. */
	EXPECT_EQ(ca.cancelled, cancelled_a);
	EXPECT_EQ(cb.cancelled, cancelled_other);

	/*
	 * Deterministic when every P ran a SPIN from before the first NOP
	 * was queued until after both cancels returned: then no NOP can
	 * have started, and every one of them must have been cancelled.
	 */
	strict = spins_done && spin_started < nop_queued && spin_ended > cancel_done;
	if (strict) {
		EXPECT_EQ(NA, ca.cancelled);
		EXPECT_EQ(NB, cb.cancelled);
	} else {
		TH_LOG("not every P was busy throughout: %u + %u of %u NOPs cancelled",
		       ca.cancelled, cb.cancelled, NA + NB);
	}
	close(other);
	free(ps);
	free(seen_spin);
	free(c);
	free(t);
	return strict;
}

TEST_F_TIMEOUT(kgo, cancel, 300)
{
	unsigned long long slice;
	bool strict = false;

	/*
	 * The SPINs hold the Ps only until their P is taken from them, two
	 * slices on (hog.c): make that longer than they run.
	 */
	ASSERT_EQ(0, read_param("slice_ms", &slice));
	ASSERT_EQ(0, write_param("slice_ms", 10000));
	/* The SPINs only keep the Ps busy if the CPUs let us run meanwhile. */
	for (int attempt = 0; attempt < 3 && !strict; attempt++)
		strict = cancel_round(_metadata, self->fd, self->nprocs, self->ncpus);
	EXPECT_EQ(0, write_param("slice_ms", slice));
	EXPECT_TRUE(strict) TH_LOG("could not keep every P busy while cancelling");
}

/*
 * Goroutines created and finished so far, on every P and from outside:
 * a count that moves whenever the scheduler makes progress with them.
 */
static int sched_moves(int fd, unsigned int nprocs, uint64_t *moves)
{
	struct kgo_proc_stats ps[nprocs];
	struct kgo_stats st = {
		.size = sizeof(st),
		.procs = (uintptr_t)ps,
		.procs_max = nprocs,
		.proc_size = sizeof(ps[0]),
	};

	if (ioctl(fd, KGO_IOC_STATS, &st))
		return -1;
	*moves = st.created_outside;
	for (unsigned int i = 0; i < st.nr_procs && i < nprocs; i++)
		*moves += ps[i].gcreated + ps[i].gfinished;
	return 0;
}

/* Polls STATS until the scheduler is quiet, or @timeout_ns passes. */
static bool quiet(int fd, unsigned int nprocs, struct kgo_stats *st,
		  struct kgo_proc_stats *ps, uint64_t timeout_ns)
{
	uint64_t deadline = now_ns() + timeout_ns;

	for (;;) {
		uint64_t created, finished;
		bool empty = true;

		*st = (struct kgo_stats){
			.size = sizeof(*st),
			.procs = (uintptr_t)ps,
			.procs_max = nprocs,
			.proc_size = sizeof(*ps),
		};
		if (ioctl(fd, KGO_IOC_STATS, st))
			return false;
		created = st->created_outside;
		finished = 0;
		for (unsigned int i = 0; i < nprocs; i++) {
			created += ps[i].gcreated;
			finished += ps[i].gfinished;
			empty &= ps[i].runq_len == 0;
		}
		if (empty && !st->goroutines && !st->global_runq && created == finished)
			return true;
		if (now_ns() > deadline)
			return false;
		usleep(10000);
	}
}

TEST_F_TIMEOUT(kgo, stats_drained, 120)
{
	enum { N = 500 };
	unsigned char data[64];
	struct kgo_task t[N];
	struct kgo_completion c[N];
	struct kgo_proc_stats *ps = calloc(self->nprocs, sizeof(*ps));
	struct kgo_stats st;
	uint64_t created, finished, lat = 0;

	ASSERT_NE(NULL, ps);
	fill(data, sizeof(data), 2);
	for (size_t i = 0; i < N; i++) {
		switch (i % 4) {
		case 0:
			t[i] = task(KGO_TASK_NOP, i, 0, 0);
			break;
		case 1:
			t[i] = task(KGO_TASK_YIELD, i, 5, 0);
			break;
		case 2:
			/* Goroutines spawned from goroutines: gcreated. */
			t[i] = task(KGO_TASK_SPAWN, i, 3, 2);
			break;
		default:
			t[i] = task(KGO_TASK_CHECKSUM, i, (uintptr_t)data, sizeof(data));
			break;
		}
	}
	ASSERT_EQ(N, submit(self->fd, t, N));
	ASSERT_EQ(N, collect(self->fd, c, N));

	/* Everything read: the goroutines that ran them exit soon after. */
	EXPECT_TRUE(quiet(self->fd, self->nprocs, &st, ps, QUIET_NS));
	EXPECT_EQ(self->nprocs, st.nr_procs);
	EXPECT_EQ(0, st.goroutines);
	EXPECT_EQ(0, st.global_runq);
	created = st.created_outside;
	finished = 0;
	for (unsigned int i = 0; i < self->nprocs; i++) {
		EXPECT_EQ(i, ps[i].id);
		EXPECT_EQ(0, ps[i].runq_len) TH_LOG("P %u", i);
		created += ps[i].gcreated;
		finished += ps[i].gfinished;
	}
	EXPECT_EQ(created, finished);
	/* At least this run's: one per task, six more per SPAWN. */
	EXPECT_LE(N + (N / 4) * 12, finished);
	for (int i = 0; i < KGO_LATENCY_BUCKETS; i++)
		lat += st.latency[i];
	EXPECT_LT(0, lat);
	free(ps);
}

/*
 * Fills the fd's cap on tasks in flight with NOPs, never reading: the
 * cap is what is accepted. Reading one makes room for one.
 */
TEST_F_TIMEOUT(kgo, inflight_cap, 300)
{
	enum { BATCH = 1024 };
	unsigned long long cap;
	struct kgo_task t[BATCH];
	struct kgo_completion *c;
	unsigned char *seen;
	uint64_t next = 0;
	long got;

	ASSERT_EQ(0, read_param("max_inflight", &cap));
	if (cap > INFLIGHT_LIMIT)
		SKIP(return, "max_inflight %llu: too many to fill here", cap);
	c = calloc(cap + 1, sizeof(*c));
	seen = calloc(cap + 1, 1);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, seen);

	for (;;) {
		unsigned int n = BATCH;
		int r;

		for (unsigned int i = 0; i < n; i++)
			t[i] = task(KGO_TASK_NOP, next + i, 0, 0);
		r = submit(self->fd, t, n);
		if (r < 0) {
			ASSERT_EQ(EAGAIN, errno);
			break;
		}
		next += r;
		/* Never more than the cap, however fast the NOPs complete. */
		ASSERT_GE(cap, next);
	}
	EXPECT_EQ(cap, next);

	/* Read one, and there is room for exactly one more. */
	ASSERT_EQ(1, collect(self->fd, c, 1));
	t[0] = task(KGO_TASK_NOP, next, 0, 0);
	t[1] = task(KGO_TASK_NOP, next + 1, 0, 0);
	EXPECT_EQ(1, submit(self->fd, t, 2));
	next++;
	EXPECT_EQ(-1, submit(self->fd, t + 1, 1));
	EXPECT_EQ(EAGAIN, errno);

	/* Every tag exactly once. */
	got = collect(self->fd, c + 1, next - 1);
	EXPECT_EQ(next - 1, got);
	for (long i = 0; i < got + 1; i++) {
		ASSERT_LT(c[i].tag, next);
		EXPECT_EQ(0, c[i].status);
		seen[c[i].tag]++;
	}
	for (uint64_t i = 0; i < next; i++) {
		ASSERT_EQ(1, seen[i])
			TH_LOG("tag %llu", (unsigned long long)i);
	}
	free(seen);
	free(c);
}

/* The same for the cap on bytes copied in, with the biggest CHECKSUMs. */
TEST_F_TIMEOUT(kgo, bytes_cap, 300)
{
	const size_t len = KGO_CHECKSUM_MAX_LEN;
	unsigned long long max_bytes, cap;
	unsigned char *buf = malloc(len);
	struct kgo_completion *c;
	struct kgo_task t;
	uint32_t expect;
	uint64_t next = 0;
	long got;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, read_param("max_bytes", &max_bytes));
	cap = max_bytes / len;
	if (cap > BYTES_LIMIT)
		SKIP(return, "max_bytes %llu: too many MiB to fill here", max_bytes);
	ASSERT_LE(1, cap) TH_LOG("max_bytes %llu < KGO_CHECKSUM_MAX_LEN", max_bytes);
	c = calloc(cap + 1, sizeof(*c));
	ASSERT_NE(NULL, c);
	fill(buf, len, 3);
	expect = kgo_crc32c(buf, len);

	for (;;) {
		t = task(KGO_TASK_CHECKSUM, next, (uintptr_t)buf, len);
		if (submit(self->fd, &t, 1) < 0) {
			ASSERT_EQ(EAGAIN, errno);
			break;
		}
		next++;
		ASSERT_GE(cap, next);
	}
	EXPECT_EQ(cap, next);

	ASSERT_EQ(1, collect(self->fd, c, 1));
	t = task(KGO_TASK_CHECKSUM, next, (uintptr_t)buf, len);
	EXPECT_EQ(1, submit(self->fd, &t, 1));
	next++;
	EXPECT_EQ(-1, submit(self->fd, &t, 1));
	EXPECT_EQ(EAGAIN, errno);

	got = collect(self->fd, c + 1, next - 1);
	EXPECT_EQ(next - 1, got);
	for (long i = 0; i < got + 1; i++) {
		EXPECT_EQ(0, c[i].status);
		EXPECT_EQ(expect, c[i].result) TH_LOG("tag %llu", (unsigned long long)c[i].tag);
	}
	free(c);
	free(buf);
}

/*
 * One valid task that asks for more memory than the machine has: a chain
 * of goroutines (fan-out 1, as many nodes as the ABI allows), each
 * waiting for its child while it holds a stack: 2 GiB of them. Within
 * kgo's memory budget it stops growing, and completes with -ENOMEM and
 * the nodes that ran; the machine (a 1 GiB VM in make check) lives on.
 */
TEST_F_TIMEOUT(kgo, spawn_chain_budget, 300)
{
	struct kgo_info info = { .size = sizeof(info) };
	struct kgo_task t = task(KGO_TASK_SPAWN, 1, 1, KGO_SPAWN_MAX_NODES - 1);
	struct kgo_completion c;
	uint64_t start, moved, moves = 0, now;
	uint32_t ready = 0;

	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	ASSERT_LT(0, info.mem_budget);
	ASSERT_EQ(1, submit(self->fd, &t, 1)) TH_LOG("%s", strerror(errno));
	/*
	 * Tens of thousands of nodes grow and unwind one after the other:
	 * on an instrumented kernel (KCSAN) that can outlast WAIT_NS. So
	 * wait while the scheduler makes progress, and fail when it has
	 * made none for WAIT_NS: a stuck chain, not a slow one.
	 */
	start = moved = now_ns();
	for (;;) {
		uint64_t m;

		if (!wait_ready(self->fd, 1, 5 * NSEC, &ready))
			break;
		ASSERT_EQ(ETIMEDOUT, errno);
		now = now_ns();
		ASSERT_EQ(0, sched_moves(self->fd, self->nprocs, &m));
		if (m != moves) {
			moves = m;
			moved = now;
		}
		ASSERT_GT(moved + WAIT_NS, now)
			TH_LOG("the chain made no progress for %llu s (%llu goroutines created and finished in all)",
			       (unsigned long long)((now - moved) / NSEC),
			       (unsigned long long)moves);
	}
	ASSERT_EQ(1, ready);
	ASSERT_EQ(1, collect(self->fd, &c, 1));
	TH_LOG("the chain stopped at %llu of %llu nodes (budget %llu MiB) in %.1f s: %s",
	       (unsigned long long)c.result, (unsigned long long)KGO_SPAWN_MAX_NODES,
	       (unsigned long long)info.mem_budget >> 20,
	       (double)(now_ns() - start) / NSEC, strerror(-c.status));
	EXPECT_EQ(-ENOMEM, c.status);
	EXPECT_LT(1, c.result);
	/* Every node that ran held a stack at once. */
	EXPECT_GE(info.mem_budget / info.stack_size, c.result);
}

TEST_HARNESS_MAIN
