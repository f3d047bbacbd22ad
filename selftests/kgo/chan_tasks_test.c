// SPDX-License-Identifier: GPL-2.0
/*
 * The task kinds built on channels and timers: SLEEP, PINGPONG, SELECT.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

KGO_FIXTURE(kgo)

/* Submits one task and reads its completion (blocking read). */
static int run_one(int fd, uint32_t kind, uint64_t a0, uint64_t a1,
		   struct kgo_completion *c)
{
	struct kgo_task t = { .kind = kind, .tag = 7, .args = { a0, a1 } };
	int ret = submit(fd, &t, 1);

	if (ret != 1)
		return ret < 0 ? -errno : -EIO;
	if (read(fd, c, sizeof(*c)) != sizeof(*c))
		return -errno;
	return 0;
}

TEST_F(kgo, sleep)
{
	const uint64_t ns = 20000000;	/* 20 ms */
	struct kgo_completion c;

	ASSERT_EQ(0, run_one(self->fd, KGO_TASK_SLEEP, ns, 0, &c));
	EXPECT_EQ(0, c.status);
	EXPECT_LE(ns, c.result);
	EXPECT_LE(ns, c.ended_ns - c.started_ns);
}

TEST_F(kgo, pingpong)
{
	struct kgo_completion c;

	ASSERT_EQ(0, run_one(self->fd, KGO_TASK_PINGPONG, 10000, 0, &c));
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(10000, c.result);
	TH_LOG("10000 round trips in %llu us",
	       (unsigned long long)(c.ended_ns - c.started_ns) / 1000);
}

TEST_F(kgo, select_with_timeouts)
{
	struct kgo_completion c;

	ASSERT_EQ(0, run_one(self->fd, KGO_TASK_SELECT, 50, 200000, &c));
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(50, c.result);
	/* 50 sends, 0.2 ms apart. */
	EXPECT_LE(50 * 200000ULL, c.ended_ns - c.started_ns);
}

TEST_F(kgo, limits)
{
	struct kgo_task bad[] = {
		{ .kind = KGO_TASK_SLEEP, .args = { KGO_SLEEP_MAX_NS + 1 } },
		{ .kind = KGO_TASK_PINGPONG, .args = { KGO_PINGPONG_MAX + 1 } },
		{ .kind = KGO_TASK_SELECT, .args = { KGO_SELECT_TASK_MAX + 1 } },
		{ .kind = KGO_TASK_SELECT, .args = { 1, KGO_SELECT_GAP_MAX_NS + 1 } },
		{ .kind = KGO_TASK_SLEEP, .args = { 1, 1 } },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-1, submit(self->fd, &bad[i], 1));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("case %zu", i);
		}
	}
}

TEST_HARNESS_MAIN
