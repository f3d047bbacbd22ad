// SPDX-License-Identifier: GPL-2.0
/*
 * Unloading kgo right after an fd with thousands of tasks in flight was
 * closed unread, then loading it again: the closed session's goroutines
 * must finish (or be cancelled) and let go of the module, and nothing of
 * them may be left behind to trip the next load.
 *
 * Unloads the module the other selftests use, so it must run last: it
 * is last in the Makefile's list, whose order the VMs follow.
 * It loads the module back from $KGO_MODULE (default /kgo/kgo.ko), and
 * skips when that file is not there, before unloading anything.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

#define DEFAULT_MODULE	"/kgo/kgo.ko"
#define NTASKS		10000
#define BATCH		500
#define SPIN_NS		100000		/* 100 us */
#define MSEC		1000000ULL
#define UNLOAD_NS	(30 * NSEC)
#define DEVICE_NS	(10 * NSEC)
#define WAIT_NS		(30 * NSEC)

FIXTURE(kgo) {
	int unused;
};

FIXTURE_SETUP(kgo)
{
}

FIXTURE_TEARDOWN(kgo)
{
}

static bool module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/kgo", &st) == 0;
}

static const char *const bad_params[] = {
	"maxprocs=-1", "maxprocs=100000", "slice_ms=0", "handoff_us=0",
	"max_ms_per_cpu=1", "m_idle_ms=1", "max_inflight=0", "dev_mode=0777",
	"max_mem_mb=1000000000", "stack_pool_max=2000000",
};

TEST_F(kgo, unload_refused_while_open)
{
	struct kgo_info info = { 0 };
	int fd = open(KGO_DEVICE_PATH, O_RDWR);

	ASSERT_LE(0, fd) TH_LOG("open %s: %s", KGO_DEVICE_PATH, strerror(errno));
	EXPECT_EQ(-1, syscall(SYS_delete_module, "kgo", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) {
		TH_LOG("delete_module: %s", strerror(errno));
	}
	EXPECT_TRUE(module_loaded());
	/* Still working. */
	info.size = sizeof(info);
	EXPECT_EQ(0, ioctl(fd, KGO_IOC_GET_INFO, &info));
	close(fd);
}

TEST_F_TIMEOUT(kgo, unload_with_tasks_in_flight, 300)
{
	const char *path = getenv("KGO_MODULE") ?: DEFAULT_MODULE;
	struct kgo_task t[BATCH];
	struct kgo_completion c;
	unsigned int submitted = 0;
	uint64_t deadline;
	int fd, ret, err;

	/* Without a module to load back, unloading would break what follows. */
	if (access(path, R_OK))
		SKIP(return, "%s: %s (set KGO_MODULE)", path, strerror(errno));
	ASSERT_TRUE(module_loaded()) TH_LOG("kgo is not loaded");

	fd = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", KGO_DEVICE_PATH, strerror(errno));
	while (submitted < NTASKS) {
		for (unsigned int i = 0; i < BATCH; i++) {
			uint64_t tag = submitted + i;

			t[i] = (struct kgo_task){
				.kind = tag % 2 ? KGO_TASK_SPIN : KGO_TASK_NOP,
				.tag = tag,
				.args = { tag % 2 ? SPIN_NS : 0 },
			};
		}
		ret = submit(fd, t, BATCH);
		/* A max_inflight below NTASKS: a full fd is what we want anyway. */
		if (ret < 0 && errno == EAGAIN && submitted)
			break;
		ASSERT_LT(0, ret) TH_LOG("after %u tasks: %s", submitted, strerror(errno));
		submitted += ret;
	}
	/* Unread, most of them not even run. */
	ASSERT_EQ(0, close(fd));

	/*
	 * What is still running holds the module until it finishes: retry
	 * while the kernel says busy (O_NONBLOCK: EWOULDBLOCK, not a wait).
	 */
	deadline = now_ns() + UNLOAD_NS;
	for (;;) {
		ret = syscall(SYS_delete_module, "kgo", O_NONBLOCK);
		err = errno;
		if (!ret || (err != EBUSY && err != EAGAIN) || now_ns() > deadline)
			break;
		usleep(10000);
	}
	ASSERT_EQ(0, ret) TH_LOG("delete_module: %s", strerror(err));
	EXPECT_FALSE(module_loaded());

	/* Out-of-range parameters: refused, with nothing left loaded. */
	for (size_t i = 0; i < sizeof(bad_params) / sizeof(bad_params[0]); i++) {
		EXPECT_EQ(EINVAL, load_module(path, bad_params[i])) {
			TH_LOG("%s", bad_params[i]);
		}
		EXPECT_FALSE(module_loaded());
	}
	err = load_module(path, "");
	ASSERT_EQ(0, err) TH_LOG("finit_module %s: %s", path, strerror(err));

	/* devtmpfs makes the node as misc_register() returns; allow a little. */
	deadline = now_ns() + DEVICE_NS;
	while ((fd = open(KGO_DEVICE_PATH, O_RDWR)) < 0 && errno == ENOENT &&
	       now_ns() < deadline)
		usleep(10000);
	ASSERT_LE(0, fd) TH_LOG("open %s after reload: %s", KGO_DEVICE_PATH, strerror(errno));

	/* The new module works. */
	t[0] = (struct kgo_task){ .kind = KGO_TASK_NOP, .tag = 42 };
	ASSERT_EQ(1, submit(fd, t, 1)) TH_LOG("%s", strerror(errno));
	{
		struct kgo_wait w = {
			.size = sizeof(w),
			.min_complete = 1,
			.timeout_ns = WAIT_NS,
		};

		ASSERT_EQ(0, ioctl(fd, KGO_IOC_WAIT, &w)) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(1, w.ready);
	}
	ASSERT_EQ(sizeof(c), read(fd, &c, sizeof(c)));
	EXPECT_EQ(42, c.tag);
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(0, c.result);
	close(fd);
}

TEST_HARNESS_MAIN
