// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: what an open /dev/kgo owns. Every accepted task completes
 * exactly once, as done, failed or cancelled, and who gets to complete
 * it is decided by one cmpxchg on job->state (QUEUED -> RUNNING by its
 * goroutine, QUEUED -> CANCELLED by cancel or close): the loser leaves
 * the job alone.
 *
 * Each job has a context (ctx.c), a child of the session's. Closing the
 * fd cancels the session's: running tasks stop at their next check
 * (task.c), tasks not started complete as cancelled as soon as their
 * goroutine runs, and completions nobody will read are dropped. Until
 * then, their job and session references keep what they touch alive;
 * the session holds a module reference, so kgo cannot be unloaded under
 * them.
 *
 * Nothing walks a whole list under s->lock: a list can hold up to
 * max_inflight jobs. Close takes the done list off in one splice, reads
 * take batches, and CANCEL walks pending with a cursor (a place-holder
 * job) that keeps its place while it drops the lock every
 * KGO_SESSION_BATCH jobs.
 */

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>

#include <kgo.h>
#include "ctx.h"
#include "floor.h"
#include "g.h"
#include "ring.h"
#include "sched.h"
#include "session.h"
#include "task.h"
#include "user.h"

static unsigned int max_inflight = 65536;
module_param(max_inflight, uint, 0444);
MODULE_PARM_DESC(max_inflight,
		 "Tasks one fd may have in flight (accepted, completion not read); 1..16777216");

static unsigned long max_bytes = 64UL << 20;
module_param(max_bytes, ulong, 0444);
MODULE_PARM_DESC(max_bytes,
		 "Bytes of task data one fd may have copied in; 1 MiB..1 GiB");

static struct kmem_cache *kgo_job_cache;

/* Jobs handled per hold of s->lock in a walk. */
#define KGO_SESSION_BATCH	64

int kgo_session_init(void)
{
	if (max_inflight < 1 || max_inflight > (1U << 24)) {
		pr_err("max_inflight=%u is out of range 1..16777216\n", max_inflight);
		return -EINVAL;
	}
	if (max_bytes < KGO_CHECKSUM_MAX_LEN || max_bytes > (1UL << 30)) {
		pr_err("max_bytes=%lu is out of range %llu..%lu\n", max_bytes,
		       KGO_CHECKSUM_MAX_LEN, 1UL << 30);
		return -EINVAL;
	}
	kgo_job_cache = KMEM_CACHE(kgo_job, SLAB_ACCOUNT);	/* the submitter's memcg */
	return kgo_job_cache ? 0 : -ENOMEM;
}

void kgo_session_exit(void)
{
	kmem_cache_destroy(kgo_job_cache);
}

/**
 * kgo_session_create() - a session for the caller, who opened /dev/kgo
 *
 * Context: process.
 * Return: the session, or ERR_PTR(-EPERM) when the
 * gate (user.c) is closed to the caller, or ERR_PTR(-ENOMEM).
 */
struct kgo_session *kgo_session_create(void)
{
	struct kgo_user *u = kgo_user_get();
	struct kgo_session *s;

	if (IS_ERR(u))
		return ERR_CAST(u);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s) {
		kgo_user_put(u);
		return ERR_PTR(-ENOMEM);
	}
	s->user = u;
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->pending);
	INIT_LIST_HEAD(&s->done);
	init_waitqueue_head(&s->wq);
	kgo_ctx_init(&s->ctx, NULL);
	kgo_feed_init(&s->feed);
	kref_init(&s->ref);
	mutex_init(&s->setup_lock);
	__module_get(THIS_MODULE);	/* for goroutines outliving the fd */
	return s;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_session_create);

static void kgo_session_release(struct kref *ref)
{
	struct kgo_session *s = container_of(ref, struct kgo_session, ref);

	if (s->ring)
		kgo_ring_destroy(s->ring);	/* no job and no mapping left */
	WARN_ON_ONCE(!list_empty(&s->pending) || !list_empty(&s->done) ||
		     s->ninflight || s->bytes);
	kgo_user_put(s->user);
	kfree(s);
	/* Our caller may be a goroutine; kgo_sched_exit() waits for it. */
	module_put(THIS_MODULE);
}

void kgo_session_put(struct kgo_session *s)
{
	kref_put(&s->ref, kgo_session_release);
}

void kgo_session_get(struct kgo_session *s)
{
	kref_get(&s->ref);
}

static void kgo_job_free(struct kgo_job *job)
{
	struct kgo_session *s = job->s;

	kvfree(job->buf);
	if (job->ring)
		kgo_ring_job_put(job->ring, job);
	else
		kmem_cache_free(kgo_job_cache, job);
	kgo_session_put(s);	/* last: the ring's jobs live in the session */
}

static void kgo_job_release(struct kref *ref)
{
	kgo_job_free(container_of(ref, struct kgo_job, ref));
}

static void kgo_job_put(struct kgo_job *job)
{
	kref_put(&job->ref, kgo_job_release);
}

/*
 * Takes the job off the books. A ring's jobs are in flight as CQ slots,
 * reserved once for the ring's life. Context: s->lock held.
 */
static void kgo_session_forget(struct kgo_session *s, struct kgo_job *job)
{
	lockdep_assert_held(&s->lock);
	s->bytes -= job->len;
	if (job->ring)
		return;
	s->ninflight--;
	kgo_user_task_put(s->user);
}

/* Gives back what kgo_session_submit_one() reserved for a task it refused. */
static void kgo_session_unreserve(struct kgo_session *s, u64 len)
{
	spin_lock(&s->lock);
	s->ninflight--;
	s->bytes -= len;
	spin_unlock(&s->lock);
	kgo_user_task_put(s->user);
}

/*
 * Queues @job's completion for the reader, or writes it into the ring's
 * CQ.
 * Return: whether the completion's reference must be dropped (a
 * ring's: its CQ entry is a copy), which the caller does once it has
 * dropped s->lock; then kgo_ring_wake(). Context: s->lock held.
 */
static bool kgo_session_post(struct kgo_session *s, struct kgo_job *job)
{
	lockdep_assert_held(&s->lock);
	if (job->ring) {
		list_del_init(&job->node);
		kgo_session_forget(s, job);
		kgo_ring_post(job->ring, &job->c);
		return true;
	}
	list_move_tail(&job->node, &s->done);
	s->ndone++;
	return false;
}

/* A job's goroutine is done with it: post the completion. */
static void kgo_job_complete(struct kgo_job *job)
{
	struct kgo_session *s = job->s;
	struct kgo_ring *r = job->ring;
	bool put = true;

	spin_lock(&s->lock);
	if (s->closed) {
		list_del_init(&job->node);
		kgo_session_forget(s, job);
		r = NULL;
	} else {
		put = kgo_session_post(s, job);
	}
	spin_unlock(&s->lock);
	if (put)
		kgo_job_put(job);	/* the completion's reference */
	if (r)
		kgo_ring_wake(r);
	else if (!put)
		wake_up(&s->wq);
}

static void kgo_job_main(void *arg)
{
	struct kgo_job *job = arg;

	if (atomic_cmpxchg(&job->state, KGO_JOB_QUEUED, KGO_JOB_RUNNING) ==
	    KGO_JOB_QUEUED) {
		/* Its fd closed before it started: nothing to run. */
		job->err = kgo_ctx_err(&job->ctx);
		if (!job->err) {
			if (job->timed)
				job->c.started_ns = ktime_get_ns();
			job->c.cpu = raw_smp_processor_id();
			kgo_job_run(job);
		}
		job->c.status = job->err;
		if (job->timed)
			job->c.ended_ns = ktime_get_ns();
		kgo_job_complete(job);
	}
	/* else cancelled: the canceller completed it. */
	kgo_user_g_put(job->s->user);
	kgo_job_put(job);	/* the goroutine's reference */
}

/*
 * Runs a KGO_TASK_F_INLINE @job here, in the submitter, and completes
 * it, as its goroutine would have: see kgo_job_main().
 */
static void kgo_job_run_inline(struct kgo_job *job)
{
	atomic_set(&job->state, KGO_JOB_RUNNING);
	job->c.queued_ns = ktime_get_ns();
	job->c.started_ns = job->c.queued_ns;
	job->c.cpu = raw_smp_processor_id();
	job->c.status = kgo_task_run_inline(&job->desc, &job->c.result);
	job->c.ended_ns = ktime_get_ns();
	kgo_job_complete(job);
	kgo_job_put(job);	/* the reference a goroutine would have dropped */
}

/* Fills in a fresh @job for @t; the caller holds a reservation for it. */
static void kgo_job_init(struct kgo_session *s, struct kgo_job *job,
			 const struct kgo_task *t, u32 len)
{
	INIT_LIST_HEAD(&job->node);
	kref_init(&job->ref);
	kref_get(&job->ref);	/* one for the goroutine, one for the completion */
	kref_get(&s->ref);
	job->s = s;
	job->desc = *t;
	atomic_set(&job->state, KGO_JOB_QUEUED);
	kgo_ctx_init(&job->ctx, &s->ctx);	/* depth 2: cannot fail */
	job->c.tag = t->tag;
	job->c.kind = t->kind;
	job->c.cpu = ~0U;
	job->len = len;
	job->timed = !job->ring || !(job->ring->flags & KGO_RING_NO_TIMES);
}

/*
 * Copies in @job's data and makes its goroutine, its G from @gc (or
 * NULL) outside a P; @now is when it was queued, or 0 to read the
 * clock. On failure nobody else has seen the job: the caller frees it.
 * Context: process, may sleep.
 */
static struct kgo_g *kgo_job_start(struct kgo_session *s, struct kgo_job *job, u64 now,
				   struct kgo_gcache *gc)
{
	struct kgo_g *g;

	if (job->len) {
		job->buf = kvmalloc(job->len,
				    GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		if (!job->buf)
			return ERR_PTR(-ENOMEM);
		if (copy_from_user(job->buf, u64_to_user_ptr(job->desc.args[0]), job->len))
			return ERR_PTR(-EFAULT);
	}
	if (job->timed)
		job->c.queued_ns = now ?: ktime_get_ns();
	if (!kgo_user_g_get(s->user))
		return ERR_PTR(-EAGAIN);
	g = kgo_newproc_gc(gc, kgo_job_main, job, GFP_KERNEL);
	if (IS_ERR(g))
		kgo_user_g_put(s->user);
	return g;
}

/**
 * kgo_session_submit_one() - accept one task
 * @s: the session
 * @t: its descriptor, copied in and not yet validated
 * @gc: the submitter's cache of dead Gs (kgo_gcache_get()), or NULL
 *
 * Validates it, reserves it against the fd's caps, copies in its data
 * and makes its goroutine, which the caller queues (kgo_feed_inject()).
 * A KGO_TASK_F_INLINE task runs here instead, and is completed (its
 * record is on the read list) when this returns.
 *
 * Context: process, may sleep.
 * Return: the goroutine, NULL for a task run inline, or an ERR_PTR.
 */
struct kgo_g *kgo_session_submit_one(struct kgo_session *s,
				     const struct kgo_task *t, struct kgo_gcache *gc)
{
	struct kgo_job *job;
	struct kgo_g *g;
	u64 len;
	int ret;

	ret = kgo_task_validate(t);
	if (ret)
		return ERR_PTR(ret);
	/* Inline, CHECKSUM reads the buffer in place: nothing copied in. */
	len = kgo_task_buf_len(t);

	/*
	 * The user's and the fd's caps first: a task over them costs no
	 * allocation or copy.
	 */
	if (!kgo_user_task_get(s->user))
		return ERR_PTR(-EAGAIN);
	spin_lock(&s->lock);
	if (s->ninflight >= max_inflight || s->bytes + len > max_bytes) {
		spin_unlock(&s->lock);
		kgo_user_task_put(s->user);
		return ERR_PTR(-EAGAIN);
	}
	s->ninflight++;
	s->bytes += len;
	spin_unlock(&s->lock);

	/*
	 * What the submitter costs is charged to its memcg (SLAB_ACCOUNT,
	 * __GFP_ACCOUNT); __GFP_RETRY_MAYFAIL makes a cgroup at its
	 * memory.max, or a machine out of memory, refuse the task with
	 * -ENOMEM instead of calling in an OOM killer. A machine near out
	 * of it refuses it before that: below the floor's admission mark
	 * (floor.c).
	 */
	job = NULL;
	if (!kgo_floor_below())
		job = kmem_cache_zalloc(kgo_job_cache,
					GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!job) {
		kgo_session_unreserve(s, len);
		return ERR_PTR(-ENOMEM);
	}
	kgo_job_init(s, job, t, len);
	if (t->flags & KGO_TASK_F_INLINE) {
		kgo_job_run_inline(job);
		return NULL;
	}

	/*
	 * The goroutine before the job goes on pending: until then no
	 * CANCEL, close or reader can reach it, so a failure here undoes it
	 * alone.
	 */
	g = kgo_job_start(s, job, 0, gc);
	if (IS_ERR(g)) {
		kgo_session_unreserve(s, len);
		kgo_job_free(job);	/* nobody else has seen it */
		return g;
	}
	spin_lock(&s->lock);
	list_add_tail(&job->node, &s->pending);
	spin_unlock(&s->lock);
	return g;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_session_submit_one);

/**
 * kgo_session_ring_job() - make a job of @r's preallocated @job for @t
 * @s: the session
 * @job: a free job of the session's ring (kgo_ring_job_get())
 * @t: the task, copied out of the SQ and not yet validated
 * @now: when it was queued (one clock read for a batch), or 0
 * @gc: the submitter's cache of dead Gs, or NULL
 *
 * As kgo_session_submit_one(), but the job is the ring's and in flight
 * already (its CQ slot is). The caller puts it on pending with
 * kgo_session_add_pending() before it queues the goroutine. On failure
 * @job is given back to the ring.
 *
 * Context: process, may sleep.
 * Return: the goroutine, or an ERR_PTR:
 * the task's own fault (-EINVAL, -E2BIG, -EFAULT), or not (-EAGAIN,
 * -ENOMEM, -ESHUTDOWN).
 */
struct kgo_g *kgo_session_ring_job(struct kgo_session *s, struct kgo_job *job,
				   const struct kgo_task *t, u64 now, struct kgo_gcache *gc)
{
	struct kgo_ring *r = job->ring;
	struct kgo_g *g;
	u32 len = 0;
	int ret;

	/* The SQ poller runs in no process: no user memory to copy from. */
	ret = kgo_task_validate_ring(t, r->sqpoll_wake);
	if (!ret)
		len = kgo_task_buf_len(t);
	if (len) {
		spin_lock(&s->lock);
		if (s->bytes + len > max_bytes)
			ret = -EAGAIN;
		else
			s->bytes += len;
		spin_unlock(&s->lock);
	}
	if (ret) {
		kgo_ring_job_put(r, job);
		return ERR_PTR(ret);
	}
	/* Reused: clear what the last task left, keep whose job it is. */
	memset(job, 0, sizeof(*job));
	job->ring = r;
	kgo_job_init(s, job, t, len);
	g = kgo_job_start(s, job, now, gc);
	if (IS_ERR(g)) {
		spin_lock(&s->lock);
		s->bytes -= len;
		spin_unlock(&s->lock);
		kgo_job_free(job);	/* back to the ring */
	}
	return g;
}

/* Puts a batch of ring jobs on pending, before their goroutines run. */
void kgo_session_add_pending(struct kgo_session *s, struct list_head *jobs)
{
	spin_lock(&s->lock);
	list_splice_tail_init(jobs, &s->pending);
	spin_unlock(&s->lock);
}

u32 kgo_session_max_inflight(void)
{
	return max_inflight;
}

/**
 * kgo_session_reserve() - count @n tasks in flight for a ring's CQ
 * @s: the session
 * @n: the CQ's entries
 *
 * Against the fd's max_inflight and the user's max_user_inflight, as
 * if @n tasks were in flight, for as long as the ring lives.
 *
 * Return: 0, or -EAGAIN when they do not fit.
 */
int kgo_session_reserve(struct kgo_session *s, u32 n)
{
	if (!kgo_user_task_get_n(s->user, n))
		return -EAGAIN;
	spin_lock(&s->lock);
	if (s->ninflight + (u64)n > max_inflight) {
		spin_unlock(&s->lock);
		kgo_user_task_put_n(s->user, n);
		return -EAGAIN;
	}
	s->ninflight += n;
	s->nring += n;
	spin_unlock(&s->lock);
	return 0;
}

void kgo_session_unreserve_n(struct kgo_session *s, u32 n)
{
	spin_lock(&s->lock);
	s->ninflight -= n;
	s->nring -= n;
	spin_unlock(&s->lock);
	kgo_user_task_put_n(s->user, n);
}

/**
 * kgo_session_take() - take up to @n completed jobs off the done list
 * @s: the session
 * @list: receives them, oldest first
 * @n: at most this many
 *
 * Return: how many. Each must go to kgo_job_complete_read(), or back
 * with kgo_session_putback() (at the front, in order).
 */
int kgo_session_take(struct kgo_session *s, struct list_head *list, u32 n)
{
	struct kgo_job *job, *tmp;
	u32 i = 0;

	spin_lock(&s->lock);
	list_for_each_entry_safe(job, tmp, &s->done, node) {
		if (i == n)
			break;
		list_move_tail(&job->node, list);
		kgo_session_forget(s, job);
		i++;
	}
	s->ndone -= i;
	spin_unlock(&s->lock);
	return i;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_session_take);

void kgo_session_putback(struct kgo_session *s, struct list_head *list, u32 n)
{
	struct kgo_job *job;

	spin_lock(&s->lock);
	list_for_each_entry(job, list, node) {
		s->ninflight++;
		s->bytes += job->len;
		/* Taken back from what take() gave: never over the cap. */
		atomic_inc(&s->user->inflight);
	}
	list_splice(list, &s->done);
	INIT_LIST_HEAD(list);
	s->ndone += n;
	spin_unlock(&s->lock);
}

/* The completion of @job was read (or dropped): release it. */
void kgo_job_complete_read(struct kgo_job *job)
{
	list_del_init(&job->node);
	kgo_job_put(job);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_job_complete_read);

/*
 * Copies the @n jobs on @list out to @buf and releases them. Return:
 * bytes copied; on a fault, the rest go back to the front of done.
 */
static size_t kgo_session_copy_out(struct kgo_session *s, char __user *buf,
				   struct list_head *list, u32 n)
{
	const size_t rec = sizeof(struct kgo_completion);
	struct kgo_job *job, *tmp;
	size_t copied = 0;

	list_for_each_entry_safe(job, tmp, list, node) {
		if (copy_to_user(buf + copied, &job->c, rec))
			break;
		copied += rec;
		kgo_job_complete_read(job);
		n--;
	}
	if (n) {
		/* A fault part-way: nothing is lost. */
		kgo_session_putback(s, list, n);
		wake_up(&s->wq);
	}
	return copied;
}

ssize_t kgo_session_read(struct kgo_session *s, char __user *buf, size_t count,
			 bool nonblock)
{
	const size_t rec = sizeof(struct kgo_completion);
	size_t copied = 0, want, got;
	LIST_HEAD(list);
	int n, ret;

	if (count < rec)
		return -EINVAL;
	want = count / rec;
	for (;;) {
		/* Batches: s->lock is held for one take at a time. */
		while (copied < want * rec) {
			n = kgo_session_take(s, &list, min_t(size_t, want - copied / rec,
							     KGO_SESSION_BATCH));
			if (!n)
				break;
			got = kgo_session_copy_out(s, buf + copied, &list, n);
			copied += got;
			if (got < n * rec)
				return copied ?: -EFAULT;
			cond_resched();
		}
		if (copied)
			return copied;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(s->wq, READ_ONCE(s->ndone));
		if (ret)
			return ret;
	}
}
EXPORT_SYMBOL_IF_KUNIT(kgo_session_read);

/* POLLIN: completions to read(2), or in the ring's CQ. */
__poll_t kgo_session_poll(struct kgo_session *s, struct file *file,
			  poll_table *wait)
{
	/* Acquire: pairs with kgo_ring_install()'s release. */
	struct kgo_ring *r = smp_load_acquire(&s->ring);

	poll_wait(file, &s->wq, wait);
	if (READ_ONCE(s->ndone) || (r && kgo_ring_cq_pending(r)))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

/* Enough are ready, or no more can become ready. */
static bool kgo_session_waited(struct kgo_session *s, u32 min)
{
	bool ok;

	spin_lock(&s->lock);
	ok = s->ndone >= min || s->ninflight - s->nring == s->ndone;
	spin_unlock(&s->lock);
	return ok;
}

/**
 * kgo_session_wait() - KGO_IOC_WAIT
 * @s: the session
 * @min: completions wanted
 * @timeout_ns: 0 to poll, KGO_WAIT_FOREVER, or a limit
 * @ready: out: completions ready now
 *
 * Return: 0, -ETIMEDOUT or -EINTR.
 */
int kgo_session_wait(struct kgo_session *s, u32 min, u64 timeout_ns, u32 *ready)
{
	int ret = 0;

	if (!kgo_session_waited(s, min)) {
		if (!timeout_ns)
			ret = -ETIME;
		else if (timeout_ns == KGO_WAIT_FOREVER)
			ret = wait_event_interruptible(s->wq, kgo_session_waited(s, min));
		else
			ret = wait_event_interruptible_hrtimeout(s->wq,
								 kgo_session_waited(s, min),
								 ns_to_ktime(min_t(u64, timeout_ns,
										   KTIME_MAX)));
	}
	*ready = READ_ONCE(s->ndone);
	if (ret == -ETIME)
		return -ETIMEDOUT;
	/* Not restarted: a restarted wait would start its timeout again. */
	if (ret == -ERESTARTSYS)
		return -EINTR;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_session_wait);

/*
 * Cancels @job: an unstarted one completes here with -ECANCELED; a
 * running one (@running) has its context cancelled and completes when
 * its goroutine next checks. Context: s->lock held, which keeps a job on
 * pending from completing, and so alive.
 * Return: whether it was.
 */
static bool kgo_session_cancel_one(struct kgo_session *s, struct kgo_job *job,
				   bool running, u64 now)
{
	lockdep_assert_held(&s->lock);
	switch (atomic_read(&job->state)) {
	case KGO_JOB_QUEUED:
		if (atomic_cmpxchg(&job->state, KGO_JOB_QUEUED, KGO_JOB_CANCELLED) ==
		    KGO_JOB_QUEUED) {
			job->c.status = -ECANCELED;
			if (job->timed)
				job->c.ended_ns = now;
			/*
			 * A ring's completion reference goes now; never the
			 * last: its goroutine, not yet run, holds one.
			 */
			if (kgo_session_post(s, job))
				refcount_dec(&job->ref.refcount);
			return true;
		}
		/* Its goroutine started it meanwhile. */
		fallthrough;
	case KGO_JOB_RUNNING:
		/* True once per job, however often it is cancelled. */
		return running && kgo_ctx_cancel(&job->ctx, -ECANCELED);
	default:		/* cancelled already, or another walk's cursor */
		return false;
	}
}

/**
 * kgo_session_cancel() - cancel tasks
 * @s: the session
 * @all: every one, else those tagged @tag
 * @tag: see @all
 * @running: running tasks too, else only unstarted ones
 *
 * Return: how many were cancelled. Each unstarted one completes with
 * -ECANCELED; each running one stops at its next check, with -ECANCELED
 * and its partial result (or with its own status if it finished first).
 */
u32 kgo_session_cancel(struct kgo_session *s, bool all, u64 tag, bool running)
{
	struct kgo_job cursor = { .desc.kind = 0 };
	u64 now = ktime_get_ns();
	struct list_head *pos;
	struct kgo_job *job;
	u32 n = 0, seen = 0;

	atomic_set(&cursor.state, KGO_JOB_CURSOR);
	spin_lock(&s->lock);
	list_add(&cursor.node, &s->pending);
	while ((pos = cursor.node.next) != &s->pending) {
		job = list_entry(pos, struct kgo_job, node);
		list_move(&cursor.node, pos);	/* past @job before it may move */
		if ((all || job->desc.tag == tag) &&
		    kgo_session_cancel_one(s, job, running, now))
			n++;
		if (++seen % KGO_SESSION_BATCH == 0) {
			spin_unlock(&s->lock);
			cond_resched();
			spin_lock(&s->lock);
		}
	}
	list_del(&cursor.node);
	spin_unlock(&s->lock);
	if (n)
		wake_up(&s->wq);
	if (n && s->ring)
		kgo_ring_wake(s->ring);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_session_cancel);

/**
 * kgo_session_close() - the fd is closed
 * @s: the session; the caller's reference is dropped
 *
 * Cancels every task (see the top of this file) and drops unread
 * completions; does not wait for running tasks to stop.
 */
void kgo_session_close(struct kgo_session *s)
{
	struct kgo_job *job, *tmp;
	LIST_HEAD(drop);

	if (s->ring)
		kgo_sqpoll_stop(s->ring);
	spin_lock(&s->lock);
	s->closed = true;	/* from now on, completions are dropped */
	list_splice_init(&s->done, &drop);
	s->ndone = 0;
	spin_unlock(&s->lock);
	kgo_ctx_cancel_sleepable(&s->ctx, -ECANCELED);	/* no lock held */

	/* Off every list but ours: nobody else can reach them. */
	list_for_each_entry_safe(job, tmp, &drop, node) {
		spin_lock(&s->lock);
		kgo_session_forget(s, job);
		spin_unlock(&s->lock);
		kgo_job_complete_read(job);
		cond_resched();
	}
	kgo_session_put(s);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_session_close);
