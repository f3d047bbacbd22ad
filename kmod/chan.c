// SPDX-License-Identifier: GPL-2.0
/*
 * Channels and select, after Go's chan.go and select.go.
 *
 * A channel is a spinlock, a ring of @cap elements and two FIFO queues
 * of blocked senders and receivers. A blocked operation is a sudog on
 * its waiter's stack; whoever serves it copies the element straight to
 * or from the waiter's memory (for an unbuffered channel, sender to
 * receiver with no buffer in between), claims the waiter and wakes it.
 *
 * A plain send or receive takes its own path (kgo_chan_op(), Go's
 * chansend and chanrecv): one lock, one queue, and none of a select's
 * scratch space, poll order or lock sorting, which were half of what a
 * plain operation cost when it was a select of one case. It shares
 * with select the part that does the operation (kgo_case_try()) and
 * the sudog. A select locks every channel involved in address order (so two
 * selects cannot deadlock), looks for a ready case in a random order,
 * and otherwise queues a sudog on every channel and blocks; the first
 * claim wins (kgo_waiter_claim()), and the others find the waiter
 * claimed and skip it.
 *
 * Locks are taken with interrupts off: KGO_NOWAIT operations are legal
 * in hardirq. Those save and restore the interrupt flag; a blocking
 * operation is made with interrupts on (kgo_may_block() refuses it
 * otherwise, and lockdep asserts it), so it turns them off and on with
 * nothing to save. Lock order: channel locks by address, then
 * sched.lock (through kgo_ready()). lockdep sees the channel locks of
 * one select as nested under kgo_select_nest.
 *
 * PREEMPT_RT: a channel's lock is a spinlock_t, which sleeps there, and
 * interrupts stay on around it (kgo_lock_irq_disable(), locking.h), as
 * spin_lock_irq() leaves them on RT. KGO_NOWAIT operations are then
 * legal in threaded interrupt handlers and spinlock_t sections, not in
 * hard interrupt context; a parking operation's locks are released by
 * its unlockf with interrupts off, which RT allows. It is not a raw
 * lock: an element copy of up to 4 KiB, a select's 64 channels and a
 * close's wake-up of every waiter are not sections RT can bound.
 *
 * A plain operation's waiter is claimed by whoever holds its channel's
 * lock (a partner, or a close), and by nothing else unless it has a
 * timeout: so its claim needs no atomic (struct kgo_waiter's single),
 * and once woken by its channel it is off the queue already, with no
 * lock to take again. The caller's M is looked up once per operation
 * and handed to the wake-up and the park.
 */

#include <linux/lockdep.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include <kgo.h>
#include "check.h"
#include "g.h"
#include "locking.h"
#include "m.h"
#include "proc.h"
#include "sched.h"
#include "waiter.h"

struct kgo_sudog;

/*
 * A FIFO of blocked operations, Go's waitq: doubly linked through the
 * sudogs, so that a timeout or a select's other cases take a sudog out
 * of the middle, and each sudog knows its queue, which is how a woken
 * waiter learns it is off every queue. Not a list_head: with
 * CONFIG_DEBUG_LIST, which Debian's kernels have, every add and delete
 * is an out-of-line check, 74 instructions of the 1449 a channel round
 * trip took. The same checks are made inline here: a link that does not
 * point back warns and the operation is refused, as list debugging
 * does. Context: the lock of the queue's channel (or, for
 * kgo_chan_close()'s own wake queue, its caller alone).
 */
struct kgo_waitq {
	struct kgo_sudog *first, *last;
};

struct kgo_chan {
	spinlock_t lock;		/* irq-safe; the C below (locking.h) */
	u32 elemsize;			/* I */
	u32 cap;			/* I */
	u32 count;			/* C: elements buffered */
	u32 sendx;			/* C: next slot to fill */
	u32 recvx;			/* C: next slot to drain */
	bool closed;			/* C */
	struct kgo_waitq sendq;		/* C: blocked senders */
	struct kgo_waitq recvq;		/* C: blocked receivers */
	char buf[];			/* C: @cap slots of @elemsize */
};

/* A blocked operation of one waiter on one channel. */
struct kgo_sudog {
	struct kgo_sudog *next, *prev;	/* on *@q; the lock of @q's channel */
	struct kgo_waitq *q;		/* NULL while on none; ditto */
	struct kgo_waiter *w;
	void *elem;			/* send: source; receive: destination */
	int why;			/* 1 + the select case index */
	bool ok;			/* set by the server: false = closed */
};

static inline bool kgo_sudog_queued(const struct kgo_sudog *s)
{
	return s->q;
}

static inline void kgo_waitq_push(struct kgo_waitq *q, struct kgo_sudog *s)
{
	struct kgo_sudog *last = q->last;

	if (WARN_ONCE(last ? last->next : q->first,
		      "kgo: channel wait queue corrupted at %p\n", q))
		return;
	s->q = q;
	s->next = NULL;
	s->prev = last;
	if (last)
		last->next = s;
	else
		q->first = s;
	q->last = s;
}

static inline void kgo_waitq_del(struct kgo_sudog *s)
{
	struct kgo_waitq *q = s->q;
	struct kgo_sudog *next = s->next, *prev = s->prev;

	if (WARN_ONCE((prev ? prev->next : q->first) != s ||
		      (next ? next->prev : q->last) != s,
		      "kgo: channel wait queue corrupted at %p\n", s))
		return;
	if (prev)
		prev->next = next;
	else
		q->first = next;
	if (next)
		next->prev = prev;
	else
		q->last = prev;
	s->q = NULL;
}

#ifdef CONFIG_DEBUG_LOCK_ALLOC
static struct lock_class_key kgo_select_key;
static struct {
	struct lockdep_map dep_map;
} kgo_select_nest = {
	.dep_map = STATIC_LOCKDEP_MAP_INIT("kgo_select", &kgo_select_key),
};
#else
static struct {} kgo_select_nest __maybe_unused;
#endif

struct kgo_chan *kgo_chan_create(size_t elem_size, unsigned int cap, gfp_t gfp)
{
	struct kgo_chan *c;

	if (elem_size > KGO_CHAN_ELEM_MAX || cap > KGO_CHAN_CAP_MAX)
		return ERR_PTR(-EINVAL);
	c = kvzalloc(struct_size(c, buf, (size_t)cap * elem_size), gfp);
	if (!c)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&c->lock);
	c->elemsize = elem_size;
	c->cap = cap;
	return c;
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_create, KGO_NS);

int kgo_chan_destroy(struct kgo_chan *c)
{
	unsigned long flags;
	bool busy;

	if (IS_ERR_OR_NULL(c))
		return 0;
	spin_lock_irqsave(&c->lock, flags);
	busy = c->sendq.first || c->recvq.first;
	spin_unlock_irqrestore(&c->lock, flags);
	/*
	 * Waiters hold pointers into it: freeing it would be a use after
	 * free in each. Leak it instead; closing it first frees them.
	 */
	if (WARN_ONCE(busy, "kgo: %s() of a channel with waiters\n", __func__))
		return -EBUSY;
	kvfree(c);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_destroy, KGO_NS);

unsigned int kgo_chan_len(struct kgo_chan *c)
{
	return READ_ONCE(c->count);
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_len, KGO_NS);

unsigned int kgo_chan_cap(struct kgo_chan *c)
{
	return c->cap;
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_cap, KGO_NS);

static void *kgo_chan_slot(struct kgo_chan *c, u32 i)
{
	return c->buf + (size_t)i * c->elemsize;
}

static __always_inline void kgo_chan_copy(struct kgo_chan *c, void *dst, const void *src)
{
	/* A word, the common element, is two moves, not a string copy. */
	if (dst && src && c->elemsize == sizeof(u64))
		memcpy(dst, src, sizeof(u64));
	else if (dst && src)
		memcpy(dst, src, c->elemsize);
	else if (dst)
		memset(dst, 0, c->elemsize);
}

/*
 * The first waiter on @q that nobody else claimed, claimed for its case
 * and unlinked. Waiters claimed already (timed out, or woken through
 * another case of their select) are unlinked and skipped.
 * Context: the channel's lock held.
 */
static inline struct kgo_sudog *kgo_chan_dequeue(struct kgo_waitq *q)
{
	struct kgo_sudog *s;

	while ((s = q->first)) {
		kgo_waitq_del(s);
		if (kgo_waiter_claim(s->w, s->why))
			return s;
	}
	return NULL;
}

/*
 * Does case @cs now if it can. Returns true if done; *@wake is then a
 * claimed waiter to wake once the locks are dropped, or NULL.
 * Context: the case's channel locked. Inline: a plain operation keeps
 * only its own direction of it.
 */
static __always_inline bool kgo_case_try(struct kgo_select_case *cs, struct kgo_sudog **wake)
{
	struct kgo_chan *c = cs->chan;
	struct kgo_sudog *s;

	lockdep_assert_held(&c->lock);
	*wake = NULL;
	if (cs->dir == KGO_SELECT_SEND) {
		cs->err = 0;
		if (c->closed) {
			cs->err = -EPIPE;
			return true;
		}
		s = kgo_chan_dequeue(&c->recvq);
		if (s) {		/* hand over directly */
			kgo_chan_copy(c, s->elem, cs->elem);
			s->ok = true;
			*wake = s;
			return true;
		}
		if (c->count < c->cap) {
			kgo_chan_copy(c, kgo_chan_slot(c, c->sendx), cs->elem);
			c->sendx = (c->sendx + 1) % c->cap;
			WRITE_ONCE(c->count, c->count + 1);
			return true;
		}
		return false;
	}

	cs->ok = true;
	s = kgo_chan_dequeue(&c->sendq);
	if (s) {
		if (!c->cap) {
			kgo_chan_copy(c, cs->elem, s->elem);
		} else {
			/* A sender waits only on a full buffer: rotate it. */
			kgo_chan_copy(c, cs->elem, kgo_chan_slot(c, c->recvx));
			kgo_chan_copy(c, kgo_chan_slot(c, c->recvx), s->elem);
			c->recvx = (c->recvx + 1) % c->cap;
			c->sendx = c->recvx;
		}
		s->ok = true;
		*wake = s;
		return true;
	}
	if (c->count) {
		kgo_chan_copy(c, cs->elem, kgo_chan_slot(c, c->recvx));
		c->recvx = (c->recvx + 1) % c->cap;
		WRITE_ONCE(c->count, c->count - 1);
		return true;
	}
	if (c->closed) {
		kgo_chan_copy(c, cs->elem, NULL);
		cs->ok = false;
		return true;
	}
	return false;
}

/*
 * After a case was done and its locks dropped: interrupts back as the
 * operation found them (@blocking: on; else @flags), then the waiter
 * it served, if any, woken by the caller's M @m.
 */
static __always_inline void kgo_case_finish(struct kgo_sudog *wake, struct kgo_m *m,
					    bool blocking, unsigned long flags)
{
	if (blocking)
		kgo_lock_irq_enable();
	else
		kgo_lock_irq_restore(flags);
	if (wake)
		kgo_waiter_wake_m(wake->w, m);
}

/* Scratch space of one select: on the stack for small ones. */
#define KGO_SELECT_INLINE	4

struct kgo_sel {
	unsigned int nlocks;
	u8 *order;			/* poll order: a random permutation */
	struct kgo_chan **locks;	/* distinct channels, by address */
	struct kgo_sudog *sg;		/* one per case, when blocking */
	void *mem;
	u8 order_inline[KGO_SELECT_INLINE];
	struct kgo_chan *locks_inline[KGO_SELECT_INLINE];
	struct kgo_sudog sg_inline[KGO_SELECT_INLINE];
};

static int kgo_sel_setup(struct kgo_sel *sel, struct kgo_select_case *cases,
			 unsigned int n, gfp_t gfp)
{
	unsigned int i, j;

	sel->mem = NULL;
	if (n == 1) {		/* a plain send or receive */
		sel->order = sel->order_inline;
		sel->locks = sel->locks_inline;
		sel->sg = sel->sg_inline;
		sel->order[0] = 0;
		sel->locks[0] = cases[0].chan;
		sel->nlocks = !!cases[0].chan;
		return 0;
	}
	if (n <= KGO_SELECT_INLINE) {
		sel->order = sel->order_inline;
		sel->locks = sel->locks_inline;
		sel->sg = sel->sg_inline;
	} else {
		sel->mem = kmalloc_array(n, sizeof(*sel->sg) + sizeof(*sel->locks) + 1, gfp);
		if (!sel->mem)
			return -ENOMEM;
		sel->sg = sel->mem;
		sel->locks = (void *)(sel->sg + n);
		sel->order = (void *)(sel->locks + n);
	}

	/* Fisher-Yates: every order equally likely, hence fair choice. */
	for (i = 0; i < n; i++) {
		j = i ? get_random_u32_below(i + 1) : 0;
		sel->order[i] = sel->order[j];
		sel->order[j] = i;
	}

	/* Insertion sort by address, without duplicates. */
	sel->nlocks = 0;
	for (i = 0; i < n; i++) {
		struct kgo_chan *c = cases[i].chan;

		if (!c)
			continue;
		for (j = sel->nlocks; j > 0 && sel->locks[j - 1] > c; j--)
			;
		if (j > 0 && sel->locks[j - 1] == c)
			continue;
		memmove(&sel->locks[j + 1], &sel->locks[j],
			(sel->nlocks - j) * sizeof(*sel->locks));
		sel->locks[j] = c;
		sel->nlocks++;
	}
	return 0;
}

/* Context: interrupts off. */
static void kgo_sel_lock(struct kgo_sel *sel)
{
	unsigned int i;

	if (sel->nlocks == 1) {
		spin_lock(&sel->locks[0]->lock);
		return;
	}
	lock_map_acquire(&kgo_select_nest.dep_map);
	for (i = 0; i < sel->nlocks; i++)
		spin_lock_nest_lock(&sel->locks[i]->lock, &kgo_select_nest);
}

/*
 * Leaves interrupts off. Also the unlock of kgo_waiter_block(): as the
 * unlock of a parking goroutine, this is the last touch of @sel,
 * which lives on that goroutine's stack: once the last lock is released
 * the goroutine may be woken and return. Nothing of @sel is read after.
 */
static void kgo_sel_unlock(void *arg)
{
	struct kgo_sel *sel = arg;
	unsigned int i = sel->nlocks;
	bool nested = i > 1;
	spinlock_t *first;	/* the outer lock, released last */

	if (!i)
		return;
	first = &sel->locks[0]->lock;
	while (--i)
		spin_unlock(&sel->locks[i]->lock);
	spin_unlock(first);
	/* After every lock nested in it, as lockdep wants; a global map. */
	if (nested)
		lock_map_release(&kgo_select_nest.dep_map);
}

/* What a goroutine blocked in this select waits for, for debugfs. */
static u8 kgo_select_reason(const struct kgo_select_case *cases, unsigned int n)
{
	if (n > 1)
		return KGO_WAIT_REASON_SELECT;
	if (cases[0].dir == KGO_SELECT_SEND)
		return KGO_WAIT_REASON_CHAN_SEND;
	return KGO_WAIT_REASON_CHAN_RECV;
}

static __always_inline int __kgo_select(struct kgo_select_case *cases, unsigned int n,
					u64 timeout_ns, bool killable, const char *fn)
{
	bool blocking = timeout_ns != KGO_NOWAIT;
	struct kgo_sudog *wake = NULL;
	gfp_t gfp;
	/*
	 * Not zeroed on entry (CONFIG_INIT_STACK_ALL_ZERO would spend 360
	 * bytes of stores on them in every channel operation): each field
	 * is written before it is read, by kgo_sel_setup(), by
	 * kgo_waiter_init() (the timer only with a timeout, and only then
	 * used) and, for a case's sudog, when it is queued.
	 */
	struct kgo_waiter w __uninitialized;
	struct kgo_sel sel __uninitialized;
	unsigned long flags;
	struct kgo_m *m;
	unsigned int i;
	bool due;
	int ret, why;

	if (!n || n > KGO_SELECT_MAX)
		return -EINVAL;
	if (blocking) {
		/* Blocking is for goroutines and threads, with nothing held. */
		if (!kgo_may_block(fn))
			return -EPERM;
		might_sleep();
		m = kgo_preempt_check_m(kgo_g_m());
	} else {
		m = kgo_g_m();
	}
	/*
	 * The caller's M, looked up once for the whole operation: the wake
	 * and the park below take it from here (until the park, the G does
	 * not switch). A wake-up the G deferred before this operation (rule
	 * 5 in sched.c) is paid if it goes on without parking.
	 */
	due = m && kgo_g_wakep_due(m);
	gfp = blocking ? GFP_KERNEL : GFP_ATOMIC;
	ret = kgo_sel_setup(&sel, cases, n, gfp);
	if (ret)
		return ret;
	if (!sel.nlocks) {	/* only never-ready cases */
		ret = blocking ? -ETIMEDOUT : -EAGAIN;
		if (blocking)
			kgo_sleep(timeout_ns);
		goto out;
	}

	/* Blocking callers have interrupts on (kgo_may_block): no save. */
	if (blocking) {
		lockdep_assert_irqs_enabled();
		kgo_lock_irq_disable();
	} else {
		flags = kgo_lock_irq_save();
	}
	kgo_sel_lock(&sel);
	for (i = 0; i < n; i++) {
		struct kgo_select_case *cs = &cases[sel.order[i]];

		if (cs->chan && kgo_case_try(cs, &wake)) {
			ret = sel.order[i];
			kgo_sel_unlock(&sel);
			kgo_case_finish(wake, m, blocking, flags);
			goto done;
		}
	}
	if (!blocking) {
		kgo_sel_unlock(&sel);
		kgo_lock_irq_restore(flags);
		ret = -EAGAIN;
		goto done;
	}

	/* Nothing ready: wait on every channel, in case order. */
	kgo_waiter_init(&w, m, timeout_ns, kgo_select_reason(cases, n), n == 1);
	if (killable)
		kgo_waiter_killable(&w);
	for (i = 0; i < n; i++) {
		struct kgo_select_case *cs = &cases[i];
		struct kgo_sudog *s = &sel.sg[i];

		if (!cs->chan)
			continue;
		*s = (struct kgo_sudog){ .w = &w, .elem = cs->elem, .why = i + 1 };
		kgo_waitq_push(cs->dir == KGO_SELECT_SEND ?
			       &cs->chan->sendq : &cs->chan->recvq, s);
	}
	why = kgo_waiter_block(&w, kgo_sel_unlock, &sel);

	/*
	 * Off every other queue (Go's pass 3). A plain operation woken by
	 * its channel has none: whoever claimed it unlinked it first, under
	 * the lock (kgo_chan_dequeue(), kgo_chan_close()), and the claim is
	 * the only one there can be. Only a timeout may leave it linked.
	 */
	if (n > 1 || why == KGO_WAIT_TIMEOUT) {
		kgo_lock_irq_disable();
		kgo_sel_lock(&sel);
		for (i = 0; i < n; i++)
			if (cases[i].chan && kgo_sudog_queued(&sel.sg[i]))
				kgo_waitq_del(&sel.sg[i]);
		kgo_sel_unlock(&sel);
		kgo_lock_irq_enable();
	}
	kgo_waiter_destroy(&w);

	if (why == KGO_WAIT_TIMEOUT) {
		ret = kgo_waiter_err(&w);
	} else {
		struct kgo_select_case *cs = &cases[why - 1];

		ret = why - 1;
		if (cs->dir == KGO_SELECT_SEND)
			cs->err = sel.sg[ret].ok ? 0 : -EPIPE;
		else
			cs->ok = sel.sg[ret].ok;
	}
	goto out;
done:
	/* It goes on without parking: rule 5's deferred wake-up is owed. */
	if (due)
		kgo_g_wakep_if_due(m);
out:
	if (unlikely(sel.mem))	/* a big select: the common one calls nothing */
		kfree(sel.mem);
	return ret;
}

int kgo_select(struct kgo_select_case *cases, unsigned int n, u64 timeout_ns)
{
	return __kgo_select(cases, n, timeout_ns, false, __func__);
}
EXPORT_SYMBOL_NS_GPL(kgo_select, KGO_NS);

int kgo_select_killable(struct kgo_select_case *cases, unsigned int n, u64 timeout_ns)
{
	return __kgo_select(cases, n, timeout_ns, true, __func__);
}
EXPORT_SYMBOL_NS_GPL(kgo_select_killable, KGO_NS);

/* The unlock of a plain operation's park: see kgo_sel_unlock(). */
static void kgo_chan_unlock(void *arg)
{
	struct kgo_chan *c = arg;

	spin_unlock(&c->lock);
}

/*
 * A plain send or receive: kgo_select() of the one case @cs, on a
 * channel (a nil one goes to kgo_select(), which knows what blocking on
 * nothing means). Inline in its two callers, so that each keeps only
 * its direction of kgo_case_try().
 * Return: 0 with the result in @cs, -EAGAIN, -ETIMEDOUT or -EPERM.
 */
static __always_inline int kgo_chan_op(struct kgo_select_case *cs, u64 timeout_ns,
				       bool killable)
{
	bool blocking = timeout_ns != KGO_NOWAIT;
	struct kgo_chan *c = cs->chan;
	struct kgo_sudog *wake = NULL;
	struct kgo_waiter w __uninitialized;	/* as in kgo_select() */
	struct kgo_sudog s __uninitialized;
	unsigned long flags;
	struct kgo_m *m;
	bool due;
	int why;

	if (unlikely(!c)) {
		/* Never 0: never ready. */
		why = killable ? kgo_select_killable(cs, 1, timeout_ns) :
				 kgo_select(cs, 1, timeout_ns);
		return why < 0 ? why : 0;
	}
	if (blocking) {
		if (!kgo_may_block(cs->dir == KGO_SELECT_SEND ? "kgo_chan_send" :
						  "kgo_chan_recv"))
			return -EPERM;
		might_sleep();
		m = kgo_preempt_check_m(kgo_g_m());
		lockdep_assert_irqs_enabled();
		kgo_lock_irq_disable();
	} else {
		m = kgo_g_m();
		flags = kgo_lock_irq_save();
	}
	/* As in kgo_select(): a deferred wake-up, owed if we go on. */
	due = m && kgo_g_wakep_due(m);
	spin_lock(&c->lock);
	if (kgo_case_try(cs, &wake)) {
		spin_unlock(&c->lock);
		kgo_case_finish(wake, m, blocking, flags);
		if (due)
			kgo_g_wakep_if_due(m);
		return 0;
	}
	if (!blocking) {
		spin_unlock(&c->lock);
		kgo_lock_irq_restore(flags);
		if (due)
			kgo_g_wakep_if_due(m);
		return -EAGAIN;
	}

	kgo_waiter_init(&w, m, timeout_ns, cs->dir == KGO_SELECT_SEND ?
			KGO_WAIT_REASON_CHAN_SEND : KGO_WAIT_REASON_CHAN_RECV, true);
	if (killable)
		kgo_waiter_killable(&w);
	s.w = &w;
	s.elem = cs->elem;
	s.why = 1;
	kgo_waitq_push(cs->dir == KGO_SELECT_SEND ? &c->sendq : &c->recvq, &s);
	why = kgo_waiter_block(&w, kgo_chan_unlock, c);
	if (why == KGO_WAIT_TIMEOUT) {
		/* Linked still, unless a partner unlinked it and lost the claim. */
		spin_lock_irq(&c->lock);
		if (kgo_sudog_queued(&s))
			kgo_waitq_del(&s);
		spin_unlock_irq(&c->lock);
		kgo_waiter_destroy(&w);
		return kgo_waiter_err(&w);
	}
	/* Claimed by the channel, which unlinked us (kgo_chan_dequeue()). */
	kgo_waiter_destroy(&w);
	if (cs->dir == KGO_SELECT_SEND)
		cs->err = s.ok ? 0 : -EPIPE;
	else
		cs->ok = s.ok;
	return 0;
}

static __always_inline int __kgo_chan_send(struct kgo_chan *c, const void *elem,
					   u64 timeout_ns, bool killable)
{
	struct kgo_select_case cs = {
		.chan = c, .dir = KGO_SELECT_SEND, .elem = (void *)elem,
	};
	int ret = kgo_chan_op(&cs, timeout_ns, killable);

	return ret < 0 ? ret : cs.err;
}

int kgo_chan_send(struct kgo_chan *c, const void *elem, u64 timeout_ns)
{
	return __kgo_chan_send(c, elem, timeout_ns, false);
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_send, KGO_NS);

int kgo_chan_send_killable(struct kgo_chan *c, const void *elem, u64 timeout_ns)
{
	return __kgo_chan_send(c, elem, timeout_ns, true);
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_send_killable, KGO_NS);

static __always_inline int __kgo_chan_recv(struct kgo_chan *c, void *elem, bool *ok,
					   u64 timeout_ns, bool killable)
{
	struct kgo_select_case cs = { .chan = c, .dir = KGO_SELECT_RECV, .elem = elem };
	int ret = kgo_chan_op(&cs, timeout_ns, killable);

	if (ret < 0)
		return ret;
	if (ok)
		*ok = cs.ok;
	return 0;
}

int kgo_chan_recv(struct kgo_chan *c, void *elem, bool *ok, u64 timeout_ns)
{
	return __kgo_chan_recv(c, elem, ok, timeout_ns, false);
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_recv, KGO_NS);

int kgo_chan_recv_killable(struct kgo_chan *c, void *elem, bool *ok, u64 timeout_ns)
{
	return __kgo_chan_recv(c, elem, ok, timeout_ns, true);
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_recv_killable, KGO_NS);

int kgo_chan_close(struct kgo_chan *c)
{
	struct kgo_waitq wake = {};
	struct kgo_sudog *s;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	if (c->closed) {
		spin_unlock_irqrestore(&c->lock, flags);
		return -EPIPE;
	}
	c->closed = true;
	while ((s = kgo_chan_dequeue(&c->recvq))) {
		kgo_chan_copy(c, s->elem, NULL);
		s->ok = false;
		kgo_waitq_push(&wake, s);
	}
	while ((s = kgo_chan_dequeue(&c->sendq))) {
		s->ok = false;
		kgo_waitq_push(&wake, s);
	}
	spin_unlock_irqrestore(&c->lock, flags);

	/* Unlink before waking: a woken waiter checks its own queue. */
	while ((s = wake.first)) {
		kgo_waitq_del(s);
		kgo_waiter_wake(s->w);
	}
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kgo_chan_close, KGO_NS);
