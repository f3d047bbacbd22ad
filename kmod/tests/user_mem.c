// SPDX-License-Identifier: GPL-2.0
/*
 * Real user memory for KUnit cases that exercise user-facing code.
 *
 * KUnit runs a module's suites from the module notifier, in the context
 * of the process that loads the module, but each case runs in a kthread
 * with no mm. Suite init takes a reference on the loader's mm; a case
 * adopts it with kthread_use_mm(), maps a page, and so hands the code
 * under test a genuine __user pointer that faults and checks like any
 * other.
 */

#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>

#include "user_mem.h"

static struct mm_struct *kgo_test_mm;

int kgo_test_user_mem_init(void)
{
	if (!current->mm)
		return -ENODEV;	/* built in, or loaded by a kernel thread */
	mmget(current->mm);
	kgo_test_mm = current->mm;
	return 0;
}

void kgo_test_user_mem_exit(void)
{
	if (kgo_test_mm)
		mmput(kgo_test_mm);
	kgo_test_mm = NULL;
}

/*
 * Copies @len bytes of @buf to a fresh user page, calls @fn with its
 * address, and copies the page back into @buf. With @buf NULL, @fn gets
 * address 0. Returns what @fn returns, or a negative errno if the set-up
 * failed (which a caller cannot tell apart, so callers expect specific
 * results, never just "an error").
 *
 * Nothing here may abort the calling kthread between use and unuse of
 * the mm, hence no KUNIT_ASSERT.
 */
long kgo_test_user_call(long (*fn)(unsigned long uaddr, void *arg), void *arg,
			void *buf, size_t len)
{
	unsigned long addr;
	long ret;

	if (!kgo_test_mm || len > PAGE_SIZE)
		return -EINVAL;

	kthread_use_mm(kgo_test_mm);
	if (!buf) {
		ret = fn(0, arg);
		goto out;
	}
	addr = vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, 0);
	if (IS_ERR_VALUE(addr)) {
		ret = (long)addr;
		goto out;
	}
	if (copy_to_user((void __user *)addr, buf, len)) {
		ret = -EIO;
	} else {
		ret = fn(addr, arg);
		if (copy_from_user(buf, (void __user *)addr, len))
			ret = -EIO;
	}
	vm_munmap(addr, PAGE_SIZE);
out:
	kthread_unuse_mm(kgo_test_mm);
	return ret;
}
