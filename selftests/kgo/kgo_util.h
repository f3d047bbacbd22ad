/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kgo selftests.
 */
#ifndef _KGO_SELFTEST_UTIL_H
#define _KGO_SELFTEST_UTIL_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>

#include <linux/kgo.h>

#define NSEC		1000000000ULL

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

#endif /* _KGO_SELFTEST_UTIL_H */
