// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/kgo ioctls, and the size/flags argument convention that
 * uapi/linux/kgo.h promises: the kernel reads as much of the caller's
 * struct as both sides know, insists that anything newer than the
 * module is zero, and writes back no more than the caller's size.
 */

#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/thread_info.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>

#include <linux/kgo.h>
#include "ioctl.h"
#include "sched.h"

/*
 * Reads a size/flags-form argument into @dst (@ksize bytes). @minsize is
 * the size of the struct's first version. On success *@usize is the
 * caller's size, which bounds what kgo_copy_struct_out() writes back.
 */
static int kgo_copy_struct_in(void *dst, size_t ksize, size_t minsize,
			      const void __user *src, u32 *usize)
{
	u32 size;
	int ret;

	if (get_user(size, (const u32 __user *)src))
		return -EFAULT;
	if (size < minsize)
		return -EINVAL;
	/* -E2BIG when the caller's struct is longer and its tail non-zero. */
	ret = copy_struct_from_user(dst, ksize, src, size);
	if (ret)
		return ret;
	*usize = size;
	return 0;
}

static int kgo_copy_struct_out(void __user *dst, const void *src,
			       size_t ksize, u32 usize)
{
	if (copy_to_user(dst, src, min_t(size_t, ksize, usize)))
		return -EFAULT;
	return 0;
}

static long kgo_ioctl_get_info(void __user *uarg)
{
	struct kgo_info info;
	u32 usize;
	int ret;

	BUILD_BUG_ON(offsetofend(struct kgo_info, nr_procs) != KGO_INFO_SIZE_VER0);
	BUILD_BUG_ON(sizeof(info) % sizeof(__u64));

	ret = kgo_copy_struct_in(&info, sizeof(info), KGO_INFO_SIZE_VER0,
				 uarg, &usize);
	if (ret)
		return ret;
	if (info.flags || info.__reserved)
		return -EINVAL;

	info.abi_version = KGO_ABI_VERSION;
	info.nr_procs = kgo_sched.nprocs;
	info.stack_size = THREAD_SIZE;
	return kgo_copy_struct_out(uarg, &info, sizeof(info), usize);
}

/*
 * @file is not looked at by the ioctls that do not need a session, which
 * lets the KUnit suite call this directly.
 */
long kgo_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KGO_IOC_GET_INFO:
		return kgo_ioctl_get_info(uarg);
	default:
		return -ENOTTY;
	}
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ioctl);
