// SPDX-License-Identifier: GPL-2.0
/*
 * The task catalogue of uapi/linux/kgo.h: what each kind checks at
 * submit and what its goroutine does.
 */

#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>

#include <kgo.h>
#include "compat.h"
#include "ctx.h"
#include "session.h"
#include "task.h"
#include "user.h"

/*
 * Nodes of a tree with @fanout children per node, @depth levels below
 * the root: 1 + f + f^2 + ... + f^depth. Returns max + 1 as soon as the
 * count passes @max, so that nothing overflows.
 */
u64 kgo_spawn_nodes(u64 fanout, u64 depth, u64 max)
{
	u64 level = 1, total = 1, d;

	for (d = 0; d < depth; d++) {
		if (level > max / fanout)
			return max + 1;
		level *= fanout;
		total += level;
		if (total > max)
			return max + 1;
	}
	return total;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_spawn_nodes);

/* CRC32C as iSCSI and ext4 define it: initial ~0, final xor ~0. */
u32 kgo_task_checksum(const void *buf, size_t len)
{
	return ~kgo_crc32c(~0U, buf, len);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_task_checksum);

/*
 * Bytes of user memory a CHECKSUM run inline reads at a time: small
 * enough for the stack, and no allocation for a task that holds none.
 */
#define KGO_INLINE_CHUNK	256
/* Between two looks at need_resched: a 1 MiB buffer is a few of them. */
#define KGO_INLINE_RESCHED	(64 * 1024)

static u64 kgo_task_spin(struct kgo_job *job, u64 ns)
{
	u64 start = ktime_get_ns(), now;

	/* CPU work: other goroutines wait; the kernel may still preempt. */
	do {
		cpu_relax();
		cond_resched();
		now = ktime_get_ns();
		job->err = kgo_ctx_err(&job->ctx);
	} while (now - start < ns && !job->err);
	return now - start;
}

/* One node of a SPAWN tree; its children wait on the frame's group. */
struct kgo_spawn_frame {
	struct kgo_job *job;
	u64 depth;			/* levels below this node */
	struct kgo_waitgroup wg;	/* its children */
};

static void kgo_spawn_run(struct kgo_job *job, u64 depth);

static void kgo_spawn_child(void *arg)
{
	struct kgo_spawn_frame *parent = arg;

	kgo_spawn_run(parent->job, parent->depth - 1);
	kgo_user_g_put(parent->job->s->user);
	kgo_wg_done(&parent->wg);	/* the parent frame may go now */
}

static void kgo_spawn_run(struct kgo_job *job, u64 depth)
{
	struct kgo_spawn_frame f = { .job = job, .depth = depth };
	u64 i, fanout = job->desc.args[0];

	atomic64_inc(&job->nodes);
	if (!depth)
		return;
	kgo_wg_init(&f.wg);
	kgo_wg_add(&f.wg, fanout);
	for (i = 0; i < fanout; i++) {
		struct kgo_user *u = job->s->user;
		s64 ret = kgo_ctx_err(&job->ctx);

		/*
		 * Cancelled: no more children (the tree's nodes are the
		 * partial result). Else the user's cap (user.c), then the
		 * memory budget (-ENOMEM).
		 */
		if (!ret && !kgo_user_g_get(u))
			ret = -EAGAIN;
		if (!ret) {
			ret = kgo_go(kgo_spawn_child, &f, GFP_KERNEL);
			if (ret < 0)
				kgo_user_g_put(u);
		}
		if (ret < 0) {
			WRITE_ONCE(job->err, (int)ret);
			kgo_wg_done(&f.wg);
		}
	}
	kgo_wg_wait(&f.wg);
}

/*
 * PINGPONG, SELECT and PINGPONG_HOG: the second goroutine and its
 * channels. Only the goroutine holding the token (PINGPONG_HOG) writes
 * count: the channel hand-offs order the two goroutines' writes.
 */
struct kgo_task_pair {
	struct kgo_chan *a, *b;
	struct kgo_ctx *ctx;	/* the job's */
	u64 n, gap_ns;
	u64 done;		/* round trips or values received */
	u64 loop, deadline;	/* PINGPONG_HOG: counts per turn, until when */
	u64 count;		/* PINGPONG_HOG: counts made */
	int err;
	struct kgo_waitgroup wg;
};

static void kgo_pong(void *arg)
{
	struct kgo_task_pair *pp = arg;
	u64 i, v;

	for (i = 0; i < pp->n && !pp->err; i++) {
		if (kgo_chan_recv(pp->a, &v, NULL, KGO_FOREVER) ||
		    kgo_chan_send(pp->b, &v, KGO_FOREVER))
			pp->err = -EPIPE;
	}
	kgo_wg_done(&pp->wg);
}

static void kgo_producer(void *arg)
{
	struct kgo_task_pair *pp = arg;
	u64 i;

	for (i = 0; i < pp->n; i++) {
		if (kgo_ctx_sleep(pp->ctx, pp->gap_ns) ||
		    kgo_chan_send(pp->a, &i, KGO_FOREVER))
			break;
	}
	kgo_wg_done(&pp->wg);
}

/*
 * PINGPONG_HOG's turn: Go's "*counter++" pp->loop times, a load and a
 * store each, with no kgo call. Every 1024 counts, cond_resched() and a
 * look at the job's context, neither of them a kgo call: the first is
 * what a kernel loop owes the kernel's scheduler (without it, on a
 * kernel without full preemption, the M that takes the hog's P could
 * not run on the CPU until the turn ended; Go's hogs are preempted
 * asynchronously), the second keeps a cancel prompt in a long turn.
 */
static void kgo_hog_turn(struct kgo_task_pair *pp)
{
	u64 i;

	for (i = 0; i < pp->loop; i++) {
		WRITE_ONCE(pp->count, READ_ONCE(pp->count) + 1);
		if (!(i & 1023)) {
			cond_resched();
			if (kgo_ctx_err(pp->ctx))
				break;
		}
	}
}

/* PINGPONG_HOG's partner: a turn per token received, until a close. */
static void kgo_hog_pong(void *arg)
{
	struct kgo_task_pair *pp = arg;
	bool ok;
	u64 v;

	/* A closed channel gives 0 with ok false: the end. */
	while (!kgo_chan_recv(pp->a, &v, &ok, KGO_FOREVER) && ok) {
		kgo_hog_turn(pp);
		if (kgo_chan_send(pp->b, &v, KGO_FOREVER))
			break;
	}
	kgo_wg_done(&pp->wg);
}

/* The task's goroutine: a turn, then the token over, until the deadline. */
static int kgo_hog_ping(struct kgo_task_pair *pp)
{
	bool ok;
	u64 v = 0;
	int err;

	while (ktime_get_ns() < pp->deadline) {
		err = kgo_ctx_err(pp->ctx);
		if (err)
			return err;
		kgo_hog_turn(pp);
		if (kgo_chan_send(pp->a, &v, KGO_FOREVER) ||
		    kgo_chan_recv(pp->b, &v, &ok, KGO_FOREVER) || !ok)
			return -EPIPE;
	}
	/* The partner waits in its receive: the close ends it. */
	kgo_chan_close(pp->a);
	return 0;
}

/* Runs @consumer against a second goroutine @partner over two channels. */
static int kgo_task_pair_run(struct kgo_job *job, kgo_func_t partner,
			     int (*consumer)(struct kgo_task_pair *pp))
{
	struct kgo_task_pair pp = {
		.ctx = &job->ctx, .n = job->desc.args[0], .gap_ns = job->desc.args[1],
	};
	struct kgo_user *u = job->s->user;
	int ret;

	if (job->desc.kind == KGO_TASK_PINGPONG_HOG) {
		/*
		 * From acceptance: a pair that starts late counts less. A
		 * ring with KGO_RING_NO_TIMES stamps no acceptance: from now.
		 */
		pp.deadline = (job->c.queued_ns ?: ktime_get_ns()) + job->desc.args[0];
		pp.loop = job->desc.args[1];
	}

	pp.a = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	pp.b = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	ret = -ENOMEM;
	if (IS_ERR(pp.a) || IS_ERR(pp.b))
		goto out;
	/* The partner is the user's goroutine too (user.c). */
	ret = -EAGAIN;
	if (!kgo_user_g_get(u))
		goto out;
	kgo_wg_init(&pp.wg);
	kgo_wg_add(&pp.wg, 1);
	if (kgo_go(partner, &pp, GFP_KERNEL) < 0) {
		kgo_user_g_put(u);
		ret = -ENOMEM;
		goto out;
	}
	ret = consumer(&pp);
	if (ret) {		/* unblock the partner */
		kgo_chan_close(pp.a);
		kgo_chan_close(pp.b);
	}
	/* Its work done: it exits without touching @pp or @u again. */
	kgo_wg_wait(&pp.wg);
	kgo_user_g_put(u);
	ret = ret ?: pp.err;
out:
	kgo_chan_destroy(pp.a);
	kgo_chan_destroy(pp.b);
	job->c.result = job->desc.kind == KGO_TASK_PINGPONG_HOG ? pp.count : pp.done;
	return ret;
}

static int kgo_ping(struct kgo_task_pair *pp)
{
	u64 i, v;

	for (i = 0; i < pp->n; i++) {
		int err = kgo_ctx_err(pp->ctx);

		/* On return, the caller closes the channels: pong ends. */
		if (err)
			return err;
		if (kgo_chan_send(pp->a, &i, KGO_FOREVER) ||
		    kgo_chan_recv(pp->b, &v, NULL, KGO_FOREVER) || v != i)
			return -EPIPE;
		pp->done = i + 1;
	}
	return 0;
}

static int kgo_select_consumer(struct kgo_task_pair *pp)
{
	struct kgo_select_case cs[2];
	u64 got = 0, v;
	int r;

	/* Checked at least every gap / 2: the select's timeout. */
	while (got < pp->n) {
		r = kgo_ctx_err(pp->ctx);
		if (r)
			return r;
		cs[0] = (struct kgo_select_case){
			.chan = pp->a, .dir = KGO_SELECT_RECV, .elem = &v,
		};
		cs[1] = (struct kgo_select_case){ .chan = pp->b, .dir = KGO_SELECT_RECV };
		r = kgo_select(cs, 2, pp->gap_ns / 2 + 1);
		if (r == 0) {
			if (v != got)
				return -EPIPE;
			pp->done = ++got;
		} else if (r != -ETIMEDOUT) {
			return r < 0 ? r : -EPIPE;
		}
	}
	return 0;
}

/*
 * The kinds' table: io_uring's opdef.c, for tasks. Each kind's argument
 * count, the ranges of its arguments, its run in a goroutine and, for
 * those that may run in the submitter, its run there.
 */

static int kgo_spin_validate(const struct kgo_task *t)
{
	return t->args[0] > KGO_SPIN_MAX_NS ? -EINVAL : 0;
}

static void kgo_spin_job(struct kgo_job *job)
{
	job->c.result = kgo_task_spin(job, job->desc.args[0]);
}

static int kgo_yield_validate(const struct kgo_task *t)
{
	return t->args[0] > KGO_YIELD_MAX ? -EINVAL : 0;
}

static void kgo_yield_job(struct kgo_job *job)
{
	u64 i;

	for (i = 0; i < job->desc.args[0]; i++) {
		job->err = kgo_ctx_err(&job->ctx);
		if (job->err)
			break;
		kgo_yield();
	}
	job->c.result = i;
}

static int kgo_spawn_validate(const struct kgo_task *t)
{
	if (!t->args[0] || t->args[0] > KGO_SPAWN_MAX_FANOUT)
		return -EINVAL;
	if (kgo_spawn_nodes(t->args[0], t->args[1], KGO_SPAWN_MAX_NODES) >
	    KGO_SPAWN_MAX_NODES)
		return -E2BIG;
	return 0;
}

static void kgo_spawn_job(struct kgo_job *job)
{
	kgo_spawn_run(job, job->desc.args[1]);
	/* Nodes that could not grow set job->err. */
	job->c.result = atomic64_read(&job->nodes);
}

static int kgo_checksum_validate(const struct kgo_task *t)
{
	return t->args[1] > KGO_CHECKSUM_MAX_LEN ? -E2BIG : 0;
}

static void kgo_checksum_job(struct kgo_job *job)
{
	job->c.result = kgo_task_checksum(job->buf, job->len);
}

/*
 * CHECKSUM inline reads its buffer in place, a chunk at a time, so it
 * holds no memory after it returns and needs no accounting.
 */
static int kgo_checksum_inline(const struct kgo_task *t, u64 *result)
{
	const u8 __user *p = u64_to_user_ptr(t->args[0]);
	u8 buf[KGO_INLINE_CHUNK];
	u64 left = t->args[1];
	u32 crc = ~0U, since = 0;

	while (left) {
		size_t n = min_t(u64, left, sizeof(buf));

		if (copy_from_user(buf, p, n))
			return -EFAULT;
		crc = kgo_crc32c(crc, buf, n);
		p += n;
		left -= n;
		since += n;
		if (since >= KGO_INLINE_RESCHED) {
			since = 0;
			cond_resched();
		}
	}
	*result = ~crc;
	return 0;
}

static int kgo_sleep_validate(const struct kgo_task *t)
{
	return t->args[0] > KGO_SLEEP_MAX_NS ? -EINVAL : 0;
}

static void kgo_sleep_job(struct kgo_job *job)
{
	u64 t0 = ktime_get_ns();

	job->err = kgo_ctx_sleep(&job->ctx, job->desc.args[0]);
	job->c.result = ktime_get_ns() - t0;
}

static int kgo_block_validate(const struct kgo_task *t)
{
	return t->args[0] > KGO_BLOCK_MAX_US ? -EINVAL : 0;
}

static void kgo_block_job(struct kgo_job *job)
{
	u64 t0 = ktime_get_ns();

	/*
	 * A kernel sleep, not kgo's: the M sleeps with the goroutine, and
	 * kgo hands its P off. An hrtimer one, which a cancellation ends
	 * early.
	 */
	job->err = kgo_ctx_sleep_blocking(&job->ctx, job->desc.args[0] * NSEC_PER_USEC);
	job->c.result = ktime_get_ns() - t0;
}

static int kgo_pingpong_validate(const struct kgo_task *t)
{
	return t->args[0] > KGO_PINGPONG_MAX ? -EINVAL : 0;
}

static void kgo_pingpong_job(struct kgo_job *job)
{
	job->err = kgo_task_pair_run(job, kgo_pong, kgo_ping);
}

static int kgo_select_validate(const struct kgo_task *t)
{
	return t->args[0] > KGO_SELECT_TASK_MAX ||
	       t->args[1] > KGO_SELECT_GAP_MAX_NS ? -EINVAL : 0;
}

static void kgo_select_job(struct kgo_job *job)
{
	job->err = kgo_task_pair_run(job, kgo_producer, kgo_select_consumer);
}

static int kgo_pingpong_hog_validate(const struct kgo_task *t)
{
	return !t->args[0] || t->args[0] > KGO_PINGPONG_HOG_MAX_NS ||
	       !t->args[1] || t->args[1] > KGO_PINGPONG_HOG_MAX_LOOP ? -EINVAL : 0;
}

static void kgo_pingpong_hog_job(struct kgo_job *job)
{
	job->err = kgo_task_pair_run(job, kgo_hog_pong, kgo_hog_ping);
}

static void kgo_nop_job(struct kgo_job *job)
{
	job->c.result = 0;
}

static int kgo_nop_inline(const struct kgo_task *t, u64 *result)
{
	return 0;
}

const struct kgo_task_def kgo_task_defs[KGO_TASK_PINGPONG_HOG + 1] = {
	[KGO_TASK_NOP] = {
		.inline_ok = true,
		.run = kgo_nop_job,
		.run_inline = kgo_nop_inline,
	},
	[KGO_TASK_SPIN] = {
		.nargs = 1,
		.validate = kgo_spin_validate,
		.run = kgo_spin_job,
	},
	[KGO_TASK_YIELD] = {
		.nargs = 1,
		.validate = kgo_yield_validate,
		.run = kgo_yield_job,
	},
	[KGO_TASK_SPAWN] = {
		.nargs = 2,
		.validate = kgo_spawn_validate,
		.run = kgo_spawn_job,
	},
	[KGO_TASK_CHECKSUM] = {
		.nargs = 2,
		.inline_ok = true,
		.needs_mm = true,
		.validate = kgo_checksum_validate,
		.run = kgo_checksum_job,
		.run_inline = kgo_checksum_inline,
	},
	[KGO_TASK_SLEEP] = {
		.nargs = 1,
		.validate = kgo_sleep_validate,
		.run = kgo_sleep_job,
	},
	[KGO_TASK_BLOCK] = {
		.nargs = 1,
		.validate = kgo_block_validate,
		.run = kgo_block_job,
	},
	[KGO_TASK_PINGPONG] = {
		.nargs = 1,
		.validate = kgo_pingpong_validate,
		.run = kgo_pingpong_job,
	},
	[KGO_TASK_SELECT] = {
		.nargs = 2,
		.validate = kgo_select_validate,
		.run = kgo_select_job,
	},
	[KGO_TASK_PINGPONG_HOG] = {
		.nargs = 2,
		.validate = kgo_pingpong_hog_validate,
		.run = kgo_pingpong_hog_job,
	},
};

/*
 * kgo_task_validate() for every kind but NOP, which task.h tests first,
 * inline: see there.
 */
int __kgo_task_validate(const struct kgo_task *t)
{
	const struct kgo_task_def *def;
	unsigned int used;
	int err;

	/* Every kind has its entry, and the table ends with the last. */
	BUILD_BUG_ON(ARRAY_SIZE(kgo_task_defs) != KGO_TASK_PINGPONG_HOG + 1);
	if ((t->flags & ~KGO_TASK_FLAGS) || t->__reserved)
		return -EINVAL;
	if (t->kind >= ARRAY_SIZE(kgo_task_defs) || !kgo_task_defs[t->kind].run)
		return -EINVAL;
	def = kgo_task_def(t);
	/* Inline is for what neither sleeps nor runs unbounded. */
	if ((t->flags & KGO_TASK_F_INLINE) && !def->inline_ok)
		return -EINVAL;
	err = def->validate ? def->validate(t) : 0;
	if (err)
		return err;
	for (used = def->nargs; used < ARRAY_SIZE(t->args); used++)
		if (t->args[used])
			return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(__kgo_task_validate);

/**
 * kgo_task_run_inline() - run a validated KGO_TASK_F_INLINE task here
 * @t: the task, kgo_task_validate()d: of an inline_ok kind
 * @result: out: its result
 *
 * A task run inline holds no memory after it returns and needs no
 * accounting.
 *
 * Context: process (the submitter, or the SQ poller for a NOP), may
 * sleep.
 * Return: 0, or the status its completion reports (-EFAULT).
 */
int kgo_task_run_inline(const struct kgo_task *t, u64 *result)
{
	const struct kgo_task_def *def = kgo_task_def(t);

	*result = 0;
	if (WARN_ON_ONCE(!def->inline_ok))
		return -EINVAL;
	return def->run_inline(t, result);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_task_run_inline);

/*
 * Runs @job's kind in the calling goroutine; fills job->c.result. A
 * cancelled job (job->ctx: its fd closed, or KGO_CANCEL_RUNNING) stops
 * at its next check with job->err = -ECANCELED and what it did so far
 * as its result.
 */
void kgo_job_run(struct kgo_job *job)
{
	kgo_task_def(&job->desc)->run(job);
}
