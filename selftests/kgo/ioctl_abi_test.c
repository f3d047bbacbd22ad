// SPDX-License-Identifier: GPL-2.0
/*
 * The argument convention of the session ioctls (SUBMIT, WAIT, STATS,
 * CANCEL), as get_info_test.c checks it for GET_INFO; what SUBMIT
 * accepts of each task descriptor and where it stops; and read(2),
 * poll(2) and open(2) of /dev/kgo.
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

#define REC		sizeof(struct kgo_completion)
/* Generous: the test VMs emulate the CPU, with KASAN on. */
#define WAIT_NS		(30ULL * 1000000000)
#define POLL_MS		30000
/* Room for any argument struct, and a long "newer" one. */
#define ARG_MAX		4096
/* An address userspace cannot hand the kernel: the kernel's own text. */
#define KERNEL_ADDR	0xffffffff81000000ULL

/* @call must fail with @err; @fmt says which case it was. */
#define EXPECT_ERRNO(err, call, fmt, ...) do {				\
	long __ret = (call);						\
	int __err = errno;						\
	EXPECT_EQ(-1, __ret) TH_LOG(fmt, ##__VA_ARGS__);		\
	if (__ret == -1) {						\
		EXPECT_EQ(err, __err) TH_LOG(fmt, ##__VA_ARGS__);	\
	}								\
} while (0)

FIXTURE(kgo) {
	int fd;
	long page;
};

FIXTURE_SETUP(kgo)
{
	self->page = sysconf(_SC_PAGESIZE);
	KGO_OPEN(self->fd, 0);
}

FIXTURE_TEARDOWN(kgo)
{
	close(self->fd);
}

static struct kgo_task nop(uint64_t tag)
{
	struct kgo_task t = { .kind = KGO_TASK_NOP, .tag = tag };

	return t;
}

/*
 * Waits until @n completions are ready (or nothing more is in flight)
 * and reads up to @n of them. Returns how many it read, or -1.
 */
static int collect(int fd, struct kgo_completion *c, unsigned int n)
{
	unsigned int got = 0;

	while (got < n) {
		struct kgo_wait w = {
			.size = sizeof(w),
			.min_complete = n - got,
			.timeout_ns = WAIT_NS,
		};
		ssize_t r;

		if (ioctl(fd, KGO_IOC_WAIT, &w))
			return -1;
		if (!w.ready)
			break;	/* nothing more in flight */
		r = read(fd, c + got, (n - got) * REC);
		if (r <= 0 || r % REC)
			return -1;
		got += r / REC;
	}
	return got;
}

/*
 * Nothing is in flight on @fd: what a refused SUBMIT must leave behind.
 * WAIT returns at once when nothing more can complete.
 */
static bool idle(int fd)
{
	struct kgo_wait w = { .size = sizeof(w), .min_complete = 1 };

	return ioctl(fd, KGO_IOC_WAIT, &w) == 0 && w.ready == 0;
}

/* The session ioctls, and where their fields are. */
struct ioc {
	const char *name;
	unsigned long cmd;
	size_t size;
	size_t min_size;	/* its first version's */
	size_t reserved;	/* offset of __reserved; 0: it has none */
	uint32_t known_flags;
};

static const struct ioc iocs[] = {
	{ "SUBMIT", KGO_IOC_SUBMIT, sizeof(struct kgo_submit), KGO_SUBMIT_SIZE_VER0, 0, 0 },
	{ "WAIT", KGO_IOC_WAIT, sizeof(struct kgo_wait), KGO_WAIT_SIZE_VER0, 0, 0 },
	{ "STATS", KGO_IOC_STATS, sizeof(struct kgo_stats), KGO_STATS_SIZE_VER0,
	  offsetof(struct kgo_stats, __reserved), 0 },
	{ "CANCEL", KGO_IOC_CANCEL, sizeof(struct kgo_cancel), KGO_CANCEL_SIZE_VER0,
	  offsetof(struct kgo_cancel, __reserved), KGO_CANCEL_ALL | KGO_CANCEL_RUNNING },
};

/* Any of their arguments, with room for what a newer caller may add. */
union arg {
	struct {
		uint32_t size;
		uint32_t flags;
	} hdr;
	struct kgo_submit submit;
	struct kgo_wait wait;
	struct kgo_stats stats;
	struct kgo_cancel cancel;
	unsigned char bytes[ARG_MAX];
};

/*
 * A valid argument for @ioc: SUBMIT runs the one NOP at @task, WAIT
 * does not wait, STATS asks for no per-P records, CANCEL cancels
 * everything (there is nothing).
 */
static void valid_arg(const struct ioc *ioc, union arg *a, const struct kgo_task *task)
{
	memset(a, 0, sizeof(*a));
	switch (ioc->cmd) {
	case KGO_IOC_SUBMIT:
		a->submit.tasks = (uintptr_t)task;
		a->submit.nr = 1;
		a->submit.task_size = sizeof(*task);
		break;
	case KGO_IOC_WAIT:
		a->wait.min_complete = 1;
		break;
	case KGO_IOC_STATS:
		a->stats.proc_size = sizeof(struct kgo_proc_stats);
		break;
	case KGO_IOC_CANCEL:
		a->cancel.flags = KGO_CANCEL_ALL;
		break;
	}
	a->hdr.size = ioc->size;
}

/*
 * @ioc, called with valid_arg(), returned @ret: check it worked, and
 * reap the NOP a SUBMIT started so that the fd is idle again.
 */
static void check_accepted(struct __test_metadata *_metadata, int fd,
			   const struct ioc *ioc, int ret, const char *what)
{
	struct kgo_completion c;

	if (ioc->cmd != KGO_IOC_SUBMIT) {
		EXPECT_EQ(0, ret) TH_LOG("%s %s: %s", ioc->name, what, strerror(errno));
		return;
	}
	EXPECT_EQ(1, ret) TH_LOG("SUBMIT %s: %s", what, strerror(errno));
	if (ret == 1) {
		EXPECT_EQ(1, collect(fd, &c, 1));
		EXPECT_EQ(0, c.status);
	}
}

TEST_F(kgo, null_pointer)
{
	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++)
		EXPECT_ERRNO(EFAULT, ioctl(self->fd, iocs[i].cmd, NULL), "%s", iocs[i].name);
	/* A kernel address is as bad as NULL. */
	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++)
		EXPECT_ERRNO(EFAULT, ioctl(self->fd, iocs[i].cmd, (void *)KERNEL_ADDR),
			     "%s", iocs[i].name);
}

TEST_F(kgo, bad_number)
{
	static const unsigned long cmds[] = {
		_IO(KGO_IOC_MAGIC, 0x07),	/* 0x05, 0x06: the rings' */
		_IO(KGO_IOC_MAGIC, 0x08),
		_IO(KGO_IOC_MAGIC, 0xff),
		/* The numbers do not encode a size: these are other numbers. */
		_IOWR(KGO_IOC_MAGIC, 0x01, struct kgo_submit),
		_IOWR(KGO_IOC_MAGIC, 0x02, struct kgo_wait),
		_IOR(KGO_IOC_MAGIC, 0x03, struct kgo_stats),
		_IOW(KGO_IOC_MAGIC, 0x04, struct kgo_cancel),
		_IO(KGO_IOC_MAGIC + 1, 0x01),
		_IO(0, 0),
	};
	union arg a;
	struct kgo_task task = nop(1);

	valid_arg(&iocs[0], &a, &task);
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		EXPECT_ERRNO(ENOTTY, ioctl(self->fd, cmds[i], &a), "cmd %#lx", cmds[i]);
	EXPECT_TRUE(idle(self->fd));
}

TEST_F(kgo, short_size)
{
	union arg a;
	struct kgo_task task = nop(1);

	/* Shorter than the struct's first version is -EINVAL. */
	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++) {
		const uint32_t sizes[] = { 0, 4, 8, iocs[i].min_size - 8, iocs[i].min_size - 1 };

		for (size_t j = 0; j < ARRAY_SIZE(sizes); j++) {
			valid_arg(&iocs[i], &a, &task);
			a.hdr.size = sizes[j];
			EXPECT_ERRNO(EINVAL, ioctl(self->fd, iocs[i].cmd, &a),
				     "%s size %u", iocs[i].name, sizes[j]);
		}
	}
	EXPECT_TRUE(idle(self->fd));
}

/*
 * Every size from the struct's first version up to today's is an older
 * caller's, and accepted: nothing is written past its size.
 */
TEST_F(kgo, older_size)
{
	union arg a;
	struct kgo_task task = nop(1);

	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++) {
		const struct ioc *ioc = &iocs[i];

		for (size_t size = ioc->min_size; size < ioc->size; size++) {
			valid_arg(ioc, &a, &task);
			memset(a.bytes + size, 0xa5, sizeof(a) - size);
			a.hdr.size = size;
			check_accepted(_metadata, self->fd, ioc,
				       ioctl(self->fd, ioc->cmd, &a), "older size");
			for (size_t k = size; k < ioc->size; k++) {
				EXPECT_EQ(0xa5, a.bytes[k])
					TH_LOG("%s size %zu: byte %zu written", ioc->name, size, k);
			}
		}
	}
	EXPECT_TRUE(idle(self->fd));
}

TEST_F(kgo, long_size)
{
	union arg a;
	struct kgo_task task = nop(1);

	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++) {
		const struct ioc *ioc = &iocs[i];
		/* Newer callers: a field more, an odd size, a page. */
		const uint32_t sizes[] = { ioc->size + 8, ioc->size + 1, ARG_MAX };

		for (size_t j = 0; j < ARRAY_SIZE(sizes); j++) {
			uint32_t size = sizes[j];

			/* Zero tail: accepted, and nothing written past what it knows. */
			valid_arg(ioc, &a, &task);
			a.hdr.size = size;
			check_accepted(_metadata, self->fd, ioc,
				       ioctl(self->fd, ioc->cmd, &a), "zero tail");
			for (size_t k = ioc->size; k < size; k++) {
				EXPECT_EQ(0, a.bytes[k])
					TH_LOG("%s size %u: byte %zu written", ioc->name, size, k);
			}

			/* A non-zero byte at either end of the tail: -E2BIG. */
			valid_arg(ioc, &a, &task);
			a.hdr.size = size;
			a.bytes[ioc->size] = 1;
			EXPECT_ERRNO(E2BIG, ioctl(self->fd, ioc->cmd, &a),
				     "%s size %u, first tail byte set", ioc->name, size);
			valid_arg(ioc, &a, &task);
			a.hdr.size = size;
			a.bytes[size - 1] = 0x80;
			EXPECT_ERRNO(E2BIG, ioctl(self->fd, ioc->cmd, &a),
				     "%s size %u, last tail byte set", ioc->name, size);
		}
	}
	EXPECT_TRUE(idle(self->fd));
}

/*
 * Longer than a page is no newer version of any struct: -E2BIG at once,
 * as clone3() and openat2() answer. The struct ends a mapped page and its
 * tail would lie on an unmapped one: a kernel that still checked the tail
 * for zeros would fault there (-EFAULT) or, for 4 GiB, read for long.
 */
TEST_F(kgo, oversize)
{
	char *map = mmap(NULL, 2 * self->page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct kgo_task task = nop(1);

	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + self->page, self->page));
	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++) {
		const struct ioc *ioc = &iocs[i];
		union arg *a = (union arg *)(map + self->page - ioc->size);
		const uint32_t sizes[] = { self->page + 1, ioc->size + self->page, 0xffffffff };

		for (size_t j = 0; j < ARRAY_SIZE(sizes); j++) {
			union arg tmp;

			valid_arg(ioc, &tmp, &task);
			memcpy(a, &tmp, ioc->size);
			a->hdr.size = sizes[j];
			EXPECT_ERRNO(E2BIG, ioctl(self->fd, ioc->cmd, a),
				     "%s size %u", ioc->name, sizes[j]);
		}
	}
	munmap(map, self->page);
	EXPECT_TRUE(idle(self->fd));
}

TEST_F(kgo, exact_size)
{
	union arg a;
	struct kgo_task task = nop(1);

	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++) {
		valid_arg(&iocs[i], &a, &task);
		check_accepted(_metadata, self->fd, &iocs[i],
			       ioctl(self->fd, iocs[i].cmd, &a), "exact size");
	}
	EXPECT_TRUE(idle(self->fd));
}

TEST_F(kgo, unknown_flags)
{
	static const uint32_t flags[] = { 1, 2, 0x100, 0x80000000u, ~0u };
	union arg a;
	struct kgo_task task = nop(1);

	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(flags); j++) {
			if (!(flags[j] & ~iocs[i].known_flags))
				continue;
			valid_arg(&iocs[i], &a, &task);
			a.hdr.flags = flags[j];
			EXPECT_ERRNO(EINVAL, ioctl(self->fd, iocs[i].cmd, &a),
				     "%s flags %#x", iocs[i].name, flags[j]);
		}
	}
	EXPECT_TRUE(idle(self->fd));
}

TEST_F(kgo, reserved_nonzero)
{
	static const uint32_t values[] = { 1, 0x80000000u, ~0u };
	union arg a;
	struct kgo_task task = nop(1);

	for (size_t i = 0; i < ARRAY_SIZE(iocs); i++) {
		if (!iocs[i].reserved)
			continue;
		for (size_t j = 0; j < ARRAY_SIZE(values); j++) {
			valid_arg(&iocs[i], &a, &task);
			memcpy(a.bytes + iocs[i].reserved, &values[j], sizeof(values[j]));
			EXPECT_ERRNO(EINVAL, ioctl(self->fd, iocs[i].cmd, &a),
				     "%s __reserved %#x", iocs[i].name, values[j]);
		}
	}
}

/*
 * The first version of every argument struct, copied from the header
 * it first appeared in, as a binary built then knows it. The header's
 * KGO_*_SIZE_VER0 must be their sizes, and every ioctl must accept them.
 */
struct v0_info {		/* the first release */
	uint32_t size, flags, abi_version, nr_procs, stack_size, __reserved;
};

struct v0_task {
	uint32_t kind, flags;
	uint64_t tag, args[3], __reserved;
};

struct v0_submit {
	uint32_t size, flags;
	uint64_t tasks;
	uint32_t nr, task_size;
};

struct v0_completion {
	uint64_t tag, result;
	int32_t status;
	uint32_t cpu, kind, __reserved;
	uint64_t queued_ns, started_ns, ended_ns;
};

struct v0_wait {
	uint32_t size, flags, min_complete, ready;
	uint64_t timeout_ns;
};

struct v0_cancel {
	uint32_t size, flags;
	uint64_t tag;
	uint32_t cancelled, __reserved;
};

struct v0_proc_stats {
	uint32_t id, cpu, idle, runq_len;
	uint64_t idle_ns, gcreated, gstarted, gfinished, schedticks, runnext_hits,
		 globrunq_takes, steal_attempts, steals, stolen, parks, readies,
		 yields, mparks, mwakes, spinning;
};

struct v0_stats {		/* before sqpoll_ns and sqpoll_tasks */
	uint32_t size, flags;
	uint64_t procs;
	uint32_t procs_max, proc_size, nr_procs, nr_procs_idle, nr_ms, nr_ms_idle,
		 nr_ms_spinning, __reserved;
	uint64_t goroutines, global_runq, created_outside, readied_outside;
	uint64_t latency[32];
};

struct v0_ring_offsets {
	uint32_t sq_head, sq_tail, cq_head, cq_tail, sq_flags, sqes, cqes, __reserved;
};

struct v0_ring_params {
	uint32_t size, flags, sq_entries, cq_entries, sq_idle_ms, mmap_size;
	struct v0_ring_offsets off;
	uint64_t __reserved;
};

struct v0_enter {
	uint32_t size, flags, to_submit, min_complete;
	uint64_t timeout_ns;
};

/* Room for a struct and, after it, bytes the module must not write. */
#define V0_GUARD	64

/*
 * An argument of @len bytes, followed by V0_GUARD bytes of 0xa5: what a
 * binary built against an older header has after its struct.
 */
static void *v0_arg(unsigned char *buf, const void *arg, size_t len)
{
	memset(buf, 0xa5, len + V0_GUARD);
	memcpy(buf, arg, len);
	return buf;
}

static bool v0_guard_intact(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < V0_GUARD; i++)
		if (buf[len + i] != 0xa5)
			return false;
	return true;
}

TEST_F(kgo, first_versions)
{
	unsigned char buf[sizeof(struct v0_stats) + V0_GUARD];
	struct v0_proc_stats procs[2];
	struct v0_task task = { .kind = KGO_TASK_NOP, .tag = 77 };
	struct v0_completion c;
	struct v0_ring_params rp;
	struct v0_submit sub;
	struct v0_info *info;
	struct v0_stats *st;
	struct v0_wait *w;
	struct v0_cancel *cn;
	struct v0_enter *e;
	volatile uint32_t *sq_tail, *cq_tail, *cq_head;
	struct v0_task *sqes;
	struct v0_completion *cqes;
	unsigned char *ring;
	int fd;

	ASSERT_EQ(KGO_INFO_SIZE_VER0, offsetof(struct v0_info, stack_size));
	ASSERT_EQ(KGO_TASK_SIZE_VER0, sizeof(struct v0_task));
	ASSERT_EQ(KGO_SUBMIT_SIZE_VER0, sizeof(struct v0_submit));
	ASSERT_EQ(KGO_COMPLETION_SIZE_VER0, sizeof(struct v0_completion));
	ASSERT_EQ(KGO_WAIT_SIZE_VER0, sizeof(struct v0_wait));
	ASSERT_EQ(KGO_CANCEL_SIZE_VER0, sizeof(struct v0_cancel));
	ASSERT_EQ(KGO_PROC_STATS_SIZE_VER0, sizeof(struct v0_proc_stats));
	ASSERT_EQ(KGO_STATS_SIZE_VER0, sizeof(struct v0_stats));
	ASSERT_EQ(KGO_RING_OFFSETS_SIZE_VER0, sizeof(struct v0_ring_offsets));
	ASSERT_EQ(KGO_RING_PARAMS_SIZE_VER0, sizeof(struct v0_ring_params));
	ASSERT_EQ(KGO_ENTER_SIZE_VER0, sizeof(struct v0_enter));

	/* GET_INFO, as the first release knew it. */
	info = v0_arg(buf, &(struct v0_info){ .size = sizeof(*info) }, sizeof(*info));
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, info)) TH_LOG("GET_INFO: %s",
								   strerror(errno));
	EXPECT_EQ(KGO_ABI_VERSION, info->abi_version);
	EXPECT_LT(0, info->stack_size);
	EXPECT_TRUE(v0_guard_intact(buf, sizeof(*info)));

	/* SUBMIT of a first-version task, then WAIT and read(2) of it. */
	sub = (struct v0_submit){ .size = sizeof(sub), .tasks = (uintptr_t)&task,
				  .nr = 1, .task_size = sizeof(task) };
	EXPECT_EQ(1, ioctl(self->fd, KGO_IOC_SUBMIT, v0_arg(buf, &sub, sizeof(sub))))
		TH_LOG("SUBMIT: %s", strerror(errno));
	EXPECT_TRUE(v0_guard_intact(buf, sizeof(sub)));
	w = v0_arg(buf, &(struct v0_wait){ .size = sizeof(*w), .min_complete = 1,
					   .timeout_ns = WAIT_NS }, sizeof(*w));
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_WAIT, w)) TH_LOG("WAIT: %s", strerror(errno));
	EXPECT_EQ(1, w->ready);
	EXPECT_TRUE(v0_guard_intact(buf, sizeof(*w)));
	EXPECT_EQ(sizeof(c), read(self->fd, &c, sizeof(c)));
	EXPECT_EQ(77, c.tag);
	EXPECT_EQ(0, c.status);

	cn = v0_arg(buf, &(struct v0_cancel){ .size = sizeof(*cn), .flags = KGO_CANCEL_ALL,
					      .cancelled = 99 }, sizeof(*cn));
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, cn)) TH_LOG("CANCEL: %s", strerror(errno));
	EXPECT_EQ(0, cn->cancelled);
	EXPECT_TRUE(v0_guard_intact(buf, sizeof(*cn)));

	/* STATS: 336 bytes, with first-version per-P records. */
	memset(procs, 0, sizeof(procs));
	st = v0_arg(buf, &(struct v0_stats){ .size = sizeof(*st), .procs = (uintptr_t)procs,
					     .procs_max = 1, .proc_size = sizeof(procs[0]) },
		    sizeof(*st));
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_STATS, st)) TH_LOG("STATS: %s", strerror(errno));
	EXPECT_LE(1, st->nr_procs);
	EXPECT_LE(1, st->nr_ms);
	EXPECT_TRUE(v0_guard_intact(buf, sizeof(*st)));
	EXPECT_EQ(0, procs[1].id + procs[1].cpu + procs[1].spinning);

	/* A ring, set up and entered with the first version of both. */
	fd = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	rp = (struct v0_ring_params){ .size = sizeof(rp), .sq_entries = 4, .cq_entries = 8 };
	ASSERT_EQ(0, ioctl(fd, KGO_IOC_RING_SETUP, v0_arg(buf, &rp, sizeof(rp))))
		TH_LOG("RING_SETUP: %s", strerror(errno));
	EXPECT_TRUE(v0_guard_intact(buf, sizeof(rp)));
	memcpy(&rp, buf, sizeof(rp));
	ring = mmap(NULL, rp.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    KGO_RING_OFF_ALL);
	ASSERT_NE(MAP_FAILED, ring);
	sq_tail = (uint32_t *)(ring + rp.off.sq_tail);
	cq_tail = (uint32_t *)(ring + rp.off.cq_tail);
	cq_head = (uint32_t *)(ring + rp.off.cq_head);
	sqes = (struct v0_task *)(ring + rp.off.sqes);
	cqes = (struct v0_completion *)(ring + rp.off.cqes);
	sqes[0] = task;
	sqes[0].tag = 78;
	__atomic_store_n(sq_tail, 1, __ATOMIC_RELEASE);
	e = v0_arg(buf, &(struct v0_enter){ .size = sizeof(*e), .to_submit = 1,
					    .min_complete = 1, .timeout_ns = WAIT_NS },
		   sizeof(*e));
	EXPECT_EQ(1, ioctl(fd, KGO_IOC_ENTER, e)) TH_LOG("ENTER: %s", strerror(errno));
	EXPECT_TRUE(v0_guard_intact(buf, sizeof(*e)));
	ASSERT_EQ(1, __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE));
	EXPECT_EQ(78, cqes[0].tag);
	EXPECT_EQ(0, cqes[0].status);
	__atomic_store_n(cq_head, 1, __ATOMIC_RELEASE);
	munmap(ring, rp.mmap_size);
	close(fd);
	EXPECT_TRUE(idle(self->fd));
}

/* A task descriptor SUBMIT must refuse, and why. */
struct bad_task {
	const char *what;
	struct kgo_task t;
	int err;
};

TEST_F(kgo, bad_task)
{
	const size_t big = KGO_CHECKSUM_MAX_LEN + 1;
	unsigned char *buf = calloc(1, big);
	uint64_t ubuf = (uintptr_t)buf;
	const struct bad_task cases[] = {
		{ "kind 0", { .kind = 0 }, EINVAL },
		{ "kind past the catalogue", { .kind = KGO_TASK_PINGPONG_HOG + 1 }, EINVAL },
		{ "kind 1000", { .kind = 1000 }, EINVAL },
		{ "kind ~0", { .kind = ~0u }, EINVAL },
		{ "flags 2", { .kind = KGO_TASK_NOP, .flags = 2 }, EINVAL },
		{ "INLINE SPIN", { .kind = KGO_TASK_SPIN, .flags = KGO_TASK_F_INLINE,
				   .args = { 1 } }, EINVAL },
		{ "INLINE SLEEP", { .kind = KGO_TASK_SLEEP, .flags = KGO_TASK_F_INLINE,
				    .args = { 1 } }, EINVAL },
		{ "INLINE|2 NOP", { .kind = KGO_TASK_NOP, .flags = KGO_TASK_F_INLINE | 2 }, EINVAL },
		{ "flags 1<<31", { .kind = KGO_TASK_NOP, .flags = 0x80000000u }, EINVAL },
		{ "__reserved", { .kind = KGO_TASK_NOP, .__reserved = 1 }, EINVAL },
		{ "NOP args[0]", { .kind = KGO_TASK_NOP, .args = { 1, 0, 0 } }, EINVAL },
		{ "NOP args[1]", { .kind = KGO_TASK_NOP, .args = { 0, 1, 0 } }, EINVAL },
		{ "NOP args[2]", { .kind = KGO_TASK_NOP, .args = { 0, 0, 1 } }, EINVAL },
		{ "SPIN > max",
		  { .kind = KGO_TASK_SPIN, .args = { KGO_SPIN_MAX_NS + 1 } }, EINVAL },
		{ "SPIN ~0", { .kind = KGO_TASK_SPIN, .args = { ~0ULL } }, EINVAL },
		{ "SPIN args[1]", { .kind = KGO_TASK_SPIN, .args = { 1, 1, 0 } }, EINVAL },
		{ "SPIN args[2]", { .kind = KGO_TASK_SPIN, .args = { 1, 0, 1 } }, EINVAL },
		{ "YIELD > max",
		  { .kind = KGO_TASK_YIELD, .args = { KGO_YIELD_MAX + 1 } }, EINVAL },
		{ "YIELD ~0", { .kind = KGO_TASK_YIELD, .args = { ~0ULL } }, EINVAL },
		{ "YIELD args[1]", { .kind = KGO_TASK_YIELD, .args = { 1, 1, 0 } }, EINVAL },
		{ "YIELD args[2]", { .kind = KGO_TASK_YIELD, .args = { 1, 0, 1 } }, EINVAL },
		{ "SPAWN fanout 0", { .kind = KGO_TASK_SPAWN, .args = { 0, 1 } }, EINVAL },
		{ "SPAWN fanout 0 depth 0", { .kind = KGO_TASK_SPAWN, .args = { 0, 0 } }, EINVAL },
		{ "SPAWN fanout > max",
		  { .kind = KGO_TASK_SPAWN, .args = { KGO_SPAWN_MAX_FANOUT + 1, 1 } }, EINVAL },
		{ "SPAWN fanout ~0", { .kind = KGO_TASK_SPAWN, .args = { ~0ULL, 1 } }, EINVAL },
		{ "SPAWN args[2]", { .kind = KGO_TASK_SPAWN, .args = { 2, 1, 1 } }, EINVAL },
		/* 2^18 - 1 nodes: one level more than the largest binary tree. */
		{ "SPAWN 2^17 levels", { .kind = KGO_TASK_SPAWN, .args = { 2, 17 } }, E2BIG },
		{ "SPAWN 64^3", { .kind = KGO_TASK_SPAWN, .args = { KGO_SPAWN_MAX_FANOUT, 3 } },
		  E2BIG },
		/* A chain: depth + 1 nodes, and depth + 1 must not overflow. */
		{ "SPAWN chain max+1",
		  { .kind = KGO_TASK_SPAWN, .args = { 1, KGO_SPAWN_MAX_NODES } }, E2BIG },
		{ "SPAWN chain ~0", { .kind = KGO_TASK_SPAWN, .args = { 1, ~0ULL } }, E2BIG },
		{ "SPAWN 64 ~0", { .kind = KGO_TASK_SPAWN, .args = { 64, ~0ULL } }, E2BIG },
		/* The buffer is there: only the length is wrong. */
		{ "CHECKSUM len > max",
		  { .kind = KGO_TASK_CHECKSUM, .args = { ubuf, KGO_CHECKSUM_MAX_LEN + 1 } },
		  E2BIG },
		{ "CHECKSUM args[2]",
		  { .kind = KGO_TASK_CHECKSUM, .args = { ubuf, 16, 1 } }, EINVAL },
		{ "CHECKSUM NULL", { .kind = KGO_TASK_CHECKSUM, .args = { 0, 16 } }, EFAULT },
		{ "CHECKSUM kernel address",
		  { .kind = KGO_TASK_CHECKSUM, .args = { KERNEL_ADDR, 16 } }, EFAULT },
	};

	ASSERT_NE(NULL, buf);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		EXPECT_ERRNO(cases[i].err, submit(self->fd, &cases[i].t, 1), "%s", cases[i].what);
	EXPECT_TRUE(idle(self->fd));
	free(buf);
}

/* CHECKSUM of memory that is mapped but not readable, or only partly. */
TEST_F(kgo, checksum_unreadable)
{
	char *map = mmap(NULL, 2 * self->page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct kgo_task t = { .kind = KGO_TASK_CHECKSUM };

	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + self->page, self->page, PROT_NONE));

	t.args[0] = (uintptr_t)(map + self->page);
	t.args[1] = 16;
	EXPECT_ERRNO(EFAULT, submit(self->fd, &t, 1), "PROT_NONE page");
	/* Readable up to the last 8 bytes. */
	t.args[0] = (uintptr_t)(map + self->page - 8);
	EXPECT_ERRNO(EFAULT, submit(self->fd, &t, 1), "straddling into PROT_NONE");
	EXPECT_TRUE(idle(self->fd));

	/* The same buffer, within the readable page: fine. */
	t.args[1] = 8;
	EXPECT_EQ(1, submit(self->fd, &t, 1));
	EXPECT_EQ(1, collect(self->fd, &(struct kgo_completion){}, 1));
	munmap(map, 2 * self->page);
}

TEST_F(kgo, bad_task_array)
{
	char *map = mmap(NULL, self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, map);
	EXPECT_ERRNO(EFAULT, submit(self->fd, NULL, 1), "NULL");
	EXPECT_ERRNO(EFAULT, submit(self->fd, (void *)1, 1), "address 1");
	EXPECT_ERRNO(EFAULT, submit(self->fd, (void *)KERNEL_ADDR, 1), "kernel address");
	EXPECT_ERRNO(EFAULT, submit(self->fd, (void *)map, 1), "PROT_NONE");
	EXPECT_TRUE(idle(self->fd));
	munmap(map, self->page);
}

TEST_F(kgo, task_size_short)
{
	static const uint32_t sizes[] = { 0, 8, 40, sizeof(struct kgo_task) - 1 };
	struct kgo_task t[2] = { nop(1), nop(2) };

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		EXPECT_ERRNO(EINVAL, submit_sized(self->fd, t, 2, sizes[i]),
			     "task_size %u", sizes[i]);
	EXPECT_TRUE(idle(self->fd));
}

/*
 * Descriptors from a newer caller: @task_size apart, each with a tail
 * the module does not know. Zero tails are accepted, and the stride is
 * honoured (both tags come back); a non-zero tail is -E2BIG, and stops
 * a batch there.
 */
TEST_F(kgo, task_size_long)
{
	static const uint32_t sizes[] = { sizeof(struct kgo_task) + 8,
					  sizeof(struct kgo_task) + 4, 256 };
	unsigned char arr[2 * 256];
	struct kgo_completion c[2];

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t sz = sizes[i];
		struct kgo_task t;

		memset(arr, 0, sizeof(arr));
		t = nop(100 + i);
		memcpy(arr, &t, sizeof(t));
		t = nop(200 + i);
		memcpy(arr + sz, &t, sizeof(t));

		EXPECT_EQ(2, submit_sized(self->fd, arr, 2, sz)) TH_LOG("task_size %u: %s", sz,
									strerror(errno));
		ASSERT_EQ(2, collect(self->fd, c, 2));
		EXPECT_EQ(100 + i, c[0].tag < c[1].tag ? c[0].tag : c[1].tag);
		EXPECT_EQ(200 + i, c[0].tag < c[1].tag ? c[1].tag : c[0].tag);

		/* The second's tail is not zero: only the first is accepted. */
		arr[sz + sz - 1] = 1;
		EXPECT_EQ(1, submit_sized(self->fd, arr, 2, sz)) TH_LOG("task_size %u", sz);
		ASSERT_EQ(1, collect(self->fd, c, 1));
		EXPECT_EQ(100 + i, c[0].tag);
		/* Alone, it says why. */
		EXPECT_ERRNO(E2BIG, submit_sized(self->fd, arr + sz, 1, sz),
			     "task_size %u, tail byte set", sz);
		arr[sizeof(struct kgo_task)] = 0xff;
		EXPECT_ERRNO(E2BIG, submit_sized(self->fd, arr, 1, sz),
			     "task_size %u, first tail byte set", sz);
	}
	EXPECT_TRUE(idle(self->fd));
}

/* SUBMIT accepts in order and stops at the first it cannot accept. */
TEST_F(kgo, partial_accept)
{
	struct kgo_task t[3] = { nop(1), nop(2), { .kind = 0, .tag = 3 } };
	struct kgo_completion c[3];

	EXPECT_EQ(2, submit(self->fd, t, 3));
	ASSERT_EQ(2, collect(self->fd, c, 3));
	EXPECT_EQ(3, c[0].tag + c[1].tag);
	EXPECT_NE(c[0].tag, c[1].tag);
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(0, c[1].status);
	/* Submitted again on its own, the third says why. */
	EXPECT_ERRNO(EINVAL, submit(self->fd, &t[2], 1), "kind 0 alone");

	/* Nothing after the bad one is accepted either. */
	t[1] = (struct kgo_task){ .kind = KGO_TASK_SPIN, .tag = 2,
				  .args = { KGO_SPIN_MAX_NS + 1 } };
	t[2] = nop(3);
	EXPECT_EQ(1, submit(self->fd, t, 3));
	ASSERT_EQ(1, collect(self->fd, c, 3));
	EXPECT_EQ(1, c[0].tag);

	/* A bad buffer stops a batch the same way. */
	t[1] = (struct kgo_task){ .kind = KGO_TASK_CHECKSUM, .tag = 2,
				  .args = { KERNEL_ADDR, 64 } };
	EXPECT_EQ(1, submit(self->fd, t, 3));
	ASSERT_EQ(1, collect(self->fd, c, 3));
	EXPECT_EQ(1, c[0].tag);

	/* The first is bad: the reason, and nothing accepted. */
	t[0] = (struct kgo_task){ .kind = KGO_TASK_NOP, .tag = 1, .flags = 2 };
	t[1] = nop(2);
	EXPECT_ERRNO(EINVAL, submit(self->fd, t, 2), "bad first");
	EXPECT_TRUE(idle(self->fd));
}

/* The array itself ends part-way: what was readable is accepted. */
TEST_F(kgo, partial_array)
{
	char *map = mmap(NULL, 2 * self->page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct kgo_task *t;
	struct kgo_completion c[2];

	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + self->page, self->page, PROT_NONE));
	t = (struct kgo_task *)(map + self->page) - 1;
	*t = nop(7);

	EXPECT_EQ(1, submit(self->fd, t, 2));
	ASSERT_EQ(1, collect(self->fd, c, 2));
	EXPECT_EQ(7, c[0].tag);
	EXPECT_ERRNO(EFAULT, submit(self->fd, t + 1, 1), "the unreadable one");
	EXPECT_TRUE(idle(self->fd));
	munmap(map, 2 * self->page);
}

TEST_F(kgo, stats_procs)
{
	struct kgo_info info = { .size = sizeof(info) };
	/* Records one u64 longer than the module's, to check the stride. */
	struct big_proc {
		struct kgo_proc_stats ps;
		uint64_t newer;
	} *procs;
	struct kgo_stats st;
	unsigned int n;

	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	n = info.nr_procs;
	ASSERT_LE(1, n);
	procs = calloc(n + 1, sizeof(*procs));
	ASSERT_NE(NULL, procs);

	/* No room asked for: only the totals. */
	st = (struct kgo_stats){ .size = sizeof(st), .proc_size = sizeof(struct kgo_proc_stats) };
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_STATS, &st));
	EXPECT_EQ(n, st.nr_procs);
	EXPECT_LE(st.nr_procs_idle, st.nr_procs);
	EXPECT_LE(st.nr_ms_idle, st.nr_ms);

	/* Room for more than there are, with a longer record. */
	memset(procs, 0xa5, (n + 1) * sizeof(*procs));
	st = (struct kgo_stats){
		.size = sizeof(st),
		.procs = (uintptr_t)procs,
		.procs_max = n + 1,
		.proc_size = sizeof(*procs),
	};
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_STATS, &st));
	EXPECT_EQ(n, st.nr_procs);
	for (unsigned int i = 0; i < n; i++) {
		EXPECT_EQ(i, procs[i].ps.id);
		EXPECT_LT(procs[i].ps.cpu, sysconf(_SC_NPROCESSORS_CONF));
		EXPECT_GE(1, procs[i].ps.idle);
		/* It writes what it knows of each record, not the caller's tail. */
		EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, procs[i].newer) TH_LOG("P %u", i);
	}
	/* Only nr_procs records are written. */
	EXPECT_EQ(0xa5a5a5a5u, procs[n].ps.id);

	/* Less room than there are Ps: only that many written. */
	memset(procs, 0xa5, (n + 1) * sizeof(*procs));
	st = (struct kgo_stats){
		.size = sizeof(st),
		.procs = (uintptr_t)procs,
		.procs_max = 1,
		.proc_size = sizeof(struct kgo_proc_stats),
	};
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_STATS, &st));
	EXPECT_EQ(n, st.nr_procs);
	EXPECT_EQ(0, ((struct kgo_proc_stats *)procs)[0].id);
	EXPECT_EQ(0xa5a5a5a5u, ((struct kgo_proc_stats *)procs)[1].id);

	/* A record shorter than the first version. */
	for (size_t i = 0; i < 2; i++) {
		st = (struct kgo_stats){
			.size = sizeof(st),
			.procs = (uintptr_t)procs,
			.procs_max = 1,
			.proc_size = i ? 0 : KGO_PROC_STATS_SIZE_VER0 - 1,
		};
		EXPECT_ERRNO(EINVAL, ioctl(self->fd, KGO_IOC_STATS, &st),
			     "proc_size %u", st.proc_size);
	}

	/* Records to nowhere. */
	for (size_t i = 0; i < 2; i++) {
		st = (struct kgo_stats){
			.size = sizeof(st),
			.procs = i ? 1 : KERNEL_ADDR,
			.procs_max = 1,
			.proc_size = sizeof(struct kgo_proc_stats),
		};
		EXPECT_ERRNO(EFAULT, ioctl(self->fd, KGO_IOC_STATS, &st),
			     "procs %#llx", (unsigned long long)st.procs);
	}
	free(procs);
}

TEST_F(kgo, cancel_nothing)
{
	struct kgo_cancel c = { .size = sizeof(c), .tag = 42, .cancelled = 99 };

	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, &c));
	EXPECT_EQ(0, c.cancelled);
	c.flags = KGO_CANCEL_ALL;
	c.cancelled = 99;
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, &c));
	EXPECT_EQ(0, c.cancelled);
}

/* Submits one NOP tagged @tag and waits until its completion is ready. */
static void nop_ready(struct __test_metadata *_metadata, int fd, uint64_t tag)
{
	struct kgo_task t = nop(tag);
	struct kgo_wait w = { .size = sizeof(w), .min_complete = 1, .timeout_ns = WAIT_NS };

	ASSERT_EQ(1, submit(fd, &t, 1));
	ASSERT_EQ(0, ioctl(fd, KGO_IOC_WAIT, &w));
	ASSERT_EQ(1, w.ready);
}

TEST_F(kgo, read_short_buffer)
{
	struct kgo_completion c[2];

	nop_ready(_metadata, self->fd, 5);
	EXPECT_ERRNO(EINVAL, read(self->fd, c, 1), "1 byte");
	EXPECT_ERRNO(EINVAL, read(self->fd, c, REC - 1), "REC - 1 bytes");
	/* The refused reads took nothing. */
	EXPECT_EQ(REC, read(self->fd, c, 2 * REC));
	EXPECT_EQ(5, c[0].tag);
	EXPECT_TRUE(idle(self->fd));
}

TEST_F(kgo, read_whole_records)
{
	struct kgo_task t[3] = { nop(1), nop(2), nop(3) };
	struct kgo_wait w = { .size = sizeof(w), .min_complete = 3, .timeout_ns = WAIT_NS };
	struct kgo_completion c[4];

	ASSERT_EQ(3, submit(self->fd, t, 3));
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_WAIT, &w));
	ASSERT_EQ(3, w.ready);
	/* Room for two and a half: two. */
	EXPECT_EQ(2 * REC, read(self->fd, c, 2 * REC + REC / 2));
	/* Room for two, one left. */
	EXPECT_EQ(REC, read(self->fd, c + 2, 2 * REC));
	EXPECT_EQ(6, c[0].tag + c[1].tag + c[2].tag);
	EXPECT_TRUE(idle(self->fd));
}

/* A completion that could not be copied out is not lost. */
TEST_F(kgo, read_bad_buffer)
{
	void *map = mmap(NULL, self->page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct kgo_completion c;

	ASSERT_NE(MAP_FAILED, map);
	nop_ready(_metadata, self->fd, 9);
	EXPECT_ERRNO(EFAULT, read(self->fd, map, REC), "read-only buffer");
	EXPECT_EQ(REC, read(self->fd, &c, REC));
	EXPECT_EQ(9, c.tag);
	EXPECT_TRUE(idle(self->fd));
	munmap(map, self->page);
}

TEST_F(kgo, read_nonblock_empty)
{
	struct kgo_completion c;
	int fd = open(KGO_DEVICE_PATH, O_RDWR | O_NONBLOCK);

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EAGAIN, read(fd, &c, REC), "fresh fd");
	close(fd);

	/* Emptied by reading: the same. */
	nop_ready(_metadata, self->fd, 1);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(REC, read(self->fd, &c, REC));
	EXPECT_ERRNO(EAGAIN, read(self->fd, &c, REC), "drained fd");
}

/* A blocking read sleeps until a completion arrives. */
TEST_F(kgo, read_blocks)
{
	struct kgo_task t = { .kind = KGO_TASK_SPIN, .tag = 3, .args = { 50000000 } };
	struct kgo_completion c;

	ASSERT_EQ(1, submit(self->fd, &t, 1));
	EXPECT_EQ(REC, read(self->fd, &c, REC));
	EXPECT_EQ(3, c.tag);
	EXPECT_EQ(0, c.status);
	EXPECT_LE(50000000, c.result);
}

TEST_F(kgo, poll)
{
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	struct kgo_task t = nop(1);
	struct kgo_completion c;

	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_EQ(0, p.revents);

	ASSERT_EQ(1, submit(self->fd, &t, 1));
	EXPECT_EQ(1, poll(&p, 1, POLL_MS));
	EXPECT_TRUE(p.revents & POLLIN);
	/* Still ready until read. */
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLIN);

	EXPECT_EQ(REC, read(self->fd, &c, REC));
	p.revents = 0;
	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_EQ(0, p.revents);
}

TEST_F(kgo, device_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(KGO_DEVICE_PATH, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
}

/* Running work in the kernel is root's call: nobody cannot open it. */
TEST_F(kgo, unprivileged_open)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		/* Drop every group and uid 0, so that no capability is left. */
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		fd = open(KGO_DEVICE_PATH, O_RDWR);
		if (fd >= 0)
			_exit(3);
		_exit(errno == EACCES ? 0 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("2: could not drop root, 3: open succeeded, 4: open failed, not EACCES");
}

TEST_HARNESS_MAIN
