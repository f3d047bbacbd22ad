// SPDX-License-Identifier: GPL-2.0
/*
 * KGO_IOC_ENTER: consume tasks from a ring's SQ, then wait for its CQ.
 * ring.c has the index protocol; this file is its consumer side. Each
 * entry becomes a job of the ring's pool (session.c), the goroutines of
 * a batch go to the scheduler together through the session's feed
 * (feed.c: one fd's backlog does not delay another's tasks, whichever
 * path it came by), and one store-release of sq_head gives the slots
 * back. An entry marked KGO_TASK_F_INLINE is not a job: it runs here
 * and its completion goes straight into the CQ, as io_uring issues a
 * NOP, with no goroutine, job, reference or wake-up to pay for; a run
 * of them posts under one hold of s->lock.
 */

#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <kunit/visibility.h>

#include "feed.h"
#include "g.h"
#include "ring.h"
#include "sched.h"
#include "session.h"
#include "task.h"

/* Goroutines queued per injection: work starts while we read the rest. */
#define KGO_RING_CHUNK		128

#define KGO_ENTER_FLAGS		KGO_ENTER_SQ_WAKEUP

/* Whether a refusal is the task's own fault: it completes with it. */
static bool kgo_ring_task_fault(int err)
{
	return err == -EINVAL || err == -E2BIG || err == -EFAULT || err == -EOPNOTSUPP;
}

/* Completes an entry that is not a valid task with @err, at once. */
static void kgo_ring_refuse(struct kgo_session *s, struct kgo_ring *r,
			    const struct kgo_task *t, int err, u64 now)
{
	struct kgo_completion c = {
		.tag = t->tag,
		.status = err,
		.cpu = ~0U,
		.kind = t->kind,
	};

	c.queued_ns = now;
	c.ended_ns = now;
	spin_lock(&s->lock);
	kgo_ring_post(r, &c);
	spin_unlock(&s->lock);
}

/*
 * Inline completions posted under one hold of s->lock, at most: a run
 * of inline NOPs takes the lock once, and a goroutine posting its own
 * completion waits behind at most this many.
 */
#define KGO_RING_INLINE_HOLD	64

/* Drops the hold of s->lock a run of inline completions took, if any. */
static void kgo_ring_unhold(struct kgo_session *s, u32 *held)
{
	if (!*held)
		return;
	spin_unlock(&s->lock);
	*held = 0;
}

/*
 * Runs a KGO_TASK_F_INLINE entry here, in the submitter, and posts its
 * completion (a refusal too: it is the task's own fault). *held counts
 * the completions posted under the current hold of s->lock; the caller
 * drops it with kgo_ring_unhold() before anything that may sleep.
 */
static void kgo_ring_inline(struct kgo_session *s, struct kgo_ring *r,
			    const struct kgo_task *t, bool timed, u32 *held)
{
	u64 start = 0, end = 0, result = 0;
	/* The SQ poller runs in no process: no user memory to read. */
	int err = kgo_task_validate_ring(t, r->sqpoll_wake);
	struct kgo_completion *c;
	u32 cpu = ~0U;

	if (timed) {
		start = ktime_get_ns();
		end = start;
	}
	if (!err) {
		cpu = raw_smp_processor_id();
		if (t->kind != KGO_TASK_NOP) {
			kgo_ring_unhold(s, held);	/* it reads user memory */
			err = kgo_task_run_inline(t, &result);
			if (timed)
				end = ktime_get_ns();
		}
	}
	if (!*held)
		spin_lock(&s->lock);
	lockdep_assert_held(&s->lock);
	/* Written in place: a CQ slot is a copy the caller reads once. */
	c = kgo_ring_post_slot(r);
	c->tag = t->tag;
	c->result = result;
	c->status = err;
	c->cpu = cpu;
	c->kind = t->kind;
	c->__reserved = 0;
	c->queued_ns = start;
	c->started_ns = cpu == ~0U ? 0 : start;	/* 0: it never ran */
	c->ended_ns = end;
	kgo_ring_post_commit(r);
	if (++*held == KGO_RING_INLINE_HOLD) {
		kgo_ring_unhold(s, held);
		cond_resched();
	}
}

/* Pending first, then the scheduler: a job is on pending before it runs. */
static void kgo_ring_flush(struct kgo_session *s, struct list_head *jobs,
			   struct kgo_gqueue *q, u32 n)
{
	if (!n)
		return;
	kgo_session_add_pending(s, jobs);
	kgo_feed_inject(&s->feed, q, n);
}

/*
 * Consumes up to @want entries of @r's SQ.
 * Return: how many, or the reason the first could not be (see struct
 * kgo_enter). Context: process or goroutine (the SQ poller), may sleep.
 */
long kgo_ring_submit(struct kgo_session *s, struct kgo_ring *r, u32 want)
{
	struct kgo_gcache gc = {};
	struct kgo_gqueue q = {};
	LIST_HEAD(jobs);
	bool timed = !(r->flags & KGO_RING_NO_TIMES);
	u32 done = 0, chunk = 0, held = 0, room, cq_head;
	u64 now = 0;
	bool posted = false;
	long ret = 0;
	s64 ready;

	if (mutex_lock_killable(&r->submit_lock))
		return -EINTR;
	/* Acquire: the entries before sq_tail are written (rule 1). */
	ready = kgo_ring_sq_ready(smp_load_acquire(r->sq_tail), r->sq_khead, r->sq_entries);
	if (ready < 0) {
		ret = ready;
		goto out;
	}
	want = min_t(u32, want, ready);
	/* Acquire: the caller is done with the entries before cq_head (rule 4). */
	cq_head = smp_load_acquire(r->cq_head);
	room = kgo_ring_cq_room(r->issued, cq_head, r->cq_entries);
	if (want > room) {
		want = room;
		ret = -EBUSY;
	}

	while (done < want) {
		struct kgo_job *job;
		struct kgo_task t;
		struct kgo_g *g;

		/* A batch can be 32 K entries long: SIGKILL must end it. */
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		/* Copied once: the caller may be rewriting the slot. */
		memcpy(&t, &r->sqes[r->sq_khead & (r->sq_entries - 1)], sizeof(t));
		barrier();	/* the compiler must not read it again for @t */
		if (t.flags & KGO_TASK_F_INLINE) {
			kgo_ring_inline(s, r, &t, timed, &held);
			posted = true;
			goto consumed;
		}
		kgo_ring_unhold(s, &held);
		/* One clock read a chunk: its tasks are queued together. */
		if (timed && !chunk)
			now = ktime_get_ns();
		job = kgo_ring_job_get(r);
		if (!job) {
			ret = -EAGAIN;	/* a goroutine still holds a consumed task's job */
			break;
		}
		g = kgo_session_ring_job(s, job, &t, now, &gc);
		if (IS_ERR(g)) {
			if (!kgo_ring_task_fault(PTR_ERR(g))) {
				ret = PTR_ERR(g);	/* left in the SQ */
				break;
			}
			kgo_ring_refuse(s, r, &t, PTR_ERR(g), now);
			posted = true;
		} else {
			list_add_tail(&job->node, &jobs);
			kgo_gqueue_push_back(&q, g);
			chunk++;
		}
consumed:
		r->sq_khead++;
		WRITE_ONCE(r->issued, r->issued + 1);
		done++;
		if (chunk == KGO_RING_CHUNK) {
			kgo_ring_flush(s, &jobs, &q, chunk);
			chunk = 0;
			cond_resched();
		}
	}
	kgo_ring_unhold(s, &held);
	/* Release: the entries before sq_head are copied (rule 2). */
	smp_store_release(r->sq_head, r->sq_khead);
	kgo_ring_flush(s, &jobs, &q, chunk);
	kgo_gcache_drain(&gc);
out:
	mutex_unlock(&r->submit_lock);
	if (posted)
		kgo_ring_wake(r);
	return done ? done : ret;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_submit);

/**
 * kgo_ring_enter() - KGO_IOC_ENTER
 * @s: the session
 * @e: the caller's arguments, copied in
 *
 * Context: process, may sleep.
 * Return: see struct kgo_enter.
 */
long kgo_ring_enter(struct kgo_session *s, const struct kgo_enter *e)
{
	/* Acquire: pairs with kgo_ring_setup()'s release. */
	struct kgo_ring *r = smp_load_acquire(&s->ring);
	long n = 0;
	int ret;

	if (!r)
		return -EBADFD;
	if (e->flags & ~KGO_ENTER_FLAGS)
		return -EINVAL;
	if (r->sqpoll_wake) {
		if (e->flags & KGO_ENTER_SQ_WAKEUP)
			kgo_sqpoll_wake(r);
	} else if (e->to_submit) {
		n = kgo_ring_submit(s, r, e->to_submit);
		if (n < 0)
			return n;
	}
	if (e->min_complete) {
		ret = kgo_ring_wait(r, e->min_complete, e->timeout_ns);
		if (ret && !n)
			return ret;
	}
	return n;
}
