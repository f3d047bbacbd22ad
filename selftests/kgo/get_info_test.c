// SPDX-License-Identifier: GPL-2.0
/*
 * KGO_IOC_GET_INFO through /dev/kgo, and the argument convention every
 * kgo ioctl shares: NULL pointer, unknown number, short and long sizes,
 * unknown flags and reserved fields.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

KGO_FIXTURE(kgo)

TEST_F(kgo, get_info)
{
	struct kgo_info info = { .size = sizeof(info) };

	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_EQ(KGO_ABI_VERSION, info.abi_version);
	EXPECT_EQ(sysconf(_SC_NPROCESSORS_ONLN), info.nr_procs);
	/* THREAD_SIZE: a power of two of at least one page. */
	EXPECT_LE(4096, info.stack_size);
	EXPECT_EQ(0, info.stack_size & (info.stack_size - 1));
}

/* The module's version: MODULE_VERSION's, which sysfs shows. */
TEST_F(kgo, get_info_version)
{
	struct kgo_info info = { .size = sizeof(info) };
	unsigned int major, minor, patch;
	FILE *f = fopen("/sys/module/kgo/version", "r");

	ASSERT_NE(NULL, f) TH_LOG("no /sys/module/kgo/version: %s", strerror(errno));
	ASSERT_EQ(3, fscanf(f, "%u.%u.%u", &major, &minor, &patch));
	fclose(f);
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	EXPECT_EQ(KGO_VERSION_CODE(major, minor, patch), info.version);
	EXPECT_NE(0, info.version);
	/* Its reserved neighbour is input, and must be 0. */
	info.__reserved2 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
}

/* The memory budget: max_mem_mb, by default a quarter of RAM in MiB. */
TEST_F(kgo, get_info_mem_budget)
{
	struct kgo_info info = { .size = sizeof(info) };
	unsigned long long ram_mb = (unsigned long long)sysconf(_SC_PHYS_PAGES) *
				    sysconf(_SC_PAGESIZE) >> 20;
	unsigned long long mb = 0;
	FILE *f = fopen("/sys/module/kgo/parameters/max_mem_mb", "r");

	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%llu", &mb));
	fclose(f);
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	EXPECT_EQ((mb ? mb : ram_mb / 4) << 20, info.mem_budget);
	EXPECT_GE(ram_mb << 20, info.mem_budget);
}

TEST_F(kgo, get_info_old_size)
{
	struct kgo_info info = { .size = KGO_INFO_SIZE_VER0 };

	info.stack_size = 0xdeadbeef;
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	EXPECT_EQ(KGO_ABI_VERSION, info.abi_version);
	EXPECT_EQ(0xdeadbeef, info.stack_size);
}

TEST_F(kgo, null_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_GET_INFO, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(kgo, bad_number)
{
	struct kgo_info info = { .size = sizeof(info) };

	EXPECT_EQ(-1, ioctl(self->fd, _IO(KGO_IOC_MAGIC, 0xff), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(KGO_IOC_MAGIC, 0, struct kgo_info), &info));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(kgo, short_size)
{
	static const uint32_t sizes[] = { 0, 4, 8, KGO_INFO_SIZE_VER0 - 1 };
	struct kgo_info info;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizes[i];
		EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
		EXPECT_EQ(EINVAL, errno) TH_LOG("size %u", sizes[i]);
	}
}

TEST_F(kgo, long_size)
{
	struct {
		struct kgo_info info;
		uint64_t newer_field;
	} big;

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	EXPECT_EQ(0, ioctl(self->fd, KGO_IOC_GET_INFO, &big));
	EXPECT_EQ(KGO_ABI_VERSION, big.info.abi_version);

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	big.newer_field = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_GET_INFO, &big));
	EXPECT_EQ(E2BIG, errno);
}

TEST_F(kgo, unknown_flags)
{
	static const uint32_t flags[] = { 1, 0x80000000u, ~0u };
	struct kgo_info info;

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		info.flags = flags[i];
		EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
		EXPECT_EQ(EINVAL, errno) TH_LOG("flags %#x", flags[i]);
	}
}

TEST_F(kgo, reserved_nonzero)
{
	struct kgo_info info = { .size = sizeof(info), .__reserved = 1 };

	EXPECT_EQ(-1, ioctl(self->fd, KGO_IOC_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
}

TEST_HARNESS_MAIN
