// SPDX-License-Identifier: GPL-2.0
/*
 * SUBMIT and open(2) under slab allocation failures (failslab).
 *
 * With failslab's task filter, only this process's allocations fail, and
 * only while it is inside a SUBMIT (or an open) of /dev/kgo: its
 * /proc/self/make-it-fail is 1 around those calls and 0 otherwise.
 * Allocations that may sleep are failed too (ignore-gfp-wait=N), with a
 * probability that makes most batches meet a failure. Batches mix NOP,
 * CHECKSUM of 4 KiB to 1 MiB, small SPAWN trees and short SLEEPs.
 *
 * A SUBMIT may then return a partial count or -ENOMEM, nothing else; an
 * open may fail with -ENOMEM. WAIT and read never hang (each has a
 * timeout). Once failslab is off, every accepted task completes exactly
 * once with its result, and a NOP runs on a fresh fd. failslab's
 * settings are put back whatever happens.
 *
 * Needs a kernel with CONFIG_FAILSLAB and debugfs: the debug kernel of
 * the test VMs. Elsewhere it skips.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kgo_stress.h"
#include "kselftest_harness.h"

#define FS		"/sys/kernel/debug/failslab/"
#define PROBABILITY	"5"		/* percent of allocations, each task has several */
#define NBATCHES	1500
#define MAXBATCH	32
#define DATA_LEN	(1 << 20)
#define INFLIGHT_MAX	256
#define BYTES_MAX	(24ULL << 20)	/* copied-in bytes in flight: under max_bytes */
#define NOPENS		200
#define BOOK_CAP	(1 << 17)
#define ALLOWED		(ST_OK | ST_NOMEM | ST_AGAIN)	/* SPAWN may meet the budget */

/* The failslab knobs this test sets, and what they were. */
static const char *const knobs[] = {
	"probability", "interval", "times", "space", "verbose", "task-filter",
	"ignore-gfp-wait", "ignore-gfp-reclaim",
};

FIXTURE(failslab) {
	char saved[ARRAY_SIZE(knobs)][64];
	bool have[ARRAY_SIZE(knobs)];
	bool ready, touched;
	int fail_fd;	/* /proc/self/make-it-fail, open all along */
	int fd;
	struct book *book;
	unsigned char *data;
};

static int read_knob(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), FS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return 0;
}

static int set_knob(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), FS "%s", name);
	return write_str(path, val);
}

/* This process's allocations fail (on), or not (off). No other syscall between. */
static void fail(int fd, bool on)
{
	if (pwrite(fd, on ? "1" : "0", 1, 0) != 1)
		abort();
}

FIXTURE_SETUP(failslab)
{
	self->fail_fd = -1;
	self->fd = -1;
	/* The 6.1 harness runs the test after a SKIP in setup: the test skips. */
	if (access(FS "probability", W_OK))
		return;
	self->ready = true;
	for (size_t i = 0; i < ARRAY_SIZE(knobs); i++)
		self->have[i] = !read_knob(knobs[i], self->saved[i], sizeof(self->saved[i]));
	self->fail_fd = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, self->fail_fd) TH_LOG("/proc/self/make-it-fail: %s", strerror(errno));

	KGO_OPEN(self->fd, O_NONBLOCK);
	self->book = book_init(BOOK_CAP, now_ns() << 32, false);
	ASSERT_NE(NULL, self->book);
	self->book->strict = true;
	self->data = mmap(NULL, DATA_LEN, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->data);
	self->book->data = self->data;
	/*
	 * Everything resident before any allocation may fail: a page fault
	 * of ours under failslab would fail too, and a copy_from_user()
	 * would then see -EFAULT for a good buffer.
	 */
	memset(self->book->t, 0, BOOK_CAP * sizeof(struct tinfo));
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE)) TH_LOG("mlockall: %s", strerror(errno));
}

FIXTURE_TEARDOWN(failslab)
{
	if (self->fail_fd >= 0) {
		fail(self->fail_fd, false);
		close(self->fail_fd);
	}
	if (self->touched) {
		/* probability first, so that nothing fails while the rest goes back. */
		set_knob("probability", "0");
		for (size_t i = 0; i < ARRAY_SIZE(knobs); i++)
			if (self->have[i] && set_knob(knobs[i], self->saved[i]))
				fprintf(stderr, "# could not restore failslab %s=%s\n", knobs[i],
					self->saved[i]);
	}
	if (self->ready)
		munlockall();
	if (self->fd >= 0)
		close(self->fd);
	if (self->data && self->data != MAP_FAILED)
		munmap(self->data, DATA_LEN);
	book_free(self->book);
}

static void make_task(struct book *b, struct rng *r, struct kgo_task *t)
{
	uint64_t expect = 0;
	uint32_t aux = 0;

	*t = (struct kgo_task){ 0 };
	switch (rng_below(r, 4)) {
	case 0:
		t->kind = KGO_TASK_NOP;
		break;
	case 1: {
		/* 4 KiB to 1 MiB, spread over the sizes (log-uniform). */
		uint64_t len = 4096ULL << rng_below(r, 9);

		len += rng_below(r, len);
		if (len > DATA_LEN)
			len = DATA_LEN;
		t->kind = KGO_TASK_CHECKSUM;
		expect = rng_below(r, DATA_LEN - len + 1);
		t->args[0] = (uintptr_t)b->data + expect;
		t->args[1] = aux = len;
		break;
	}
	case 2:
		t->kind = KGO_TASK_SPAWN;
		t->args[0] = 1 + rng_below(r, 3);
		t->args[1] = 1 + rng_below(r, 2);
		expect = 1 + t->args[0] + (t->args[1] > 1 ? t->args[0] * t->args[0] : 0);
		break;
	default:
		t->kind = KGO_TASK_SLEEP;
		t->args[0] = expect = rng_below(r, MSEC);
	}
	t->tag = book_new(b, t->kind, 0, expect, aux);
}

TEST_F_TIMEOUT(failslab, submit_under_failslab, 600)
{
	static struct kgo_task t[MAXBATCH];
	struct book *b = self->book;
	uint64_t seed = seed_from_env("KGO_FAILSLAB_SEED"), start, inflight_bytes = 0;
	uint64_t full = 0, partial = 0, enomem = 0, other = 0, waits = 0, wait_bad = 0;
	uint64_t opens_ok = 0, opens_enomem = 0, opens_other = 0;
	uint32_t inflight = 0;
	int other_errno = 0, err;
	struct rng r;
	long n;
	int opened[NOPENS];

	if (!self->ready)
		SKIP(return, "no " FS " (a kernel without CONFIG_FAILSLAB, or no debugfs)");
	rng_seed(&r, seed);
	for (size_t i = 0; i < DATA_LEN; i++)
		self->data[i] = rng_next(&r);
	TH_LOG("seed %#llx (KGO_FAILSLAB_SEED to repeat)", (unsigned long long)seed);

	self->touched = true;
	ASSERT_EQ(0, set_knob("probability", "0"));
	ASSERT_EQ(0, set_knob("task-filter", "Y"));
	/* What may sleep fails too: the name changed across kernels. */
	ASSERT_TRUE(!set_knob("ignore-gfp-wait", "N") || !set_knob("ignore-gfp-reclaim", "N"));
	ASSERT_EQ(0, set_knob("verbose", "0"));
	ASSERT_EQ(0, set_knob("space", "0"));
	ASSERT_EQ(0, set_knob("times", "-1"));
	ASSERT_EQ(0, set_knob("interval", "1"));
	ASSERT_EQ(0, set_knob("probability", PROBABILITY));

	start = now_ns();
	for (int batch = 0; batch < NBATCHES; batch++) {
		unsigned int k = 1 + rng_below(&r, MAXBATCH);
		uint64_t bytes = 0;
		int ret;

		for (unsigned int i = 0; i < k; i++) {
			make_task(b, &r, &t[i]);
			if (t[i].kind == KGO_TASK_CHECKSUM)
				bytes += t[i].args[1];
		}
		/* Room under the fd's caps: a refusal must be failslab's doing. */
		while (inflight + k > INFLIGHT_MAX || inflight_bytes + bytes > BYTES_MAX) {
			struct kgo_wait w = {
				.size = sizeof(w), .min_complete = 1, .timeout_ns = 30 * NSEC,
			};

			if (ioctl(self->fd, KGO_IOC_WAIT, &w) || !w.ready)
				break;
			while ((n = book_read(b, self->fd, 0, ALLOWED, 256)) > 0)
				inflight -= n;
			/* Bytes are given back as completions are read: recount. */
			inflight_bytes = 0;
			for (uint64_t i = 0; i < b->next; i++) {
				const struct tinfo *ti = &b->t[i];

				if (ti->state == T_ACCEPTED && ti->kind == KGO_TASK_CHECKSUM)
					inflight_bytes += ti->aux;
			}
		}

		fail(self->fail_fd, true);
		ret = submit(self->fd, t, k);
		err = errno;
		/* And a WAIT under failslab too: it must return, not hang. */
		if (batch % 8 == 0) {
			struct kgo_wait w = {
				.size = sizeof(w), .min_complete = 1, .timeout_ns = 10 * MSEC,
			};

			waits++;
			if (ioctl(self->fd, KGO_IOC_WAIT, &w) && errno != ETIMEDOUT)
				wait_bad++;
		}
		fail(self->fail_fd, false);

		if (ret == (int)k)
			full++;
		else if (ret >= 0)
			partial++;
		else if (err == ENOMEM)
			enomem++;
		else {
			other++;
			other_errno = err;
		}
		for (unsigned int i = 0; i < k; i++) {
			if ((int)i < ret) {
				book_accept(b, t[i].tag);
				inflight++;
				if (t[i].kind == KGO_TASK_CHECKSUM)
					inflight_bytes += t[i].args[1];
			} else {
				book_refuse(b, t[i].tag);
			}
		}
		while ((n = book_read(b, self->fd, 0, ALLOWED, 256)) > 0)
			inflight -= n;
	}

	/* open(2) under failslab: an fd, or -ENOMEM. */
	for (int i = 0; i < NOPENS; i++) {
		fail(self->fail_fd, true);
		opened[i] = open(KGO_DEVICE_PATH, O_RDWR);
		err = errno;
		fail(self->fail_fd, false);
		if (opened[i] >= 0)
			opens_ok++;
		else if (err == ENOMEM)
			opens_enomem++;
		else
			opens_other++;
	}
	set_knob("probability", "0");
	/* What opened works. */
	for (int i = 0; i < NOPENS; i++) {
		struct kgo_task nop = { .kind = KGO_TASK_NOP, .tag = i };
		struct kgo_wait w = {
			.size = sizeof(w), .min_complete = 1, .timeout_ns = 30 * NSEC,
		};
		struct kgo_completion c = { .status = -1 };

		if (opened[i] < 0)
			continue;
		EXPECT_EQ(1, submit(opened[i], &nop, 1));
		EXPECT_EQ(0, ioctl(opened[i], KGO_IOC_WAIT, &w));
		EXPECT_EQ(sizeof(c), read(opened[i], &c, sizeof(c)));
		EXPECT_EQ(0, c.status);
		close(opened[i]);
	}

	/* Failslab off: everything accepted completes, once. */
	n = book_drain(b, self->fd, 0, ALLOWED, 120 * NSEC);
	EXPECT_LE(0, n) TH_LOG("drain: %s", strerror(-n));
	TH_LOG("%d SUBMITs in %.1f s: %llu whole, %llu partial, %llu -ENOMEM, %llu other (last errno %d); %llu tasks written, %llu accepted, %llu completed (ok %llu, ENOMEM %llu, EAGAIN %llu); %llu WAITs under failslab, %llu bad",
	       NBATCHES, (now_ns() - start) / 1e9, (unsigned long long)full,
	       (unsigned long long)partial, (unsigned long long)enomem,
	       (unsigned long long)other, other_errno, (unsigned long long)b->next,
	       (unsigned long long)b->accepted, (unsigned long long)b->done,
	       (unsigned long long)b->status[0], (unsigned long long)b->status[2],
	       (unsigned long long)b->status[3], (unsigned long long)waits,
	       (unsigned long long)wait_bad);
	TH_LOG("%d opens under failslab: %llu fds, %llu -ENOMEM, %llu other", NOPENS,
	       (unsigned long long)opens_ok, (unsigned long long)opens_enomem,
	       (unsigned long long)opens_other);

	EXPECT_EQ(0, other) TH_LOG("SUBMIT failed with %s", strerror(other_errno));
	EXPECT_EQ(0, wait_bad);
	EXPECT_EQ(0, opens_other);
	/* Failslab did its part: some batches were cut short. */
	EXPECT_LT(0, partial + enomem);
	EXPECT_LT(0, b->accepted);
	EXPECT_EQ(0, b->errors);
	EXPECT_EQ(0, book_missing(b));
	EXPECT_EQ(b->accepted, b->done);
	err = kgo_nop_works(30 * NSEC);
	EXPECT_EQ(0, err) TH_LOG("NOP on a fresh fd: %s", strerror(err));
}

TEST_HARNESS_MAIN
