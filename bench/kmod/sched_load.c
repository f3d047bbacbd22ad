// SPDX-License-Identifier: GPL-2.0
/*
 * The scheduler under load: many goroutines runnable at once, channels
 * with more than two parties, and a lock that many goroutines want.
 * make bench's step "sched_load" runs these workloads, and bench/go's
 * load.go runs the same ones in Go; each row is ns per operation:
 *
 *   yield_n<N>       N = 2, 100, 10,000 goroutines on one P, each
 *                    calling kgo_yield() in a loop: ns per yield. The P
 *                    is pinned (pin.c) as for yield_pingpong, and Go
 *                    runs with GOMAXPROCS=1: with one P every yield
 *                    switches to another of the N, through the P's ring
 *                    while it holds them, the global queue beyond.
 *   chan_buf         one sender, one receiver, a channel of 64 u64s:
 *                    ns per message received.
 *   select4          4 senders, each on its own unbuffered channel, and
 *                    a receiver in kgo_select() over the 4: ns per
 *                    message received.
 *   chan_fanin       64 senders on one unbuffered channel, one
 *                    receiver: ns per message received.
 *   mutex_contended  8 goroutines, each holding a kgo_mutex across an
 *                    increment of a shared counter and a kgo_yield(),
 *                    so that the others run while it is held and find
 *                    it so, on one P as on many: ns per lock.
 *                    "contended" is how many locks found it held (a
 *                    failed trylock first; Go: Mutex.TryLock()). A
 *                    tiny section without the yield is never contended
 *                    on one P, and on two only while both run at once.
 *
 * Only yield_n is pinned. The channel and mutex rows run on every P,
 * as a Go program would (GOMAXPROCS left as it is), as chan_pingpong
 * does: a woken goroutine goes to its waker's runnext, and another P
 * may steal it.
 *
 * Both sides measure the same way. A parent goroutine (Go's main)
 * starts every worker, then waits until each has run once (so each has
 * its stack) and spins on the start flag with yields; then it takes t0
 * and sets the flag. The last worker to end takes t1. The operations
 * are counted as they are done. A warm-up run at a tenth of the size,
 * with the same goroutines, comes first (bench.h).
 */

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "bench.h"

#define SL_CHAN_BUF_CAP		64
#define SL_SELECT_CASES		4
#define SL_FANIN_SENDERS	64
#define SL_MUTEX_GOROUTINES	8

enum sl_kind { SL_YIELD, SL_CHAN_BUF, SL_SELECT4, SL_FANIN, SL_MUTEX };

struct sl_run;

struct sl_worker {
	struct sl_run *run;
	u64 i;			/* 0 .. n - 1; a receiver is the last */
};

/*
 * One run. I: set before the parent starts; W: written by workers
 * (atomics, or a single writer before the done that the thread's wait
 * orders); P: the parent's.
 */
struct sl_run {
	enum sl_kind kind;		/* I */
	u64 n;				/* I: workers */
	u64 per;			/* I: operations per worker (per sender) */
	u64 budget;			/* I: ns from t0 to the deadline */
	u64 deadline;			/* P: t0 + budget; senders and loops stop after */
	struct sl_worker *w;		/* I: n of them */
	struct kgo_chan *chan[SL_SELECT_CASES];	/* I: those the kind uses */
	struct kgo_mutex mu;		/* mutex_contended's */
	u64 counter;			/* under mu */

	struct kgo_waitgroup all;	/* the parent and every worker (kgo_go_wg) */
	struct kgo_waitgroup ready;	/* workers that have not yet run */
	struct kgo_waitgroup done;	/* workers that have not yet ended */
	int start;			/* P: set at t0, with release */
	bool abort;			/* P: a spawn failed: workers do nothing */
	u64 spawned;			/* P */
	u64 t0;				/* P */

	atomic_t left;			/* W: workers not yet ended */
	atomic_t senders;		/* W: fan-in senders still sending */
	atomic64_t ops;			/* W: operations done */
	atomic64_t contended;		/* W: locks that found mu held */
	u64 t1;				/* W: by the last worker to end */
	int err;			/* W: the last error seen */
};

/* Past the deadline at operation @j (not the first): stop. */
static bool sl_stop(const struct sl_run *run, u64 j)
{
	return j && kgo_bench_stop(j, run->deadline);
}

static void sl_yield(struct sl_run *run)
{
	u64 j;

	for (j = 0; j < run->per && !sl_stop(run, j); j++)
		kgo_yield();
	atomic64_add(j, &run->ops);
}

static void sl_mutex(struct sl_run *run)
{
	u64 j, contended = 0;
	int ret;

	for (j = 0; j < run->per && !sl_stop(run, j); j++) {
		if (!kgo_mutex_trylock(&run->mu)) {
			contended++;
			ret = kgo_mutex_lock(&run->mu);
			if (ret) {
				WRITE_ONCE(run->err, ret);
				break;
			}
		}
		run->counter++;
		kgo_yield();
		kgo_mutex_unlock(&run->mu);
	}
	atomic64_add(j, &run->ops);
	atomic64_add(contended, &run->contended);
}

/* A sender: run->per values on @c, fewer past the deadline. */
static void sl_send(struct sl_run *run, struct kgo_chan *c)
{
	int ret;
	u64 j;

	for (j = 0; j < run->per && !sl_stop(run, j); j++) {
		ret = kgo_chan_send(c, &j, KGO_FOREVER);
		if (ret) {
			WRITE_ONCE(run->err, ret);
			break;
		}
	}
}

/* A receiver of one channel, until it is closed and drained. */
static void sl_recv(struct sl_run *run, struct kgo_chan *c)
{
	u64 v, got = 0;
	bool ok;
	int ret;

	for (;;) {
		ret = kgo_chan_recv(c, &v, &ok, KGO_FOREVER);
		if (ret) {
			WRITE_ONCE(run->err, ret);
			break;
		}
		if (!ok)
			break;
		got++;
	}
	atomic64_add(got, &run->ops);
}

/* select4's receiver: until all 4 channels are closed and drained. */
static void sl_select_recv(struct sl_run *run)
{
	struct kgo_select_case cases[SL_SELECT_CASES] = {};
	u64 v[SL_SELECT_CASES], got = 0;
	int k, open = SL_SELECT_CASES;

	for (k = 0; k < SL_SELECT_CASES; k++) {
		cases[k].chan = run->chan[k];
		cases[k].dir = KGO_SELECT_RECV;
		cases[k].elem = &v[k];
	}
	while (open) {
		k = kgo_select(cases, SL_SELECT_CASES, KGO_FOREVER);
		if (k < 0) {
			WRITE_ONCE(run->err, k);
			break;
		}
		if (cases[k].ok) {
			got++;
			continue;
		}
		/* Closed and drained: a NULL case is never ready again. */
		cases[k].chan = NULL;
		open--;
	}
	atomic64_add(got, &run->ops);
}

static void sl_work(struct sl_run *run, u64 i)
{
	bool receiver = i == run->n - 1;

	switch (run->kind) {
	case SL_YIELD:
		sl_yield(run);
		break;
	case SL_MUTEX:
		sl_mutex(run);
		break;
	case SL_CHAN_BUF:
		if (receiver) {
			sl_recv(run, run->chan[0]);
		} else {
			sl_send(run, run->chan[0]);
			kgo_chan_close(run->chan[0]);
		}
		break;
	case SL_SELECT4:
		if (receiver) {
			sl_select_recv(run);
		} else {
			sl_send(run, run->chan[i]);
			kgo_chan_close(run->chan[i]);
		}
		break;
	case SL_FANIN:
		if (receiver) {
			sl_recv(run, run->chan[0]);
		} else {
			sl_send(run, run->chan[0]);
			/* The last sender out closes: many may not. */
			if (atomic_dec_and_test(&run->senders))
				kgo_chan_close(run->chan[0]);
		}
		break;
	}
}

static void sl_worker_main(void *arg)
{
	struct sl_worker *w = arg;
	struct sl_run *run = w->run;

	kgo_wg_done(&run->ready);
	/* Acquire: pairs with the parent's release of start (and abort). */
	while (!smp_load_acquire(&run->start))
		kgo_yield();
	if (!READ_ONCE(run->abort))
		sl_work(run, w->i);
	if (atomic_dec_and_test(&run->left))
		run->t1 = ktime_get_ns();
	kgo_wg_done(&run->done);
}

/*
 * Starts the workers from a goroutine, as a Go program's main would:
 * into this P's runnext and ring. Waits (parked) until each has run
 * once, opens the gate at t0, and waits until all have ended, as Go's
 * main does in wg.Wait().
 */
static void sl_parent(void *arg)
{
	struct sl_run *run = arg;
	s64 ret = 0;
	u64 i;

	for (i = 0; i < run->n; i++) {
		ret = kgo_go_wg(&run->all, sl_worker_main, &run->w[i], GFP_KERNEL);
		if (ret < 0)
			break;
	}
	run->spawned = i;
	if (ret < 0) {
		WRITE_ONCE(run->err, ret);
		WRITE_ONCE(run->abort, true);
		kgo_wg_add(&run->ready, -(long)(run->n - i));
		kgo_wg_add(&run->done, -(long)(run->n - i));
	}
	kgo_bench_wg_wait(&run->ready);
	run->t0 = ktime_get_ns();
	run->deadline = run->t0 + run->budget;
	/* Release: the workers see the deadline, and abort. */
	smp_store_release(&run->start, 1);
	kgo_bench_wg_wait(&run->done);
}

static void sl_run_free(struct sl_run *run)
{
	int k;

	for (k = 0; k < SL_SELECT_CASES; k++)
		if (!IS_ERR_OR_NULL(run->chan[k]))
			kgo_chan_destroy(run->chan[k]);
	kvfree(run->w);
	kfree(run);
}

static struct sl_run *sl_run_alloc(enum sl_kind kind, u64 n, u64 per, u64 budget)
{
	struct sl_run *run = kzalloc(sizeof(*run), GFP_KERNEL);
	int k, nchans = 0;
	u64 i;

	if (!run)
		return NULL;
	run->kind = kind;
	run->n = n;
	run->per = per;
	run->w = kvcalloc(n, sizeof(*run->w), GFP_KERNEL);
	if (!run->w)
		goto fail;
	for (i = 0; i < n; i++) {
		run->w[i].run = run;
		run->w[i].i = i;
	}
	if (kind == SL_CHAN_BUF || kind == SL_FANIN)
		nchans = 1;
	else if (kind == SL_SELECT4)
		nchans = SL_SELECT_CASES;
	for (k = 0; k < nchans; k++) {
		run->chan[k] = kgo_chan_create(sizeof(u64),
					       kind == SL_CHAN_BUF ? SL_CHAN_BUF_CAP : 0,
					       GFP_KERNEL);
		if (IS_ERR(run->chan[k]))
			goto fail;
	}
	kgo_mutex_init(&run->mu);
	kgo_wg_init(&run->all);
	kgo_wg_init(&run->ready);
	kgo_wg_init(&run->done);
	kgo_wg_add(&run->ready, n);
	kgo_wg_add(&run->done, n);
	atomic_set(&run->left, n);
	atomic_set(&run->senders, n - 1);
	atomic64_set(&run->ops, 0);
	atomic64_set(&run->contended, 0);
	run->budget = budget;
	return run;
fail:
	sl_run_free(run);
	return NULL;
}

/* What one run measured. */
struct sl_result {
	u64 ns, ops, contended, spawned;
};

/*
 * One run of @kind with @n workers, @per operations each (each sender),
 * stopped after @budget ns. Return: 0, or -errno (-ENOMEM from kgo_go()
 * with res->spawned below @n).
 */
static int sl_run_once(enum sl_kind kind, u64 n, u64 per, u64 budget, struct sl_result *res)
{
	struct kgo_bench_pin pin;
	struct sl_run *run;
	s64 ret;

	memset(res, 0, sizeof(*res));
	res->spawned = n;
	if (kind == SL_YIELD) {
		ret = kgo_bench_pin_start(&pin);
		if (ret)
			return ret;
	}
	run = sl_run_alloc(kind, n, per, budget);
	if (!run) {
		ret = -ENOMEM;
		goto out;
	}
	ret = kgo_go_wg(&run->all, sl_parent, run, GFP_KERNEL);
	if (ret >= 0) {
		/* kgo_go_wg(): each has left this module's code when all is 0. */
		kgo_bench_wg_wait(&run->all);
		ret = run->err;
		res->spawned = run->spawned;
		res->ns = run->t1 > run->t0 ? run->t1 - run->t0 : 0;
		res->ops = atomic64_read(&run->ops);
		res->contended = atomic64_read(&run->contended);
		if (!ret && kind == SL_MUTEX && run->counter != res->ops)
			ret = -EIO;	/* the mutex let two in */
	} else {
		res->spawned = 0;
	}
	sl_run_free(run);
out:
	if (kind == SL_YIELD)
		kgo_bench_pin_stop(&pin);
	return ret;
}

/*
 * @metric: @n workers, @total operations in all (with @senders, each
 * sender sends its share; with 0, each worker does its share),
 * after a warm-up run of a tenth. Reports ns/op, or why not.
 */
static void sl_bench(const struct kgo_bench_cfg *cfg, const char *metric, enum sl_kind kind,
		     u64 n, u64 senders, u64 total)
{
	u64 shares = senders ? senders : n;
	struct sl_result res;
	int ret;

	if (!kgo_bench_impl_wanted("kgo"))
		return;
	ret = sl_run_once(kind, n, max_t(u64, kgo_bench_warm_size(total) / shares, 1),
			  kgo_bench_budget(cfg, true), &res);
	if (!ret)
		ret = sl_run_once(kind, n, max_t(u64, total / shares, 1),
				  kgo_bench_budget(cfg, false), &res);
	if (ret == -ENOMEM && res.spawned < n) {
		kgo_bench_report_missing(metric, "kgo", "ns/op",
					 "kgo_go() failed with -ENOMEM: kgo's memory budget (max_mem_mb) or MemAvailable does not hold this many goroutines",
					 "\"goroutines\":%llu,\"spawned\":%llu", n, res.spawned);
		return;
	}
	if (!ret && (!res.ops || !res.ns))
		ret = -ETIMEDOUT;	/* nothing done, or no time taken: no figure */
	if (ret) {
		kgo_bench_report_error(metric, "kgo", ret);
		return;
	}
	if (kind == SL_MUTEX)
		kgo_bench_report(metric, "kgo", "ns/op", res.ns, res.ops,
				 "\"iters\":%llu,\"goroutines\":%llu,\"contended\":%llu",
				 res.ops, n, res.contended);
	else
		kgo_bench_report(metric, "kgo", "ns/op", res.ns, res.ops,
				 "\"iters\":%llu,\"goroutines\":%llu", res.ops, n);
}

/* The sizes: the same in bench/go/load.go. */
#define SL_YIELD_OPS		200000
#define SL_CHAN_BUF_OPS		200000
#define SL_SELECT4_OPS		100000
#define SL_FANIN_OPS		100000
#define SL_MUTEX_OPS		100000
#define SL_SMOKE_OPS		1000

void kgo_bench_yield_n(const struct kgo_bench_cfg *cfg)
{
	static const u64 sizes[] = { 2, 100, 10000 };
	char metric[32];
	int s;

	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		snprintf(metric, sizeof(metric), "yield_n%llu", sizes[s]);
		sl_bench(cfg, metric, SL_YIELD, sizes[s], 0,
			 kgo_bench_size(cfg, SL_YIELD_OPS, SL_SMOKE_OPS));
	}
}

void kgo_bench_chan_buf(const struct kgo_bench_cfg *cfg)
{
	sl_bench(cfg, "chan_buf", SL_CHAN_BUF, 2, 1,
		 kgo_bench_size(cfg, SL_CHAN_BUF_OPS, SL_SMOKE_OPS));
}

void kgo_bench_select4(const struct kgo_bench_cfg *cfg)
{
	sl_bench(cfg, "select4", SL_SELECT4, SL_SELECT_CASES + 1, SL_SELECT_CASES,
		 kgo_bench_size(cfg, SL_SELECT4_OPS, SL_SMOKE_OPS));
}

void kgo_bench_chan_fanin(const struct kgo_bench_cfg *cfg)
{
	sl_bench(cfg, "chan_fanin", SL_FANIN, SL_FANIN_SENDERS + 1, SL_FANIN_SENDERS,
		 kgo_bench_size(cfg, SL_FANIN_OPS, SL_SMOKE_OPS));
}

void kgo_bench_mutex_contended(const struct kgo_bench_cfg *cfg)
{
	sl_bench(cfg, "mutex_contended", SL_MUTEX, SL_MUTEX_GOROUTINES, 0,
		 kgo_bench_size(cfg, SL_MUTEX_OPS, SL_SMOKE_OPS));
}
