// SPDX-License-Identifier: GPL-2.0
/*
 * One session, several processes: an fd shared by fork() or passed with
 * SCM_RIGHTS is one session, whose completions go to whoever reads
 * first. Across all readers, every accepted task completes exactly once:
 * the union of what they read is the set of accepted tags, with no
 * duplicate, however the reads interleave.
 *
 *  - fork_both_read: parent and child submit on the same fd and both
 *    read, each any completion;
 *  - fork_child_exits: the child submits (tasks still running) and exits
 *    without reading; the parent reads its completions too;
 *  - scm_rights: a process submits, sends the fd over a unix socket,
 *    closes its copy and exits before the receiver even takes it; the
 *    receiver reads every completion;
 *  - scm_dropped: the fd, with tasks in flight, is sent into sockets
 *    nobody reads, in a reference cycle only the unix garbage collector
 *    frees: the session is closed from there, and the module must end up
 *    idle and working.
 *
 * The book of tags is in shared memory; KGO_SHARE_TASKS sets the tasks
 * per process (default 10000).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kgo_stress.h"
#include "kselftest_harness.h"

#define DEFAULT_TASKS	10000
#define BATCH		64
#define DATA_LEN	(64 << 10)
#define BOOK_CAP	(1 << 20)
#define TIMEOUT_S	300
#define DEADLINE_NS	((TIMEOUT_S - 60) * NSEC)
#define ALLOWED		(ST_OK | ST_NOMEM | ST_AGAIN)	/* SPAWN may meet a cap */

/* What the processes share, in MAP_SHARED memory. */
struct shared {
	int submitting;		/* processes not done submitting */
	int stop;
	uint64_t read_by[2];	/* completions read by parent [0] and child [1] */
	uint64_t submitted_by[2];
	uint64_t refused;
	unsigned char data[DATA_LEN];	/* CHECKSUM data */
};

FIXTURE(share) {
	struct shared *sh;
	struct book *book;
	uint64_t ntasks;
	struct rng rng;
	pid_t child;
};

FIXTURE_SETUP(share)
{
	const char *env = getenv("KGO_SHARE_TASKS");

	self->ntasks = env ? strtoull(env, NULL, 0) : DEFAULT_TASKS;
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	rng_seed(&self->rng, seed_from_env("KGO_SHARE_SEED"));
	for (size_t i = 0; i < DATA_LEN; i++)
		self->sh->data[i] = rng_next(&self->rng);
	self->book = book_init(BOOK_CAP, rng_next(&self->rng), true);
	ASSERT_NE(NULL, self->book);
	self->book->data = self->sh->data;
}

FIXTURE_TEARDOWN(share)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	book_free(self->book);
	munmap(self->sh, sizeof(*self->sh));
}

/*
 * A cheap task of a random kind into @t, registered in the book. @slow:
 * a SLEEP of 20..100 ms in one task of 8, so that some are still in
 * flight when a process exits or passes the fd on.
 */
static void make_task(struct book *b, struct rng *r, struct kgo_task *t, int who, bool slow)
{
	uint64_t expect = 0;
	uint32_t aux = 0;

	*t = (struct kgo_task){ .kind = 1 + rng_below(r, 6) };	/* NOP..SLEEP */
	if (slow && rng_below(r, 8) == 0)
		t->kind = KGO_TASK_SLEEP;
	switch (t->kind) {
	case KGO_TASK_SPIN:
		t->args[0] = expect = rng_below(r, 2001);
		break;
	case KGO_TASK_YIELD:
		t->args[0] = expect = rng_below(r, 4);
		break;
	case KGO_TASK_SPAWN:
		t->args[0] = 2;
		t->args[1] = 2;
		expect = 7;
		break;
	case KGO_TASK_CHECKSUM: {
		uint64_t len = rng_below(r, 4097), off = rng_below(r, DATA_LEN - len + 1);

		t->args[0] = (uintptr_t)b->data + off;
		t->args[1] = aux = len;
		expect = off;
		break;
	}
	case KGO_TASK_SLEEP:
		t->args[0] = expect = slow ? (20 + rng_below(r, 81)) * MSEC :
					     rng_below(r, 200 * USEC);
		break;
	}
	t->tag = book_new(b, t->kind, who, expect, aux);
}

/*
 * Submits @t[0..n) on @fd and books the outcome. Returns how many were
 * accepted, or -errno (EAGAIN: a cap, try again after reading).
 */
static int submit_booked(struct book *b, struct shared *sh, int fd, struct kgo_task *t,
			 unsigned int n)
{
	int r = submit(fd, t, n);

	if (r < 0)
		r = -errno;
	for (int i = 0; i < (int)n; i++) {
		if (i < r)
			book_accept(b, t[i].tag);
		else
			book_refuse(b, t[i].tag);
	}
	if (r < (int)n)
		__atomic_fetch_add(&sh->refused, n - (r > 0 ? r : 0), __ATOMIC_RELAXED);
	return r;
}

/*
 * Submits @ntasks on @fd in batches, reading completions (any process's)
 * as it goes, until every process is done submitting and every accepted
 * task was read. Returns 0, or an errno. Runs in the parent and in the
 * child alike: no harness macros.
 */
static int worker(struct book *b, struct shared *sh, int fd, int who, uint64_t ntasks,
		  uint64_t seed, bool slow)
{
	uint64_t deadline = now_ns() + DEADLINE_NS, sent = 0;
	struct kgo_task t[BATCH];
	bool submitting = true;
	struct rng r;

	rng_seed(&r, seed);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		bool full = false;
		int n;

		if (sent < ntasks) {
			unsigned int k = ntasks - sent < BATCH ? ntasks - sent : BATCH;

			for (unsigned int i = 0; i < k; i++)
				make_task(b, &r, &t[i], who, slow);
			n = submit_booked(b, sh, fd, t, k);
			if (n > 0) {
				sent += n;
				__atomic_fetch_add(&sh->submitted_by[who], n, __ATOMIC_RELAXED);
			} else if (n == -EAGAIN || n == -ENOMEM) {
				full = true;
			} else {
				book_fail(b, "process %d: SUBMIT: %s", who, strerror(-n));
				__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
				return -n;
			}
		}
		if (submitting && sent >= ntasks) {
			submitting = false;
			__atomic_fetch_sub(&sh->submitting, 1, __ATOMIC_RELAXED);
		}
		n = book_read(b, fd, ~0U, ALLOWED, 256);
		if (n < 0) {
			book_fail(b, "process %d: read: %s", who, strerror(-n));
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
			return -n;
		}
		__atomic_fetch_add(&sh->read_by[who], n, __ATOMIC_RELAXED);
		if (!__atomic_load_n(&sh->submitting, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&b->done, __ATOMIC_RELAXED) >=
		    __atomic_load_n(&b->accepted, __ATOMIC_RELAXED))
			break;
		if (!n && (!submitting || full))
			poll(&p, 1, 10);
		if (now_ns() > deadline) {
			book_fail(b, "process %d: timed out: %llu of %llu read", who,
				  (unsigned long long)b->done, (unsigned long long)b->accepted);
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
			return ETIMEDOUT;
		}
	}
	if (submitting)
		__atomic_fetch_sub(&sh->submitting, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Nothing in flight on @fd and nothing to read. */
static bool fd_idle(int fd)
{
	struct kgo_wait w = { .size = sizeof(w), .min_complete = ~0U };
	struct kgo_completion c;

	return !ioctl(fd, KGO_IOC_WAIT, &w) && !w.ready &&
	       read(fd, &c, sizeof(c)) < 0 && errno == EAGAIN;
}

TEST_F_TIMEOUT(share, fork_both_read, TIMEOUT_S)
{
	struct book *b = self->book;
	struct shared *sh = self->sh;
	uint64_t start = now_ns(), seed = rng_next(&self->rng);
	int fd, status, err;

	fd = open(KGO_DEVICE_PATH, O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	sh->submitting = 2;
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child)
		_exit(worker(b, sh, fd, 1, self->ntasks, seed + 1, false));
	err = worker(b, sh, fd, 0, self->ntasks, seed, false);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	EXPECT_EQ(0, err);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child status %#x", status);

	TH_LOG("%.1f s: parent submitted %llu, read %llu; child submitted %llu, read %llu; %llu accepted, %llu read, %llu refused",
	       (now_ns() - start) / 1e9,
	       (unsigned long long)sh->submitted_by[0], (unsigned long long)sh->read_by[0],
	       (unsigned long long)sh->submitted_by[1], (unsigned long long)sh->read_by[1],
	       (unsigned long long)b->accepted, (unsigned long long)b->done,
	       (unsigned long long)sh->refused);
	EXPECT_EQ(0, b->errors);
	EXPECT_EQ(0, book_missing(b));
	EXPECT_EQ(2 * self->ntasks, b->accepted);
	EXPECT_EQ(b->accepted, sh->read_by[0] + sh->read_by[1]);
	EXPECT_EQ(b->accepted, b->done);
	EXPECT_TRUE(fd_idle(fd));
	close(fd);
}

TEST_F_TIMEOUT(share, fork_child_exits, TIMEOUT_S)
{
	struct book *b = self->book;
	struct shared *sh = self->sh;
	uint64_t start = now_ns(), seed = rng_next(&self->rng);
	int fd, status, err;
	long n;

	fd = open(KGO_DEVICE_PATH, O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		/* Submit everything, some of it slow, and leave unread. */
		struct kgo_task t[BATCH];
		struct rng r;
		uint64_t sent = 0;

		rng_seed(&r, seed + 1);
		while (sent < self->ntasks) {
			unsigned int k = self->ntasks - sent < BATCH ? self->ntasks - sent : BATCH;
			int m;

			for (unsigned int i = 0; i < k; i++)
				make_task(b, &r, &t[i], 1, true);
			m = submit_booked(b, sh, fd, t, k);
			if (m <= 0)
				_exit(m == -EAGAIN ? 2 : 1);
			sent += m;
			sh->submitted_by[1] += m;
		}
		_exit(0);
	}
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child status %#x", status);

	/* The child is gone; its tasks are the parent's to read, with its own. */
	sh->submitting = 1;
	err = worker(b, sh, fd, 0, self->ntasks, seed, true);
	EXPECT_EQ(0, err);
	n = book_drain(b, fd, ~0U, ALLOWED, 60 * NSEC);
	EXPECT_LE(0, n);
	if (n > 0)
		sh->read_by[0] += n;

	TH_LOG("%.1f s: child submitted %llu and exited; parent submitted %llu; parent read %llu of %llu accepted",
	       (now_ns() - start) / 1e9, (unsigned long long)sh->submitted_by[1],
	       (unsigned long long)sh->submitted_by[0], (unsigned long long)sh->read_by[0],
	       (unsigned long long)b->accepted);
	EXPECT_EQ(0, b->errors);
	EXPECT_EQ(0, book_missing(b));
	EXPECT_EQ(2 * self->ntasks, b->accepted);
	EXPECT_EQ(b->accepted, sh->read_by[0]);
	EXPECT_TRUE(fd_idle(fd));
	close(fd);
}

/* Sends @fd (and @extra, if >= 0) over @sock with SCM_RIGHTS. */
static int send_fds(int sock, int fd, int extra)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	char byte = 'k';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = CMSG_SPACE((extra >= 0 ? 2 : 1) * sizeof(int)),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	int fds[2] = { fd, extra };

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((extra >= 0 ? 2 : 1) * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, (extra >= 0 ? 2 : 1) * sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * The child's part of the SCM tests: open, submit @n tasks (some slow)
 * and book them. Returns the fd, or -1.
 */
static int open_and_submit(struct book *b, struct shared *sh, uint64_t n, uint64_t seed)
{
	struct kgo_task t[BATCH];
	uint64_t sent = 0;
	struct rng r;
	int fd = open(KGO_DEVICE_PATH, O_RDWR | O_NONBLOCK);

	if (fd < 0)
		return -1;
	rng_seed(&r, seed);
	while (sent < n) {
		unsigned int k = n - sent < BATCH ? n - sent : BATCH;
		int m;

		for (unsigned int i = 0; i < k; i++)
			make_task(b, &r, &t[i], 1, true);
		m = submit_booked(b, sh, fd, t, k);
		if (m <= 0)
			return -1;
		sent += m;
		sh->submitted_by[1] += m;
	}
	return fd;
}

TEST_F_TIMEOUT(share, scm_rights, TIMEOUT_S)
{
	struct book *b = self->book;
	struct shared *sh = self->sh;
	uint64_t start = now_ns(), seed = rng_next(&self->rng), sent_ns;
	int sv[2], status, fd;
	long n;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		if (errno == EAFNOSUPPORT || errno == ENOSYS)
			SKIP(return, "no unix sockets in this kernel");
		ASSERT_TRUE(false) TH_LOG("socketpair: %s", strerror(errno));
	}
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		int kfd;

		close(sv[1]);
		kfd = open_and_submit(b, sh, self->ntasks, seed);
		if (kfd < 0)
			_exit(1);
		if (send_fds(sv[0], kfd, -1))
			_exit(2);
		/* Our copy goes: the one in the socket is all that is left. */
		close(kfd);
		close(sv[0]);
		_exit(0);
	}
	close(sv[0]);
	/* The sender is gone before the fd is taken out of the socket. */
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("sender status %#x", status);
	sent_ns = now_ns();
	fd = recv_fd(sv[1]);
	ASSERT_LE(0, fd) TH_LOG("recvmsg: %s", strerror(errno));
	close(sv[1]);

	n = book_drain(b, fd, ~0U, ALLOWED, 120 * NSEC);
	EXPECT_LE(0, n) TH_LOG("drain: %s", strerror(-n));
	TH_LOG("sender submitted %llu tasks in %.1f s and exited; receiver read %ld in %.1f s",
	       (unsigned long long)sh->submitted_by[1], (sent_ns - start) / 1e9, n,
	       (now_ns() - sent_ns) / 1e9);
	EXPECT_EQ(0, b->errors);
	EXPECT_EQ(0, book_missing(b));
	EXPECT_EQ(self->ntasks, b->accepted);
	EXPECT_EQ(b->accepted, n);
	EXPECT_TRUE(fd_idle(fd));
	close(fd);
}

TEST_F_TIMEOUT(share, scm_dropped, TIMEOUT_S)
{
	struct book *b = self->book;
	struct shared *sh = self->sh;
	uint64_t seed = rng_next(&self->rng), t0;
	int status, mon, err;
	long long g, refs;

	{
		int s[2];

		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, s)) {
			if (errno == EAFNOSUPPORT || errno == ENOSYS)
				SKIP(return, "no unix sockets in this kernel");
			ASSERT_TRUE(false) TH_LOG("socketpair: %s", strerror(errno));
		}
		close(s[0]);
		close(s[1]);
	}
	mon = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, mon) TH_LOG("open: %s", strerror(errno));
	/* Each session holds a module reference: they must all come back. */
	refs = read_ll("/sys/module/kgo/refcnt");
	ASSERT_LT(0, refs);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		int a[2], c[2], kfd;

		close(mon);
		kfd = open_and_submit(b, sh, self->ntasks, seed);
		if (kfd < 0)
			_exit(1);
		/*
		 * Pair a: the kgo fd and a[0] itself in flight to a[1]; pair c:
		 * a plain drop, the kgo fd queued to a socket closed unread.
		 * Closing everything leaves a cycle (a[0] in its peer's queue)
		 * that only the unix garbage collector can free.
		 */
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, a) || socketpair(AF_UNIX, SOCK_DGRAM, 0, c))
			_exit(2);
		if (send_fds(a[0], kfd, a[0]) || send_fds(a[1], a[1], -1) ||
		    send_fds(c[0], kfd, -1))
			_exit(3);
		close(kfd);
		close(c[0]);
		close(c[1]);
		close(a[0]);
		close(a[1]);
		_exit(0);
	}
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child status %#x", status);

	/* Another unix socket closed: runs the collector if it has not yet. */
	{
		int s[2];

		if (!socketpair(AF_UNIX, SOCK_DGRAM, 0, s)) {
			send_fds(s[0], s[1], -1);
			close(s[0]);
			close(s[1]);
		}
	}
	t0 = now_ns();
	/* Its goroutines finish (SLEEPs of 100 ms at most): the scheduler drains. */
	g = kgo_wait_quiet(mon, 30 * NSEC);
	TH_LOG("%llu tasks accepted on an fd dropped in sockets; %lld goroutines left after %.2f s",
	       (unsigned long long)sh->submitted_by[1], g, (now_ns() - t0) / 1e9);
	EXPECT_EQ(0, g);
	EXPECT_EQ(0, b->errors);
	while (read_ll("/sys/module/kgo/refcnt") != refs && now_ns() - t0 < 30 * NSEC)
		usleep(10000);
	EXPECT_EQ(refs, read_ll("/sys/module/kgo/refcnt")) {
		TH_LOG("the dropped session still holds the module");
	}
	close(mon);
	err = kgo_nop_works(30 * NSEC);
	EXPECT_EQ(0, err) TH_LOG("NOP on a fresh fd: %s", strerror(err));
}

TEST_HARNESS_MAIN
