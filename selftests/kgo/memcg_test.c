// SPDX-License-Identifier: GPL-2.0
/*
 * kgo's memory is charged to the memory cgroup of the task's submitter.
 *
 * A child process in a cgroup v2 with memory.max = 48M opens /dev/kgo
 * and submits 8192 SLEEP tasks of 10 s (their goroutines' stacks, one
 * per running goroutine, need far more than 48M), then CHECKSUM tasks
 * with 1 MiB buffers (more than 48M of them). What those tasks cause,
 * job structs, buffers, goroutine structs and stacks, even when kgo
 * allocates them later on its own kthreads, must be charged to that
 * cgroup, and a charge that fails must become -ENOMEM or -EAGAIN for
 * that user's tasks, never an OOM kill outside the cgroup.
 *
 *  (a) while the goroutines sleep, the cgroup's memory.current grew over
 *      its baseline by at least half of (goroutines running x stack size):
 *      the stacks are charged to it;
 *  (b) the child's SUBMITs fail, or its tasks complete with -ENOMEM,
 *      rather than the cgroup using more than memory.max;
 *  (c) a bystander outside the cgroup survives, and no OOM kill happened
 *      outside the cgroup (/proc/vmstat oom_kill against the cgroup's
 *      memory.events);
 *  (d) every task the child had accepted completes exactly once: the
 *      child cancels what has not started and reads everything.
 *
 * Mounts cgroup2 on /sys/fs/cgroup if nothing is mounted there, enables
 * the memory controller, and undoes both at the end. Skips only when the
 * kernel has no cgroup2 or no memory controller.
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kgo_stress.h"
#include "kselftest_harness.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define CG		CG_ROOT "/kgo-memcg-test"
#define CGROUP2_MAGIC	0x63677270
#define MEM_MAX		(48ULL << 20)
#define NSLEEP		8192
#define SLEEP_NS	(10 * NSEC)
#define NCSUM		64
#define CSUM_LEN	(1 << 20)
#define BATCH		512
#define BYSTANDER_MB	32
#define BOOK_CAP	(1 << 16)
#define ALLOWED		(ST_OK | ST_CANCELED | ST_NOMEM | ST_AGAIN)

/* Steps of the child, told to the parent over a pipe; the parent answers "go". */
enum { S_IN = 1, S_SLEEPERS, S_CSUMS, S_DONE };

struct shared {
	uint64_t sleep_ok, sleep_refused, csum_ok, csum_refused;
	uint64_t refused_enomem, refused_eagain, refused_other;
	int other_errno;
	uint64_t cancelled, drained;
	int drain_err;
};

FIXTURE(memcg) {
	bool mounted, enabled, made;
	char skip[128];
	pid_t child, bystander;
	struct shared *sh;
	struct book *book;
	int mon;
};

static int cg_write(const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), CG "/%s", file);
	return write_str(path, val);
}

static long long cg_read(const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), CG "/%s", file);
	return read_ll(path);
}

static bool has_word(const char *path, const char *word)
{
	char buf[512], *tok, *save;
	FILE *f = fopen(path, "r");
	bool found = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		for (tok = strtok_r(buf, "\n\t ", &save); tok; tok = strtok_r(NULL, "\n\t ", &save))
			found |= !strcmp(tok, word);
	fclose(f);
	return found;
}

FIXTURE_SETUP(memcg)
{
	struct statfs sfs;
	int err;

	self->mon = -1;
	/*
	 * The 6.1 harness runs the test after a SKIP in setup: setup notes
	 * why, and the test skips.
	 */
	if (statfs(CG_ROOT, &sfs) || sfs.f_type != CGROUP2_MAGIC) {
		if (mount("none", CG_ROOT, "cgroup2", 0, NULL)) {
			if (errno == ENODEV || errno == ENOENT) {
				snprintf(self->skip, sizeof(self->skip), "no cgroup2 (mount: %s)",
					 strerror(errno));
				return;
			}
			ASSERT_TRUE(false) TH_LOG("mount cgroup2 on " CG_ROOT ": %s",
						  strerror(errno));
		}
		self->mounted = true;
	}
	if (!has_word(CG_ROOT "/cgroup.controllers", "memory")) {
		snprintf(self->skip, sizeof(self->skip),
			 "no memory controller in " CG_ROOT "/cgroup.controllers");
		return;
	}
	if (!has_word(CG_ROOT "/cgroup.subtree_control", "memory")) {
		err = write_str(CG_ROOT "/cgroup.subtree_control", "+memory");
		ASSERT_EQ(0, err) TH_LOG("+memory: %s", strerror(err));
		self->enabled = true;
	}
	rmdir(CG);	/* a leftover of an earlier run */
	ASSERT_EQ(0, mkdir(CG, 0755)) TH_LOG("mkdir " CG ": %s", strerror(errno));
	self->made = true;
	ASSERT_EQ(0, cg_write("memory.max", "50331648"));
	cg_write("memory.swap.max", "0");	/* absent without swap accounting */

	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	self->book = book_init(BOOK_CAP, now_ns() << 32, true);
	ASSERT_NE(NULL, self->book);
	/*
	 * Touched here, so that the parent's cgroup pays for the book's
	 * pages: the child writing them first in its full cgroup would be
	 * a fault of its own there, not kgo's.
	 */
	memset(self->book->t, 0, BOOK_CAP * sizeof(*self->book->t));
	self->book->cancel_running = true;	/* the child's last cancel */
	KGO_OPEN(self->mon, 0);
}

FIXTURE_TEARDOWN(memcg)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->bystander > 0) {
		kill(self->bystander, SIGKILL);
		waitpid(self->bystander, NULL, 0);
	}
	if (self->mon >= 0) {
		/* The sleepers of a killed child run on: let the next tests find kgo idle. */
		kgo_wait_quiet(self->mon, 20 * NSEC);
		close(self->mon);
	}
	if (self->made) {
		/* The group empties once its exited tasks are reaped. */
		for (int i = 0; i < 100 && rmdir(CG) && errno == EBUSY; i++)
			usleep(20000);
	}
	if (self->enabled)
		write_str(CG_ROOT "/cgroup.subtree_control", "-memory");
	if (self->mounted)
		umount2(CG_ROOT, MNT_DETACH);
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
	book_free(self->book);
}

static void step(int wfd, int rfd, char s)
{
	char go;

	if (write(wfd, &s, 1) != 1 || read(rfd, &go, 1) != 1)
		_exit(10 + s);
}

/* Submits @n copies of @proto (fresh tags) in batches; books and counts them. */
static void child_submit(struct book *b, struct shared *sh, int fd, struct kgo_task proto,
			 uint64_t expect, uint32_t aux, unsigned int n, unsigned int batch,
			 uint64_t *ok, uint64_t *refused)
{
	struct kgo_task t[BATCH];

	for (unsigned int done = 0; done < n; ) {
		unsigned int k = n - done < batch ? n - done : batch;
		int r;

		for (unsigned int i = 0; i < k; i++) {
			t[i] = proto;
			t[i].tag = book_new(b, proto.kind, 1, expect, aux);
		}
		r = submit(fd, t, k);
		if (r < 0) {
			if (errno == ENOMEM)
				sh->refused_enomem++;
			else if (errno == EAGAIN)
				sh->refused_eagain++;
			else {
				sh->refused_other++;
				sh->other_errno = errno;
			}
		}
		for (unsigned int i = 0; i < k; i++) {
			if ((int)i < r)
				book_accept(b, t[i].tag);
			else
				book_refuse(b, t[i].tag);
		}
		*ok += r > 0 ? r : 0;
		*refused += k - (r > 0 ? r : 0);
		done += k;
	}
}

/* The child, in the cgroup. Exits 0 when it read everything it had accepted. */
static void child(struct book *b, struct shared *sh, int wfd, int rfd)
{
	struct kgo_task proto;
	struct kgo_cancel c = {
		.size = sizeof(c), .flags = KGO_CANCEL_ALL | KGO_CANCEL_RUNNING,
	};
	unsigned char *buf;
	long n;
	int fd;

	if (cg_write("cgroup.procs", "0"))
		_exit(2);
	fd = open(KGO_DEVICE_PATH, O_RDWR | O_NONBLOCK);
	if (fd < 0)
		_exit(3);
	/*
	 * The CHECKSUM data first: once kgo's goroutines fill the cgroup,
	 * a page fault of the child's own would call in the cgroup's OOM
	 * killer, which is the kernel's doing, not kgo's.
	 */
	buf = malloc(CSUM_LEN);
	if (!buf)
		_exit(4);
	for (size_t i = 0; i < CSUM_LEN; i++)
		buf[i] = i * 7 + (i >> 12);
	b->data = buf;	/* the book's CHECKSUM data, at offset 0 */
	step(wfd, rfd, S_IN);

	proto = (struct kgo_task){ .kind = KGO_TASK_SLEEP, .args = { SLEEP_NS } };
	child_submit(b, sh, fd, proto, SLEEP_NS, 0, NSLEEP, BATCH, &sh->sleep_ok,
		     &sh->sleep_refused);
	step(wfd, rfd, S_SLEEPERS);

	proto = (struct kgo_task){
		.kind = KGO_TASK_CHECKSUM, .args = { (uintptr_t)buf, CSUM_LEN },
	};
	child_submit(b, sh, fd, proto, 0, CSUM_LEN, NCSUM, 1, &sh->csum_ok, &sh->csum_refused);
	step(wfd, rfd, S_CSUMS);

	if (ioctl(fd, KGO_IOC_CANCEL, &c))
		_exit(5);
	sh->cancelled = c.cancelled;
	n = book_drain(b, fd, 1, ALLOWED, 60 * NSEC);
	if (n < 0) {
		sh->drain_err = -n;
		_exit(6);
	}
	sh->drained = n;
	close(fd);
	_exit(0);
}

/* Waits for the child's step @s; false if it died or said something else. */
static bool wait_step(int rfd, char s)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	char got;

	return poll(&p, 1, 120000) == 1 && read(rfd, &got, 1) == 1 && got == s;
}

static void bystander(int wfd)
{
	size_t len = (size_t)BYSTANDER_MB << 20;
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

TEST_F_TIMEOUT(memcg, charged_to_submitter, 300)
{
	struct kgo_info info = { .size = sizeof(info) };
	long long base, cur, peak_cur = 0, sleep_peak = 0, running = 0, oom_before, oom_after;
	long long cg_oom, cg_max_events = -1, after_csum = -1, peak_file = -1;
	int to_child[2], from_child[2], by[2], status, cstatus;
	struct book *b = self->book;
	struct shared *sh = self->sh;
	const char *died = NULL;
	uint64_t t0;
	char go = 'g', c;

	if (self->skip[0])
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->mon, KGO_IOC_GET_INFO, &info));
	oom_before = oom_kills();
	ASSERT_LE(0, oom_before);

	ASSERT_EQ(0, pipe(by));
	self->bystander = fork();
	ASSERT_LE(0, self->bystander);
	if (!self->bystander) {
		close(by[0]);
		bystander(by[1]);
	}
	close(by[1]);
	ASSERT_EQ(1, read(by[0], &c, 1));
	close(by[0]);

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(from_child));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(to_child[1]);
		close(from_child[0]);
		child(b, sh, from_child[1], to_child[0]);
	}
	close(to_child[0]);
	close(from_child[1]);

	ASSERT_TRUE(wait_step(from_child[0], S_IN)) TH_LOG("the child did not get in the cgroup");
	base = cg_read("memory.current");
	ASSERT_LT(0, base);
	sleep_peak = base;
	ASSERT_EQ(1, write(to_child[1], &go, 1));

	/*
	 * From here the child may die (the cgroup's OOM killer): then say at
	 * which step, and judge what there is.
	 */
	if (!wait_step(from_child[0], S_SLEEPERS)) {
		died = "submitting the sleepers";
		goto judge;
	}
	/* The sleepers: let them start, watching the cgroup. */
	t0 = now_ns();
	while (now_ns() - t0 < 3 * NSEC) {
		long long r = kgo_goroutines_started(self->mon);

		cur = cg_read("memory.current");
		peak_cur = cur > peak_cur ? cur : peak_cur;
		running = r > running ? r : running;
		if (running >= (long long)sh->sleep_ok && now_ns() - t0 > NSEC)
			break;
		usleep(50000);
	}
	cur = cg_read("memory.current");
	peak_cur = cur > peak_cur ? cur : peak_cur;
	sleep_peak = peak_cur;
	TH_LOG("sleepers: %llu accepted, %llu refused; %lld goroutines running (%lld MiB of %u KiB stacks); memory.current %lld KiB at start, %lld KiB now, peak seen %lld KiB",
	       (unsigned long long)sh->sleep_ok, (unsigned long long)sh->sleep_refused,
	       running, running * info.stack_size >> 20, info.stack_size >> 10,
	       base >> 10, cur >> 10, peak_cur >> 10);
	ASSERT_EQ(1, write(to_child[1], &go, 1));

	/* The buffers. */
	if (!wait_step(from_child[0], S_CSUMS))
		died = "submitting the CHECKSUM tasks";
	after_csum = cg_read("memory.current");
	peak_cur = after_csum > peak_cur ? after_csum : peak_cur;
	peak_file = cg_read("memory.peak");	/* 5.19 and later */
	cg_max_events = read_keyed(CG "/memory.events", "max");
	cg_oom = read_keyed(CG "/memory.events", "oom_kill");
	TH_LOG("checksums: %llu accepted, %llu refused (SUBMIT errors: ENOMEM %llu, EAGAIN %llu, other %llu); memory.current %lld KiB, memory.peak %lld KiB, max %llu KiB; memory.events max %lld oom_kill %lld",
	       (unsigned long long)sh->csum_ok, (unsigned long long)sh->csum_refused,
	       (unsigned long long)sh->refused_enomem, (unsigned long long)sh->refused_eagain,
	       (unsigned long long)sh->refused_other, after_csum >> 10,
	       peak_file >> 10, (unsigned long long)(MEM_MAX >> 10), cg_max_events, cg_oom);
	if (!died && write(to_child[1], &go, 1) != 1)
		died = "reading its completions";

judge:
	ASSERT_EQ(self->child, waitpid(self->child, &cstatus, 0));
	self->child = 0;
	oom_after = oom_kills();
	cg_oom = read_keyed(CG "/memory.events", "oom_kill");
	if (peak_file < 0)
		peak_file = cg_read("memory.peak");
	TH_LOG("child: exit status %#x; cancelled %llu, read %llu of %llu accepted: ok %llu, cancelled %llu, ENOMEM %llu, EAGAIN %llu; oom_kill %lld -> %lld, in the cgroup %lld",
	       cstatus, (unsigned long long)sh->cancelled, (unsigned long long)sh->drained,
	       (unsigned long long)b->accepted, (unsigned long long)b->status[0],
	       (unsigned long long)b->status[1], (unsigned long long)b->status[2],
	       (unsigned long long)b->status[3], oom_before, oom_after, cg_oom);

	/* (a) the stacks of running goroutines are charged to the cgroup. */
	EXPECT_LE((running * info.stack_size) / 2, sleep_peak - base) {
		TH_LOG("(a) memory.current grew %lld KiB with %lld goroutines running: their %lld KiB of stacks are not charged to the submitter's cgroup",
		       (sleep_peak - base) >> 10, running, (running * info.stack_size) >> 10);
	}
	/* (b) failures, not usage past memory.max. */
	EXPECT_LT(0, sh->sleep_refused + sh->csum_refused + b->status[2] + b->status[3]) {
		TH_LOG("(b) nothing the child asked for was refused");
	}
	EXPECT_EQ(0, sh->refused_other) {
		TH_LOG("(b) SUBMIT failed with %s", strerror(sh->other_errno));
	}
	EXPECT_GE((long long)MEM_MAX, peak_file >= 0 ? peak_file : peak_cur) {
		TH_LOG("(b) the cgroup used more than its memory.max");
	}
	/* (c) no OOM kill outside the cgroup; the bystander lives. */
	EXPECT_EQ(oom_before + (cg_oom > 0 ? cg_oom : 0), oom_after);
	EXPECT_EQ(0, kill(self->bystander, 0));
	EXPECT_EQ(0, waitpid(self->bystander, &status, WNOHANG));
	/* (d) the child lived, and read everything it had accepted, once. */
	EXPECT_TRUE(WIFEXITED(cstatus) && !WEXITSTATUS(cstatus)) {
		bool sig = WIFSIGNALED(cstatus);

		TH_LOG("(d) the child %s %d%s%s", sig ? "was killed by signal" : "exited with",
		       sig ? WTERMSIG(cstatus) : WEXITSTATUS(cstatus),
		       died ? " while " : "", died ?: "");
	}
	EXPECT_EQ(0, cg_oom) TH_LOG("(d) the cgroup's OOM killer killed the submitter");
	if (WIFEXITED(cstatus) && !WEXITSTATUS(cstatus)) {
		EXPECT_EQ(0, b->errors);
		EXPECT_EQ(0, book_missing(b));
		EXPECT_EQ(b->accepted, b->done);
	}
}

/*
 * An unprivileged user in a cgroup with memory.max = 64M makes rings,
 * then goroutines (SLEEP tasks), until kgo refuses each: -EAGAIN (a
 * per-user cap) or -ENOMEM (the budget or the cgroup), never an OOM
 * kill. Meanwhile memory.current stays under the limit, and a root
 * process outside the cgroup still gets its NOPs done.
 */
#define FILL_MAX	(64ULL * 1024 * 1024)
#define FILL_FDS	256
#define FILL_BATCH	256
#define FILL_TASKS	(1 << 20)
#define NOBODY		65534

/*
 * Shared with the child, and touched by the parent first: the child's
 * cgroup is full, and a page it faulted in, or a pipe's buffer it wrote,
 * would be its own OOM kill, not kgo's doing.
 */
struct fill {
	int ring_err, g_err, setup_err;
	uint64_t rings, submitted;
	int ready, go;		/* __atomic: the other process writes it */
};

/* Returns a refusal's errno found among what completed on @fd, else 0. */
static int fill_refused(int fd)
{
	struct kgo_completion c[64];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;
	int i;

	while (poll(&p, 1, 0) == 1) {
		r = read(fd, c, sizeof(c));
		if (r <= 0)
			return 0;
		for (i = 0; i < r / (ssize_t)sizeof(c[0]); i++)
			if (c[i].status == -ENOMEM || c[i].status == -EAGAIN)
				return -c[i].status;
	}
	return 0;
}

static void filler(struct fill *sh)
{
	struct kgo_task t[FILL_BATCH];
	int fd, i, n;

	if (write_str(CG "/cgroup.procs", "0") || setgroups(0, NULL) ||
	    setgid(NOBODY) || setuid(NOBODY)) {
		sh->setup_err = errno ?: EINVAL;
		_exit(2);
	}
	for (i = 0; i < FILL_FDS; i++) {
		struct kgo_ring_params p = {
			.size = sizeof(p), .sq_entries = 64, .cq_entries = 4096,
		};

		fd = open(KGO_DEVICE_PATH, O_RDWR);
		if (fd < 0 || ioctl(fd, KGO_IOC_RING_SETUP, &p)) {
			sh->ring_err = errno;
			if (fd >= 0)
				close(fd);
			break;
		}
		sh->rings++;
	}
	fd = open(KGO_DEVICE_PATH, O_RDWR);
	if (fd < 0) {
		sh->setup_err = errno;
		_exit(3);
	}
	for (i = 0; i < FILL_BATCH; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_SLEEP, .args = { KGO_SLEEP_MAX_NS } };
	while (sh->submitted < FILL_TASKS) {
		n = submit(fd, t, FILL_BATCH);
		if (n < 0) {
			sh->g_err = errno;
			break;
		}
		sh->submitted += n;
		sh->g_err = fill_refused(fd);
		if (sh->g_err)
			break;
	}
	/* Holding all of it while the parent looks. */
	__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		usleep(10000);
	_exit(0);
}

TEST_F_TIMEOUT(memcg, user_fills_its_cgroup, 300)
{
	struct kgo_task nop[64];
	struct kgo_completion cc[64];
	int status = 0, done = 0, i;
	long long cur = -1, peak = -1;
	struct fill *sh;
	struct stat st;
	bool exited = false;

	if (self->skip[0])
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, cg_write("memory.max", "67108864"));
	ASSERT_EQ(0, stat(KGO_DEVICE_PATH, &st));
	ASSERT_EQ(0, chmod(KGO_DEVICE_PATH, 0666));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child)
		filler(sh);
	/* The child holds what it got: look, then let it go. */
	for (i = 0; i < 60000 && !__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) && !exited; i++) {
		usleep(10000);
		exited = waitpid(self->child, &status, WNOHANG) == self->child;
	}
	EXPECT_TRUE(__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE));
	cur = cg_read("memory.current");
	peak = cg_read("memory.peak");	/* absent before 5.19 */
	/* Root, outside the cgroup: its NOPs still complete. */
	for (i = 0; i < 64; i++)
		nop[i] = (struct kgo_task){ .kind = KGO_TASK_NOP, .tag = i };
	EXPECT_EQ(64, submit(self->mon, nop, 64));
	while (done < 64) {
		struct pollfd p = { .fd = self->mon, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 10000) != 1)
			break;
		r = read(self->mon, cc, sizeof(cc));
		if (r <= 0)
			break;
		for (i = 0; i < r / (ssize_t)sizeof(cc[0]); i++)
			EXPECT_EQ(0, cc[i].status);
		done += r / sizeof(cc[0]);
	}
	EXPECT_EQ(64, done);
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	if (!exited)
		ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	chmod(KGO_DEVICE_PATH, st.st_mode & 07777);
	TH_LOG("%llu rings (then %s), %llu tasks (then %s); memory.current %lld, peak %lld",
	       (unsigned long long)sh->rings, strerror(sh->ring_err),
	       (unsigned long long)sh->submitted, strerror(sh->g_err), cur, peak);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child: status %#x, set-up errno %d", status, sh->setup_err);
	EXPECT_TRUE(sh->ring_err == EAGAIN || sh->ring_err == ENOMEM);
	EXPECT_TRUE(sh->g_err == EAGAIN || sh->g_err == ENOMEM);
	EXPECT_LT(0, cur);
	EXPECT_GE((long long)FILL_MAX, cur);	/* at most the limit, which it reaches */
	if (peak >= 0)
		EXPECT_GE((long long)FILL_MAX, peak);
	munmap(sh, sizeof(*sh));
}

TEST_HARNESS_MAIN
