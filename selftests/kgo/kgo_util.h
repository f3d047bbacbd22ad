/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kgo selftests.
 */
#ifndef _KGO_SELFTEST_UTIL_H
#define _KGO_SELFTEST_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/kgo.h>

#define NSEC		1000000000ULL

/*
 * kselftest's rule: a program that cannot run here skips, saying why,
 * and exits KSFT_SKIP (4), which the runner counts as a skip. Every
 * program here needs kgo loaded and /dev/kgo open to its user; this
 * runs before main(), so that no case fails for want of either. Other
 * errors are left to the cases, which report them.
 */
__attribute__((constructor)) static void kgo_need_device(void)
{
	const char *why;
	int fd = open(KGO_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return;
	}
	switch (errno) {
	case ENOENT:
	case ENXIO:
	case ENODEV:
		why = "kgo is not loaded (modprobe kgo)";
		break;
	case EACCES:
	case EPERM:
		why = "no permission to open " KGO_DEVICE_PATH
		      " (run as root, or see kgo's dev_mode, disabled and group parameters)";
		break;
	default:
		return;
	}
	printf("TAP version 13\n1..0 # SKIP %s\n", why);
	exit(4);
}

/*
 * The fixture the programs here share. KGO_OPEN() and KGO_NR_PROCS() are
 * for FIXTURE_SETUP() and TEST() bodies: a failure fails the case, as
 * the harness's ASSERT_*() do there.
 */

/* /dev/kgo opened O_RDWR | @flags into @fd, or the case fails saying why. */
#define KGO_OPEN(fd, flags)							\
	do {									\
		(fd) = open(KGO_DEVICE_PATH, O_RDWR | (flags));			\
		ASSERT_LE(0, (fd)) TH_LOG("open %s: %s", KGO_DEVICE_PATH,	\
					  strerror(errno));			\
	} while (0)

/* The number of Ps (GET_INFO's nr_procs, at least 1) into @n. */
#define KGO_NR_PROCS(fd, n)							\
	do {									\
		struct kgo_info _info = { .size = sizeof(_info) };		\
										\
		ASSERT_EQ(0, ioctl((fd), KGO_IOC_GET_INFO, &_info));		\
		(n) = _info.nr_procs;						\
		ASSERT_LE(1, (n));						\
	} while (0)

/*
 * KGO_FIXTURE(name): FIXTURE(name) with its setup and teardown, for a
 * program whose cases need nothing but kgo: each case gets self->fd, a
 * /dev/kgo of its own (so a session of its own), and self->nprocs.
 */
#define KGO_FIXTURE(name)						\
	FIXTURE(name) {							\
		int fd;							\
		unsigned int nprocs;					\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		KGO_OPEN(self->fd, 0);					\
		KGO_NR_PROCS(self->fd, self->nprocs);			\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		close(self->fd);					\
	}

/* CLOCK_MONOTONIC, the clock of struct kgo_completion's times. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

/* KGO_IOC_SUBMIT of @nr descriptors of @task_size bytes each. */
static inline int submit_sized(int fd, const void *tasks, unsigned int nr,
			       unsigned int task_size)
{
	struct kgo_submit s = {
		.size = sizeof(s),
		.tasks = (uintptr_t)tasks,
		.nr = nr,
		.task_size = task_size,
	};

	return ioctl(fd, KGO_IOC_SUBMIT, &s);
}

static inline int submit(int fd, const struct kgo_task *tasks, unsigned int nr)
{
	return submit_sized(fd, tasks, nr, sizeof(*tasks));
}

/*
 * @len bytes of CHECKSUM data for @tag (xorshift from the tag): any
 * thread can recompute a completion's expected sum from its tag alone.
 */
static inline void fill_for_tag(unsigned char *buf, size_t len, uint64_t tag)
{
	uint64_t x = tag * 0x9e3779b97f4a7c15ULL + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = x >> 24;
	}
}

/* Goroutines alive, from debugfs; -1 if it cannot be read. */
static inline long long goroutines_alive(void)
{
	FILE *f = fopen("/sys/kernel/debug/kgo/sched", "r");
	char line[512], *p;
	long long n = -1;

	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f) ? strstr(line, " goroutines=") : NULL;
	if (p)
		n = atoll(strchr(p, '=') + 1);
	fclose(f);
	return n;
}

/*
 * One figure of struct kgo_proc_stats (PSTAT_SUM(fd, gstarted)), summed
 * over every P's record of KGO_IOC_STATS; -1 on an error, or for a
 * caller without CAP_SYS_ADMIN, who is given no per-P records.
 */
static inline long long pstat_sum(int fd, size_t off)
{
	struct kgo_proc_stats ps[64];
	struct kgo_stats st = {
		.size = sizeof(st), .procs = (uintptr_t)ps, .procs_max = 64,
		.proc_size = sizeof(ps[0]),
	};
	long long n = 0;

	if (ioctl(fd, KGO_IOC_STATS, &st) || (st.flags & KGO_STATS_OWN) || st.nr_procs > 64)
		return -1;
	for (unsigned int i = 0; i < st.nr_procs; i++)
		n += *(uint64_t *)((char *)&ps[i] + off);
	return n;
}

#define PSTAT_SUM(fd, field)	pstat_sum(fd, offsetof(struct kgo_proc_stats, field))

/* finit_module(@path, @params): 0 or an errno. */
static inline int load_module(const char *path, const char *params)
{
	int mfd = open(path, O_RDONLY | O_CLOEXEC), ret, err;

	if (mfd < 0)
		return errno;
	ret = syscall(SYS_finit_module, mfd, params, 0);
	err = errno;
	close(mfd);
	return ret ? err : 0;
}

/* Writes @s to @path; 0 or an errno. */
static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	ssize_t n = (ssize_t)strlen(s);

	if (fd < 0)
		return errno;
	if (write(fd, s, n) != n)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

#endif /* _KGO_SELFTEST_UTIL_H */
