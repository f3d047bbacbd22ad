// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_chan: channels and select, from goroutines, threads and hardirq.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include <kgo.h>
#include "compat.h"
#include "g.h"
#include "tests/run_g.h"

#define LONG_MS		60000
#define MS		((u64)NSEC_PER_MSEC)

static struct kgo_chan *mkchan(struct kunit *test, size_t size, unsigned int cap)
{
	struct kgo_chan *c = kgo_chan_create(size, cap, GFP_KERNEL);

	KUNIT_ASSERT_FALSE(test, IS_ERR(c));
	return c;
}

static void kgo_chan_buffered_test(struct kunit *test)
{
	struct kgo_chan *c = mkchan(test, sizeof(int), 4);
	bool ok;
	int i, v;

	KUNIT_EXPECT_EQ(test, kgo_chan_cap(c), 4u);
	KUNIT_EXPECT_EQ(test, kgo_chan_recv(c, &v, &ok, KGO_NOWAIT), -EAGAIN);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, kgo_chan_send(c, &i, KGO_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, kgo_chan_send(c, &i, KGO_NOWAIT), -EAGAIN);
	KUNIT_EXPECT_EQ(test, kgo_chan_len(c), 4u);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, kgo_chan_recv(c, &v, &ok, KGO_NOWAIT), 0);
		KUNIT_EXPECT_EQ(test, v, i);
		KUNIT_EXPECT_TRUE(test, ok);
	}
	KUNIT_EXPECT_EQ(test, kgo_chan_len(c), 0u);
	KUNIT_EXPECT_TRUE(test, IS_ERR(kgo_chan_create(KGO_CHAN_ELEM_MAX + 1, 1, GFP_KERNEL)));
	kgo_chan_destroy(c);
}

/* Receivers and senders of one channel, goroutines or threads. */
struct pp_ctx {
	struct kgo_chan *c;
	int n;
	long sum;
	int errors;
	struct kgo_waitgroup wg;
};

static void pp_sender(void *arg)
{
	struct pp_ctx *p = arg;
	int i;

	for (i = 1; i <= p->n; i++)
		if (kgo_chan_send(p->c, &i, KGO_FOREVER))
			p->errors++;
	kgo_wg_done(&p->wg);
}

static void pp_receiver(void *arg)
{
	struct pp_ctx *p = arg;
	bool ok;
	int i, v;

	for (i = 1; i <= p->n; i++) {
		if (kgo_chan_recv(p->c, &v, &ok, KGO_FOREVER) || !ok || v != i)
			p->errors++;
		p->sum += v;
	}
	kgo_wg_done(&p->wg);
}

/* Unbuffered: every element handed over, in order, goroutine to goroutine. */
static void kgo_chan_unbuffered_test(struct kunit *test)
{
	struct pp_ctx *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->c = mkchan(test, sizeof(int), 0);
	p->n = 1000;
	kgo_wg_init(&p->wg);
	kgo_wg_add(&p->wg, 2);
	KUNIT_ASSERT_GT(test, kgo_go(pp_receiver, p, GFP_KERNEL), 0LL);
	KUNIT_ASSERT_GT(test, kgo_go(pp_sender, p, GFP_KERNEL), 0LL);
	kgo_wg_wait(&p->wg);
	KUNIT_EXPECT_EQ(test, p->errors, 0);
	KUNIT_EXPECT_EQ(test, p->sum, 1000L * 1001 / 2);
	kgo_chan_destroy(p->c);
}

/* A thread (this test's kthread) blocks on a channel a goroutine serves. */
static void kgo_chan_thread_test(struct kunit *test)
{
	struct pp_ctx *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->c = mkchan(test, sizeof(int), 0);
	p->n = 200;
	kgo_wg_init(&p->wg);
	kgo_wg_add(&p->wg, 2);
	KUNIT_ASSERT_GT(test, kgo_go(pp_sender, p, GFP_KERNEL), 0LL);
	pp_receiver(p);		/* not a goroutine: sleeps in the channel */
	kgo_wg_wait(&p->wg);
	KUNIT_EXPECT_EQ(test, p->errors, 0);
	kgo_chan_destroy(p->c);
}

static void kgo_chan_close_test(struct kunit *test)
{
	struct kgo_chan *c = mkchan(test, sizeof(int), 4);
	bool ok;
	int v = 7;

	KUNIT_EXPECT_EQ(test, kgo_chan_send(c, &v, KGO_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, kgo_chan_close(c), 0);
	KUNIT_EXPECT_EQ(test, kgo_chan_close(c), -EPIPE);
	KUNIT_EXPECT_EQ(test, kgo_chan_send(c, &v, KGO_NOWAIT), -EPIPE);
	v = 0;
	KUNIT_EXPECT_EQ(test, kgo_chan_recv(c, &v, &ok, KGO_NOWAIT), 0);
	KUNIT_EXPECT_TRUE(test, ok);
	KUNIT_EXPECT_EQ(test, v, 7);	/* the buffer drains first */
	v = 5;
	KUNIT_EXPECT_EQ(test, kgo_chan_recv(c, &v, &ok, KGO_FOREVER), 0);
	KUNIT_EXPECT_FALSE(test, ok);
	KUNIT_EXPECT_EQ(test, v, 0);
	kgo_chan_destroy(c);
}

/* Close while receivers and senders are blocked. */
struct close_ctx {
	struct kgo_chan *c;
	atomic_t closed_recv, epipe_send, other;
	struct kgo_waitgroup wg;
};

static void close_receiver(void *arg)
{
	struct close_ctx *x = arg;
	bool ok = true;
	int v = 1;

	if (!kgo_chan_recv(x->c, &v, &ok, KGO_FOREVER) && !ok && !v)
		atomic_inc(&x->closed_recv);
	else
		atomic_inc(&x->other);
	kgo_wg_done(&x->wg);
}

static void close_sender(void *arg)
{
	struct close_ctx *x = arg;
	int v = 1;

	if (kgo_chan_send(x->c, &v, KGO_FOREVER) == -EPIPE)
		atomic_inc(&x->epipe_send);
	else
		atomic_inc(&x->other);
	kgo_wg_done(&x->wg);
}

static void kgo_chan_close_wakes_test(struct kunit *test)
{
	struct close_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct kgo_chan *c2;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, x);
	kgo_wg_init(&x->wg);
	/* Receivers on one unbuffered channel, senders on another. */
	x->c = mkchan(test, sizeof(int), 0);
	kgo_wg_add(&x->wg, 8);
	for (i = 0; i < 8; i++)
		kgo_go(close_receiver, x, GFP_KERNEL);
	kgo_sleep(50 * MS);	/* let them block */
	KUNIT_EXPECT_EQ(test, kgo_chan_close(x->c), 0);
	kgo_wg_wait(&x->wg);
	c2 = x->c;
	x->c = mkchan(test, sizeof(int), 0);
	kgo_wg_add(&x->wg, 8);
	for (i = 0; i < 8; i++)
		kgo_go(close_sender, x, GFP_KERNEL);
	kgo_sleep(50 * MS);
	KUNIT_EXPECT_EQ(test, kgo_chan_close(x->c), 0);
	kgo_wg_wait(&x->wg);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->closed_recv), 8);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->epipe_send), 8);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->other), 0);
	kgo_chan_destroy(c2);
	kgo_chan_destroy(x->c);
}

/* Blocked senders, then blocked receivers, are served in arrival order. */
struct fifo_ctx {
	struct kgo_chan *c;
	struct kgo_g *g[3];
	int got[3];
	struct kgo_waitgroup wg;
};

struct fifo_arg {
	struct fifo_ctx *x;
	int i;
};

static void fifo_sender(void *arg)
{
	struct fifo_arg *a = arg;

	WRITE_ONCE(a->x->g[a->i], kgo_self());
	kgo_chan_send(a->x->c, &a->i, KGO_FOREVER);
	kgo_wg_done(&a->x->wg);
}

static void fifo_receiver(void *arg)
{
	struct fifo_arg *a = arg;

	WRITE_ONCE(a->x->g[a->i], kgo_self());
	kgo_chan_recv(a->x->c, &a->x->got[a->i], NULL, KGO_FOREVER);
	kgo_wg_done(&a->x->wg);
}

/*
 * Starts three goroutines, each only once the one before is parked. The
 * bound is on time, not on tries: a busy host can stretch each sleep.
 */
static void fifo_start(struct kunit *test, struct fifo_ctx *x, struct fifo_arg *a,
		       kgo_func_t fn)
{
	u64 end;
	int i;

	memset(x->g, 0, sizeof(x->g));
	kgo_wg_add(&x->wg, 3);
	for (i = 0; i < 3; i++) {
		struct kgo_g *g;

		a[i] = (struct fifo_arg){ .x = x, .i = i };
		KUNIT_ASSERT_GT(test, kgo_go(fn, &a[i], GFP_KERNEL), 0LL);
		end = ktime_get_ns() + LONG_MS * MS;
		/* Parked in the channel: it is on the channel's queue. */
		while (!((g = READ_ONCE(x->g[i])) && kgo_g_status(g) == KGO_G_WAITING) &&
		       ktime_get_ns() < end)
			usleep_range(100, 200);
		KUNIT_ASSERT_TRUE(test, g && kgo_g_status(g) == KGO_G_WAITING);
	}
}

/* A context with an unbuffered channel of ints, for fifo_start(). */
static struct fifo_ctx *fifo_new(struct kunit *test)
{
	struct fifo_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->c = mkchan(test, sizeof(int), 0);
	kgo_wg_init(&x->wg);
	return x;
}

static void kgo_chan_fifo_test(struct kunit *test)
{
	struct fifo_ctx *x = fifo_new(test);
	struct fifo_arg a[3];
	int i, v;

	fifo_start(test, x, a, fifo_sender);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, kgo_chan_recv(x->c, &v, NULL, KGO_FOREVER), 0);
		KUNIT_EXPECT_EQ(test, v, i);
	}
	kgo_wg_wait(&x->wg);
	fifo_start(test, x, a, fifo_receiver);
	for (i = 0; i < 3; i++) {
		v = 100 + i;
		KUNIT_EXPECT_EQ(test, kgo_chan_send(x->c, &v, KGO_FOREVER), 0);
	}
	kgo_wg_wait(&x->wg);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, x->got[i], 100 + i);
	kgo_chan_destroy(x->c);
}

/* The middle of three receivers times out; its wait queue closes up. */
static void fifo_receiver_middle_times_out(void *arg)
{
	struct fifo_arg *a = arg;
	u64 timeout = a->i == 1 ? 50 * NSEC_PER_MSEC : KGO_FOREVER;
	int ret;

	WRITE_ONCE(a->x->g[a->i], kgo_self());
	ret = kgo_chan_recv(a->x->c, &a->x->got[a->i], NULL, timeout);
	if (ret)
		a->x->got[a->i] = ret;
	kgo_wg_done(&a->x->wg);
}

static void kgo_chan_fifo_timeout_test(struct kunit *test)
{
	struct fifo_ctx *x = fifo_new(test);
	struct fifo_arg a[3];
	int i, v;
	u64 end;

	fifo_start(test, x, a, fifo_receiver_middle_times_out);
	/* Until the middle one has given up: it then runs, or is done. */
	end = ktime_get_ns() + LONG_MS * MS;
	while (kgo_g_status(x->g[1]) == KGO_G_WAITING && ktime_get_ns() < end)
		usleep_range(100, 200);
	KUNIT_ASSERT_NE(test, kgo_g_status(x->g[1]), KGO_G_WAITING);
	for (i = 0; i < 2; i++) {
		v = 100 + i;
		KUNIT_EXPECT_EQ(test, kgo_chan_send(x->c, &v, KGO_FOREVER), 0);
	}
	kgo_wg_wait(&x->wg);
	KUNIT_EXPECT_EQ(test, x->got[0], 100);
	KUNIT_EXPECT_EQ(test, x->got[1], -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, x->got[2], 101);
	KUNIT_EXPECT_EQ(test, kgo_chan_destroy(x->c), 0);
}

/* With two cases always ready, each is chosen half of the time. */
static void kgo_chan_select_uniform_test(struct kunit *test)
{
	struct kgo_chan *a = mkchan(test, sizeof(int), 1), *b = mkchan(test, sizeof(int), 1);
	struct kgo_select_case cs[2];
	int hits[2] = {}, i, v = 0, r;

	for (i = 0; i < 10000; i++) {
		kgo_chan_send(a, &v, KGO_NOWAIT);
		kgo_chan_send(b, &v, KGO_NOWAIT);
		cs[0] = (struct kgo_select_case){ .chan = a, .dir = KGO_SELECT_RECV, .elem = &v };
		cs[1] = (struct kgo_select_case){ .chan = b, .dir = KGO_SELECT_RECV, .elem = &v };
		r = kgo_select(cs, 2, KGO_NOWAIT);
		KUNIT_ASSERT_TRUE(test, r == 0 || r == 1);
		hits[r]++;
	}
	kunit_info(test, "picks %d / %d\n", hits[0], hits[1]);
	/* Binomial(10000, 1/2): sd 50; 5 sd either side. */
	KUNIT_EXPECT_GT(test, hits[0], 4750);
	KUNIT_EXPECT_GT(test, hits[1], 4750);
	kgo_chan_destroy(a);
	kgo_chan_destroy(b);
}

struct sel_ctx {
	struct kgo_chan *a, *b;
	int ret, v;
	bool ok;
};

static void sel_blocker(void *arg)
{
	struct sel_ctx *s = arg;
	struct kgo_select_case cs[3] = {
		{ .chan = s->a, .dir = KGO_SELECT_RECV, .elem = &s->v },
		{ .chan = NULL, .dir = KGO_SELECT_RECV },	/* never ready */
		{ .chan = s->b, .dir = KGO_SELECT_RECV, .elem = &s->v },
	};

	s->ret = kgo_select(cs, 3, KGO_FOREVER);
	s->ok = cs[s->ret >= 0 ? s->ret : 0].ok;
}

static void sel_sender(void *arg)
{
	struct sel_ctx *s = arg;
	int v = 42;

	kgo_sleep(20 * MS);
	kgo_chan_send(s->b, &v, KGO_FOREVER);
}

static void kgo_chan_select_block_test(struct kunit *test)
{
	struct sel_ctx *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct kgo_select_case none = { .chan = NULL };
	struct kgo_waitgroup wg;

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->a = mkchan(test, sizeof(int), 0);
	s->b = mkchan(test, sizeof(int), 0);
	KUNIT_EXPECT_EQ(test, kgo_select(&none, 1, KGO_NOWAIT), -EAGAIN);
	kgo_wg_init(&wg);
	KUNIT_ASSERT_GT(test, kgo_go(sel_sender, s, GFP_KERNEL), 0LL);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(sel_blocker, s, LONG_MS));
	KUNIT_EXPECT_EQ(test, s->ret, 2);
	KUNIT_EXPECT_EQ(test, s->v, 42);
	KUNIT_EXPECT_TRUE(test, s->ok);
	/* A late send on a: nobody is waiting there any more. */
	KUNIT_EXPECT_EQ(test, kgo_chan_send(s->a, &s->v, KGO_NOWAIT), -EAGAIN);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
	kgo_chan_destroy(s->a);
	kgo_chan_destroy(s->b);
}

/*
 * Go's TestTimerFairness: goroutines keep a channel always ready, yet a
 * 20 ms timer (an hrtimer that sends on a channel, time.After style)
 * still gets chosen by the select that also watches that channel.
 */
struct fair_ctx {
	struct hrtimer timer;
	struct kgo_chan *c, *tick, *done;
	struct kgo_waitgroup wg;
	long rounds;
	int ret;
};

static enum hrtimer_restart fair_timer_fn(struct hrtimer *t)
{
	struct fair_ctx *f = container_of(t, struct fair_ctx, timer);
	int v = 1;

	kgo_chan_send(f->tick, &v, KGO_NOWAIT);
	return HRTIMER_NORESTART;
}

static void fair_hammer(void *arg)
{
	struct fair_ctx *f = arg;
	int v = 1;
	struct kgo_select_case cs[2] = {
		{ .chan = f->c, .dir = KGO_SELECT_SEND, .elem = &v },
		{ .chan = f->done, .dir = KGO_SELECT_RECV, .elem = &v },
	};

	while (kgo_select(cs, 2, KGO_FOREVER) == 0)
		;
	kgo_wg_done(&f->wg);
}

static void fair_main(void *arg)
{
	struct fair_ctx *f = arg;
	int v;
	struct kgo_select_case cs[2] = {
		{ .chan = f->c, .dir = KGO_SELECT_RECV, .elem = &v },
		{ .chan = f->tick, .dir = KGO_SELECT_RECV, .elem = &v },
	};

	hrtimer_start(&f->timer, ns_to_ktime(20 * MS), HRTIMER_MODE_REL_HARD);
	for (;;) {
		f->ret = kgo_select(cs, 2, 30ULL * NSEC_PER_SEC);
		if (f->ret != 0)
			break;
		f->rounds++;
	}
	kgo_chan_close(f->done);
}

static void kgo_chan_select_timer_fairness_test(struct kunit *test)
{
	struct fair_ctx *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->c = kgo_chan_create(sizeof(int), 0, GFP_KERNEL);
	f->tick = kgo_chan_create(sizeof(int), 1, GFP_KERNEL);
	f->done = kgo_chan_create(sizeof(int), 0, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->c) || IS_ERR(f->tick) || IS_ERR(f->done));
	kgo_hrtimer_setup(&f->timer, fair_timer_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	kgo_wg_init(&f->wg);
	kgo_wg_add(&f->wg, 2);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_GT(test, kgo_go(fair_hammer, f, GFP_KERNEL), 0LL);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(fair_main, f, 60000));
	kgo_wg_wait(&f->wg);
	hrtimer_cancel(&f->timer);
	kunit_info(test, "%ld receives before the timer won\n", f->rounds);
	KUNIT_EXPECT_EQ(test, f->ret, 1);	/* the tick, not the 30 s timeout */
	KUNIT_EXPECT_GT(test, f->rounds, 0L);
	kgo_chan_destroy(f->c);
	kgo_chan_destroy(f->tick);
	kgo_chan_destroy(f->done);
}

/* Sends from hardirq (KGO_NOWAIT) reach a goroutine blocked in recv. */
struct irq_chan_ctx {
	struct hrtimer timer;
	struct kgo_chan *c, *probe;
	int sent, got, err, irq_recvs;
};

static enum hrtimer_restart irq_chan_fn(struct hrtimer *h)
{
	struct irq_chan_ctx *x = container_of(h, struct irq_chan_ctx, timer);
	int v = 99;

	if (!kgo_chan_send(x->c, &v, KGO_NOWAIT))
		x->sent++;
	/* A receive in hardirq too: the probe channel holds one element. */
	if (!kgo_chan_recv(x->probe, &v, NULL, KGO_NOWAIT) && v == 5)
		x->irq_recvs++;
	if (x->sent < 10) {
		hrtimer_forward_now(h, ns_to_ktime(MS));
		return HRTIMER_RESTART;
	}
	return HRTIMER_NORESTART;
}

static void irq_chan_recv(void *arg)
{
	struct irq_chan_ctx *x = arg;
	int i, v;

	for (i = 0; i < 10; i++) {
		if (kgo_chan_recv(x->c, &v, NULL, 10ULL * NSEC_PER_SEC) || v != 99)
			x->err++;
		else
			x->got++;
	}
}

static void kgo_chan_hardirq_send_test(struct kunit *test)
{
	struct irq_chan_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->c = mkchan(test, sizeof(int), 16);
	x->probe = mkchan(test, sizeof(int), 1);
	i = 5;
	KUNIT_ASSERT_EQ(test, kgo_chan_send(x->probe, &i, KGO_NOWAIT), 0);
	kgo_hrtimer_setup(&x->timer, irq_chan_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	hrtimer_start(&x->timer, ns_to_ktime(MS), HRTIMER_MODE_REL_HARD);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(irq_chan_recv, x, LONG_MS));
	hrtimer_cancel(&x->timer);
	KUNIT_EXPECT_EQ(test, x->got, 10);
	KUNIT_EXPECT_EQ(test, x->err, 0);
	KUNIT_EXPECT_EQ(test, x->irq_recvs, 1);
	kgo_chan_destroy(x->c);
	kgo_chan_destroy(x->probe);
}

/*
 * A plain send or receive (not a select): its edges, from a goroutine
 * and from a thread. A nil channel never is ready; an operation that
 * timed out has left the channel's queue, so no partner finds it after;
 * a word-sized element and an odd-sized one arrive whole; a closed
 * channel refuses sends and gives zeroed elements.
 */
struct plain_ctx {
	struct kgo_chan *word, *odd;
	int errors;
};

struct odd_elem {
	u8 b[3];
};

static void plain_word_sender(void *arg)
{
	struct plain_ctx *x = arg;
	u64 v = 0x0123456789abcdefULL;

	if (kgo_chan_send(x->word, &v, KGO_FOREVER))
		x->errors++;
}

/* Returns the number of checks that failed. */
static int plain_edges(struct plain_ctx *x, bool in_g)
{
	struct odd_elem o = { { 1, 2, 3 } }, got;
	int bad = 0;
	u64 t0, v;
	bool ok;

	bad += kgo_chan_recv(NULL, &v, &ok, KGO_NOWAIT) != -EAGAIN;
	t0 = ktime_get_ns();
	bad += kgo_chan_send(NULL, &v, 5 * MS) != -ETIMEDOUT;
	bad += ktime_get_ns() - t0 < 5 * MS;

	bad += kgo_chan_send(x->word, &v, KGO_NOWAIT) != -EAGAIN;
	bad += kgo_chan_recv(x->word, &v, &ok, KGO_NOWAIT) != -EAGAIN;
	/* Timed out, then off the queue: nobody takes a partner from it. */
	bad += kgo_chan_recv(x->word, &v, &ok, 5 * MS) != -ETIMEDOUT;
	bad += kgo_chan_send(x->word, &v, KGO_NOWAIT) != -EAGAIN;
	bad += kgo_chan_send(x->word, &v, 5 * MS) != -ETIMEDOUT;
	bad += kgo_chan_recv(x->word, &v, &ok, KGO_NOWAIT) != -EAGAIN;

	if (in_g) {
		v = 0;
		ok = false;
		bad += kgo_go(plain_word_sender, x, GFP_KERNEL) <= 0;
		bad += kgo_chan_recv(x->word, &v, &ok, KGO_FOREVER) != 0;
		bad += !ok || v != 0x0123456789abcdefULL;
	}

	bad += kgo_chan_send(x->odd, &o, KGO_NOWAIT) != 0;
	memset(&got, 0xff, sizeof(got));
	bad += kgo_chan_recv(x->odd, &got, &ok, KGO_NOWAIT) != 0;
	bad += !ok || memcmp(&got, &o, sizeof(o));
	return bad;
}

static void plain_in_g(void *arg)
{
	struct plain_ctx *x = arg;

	x->errors += plain_edges(x, true);
}

static void kgo_chan_plain_test(struct kunit *test)
{
	struct plain_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	bool ok = true;
	u64 v = ~0ULL;

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->word = mkchan(test, sizeof(u64), 0);
	x->odd = mkchan(test, sizeof(struct odd_elem), 2);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(plain_in_g, x, LONG_MS));
	KUNIT_EXPECT_EQ(test, x->errors, 0);
	KUNIT_EXPECT_EQ(test, plain_edges(x, false), 0);

	KUNIT_EXPECT_EQ(test, kgo_chan_close(x->word), 0);
	KUNIT_EXPECT_EQ(test, kgo_chan_send(x->word, &v, KGO_NOWAIT), -EPIPE);
	KUNIT_EXPECT_EQ(test, kgo_chan_send(x->word, &v, KGO_FOREVER), -EPIPE);
	KUNIT_EXPECT_EQ(test, kgo_chan_recv(x->word, &v, &ok, KGO_FOREVER), 0);
	KUNIT_EXPECT_FALSE(test, ok);
	KUNIT_EXPECT_EQ(test, v, 0ULL);
	kgo_chan_destroy(x->word);
	kgo_chan_destroy(x->odd);
}

static struct kunit_case kgo_chan_cases[] = {
	KUNIT_CASE(kgo_chan_buffered_test),
	KUNIT_CASE(kgo_chan_unbuffered_test),
	KUNIT_CASE(kgo_chan_thread_test),
	KUNIT_CASE(kgo_chan_close_test),
	KUNIT_CASE(kgo_chan_close_wakes_test),
	KUNIT_CASE(kgo_chan_fifo_test),
	KUNIT_CASE(kgo_chan_fifo_timeout_test),
	KUNIT_CASE(kgo_chan_plain_test),
	KUNIT_CASE(kgo_chan_select_uniform_test),
	KUNIT_CASE(kgo_chan_select_block_test),
	KUNIT_CASE(kgo_chan_select_timer_fairness_test),
	KUNIT_CASE(kgo_chan_hardirq_send_test),
	{}
};

static struct kunit_suite kgo_chan_suite = {
	.name = "kgo_chan",
	.test_cases = kgo_chan_cases,
};

kunit_test_suite(kgo_chan_suite);
