// SPDX-License-Identifier: GPL-2.0
/*
 * Every accepted task completes exactly once, under load: 8 threads on
 * 4 fds (2 per fd) submit 100000 mixed tasks with unique tags and read
 * completions as they go. Either thread of an fd may read the other's
 * completions, so completions are counted globally, per tag. At the
 * end every tag has been seen exactly once, done, with the right result,
 * and the scheduler drains to nothing.
 *
 * KGO_EXACTLY_ONCE_TASKS in the environment overrides the task count.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kgo_crc32c.h"
#include "kselftest_harness.h"

#define NFDS		4
#define NTHREADS	(2 * NFDS)
#define NTASKS		100000
#define BATCH		64
#define RBATCH		256
#define CSUM_LEN	64
#define SPIN_NS		1000
#define YIELDS		3
#define FANOUT		2
#define DEPTH		2
/*
 * The test VMs emulate the CPU with KASAN on: far slower than native,
 * and slower still beside other work (the debug kernel took 250 to
 * 430 s). So the threads judge progress, not time: no completion read
 * for STALL_NS is a stall, and they stop and say what went missing.
 * The harness's limit is only a last resort against a hang.
 */
#define TIMEOUT_S	2400
#define STALL_NS	(120 * NSEC)
#define QUIET_NS	(10 * NSEC)
#define MAX_LOGS	20

/* What the threads share. Counters are updated with __atomic builtins. */
struct run {
	int fds[NFDS];
	uint64_t ntasks;
	uint64_t moved;		/* when a completion was last counted */
	int reading;		/* threads between read(2) and counting it */
	uint8_t *seen;		/* per tag: completions read */
	uint64_t completed;	/* completions read, all fds */
	uint64_t errors;
	uint64_t logs;		/* error lines printed, up to MAX_LOGS */
	int submitting;		/* threads not done submitting */
	int stop;		/* a thread cannot go on: all stop */
};

struct worker {
	struct run *run;
	int fd;
	uint64_t first, end;	/* its tags: [first, end) */
	pthread_t thread;
};

FIXTURE(kgo) {
	struct run run;
	unsigned int nprocs;
};

FIXTURE_SETUP(kgo)
{
	const char *env = getenv("KGO_EXACTLY_ONCE_TASKS");

	/* Non-blocking: a thread never sleeps in read(2), only in poll(2). */
	for (int i = 0; i < NFDS; i++)
		KGO_OPEN(self->run.fds[i], O_NONBLOCK);
	KGO_NR_PROCS(self->run.fds[0], self->nprocs);
	self->run.ntasks = env ? strtoull(env, NULL, 0) : NTASKS;
	ASSERT_LT(0, self->run.ntasks);
	self->run.seen = calloc(self->run.ntasks, 1);
	ASSERT_NE(NULL, self->run.seen);
}

FIXTURE_TEARDOWN(kgo)
{
	for (int i = 0; i < NFDS; i++)
		if (self->run.fds[i] > 0)
			close(self->run.fds[i]);
	free(self->run.seen);
}

static uint32_t kind_of(uint64_t tag)
{
	static const uint32_t kinds[] = {
		KGO_TASK_NOP, KGO_TASK_SPIN, KGO_TASK_YIELD, KGO_TASK_SPAWN, KGO_TASK_CHECKSUM,
	};

	return kinds[tag % 5];
}

/* @buf: where @tag's CHECKSUM data goes; it need last only until SUBMIT returns. */
static struct kgo_task make_task(uint64_t tag, unsigned char *buf)
{
	struct kgo_task t = { .kind = kind_of(tag), .tag = tag };

	switch (t.kind) {
	case KGO_TASK_SPIN:
		t.args[0] = SPIN_NS;
		break;
	case KGO_TASK_YIELD:
		t.args[0] = YIELDS;
		break;
	case KGO_TASK_SPAWN:
		t.args[0] = FANOUT;
		t.args[1] = DEPTH;
		break;
	case KGO_TASK_CHECKSUM:
		fill_for_tag(buf, CSUM_LEN, tag);
		t.args[0] = (uintptr_t)buf;
		t.args[1] = CSUM_LEN;
		break;
	}
	return t;
}

/* Counts an error; prints the first MAX_LOGS (the harness's "# " style). */
static void __attribute__((format(printf, 2, 3))) fail(struct run *run, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	__atomic_fetch_add(&run->errors, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&run->logs, 1, __ATOMIC_RELAXED) >= MAX_LOGS)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# %s\n", line);
}

static void check(struct run *run, const struct kgo_completion *c)
{
	unsigned char buf[CSUM_LEN];
	uint64_t expect;

	unsigned long long tag = c->tag;

	if (tag >= run->ntasks) {
		fail(run, "unknown tag %llu (status %d)", tag, c->status);
		return;
	}
	if (__atomic_fetch_add(&run->seen[tag], 1, __ATOMIC_RELAXED))
		fail(run, "tag %llu completed again (status %d)", tag, c->status);
	__atomic_fetch_add(&run->completed, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&run->moved, now_ns(), __ATOMIC_RELAXED);

	if (c->status) {
		fail(run, "tag %llu: status %d", tag, c->status);
		return;
	}
	if (c->kind != kind_of(tag))
		fail(run, "tag %llu: kind %u", tag, c->kind);
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
		fill_for_tag(buf, CSUM_LEN, c->tag);
		expect = kgo_crc32c(buf, CSUM_LEN);
		break;
	default:
		expect = 0;
		break;
	}
	if (c->result != expect)
		fail(run, "tag %llu: result %#llx, not %#llx", tag,
		     (unsigned long long)c->result, (unsigned long long)expect);
}

/* Reads whatever is ready on the worker's fd. Returns how many, or -1 (logged). */
static int drain(struct worker *w)
{
	struct kgo_completion c[RBATCH];
	ssize_t r;

	/* Holding completions nobody else can see: lost() waits for us. */
	__atomic_fetch_add(&w->run->reading, 1, __ATOMIC_ACQ_REL);
	r = read(w->fd, c, sizeof(c));
	if (r > 0 && !(r % sizeof(c[0])))
		for (size_t i = 0; i < r / sizeof(c[0]); i++)
			check(w->run, &c[i]);
	/* Release: lost() that sees us gone sees what we counted. */
	__atomic_fetch_sub(&w->run->reading, 1, __ATOMIC_RELEASE);

	if (r < 0 && errno == EAGAIN)
		return 0;
	if (r < 0) {
		fail(w->run, "read: %s", strerror(errno));
		return -1;
	}
	if (r == 0 || r % sizeof(c[0])) {
		fail(w->run, "read returned %zd bytes", r);
		return -1;
	}
	return r / sizeof(c[0]);
}

/*
 * Everything was submitted, no fd has anything in flight, and still not
 * every completion was counted: some were lost. Without this, a lost
 * completion would hold every thread until the stall bound.
 *
 * "Nothing in flight" must be exact, with the other threads reading:
 * - WAIT with min_complete 1 returns 0 as soon as one completion is
 *   ready, and another thread may read it before @ready is filled in,
 *   so 0 with @ready 0 does not mean nothing is running. min_complete
 *   UINT32_MAX can only be met by "nothing more in flight".
 * - A thread may have read completions and not yet counted them: the
 *   fds no longer show them. Once the WAITs found every fd empty,
 *   nothing new can be read, so no reader left (run->reading 0, read
 *   with acquire after the WAITs) means every read one was counted.
 */
static bool lost(struct run *run)
{
	if (__atomic_load_n(&run->submitting, __ATOMIC_RELAXED))
		return false;
	for (int i = 0; i < NFDS; i++) {
		struct kgo_wait w = { .size = sizeof(w), .min_complete = UINT32_MAX };

		if (ioctl(run->fds[i], KGO_IOC_WAIT, &w) || w.ready)
			return false;
	}
	if (__atomic_load_n(&run->reading, __ATOMIC_ACQUIRE))
		return false;
	if (__atomic_load_n(&run->completed, __ATOMIC_RELAXED) >= run->ntasks)
		return false;
	/* Every thread may get here: the first one says it. */
	if (!__atomic_exchange_n(&run->stop, 1, __ATOMIC_RELAXED))
		fail(run, "nothing in flight, %llu of %llu completions read",
		     (unsigned long long)__atomic_load_n(&run->completed, __ATOMIC_RELAXED),
		     (unsigned long long)run->ntasks);
	return true;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct run *run = w->run;
	unsigned char bufs[BATCH][CSUM_LEN];
	struct kgo_task t[BATCH];
	uint64_t next = w->first;
	bool submitting = true;

	/*
	 * Until every fd's completions are all read: the other thread of
	 * this fd may still be submitting, or may have read ours.
	 */
	while (__atomic_load_n(&run->completed, __ATOMIC_RELAXED) < run->ntasks &&
	       !__atomic_load_n(&run->stop, __ATOMIC_RELAXED)) {
		struct pollfd p = { .fd = w->fd, .events = POLLIN };
		bool full = false;
		uint64_t moved;
		int r;

		/*
		 * Read before the clock (acquire: the clock read stays after
		 * it), or another thread's newer time would make this one's
		 * clock look to be in the past.
		 */
		moved = __atomic_load_n(&run->moved, __ATOMIC_ACQUIRE);
		if (now_ns() > moved + STALL_NS) {
			fail(run, "no completion for %llu s, %llu of %llu read",
			     STALL_NS / NSEC,
			     (unsigned long long)__atomic_load_n(&run->completed,
								 __ATOMIC_RELAXED),
			     (unsigned long long)run->ntasks);
			__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
			break;
		}
		if (next < w->end) {
			unsigned int n = w->end - next < BATCH ? w->end - next : BATCH;

			for (unsigned int i = 0; i < n; i++)
				t[i] = make_task(next + i, bufs[i]);
			r = submit(w->fd, t, n);
			if (r > 0) {
				next += r;
			} else if (r < 0 && errno == EAGAIN) {
				full = true;	/* the fd's cap: read first */
			} else {
				fail(run, "SUBMIT of tag %llu: %s", (unsigned long long)next,
				     r < 0 ? strerror(errno) : "none accepted");
				__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
				break;
			}
		}
		if (submitting && next >= w->end) {
			submitting = false;
			__atomic_fetch_sub(&run->submitting, 1, __ATOMIC_RELAXED);
		}
		r = drain(w);
		if (r < 0) {
			__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
			break;
		}
		/* Nothing to read, and nothing to submit or no room to. */
		if (!r && (!submitting || full) && poll(&p, 1, 100) == 0 &&
		    !submitting && lost(run)) {
			__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	if (submitting)
		__atomic_fetch_sub(&run->submitting, 1, __ATOMIC_RELAXED);
	return NULL;
}

TEST_F_TIMEOUT(kgo, exactly_once, TIMEOUT_S)
{
	struct run *run = &self->run;
	struct worker w[NTHREADS];
	uint64_t missing = 0, dup = 0, start = now_ns();
	struct kgo_proc_stats *ps = calloc(self->nprocs, sizeof(*ps));
	struct kgo_stats st;
	bool quiet = false;

	ASSERT_NE(NULL, ps);
	run->moved = start;
	run->submitting = NTHREADS;
	for (int i = 0; i < NTHREADS; i++) {
		w[i].run = run;
		w[i].fd = run->fds[i / 2];
		w[i].first = run->ntasks * i / NTHREADS;
		w[i].end = run->ntasks * (i + 1) / NTHREADS;
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, work, &w[i]));
	}
	for (int i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
	TH_LOG("%llu tasks in %.1f s", (unsigned long long)run->ntasks,
	       (now_ns() - start) / 1e9);

	EXPECT_EQ(0, run->errors);
	EXPECT_EQ(run->ntasks, run->completed);
	for (uint64_t tag = 0; tag < run->ntasks; tag++) {
		if (run->seen[tag] == 1)
			continue;
		if (run->seen[tag])
			dup++;
		else if (missing++ < MAX_LOGS)
			TH_LOG("tag %llu never completed", (unsigned long long)tag);
	}
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, dup);

	/* Nothing left over on any fd. */
	for (int i = 0; i < NFDS; i++) {
		struct kgo_wait wt = { .size = sizeof(wt), .min_complete = 1 };
		struct kgo_completion c;

		EXPECT_EQ(0, ioctl(run->fds[i], KGO_IOC_WAIT, &wt)) TH_LOG("fd %d", i);
		EXPECT_EQ(0, wt.ready) TH_LOG("fd %d", i);
		EXPECT_EQ(-1, read(run->fds[i], &c, sizeof(c))) TH_LOG("fd %d", i);
		EXPECT_EQ(EAGAIN, errno) TH_LOG("fd %d", i);
	}

	/*
	 * And the scheduler drains: every goroutine, including the SPAWN
	 * trees', created and finished.
	 */
	for (uint64_t end = now_ns() + QUIET_NS; !quiet && now_ns() < end; ) {
		uint64_t created, finished = 0;
		bool empty = true;

		st = (struct kgo_stats){
			.size = sizeof(st),
			.procs = (uintptr_t)ps,
			.procs_max = self->nprocs,
			.proc_size = sizeof(*ps),
		};
		ASSERT_EQ(0, ioctl(run->fds[0], KGO_IOC_STATS, &st));
		created = st.created_outside;
		for (unsigned int i = 0; i < self->nprocs; i++) {
			created += ps[i].gcreated;
			finished += ps[i].gfinished;
			empty &= !ps[i].runq_len;
		}
		quiet = empty && !st.goroutines && !st.global_runq && created == finished;
		if (!quiet)
			usleep(10000);
	}
	EXPECT_TRUE(quiet) TH_LOG("goroutines %llu, global_runq %llu",
				  (unsigned long long)st.goroutines,
				  (unsigned long long)st.global_runq);
	free(ps);
}

TEST_HARNESS_MAIN
