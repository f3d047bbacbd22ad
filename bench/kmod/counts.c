// SPDX-License-Identifier: GPL-2.0
/*
 * "counts": what one operation costs in the events that grow with the
 * CPUs (kgo_counts_read(), kmod/count.h), per operation, over a batch
 * run alone after a warm-up of a tenth of its size:
 *
 *   locks_OP   sched.lock acquisitions
 *   rmws_OP    atomic RMWs of scheduler-global state
 *   xwakes_OP  wake-ups of an M from another CPU (most are IPIs)
 *
 * for each OP:
 *
 *   yield      two goroutines, each kgo_yield()ing n times; per yield
 *   chan       a value out and back over two unbuffered channels
 *   spawn_g    kgo_go() from a goroutine: spawn, run and exit of a goroutine
 *   spawn_ext  kgo_go() from a thread (this module's init), the same
 *   timer      kgo_sleep(10 us) in a goroutine: an hrtimer readies it
 *              from hardirq, from outside any P
 *   ring       missing: a spawn from a thread through a ring is made in
 *              userspace (bench/uring), which cannot call kgo_counts_read()
 *   sock       missing: socket readiness is the net group's, in userspace
 *
 * The counters are the whole machine's: whatever else runs meanwhile
 * counts too, the monitor's ticks (sched.lock, a few every ms while a P
 * is busy) included. Those are part of the steady state a batch shows.
 */

#include <linux/kernel.h>

#include "bench.h"

#define COUNTS_SLEEP_NS		(10 * NSEC_PER_USEC)

#define COUNTS_MISSING_RING \
	"a spawn through a ring is made in userspace (bench/uring), which cannot call kgo_counts_read()"
#define COUNTS_MISSING_SOCK \
	"socket readiness is the net group's, made from userspace (bench/net): not counted there"

struct counts_run {
	u64 n;				/* operations of one side */
	struct kgo_waitgroup wg;
	struct kgo_chan *ping, *pong;
	int err;
};

/* Records the first error of the run. */
static void counts_err(struct counts_run *r, int err)
{
	if (err)
		cmpxchg(&r->err, 0, err);
}

static void counts_yield_fn(void *arg)
{
	struct counts_run *r = arg;
	u64 i;

	for (i = 0; i < r->n; i++)
		kgo_yield();
}

static void counts_chan_echo(void *arg)
{
	struct counts_run *r = arg;
	bool ok;
	u64 i, v;

	for (i = 0; i < r->n; i++) {
		if (kgo_chan_recv(r->ping, &v, &ok, KGO_FOREVER) || !ok ||
		    kgo_chan_send(r->pong, &v, KGO_FOREVER)) {
			counts_err(r, -EPIPE);
			return;
		}
	}
}

static void counts_chan_send(void *arg)
{
	struct counts_run *r = arg;
	bool ok;
	u64 i, v;

	for (i = 0; i < r->n; i++) {
		if (kgo_chan_send(r->ping, &i, KGO_FOREVER) ||
		    kgo_chan_recv(r->pong, &v, &ok, KGO_FOREVER) || !ok) {
			counts_err(r, -EPIPE);
			/* The echo side waits for a value that never comes. */
			kgo_chan_close(r->ping);
			return;
		}
	}
}

static void counts_nop(void *arg)
{
}

/* @r->n nops, each a goroutine of the run's WaitGroup, from the caller. */
static void counts_spawn_n(struct counts_run *r)
{
	s64 ret;
	u64 i;

	for (i = 0; i < r->n; i++) {
		ret = kgo_go_wg(&r->wg, counts_nop, NULL, GFP_KERNEL);
		if (ret < 0) {
			counts_err(r, ret);
			return;
		}
	}
}

static void counts_spawner(void *arg)
{
	counts_spawn_n(arg);
}

static void counts_sleeper(void *arg)
{
	struct counts_run *r = arg;
	u64 i;

	for (i = 0; i < r->n; i++)
		counts_err(r, kgo_sleep(COUNTS_SLEEP_NS));
}

/* Starts @fn on @r as a goroutine of the run's WaitGroup. */
static void counts_go(struct counts_run *r, kgo_func_t fn)
{
	s64 ret = kgo_go_wg(&r->wg, fn, r, GFP_KERNEL);

	counts_err(r, ret < 0 ? ret : 0);
}

/* The ways a batch starts, from this thread: the runs above. */
static void counts_start_yield(struct counts_run *r)
{
	counts_go(r, counts_yield_fn);
	counts_go(r, counts_yield_fn);
}

static void counts_start_chan(struct counts_run *r)
{
	r->ping = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	r->pong = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	if (!r->ping || !r->pong) {
		counts_err(r, -ENOMEM);
		return;
	}
	counts_go(r, counts_chan_echo);
	if (r->err)
		return;
	counts_go(r, counts_chan_send);
	if (r->err)
		kgo_chan_close(r->ping);	/* the echo side waits for it */
}

static void counts_start_spawn_g(struct counts_run *r)
{
	counts_go(r, counts_spawner);
}

static void counts_start_spawn_ext(struct counts_run *r)
{
	counts_spawn_n(r);
}

static void counts_start_timer(struct counts_run *r)
{
	counts_go(r, counts_sleeper);
}

static const struct counts_op {
	const char *name;
	void (*start)(struct counts_run *r);
	u64 full, smoke;	/* n of a batch */
	unsigned int per_n;	/* operations per n: both sides of a yield */
	const char *missing;	/* why it is not measured here, or NULL */
} counts_ops[] = {
	{ "yield",	counts_start_yield,	10000,	250,	2 },
	{ "chan",	counts_start_chan,	10000,	500,	1 },
	{ "spawn_g",	counts_start_spawn_g,	10000,	500,	1 },
	{ "spawn_ext",	counts_start_spawn_ext,	10000,	500,	1 },
	{ "timer",	counts_start_timer,	2000,	100,	1 },
	{ "ring", .missing = COUNTS_MISSING_RING },
	{ "sock", .missing = COUNTS_MISSING_SOCK },
};

/* One batch of @o, of size @n, waited for. Context: process. */
static int counts_batch(const struct counts_op *o, u64 n)
{
	struct counts_run r = { .n = n };

	kgo_wg_init(&r.wg);
	o->start(&r);
	kgo_bench_wg_wait(&r.wg);
	if (r.ping)
		kgo_chan_destroy(r.ping);
	if (r.pong)
		kgo_chan_destroy(r.pong);
	return r.err;
}

static void counts_metric(char *buf, size_t size, const char *what, const char *op)
{
	snprintf(buf, size, "%s_%s", what, op);
}

static void counts_report(const char *what, const char *op, const char *unit,
			  u64 count, u64 ops)
{
	char metric[32];

	counts_metric(metric, sizeof(metric), what, op);
	kgo_bench_report(metric, "kgo", unit, count, ops,
			 "\"count\":%llu,\"ops\":%llu,\"nprocs\":%d", count, ops,
			 kgo_bench_nprocs());
}

static const struct {
	const char *what, *unit;
} counts_kinds[] = {
	{ "locks", "locks/op" },
	{ "rmws", "rmws/op" },
	{ "xwakes", "wakes/op" },
};

/* Every row of @o, missing for @reason, or failed with @err. */
static void counts_report_none(const struct counts_op *o, const char *reason, int err)
{
	char metric[32];
	int k;

	for (k = 0; k < ARRAY_SIZE(counts_kinds); k++) {
		counts_metric(metric, sizeof(metric), counts_kinds[k].what, o->name);
		if (reason)
			kgo_bench_report_missing(metric, "kgo", counts_kinds[k].unit,
						 reason, "\"nprocs\":%d",
						 kgo_bench_nprocs());
		else
			kgo_bench_report_error(metric, "kgo", err);
	}
}

void kgo_bench_counts(const struct kgo_bench_cfg *cfg)
{
	struct kgo_counts before, after;
	int i, err;

	for (i = 0; i < ARRAY_SIZE(counts_ops); i++) {
		const struct counts_op *o = &counts_ops[i];
		u64 n = kgo_bench_size(cfg, o->full, o->smoke), ops;

		if (o->missing) {
			counts_report_none(o, o->missing, 0);
			continue;
		}
		err = counts_batch(o, kgo_bench_warm_size(n));
		if (!err) {
			kgo_counts_read(&before);
			err = counts_batch(o, n);
			kgo_counts_read(&after);
		}
		if (err) {
			counts_report_none(o, NULL, err);
			continue;
		}
		ops = n * o->per_n;
		counts_report("locks", o->name, "locks/op",
			      after.sched_lock - before.sched_lock, ops);
		counts_report("rmws", o->name, "rmws/op",
			      after.shared_rmw - before.shared_rmw, ops);
		counts_report("xwakes", o->name, "wakes/op",
			      after.xcpu_wake - before.xcpu_wake, ops);
	}
}
