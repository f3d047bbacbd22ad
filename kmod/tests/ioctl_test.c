// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_ioctl: the ioctl argument convention of uapi/linux/kgo.h, checked
 * through the real ioctl entry point with real user pointers.
 */

#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/thread_info.h>

#include <kgo.h>
#include <linux/kgo.h>
#include "compat.h"
#include "ioctl.h"
#include "tests/user_mem.h"

static long call_ioctl(unsigned long uaddr, void *arg)
{
	return kgo_ioctl(NULL, *(unsigned int *)arg, uaddr);
}

/* Runs @cmd on a user copy of @buf (or on NULL), copying results back. */
static long user_ioctl(unsigned int cmd, void *buf, size_t len)
{
	return kgo_test_user_call(call_ioctl, &cmd, buf, len);
}

static void kgo_ioctl_get_info_test(struct kunit *test)
{
	struct kgo_info info = { .size = sizeof(info) };

	KUNIT_ASSERT_EQ(test, 0, user_ioctl(KGO_IOC_GET_INFO, &info, sizeof(info)));
	KUNIT_EXPECT_EQ(test, info.size, (u32)sizeof(info));
	KUNIT_EXPECT_EQ(test, info.flags, 0u);
	KUNIT_EXPECT_EQ(test, info.abi_version, (u32)KGO_ABI_VERSION);
	KUNIT_EXPECT_EQ(test, info.nr_procs, num_online_cpus());
	KUNIT_EXPECT_EQ(test, info.stack_size, (u32)THREAD_SIZE);
}

/* A caller built against the first version gets nothing written past it. */
static void kgo_ioctl_get_info_old_size_test(struct kunit *test)
{
	struct kgo_info info = { .size = KGO_INFO_SIZE_VER0 };

	info.stack_size = 0xdeadbeef;
	KUNIT_ASSERT_EQ(test, 0, user_ioctl(KGO_IOC_GET_INFO, &info, sizeof(info)));
	KUNIT_EXPECT_EQ(test, info.abi_version, (u32)KGO_ABI_VERSION);
	KUNIT_EXPECT_EQ(test, info.stack_size, 0xdeadbeefu);
}

/*
 * STATS from a binary built before struct kgo_stats grew: accepted, and
 * the fields it does not know are not written.
 */
static void kgo_ioctl_stats_old_size_test(struct kunit *test)
{
	struct kgo_stats *st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, st);
	st->size = KGO_STATS_SIZE_VER0;
	st->sqpoll_ns = 0x5a5a5a5a;
	st->sqpoll_tasks = 0x5a5a5a5a;
	KUNIT_ASSERT_EQ(test, 0, user_ioctl(KGO_IOC_STATS, st, sizeof(*st)));
	KUNIT_EXPECT_EQ(test, st->nr_procs, num_online_cpus());
	KUNIT_EXPECT_EQ(test, st->sqpoll_ns, 0x5a5a5a5aULL);
	KUNIT_EXPECT_EQ(test, st->sqpoll_tasks, 0x5a5a5a5aULL);

	st->size = KGO_STATS_SIZE_VER0 - 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, user_ioctl(KGO_IOC_STATS, st, sizeof(*st)));
}

/* The ioctls that need an fd's session say so, whatever the argument. */
static void kgo_ioctl_no_session_test(struct kunit *test)
{
	static const unsigned int cmds[] = {
		KGO_IOC_SUBMIT, KGO_IOC_WAIT, KGO_IOC_CANCEL, KGO_IOC_RING_SETUP,
		KGO_IOC_ENTER,
	};
	struct kgo_wait w = { .size = sizeof(w) };
	int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		KUNIT_EXPECT_EQ_MSG(test, -EBADFD, user_ioctl(cmds[i], &w, sizeof(w)),
				    "cmd %#x", cmds[i]);
}

static void kgo_ioctl_null_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, -EFAULT, user_ioctl(KGO_IOC_GET_INFO, NULL, 0));
}

static void kgo_ioctl_bad_number_test(struct kunit *test)
{
	struct kgo_info info = { .size = sizeof(info) };

	KUNIT_EXPECT_EQ(test, -ENOTTY,
			user_ioctl(_IO(KGO_IOC_MAGIC, 0xff), &info, sizeof(info)));
	KUNIT_EXPECT_EQ(test, -ENOTTY, user_ioctl(_IO('x', 0), &info, sizeof(info)));
	/* The size is in the struct, not the number: _IOWR is another ioctl. */
	KUNIT_EXPECT_EQ(test, -ENOTTY,
			user_ioctl(_IOWR(KGO_IOC_MAGIC, 0x00, struct kgo_info),
				   &info, sizeof(info)));
}

static void kgo_ioctl_short_size_test(struct kunit *test)
{
	static const u32 sizes[] = { 0, 4, 8, KGO_INFO_SIZE_VER0 - 1 };
	struct kgo_info info;
	int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizes[i];
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    user_ioctl(KGO_IOC_GET_INFO, &info, sizeof(info)),
				    "size %u", sizes[i]);
	}
}

/* A newer caller's larger struct: fine while its tail is zero. */
static void kgo_ioctl_long_size_test(struct kunit *test)
{
	struct {
		struct kgo_info info;
		u64 newer_field;
	} big;

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	KUNIT_EXPECT_EQ(test, 0, user_ioctl(KGO_IOC_GET_INFO, &big, sizeof(big)));
	KUNIT_EXPECT_EQ(test, big.info.abi_version, (u32)KGO_ABI_VERSION);

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	big.newer_field = 1;
	KUNIT_EXPECT_EQ(test, -E2BIG, user_ioctl(KGO_IOC_GET_INFO, &big, sizeof(big)));
	KUNIT_EXPECT_EQ(test, big.info.abi_version, 0u);
}

static void kgo_ioctl_unknown_flags_test(struct kunit *test)
{
	static const u32 flags[] = { 1, 0x80000000u, ~0u };
	struct kgo_info info;
	int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		info.flags = flags[i];
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    user_ioctl(KGO_IOC_GET_INFO, &info, sizeof(info)),
				    "flags %#x", flags[i]);
		KUNIT_EXPECT_EQ(test, info.abi_version, 0u);
	}
}

static void kgo_ioctl_reserved_test(struct kunit *test)
{
	struct kgo_info info = { .size = sizeof(info), .__reserved = 1 };

	KUNIT_EXPECT_EQ(test, -EINVAL, user_ioctl(KGO_IOC_GET_INFO, &info, sizeof(info)));
}

static int kgo_ioctl_suite_init(struct kunit_suite *suite)
{
	return kgo_test_user_mem_init();
}

static void kgo_ioctl_suite_exit(struct kunit_suite *suite)
{
	kgo_test_user_mem_exit();
}

static struct kunit_case kgo_ioctl_cases[] = {
	KUNIT_CASE(kgo_ioctl_get_info_test),
	KUNIT_CASE(kgo_ioctl_get_info_old_size_test),
	KUNIT_CASE(kgo_ioctl_stats_old_size_test),
	KUNIT_CASE(kgo_ioctl_no_session_test),
	KUNIT_CASE(kgo_ioctl_null_test),
	KUNIT_CASE(kgo_ioctl_bad_number_test),
	KUNIT_CASE(kgo_ioctl_short_size_test),
	KUNIT_CASE(kgo_ioctl_long_size_test),
	KUNIT_CASE(kgo_ioctl_unknown_flags_test),
	KUNIT_CASE(kgo_ioctl_reserved_test),
	{}
};

static struct kunit_suite kgo_ioctl_suite = {
	.name = "kgo_ioctl",
	.suite_init = kgo_ioctl_suite_init,
	.suite_exit = kgo_ioctl_suite_exit,
	.test_cases = kgo_ioctl_cases,
};

kunit_test_suites(&kgo_ioctl_suite);

MODULE_LICENSE("GPL");
KGO_MODULE_IMPORT();
MODULE_DESCRIPTION("KUnit suites for kgo");
KGO_MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
