// SPDX-License-Identifier: GPL-2.0
/*
 * SQ polling (io_uring's SQPOLL): a goroutine per ring consumes what the
 * caller publishes in the SQ, so that a steady stream of tasks needs no
 * system call at all.
 *
 * The poller is a goroutine, spawned by the caller of KGO_IOC_RING_SETUP
 * (so its tasks' goroutines are charged to the caller's memcg, as
 * kgo_newproc() does for a goroutine's children), and one of the user's
 * max_user_goroutines for as long as the ring lives (ring.c charges it
 * at setup, before anything is allocated). It loops: consume
 * every entry published (enter.c's kgo_ring_submit(), as ENTER would),
 * then kgo_yield(), so that the goroutines it made, queued on its own
 * P, run between its looks. After sq_idle_ms with nothing to consume it
 * goes to sleep on a channel:
 *
 *   poller                               caller
 *   sq_flags |= NEED_WAKEUP              store-release sq_tail
 *   smp_mb()                             full fence
 *   look at sq_tail once more            load sq_flags: NEED_WAKEUP?
 *   sleep on the channel                 ENTER(KGO_ENTER_SQ_WAKEUP)
 *
 * The two full barriers pair: either the poller sees the new tail, or
 * the caller sees the flag and sends a wake-up (a channel of one slot,
 * sent to without blocking, so wake-ups never pile up).
 *
 * An entry refused for a reason that is not its own fault (-EAGAIN: the
 * user's goroutine cap, the fd's bytes, every job slot held; -ENOMEM:
 * memory, kgo's budget, the memcg) stays in the SQ, and the work stays
 * "pending": without more, the poller would retry it as fast as it can
 * for as long as the cause lasts. It backs off instead: it sleeps on
 * the same channel with a timeout, 1 ms at first, doubling up to
 * sq_idle_ms, and says why in sq_flags (KGO_SQ_EAGAIN or KGO_SQ_ENOMEM)
 * until it consumes an entry again. A wake-up (ENTER's SQ_WAKEUP) ends
 * a back-off early, so a caller who freed what was missing need not
 * wait for the timer. sq_flags is written by the poller only.
 *
 * It stops when the fd is closed (kgo_session_close() closes the
 * channel and cancels the session's context, which the loop checks);
 * it holds a session reference until then, so the ring outlives it.
 * The CPU it burns is counted in kgo_sqpoll_ns, which KGO_IOC_STATS
 * reports (kgoctl stats).
 */

#include <linux/atomic.h>
#include <linux/ktime.h>

#include <kgo.h>
#include "ring.h"
#include "session.h"

#define KGO_SQPOLL_IDLE_MS_DEFAULT	10
#define KGO_SQPOLL_IDLE_MS_MAX		1000
/* sq_flags bits that say why the entry at sq_head waits. */
#define KGO_SQ_REFUSED			(KGO_SQ_EAGAIN | KGO_SQ_ENOMEM)
/* The first back-off after a refusal; it doubles up to sq_idle_ms. */
#define KGO_SQPOLL_BACKOFF_NS		NSEC_PER_MSEC

static atomic64_t kgo_sqpoll_ns = ATOMIC64_INIT(0);
static atomic64_t kgo_sqpoll_tasks = ATOMIC64_INIT(0);

void kgo_sqpoll_stats(u64 *ns, u64 *tasks)
{
	*ns = atomic64_read(&kgo_sqpoll_ns);
	*tasks = atomic64_read(&kgo_sqpoll_tasks);
}

/* Checks and fills in sq_idle_ms. Return: 0 or -EINVAL. */
int kgo_sqpoll_params(struct kgo_ring_params *p)
{
	if (!(p->flags & KGO_RING_SQPOLL))
		return p->sq_idle_ms ? -EINVAL : 0;
	if (p->sq_idle_ms > KGO_SQPOLL_IDLE_MS_MAX)
		return -EINVAL;
	if (!p->sq_idle_ms)
		p->sq_idle_ms = KGO_SQPOLL_IDLE_MS_DEFAULT;
	return 0;
}

/*
 * Whether there is something to consume now: entries published (a
 * garbage sq_tail is nothing) and room in the CQ for their completions.
 * Without room the poller sleeps too: the caller's next submission,
 * which finds it asleep, wakes it. So nothing the caller writes keeps
 * a poller awake past sq_idle_ms.
 */
static bool kgo_sqpoll_pending(struct kgo_ring *r)
{
	return kgo_ring_sq_ready(READ_ONCE(*r->sq_tail), READ_ONCE(r->sq_khead),
				 r->sq_entries) > 0 &&
	       kgo_ring_cq_room(READ_ONCE(r->issued), READ_ONCE(*r->cq_head),
				r->cq_entries) > 0;
}

/* sq_flags: the poller's only, so a plain read-modify-write. */
static void kgo_sqpoll_flags(struct kgo_ring *r, u32 set, u32 clear)
{
	u32 f = READ_ONCE(*r->sq_flags);

	WRITE_ONCE(*r->sq_flags, (f & ~clear) | set);
}

/* Sleeps until woken or closed. Return: false once the fd is closed. */
static bool kgo_sqpoll_sleep(struct kgo_ring *r)
{
	bool ok = true;
	u8 token;

	kgo_sqpoll_flags(r, KGO_SQ_NEED_WAKEUP, 0);
	/* Pairs with the caller's fence between sq_tail and sq_flags. */
	smp_mb();
	if (!kgo_sqpoll_pending(r) &&
	    kgo_chan_recv(r->sqpoll_wake, &token, &ok, KGO_FOREVER))
		ok = false;
	kgo_sqpoll_flags(r, 0, KGO_SQ_NEED_WAKEUP);
	return ok;
}

/*
 * The entry at the SQ's head was refused with @err, not its own fault:
 * say why, and sleep @ns or until woken.
 * Return: false once the fd is closed.
 */
static bool kgo_sqpoll_backoff(struct kgo_ring *r, long err, u64 ns)
{
	u32 why = err == -ENOMEM ? KGO_SQ_ENOMEM : KGO_SQ_EAGAIN;
	bool ok = true;
	u8 token;

	kgo_sqpoll_flags(r, why, KGO_SQ_REFUSED & ~why);
	/* 0 or -ETIMEDOUT: either way, try again; !ok: closed. */
	kgo_chan_recv(r->sqpoll_wake, &token, &ok, ns);
	return ok;
}

static void kgo_sqpoll_main(void *arg)
{
	struct kgo_ring *r = arg;
	struct kgo_session *s = r->s;
	u64 idle_ns = (u64)r->sq_idle_ms * NSEC_PER_MSEC;
	u64 last = ktime_get_mono_fast_ns(), idle_since = last, now;
	u64 backoff_ns = 0;
	bool refused = false;	/* the last look ended in a refusal */
	long n;

	while (!kgo_ctx_err(&s->ctx)) {
		n = kgo_sqpoll_pending(r) ? kgo_ring_submit(s, r, U32_MAX) : 0;
		now = ktime_get_mono_fast_ns();
		atomic64_add(now - last, &kgo_sqpoll_ns);
		last = now;
		if (n >= 0 && refused) {
			refused = false;
			backoff_ns = 0;
			kgo_sqpoll_flags(r, 0, KGO_SQ_REFUSED);
		}
		if (n > 0) {
			atomic64_add(n, &kgo_sqpoll_tasks);
			idle_since = now;
		} else if (n < 0 && !refused) {
			/*
			 * Refused, the entry left in the SQ. The first retry
			 * comes after the yield below: a job slot is often
			 * held only by a goroutine about to exit on this P.
			 */
			refused = true;
		} else if (n < 0) {
			/* Refused again: on a timer, doubling. */
			backoff_ns = backoff_ns ? min(2 * backoff_ns, idle_ns) :
				     min_t(u64, KGO_SQPOLL_BACKOFF_NS, idle_ns);
			if (!kgo_sqpoll_backoff(r, n, backoff_ns))
				break;
			last = ktime_get_mono_fast_ns();
			idle_since = last;
			continue;
		} else if (now - idle_since >= idle_ns) {
			if (!kgo_sqpoll_sleep(r))
				break;
			last = ktime_get_mono_fast_ns();
			idle_since = last;
			continue;
		}
		kgo_yield();
	}
	kgo_session_put(s);
}

/**
 * kgo_sqpoll_start() - spawn @r's poller
 * @r: a ring set up with KGO_RING_SQPOLL, not yet installed
 *
 * Context: process (the caller of KGO_IOC_RING_SETUP).
 * Return: 0 or -errno.
 */
int kgo_sqpoll_start(struct kgo_ring *r)
{
	long id;

	r->sqpoll_wake = kgo_chan_create(sizeof(u8), 1, GFP_KERNEL_ACCOUNT);
	if (IS_ERR(r->sqpoll_wake)) {
		id = PTR_ERR(r->sqpoll_wake);
		r->sqpoll_wake = NULL;
		return id;
	}
	kgo_session_get(r->s);	/* the poller's */
	id = kgo_go(kgo_sqpoll_main, r, GFP_KERNEL_ACCOUNT);
	if (id < 0) {
		kgo_session_put(r->s);
		kgo_chan_destroy(r->sqpoll_wake);
		r->sqpoll_wake = NULL;
		return id;
	}
	return 0;
}

/* ENTER's KGO_ENTER_SQ_WAKEUP. Context: any. */
void kgo_sqpoll_wake(struct kgo_ring *r)
{
	u8 token = 1;

	kgo_chan_send(r->sqpoll_wake, &token, KGO_NOWAIT);	/* one is enough */
}

/* The fd is closed: the poller stops. */
void kgo_sqpoll_stop(struct kgo_ring *r)
{
	if (r->sqpoll_wake)
		kgo_chan_close(r->sqpoll_wake);
}

/* The poller is gone: the last session reference was its or later. */
void kgo_sqpoll_free(struct kgo_ring *r)
{
	if (r->sqpoll_wake)
		WARN_ON_ONCE(kgo_chan_destroy(r->sqpoll_wake));
}
