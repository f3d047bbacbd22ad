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
#include <linux/sched/signal.h>
#include <linux/thread_info.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>

#include <linux/kgo.h>
#include "budget.h"
#include "g.h"
#include "ioctl.h"
#include "ring.h"
#include "sched.h"
#include "session.h"
#include "stats.h"

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
	/*
	 * As clone3() and openat2() do: a struct longer than a page is not
	 * a newer version of ours, and checking that its tail is zero would
	 * read up to 4 GiB of user memory.
	 */
	if (size > PAGE_SIZE)
		return -E2BIG;
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
	BUILD_BUG_ON(offsetofend(struct kgo_info, mem_budget) != KGO_INFO_SIZE_VER1);
	BUILD_BUG_ON(sizeof(info) % sizeof(__u64));

	ret = kgo_copy_struct_in(&info, sizeof(info), KGO_INFO_SIZE_VER0,
				 uarg, &usize);
	if (ret)
		return ret;
	if (info.flags || info.__reserved)
		return -EINVAL;

	info.abi_version = KGO_ABI_VERSION;
	info.nr_procs = READ_ONCE(kgo_sched.gomaxprocs);
	info.stack_size = THREAD_SIZE;
	info.task_size = sizeof(struct kgo_task);
	info.completion_size = sizeof(struct kgo_completion);
	info.mem_budget = kgo_budget_bytes();
	return kgo_copy_struct_out(uarg, &info, sizeof(info), usize);
}

/* Descriptors are read one by one; a larger size than this is nonsense. */
#define KGO_TASK_SIZE_MAX	PAGE_SIZE
/* Inject each chunk of a batch, so that work starts while we copy. */
#define KGO_SUBMIT_CHUNK	128

static long kgo_ioctl_submit(struct kgo_session *s, void __user *uarg)
{
	struct kgo_gcache gc = {};
	struct kgo_gqueue q = {};
	struct kgo_submit sub;
	struct kgo_task t;
	u32 usize, i, n = 0, chunk = 0;
	long ret;

	ret = kgo_copy_struct_in(&sub, sizeof(sub), sizeof(sub), uarg, &usize);
	if (ret)
		return ret;
	if (sub.flags)
		return -EINVAL;
	if (sub.task_size < offsetofend(struct kgo_task, __reserved))
		return -EINVAL;
	if (sub.task_size > KGO_TASK_SIZE_MAX)
		return -E2BIG;

	for (i = 0; i < sub.nr; i++) {
		const void __user *ut = u64_to_user_ptr(sub.tasks + (u64)i * sub.task_size);
		struct kgo_g *g;

		/* A batch can be 16 M tasks long: SIGKILL must end it. */
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}

		ret = copy_struct_from_user(&t, sizeof(t), ut, sub.task_size);
		if (ret)
			break;
		g = kgo_session_submit_one(s, &t, &gc);
		if (IS_ERR(g)) {
			ret = PTR_ERR(g);
			break;
		}
		n++;
		if (!g) {	/* run inline, and completed */
			if (!(n % KGO_SUBMIT_CHUNK))
				cond_resched();
			continue;
		}
		kgo_gqueue_push_back(&q, g);
		if (++chunk == KGO_SUBMIT_CHUNK) {
			kgo_feed_inject(&s->feed, &q, chunk);
			chunk = 0;
			cond_resched();
		}
	}
	kgo_feed_inject(&s->feed, &q, chunk);
	kgo_gcache_drain(&gc);
	/* Accepted tasks are never undone: report them, not the error. */
	return n ? n : ret;
}

static long kgo_ioctl_wait(struct kgo_session *s, void __user *uarg)
{
	struct kgo_wait w;
	u32 usize;
	long ret;

	ret = kgo_copy_struct_in(&w, sizeof(w), sizeof(w), uarg, &usize);
	if (ret)
		return ret;
	if (w.flags)
		return -EINVAL;
	ret = kgo_session_wait(s, w.min_complete, w.timeout_ns, &w.ready);
	if (kgo_copy_struct_out(uarg, &w, sizeof(w), usize))
		return -EFAULT;
	return ret;
}

static long kgo_ioctl_cancel(struct kgo_session *s, void __user *uarg)
{
	struct kgo_cancel c;
	u32 usize;
	long ret;

	ret = kgo_copy_struct_in(&c, sizeof(c), sizeof(c), uarg, &usize);
	if (ret)
		return ret;
	if ((c.flags & ~(KGO_CANCEL_ALL | KGO_CANCEL_RUNNING)) || c.__reserved)
		return -EINVAL;
	c.cancelled = kgo_session_cancel(s, c.flags & KGO_CANCEL_ALL, c.tag,
					 c.flags & KGO_CANCEL_RUNNING);
	return kgo_copy_struct_out(uarg, &c, sizeof(c), usize);
}

static long kgo_ioctl_ring_setup(struct kgo_session *s, void __user *uarg)
{
	struct kgo_ring_params p;
	struct kgo_ring *r;
	u32 usize;
	long ret;

	BUILD_BUG_ON(sizeof(p) % sizeof(__u64));
	ret = kgo_copy_struct_in(&p, sizeof(p), sizeof(p), uarg, &usize);
	if (ret)
		return ret;
	mutex_lock(&s->setup_lock);
	r = kgo_ring_create(s, &p);
	if (IS_ERR(r)) {
		ret = PTR_ERR(r);
		goto out;
	}
	/* The caller learns the ring before the fd has it: it can have no other. */
	ret = -EFAULT;
	if (kgo_copy_struct_out(uarg, &p, sizeof(p), usize))
		goto err_destroy;
	/* Its poller before the fd has it: a failed start undoes it all. */
	if (p.flags & KGO_RING_SQPOLL) {
		ret = kgo_sqpoll_start(r);
		if (ret)
			goto err_destroy;
	}
	ret = kgo_ring_install(s, r);	/* cannot fail: setup_lock */
	goto out;
err_destroy:
	kgo_ring_destroy(r);
out:
	mutex_unlock(&s->setup_lock);
	return ret;
}

static long kgo_ioctl_enter(struct kgo_session *s, void __user *uarg)
{
	struct kgo_enter e;
	u32 usize;
	long ret;

	ret = kgo_copy_struct_in(&e, sizeof(e), sizeof(e), uarg, &usize);
	if (ret)
		return ret;
	return kgo_ring_enter(s, &e);
}

static long kgo_ioctl_stats(void __user *uarg)
{
	struct kgo_proc_stats ps;
	struct kgo_stats st;
	u32 usize, i, n;
	long ret;

	ret = kgo_copy_struct_in(&st, sizeof(st), sizeof(st), uarg, &usize);
	if (ret)
		return ret;
	if (st.flags || st.__reserved)
		return -EINVAL;
	if (st.procs_max && st.proc_size < KGO_PROC_STATS_SIZE_VER0)
		return -EINVAL;

	kgo_stats_global(&st);
	/* The Ps in use, in id order: those of offline CPUs are left out. */
	for (i = 0, n = 0; i < kgo_sched.nprocs; i++) {
		void __user *up = u64_to_user_ptr(st.procs + (u64)n * st.proc_size);

		if (!kgo_stats_proc(i, &ps))
			continue;
		if (n < st.procs_max &&
		    copy_to_user(up, &ps, min_t(size_t, sizeof(ps), st.proc_size)))
			return -EFAULT;
		n++;
	}
	st.nr_procs = n;
	return kgo_copy_struct_out(uarg, &st, sizeof(st), usize);
}

/*
 * GET_INFO needs no session: @file may be NULL there, which lets the
 * KUnit suite call this directly.
 */
long kgo_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kgo_session *s = file ? file->private_data : NULL;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KGO_IOC_GET_INFO:
		return kgo_ioctl_get_info(uarg);
	case KGO_IOC_SUBMIT:
		return s ? kgo_ioctl_submit(s, uarg) : -EBADFD;
	case KGO_IOC_WAIT:
		return s ? kgo_ioctl_wait(s, uarg) : -EBADFD;
	case KGO_IOC_CANCEL:
		return s ? kgo_ioctl_cancel(s, uarg) : -EBADFD;
	case KGO_IOC_STATS:
		return kgo_ioctl_stats(uarg);
	case KGO_IOC_RING_SETUP:
		return s ? kgo_ioctl_ring_setup(s, uarg) : -EBADFD;
	case KGO_IOC_ENTER:
		return s ? kgo_ioctl_enter(s, uarg) : -EBADFD;
	default:
		return -ENOTTY;
	}
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ioctl);
