// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_block: goroutines that block in the kernel, on one P
 * (kgo_gomaxprocs(1)) so that no other P can hide a stalled one by
 * stealing.
 *  - a goroutine asleep in the kernel does not stop the other
 *    goroutines of its P: it sleeps until they have made progress, which
 *    they only can on its P if it was handed off; the handoff latency
 *    (block to the P running again) is logged;
 *  - the same with kgo_block_begin/end, which hands off at once;
 *  - kgo_gomaxprocs() stops and restarts Ps with goroutines queued;
 *  - Ms made for handoffs are stopped once idle, one per CPU kept;
 *  - two requests for a spare M, the second before the first's M has
 *    parked, make one;
 *  - a burst of goroutines blocking at once, on every P, is handed off
 *    in full: nothing queued waits for a sleeper to wake;
 *  - inside kgo_block_begin/end a goroutine's kgo calls act as a
 *    thread's (its P may be another M's by then), and a goroutine that
 *    returns inside one leaves no M marked blocking.
 *
 * kgo_sched.lock is a raw spinlock (sched.c, "Lock order"): the cases
 * that look at the scheduler's state take it with raw_spin_lock_irq().
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <kgo.h>
#include "m.h"
#include "monitor.h"
#include "proc.h"
#include "sched.h"
#include "tests/run_g.h"

#define LONG_MS		60000
#define MS		((u64)NSEC_PER_MSEC)

/* Worker steps taken on the blocker's P that wake it up. */
#define BLK_STEPS	100

struct blk_ctx {
	bool annotate;		/* use kgo_block_begin/end */
	atomic_long_t progress;
	long at_start, at_end;	/* progress when the block began and ended */
	u64 block_start, block_end;
	u64 first_after;	/* first worker step after the block began */
	bool blocking, stop, woke, timed_out;
	struct completion stepped;	/* BLK_STEPS steps since the block began */
	struct kgo_waitgroup wg;
};

static void blk_worker(void *arg)
{
	struct blk_ctx *x = arg;

	while (!READ_ONCE(x->stop)) {
		long n = atomic_long_inc_return(&x->progress);

		if (READ_ONCE(x->blocking)) {
			if (!READ_ONCE(x->first_after))
				WRITE_ONCE(x->first_after, ktime_get_ns());
			if (!READ_ONCE(x->woke) && n - READ_ONCE(x->at_start) >= BLK_STEPS) {
				WRITE_ONCE(x->woke, true);
				complete(&x->stepped);
			}
		}
		kgo_yield();
	}
	kgo_wg_done(&x->wg);
}

static void blk_blocker(void *arg)
{
	struct blk_ctx *x = arg;

	/*
	 * Warm up: the first handoff of a boot creates an M, which takes
	 * milliseconds; measure the steady state, with a spare M parked.
	 * The yield gives up the M that lost its P here.
	 */
	if (x->annotate)
		kgo_block_begin();
	msleep(20);
	if (x->annotate)
		kgo_block_end();
	kgo_yield();
	/* Let the workers get going first. */
	while (atomic_long_read(&x->progress) < 100)
		kgo_yield();
	WRITE_ONCE(x->at_start, atomic_long_read(&x->progress));
	x->block_start = ktime_get_ns();
	WRITE_ONCE(x->blocking, true);
	if (x->annotate)
		kgo_block_begin();
	/*
	 * Asleep in the kernel until the workers, on this P only, have
	 * stepped on: they cannot unless the P went to another M. Not a
	 * timed sleep: how soon the P goes is the host's speed, and the
	 * limit only ends a test that failed.
	 */
	x->timed_out = !wait_for_completion_timeout(&x->stepped,
						    msecs_to_jiffies(LONG_MS));
	if (x->annotate)
		kgo_block_end();
	WRITE_ONCE(x->blocking, false);
	x->block_end = ktime_get_ns();
	x->at_end = atomic_long_read(&x->progress);
	WRITE_ONCE(x->stop, true);
	kgo_wg_done(&x->wg);
}

static void blk_run(struct kunit *test, struct blk_ctx *x)
{
	u64 handoffs = KGO_TEST_PSTAT(handoffs);
	int prev = kgo_gomaxprocs(1), i;

	init_completion(&x->stepped);
	kgo_wg_init(&x->wg);
	kgo_wg_add(&x->wg, 3);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_GT(test, kgo_go(blk_worker, x, GFP_KERNEL), 0LL);
	KUNIT_ASSERT_GT(test, kgo_go(blk_blocker, x, GFP_KERNEL), 0LL);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x->wg, 2 * LONG_MS * MS), 0);
	kgo_gomaxprocs(prev);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);

	/* The P's other goroutines ran while the blocker slept. */
	KUNIT_EXPECT_FALSE(test, x->timed_out);
	KUNIT_EXPECT_GE(test, x->at_end - x->at_start, (long)BLK_STEPS);
	KUNIT_EXPECT_GT(test, x->first_after, 0ULL);
	KUNIT_EXPECT_LT(test, x->first_after, x->block_end);
	KUNIT_EXPECT_GT(test, KGO_TEST_PSTAT(handoffs), handoffs);
	pr_info("%s: handoff after %llu us; %ld worker steps during a %llu us block\n",
		x->annotate ? "kgo_block_begin" : "kernel sleep",
		(x->first_after - x->block_start) / 1000,
		x->at_end - x->at_start, (x->block_end - x->block_start) / 1000);
}

static void kgo_block_kernel_sleep_test(struct kunit *test)
{
	struct blk_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	blk_run(test, x);
}

static void kgo_block_annotated_test(struct kunit *test)
{
	struct blk_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->annotate = true;
	blk_run(test, x);
}

/* --- Spare Ms: made for handoffs, stopped once idle ----------------- */

#define SLEEPERS	8

struct reap_ctx {
	struct completion release;
	struct kgo_waitgroup wg;
};

static void reap_sleeper(void *arg)
{
	struct reap_ctx *x = arg;

	/* Each hands its P off at once: the next one needs a new M. */
	kgo_block_begin();
	wait_for_completion(&x->release);
	kgo_block_end();
	kgo_wg_done(&x->wg);
}

/*
 * The sleepers stay asleep until the test has seen the Ms they made
 * (or LONG_MS, a hang): how soon the Ms come is the host's speed, and
 * a sleep of fixed length could end before a slow host made them.
 */
static void kgo_block_reap_test(struct kunit *test)
{
	struct reap_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct kgo_sched_snap s;
	unsigned int peak = 0, bad_nmidle = 0;
	unsigned long end;
	int i, bad = -1;

	KUNIT_ASSERT_NOT_NULL(test, x);
	init_completion(&x->release);
	kgo_wg_init(&x->wg);
	kgo_wg_add(&x->wg, SLEEPERS);
	for (i = 0; i < SLEEPERS; i++)
		if (kgo_go(reap_sleeper, x, GFP_KERNEL) <= 0)
			kgo_wg_done(&x->wg);
	end = jiffies + msecs_to_jiffies(LONG_MS);
	do {
		msleep(10);
		kgo_sched_snapshot(&s);
		peak = max(peak, s.mcount);
	} while (peak <= kgo_sched.nprocs && time_before(jiffies, end));
	complete_all(&x->release);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x->wg, LONG_MS * MS), 0);
	/* More Ms than Ps while they slept... */
	KUNIT_EXPECT_GT(test, peak, (unsigned int)kgo_sched.nprocs);
	/* ...and one per CPU again once m_idle_ms (5 s) has passed. */
	end = jiffies + msecs_to_jiffies(LONG_MS);
	do {
		msleep(500);
		kgo_sched_snapshot(&s);
	} while (s.mcount > kgo_sched.nprocs && time_before(jiffies, end));
	KUNIT_EXPECT_LE(test, s.mcount, (unsigned int)kgo_sched.nprocs);
	/*
	 * ...and that one is parked on every running P's CPU: the next
	 * goroutine, hog relief or handoff there takes it at once.
	 */
	raw_spin_lock_irq(&kgo_sched.lock);
	for (i = 0; i < kgo_sched.nprocs; i++) {
		struct kgo_p *p = kgo_sched.allp[i];

		if (READ_ONCE(p->status) != KGO_P_OFFLINE && p->nmidle != 1 && bad < 0) {
			bad = i;
			bad_nmidle = p->nmidle;
		}
	}
	raw_spin_unlock_irq(&kgo_sched.lock);
	KUNIT_EXPECT_EQ_MSG(test, bad, -1, "P%d has %u Ms parked", bad, bad_nmidle);
	pr_info("Ms: %u while %d goroutines slept in the kernel, %u after\n",
		peak, SLEEPERS, s.mcount);
}

/* --- One spare at a time ------------------------------------------ */

struct spare_ctx {
	struct kgo_p *p;	/* the P the goroutine ran on */
	bool yield;		/* ... and yields until stop */
	bool stop;
	struct kgo_waitgroup wg;
};

static void spare_yielder(void *arg)
{
	struct spare_ctx *x = arg;

	WRITE_ONCE(x->p, kgo_this_m()->home);	/* an M holds its home P only */
	while (x->yield && !READ_ONCE(x->stop))
		kgo_yield();
	kgo_wg_done(&x->wg);
}

/* Runs spare_yielder(); returns once it has recorded its P. */
static int spare_start(struct spare_ctx *x, bool yield)
{
	unsigned long end = jiffies + msecs_to_jiffies(LONG_MS);

	x->p = NULL;
	x->yield = yield;
	x->stop = false;
	kgo_wg_init(&x->wg);
	kgo_wg_add(&x->wg, 1);
	if (kgo_go(spare_yielder, x, GFP_KERNEL) <= 0)
		return -ENOMEM;
	while (!READ_ONCE(x->p) && time_before(jiffies, end))
		msleep(1);
	return READ_ONCE(x->p) ? 0 : -ETIMEDOUT;
}

/*
 * A spare M asked for while the one asked before is still on its way to
 * park is that same spare: two requests, one more M. In the net bench,
 * two hog marks of kgo_echo's accept goroutine 14 ms apart made three
 * Ms on one CPU: the second request came before the first spare parked.
 * The test first waits for the monitor to stop all but one M of the
 * running P's CPU (m_idle_ms, 5 s), then until the yielder's M is the
 * only one and none is parked or parking when it asks. On one P
 * (kgo_gomaxprocs(1)): with another, each yield would wake a spinning M
 * there that may steal the yielder, and the yielder's M would park and
 * void the spare (1 run in 4 of make check, when it was a skip).
 */
static void kgo_block_one_spare_test(struct kunit *test)
{
	struct spare_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	unsigned int before, after, parked, transit;
	u64 mparks = 0;
	cpumask_var_t allowed;
	struct kgo_p *p, *q;
	unsigned long end;
	int i, ret, nprocs, waited;

	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_ASSERT_TRUE(test, alloc_cpumask_var(&allowed, GFP_KERNEL));
	nprocs = kgo_gomaxprocs(1);
	if (nprocs < 0) {
		free_cpumask_var(allowed);
		KUNIT_FAIL(test, "kgo_gomaxprocs(1): %d", nprocs);
		return;
	}
	cpumask_copy(allowed, current->cpus_ptr);
	/* Which P the probe runs on: an idle one, this CPU's first. */
	ret = spare_start(x, false);
	if (!ret)
		ret = kgo_wg_wait_timeout(&x->wg, LONG_MS * MS);
	p = x->p;
	/*
	 * On p's CPU from here: a goroutine spawned from outside goes to
	 * this CPU's P if it is idle (kgo_put_outside()), and the yielder
	 * must run on p. A test thread that moved to the other CPU while
	 * it waited below put it there (q != p, twice in make check).
	 */
	if (!ret && p)
		ret = set_cpus_allowed_ptr(current, cpumask_of(p->cpu));
	if (ret) {
		free_cpumask_var(allowed);
		kgo_gomaxprocs(nprocs);
		KUNIT_FAIL(test, "probe: %d", ret);
		return;
	}
	end = jiffies + msecs_to_jiffies(LONG_MS);
	while (READ_ONCE(p->mcount) > 1 && time_before(jiffies, end))
		msleep(200);

	ret = spare_start(x, true);
	q = x->p;
	/*
	 * Until the yielder's M is the CPU's only one, and no M of it is
	 * parked or on its way to park (the probe's may still be).
	 */
	end = jiffies + msecs_to_jiffies(LONG_MS);
	for (;;) {
		raw_spin_lock_irq(&kgo_sched.lock);
		before = p->mcount;
		parked = p->nmidle;
		transit = p->mtransit;
		raw_spin_unlock_irq(&kgo_sched.lock);
		if ((before == 1 && !parked && !transit) || !time_before(jiffies, end))
			break;
		msleep(1);
	}
	if (!ret && q == p && before == 1 && !parked && !transit) {
		mparks = READ_ONCE(p->stats.mparks);
		for (i = 0; i < 2; i++) {
			raw_spin_lock_irq(&kgo_sched.lock);
			kgo_newm_spare(p);
			raw_spin_unlock_irq(&kgo_sched.lock);
			/* Made and woken, most likely not yet parked. */
			flush_work(&p->newm_work);
		}
		/*
		 * It parks: however long a busy host takes. Then a grace
		 * in which a second M, the bug, would show; a slow host
		 * can only make that grace short of catching it.
		 */
		end = jiffies + msecs_to_jiffies(LONG_MS);
		for (;;) {
			raw_spin_lock_irq(&kgo_sched.lock);
			parked = p->nmidle;
			transit = p->mtransit;
			raw_spin_unlock_irq(&kgo_sched.lock);
			if ((parked && !transit) || !time_before(jiffies, end))
				break;
			msleep(1);
		}
		msleep(200);
	}
	raw_spin_lock_irq(&kgo_sched.lock);
	after = p->mcount;
	parked = p->nmidle;
	mparks = READ_ONCE(p->stats.mparks) - mparks;
	raw_spin_unlock_irq(&kgo_sched.lock);
	WRITE_ONCE(x->stop, true);
	set_cpus_allowed_ptr(current, allowed);
	free_cpumask_var(allowed);
	waited = kgo_wg_wait_timeout(&x->wg, LONG_MS * MS);
	kgo_gomaxprocs(nprocs);
	KUNIT_ASSERT_EQ(test, waited, 0);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_PTR_EQ(test, q, p);
	/*
	 * One M made by the two requests, and it is the one parked: the
	 * yielder's M never runs out of work on the only P. The counts
	 * say which it was if not: no M made with parks of the CPU's Ms
	 * meanwhile is a voided spare, none without is a lost request.
	 */
	if (after != before + 1 || parked != 1)
		KUNIT_FAIL(test, "P%d's CPU: %u Ms, %u on their way before the requests, %u Ms, %u parked after; %llu parks of its Ms meanwhile",
			   p->id, before, transit, after, parked, mparks);
	pr_info("Ms of P%d's CPU: %u, then %u after two spare requests\n",
		p->id, before, after);
}

/* --- A burst of blocks: every blocked P is handed off ------------- */

#define BURST_BLOCKERS	8
#define BURST_NOPS	96

struct burst {
	u64 spawned;
	u64 slept_from[BURST_BLOCKERS];
	u64 nop_ran[BURST_NOPS];
	atomic_t next_blocker, next_nop;
	struct completion release;
	struct kgo_waitgroup wg;
};

/* Asleep in the kernel, unannotated, until the test releases it. */
static void burst_blocker(void *arg)
{
	struct burst *b = arg;
	int i = atomic_inc_return(&b->next_blocker) - 1;

	b->slept_from[i] = ktime_get_ns();
	wait_for_completion(&b->release);
	kgo_wg_done(&b->wg);
}

static void burst_nop(void *arg)
{
	struct burst *b = arg;

	b->nop_ran[atomic_inc_return(&b->next_nop) - 1] = ktime_get_ns();
	kgo_wg_done(&b->wg);
}

/* From a goroutine: the burst goes to its P's queue, thieves take half. */
static void burst_spawn(void *arg)
{
	struct burst *b = arg;
	int i, k;

	b->spawned = ktime_get_ns();
	for (i = 0; i < BURST_BLOCKERS; i++) {
		if (kgo_go(burst_blocker, b, GFP_KERNEL) < 0)
			kgo_wg_done(&b->wg);
		for (k = 0; k < BURST_NOPS / BURST_BLOCKERS; k++)
			if (kgo_go(burst_nop, b, GFP_KERNEL) < 0)
				kgo_wg_done(&b->wg);
	}
}

/*
 * The mix: 8 goroutines that sleep in the kernel, among 96 that
 * do nothing, on every P. Each M that blocks loses its P to another M,
 * so the 8 sleep at once, and no goroutine waits for a sleeper to wake.
 * Judged on order, not time: the sleepers sleep until every goroutine
 * of the burst has run, which only handoffs allow; without them the
 * goroutines queued behind a sleeper never run, and LONG_MS (a hang)
 * ends the test. How fast the P comes back is fair_block_nop_p99 of
 * make bench.
 */
static void kgo_block_burst_test(struct kunit *test)
{
	struct burst *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	u64 last_sleep = 0, last_nop = 0, released;
	u64 handoffs = KGO_TEST_PSTAT(handoffs);
	unsigned long end;
	int i, blockers, nops;

	KUNIT_ASSERT_NOT_NULL(test, b);
	init_completion(&b->release);
	kgo_wg_init(&b->wg);
	kgo_wg_add(&b->wg, BURST_BLOCKERS + BURST_NOPS);
	if (kgo_test_run_in_g(burst_spawn, b, LONG_MS)) {
		complete_all(&b->release);
		KUNIT_FAIL(test, "the spawning goroutine did not run");
		kgo_wg_wait_timeout(&b->wg, LONG_MS * MS);
		return;
	}
	/*
	 * Until every blocker sleeps, every nop ran, and every blocked P
	 * was handed off. A P whose M blocked with nothing queued, while
	 * another P idles, is left to it for up to 10 ms (kgo_retake(),
	 * Go's retake): released sooner, that last blocker was never
	 * handed off, and the count fell one short on a slow guest.
	 */
	end = jiffies + msecs_to_jiffies(LONG_MS);
	do {
		msleep(10);
		blockers = atomic_read(&b->next_blocker);
		nops = atomic_read(&b->next_nop);
	} while ((blockers < BURST_BLOCKERS || nops < BURST_NOPS ||
		  KGO_TEST_PSTAT(handoffs) - handoffs < BURST_BLOCKERS) &&
		 time_before(jiffies, end));
	released = ktime_get_ns();
	complete_all(&b->release);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&b->wg, LONG_MS * MS), 0);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
	/* All 8 asleep at once, and nothing waited for a sleeper to wake. */
	KUNIT_EXPECT_EQ_MSG(test, blockers, BURST_BLOCKERS,
			    "%d of %d nops ran while %d blockers slept",
			    nops, BURST_NOPS, blockers);
	KUNIT_EXPECT_EQ(test, nops, BURST_NOPS);
	KUNIT_EXPECT_GE(test, KGO_TEST_PSTAT(handoffs) - handoffs, (u64)BURST_BLOCKERS);
	for (i = 0; i < BURST_BLOCKERS; i++)
		last_sleep = max(last_sleep, b->slept_from[i]);
	for (i = 0; i < BURST_NOPS; i++)
		last_nop = max(last_nop, b->nop_ran[i]);
	pr_info("burst: last of %d blockers asleep %llu us, last of %d nops ran %llu us after the spawn; released at %llu us\n",
		BURST_BLOCKERS, (last_sleep - b->spawned) / 1000, BURST_NOPS,
		(last_nop - b->spawned) / 1000, (released - b->spawned) / 1000);
}

/* --- kgo_gomaxprocs ------------------------------------------------ */

#define PROCS_GS	2000

struct procs_ctx {
	atomic_t ran;
	struct kgo_waitgroup wg;
};

static void procs_body(void *arg)
{
	struct procs_ctx *x = arg;
	int i;

	for (i = 0; i < 3; i++)
		kgo_yield();
	atomic_inc(&x->ran);
	kgo_wg_done(&x->wg);
}

/*
 * From a goroutine: its own P may be the one that stops. Then inside the
 * goroutine's own kgo_block_begin/end, which kgo_gomaxprocs() must
 * neither nest (a WARN) nor end early.
 */
static void procs_from_g(void *arg)
{
	int *r = arg;

	r[0] = kgo_gomaxprocs(1);
	r[1] = kgo_gomaxprocs(0);
	r[2] = kgo_gomaxprocs(r[0]);
	r[3] = kgo_gomaxprocs(0);
	kgo_block_begin();
	r[4] = kgo_gomaxprocs(1);
	r[5] = kgo_gomaxprocs(r[4]);
	r[6] = kgo_this_m()->blocking;	/* still inside ours */
	kgo_block_end();
}

static void kgo_block_gomaxprocs_test(struct kunit *test)
{
	struct procs_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	int all = kgo_gomaxprocs(0), i, offline = 0;
	struct kgo_sched_snap s;
	int r[7];

	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_ASSERT_GE(test, all, 1);
	kgo_wg_init(&x->wg);
	kgo_wg_add(&x->wg, PROCS_GS);
	/* Change the Ps while goroutines are queued and yielding. */
	for (i = 0; i < PROCS_GS; i++) {
		KUNIT_ASSERT_GT(test, kgo_go(procs_body, x, GFP_KERNEL), 0LL);
		if (i == PROCS_GS / 2)
			KUNIT_EXPECT_EQ(test, kgo_gomaxprocs(1), all);
	}
	KUNIT_EXPECT_EQ(test, kgo_gomaxprocs(0), 1);
	kgo_sched_snapshot(&s);
	KUNIT_EXPECT_EQ(test, s.nprocs, 1);
	for (i = 0; i < kgo_sched.nprocs; i++)
		offline += READ_ONCE(kgo_sched.allp[i]->status) == KGO_P_OFFLINE;
	KUNIT_EXPECT_EQ(test, offline, kgo_sched.nprocs - 1);
	KUNIT_EXPECT_EQ(test, kgo_gomaxprocs(all), 1);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x->wg, LONG_MS * MS), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->ran), PROCS_GS);
	KUNIT_EXPECT_EQ(test, kgo_gomaxprocs(0), all);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);

	KUNIT_ASSERT_EQ(test, kgo_test_run_in_g(procs_from_g, r, LONG_MS), 0);
	KUNIT_EXPECT_EQ(test, r[0], all);
	KUNIT_EXPECT_EQ(test, r[1], 1);
	KUNIT_EXPECT_EQ(test, r[2], 1);
	KUNIT_EXPECT_EQ(test, r[3], all);
	KUNIT_EXPECT_EQ(test, r[4], all);
	KUNIT_EXPECT_EQ(test, r[5], 1);
	KUNIT_EXPECT_EQ(test, r[6], 1);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
}

/*
 * kgo_block_end() against the sched_in notifier: a preemption inside it
 * once ran two exitsyscalls at once, which crashed (a NULL P) or left a
 * P RUNNING for an M that had parked without it, so that nothing ran
 * again. gomaxprocs from a goroutine blocks and unblocks four times a
 * round, with a P coming and going under it; the window is a few
 * instructions wide, so many rounds (one in ~100 hit it under KASAN).
 */
#define END_RACE_ROUNDS	1000

static void end_race_g(void *arg)
{
	int *left = arg, r[7];

	for (; *left; (*left)--)
		procs_from_g(r);
}

static void kgo_block_end_race_test(struct kunit *test)
{
	int left = END_RACE_ROUNDS;

	KUNIT_ASSERT_EQ(test, kgo_test_run_in_g(end_race_g, &left, LONG_MS), 0);
	KUNIT_EXPECT_EQ(test, left, 0);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
}

/* --- kgo calls inside kgo_block_begin/end --------------------------- */

#define INSIDE_GS	64
#define INSIDE_NS	(10000 * MS)

struct inside_ctx {
	struct kgo_waitgroup wg;
	struct kgo_chan *c;
	atomic_t ran;
	struct kgo_g *self, *self_inside;
	int spawned, park, recvd, sum, wait;
};

static void inside_child(void *arg)
{
	struct inside_ctx *x = arg;
	int one = 1;

	atomic_inc(&x->ran);
	/* Parks until the thread-like receiver below takes it. */
	if (!kgo_chan_send(x->c, &one, INSIDE_NS))
		kgo_wg_done(&x->wg);
}

static bool inside_no_park(struct kgo_g *g, void *arg)
{
	return false;
}

/*
 * On one P, which kgo_block_begin() hands to another M at once: had the
 * G kept using it (spawning onto its queue, parking into the M loop),
 * two Ms would run one P; kgo_g_p_get() warns of that on debug kernels.
 */
static void inside_g(void *arg)
{
	struct inside_ctx *x = arg;
	int i, v;
	bool ok;

	x->self = kgo_self();
	kgo_block_begin();
	x->self_inside = kgo_self();
	for (i = 0; i < INSIDE_GS; i++)
		x->spawned += kgo_go(inside_child, x, GFP_KERNEL) > 0;
	kgo_yield();
	x->park = kgo_park(inside_no_park, NULL);
	for (i = 0; i < INSIDE_GS; i++) {
		v = 0;
		if (!kgo_chan_recv(x->c, &v, &ok, INSIDE_NS) && ok) {
			x->recvd++;
			x->sum += v;
		}
	}
	x->wait = kgo_wg_wait_timeout(&x->wg, INSIDE_NS);
	kgo_block_end();
}

static void left_open_g(void *arg)
{
	kgo_block_begin();
}

static bool kgo_test_any_m_blocking(void)
{
	struct kgo_sched *sched = &kgo_sched;
	struct kgo_m *m;
	bool any = false;

	raw_spin_lock_irq(&sched->lock);
	list_for_each_entry(m, &sched->allm, all_node)
		any |= READ_ONCE(m->blocking);
	raw_spin_unlock_irq(&sched->lock);
	return any;
}

static void kgo_block_calls_inside_test(struct kunit *test)
{
	struct inside_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	int round;

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->c = kgo_chan_create(sizeof(int), 0, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x->c);
	kgo_gomaxprocs(1);
	for (round = 0; round < 3; round++) {
		kgo_wg_init(&x->wg);
		kgo_wg_add(&x->wg, INSIDE_GS);
		atomic_set(&x->ran, 0);
		x->spawned = 0;
		x->recvd = 0;
		x->sum = 0;
		x->park = 1;
		x->wait = 1;
		KUNIT_ASSERT_EQ(test, kgo_test_run_in_g(inside_g, x, LONG_MS), 0);
		KUNIT_EXPECT_NOT_NULL(test, x->self);
		KUNIT_EXPECT_PTR_EQ(test, x->self_inside, x->self);
		KUNIT_EXPECT_EQ(test, x->spawned, INSIDE_GS);
		KUNIT_EXPECT_EQ(test, x->park, -EPERM);
		KUNIT_EXPECT_EQ(test, x->recvd, INSIDE_GS);
		KUNIT_EXPECT_EQ(test, x->sum, INSIDE_GS);
		KUNIT_EXPECT_EQ(test, x->wait, 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&x->ran), INSIDE_GS);
	}
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
	KUNIT_EXPECT_EQ(test, kgo_chan_destroy(x->c), 0);

	/* Returning inside a block ends it. */
	KUNIT_ASSERT_EQ(test, kgo_test_run_in_g(left_open_g, NULL, LONG_MS), 0);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(LONG_MS), 0);
	KUNIT_EXPECT_FALSE(test, kgo_test_any_m_blocking());
}

static struct kunit_case kgo_block_cases[] = {
	KUNIT_CASE(kgo_block_kernel_sleep_test),
	KUNIT_CASE(kgo_block_annotated_test),
	KUNIT_CASE(kgo_block_gomaxprocs_test),
	KUNIT_CASE(kgo_block_end_race_test),
	KUNIT_CASE(kgo_block_reap_test),
	KUNIT_CASE(kgo_block_one_spare_test),
	KUNIT_CASE(kgo_block_burst_test),
	KUNIT_CASE(kgo_block_calls_inside_test),
	{}
};

static struct kunit_suite kgo_block_suite = {
	.name = "kgo_block",
	.init = kgo_test_procs_init,
	.exit = kgo_test_procs_exit,
	.test_cases = kgo_block_cases,
};

kunit_test_suite(kgo_block_suite);
