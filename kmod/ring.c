// SPDX-License-Identifier: GPL-2.0
/*
 * Shared submission and completion rings: /dev/kgo without a copy per
 * task or a system call per step.
 *
 * What it is
 *
 * One fd may have one ring (KGO_IOC_RING_SETUP): a few pages shared
 * with the caller that hold four indices, an SQ of struct kgo_task and a
 * CQ of struct kgo_completion. The caller writes tasks and publishes
 * them by moving sq_tail; KGO_IOC_ENTER (enter.c) consumes them, each
 * becoming the same job as a KGO_IOC_SUBMIT task (session.c), and waits
 * for completions; a job's goroutine writes its completion into the CQ
 * instead of the read(2) list. So exactly-once completion, cancel,
 * close and memcg accounting are the session's, unchanged.
 *
 * Who writes what (uapi/linux/kgo.h has the caller's half)
 *
 *   sq_tail  the caller. We load-acquire it (enter.c) before we read the
 *            entries up to it: pairs with the caller's store-release
 *            after it wrote them.
 *   sq_head  us, under submit_lock, from our own copy sq_khead: we never
 *            read it back. Store-release after we copied the entries
 *            before it, each once: pairs with the caller's load-acquire
 *            before it writes those slots again.
 *   cq_tail  us, under session->lock (the CQ's one producer at a time),
 *            from our own copy cq_ktail. Store-release after the entry
 *            is written (kgo_ring_post): pairs with the caller's
 *            load-acquire before it reads entries. The shared cq_tail
 *            is stored before cq_ktail, so that a waiter who sees
 *            cq_ktail reach its count returns to a caller who sees the
 *            entries too. The caller may so consume an entry before
 *            cq_ktail shows it: nothing compares cq_head with cq_ktail
 *            as a bound (ring.h's kgo_ring_cq_room() bounds it by
 *            "issued").
 *   cq_head  the caller. We load-acquire it (enter.c, sqpoll.c) before
 *            we promise its slots to new tasks: pairs with the caller's
 *            store-release after it read them, so our later writes there
 *            cannot overtake its reads.
 *
 * Indices run free and wrap at 2^32; slots are index & (entries - 1).
 * Nothing the caller writes is trusted beyond that mask: a sq_tail too
 * far ahead is refused, a cq_head that is garbage reads as a full CQ,
 * and an SQ entry is copied once, then validated on the copy.
 *
 * No completion is dropped (io_uring's NODROP, by construction rather
 * than by an overflow list): "issued" counts entries consumed, each of
 * which owes one CQ entry; ENTER consumes one only while issued -
 * cq_head < cq_entries, so the tail never laps the caller's head.
 * Cancelled tasks owe theirs too, and get it. Jobs are preallocated, one
 * per CQ slot: a slot in use holds at most one job's completion, so
 * submitting allocates no job (a job whose completion was consumed but
 * whose goroutine has not yet let go of it is the one exception, seen
 * as -EAGAIN).
 *
 * Waiting (io_uring's cq_wait_nr)
 *
 * A waiter wants the CQ tail to reach a target. It lists itself with
 * the target under wait_lock, keeping wake_at the earliest target
 * listed, then checks the tail after a full barrier
 * (set_current_state) and sleeps. A poster stores the tail, then a full
 * barrier, then reads nwaiters and wake_at: only a tail that reached
 * wake_at takes wait_lock, wakes the waiters it satisfied and
 * recomputes wake_at. Either the waiter sees the new tail or the poster
 * sees the waiter (the two barriers pair): a waiter is woken once, when
 * its count is reached, and a completion that satisfies no one costs a
 * barrier and two loads.
 *
 * Memory and lifetime
 *
 * The pages are allocated one by one, __GFP_ACCOUNT, so the caller's
 * memcg pays, mapped for us with vmap() and for the caller with
 * vm_insert_pages(). The ring lives as long as the session: jobs hold
 * session references, and a mapping holds the file open, so the ring is
 * freed only once nothing can reach it (kgo_ring_destroy from the
 * session's release).
 *
 * Lock order: submit_lock (a mutex) -> session->lock -> wait_lock ->
 * the scheduler's rq locks (wake_up_process).
 */

#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "ring.h"
#include "session.h"
#include "task.h"
#include "user.h"

#define KGO_RING_FLAGS		(KGO_RING_NO_TIMES | KGO_RING_SQPOLL)

/*
 * A waiter first looks at the tail this many times before it sleeps,
 * letting whatever the scheduler wants to run first (the M it just woke
 * on this CPU, say) run: a short task then completes without the
 * waiter sleeping and being woken. 0 turns it off.
 */
static unsigned int ring_spin = 256;
module_param(ring_spin, uint, 0644);
MODULE_PARM_DESC(ring_spin,
		 "Looks at the CQ tail a waiter takes before it sleeps (0: none; at most 65536)");
#define KGO_RING_SPIN_MAX	65536

/* The indices' cache lines in the shared header, and its size. */
#define KGO_RING_LINE		64
#define KGO_RING_HDR		(5 * KGO_RING_LINE)

/* A goroutine-less thread waiting on the CQ (see "Waiting" above). */
struct kgo_ring_waiter {
	struct list_head node;		/* W: on ring->waiters, or empty */
	struct task_struct *task;
	u32 target;			/* wake once cq_ktail reaches it */
};

/**
 * kgo_ring_entries() - validate and round a requested ring size
 * @want: entries asked for
 * @max: the most allowed, a power of two
 * @entries: out: @want rounded up to a power of two
 *
 * Return: 0, or -EINVAL for 0 or more than @max.
 */
int kgo_ring_entries(u32 want, u32 max, u32 *entries)
{
	if (!want || want > max)
		return -EINVAL;
	*entries = roundup_pow_of_two(want);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_entries);

/**
 * kgo_ring_layout() - where everything goes in the shared pages
 * @sq_entries: SQ size, a power of two, at most KGO_RING_SQ_MAX
 * @cq_entries: CQ size, a power of two, at most KGO_RING_CQ_MAX
 * @off: out: the offsets
 * @size: out: the bytes to map, whole pages
 *
 * Return: 0, or -EINVAL for sizes out of range.
 */
int kgo_ring_layout(u32 sq_entries, u32 cq_entries, struct kgo_ring_offsets *off,
		    size_t *size)
{
	size_t sq_bytes, cq_bytes;

	if (!is_power_of_2(sq_entries) || sq_entries > KGO_RING_SQ_MAX ||
	    !is_power_of_2(cq_entries) || cq_entries > KGO_RING_CQ_MAX)
		return -EINVAL;
	memset(off, 0, sizeof(*off));
	off->sq_head = 0;
	off->sq_tail = KGO_RING_LINE;
	off->cq_head = 2 * KGO_RING_LINE;
	off->cq_tail = 3 * KGO_RING_LINE;
	off->sq_flags = 4 * KGO_RING_LINE;
	sq_bytes = ALIGN((size_t)sq_entries * sizeof(struct kgo_task), KGO_RING_LINE);
	cq_bytes = (size_t)cq_entries * sizeof(struct kgo_completion);
	off->sqes = KGO_RING_HDR;
	off->cqes = KGO_RING_HDR + sq_bytes;
	*size = PAGE_ALIGN(KGO_RING_HDR + sq_bytes + cq_bytes);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_layout);

static void kgo_ring_free_mem(struct kgo_ring *r)
{
	unsigned int i;

	if (r->mem)
		vunmap(r->mem);
	for (i = 0; i < r->npages; i++)
		if (r->pages[i])
			__free_page(r->pages[i]);
	kvfree(r->pages);
	kvfree(r->jobs);
	kfree(r);
}

/* The shared pages, zeroed and mapped for us. */
static int kgo_ring_alloc_mem(struct kgo_ring *r)
{
	/* Charged to the caller; a memcg at its limit fails, never OOM-kills. */
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	unsigned int i;

	r->npages = r->size >> PAGE_SHIFT;
	r->pages = kvcalloc(r->npages, sizeof(*r->pages), gfp);
	if (!r->pages)
		return -ENOMEM;
	for (i = 0; i < r->npages; i++) {
		r->pages[i] = alloc_page(gfp | __GFP_ZERO);
		if (!r->pages[i])
			return -ENOMEM;
	}
	r->mem = vmap(r->pages, r->npages, VM_MAP, PAGE_KERNEL);
	if (!r->mem)
		return -ENOMEM;
	r->jobs = kvcalloc(r->cq_entries, sizeof(*r->jobs), gfp);
	return r->jobs ? 0 : -ENOMEM;
}

static void kgo_ring_init_mem(struct kgo_ring *r)
{
	u32 i;

	r->sq_head = r->mem + r->off.sq_head;
	r->sq_tail = r->mem + r->off.sq_tail;
	r->cq_head = r->mem + r->off.cq_head;
	r->cq_tail = r->mem + r->off.cq_tail;
	r->sq_flags = r->mem + r->off.sq_flags;
	r->sqes = r->mem + r->off.sqes;
	r->cqes = r->mem + r->off.cqes;
	init_llist_head(&r->free);
	for (i = 0; i < r->cq_entries; i++) {
		r->jobs[i].ring = r;
		llist_add(&r->jobs[i].fnode, &r->free);
	}
	mutex_init(&r->submit_lock);
	spin_lock_init(&r->wait_lock);
	INIT_LIST_HEAD(&r->waiters);
}

/*
 * What a ring costs its user, taken before anything is allocated: one
 * of max_user_rings, one of max_user_goroutines for a poller, and the
 * CQ's entries as tasks in flight.
 * Return: 0 or -EAGAIN.
 */
static int kgo_ring_charge(struct kgo_session *s, u32 flags, u32 cq_entries)
{
	int ret = -EAGAIN;

	if (!kgo_user_ring_get(s->user))
		return ret;
	if ((flags & KGO_RING_SQPOLL) && !kgo_user_g_get(s->user))
		goto err_ring;
	ret = kgo_session_reserve(s, cq_entries);
	if (ret)
		goto err_g;
	return 0;

err_g:
	if (flags & KGO_RING_SQPOLL)
		kgo_user_g_put(s->user);
err_ring:
	kgo_user_ring_put(s->user);
	return ret;
}

static void kgo_ring_uncharge(struct kgo_session *s, u32 flags, u32 cq_entries)
{
	kgo_session_unreserve_n(s, cq_entries);
	if (flags & KGO_RING_SQPOLL)
		kgo_user_g_put(s->user);
	kgo_user_ring_put(s->user);
}

/* Checks @p and fills in the sizes; the caller's max_inflight is @cq_max. */
static int kgo_ring_params_check(struct kgo_ring_params *p, u32 cq_max)
{
	u32 cq_want;
	int ret;

	if ((p->flags & ~KGO_RING_FLAGS) || p->__reserved || p->mmap_size ||
	    memchr_inv(&p->off, 0, sizeof(p->off)))
		return -EINVAL;
	ret = kgo_sqpoll_params(p);
	if (ret)
		return ret;
	ret = kgo_ring_entries(p->sq_entries, KGO_RING_SQ_MAX, &p->sq_entries);
	if (ret)
		return ret;
	cq_want = p->cq_entries ?: 2 * p->sq_entries;
	ret = kgo_ring_entries(cq_want, min_t(u32, KGO_RING_CQ_MAX, cq_max), &p->cq_entries);
	if (ret)
		return ret;
	/* Rounding up must not pass the cap either. */
	if (p->cq_entries > cq_max || p->cq_entries < p->sq_entries)
		return -EINVAL;
	return 0;
}

/**
 * kgo_ring_create() - the first half of KGO_IOC_RING_SETUP
 * @s: the session
 * @p: the caller's parameters, copied in; the answers are written there
 *
 * Makes the ring, charged to the user's caps before anything is
 * allocated (kgo_ring_charge()), but does not give it to @s:
 * kgo_ring_install() does, once the caller has learnt where things
 * are, or kgo_ring_destroy() undoes it.
 *
 * Context: process, may sleep.
 * Return: the ring or an ERR_PTR (see the uapi).
 */
struct kgo_ring *kgo_ring_create(struct kgo_session *s, struct kgo_ring_params *p)
{
	struct kgo_ring *r;
	size_t size;
	int ret;

	ret = kgo_ring_params_check(p, kgo_session_max_inflight());
	if (ret)
		return ERR_PTR(ret);
	ret = kgo_ring_layout(p->sq_entries, p->cq_entries, &p->off, &size);
	if (ret)
		return ERR_PTR(ret);
	if (READ_ONCE(s->ring))
		return ERR_PTR(-EBUSY);
	/*
	 * The caps first, so that a user past them allocates nothing: the
	 * ring itself, its poller's goroutine, and the CQ's slots as tasks
	 * in flight, all for as long as the ring lives.
	 */
	ret = kgo_ring_charge(s, p->flags, p->cq_entries);
	if (ret)
		return ERR_PTR(ret);
	ret = -ENOMEM;
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		goto err_uncharge;
	r->s = s;
	r->sq_entries = p->sq_entries;
	r->cq_entries = p->cq_entries;
	r->flags = p->flags;
	r->sq_idle_ms = p->sq_idle_ms;
	r->off = p->off;
	r->size = size;
	ret = kgo_ring_alloc_mem(r);
	if (ret)
		goto err_free;
	kgo_ring_init_mem(r);
	p->mmap_size = size;
	return r;

err_free:
	kgo_ring_free_mem(r);
err_uncharge:
	kgo_ring_uncharge(s, p->flags, p->cq_entries);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_create);

/**
 * kgo_ring_install() - give @s the ring @r
 * @s: the session
 * @r: from kgo_ring_create(); destroyed if @s has a ring already
 *
 * Return: 0, or -EBUSY: another thread's setup won.
 */
int kgo_ring_install(struct kgo_session *s, struct kgo_ring *r)
{
	/* Release: whoever finds the ring finds it initialised. */
	if (cmpxchg_release(&s->ring, NULL, r)) {
		kgo_ring_destroy(r);
		return -EBUSY;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_install);

/* Frees @r: the session is going, and with it every job and mapping. */
void kgo_ring_destroy(struct kgo_ring *r)
{
	WARN_ON_ONCE(!list_empty(&r->waiters));
	kgo_sqpoll_free(r);
	kgo_ring_uncharge(r->s, r->flags, r->cq_entries);
	kgo_ring_free_mem(r);
}

/**
 * kgo_ring_mmap() - map @s's ring into the caller
 * @s: the session
 * @vma: the caller's mapping: MAP_SHARED, offset KGO_RING_OFF_ALL, at
 *	 most the ring's size
 *
 * Return: 0; -ENXIO with no ring; -EINVAL for another offset, a longer
 * length or a private mapping.
 */
int kgo_ring_mmap(struct kgo_session *s, struct vm_area_struct *vma)
{
	/* Acquire: pairs with kgo_ring_setup()'s release. */
	struct kgo_ring *r = smp_load_acquire(&s->ring);
	unsigned long len = vma->vm_end - vma->vm_start;
	unsigned long n = len >> PAGE_SHIFT;

	if (!r)
		return -ENXIO;
	if (vma->vm_pgoff != (KGO_RING_OFF_ALL >> PAGE_SHIFT) || len > r->size)
		return -EINVAL;
	/* A private copy would leave the caller writing to itself. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	kgo_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return vm_insert_pages(vma, vma->vm_start, r->pages, &n);
}

/* A free job, or NULL. Context: submit_lock held. */
struct kgo_job *kgo_ring_job_get(struct kgo_ring *r)
{
	struct llist_node *n;

	lockdep_assert_held(&r->submit_lock);
	if (!r->cache)
		r->cache = llist_reverse_order(llist_del_all(&r->free));
	n = r->cache;
	if (!n)
		return NULL;
	r->cache = n->next;
	return container_of(n, struct kgo_job, fnode);
}

/* Gives a job back. Context: any. */
void kgo_ring_job_put(struct kgo_ring *r, struct kgo_job *job)
{
	llist_add(&job->fnode, &r->free);
}

/**
 * kgo_ring_post() - write one completion into the CQ
 * @r: the ring
 * @c: the completion
 *
 * Never overwrites an entry the caller has not consumed: every posted
 * completion was promised a slot when its task was consumed. The caller
 * follows up with kgo_ring_wake() once it dropped the lock.
 *
 * Context: session->lock held.
 * Return: the new tail.
 */
u32 kgo_ring_post(struct kgo_ring *r, const struct kgo_completion *c)
{
	lockdep_assert_held(&r->s->lock);
	memcpy(kgo_ring_post_slot(r), c, sizeof(*c));
	kgo_ring_post_commit(r);	/* rule 3 */
	return r->cq_ktail;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_post);

/**
 * kgo_ring_wake() - after posting: wake the waiters whose count is reached
 * @r: the ring
 *
 * Context: process, no session->lock.
 */
void kgo_ring_wake(struct kgo_ring *r)
{
	struct kgo_ring_waiter *w, *tmp;
	u32 tail, wake_at = 0;
	bool any = false;

	/* Pairs with the waiter's set_current_state(): see "Waiting". */
	smp_mb();
	if (READ_ONCE(r->poll_armed) && wq_has_sleeper(&r->s->wq))
		wake_up(&r->s->wq);
	if (!READ_ONCE(r->nwaiters) ||
	    !kgo_ring_reached(READ_ONCE(r->cq_ktail), READ_ONCE(r->wake_at)))
		return;
	spin_lock(&r->wait_lock);
	tail = READ_ONCE(r->cq_ktail);
	list_for_each_entry_safe(w, tmp, &r->waiters, node) {
		if (kgo_ring_reached(tail, w->target)) {
			list_del_init(&w->node);
			r->nwaiters--;
			/* Under wait_lock: @w cannot go before we are done. */
			wake_up_process(w->task);
		} else if (!any || !kgo_ring_reached(w->target, wake_at)) {
			wake_at = w->target;
			any = true;
		}
	}
	if (any)
		WRITE_ONCE(r->wake_at, wake_at);
	spin_unlock(&r->wait_lock);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_wake);

/* Lists @w, keeping wake_at the earliest target. */
static void kgo_ring_waiter_add(struct kgo_ring *r, struct kgo_ring_waiter *w)
{
	spin_lock(&r->wait_lock);
	list_add_tail(&w->node, &r->waiters);
	if (!r->nwaiters++ || !kgo_ring_reached(w->target, r->wake_at))
		WRITE_ONCE(r->wake_at, w->target);
	spin_unlock(&r->wait_lock);
}

static void kgo_ring_waiter_del(struct kgo_ring *r, struct kgo_ring_waiter *w)
{
	spin_lock(&r->wait_lock);
	if (!list_empty(&w->node)) {
		list_del(&w->node);
		r->nwaiters--;	/* wake_at may be early now: one spurious look */
	}
	spin_unlock(&r->wait_lock);
}

/*
 * The waiter's spin (see ring_spin): whether the tail reached @target.
 * Yields to what the scheduler wants to run meanwhile, as cond_resched()
 * does; never sleeps.
 */
static bool kgo_ring_spin(struct kgo_ring *r, u32 target)
{
	unsigned int i, n = min(READ_ONCE(ring_spin), KGO_RING_SPIN_MAX);

	for (i = 0; i < n; i++) {
		if (kgo_ring_reached(READ_ONCE(r->cq_ktail), target))
			return true;
		if (signal_pending(current))
			return false;
		if (!cond_resched())
			cpu_relax();
	}
	return false;
}

/**
 * kgo_ring_wait() - wait for completions in the CQ
 * @r: the ring
 * @min: until this many are between the caller's cq_head and cq_tail,
 *	 or every task consumed so far has completed
 * @timeout_ns: 0 to poll, KGO_WAIT_FOREVER, or a limit
 *
 * Context: process, may sleep.
 * Return: 0, -ETIMEDOUT or -EINTR.
 */
int kgo_ring_wait(struct kgo_ring *r, u32 min, u64 timeout_ns)
{
	struct kgo_ring_waiter w = { .task = current };
	u32 issued = READ_ONCE(r->issued);
	ktime_t expires = 0;
	int ret = 0;

	/* A poller's: published is as good as consumed, it soon will be. */
	if (r->sqpoll_wake)
		issued += max_t(s64, kgo_ring_sq_ready(READ_ONCE(*r->sq_tail),
							READ_ONCE(r->sq_khead), r->sq_entries), 0);
	/* A garbage head only makes the caller wait for the wrong count. */
	w.target = READ_ONCE(*r->cq_head) + min;
	if (kgo_ring_reached(w.target, issued))
		w.target = issued;
	if (kgo_ring_reached(READ_ONCE(r->cq_ktail), w.target))
		return 0;
	if (!timeout_ns)
		return -ETIMEDOUT;
	if (kgo_ring_spin(r, w.target))
		return 0;
	if (timeout_ns != KGO_WAIT_FOREVER)
		expires = ktime_add_safe(ktime_get(),
					 ns_to_ktime(min_t(u64, timeout_ns, KTIME_MAX)));

	kgo_ring_waiter_add(r, &w);
	for (;;) {
		/* Full barrier: pairs with kgo_ring_wake()'s. */
		set_current_state(TASK_INTERRUPTIBLE);
		if (kgo_ring_reached(READ_ONCE(r->cq_ktail), w.target))
			break;
		if (signal_pending(current)) {
			ret = -EINTR;	/* not restarted: the timeout would restart */
			break;
		}
		if (ret == -ETIMEDOUT)
			break;
		if (!expires)
			schedule();
		else if (!schedule_hrtimeout(&expires, HRTIMER_MODE_ABS))
			ret = -ETIMEDOUT;	/* one last look at the tail */
	}
	__set_current_state(TASK_RUNNING);
	kgo_ring_waiter_del(r, &w);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_wait);

/*
 * For poll(2): whether the CQ has entries the caller has not consumed.
 * Arms the posters' wake-up of the session's wait queue.
 */
bool kgo_ring_cq_pending(struct kgo_ring *r)
{
	if (!READ_ONCE(r->poll_armed))
		WRITE_ONCE(r->poll_armed, true);
	/* Pairs with kgo_ring_wake()'s: we see the tail, or it sees us armed. */
	smp_mb();
	/* The caller's head may be ahead of cq_ktail: see kgo_ring_post_commit(). */
	return !kgo_ring_reached(READ_ONCE(*r->cq_head), READ_ONCE(r->cq_ktail));
}
EXPORT_SYMBOL_IF_KUNIT(kgo_ring_cq_pending);
