// SPDX-License-Identifier: GPL-2.0
/*
 * Two tasks handing control back and forth.
 *
 * "yield_pingpong", ns per switch: two goroutines on one P take turns
 * through kgo_yield(), against two kthreads bound to one CPU that wake
 * each other (set_current_state + wake_up_process + schedule). A turn
 * flag says whose turn it is. The yields (schedule()s) are counted and
 * reported: on one CPU there is one per switch, and more are waste.
 * The pair gets one P (pin.c), and is spawned by a goroutine on it,
 * into its runnext and ring, as bench/go's pair runs with GOMAXPROCS=1.
 *
 * "chan_pingpong", ns per round trip: a value out and back over two
 * unbuffered kgo channels, against two kthreads with two completions.
 * Neither side is pinned, as in a Go program: kgo puts the woken
 * goroutine in the waker's runnext, which keeps the pair on one P
 * unless another P steals it; the kthreads go where the kernel's
 * scheduler puts them. Under emulation a wake-up across CPUs can take
 * milliseconds (the other vCPU's thread must get the host's CPU).
 *
 * A run takes from the first start to the last end that a side
 * stamped: both sides of a yield ping-pong, the sending side of a
 * channel's (the echo side's exit would add a wake-up). At its deadline
 * side 0, in its turn, cuts the number of rounds short for both sides.
 */

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "bench.h"

struct pp;

struct pp_side {
	struct pp *pp;
	int me;			/* 0 or 1 */
	u64 start, end;		/* ktime_get_ns() */
	u64 yields;		/* yield: kgo_yield()s or schedule()s */
};

/* One ping-pong run. */
struct pp {
	u64 n;			/* rounds per side; side 0 may lower it */
	u64 deadline;		/* ... once it is past this (ktime ns) */
	struct pp_side side[2];
	int err;

	/* yield */
	int turn;		/* the side whose turn it is */
	bool abort;		/* the other side never started */

	/* kgo */
	struct kgo_waitgroup wg;	/* the two sides */
	struct kgo_chan *ping, *pong;

	/* kthreads */
	struct task_struct *task[2];
	atomic_t left;			/* sides still running */
	struct completion done;		/* ... none */
	struct completion c_ping, c_pong;
};

static struct pp *pp_alloc(u64 n, u64 budget)
{
	struct pp *pp = kzalloc(sizeof(*pp), GFP_KERNEL);
	int i;

	if (!pp)
		return NULL;
	pp->n = n;
	pp->deadline = ktime_get_ns() + budget;
	for (i = 0; i < 2; i++) {
		pp->side[i].pp = pp;
		pp->side[i].me = i;
	}
	kgo_wg_init(&pp->wg);
	atomic_set(&pp->left, 2);
	init_completion(&pp->done);
	init_completion(&pp->c_ping);
	init_completion(&pp->c_pong);
	return pp;
}

/* From the first start to the last end, of the sides that stamped. */
static u64 pp_elapsed(const struct pp *pp)
{
	u64 start = U64_MAX, end = 0;
	int i;

	for (i = 0; i < 2; i++) {
		if (!pp->side[i].end)
			continue;
		start = min(start, pp->side[i].start);
		end = max(end, pp->side[i].end);
	}
	return end > start ? end - start : 0;
}

/*
 * Side 0, in round @i, before it hands over: past the deadline, @i is
 * the last round for both (the other side's round @i comes after this).
 */
static void pp_maybe_stop(struct pp *pp, u64 i)
{
	if (i && kgo_bench_stop(i, pp->deadline))
		WRITE_ONCE(pp->n, i + 1);
}

/* --- Two kthreads -------------------------------------------------- */

/* The last thing a kthread side does. */
static void pp_kthread_done(struct pp *pp)
{
	if (atomic_dec_and_test(&pp->left))
		complete(&pp->done);
}

/*
 * Runs @fn on two kthreads, with &pp->side[i] as argument, bound to @cpu
 * unless it is negative, and waits until both have returned.
 */
static int pp_kthreads_run(struct pp *pp, int (*fn)(void *), int cpu)
{
	int i, n, err = 0;

	for (n = 0; n < 2; n++) {
		struct task_struct *t;

		t = kthread_create(fn, &pp->side[n], "kgo_bench_pp/%d", n);
		if (IS_ERR(t)) {
			err = PTR_ERR(t);
			break;
		}
		/* Held for kthread_stop(): the thread may exit first. */
		get_task_struct(t);
		if (cpu >= 0)
			kthread_bind(t, cpu);
		pp->task[n] = t;
	}
	/*
	 * Both exist before either runs: each wakes the other. On failure
	 * the one created is stopped unwoken, and so never runs @fn.
	 */
	if (!err) {
		for (i = 0; i < 2; i++)
			wake_up_process(pp->task[i]);
		kgo_bench_wait(&pp->done);
	}
	for (i = 0; i < n; i++) {
		kthread_stop(pp->task[i]);
		put_task_struct(pp->task[i]);
	}
	return err;
}

/* --- yield_pingpong ------------------------------------------------ */

static void yield_pp_kgo_side(void *arg)
{
	struct pp_side *s = arg;
	struct pp *pp = s->pp;
	u64 i;

	s->start = ktime_get_ns();
	for (i = 0; i < READ_ONCE(pp->n); i++) {
		/* Acquire: pairs with the other side's release of turn. */
		while (smp_load_acquire(&pp->turn) != s->me) {
			if (READ_ONCE(pp->abort))
				goto out;
			kgo_yield();
			s->yields++;
		}
		if (s->me == 0)
			pp_maybe_stop(pp, i);
		/* Release: a lowered n is seen with the turn. */
		smp_store_release(&pp->turn, !s->me);
	}
	s->end = ktime_get_ns();
out:
	kgo_wg_done(&pp->wg);	/* pp may be gone after this */
}

/* On the one P left: both sides go to its runnext and ring. */
static void yield_pp_kgo_parent(void *arg)
{
	struct pp *pp = arg;
	int i;
	s64 ret;

	for (i = 0; i < 2; i++) {
		ret = kgo_go(yield_pp_kgo_side, &pp->side[i], GFP_KERNEL);
		if (ret < 0) {
			pp->err = ret;
			/* Side 0 would wait forever for side 1's turns. */
			WRITE_ONCE(pp->abort, true);
			kgo_wg_add(&pp->wg, i - 2);
			return;
		}
	}
}

static int yield_pp_kgo(struct pp *pp)
{
	struct kgo_bench_pin pin;
	s64 ret;

	ret = kgo_bench_pin_start(&pin);
	if (ret)
		return ret;
	kgo_wg_add(&pp->wg, 2);
	ret = kgo_go(yield_pp_kgo_parent, pp, GFP_KERNEL);
	if (ret < 0)
		kgo_wg_add(&pp->wg, -2);
	kgo_bench_wg_wait(&pp->wg);
	kgo_bench_pin_stop(&pin);
	return ret < 0 ? ret : pp->err;
}

static int yield_pp_kthread_side(void *arg)
{
	struct pp_side *s = arg;
	struct pp *pp = s->pp;
	struct task_struct *other = pp->task[!s->me];
	u64 i;

	s->start = ktime_get_ns();
	for (i = 0; i < READ_ONCE(pp->n); i++) {
		for (;;) {
			/* Before the test: a wake-up after it is not lost. */
			set_current_state(TASK_UNINTERRUPTIBLE);
			/* Acquire: pairs with the other side's release. */
			if (smp_load_acquire(&pp->turn) == s->me)
				break;
			schedule();
			s->yields++;
		}
		__set_current_state(TASK_RUNNING);
		if (s->me == 0)
			pp_maybe_stop(pp, i);
		/* Release: a lowered n is seen with the turn. */
		smp_store_release(&pp->turn, !s->me);
		wake_up_process(other);
	}
	s->end = ktime_get_ns();
	pp_kthread_done(pp);
	return 0;
}

static int yield_pp_kthread(struct pp *pp)
{
	return pp_kthreads_run(pp, yield_pp_kthread_side,
			       cpumask_last(cpu_online_mask));
}

/* --- chan_pingpong ------------------------------------------------- */

static void chan_pp_kgo_pong(void *arg)
{
	struct pp_side *s = arg;
	struct pp *pp = s->pp;
	bool ok;
	u64 v;

	for (;;) {
		if (kgo_chan_recv(pp->ping, &v, &ok, KGO_FOREVER) || !ok)
			break;
		if (kgo_chan_send(pp->pong, &v, KGO_FOREVER))
			break;
	}
	kgo_wg_done(&pp->wg);
}

static void chan_pp_kgo_ping(void *arg)
{
	struct pp_side *s = arg;
	struct pp *pp = s->pp;
	bool ok;
	s64 ret;
	u64 i, v;

	ret = kgo_go(chan_pp_kgo_pong, &pp->side[1], GFP_KERNEL);
	if (ret < 0) {
		pp->err = ret;
		kgo_wg_done(&pp->wg);
		goto out;
	}
	s->start = ktime_get_ns();
	for (i = 0; i < READ_ONCE(pp->n); i++) {
		pp_maybe_stop(pp, i);
		ret = kgo_chan_send(pp->ping, &i, KGO_FOREVER);
		if (!ret)
			ret = kgo_chan_recv(pp->pong, &v, &ok, KGO_FOREVER);
		if (ret) {
			pp->err = ret;
			break;
		}
	}
	s->end = ktime_get_ns();
	/* The receiver's !ok ends the other side. */
	kgo_chan_close(pp->ping);
out:
	kgo_wg_done(&pp->wg);
}

static int chan_pp_kgo(struct pp *pp)
{
	s64 ret;

	pp->ping = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	if (IS_ERR(pp->ping))
		return PTR_ERR(pp->ping);
	pp->pong = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	if (IS_ERR(pp->pong)) {
		kgo_chan_destroy(pp->ping);
		return PTR_ERR(pp->pong);
	}
	kgo_wg_add(&pp->wg, 2);
	ret = kgo_go(chan_pp_kgo_ping, &pp->side[0], GFP_KERNEL);
	if (ret < 0)
		kgo_wg_add(&pp->wg, -2);
	kgo_bench_wg_wait(&pp->wg);
	kgo_chan_destroy(pp->pong);
	kgo_chan_destroy(pp->ping);
	return ret < 0 ? ret : pp->err;
}

static int chan_pp_completion_side(void *arg)
{
	struct pp_side *s = arg;
	struct pp *pp = s->pp;
	u64 i;

	if (s->me == 1) {	/* the echo */
		for (i = 0; i < READ_ONCE(pp->n); i++) {
			wait_for_completion(&pp->c_ping);
			complete(&pp->c_pong);
		}
		pp_kthread_done(pp);
		return 0;
	}
	s->start = ktime_get_ns();
	for (i = 0; i < READ_ONCE(pp->n); i++) {
		pp_maybe_stop(pp, i);
		complete(&pp->c_ping);
		wait_for_completion(&pp->c_pong);
	}
	s->end = ktime_get_ns();
	pp_kthread_done(pp);
	return 0;
}

static int chan_pp_completion(struct pp *pp)
{
	return pp_kthreads_run(pp, chan_pp_completion_side, -1);
}

/* ------------------------------------------------------------------- */

struct pp_impl {
	const char *name;
	int (*run)(struct pp *pp);
	unsigned int div;	/* runs n / div rounds: a slow peer */
};

/*
 * One run of @impl, up to *@n rounds per side in @budget ns: the rounds
 * done, their time and yields.
 */
static int pp_run(const struct pp_impl *impl, u64 *n, u64 budget, u64 *ns,
		  u64 *yields)
{
	struct pp *pp = pp_alloc(*n, budget);
	int ret;

	if (!pp)
		return -ENOMEM;
	ret = impl->run(pp);
	*n = pp->n;
	*ns = pp_elapsed(pp);
	*yields = pp->side[0].yields + pp->side[1].yields;
	kfree(pp);
	return ret;
}

/*
 * Runs each of @impls for up to @size operations (@ops_per_round per
 * round), after a warm-up run, and reports ns per operation.
 */
static void pp_bench(const struct kgo_bench_cfg *cfg, const char *metric,
		     const struct pp_impl *impls, int nimpls, u64 size,
		     unsigned int ops_per_round)
{
	u64 rounds, n, ns, yields;
	int i, ret;

	for (i = 0; i < nimpls; i++) {
		if (!kgo_bench_impl_wanted(impls[i].name))
			continue;
		rounds = max_t(u64, size / impls[i].div / ops_per_round, 1);
		n = kgo_bench_warm_size(rounds);
		ret = pp_run(&impls[i], &n, kgo_bench_budget(cfg, true), &ns, &yields);
		n = rounds;
		if (!ret)
			ret = pp_run(&impls[i], &n, kgo_bench_budget(cfg, false),
				     &ns, &yields);
		n *= ops_per_round;
		if (ret)
			kgo_bench_report_error(metric, impls[i].name, ret);
		else if (ops_per_round == 2)
			/* On one CPU, one yield per switch; more is waste. */
			kgo_bench_report(metric, impls[i].name, "ns/op", ns, n,
					 "\"iters\":%llu,\"yields\":%llu", n, yields);
		else
			kgo_bench_report(metric, impls[i].name, "ns/op", ns, n,
					 "\"iters\":%llu", n);
	}
}

/* A kthread switch costs tens of microseconds under emulation. */
static const struct pp_impl yield_pp_impls[] = {
	{ "kgo",	yield_pp_kgo,		1 },
	{ "kthread",	yield_pp_kthread,	10 },
};

/* n switches in all, n / 2 rounds per side, as bench/go counts them. */
void kgo_bench_yield_pingpong(const struct kgo_bench_cfg *cfg)
{
	pp_bench(cfg, "yield_pingpong", yield_pp_impls,
		 ARRAY_SIZE(yield_pp_impls), kgo_bench_size(cfg, 200000, 1000), 2);
}

static const struct pp_impl chan_pp_impls[] = {
	{ "kgo",	chan_pp_kgo,		1 },
	{ "completion",	chan_pp_completion,	1 },
};

/* n round trips. */
void kgo_bench_chan_pingpong(const struct kgo_bench_cfg *cfg)
{
	pp_bench(cfg, "chan_pingpong", chan_pp_impls,
		 ARRAY_SIZE(chan_pp_impls), kgo_bench_size(cfg, 100000, 1000), 1);
}
