/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kgo: goroutines inside the Linux kernel -- the /dev/kgo ioctl ABI.
 *
 * Every ioctl takes a pointer to a struct that starts with
 * "__u32 size; __u32 flags;". @size is sizeof() the struct as the caller
 * was compiled with, so that old binaries keep working on new modules
 * and new binaries on old modules:
 *
 *  - a @size below the struct's first version gives -EINVAL;
 *  - a @size larger than the module knows is accepted if every byte past
 *    what the module knows is zero, and gives -E2BIG otherwise;
 *  - @flags bits the module does not know give -EINVAL, never silently
 *    ignored; fields named __reserved must be zero (-EINVAL);
 *  - output fields are written back only within @size bytes.
 *
 * Errors common to every ioctl: -EFAULT for a bad pointer, -ENOTTY for
 * an unknown ioctl number.
 */
#ifndef _UAPI_LINUX_KGO_H
#define _UAPI_LINUX_KGO_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KGO_DEVICE_PATH		"/dev/kgo"

/* Bumped for every incompatible change; additions extend structs instead. */
#define KGO_ABI_VERSION		1

/* Unassigned in Documentation/userspace-api/ioctl/ioctl-number.rst. */
#define KGO_IOC_MAGIC		0xB8

/*
 * The ioctl numbers do not encode a size (_IO, not _IOWR): the size
 * travels in the struct, which is what lets a struct grow.
 */
#define KGO_IOC_GET_INFO	_IO(KGO_IOC_MAGIC, 0x00)

/**
 * struct kgo_info - argument of KGO_IOC_GET_INFO
 * @size: in: sizeof(struct kgo_info) as the caller knows it, at least
 *	  %KGO_INFO_SIZE_VER0
 * @flags: in: must be 0
 * @abi_version: out: %KGO_ABI_VERSION of the loaded module
 * @nr_procs: out: the number of Ps the scheduler runs goroutines on
 *	      (kgo's GOMAXPROCS: one per online CPU)
 * @stack_size: out: bytes of kernel stack each running goroutine holds
 * @__reserved: must be 0
 *
 * Describes the loaded module so that a tool can check it speaks the
 * same ABI before it submits anything.
 */
struct kgo_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 nr_procs;
	__u32 stack_size;
	__u32 __reserved;
};

#define KGO_INFO_SIZE_VER0	16	/* up to and including @nr_procs */

#endif /* _UAPI_LINUX_KGO_H */
