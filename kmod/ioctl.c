// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/kgo ioctls, and the size/flags argument convention that
 * uapi/linux/kgo.h promises: the kernel reads as much of the caller's
 * struct as both sides know, insists that anything newer than the
 * module is zero, and writes back no more than the caller's size. One
 * table (kgo_ioctl_ops) says what each ioctl's struct is and its first
 * version's size; kgo_ioctl() does the convention once for them all.
 */

#include <linux/capability.h>
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
 * One ioctl call, after the preamble: @arg is the caller's struct read
 * in, @usize the caller's size of it, which bounds what
 * kgo_ioctl_respond() writes back.
 */
struct kgo_ioctl_call {
	struct kgo_session *s;	/* NULL for GET_INFO from the KUnit suite */
	void __user *uarg;
	void *arg;
	u32 usize;
	u32 ksize;		/* sizeof() the struct, as the module knows it */
};

/* Writes @c's struct back, no more of it than the caller's size. */
static int kgo_ioctl_respond(const struct kgo_ioctl_call *c)
{
	if (copy_to_user(c->uarg, c->arg, min(c->ksize, c->usize)))
		return -EFAULT;
	return 0;
}

static long kgo_ioctl_get_info(struct kgo_ioctl_call *c)
{
	struct kgo_info *info = c->arg;

	BUILD_BUG_ON(offsetofend(struct kgo_info, mem_budget) != KGO_INFO_SIZE_VER1);
	BUILD_BUG_ON(offsetofend(struct kgo_info, __reserved2) != KGO_INFO_SIZE_VER2);
	BUILD_BUG_ON(sizeof(*info) % sizeof(__u64));
	BUILD_BUG_ON(offsetofend(struct kgo_completion, ended_ns) != KGO_COMPLETION_SIZE_VER0);

	if (info->flags || info->__reserved || info->__reserved2)
		return -EINVAL;
	info->abi_version = KGO_ABI_VERSION;
	info->nr_procs = READ_ONCE(kgo_sched.gomaxprocs);
	info->stack_size = THREAD_SIZE;
	info->task_size = sizeof(struct kgo_task);
	info->completion_size = sizeof(struct kgo_completion);
	info->mem_budget = kgo_budget_bytes();
	info->version = KGO_VERSION_CODE(KGO_VERSION_MAJ, KGO_VERSION_MIN, KGO_VERSION_PAT);
	return kgo_ioctl_respond(c);
}

/* Descriptors are read one by one; a larger size than this is nonsense. */
#define KGO_TASK_SIZE_MAX	PAGE_SIZE
/* Inject each chunk of a batch, so that work starts while we copy. */
#define KGO_SUBMIT_CHUNK	128

static long kgo_ioctl_submit(struct kgo_ioctl_call *c)
{
	const struct kgo_submit *sub = c->arg;
	struct kgo_session *s = c->s;
	struct kgo_gcache gc = {};
	struct kgo_gqueue q = {};
	struct kgo_task t;
	u32 i, n = 0, chunk = 0;
	long ret = 0;

	BUILD_BUG_ON(offsetofend(struct kgo_task, __reserved) != KGO_TASK_SIZE_VER0);

	if (sub->flags)
		return -EINVAL;
	if (sub->task_size < KGO_TASK_SIZE_VER0)
		return -EINVAL;
	if (sub->task_size > KGO_TASK_SIZE_MAX)
		return -E2BIG;

	for (i = 0; i < sub->nr; i++) {
		const void __user *ut = u64_to_user_ptr(sub->tasks + (u64)i * sub->task_size);
		struct kgo_g *g;

		/* A batch can be 16 M tasks long: SIGKILL must end it. */
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}

		ret = copy_struct_from_user(&t, sizeof(t), ut, sub->task_size);
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

static long kgo_ioctl_wait(struct kgo_ioctl_call *c)
{
	struct kgo_wait *w = c->arg;
	long ret;

	if (w->flags)
		return -EINVAL;
	ret = kgo_session_wait(c->s, w->min_complete, w->timeout_ns, &w->ready);
	if (kgo_ioctl_respond(c))
		return -EFAULT;
	return ret;
}

static long kgo_ioctl_cancel(struct kgo_ioctl_call *c)
{
	struct kgo_cancel *cn = c->arg;

	if ((cn->flags & ~(KGO_CANCEL_ALL | KGO_CANCEL_RUNNING)) || cn->__reserved)
		return -EINVAL;
	cn->cancelled = kgo_session_cancel(c->s, cn->flags & KGO_CANCEL_ALL, cn->tag,
					   cn->flags & KGO_CANCEL_RUNNING);
	return kgo_ioctl_respond(c);
}

static long kgo_ioctl_ring_setup(struct kgo_ioctl_call *c)
{
	struct kgo_ring_params *p = c->arg;
	struct kgo_session *s = c->s;
	struct kgo_ring *r;
	long ret;

	BUILD_BUG_ON(sizeof(*p) % sizeof(__u64));
	BUILD_BUG_ON(offsetofend(struct kgo_ring_offsets, __reserved) !=
		     KGO_RING_OFFSETS_SIZE_VER0);
	mutex_lock(&s->setup_lock);
	r = kgo_ring_create(s, p);
	if (IS_ERR(r)) {
		ret = PTR_ERR(r);
		goto out;
	}
	/* The caller learns the ring before the fd has it: it can have no other. */
	ret = kgo_ioctl_respond(c);
	if (ret)
		goto err_destroy;
	/* Its poller before the fd has it: a failed start undoes it all. */
	if (p->flags & KGO_RING_SQPOLL) {
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

static long kgo_ioctl_enter(struct kgo_ioctl_call *c)
{
	return kgo_ring_enter(c->s, c->arg);
}

static long kgo_ioctl_stats(struct kgo_ioctl_call *c)
{
	struct kgo_stats *st = c->arg;
	struct kgo_proc_stats ps;
	u32 i, n;

	BUILD_BUG_ON(offsetofend(struct kgo_stats, sqpoll_tasks) != KGO_STATS_SIZE_VER1);
	BUILD_BUG_ON(offsetofend(struct kgo_proc_stats, spinning) != KGO_PROC_STATS_SIZE_VER0);

	if (st->flags || st->__reserved)
		return -EINVAL;
	if (st->procs_max && st->proc_size < KGO_PROC_STATS_SIZE_VER0)
		return -EINVAL;

	/*
	 * Everyone's figures, and sched.lock taken for them, are for an
	 * administrator: another user's goroutines, SQPOLL time and
	 * latencies are not the caller's to see, and many callers looping
	 * on STATS would contend the scheduler's hottest lock. Others see
	 * their own figures. No audit record: being refused the global
	 * view is no denial.
	 */
	if (c->s && !has_capability_noaudit(current, CAP_SYS_ADMIN)) {
		kgo_stats_own(c->s->user, st);
		return kgo_ioctl_respond(c);
	}
	kgo_stats_global(st);
	/* The ring layer's part of the record: the SQPOLL threads' time. */
	kgo_sqpoll_stats(&st->sqpoll_ns, &st->sqpoll_tasks);
	/* The Ps in use, in id order: those of offline CPUs are left out. */
	for (i = 0, n = 0; i < kgo_sched.nprocs; i++) {
		void __user *up = u64_to_user_ptr(st->procs + (u64)n * st->proc_size);

		if (!kgo_stats_proc(i, &ps))
			continue;
		if (n < st->procs_max &&
		    copy_to_user(up, &ps, min_t(size_t, sizeof(ps), st->proc_size)))
			return -EFAULT;
		n++;
	}
	st->nr_procs = n;
	return kgo_ioctl_respond(c);
}

/*
 * The ioctls, in one table (iommufd's idea). An argument struct may
 * have grown since its first version, and a binary built against any
 * header since must keep working: @min_size is the size of the first
 * version, offsetofend() of the last field it had, which the uapi names
 * KGO_*_SIZE_VER0 (the two are checked against each other at build
 * time). Fields an older caller's struct lacks read as zero, which
 * must mean what that caller meant: nothing asked for.
 */
struct kgo_ioctl_op {
	long (*fn)(struct kgo_ioctl_call *c);
	unsigned int cmd;
	u32 size;		/* sizeof() the struct now */
	u32 min_size;		/* sizeof() its first version */
	bool session;		/* needs the fd's session */
};

#define KGO_IOCTL_OP(_cmd, _fn, _struct, _last, _ver0, _session)		\
	[_IOC_NR(_cmd)] = {							\
		.fn = _fn,							\
		.cmd = _cmd,							\
		.size = sizeof(_struct),					\
		.min_size = offsetofend(_struct, _last) +			\
			    BUILD_BUG_ON_ZERO(offsetofend(_struct, _last) != (_ver0)), \
		.session = _session,						\
	}

static const struct kgo_ioctl_op kgo_ioctl_ops[] = {
	KGO_IOCTL_OP(KGO_IOC_GET_INFO, kgo_ioctl_get_info, struct kgo_info,
		     nr_procs, KGO_INFO_SIZE_VER0, false),
	KGO_IOCTL_OP(KGO_IOC_SUBMIT, kgo_ioctl_submit, struct kgo_submit,
		     task_size, KGO_SUBMIT_SIZE_VER0, true),
	KGO_IOCTL_OP(KGO_IOC_WAIT, kgo_ioctl_wait, struct kgo_wait,
		     timeout_ns, KGO_WAIT_SIZE_VER0, true),
	KGO_IOCTL_OP(KGO_IOC_STATS, kgo_ioctl_stats, struct kgo_stats,
		     latency, KGO_STATS_SIZE_VER0, false),
	KGO_IOCTL_OP(KGO_IOC_CANCEL, kgo_ioctl_cancel, struct kgo_cancel,
		     __reserved, KGO_CANCEL_SIZE_VER0, true),
	KGO_IOCTL_OP(KGO_IOC_RING_SETUP, kgo_ioctl_ring_setup, struct kgo_ring_params,
		     __reserved, KGO_RING_PARAMS_SIZE_VER0, true),
	KGO_IOCTL_OP(KGO_IOC_ENTER, kgo_ioctl_enter, struct kgo_enter,
		     timeout_ns, KGO_ENTER_SIZE_VER0, true),
};

/* Room for any of their structs, read in by the preamble. */
union kgo_ioctl_buf {
	struct kgo_info info;
	struct kgo_submit submit;
	struct kgo_wait wait;
	struct kgo_stats stats;
	struct kgo_cancel cancel;
	struct kgo_ring_params ring_params;
	struct kgo_enter enter;
};

/*
 * The preamble every ioctl shares, then its handler. GET_INFO and STATS
 * need no session: @file may be NULL there, which lets the KUnit suite
 * call them directly.
 */
long kgo_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kgo_ioctl_call c = {
		.s = file ? file->private_data : NULL,
		.uarg = (void __user *)arg,
	};
	const struct kgo_ioctl_op *op;
	union kgo_ioctl_buf buf;
	u32 size;
	int ret;

	/* The whole number must match: one that encodes a size is another. */
	if (_IOC_TYPE(cmd) != KGO_IOC_MAGIC || _IOC_NR(cmd) >= ARRAY_SIZE(kgo_ioctl_ops))
		return -ENOTTY;
	op = &kgo_ioctl_ops[_IOC_NR(cmd)];
	if (op->cmd != cmd || !op->fn)
		return -ENOTTY;
	if (op->session && !c.s)
		return -EBADFD;

	if (get_user(size, (const u32 __user *)c.uarg))
		return -EFAULT;
	if (size < op->min_size)
		return -EINVAL;
	/*
	 * As clone3() and openat2() do: a struct longer than a page is not
	 * a newer version of ours, and checking that its tail is zero would
	 * read up to 4 GiB of user memory.
	 */
	if (size > PAGE_SIZE)
		return -E2BIG;
	/*
	 * Zero-fills what an older caller's struct lacks; -E2BIG when a
	 * newer caller's is longer and its tail is not zero.
	 */
	ret = copy_struct_from_user(&buf, op->size, c.uarg, size);
	if (ret)
		return ret;
	c.arg = &buf;
	c.usize = size;
	c.ksize = op->size;
	return op->fn(&c);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ioctl);
