// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_sched: the scheduler as goroutines see it, on the live scheduler
 * of the loaded module. After Go's proc_test.go where a test has a Go
 * counterpart.
 *
 * Named for sched.c, whose code it mostly drives; the stack cases reach
 * into stack.c, and the frame and canary cases into the switch code.
 * kgo_sched.lock is a raw spinlock (sched.c, "Lock order"): a case that
 * reads the scheduler's state takes it with raw_spin_lock_irq().
 */

#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kallsyms.h>
#include <linux/kthread.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/vmalloc.h>

#include <kgo.h>
#include "compat.h"
#include "g.h"
#include "m.h"
#include "proc.h"
#include "sched.h"
#include "stack.h"
#include "tests/run_g.h"

#define LONG_MS		60000	/* a generous bound: TCG under KASAN is slow */

#define PSTAT(field)	KGO_TEST_PSTAT(field)

/* --- 100 000 goroutines from one goroutine ------------------------- */

#define MANY	100000

struct many_ctx {
	unsigned long *ran;
	atomic_t dups;
	struct kgo_waitgroup wg;
	int spawn_errors;
};

static struct many_ctx *many;

static void many_child(void *arg)
{
	if (test_and_set_bit((unsigned long)arg, many->ran))
		atomic_inc(&many->dups);
	kgo_wg_done(&many->wg);
}

static void many_parent(void *arg)
{
	unsigned long i;

	kgo_wg_add(&many->wg, MANY);
	for (i = 0; i < MANY; i++) {
		if (kgo_go(many_child, (void *)i, GFP_KERNEL) < 0) {
			many->spawn_errors++;
			kgo_wg_done(&many->wg);
		}
	}
	kgo_wg_wait(&many->wg);
}

static void kgo_sched_many_test(struct kunit *test)
{
	many = kunit_kzalloc(test, sizeof(*many), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, many);
	many->ran = vzalloc(BITS_TO_LONGS(MANY) * sizeof(long));
	KUNIT_ASSERT_NOT_NULL(test, many->ran);
	kgo_wg_init(&many->wg);

	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(many_parent, NULL, LONG_MS));
	KUNIT_EXPECT_EQ(test, many->spawn_errors, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&many->dups), 0);
	KUNIT_EXPECT_EQ(test, bitmap_weight(many->ran, MANY), (unsigned int)MANY);
	vfree(many->ran);
}

/* --- Go's TestYieldProgress ---------------------------------------- */

struct yield_ctx {
	atomic_t flag;
	unsigned long yields;
	bool timed_out;
};

static void yield_setter(void *arg)
{
	struct yield_ctx *c = arg;

	atomic_set(&c->flag, 1);
}

static void yield_looper(void *arg)
{
	struct yield_ctx *c = arg;
	u64 end = local_clock() + 10 * NSEC_PER_SEC;

	kgo_go(yield_setter, c, GFP_KERNEL);
	while (!atomic_read(&c->flag)) {
		if (local_clock() > end) {
			c->timed_out = true;
			break;
		}
		kgo_yield();
		c->yields++;
	}
}

static void kgo_sched_yield_progress_test(struct kunit *test)
{
	struct yield_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(yield_looper, c, LONG_MS));
	KUNIT_EXPECT_FALSE(test, c->timed_out);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->flag), 1);
}

/* --- The direct park (sched.c) ------------------------------------- */

#define PK_ROUNDS	500

/* Run on one P, as the direct yield's case: one G at a time. */
struct pk_ctx {
	struct kgo_chan *ping, *pong;
	struct kgo_waitgroup wg;
	int bad;
	int declined;	/* the declined parks' case */
	bool done;
};

/* The other G of a case, counted in c->wg; false if it could not start. */
static bool pk_spawn(struct pk_ctx *c, kgo_func_t fn)
{
	kgo_wg_add(&c->wg, 1);
	if (kgo_go(fn, c, GFP_KERNEL) > 0)
		return true;
	kgo_wg_done(&c->wg);
	c->bad = -1;
	return false;
}

static void pk_pong(void *arg)
{
	struct pk_ctx *c = arg;
	u64 v, i;
	bool ok;

	for (i = 0; i < PK_ROUNDS; i++) {
		if (kgo_chan_recv(c->ping, &v, &ok, KGO_FOREVER) || !ok || v != i)
			c->bad++;
		v++;
		if (kgo_chan_send(c->pong, &v, KGO_FOREVER))
			c->bad++;
	}
	kgo_wg_done(&c->wg);
}

static void pk_ping(void *arg)
{
	struct pk_ctx *c = arg;
	u64 v, i;
	bool ok;

	if (!pk_spawn(c, pk_pong))
		return;
	for (i = 0; i < PK_ROUNDS; i++) {
		v = i;
		if (kgo_chan_send(c->ping, &v, KGO_FOREVER))
			c->bad++;
		if (kgo_chan_recv(c->pong, &v, &ok, KGO_FOREVER) || !ok || v != i + 1)
			c->bad++;
	}
	kgo_wg_wait(&c->wg);
}

/*
 * Two Gs that pass a count back and forth over two unbuffered channels
 * on one P: each receive parks, with the other G readied into runnext,
 * so most parks switch straight to it; every value arrives, in order.
 */
static void kgo_sched_park_direct_test(struct kunit *test)
{
	struct pk_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u64 direct = PSTAT(parks_direct), parks = PSTAT(parks);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->ping = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	c->pong = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	kgo_wg_init(&c->wg);
	ret = c->ping && c->pong ? kgo_test_run_in_g_1p(pk_ping, c, LONG_MS) : -ENOMEM;
	if (c->ping)
		kgo_chan_destroy(c->ping);
	if (c->pong)
		kgo_chan_destroy(c->pong);
	KUNIT_ASSERT_EQ(test, ret, 0);
	direct = PSTAT(parks_direct) - direct;
	parks = PSTAT(parks) - parks;
	kunit_info(test, "parks %llu, direct %llu\n", parks, direct);
	KUNIT_EXPECT_EQ(test, c->bad, 0);
	KUNIT_EXPECT_GE(test, parks, (u64)2 * PK_ROUNDS);
	KUNIT_EXPECT_GE(test, direct, parks / 2);
}

#define PK_DECLINES	40

/* An unlockf that declines every park. */
static bool pk_decline(struct kgo_g *g, void *arg)
{
	struct pk_ctx *c = arg;

	c->declined++;
	return false;
}

/* Yields until the decliner is done: the G each park can switch to. */
static void pk_other(void *arg)
{
	struct pk_ctx *c = arg;

	while (!READ_ONCE(c->done))
		kgo_yield();
	kgo_wg_done(&c->wg);
}

static void pk_decliner(void *arg)
{
	struct pk_ctx *c = arg;
	int i;

	if (!pk_spawn(c, pk_other))
		return;
	for (i = 0; i < PK_DECLINES; i++) {
		kgo_yield();	/* pk_other runs, and yields back */
		if (kgo_park(pk_decline, c))
			c->bad++;
	}
	c->done = true;
	kgo_wg_wait(&c->wg);
}

/*
 * Parks whose unlockf declines, with a G next that ran before (the
 * other yields in turn): the switch goes straight to that G, which
 * finds the park declined and puts the parker in runnext. Each park
 * returns without a kgo_ready(), and both Gs finish.
 */
static void kgo_sched_park_direct_declined_test(struct kunit *test)
{
	struct pk_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u64 direct = PSTAT(parks_direct);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, c);
	kgo_wg_init(&c->wg);
	ret = kgo_test_run_in_g_1p(pk_decliner, c, LONG_MS);
	KUNIT_ASSERT_EQ(test, ret, 0);
	direct = PSTAT(parks_direct) - direct;
	kunit_info(test, "declined %d, direct %llu\n", c->declined, direct);
	KUNIT_EXPECT_EQ(test, c->bad, 0);
	KUNIT_EXPECT_EQ(test, c->declined, PK_DECLINES);
	KUNIT_EXPECT_GE(test, direct, (u64)PK_DECLINES / 2);
}

/* --- The direct yield (sched.c) ------------------------------------ */

#define RR_GS		3
#define RR_ROUNDS	300

struct rr_ctx;

struct rr_arg {
	struct rr_ctx *c;
	u8 id;
};

/* Run on one P: the plain fields are touched by one G at a time. */
struct rr_ctx {
	struct kgo_waitgroup wg;
	struct rr_arg args[RR_GS];
	int started;
	int pos;
	u8 log[RR_GS * RR_ROUNDS];
};

static void rr_child(void *arg)
{
	struct rr_arg *a = arg;
	struct rr_ctx *c = a->c;
	int i;

	c->started++;
	while (c->started < RR_GS)
		kgo_yield();
	for (i = 0; i < RR_ROUNDS; i++) {
		c->log[c->pos++] = a->id;
		kgo_yield();
	}
	kgo_wg_done(&c->wg);
}

static void rr_parent(void *arg)
{
	struct rr_ctx *c = arg;
	int i;

	kgo_wg_add(&c->wg, RR_GS);
	for (i = 0; i < RR_GS; i++) {
		c->args[i] = (struct rr_arg){ c, i };
		if (kgo_go(rr_child, &c->args[i], GFP_KERNEL) < 0)
			kgo_wg_done(&c->wg);
	}
	kgo_wg_wait(&c->wg);
}

/* Events that send a G to the global queue, out of its P's FIFO order. */
static u64 rr_disturbances(void)
{
	return PSTAT(preempts) + PSTAT(hog_reliefs) + PSTAT(handoffs);
}

/*
 * Three Gs that yield in turn on one P: every yield hands the P to the
 * next of the other two in FIFO order, whether it went straight to it
 * (kgo_yield_direct()) or through the M, and most went straight.
 *
 * FIFO holds while the P keeps its M. If the kernel keeps the M off the
 * CPU for a slice (a loaded host makes a vCPU stall that long), the
 * monitor preempts the G or takes the P (hog.c), and that G goes to the
 * global queue, as Go's gopreempt_m sends it: the order is then Go's,
 * not round robin, and the case says so instead of failing.
 */
static void kgo_sched_yield_direct_test(struct kunit *test)
{
	struct rr_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u64 direct = PSTAT(yields_direct), yields = PSTAT(yields);
	u64 disturbed = rr_disturbances();
	int ret, i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, c);
	kgo_wg_init(&c->wg);
	ret = kgo_test_run_in_g_1p(rr_parent, c, LONG_MS);
	KUNIT_ASSERT_EQ(test, ret, 0);
	direct = PSTAT(yields_direct) - direct;
	yields = PSTAT(yields) - yields;
	KUNIT_ASSERT_EQ(test, c->pos, RR_GS * RR_ROUNDS);
	/* Round robin once all have started; the last round runs down. */
	for (i = RR_GS; i < RR_GS * (RR_ROUNDS - 1); i++)
		if (c->log[i] != c->log[i - RR_GS] || c->log[i] == c->log[i - 1])
			bad++;
	disturbed = rr_disturbances() - disturbed;
	kunit_info(test, "yields %llu, direct %llu, out of turn %d, preempted or relieved %llu\n",
		   yields, direct, bad, disturbed);
	if (disturbed)
		kunit_mark_skipped(test, "round robin not checked: %llu preemptions, reliefs or handoffs (the M was off its CPU for a slice)",
				   disturbed);
	else
		KUNIT_EXPECT_EQ(test, bad, 0);
	KUNIT_EXPECT_GE(test, yields, (u64)RR_GS * RR_ROUNDS);
	KUNIT_EXPECT_GE(test, direct, yields / 2);
}

/* --- Go's TestGoroutineParallelism --------------------------------- */

struct par_ctx {
	int n;
	atomic_t started;
	atomic_t failed;
	struct kgo_waitgroup wg;
};

/* Each G waits, without yielding, until all n run at once. */
static void par_spinner(void *arg)
{
	struct par_ctx *c = arg;
	u64 end = local_clock() + 20 * NSEC_PER_SEC;

	atomic_inc(&c->started);
	while (atomic_read(&c->started) < c->n) {
		if (local_clock() > end) {
			atomic_inc(&c->failed);
			break;
		}
		cond_resched();	/* the kernel may run others; kgo may not */
	}
	kgo_wg_done(&c->wg);
}

static void par_spawner(void *arg)
{
	struct par_ctx *c = arg;
	int i;

	for (i = 0; i < c->n; i++)
		kgo_go(par_spinner, c, GFP_KERNEL);
}

static void run_parallelism(struct kunit *test, bool from_g)
{
	struct par_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->n = kgo_sched.nprocs;
	kgo_wg_init(&c->wg);
	kgo_wg_add(&c->wg, c->n);
	if (from_g) {
		KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(par_spawner, c, LONG_MS));
	} else {
		/* The variant "after Ms parked": wake them from outside. */
		KUNIT_ASSERT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));
		for (i = 0; i < c->n; i++)
			KUNIT_ASSERT_GT(test, kgo_go(par_spinner, c, GFP_KERNEL), 0LL);
	}
	kgo_wg_wait(&c->wg);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->failed), 0);
}

static void kgo_sched_parallelism_test(struct kunit *test)
{
	run_parallelism(test, true);
}

static void kgo_sched_parallelism_after_park_test(struct kunit *test)
{
	run_parallelism(test, false);
}

/* --- Work spawned on one P runs on the others ---------------------- */

#define STEAL_GS	64

struct steal_ctx {
	unsigned long cpus;	/* bitmask of CPUs that ran a child */
	u64 deadline;		/* ktime ns: children stop waiting for a thief */
	struct kgo_waitgroup wg;
};

static void steal_child(void *arg)
{
	struct steal_ctx *c = arg;

	set_bit(raw_smp_processor_id(), &c->cpus);
	/*
	 * Busy, never calling kgo, until a child has run on a second CPU:
	 * so an idle P has time to come and steal however coarsely the
	 * host interleaves the vCPUs (one-thread TCG can run one vCPU for
	 * tens of ms before the other). A fixed delay of 500 us per child
	 * was not always long enough there. The deadline bounds it.
	 */
	do {
		udelay(100);
	} while (hweight_long(READ_ONCE(c->cpus)) < 2 && ktime_get_ns() < c->deadline);
	kgo_wg_done(&c->wg);
}

static void steal_parent(void *arg)
{
	struct steal_ctx *c = arg;
	int i;

	kgo_wg_add(&c->wg, STEAL_GS);
	for (i = 0; i < STEAL_GS; i++)
		kgo_go(steal_child, c, GFP_KERNEL);
	kgo_wg_wait(&c->wg);
}

static void kgo_sched_steal_test(struct kunit *test)
{
	struct steal_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u64 steals = PSTAT(steals), stolen = PSTAT(stolen);

	KUNIT_ASSERT_NOT_NULL(test, c);
	if (kgo_sched.nprocs < 2)
		kunit_skip(test, "needs two Ps");
	kgo_wg_init(&c->wg);
	c->deadline = ktime_get_ns() + 5 * NSEC_PER_SEC;
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(steal_parent, c, LONG_MS));
	kunit_info(test, "cpus %#lx steals %llu stolen %llu\n", c->cpus,
		   PSTAT(steals) - steals, PSTAT(stolen) - stolen);
	KUNIT_EXPECT_GT(test, hweight_long(c->cpus), 1);
	KUNIT_EXPECT_GT(test, PSTAT(steals), steals);
	KUNIT_EXPECT_GT(test, PSTAT(stolen), stolen);
}

/* --- A protected frame survives a move to another M (canary) ------- */

#define CANARY_ROUNDS	10

/* What one round's hog waits for: handed over when it is spawned. */
struct canary_hog {
	struct canary_ctx *c;
	int round;
};

struct canary_ctx {
	struct kgo_g *g;
	struct canary_hog hog[CANARY_ROUNDS];
	atomic_t parked;
	atomic_t round;		/* the round the G is in */
	atomic_t resumed;	/* the last round it resumed in */
	atomic_t stalls;
	struct kgo_waitgroup hogs;
	int rounds, moved, bad_buf;
	u64 m_before, m_after;
	int cpu_before, cpu_after;
};

static bool canary_unlock(struct kgo_g *g, void *arg)
{
	struct canary_ctx *c = arg;

	atomic_set_release(&c->parked, 1);
	return true;
}

/*
 * Keeps the parked G's old M busy, so another M must resume it. Its
 * round comes with it: a hog stolen before it starts may first run
 * after the G has resumed and begun the next round, and reading the
 * round then would make it wait for that one, beside the next hog,
 * with both Ps taken and the G queued.
 */
static void canary_hog(void *arg)
{
	struct canary_hog *h = arg;
	struct canary_ctx *c = h->c;
	u64 end = local_clock() + 10 * NSEC_PER_SEC;

	/* Not "until resumed is set": a slow hog could miss a whole round. */
	while (atomic_read(&c->resumed) < h->round) {
		if (local_clock() > end) {
			/* The readied G waited while a P was idle: lost wake-up. */
			atomic_inc(&c->stalls);
			break;
		}
		cond_resched();
	}
	kgo_wg_done(&c->hogs);
}

static noinline void canary_round(struct canary_ctx *c, struct canary_hog *h)
{
	char buf[64];
	int i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i ^ 0x5a;
	c->m_before = kgo_this_m()->id;
	c->cpu_before = raw_smp_processor_id();
	h->c = c;
	h->round = atomic_inc_return(&c->round);
	kgo_wg_add(&c->hogs, 1);
	kgo_go(canary_hog, h, GFP_KERNEL);	/* runs next, on this P */
	kgo_park(canary_unlock, c);
	c->m_after = kgo_this_m()->id;
	c->cpu_after = raw_smp_processor_id();
	atomic_set(&c->resumed, atomic_read(&c->round));
	for (i = 0; i < sizeof(buf); i++)
		if (READ_ONCE(buf[i]) != (char)(i ^ 0x5a))
			c->bad_buf++;
	/* Returning checks this frame's canary: on the new M. */
}

static void canary_g(void *arg)
{
	struct canary_ctx *c = arg;

	c->g = kgo_self();
	for (c->rounds = 0; c->rounds < CANARY_ROUNDS; c->rounds++) {
		canary_round(c, &c->hog[c->rounds]);
		if (c->m_after != c->m_before && c->cpu_after != c->cpu_before)
			c->moved++;
	}
}

static int canary_waker(void *arg)
{
	struct canary_ctx *c = arg;
	int r;

	for (r = 0; r < CANARY_ROUNDS; r++) {
		while (!atomic_read_acquire(&c->parked))
			usleep_range(100, 200);
		atomic_set(&c->parked, 0);
		kgo_ready(c->g);	/* from a plain kthread, not a G */
	}
	return 0;
}

static void kgo_sched_canary_move_test(struct kunit *test)
{
	struct canary_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct task_struct *waker;
	u64 t0;

	KUNIT_ASSERT_NOT_NULL(test, c);
	if (kgo_sched.nprocs < 2)
		kunit_skip(test, "needs two Ps");
	kgo_wg_init(&c->hogs);
	waker = kthread_run(canary_waker, c, "kgo-test-waker");
	KUNIT_ASSERT_FALSE(test, IS_ERR(waker));
	t0 = local_clock();
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(canary_g, c, LONG_MS));
	kgo_wg_wait(&c->hogs);	/* they read c */
	kunit_info(test, "%d of %d rounds resumed on another M and CPU, %llu ms\n",
		   c->moved, CANARY_ROUNDS, (local_clock() - t0) / NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, c->rounds, CANARY_ROUNDS);
	KUNIT_EXPECT_EQ(test, c->bad_buf, 0);
	KUNIT_EXPECT_GT(test, c->moved, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->stalls), 0);
}

/* --- The unwinder sees a goroutine's frames ------------------------ */

#define TRACE_DEPTH	32

struct trace_ctx {
	unsigned long entries[TRACE_DEPTH];
	unsigned int n;
	bool done;
};

static noinline void trace_leaf(struct trace_ctx *c)
{
	c->n = stack_trace_save(c->entries, TRACE_DEPTH, 0);
}

static noinline void trace_g(void *arg)
{
	struct trace_ctx *c = arg;

	trace_leaf(c);
	WRITE_ONCE(c->done, true);	/* not a tail call: keep this frame */
}

static bool trace_has(struct trace_ctx *c, const char *name)
{
	char sym[KSYM_SYMBOL_LEN];
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		sprint_symbol_no_offset(sym, c->entries[i]);
		if (!strncmp(sym, name, strlen(name)))
			return true;
	}
	return false;
}

/*
 * What WARN, lockdep and KASAN print comes from this unwinder: it must
 * walk the goroutine's stack from the leaf up to kgo_g_entry and stop.
 */
static void kgo_sched_trace_frames_test(struct kunit *test)
{
	struct trace_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(trace_g, c, LONG_MS));
	for (i = 0; i < c->n; i++)
		kunit_info(test, "  %pS\n", (void *)c->entries[i]);
	KUNIT_EXPECT_LT(test, c->n, (unsigned int)TRACE_DEPTH);
	KUNIT_EXPECT_TRUE(test, trace_has(c, "trace_leaf"));
	KUNIT_EXPECT_TRUE(test, trace_has(c, "trace_g"));
	KUNIT_EXPECT_TRUE(test, trace_has(c, "kgo_g_main"));
	KUNIT_EXPECT_TRUE(test, trace_has(c, "kgo_g_entry"));
	/* Nothing of the M's own stack: the walk stopped at the G's base. */
	KUNIT_EXPECT_FALSE(test, trace_has(c, "kgo_schedule"));
	KUNIT_EXPECT_FALSE(test, trace_has(c, "kthread"));
}

/* --- Stacks reused after abandoned large frames stay KASAN-clean --- */

#define REUSE_GS	64

struct reuse_ctx {
	struct kgo_waitgroup wg;
	unsigned long sum;
};

/* A big frame, left mid-way by kgo_exit(): its redzones stay poisoned. */
static noinline void reuse_big_frame_exit(struct reuse_ctx *c)
{
	volatile char big[2048];
	int i;

	for (i = 0; i < sizeof(big); i += 64)
		big[i] = i;
	c->sum += big[64];
	kgo_wg_done(&c->wg);
	kgo_exit();
}

static void reuse_first(void *arg)
{
	reuse_big_frame_exit(arg);
}

/* Another layout over the same stack range. */
static noinline void reuse_walk(struct reuse_ctx *c, int depth)
{
	volatile char mid[200];
	int i;

	for (i = 0; i < sizeof(mid); i++)
		mid[i] = i + depth;
	if (depth)
		reuse_walk(c, depth - 1);
	c->sum += mid[depth % sizeof(mid)];
}

static void reuse_second(void *arg)
{
	struct reuse_ctx *c = arg;

	reuse_walk(c, 8);
	kgo_wg_done(&c->wg);
}

static void kgo_sched_stack_reuse_test(struct kunit *test)
{
	struct reuse_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	kgo_wg_init(&c->wg);
	kgo_wg_add(&c->wg, REUSE_GS);
	for (i = 0; i < REUSE_GS; i++)
		KUNIT_ASSERT_GT(test, kgo_go(reuse_first, c, GFP_KERNEL), 0LL);
	kgo_wg_wait(&c->wg);
	KUNIT_EXPECT_GT(test, kgo_stacks_cached(), 0L);
	kgo_wg_add(&c->wg, REUSE_GS);
	for (i = 0; i < REUSE_GS; i++)
		KUNIT_ASSERT_GT(test, kgo_go(reuse_second, c, GFP_KERNEL), 0LL);
	kgo_wg_wait(&c->wg);
	/* A KASAN report above would have panicked the test kernel. */
}

/* --- Readiness and spawning from interrupt context ----------------- */

struct irq_ctx {
	struct hrtimer timer;
	struct kgo_g *g;
	atomic_t resumed;
	s64 spawned;
	struct kgo_waitgroup wg;
	enum hrtimer_mode mode;
	bool was_hardirq;
};

static void irq_child(void *arg)
{
	struct irq_ctx *c = arg;

	kgo_wg_done(&c->wg);
}

static enum hrtimer_restart irq_timer_fn(struct hrtimer *t)
{
	struct irq_ctx *c = container_of(t, struct irq_ctx, timer);

	c->was_hardirq = in_hardirq();
	c->spawned = kgo_go(irq_child, c, GFP_ATOMIC);
	kgo_ready(c->g);
	return HRTIMER_NORESTART;
}

static bool irq_arm(struct kgo_g *g, void *arg)
{
	struct irq_ctx *c = arg;

	c->g = g;
	hrtimer_start(&c->timer, ns_to_ktime(100 * NSEC_PER_USEC), c->mode);
	return true;
}

static void irq_g(void *arg)
{
	struct irq_ctx *c = arg;

	kgo_park(irq_arm, c);
	atomic_set(&c->resumed, 1);
}

static void run_irq_ready(struct kunit *test, enum hrtimer_mode mode, bool hard)
{
	struct irq_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->mode = mode;
	kgo_hrtimer_setup(&c->timer, irq_timer_fn, CLOCK_MONOTONIC, mode);
	kgo_wg_init(&c->wg);
	kgo_wg_add(&c->wg, 1);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(irq_g, c, LONG_MS));
	hrtimer_cancel(&c->timer);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->resumed), 1);
	KUNIT_EXPECT_EQ(test, c->was_hardirq, hard);
	KUNIT_ASSERT_GT(test, c->spawned, 0LL);
	kgo_wg_wait(&c->wg);
}

static void kgo_sched_hardirq_ready_test(struct kunit *test)
{
	run_irq_ready(test, HRTIMER_MODE_REL_HARD, true);
}

static void kgo_sched_softirq_ready_test(struct kunit *test)
{
	run_irq_ready(test, HRTIMER_MODE_REL_SOFT, false);
}

/* --- A batch injected from outside (Go's injectglist) -------------- */

#define BATCH	1000

struct batch_ctx {
	atomic_t ran;
	struct kgo_waitgroup wg;
};

static void batch_fn(void *arg)
{
	struct batch_ctx *c = arg;

	atomic_inc(&c->ran);
	kgo_wg_done(&c->wg);
}

static void kgo_sched_inject_batch_test(struct kunit *test)
{
	struct batch_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct kgo_gqueue q = {};
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	kgo_wg_init(&c->wg);
	kgo_wg_add(&c->wg, BATCH);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));
	for (i = 0; i < BATCH; i++) {
		struct kgo_g *g = kgo_newproc(batch_fn, c, GFP_KERNEL);

		KUNIT_ASSERT_FALSE(test, IS_ERR(g));
		kgo_gqueue_push_back(&q, g);
	}
	kgo_injectglist(&q, BATCH);
	kgo_wg_wait(&c->wg);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->ran), BATCH);
}

/* --- Cached stacks go back under memory pressure ------------------- */

static void shrink_noop(void *arg)
{
}

static void kgo_sched_shrinker_test(struct kunit *test)
{
	long cached;

	KUNIT_ASSERT_EQ(test, 0, kgo_test_run_in_g(shrink_noop, NULL, LONG_MS));
	KUNIT_ASSERT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));
	cached = kgo_stacks_cached();
	KUNIT_ASSERT_GT(test, cached, 0L);	/* the exited G gave its stack back */
	KUNIT_EXPECT_EQ(test, kgo_stack_shrink(ULONG_MAX), (unsigned long)cached);
	KUNIT_EXPECT_EQ(test, kgo_stacks_cached(), 0L);
	/* Goroutines still get stacks afterwards. */
	KUNIT_EXPECT_EQ(test, 0, kgo_test_run_in_g(shrink_noop, NULL, LONG_MS));
}

/* --- The stack pool keeps a burst's stacks, then lets them go ------- */

#define POOL_GS		200

struct pool_ctx {
	struct kgo_waitgroup gate;	/* held until all POOL_GS wait */
	struct kgo_waitgroup done;
	atomic_t waiting;
	atomic_t err;
};

static void pool_waiter(void *arg)
{
	struct pool_ctx *c = arg;

	atomic_inc(&c->waiting);
	if (kgo_wg_wait(&c->gate))
		atomic_inc(&c->err);
	kgo_wg_done(&c->done);
}

static void kgo_sched_stack_pool_test(struct kunit *test)
{
	struct pool_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned long t;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	kgo_wg_init(&c->gate);
	kgo_wg_init(&c->done);
	kgo_wg_add(&c->gate, 1);
	kgo_wg_add(&c->done, POOL_GS);
	kgo_stack_shrink(ULONG_MAX);	/* start from nothing cached */
	for (i = 0; i < POOL_GS; i++)
		KUNIT_ASSERT_GT(test, kgo_go(pool_waiter, c, GFP_KERNEL), 0LL);
	/* All POOL_GS hold a stack at once, more than the P caches keep. */
	for (t = jiffies + msecs_to_jiffies(LONG_MS);
	     atomic_read(&c->waiting) < POOL_GS && time_before(jiffies, t);)
		msleep(1);
	KUNIT_ASSERT_EQ(test, atomic_read(&c->waiting), POOL_GS);
	kgo_wg_done(&c->gate);
	KUNIT_ASSERT_EQ(test, 0, kgo_wg_wait(&c->done));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->err), 0);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));
	/* None of the burst's stacks was freed: the Ps and the pool hold them. */
	KUNIT_EXPECT_GE(test, kgo_stacks_cached(), (long)POOL_GS);
	KUNIT_EXPECT_GT(test, kgo_stack_pooled(), 0UL);
	/*
	 * Idle, the pool gives back half its unused stacks a second: 200
	 * take about 8 s. Generous, for an emulated debug kernel.
	 */
	for (t = jiffies + 60 * HZ; kgo_stack_pooled() && time_before(jiffies, t);)
		msleep(100);
	KUNIT_EXPECT_EQ(test, kgo_stack_pooled(), 0UL);
	/* What the P caches keep is theirs: bounded apart. */
	KUNIT_EXPECT_LE(test, kgo_stacks_cached(),
			(long)kgo_sched.nprocs * KGO_STACK_CACHE_MAX);
}

/* --- Free lists stay bounded ----------------------------------------- */

struct burst {
	struct kgo_waitgroup started, done;
	struct kgo_chan *gate;		/* closed once every one is alive */
};

static void burst_body(void *arg)
{
	struct burst *b = arg;
	bool ok;
	u8 v;

	kgo_wg_done(&b->started);
	kgo_chan_recv(b->gate, &v, &ok, KGO_FOREVER);
	kgo_wg_done(&b->done);
}

/* @n goroutines alive at once, then all gone. */
static void run_burst(struct kunit *test, struct burst *b, int n)
{
	int i;

	b->gate = kgo_chan_create(1, 0, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b->gate);
	kgo_wg_init(&b->started);
	kgo_wg_init(&b->done);
	kgo_wg_add(&b->started, n);
	kgo_wg_add(&b->done, n);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_GT(test, kgo_go(burst_body, b, GFP_KERNEL), 0LL);
	KUNIT_ASSERT_EQ(test, kgo_wg_wait_timeout(&b->started, LONG_MS * NSEC_PER_MSEC), 0);
	KUNIT_ASSERT_EQ(test, kgo_chan_close(b->gate), 0);
	KUNIT_ASSERT_EQ(test, kgo_wg_wait_timeout(&b->done, LONG_MS * NSEC_PER_MSEC), 0);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));
	KUNIT_EXPECT_EQ(test, kgo_chan_destroy(b->gate), 0);
}

static void gcache_body(void *arg)
{
	kgo_wg_done(arg);
}

/*
 * More dead Gs at once than every free list together may keep: each P
 * keeps at most KGO_GFREE_MAX and the global list KGO_GFREE_GLOBAL_MAX,
 * the rest went back to the slab, and the shrinker empties the global
 * list. The Gs are made from outside any P and handed over as one batch,
 * so all exist before any runs, and none holds a stack until it does.
 */
static void kgo_sched_gfree_bound_test(struct kunit *test)
{
	struct kgo_waitgroup *wg = kunit_kzalloc(test, sizeof(*wg), GFP_KERNEL);
	int n = KGO_GFREE_MAX * kgo_sched.nprocs + KGO_GFREE_GLOBAL_MAX + 1000;
	unsigned int local = 0, global;
	struct kgo_gcache gc = {};
	struct kgo_gqueue q = {};
	unsigned long freed;
	struct kgo_g *g;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, wg);
	kgo_wg_init(wg);
	kgo_wg_add(wg, n);
	for (i = 0; i < n; i++) {
		g = kgo_newproc_gc(&gc, gcache_body, wg, GFP_KERNEL);
		if (IS_ERR(g)) {
			kgo_wg_add(wg, i - n);
			break;
		}
		kgo_gqueue_push_back(&q, g);
	}
	kgo_injectglist(&q, i);
	KUNIT_ASSERT_EQ(test, i, n);
	KUNIT_ASSERT_EQ(test, kgo_wg_wait_timeout(wg, LONG_MS * NSEC_PER_MSEC), 0);
	kgo_gcache_drain(&gc);
	KUNIT_ASSERT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));

	for (i = 0; i < kgo_sched.nprocs; i++) {
		unsigned int k = READ_ONCE(kgo_sched.allp[i]->ngfree);

		KUNIT_EXPECT_LE(test, k, (unsigned int)KGO_GFREE_MAX);
		local += k;
	}
	raw_spin_lock_irq(&kgo_sched.lock);
	global = kgo_sched.ngfree;
	raw_spin_unlock_irq(&kgo_sched.lock);
	KUNIT_EXPECT_LE(test, global, (unsigned int)KGO_GFREE_GLOBAL_MAX);
	/* Filled up to the cap, less a spill that would have passed it. */
	KUNIT_EXPECT_GT(test, global, (unsigned int)(KGO_GFREE_GLOBAL_MAX - KGO_GFREE_MAX));
	freed = kgo_gfree_shrink(ULONG_MAX);
	KUNIT_EXPECT_GE(test, freed, (unsigned long)global);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kgo_sched.ngfree), 0U);
	kunit_info(test, "%d goroutines: %u dead Gs kept by the Ps, %u globally, %lu shrunk\n",
		   n, local, global, freed);
}

/*
 * A spawner outside any P takes a batch of dead Gs off the global list
 * at its first spawn, under one lock, and spends it on the next ones;
 * what it did not spend goes back.
 */
static void kgo_sched_gcache_test(struct kunit *test)
{
	struct burst *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	struct kgo_waitgroup *wg = kunit_kzalloc(test, sizeof(*wg), GFP_KERNEL);
	struct kgo_gcache gc = {};
	struct kgo_gqueue q = {};
	unsigned int before, batch = 0;
	struct kgo_g *g;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, wg);
	/* Enough exits that the Ps spill batches to the global list. */
	run_burst(test, b, KGO_GFREE_MAX * (kgo_sched.nprocs + 1));
	before = READ_ONCE(kgo_sched.ngfree);
	KUNIT_ASSERT_GT(test, before, 1U);
	kgo_wg_init(wg);
	kgo_wg_add(wg, 4);
	for (i = 0; i < 4; i++) {
		g = kgo_newproc_gc(&gc, gcache_body, wg, GFP_KERNEL);
		KUNIT_ASSERT_FALSE(test, IS_ERR(g));
		if (!i) {
			batch = gc.n + 1;
			KUNIT_EXPECT_EQ(test, READ_ONCE(kgo_sched.ngfree), before - batch);
		} else if (i < batch) {
			KUNIT_EXPECT_EQ(test, gc.n, batch - 1 - i);
		}
		kgo_gqueue_push_back(&q, g);
	}
	kgo_injectglist(&q, 4);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(wg, LONG_MS * NSEC_PER_MSEC), 0);
	kgo_gcache_drain(&gc);
	KUNIT_EXPECT_EQ(test, gc.n, 0U);
	KUNIT_EXPECT_NULL(test, gc.head);
	KUNIT_EXPECT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));
	kunit_info(test, "a batch of %u dead Gs for one lock\n", batch);
}

/* --- A spawn tree on one P: a stack per level, not per subtree ------ */

/*
 * Every node but the leaves spawns two children and waits for them, as
 * bench/kmod/tree.c does. In Go's order (the ring alone), kgo had
 * 1,046 nodes of this tree started at once on one P; with the fresh
 * stack (runq.c) it starts a depth's worth, plus as many more for each
 * oldest-first take the monitor ordered (p->fresh_aged), each of which
 * opens a subtree.
 */
#define TREE_DEPTH	12

struct tree_ctx {
	atomic_t live;		/* nodes started and not done */
	atomic_t peak;
	atomic_t errors;
};

struct tree_arg {
	unsigned int depth;
	struct kgo_waitgroup *parent;
	struct tree_ctx *c;
};

static void tree_node(void *arg)
{
	struct tree_arg *a = arg, kids[2];
	struct tree_ctx *c = a->c;
	int live = atomic_inc_return(&c->live), peak = atomic_read(&c->peak);
	struct kgo_waitgroup wg;
	int i;

	while (live > peak && !atomic_try_cmpxchg(&c->peak, &peak, live))
		;
	if (a->depth) {
		kgo_wg_init(&wg);
		kgo_wg_add(&wg, 2);
		for (i = 0; i < 2; i++) {
			kids[i] = (struct tree_arg){ a->depth - 1, &wg, c };
			if (kgo_go(tree_node, &kids[i], GFP_KERNEL) < 0) {
				atomic_inc(&c->errors);
				kgo_wg_done(&wg);
			}
		}
		kgo_wg_wait(&wg);
	}
	atomic_dec(&c->live);
	kgo_wg_done(a->parent);	/* last: *a is on the parent's stack */
}

static void tree_root(void *arg)
{
	struct kgo_waitgroup wg;
	struct tree_arg root = { TREE_DEPTH, &wg, arg };

	kgo_wg_init(&wg);
	kgo_wg_add(&wg, 1);
	tree_node(&root);
	kgo_wg_wait(&wg);
}

static void kgo_sched_tree_depth_first_test(struct kunit *test)
{
	struct tree_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u64 aged = PSTAT(fresh_aged), kept = PSTAT(fresh_kept);
	int ret, bound;

	KUNIT_ASSERT_NOT_NULL(test, c);
	ret = kgo_test_run_in_g_1p(tree_root, c, LONG_MS);
	KUNIT_ASSERT_EQ(test, ret, 0);
	aged = PSTAT(fresh_aged) - aged;
	kept = PSTAT(fresh_kept) - kept;
	KUNIT_EXPECT_EQ(test, atomic_read(&c->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->live), 0);
	bound = (TREE_DEPTH + 1) * (1 + aged);
	kunit_info(test, "%d nodes started at most at once (bound %d); %llu fresh, %llu aged\n",
		   atomic_read(&c->peak), bound, kept, aged);
	KUNIT_EXPECT_LE(test, atomic_read(&c->peak), bound);
	KUNIT_EXPECT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));
}

/* --- Idle means idle ------------------------------------------------ */

static void kgo_sched_quiesce_test(struct kunit *test)
{
	struct kgo_ext_counts ext;
	struct kgo_sched_snap s;
	int i;

	KUNIT_EXPECT_EQ(test, 0, kgo_test_wait_quiet(LONG_MS));
	for (i = 0; i < kgo_sched.nprocs; i++) {
		struct kgo_pstats *st = &kgo_sched.allp[i]->stats;

		/* To the kernel log: a case's own log holds only 512 bytes. */
		pr_info("P%d: created %llu started %llu finished %llu ticks %llu runnext %llu global %llu\n",
			i, st->gcreated, st->gstarted, st->gfinished, st->schedticks,
			st->runnext_hits, st->globrunq_takes);
		pr_info("P%d: steal tries %llu steals %llu stolen %llu parks %llu readies %llu yields %llu mparks %llu mwakes %llu spinning %llu\n",
			i, st->steal_attempts, st->steals, st->stolen, st->parks,
			st->readies, st->yields, st->mparks, st->mwakes, st->spinning);
	}
	kgo_sched_snapshot(&s);
	kunit_info(test, "Ps %d idle %d Ms %u idle %u spinning %d\n",
		   s.nprocs, s.npidle, s.mcount, s.nmidle, s.nmspinning);
	KUNIT_EXPECT_EQ(test, s.nmspinning, 0);
	KUNIT_EXPECT_EQ(test, s.nmidle, s.mcount);
	KUNIT_EXPECT_EQ(test, s.npidle, s.nprocs);
	/* Every G spawned has finished: nothing leaked in the counters. */
	kgo_sched_ext(&ext);
	KUNIT_EXPECT_EQ(test, PSTAT(gcreated) + ext.created, PSTAT(gfinished));
	KUNIT_EXPECT_EQ(test, PSTAT(gstarted), PSTAT(gfinished));
}

static struct kunit_case kgo_sched_cases[] = {
	KUNIT_CASE(kgo_sched_many_test),
	KUNIT_CASE(kgo_sched_yield_progress_test),
	KUNIT_CASE(kgo_sched_yield_direct_test),
	KUNIT_CASE(kgo_sched_park_direct_test),
	KUNIT_CASE(kgo_sched_park_direct_declined_test),
	KUNIT_CASE(kgo_sched_parallelism_test),
	KUNIT_CASE(kgo_sched_parallelism_after_park_test),
	KUNIT_CASE(kgo_sched_steal_test),
	KUNIT_CASE(kgo_sched_canary_move_test),
	KUNIT_CASE(kgo_sched_trace_frames_test),
	KUNIT_CASE(kgo_sched_stack_reuse_test),
	KUNIT_CASE(kgo_sched_hardirq_ready_test),
	KUNIT_CASE(kgo_sched_softirq_ready_test),
	KUNIT_CASE(kgo_sched_inject_batch_test),
	KUNIT_CASE(kgo_sched_shrinker_test),
	KUNIT_CASE(kgo_sched_stack_pool_test),
	KUNIT_CASE(kgo_sched_gfree_bound_test),
	KUNIT_CASE(kgo_sched_gcache_test),
	KUNIT_CASE(kgo_sched_tree_depth_first_test),
	KUNIT_CASE(kgo_sched_quiesce_test),
	{}
};

static struct kunit_suite kgo_sched_suite = {
	.name = "kgo_sched",
	.test_cases = kgo_sched_cases,
};

kunit_test_suite(kgo_sched_suite);
