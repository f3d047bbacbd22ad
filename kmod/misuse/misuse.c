// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_misuse: a module that uses kgo's API wrongly, on purpose, and
 * checks that each misuse gets a warning and an error, never a sleep in
 * atomic context, a corrupted scheduler or a use after free. It runs its
 * cases when loaded and leaves TAP in debugfs (kgo_misuse/results).
 *
 * Every case WARNs (once per kgo call site and boot), so whoever loads
 * it must not panic on warnings, and must not count these warnings as
 * failures: tools/vm/jobs/check.sh brackets the load for run.sh.
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/seq_buf.h>
#include <linux/spinlock.h>

#include <kgo.h>
#include "compat.h"
#include "g.h"

#define MS		((u64)NSEC_PER_MSEC)
/*
 * A refused call returns at once; a wrongly honoured one takes this.  Long
 * enough that the refusals' own cost (each prints a warning, which KCSAN
 * under TCG made take 229 ms for the six) never reaches it.
 */
#define ASKED_NS	(2000 * MS)

static char results_buf[8192];
static struct seq_buf results;
static unsigned int ncase;
/* The TAP plan, then the results: what debugfs shows. */
static char tap_buf[8192 + 32];
static struct debugfs_blob_wrapper tap_blob = { .data = tap_buf };
static struct dentry *dir;

static void tap(bool ok, const char *name, const char *skip)
{
	ncase++;
	seq_buf_printf(&results, "%s %u %s%s%s\n", ok ? "ok" : "not ok", ncase, name,
		       skip ? " # SKIP " : "", skip ?: "");
}

/* What every blocking call does from one atomic context. */
struct blocking_calls {
	struct kgo_ctx ctx;
	struct kgo_waitgroup wg;	/* count 1: a wait would block */
	struct kgo_mutex m;		/* held: a lock would block */
	struct kgo_once once;		/* not done: it would lock its mutex */
	struct kgo_chan *c;		/* unbuffered, idle: a recv would block */
	int bad;			/* calls not refused with -EPERM */
	u64 took;			/* ns they took, all together */
};

/* Must not run: its kgo_once_do() is refused. */
static void once_never(void *arg)
{
	struct blocking_calls *b = arg;

	b->bad++;
}

static void blocking_calls_run(struct blocking_calls *b)
{
	struct kgo_select_case cs = { .chan = b->c, .dir = KGO_SELECT_RECV };
	u64 t0 = ktime_get_ns(), v;

	b->bad += kgo_sleep(ASKED_NS) != -EPERM;
	b->bad += kgo_ctx_sleep(&b->ctx, ASKED_NS) != -EPERM;
	b->bad += kgo_wg_wait_timeout(&b->wg, ASKED_NS) != -EPERM;
	b->bad += kgo_mutex_lock_timeout(&b->m, KGO_FOREVER) != -EPERM;
	/* The wrappers pass the refusal on: a caller must not go on. */
	b->bad += kgo_mutex_lock(&b->m) != -EPERM;
	b->bad += kgo_wg_wait(&b->wg) != -EPERM;
	b->bad += kgo_once_do(&b->once, once_never, b) != -EPERM;
	b->bad += kgo_chan_recv(b->c, &v, NULL, KGO_FOREVER) != -EPERM;
	b->bad += kgo_chan_send(b->c, &v, ASKED_NS) != -EPERM;
	b->bad += kgo_select(&cs, 1, ASKED_NS) != -EPERM;
	/* What may be called from anywhere still works. */
	b->bad += kgo_wg_wait_timeout(&b->wg, KGO_NOWAIT) != -EAGAIN;
	b->bad += kgo_mutex_trylock(&b->m);
	b->bad += kgo_chan_recv(b->c, &v, NULL, KGO_NOWAIT) != -EAGAIN;
	b->took += ktime_get_ns() - t0;
}

static int blocking_calls_init(struct blocking_calls *b)
{
	memset(b, 0, sizeof(*b));
	kgo_ctx_init(&b->ctx, NULL);
	kgo_wg_init(&b->wg);
	kgo_wg_add(&b->wg, 1);
	kgo_mutex_init(&b->m);
	kgo_mutex_init(&b->once.m);
	if (kgo_mutex_lock(&b->m))
		return -EPERM;
	b->c = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	return PTR_ERR_OR_ZERO(b->c);
}

static void blocking_calls_done(struct blocking_calls *b, const char *name)
{
	tap(!b->bad && b->took < ASKED_NS, name, NULL);
	if (b->bad || b->took >= ASKED_NS)
		pr_err("%s: %d calls not refused, %llu ns taken\n", name, b->bad, b->took);
	kgo_wg_done(&b->wg);
	kgo_mutex_unlock(&b->m);
	kgo_chan_destroy(b->c);
}

struct hardirq_case {
	struct hrtimer timer;
	struct blocking_calls b;
	atomic_t done;
};

static enum hrtimer_restart hardirq_calls(struct hrtimer *t)
{
	struct hardirq_case *h = container_of(t, struct hardirq_case, timer);

	blocking_calls_run(&h->b);
	atomic_set_release(&h->done, 1);
	return HRTIMER_NORESTART;
}

static void case_atomic(void)
{
	static struct hardirq_case h;
	struct blocking_calls b;
	DEFINE_SPINLOCK(lock);

	if (blocking_calls_init(&b))
		return tap(false, "blocking calls: no memory", NULL);
	local_irq_disable();
	blocking_calls_run(&b);
	local_irq_enable();
	blocking_calls_done(&b, "blocking calls with interrupts off fail with -EPERM");

	if (!IS_ENABLED(CONFIG_PREEMPT_COUNT)) {
		tap(true, "blocking calls under a spinlock", "no CONFIG_PREEMPT_COUNT");
	} else if (!blocking_calls_init(&b)) {
		spin_lock(&lock);
		blocking_calls_run(&b);
		spin_unlock(&lock);
		blocking_calls_done(&b, "blocking calls under a spinlock fail with -EPERM");
	}

	if (!IS_ENABLED(CONFIG_PREEMPT_RCU)) {
		tap(true, "blocking calls under rcu_read_lock()", "no CONFIG_PREEMPT_RCU");
	} else if (!blocking_calls_init(&b)) {
		rcu_read_lock();
		blocking_calls_run(&b);
		rcu_read_unlock();
		blocking_calls_done(&b, "blocking calls under rcu_read_lock() fail with -EPERM");
	}

	if (blocking_calls_init(&h.b))
		return tap(false, "blocking calls in hardirq: no memory", NULL);
	kgo_hrtimer_setup(&h.timer, hardirq_calls, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	hrtimer_start(&h.timer, ns_to_ktime(MS), HRTIMER_MODE_REL_HARD);
	while (!atomic_read_acquire(&h.done))
		usleep_range(1000, 2000);
	hrtimer_cancel(&h.timer);
	blocking_calls_done(&h.b, "blocking calls in a hardirq (hrtimer) fail with -EPERM");
}

/* A goroutine that runs, never parks, until told to stop. */
struct busy {
	struct kgo_g *g;
	atomic_t state;		/* 0 starting, 1 running, 2 stop, 3 done */
	u64 loops;
};

static void busy_fn(void *arg)
{
	struct busy *x = arg;

	x->g = kgo_self();
	atomic_set_release(&x->state, 1);
	while (atomic_read_acquire(&x->state) == 1) {
		x->loops++;
		cpu_relax();
		cond_resched();
	}
	atomic_set_release(&x->state, 3);
}

static bool wait_state(atomic_t *s, int want)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (atomic_read_acquire(s) == want)
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

/* kgo_ready() of a goroutine that is not parked: refused, harmless. */
static void case_stale_ready(void)
{
	static struct busy x;
	bool ok;

	if (kgo_go(busy_fn, &x, GFP_KERNEL) < 0 || !wait_state(&x.state, 1))
		return tap(false, "stale kgo_ready(): the goroutine never ran", NULL);
	ok = kgo_ready(x.g) == -EINVAL;
	ok &= kgo_ready(x.g) == -EINVAL;
	atomic_set_release(&x.state, 2);
	ok &= wait_state(&x.state, 3);	/* it ran on, and ended */
	tap(ok, "kgo_ready() of a running goroutine fails with -EINVAL", NULL);
}

struct waiter {
	struct kgo_chan *c;
	struct kgo_g *g;
	int ret;
	bool ok;
	atomic_t state;		/* 1 about to receive, 3 returned */
};

static void waiter_fn(void *arg)
{
	struct waiter *w = arg;
	u64 v;

	w->g = kgo_self();
	atomic_set_release(&w->state, 1);
	w->ret = kgo_chan_recv(w->c, &v, &w->ok, KGO_FOREVER);
	atomic_set_release(&w->state, 3);
}

/* kgo_chan_destroy() with a goroutine waiting: refused, not freed. */
static void case_destroy_busy(void)
{
	static struct waiter w;
	bool ok = false;
	int i;

	w.c = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	if (IS_ERR(w.c))
		return tap(false, "kgo_chan_destroy() with waiters: no memory", NULL);
	if (kgo_go(waiter_fn, &w, GFP_KERNEL) < 0 || !wait_state(&w.state, 1))
		goto out;
	/* Parked in the receive: on the channel's queue. */
	for (i = 0; i < 10000 && atomic_read(&w.g->status) != KGO_G_WAITING; i++)
		usleep_range(1000, 2000);
	ok = kgo_chan_destroy(w.c) == -EBUSY;
	ok &= kgo_chan_close(w.c) == 0;	/* the channel is still whole */
	ok &= wait_state(&w.state, 3) && !w.ret && !w.ok;
	ok &= kgo_chan_destroy(w.c) == 0;
	w.c = NULL;
out:
	tap(ok, "kgo_chan_destroy() with a waiter fails with -EBUSY and frees nothing", NULL);
	if (w.c && atomic_read(&w.state) != 1)
		kgo_chan_destroy(w.c);	/* else leaked: a waiter may use it */
}

/* A goroutine waiting in a select on two channels, or on a WaitGroup. */
struct late {
	struct kgo_chan *c[2];
	struct kgo_waitgroup wg;
	bool select;
	struct kgo_g *g;
	int ret;
	u64 v;
	atomic_t state;		/* 1 about to wait, 3 returned */
};

static void late_fn(void *arg)
{
	struct late *x = arg;

	x->g = kgo_self();
	atomic_set_release(&x->state, 1);
	if (x->select) {
		/* The first case a bad index would land before: cases[-1]. */
		struct kgo_select_case cs[2] = {
			{ .chan = x->c[0], .dir = KGO_SELECT_RECV, .elem = &x->v },
			{ .chan = x->c[1], .dir = KGO_SELECT_RECV, .elem = &x->v },
		};

		x->ret = kgo_select(cs, 2, KGO_FOREVER);
	} else {
		x->ret = kgo_wg_wait(&x->wg);
	}
	atomic_set_release(&x->state, 3);
}

static bool late_parked(struct late *x)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (atomic_read(&x->g->status) == KGO_G_WAITING)
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

/*
 * A kgo_ready() that is not the waiter's own, on a goroutine parked in a
 * select or a WaitGroup wait: warned and ignored, the goroutine parks
 * again and returns only for its rightful wake-up. It returned at once,
 * with the select's case "-1" written before its cases and the waiter's
 * node left on the WaitGroup's list.
 */
static void case_late_ready(bool select)
{
	const char *name = select ? "a late kgo_ready() on a goroutine in kgo_select() is ignored" :
				    "a late kgo_ready() on a goroutine in kgo_wg_wait() is ignored";
	static struct late xs[2];
	struct late *x = &xs[select];
	u64 one = 1;
	bool ok = false;
	int i;

	kgo_wg_init(&x->wg);
	kgo_wg_add(&x->wg, 1);
	for (i = 0; i < 2; i++) {
		x->c[i] = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
		if (IS_ERR(x->c[i])) {
			x->c[i] = NULL;
			goto out;
		}
	}
	x->select = select;
	if (kgo_go(late_fn, x, GFP_KERNEL) < 0 || !wait_state(&x->state, 1) ||
	    !late_parked(x))
		goto out;
	ok = kgo_ready(x->g) == 0;	/* it was parked: taken */
	msleep(100);
	/* Parked again, not returned. */
	ok &= atomic_read(&x->state) == 1 && atomic_read(&x->g->status) == KGO_G_WAITING;
	if (select)
		ok &= kgo_chan_send(x->c[1], &one, KGO_FOREVER) == 0;
	else
		kgo_wg_done(&x->wg);
	ok &= wait_state(&x->state, 3);
	ok &= select ? x->ret == 1 && x->v == 1 : x->ret == 0;
out:
	tap(ok, name, NULL);
	if (atomic_read(&x->state) == 1)
		return;		/* leaked: the goroutine may still use them */
	for (i = 0; i < 2; i++)
		if (x->c[i])
			kgo_chan_destroy(x->c[i]);
}

/* A cancel cause that is not an errno: cancelled anyway, as -ECANCELED. */
static void case_ctx_cause(void)
{
	struct kgo_ctx ctx;
	bool ok;

	kgo_ctx_init(&ctx, NULL);
	ok = kgo_ctx_cancel(&ctx, 1);
	ok &= kgo_ctx_err(&ctx) == -ECANCELED;
	tap(ok, "kgo_ctx_cancel() with a positive cause cancels with -ECANCELED", NULL);
}

static int __init kgo_misuse_init(void)
{
	seq_buf_init(&results, results_buf, sizeof(results_buf));
	case_atomic();
	case_stale_ready();
	case_destroy_busy();
	case_ctx_cause();
	case_late_ready(true);
	case_late_ready(false);
	/* TAP wants the plan first: put it there now that it is known. */
	tap_blob.size = scnprintf(tap_buf, sizeof(tap_buf), "1..%u\n%.*s", ncase,
				  (int)seq_buf_used(&results), results_buf);
	dir = debugfs_create_dir("kgo_misuse", NULL);
	debugfs_create_blob("results", 0444, dir, &tap_blob);
	return 0;
}

static void __exit kgo_misuse_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(kgo_misuse_init);
module_exit(kgo_misuse_exit);
MODULE_DESCRIPTION("kgo: the kernel API misused on purpose");
MODULE_LICENSE("GPL");
KGO_MODULE_IMPORT();
