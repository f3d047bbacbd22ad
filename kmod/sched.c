// SPDX-License-Identifier: GPL-2.0
/*
 * The kgo scheduler: Go's G-M-P design, in the kernel.
 *
 * Terms
 *
 *   G  a goroutine: a function with its own kernel stack (g.h, stack.c).
 *   M  a kthread bound to one CPU that runs Gs (m.c).
 *   P  one per possible CPU, in use while the CPU is online (procs.c):
 *      the right to run Gs on that CPU, with a local run queue, a
 *      runnext slot, a free-G list and a stack cache (proc.h, runq.c).
 *      Only an M of the P's CPU holds it.
 *
 * An M runs Gs only while it holds its CPU's P. The M's own kthread
 * stack is the scheduler stack (Go's g0): kgo_schedule() loops there,
 * finds a G (kgo_findrunnable) and switches to it (kgo_execute); the G
 * switches back when it yields, parks or exits, and the M acts on that.
 * A yield or park with a local G next that ran before switches straight
 * to it instead (kgo_switch_direct).
 *
 * The core's files, bottom first: each calls only those listed before
 * it and the leaves budget.c, check.c, count.c, floor.c and the
 * tracepoints (tools/callgraph.py checks it in `make style`, and names
 * the few cycles still to break). Above the core, api.c is the
 * goroutine API, and the rest of kmod/ uses both.
 *
 *   stack.c   goroutine stacks and their per-P cache
 *   g.c       G structs, their states and free lists
 *   runq.c    a P's run queues (ring, runnext, fresh stack), the global one
 *   proc.c    P structs
 *   m.c       M kthreads: creation, park and wake, kgo_this_m()
 *   idle.c    idle Ps and idle Ms: wakep()'s slow path, startm, stopm,
 *             handoffp, readiness from outside any P
 *   switch.c  every way a G leaves or enters its stack: kgo_execute(),
 *             the direct switch, park, yield, preemption, exit
 *   sched.c   this essay; findrunnable, spinning and stealing, the M's
 *             loop, newproc and readiness, injection, init and exit
 *   core.c    switch.c and sched.c built as one unit, so that the M's
 *             loop inlines kgo_execute()
 *
 * The one call up out of the core is kgo_feed_started() (feed.h).
 *
 * Approaches not taken
 *
 *  - One kthread per goroutine: a task_struct and a scheduler round
 *    trip per goroutine is what kgo exists to avoid.
 *  - A run queue per CPU under a lock (as workqueues): every spawn and
 *    every wake-up would contend with thieves; Go's lock-free ring lets
 *    the owner work without atomics against itself but one CAS.
 *  - Ms that may take any P, as in Go: a kthread migrating between CPUs
 *    with the P would move the kernel's scheduling under us. Binding
 *    keeps P i on CPU i; a P whose M cannot run it gets another M of
 *    the same CPU (kgo_startm).
 *
 * Where work is looked for (kgo_findrunnable), in Go's order
 *
 *   1. every 61st new time slice, one G from the global queue, so that
 *      two Gs readying each other through runnext cannot starve it;
 *   2. runnext, then the local ring and the newest G of the fresh
 *      stack, whichever was queued first. Gs that never ran, kicked out
 *      of runnext, wait on that stack and run depth first (runq.c).
 *      If a P is idle or an M spins, the older half of the stack first
 *      goes to the ring, for thieves;
 *   3. the global queue (a fair share: size/gomaxprocs + 1);
 *   4. if spinning is allowed, 4 passes over all other busy Ps in a
 *      random order, stealing half of a victim's ring; runnext only on
 *      the last pass;
 *   5. else give the P up and park the M: a spinner first drops out of
 *      nmspinning and looks once more (rule 3); an M that was not
 *      spinning gives its P up and parks in one sched.lock section.
 *
 * Spinning and wake-ups (Go's "worker thread parking/unparking")
 *
 * An M is spinning while it holds a P, has no G and is looking for one
 * (step 4). sched.nmspinning counts them, and is kept at or below half
 * the busy Ps: more thieves than that only burn CPU. The rules:
 *
 *   1. Whoever makes work runnable (kgo_go, kgo_ready, kgo_yield,
 *      overflow to the global queue) calls kgo_wakep() (from a G,
 *      kgo_ready() defers it: rule 5), which starts a spinning M on an
 *      idle P only if no M is spinning: it CASes nmspinning from 0 to 1,
 *      so two producers never both start one.
 *   2. A spinning M that finds a G stops spinning and, if more Gs are
 *      queued, calls kgo_wakep() itself (kgo_resetspinning): the next M
 *      spins up. Work fans out one M at a time, without a thundering
 *      herd.
 *   3. A spinning M that finds nothing gives its P up, and only then
 *      decrements nmspinning and looks at every queue once more, with a
 *      full barrier between the two. A producer that queued work after
 *      the M's last look sees nmspinning at zero (or the M sees the
 *      work): no wake-up is lost in between. Go calls this the
 *      "delicate dance".
 *   4. If kgo_wakep() finds no idle P, it sets sched.needspinning; a
 *      non-spinning M about to give up its P sees it under sched.lock
 *      and spins instead. While it is set and no P is idle, kgo_wakep()
 *      returns after three loads: nothing more can be done, and a yield
 *      or spawn on busy Ps must not take sched.lock to say so again.
 *   5. A G readied by a G (kgo_ready() on a P: a channel hand-off, a
 *      mutex or WaitGroup wake-up) goes to runnext, which its P runs as
 *      soon as the readier switches out. In a hand-off the readier parks
 *      right after, and the wake-up of rule 1 would only call an M of
 *      another CPU over to find nothing and park again (or to split the
 *      pair): a cross-CPU wake-up per message. So that wake-up is
 *      deferred (p->wakep_due, set by the P's owner) and paid only if
 *      the readier goes on instead: at its next channel operation that
 *      does not park, when unlockf declines its park, or, for a readier
 *      that makes no kgo call, by the monitor when the mark outlives a
 *      tick (p->wakeseq; 20 us to 10 ms). Any switch out clears it:
 *      park and exit leave runnext next in line (the 1-in-61 global
 *      take then wakes for it), yield and preemption call kgo_wakep()
 *      themselves; a P handed off with its M blocked (kgo_handoffp),
 *      or taken from a hog (hog.c), goes to an M with its queue. A G
 *      already in runnext that the new one kicks to the ring gets its
 *      wake-up at once. Go wakes every time.
 *
 * Readiness from anywhere
 *
 * kgo_go() and kgo_ready() called from a G put the G on the caller's P
 * (runnext). Called from anywhere else, process context or interrupt,
 * they take sched.lock with interrupts off (kgo_put_outside). With a P
 * idle and an M of its CPU parked, the G goes into that P's queue and
 * the P to that M: the woken M finds it there, without a trip through
 * the global queue or a spinning M. Else the G goes to the global queue,
 * where every P looks, and wakep() follows: a P whose M must first be
 * created, or come back from the kernel, is no place to leave it. P-local
 * state is only ever touched by the M that holds the P, or by whoever
 * took the P off the idle list, under sched.lock, until it hands the P
 * to an M.
 *
 * Blocking, preemption, Ps coming and going (block.c, monitor.c, procs.c)
 *
 * A G that sleeps in the kernel takes its M with it. The M's P is then
 * marked SYSCALL, and the monitor (Go's sysmon) hands it to another M of
 * the CPU after handoff_us; the M that wakes takes it back only if
 * nobody did. The monitor also marks Gs that ran a whole slice, which
 * then yield at their next kgo call (the switch goes to the global
 * queue). An M may therefore come back from a G without a P: every
 * request of kgo_execute() copes, and kgo_schedule() parks such an M.
 * Ps exist for every possible CPU; those of offline CPUs, or beyond
 * kgo_gomaxprocs(), are OFFLINE and on no list.
 *
 * Memory and Ms are bounded
 *
 * A spawn is charged to the memory budget (budget.c) and fails with
 * -ENOMEM unless a struct and one stack still fit; a first run takes its
 * stack within the budget or waits on sched.stackwait, holding nothing,
 * until an exit gives one back (kgo_stackwait_kick). A CPU has at most
 * max_ms_per_cpu Ms: past it, kgo_startm() leaves the P waiting for one
 * of that CPU's Ms to come back (kgo_stopm), and thieves take its queue.
 * Ms are created in one place, each P's newm_work, which checks the cap
 * before each: for a P that wants one, a hog's relief (hog.c), or a
 * spare parked ahead of a handoff or relief (kgo_newm_spare).
 * What that work asks for and the Ms between leaving their P and
 * parking (mtransit) are under sched.lock.
 *
 * Lock order (a DAG):
 *
 *   the CPU hotplug lock -> kgo_procs_lock (procs.c) -> sched.lock
 *   session.lock (session.c)
 *     -> a wait list's lock (e.g. kgo_waitgroup.lock, kgo_ctx.lock:
 *        a sleeper holds its context chain, child first, ctx.c)
 *          -> sched.lock
 *               -> the kernel's rq/pi locks (wake_up_process)
 *   sched.allg_lock, p->stack_lock, kgo_users_lock (user.c): leaves.
 *
 * sched.lock is the one raw spinlock. On PREEMPT_RT, where a spinlock_t
 * sleeps, it is taken where nothing may sleep: by a HARD hrtimer that
 * readies a goroutine (waiter.c), in the sched_in preempt notifier
 * (block.c), and by a G with its P pinned. So what it covers stays
 * short and bounded: O(1) queue and list operations, walks of the Ps
 * or of a bounded batch (half a ring, a P's queues when it stops), and
 * at unload or a reap the idle Ms of one CPU; no allocation, no free,
 * no walk as long as a user's input; and for wake-ups only
 * wake_up_process(), queue_work() and irq_work_queue(), which take raw
 * locks themselves (a wait queue's wake_up() is done after the
 * unlock). Every other lock of kgo's is a spinlock_t or a mutex,
 * sleeping on RT: each comes before sched.lock in the order or beside
 * it, never under it. A spawn where RT allows no allocation takes a G
 * from g.c's reserve.
 *
 * Memory a goroutine costs is charged to its spawner's memory cgroup
 * (memcg.h), and the debugfs views read Ms and Gs under RCU, never
 * holding these locks (debugfs.c).
 */

#include <linux/gcd.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/cpu.h>
#include <kunit/visibility.h>

#include "budget.h"
#include "check.h"
#include "compat.h"
#include "g.h"
#include "feed.h"
#include "floor.h"
#include "gtime.h"
#include "hog.h"
#include "idle.h"
#include "memcg.h"
#include "m.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "stack.h"
#include "stats.h"
#include "switch.h"
#include "trace.h"
/* kgo_execute() is switch.c's, static: core.c builds both files as one. */

#define KGO_STEAL_TRIES		4

struct kgo_sched kgo_sched = {
	.lock = __RAW_SPIN_LOCK_UNLOCKED(kgo_sched.lock),
	.allm = LIST_HEAD_INIT(kgo_sched.allm),
	.allg_lock = __SPIN_LOCK_UNLOCKED(kgo_sched.allg_lock),
	.allg = LIST_HEAD_INIT(kgo_sched.allg),
};
EXPORT_SYMBOL_IF_KUNIT(kgo_sched);

/*
 * Spawns and readies from outside any P (process context, interrupts),
 * counted on the CPU they happen on (A: this_cpu_inc(), read racily by
 * kgo_sched_ext() and kgo_galive()). One atomic in kgo_sched was a line
 * that every CPU's sk_data_ready, timer and thread submission wrote in
 * turn. this_cpu_inc(), not raw: a hardirq's kgo_ready() may interrupt
 * a thread's kgo_go() on the same CPU mid-increment.
 */
static DEFINE_PER_CPU(struct kgo_ext_counts, kgo_ext_counts);

/* Strides coprime with nprocs: the steal order visits every P once. */
static unsigned int kgo_coprimes[NR_CPUS];
static unsigned int kgo_ncoprimes;

static u64 kgo_m_rand(struct kgo_m *m)
{
	/* xorshift64: cheap, and only ever used by its own M */
	m->rand ^= m->rand << 13;
	m->rand ^= m->rand >> 7;
	m->rand ^= m->rand << 17;
	return m->rand;
}

/* --- Spinning ------------------------------------------------------ */

static void kgo_become_spinning(struct kgo_m *m)
{
	m->spinning = true;
	kgo_count(KGO_COUNT_SHARED_RMW);
	atomic_inc(&m->sched->nmspinning);
	/*
	 * Taken up. A full barrier (xchg) before we look for work: a
	 * producer that saw needspinning set and returned early from
	 * kgo_wakep() did so after storing its work and a full barrier, so
	 * either it saw our clear (and asks anew) or we see its work.
	 */
	kgo_count(KGO_COUNT_SHARED_RMW);
	atomic_xchg(&m->sched->needspinning, 0);
	kgo_pstat_inc(m->p, spinning);
}

/* Whether @p is held by an M, running or blocked: worth stealing from. */
static bool kgo_p_busy(struct kgo_p *p)
{
	int st = READ_ONCE(p->status);

	return st == KGO_P_RUNNING || st == KGO_P_SYSCALL;
}

/* Step 4: up to 4 passes over the busy Ps, stealing half a queue. */
static struct kgo_g *kgo_stealwork(struct kgo_m *m)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_p *p = m->p;
	int n = sched->nprocs;
	int i, k;

	for (i = 0; i < KGO_STEAL_TRIES; i++) {
		bool stealnext = i == KGO_STEAL_TRIES - 1;
		u64 r = kgo_m_rand(m);
		unsigned int pos = r % n;
		unsigned int stride = kgo_coprimes[(r >> 32) % kgo_ncoprimes];

		for (k = 0; k < n; k++, pos = (pos + stride) % n) {
			struct kgo_p *p2 = sched->allp[pos];
			struct kgo_g *g;

			if (READ_ONCE(sched->stopping))
				return NULL;
			if (p2 == p || !kgo_p_busy(p2))
				continue;
			g = kgo_runqsteal(p, p2, stealnext);
			if (g)
				return g;
		}
	}
	return NULL;
}

/* Whether some busy P has queued Gs (after Go's checkRunqsNoP). */
static bool kgo_any_runq_busy(struct kgo_sched *sched)
{
	int i;

	for (i = 0; i < sched->nprocs; i++) {
		struct kgo_p *p2 = sched->allp[i];

		if (kgo_p_busy(p2) && !kgo_runqempty(p2))
			return true;
	}
	return false;
}

/* Whether any queue has Gs: a spinner that finds more may wake another. */
static bool kgo_more_work(struct kgo_sched *sched)
{
	return READ_ONCE(sched->runqsize) || kgo_any_runq_busy(sched);
}

/*
 * Rule 2: a spinner that found work lets the next M spin up, if there is
 * more to find. Go wakes one unconditionally; that M then spins, finds
 * nothing and parks: two cross-CPU wake-ups for nothing, each time a
 * lone goroutine is readied from an idle state. The full barrier of the
 * decrement pairs with a producer's in kgo_wakep(): one that queues work
 * after our look sees nmspinning at zero and wakes an M itself.
 */
static void kgo_resetspinning(struct kgo_m *m)
{
	m->spinning = false;
	kgo_count(KGO_COUNT_SHARED_RMW);
	WARN_ON_ONCE(atomic_dec_return(&m->sched->nmspinning) < 0);
	if (kgo_more_work(m->sched))
		kgo_wakep();
}

/* --- Finding work -------------------------------------------------- */

/*
 * A take from the global queue moved more Gs to @p's ring than the one
 * it runs: if a P is idle, start a spinning M to steal them. Else they
 * wait behind the G we run, and a G that never calls kgo (so is never
 * preempted) holds them up for as long as it runs.
 */
static void kgo_wakep_for_batch(struct kgo_p *p)
{
	if (!kgo_runqempty(p) && atomic_read(&p->sched->npidle))
		kgo_wakep();
}

/*
 * Returns the next G for @m to run, parking the M while there is none.
 * Returns NULL only when the M is to exit (module unload).
 */
static struct kgo_g *kgo_findrunnable(struct kgo_m *m, bool *inherit)
{
	struct kgo_sched *sched = m->sched;
	unsigned long flags;
	struct kgo_p *p;
	struct kgo_g *g;
	bool published;
	int busy;

top:
	p = m->p;
	*inherit = false;
	if (READ_ONCE(sched->stopping))
		goto drop;
	if (unlikely(READ_ONCE(p->stopreq))) {
		kgo_p_stop_held(m);
		if (!kgo_stopm(m))
			return NULL;
		goto top;
	}

	/* 1. Fairness: glance at the global queue every 61 slices. */
	if (p->schedtick % KGO_GLOBAL_CHECK == 0 && READ_ONCE(sched->runqsize)) {
		kgo_sched_lock_irqsave(sched, flags);
		g = kgo_globrunqget(sched, p, 1);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		if (g) {
			/* Rule 5: runnext, if any, now waits behind it. */
			kgo_wakep_for_batch(p);
			return g;
		}
	}

	/* 2. Local; a P is idle: let it steal Gs of the fresh stack (runq.c). */
	published = false;
	g = kgo_runqget_sched(p, inherit, &published);
	if (published)
		kgo_wakep();	/* for the half of the fresh stack it published */
	if (g) {
		if (*inherit)
			kgo_pstat_inc(p, runnext_hits);
		return g;
	}

	/* 3. Global. */
	if (READ_ONCE(sched->runqsize)) {
		kgo_sched_lock_irqsave(sched, flags);
		g = kgo_globrunqget(sched, p, 0);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		if (g) {
			kgo_wakep_for_batch(p);
			return g;
		}
	}

	/*
	 * 4. Steal, if fewer than half the busy Ps have a spinning M, and
	 * some P besides ours is busy. An idle P's queues are empty
	 * (kgo_pidleput()), so with every other P idle the four passes
	 * find nothing, for about 250 instructions on each park of a lone
	 * goroutine that sleeps and wakes; Go makes them anyway. Nor does
	 * the M become a spinner for nothing to steal: what a producer
	 * queues meanwhile goes to the global queue, which step 5 reads
	 * under the lock, or to a P that just became busy, whose own M
	 * runs it. An M that is already spinning stays so, and rule 3
	 * below ends its spin as before.
	 */
	busy = READ_ONCE(sched->gomaxprocs) - atomic_read(&sched->npidle);
	if (m->spinning || (busy > 1 && 2 * atomic_read(&sched->nmspinning) < busy)) {
		if (!m->spinning)
			kgo_become_spinning(m);
		if (busy > 1) {
			g = kgo_stealwork(m);
			if (g)
				return g;
		}
	}

drop:
	/* 5. Give the P up: last look at the global queue under the lock. */
	kgo_sched_lock_irqsave(sched, flags);
	if (!sched->stopping && sched->runqsize) {
		g = kgo_globrunqget(sched, p, 0);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		kgo_wakep_for_batch(p);
		return g;
	}
	if (!sched->stopping && !m->spinning && atomic_read(&sched->needspinning)) {
		/* Rule 4: a wakep found no idle P; spin on its behalf. */
		kgo_become_spinning(m);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		goto top;
	}
	kgo_pstat_inc(p, mparks);
	if (!m->spinning) {
		/* Nothing to do between giving the P up and parking: at once. */
		if (!kgo_releasep_stopm(m, flags))
			return NULL;
		goto top;
	}
	kgo_pidleput(sched, kgo_releasep(m));
	m->home->mtransit++;	/* until kgo_stopm() or the recheck below */
	raw_spin_unlock_irqrestore(&sched->lock, flags);

	m->spinning = false;
	/*
	 * Rule 3, the delicate dance: drop nmspinning, then look at
	 * every source of work again. atomic_dec_return() is a full
	 * barrier; it pairs with the producer's queue store followed
	 * by its load of nmspinning in kgo_wakep() (ordered there by
	 * sched.lock for the global queue; a P-local queue has a
	 * running owner that will get to its Gs in any case).
	 */
	kgo_count(KGO_COUNT_SHARED_RMW);
	WARN_ON_ONCE(atomic_dec_return(&sched->nmspinning) < 0);
	if (READ_ONCE(sched->runqsize) || kgo_any_runq_busy(sched)) {
		kgo_sched_lock_irqsave(sched, flags);
		p = sched->stopping ? NULL :
		    kgo_pidleget_spinning(sched, m->home);
		if (p == m->home) {
			m->home->mtransit--;
			/* Our P was idle: a relief of it is void. */
			if (p->wantrelief) {
				p->wantrelief = false;
				p->relief_pending = false;
			}
			raw_spin_unlock_irqrestore(&sched->lock, flags);
			kgo_acquirep(m, p);
			kgo_become_spinning(m);
			goto top;
		}
		if (p) {	/* our P was taken: wake another's M */
			kgo_count(KGO_COUNT_SHARED_RMW);
			atomic_inc(&sched->nmspinning);
			kgo_startm(p, true);
		}
		raw_spin_unlock_irqrestore(&sched->lock, flags);
	}
	if (!kgo_stopm(m))
		return NULL;
	goto top;
}

/*
 * cond_resched() between two Gs, for a kthread that may run Gs back to
 * back. With preemptible RCU it only reschedules, so a test of the flag
 * first saves its call on every switch; else it also reports an RCU
 * quiescent state each time, and is called each time.
 */
static __always_inline void kgo_m_cond_resched(void)
{
	if (!IS_ENABLED(CONFIG_PREEMPT_RCU) || need_resched())
		cond_resched();
}

/**
 * kgo_schedule() - the M's loop (Go's schedule)
 * @m: the calling M, which starts with a P handed to it
 *
 * Returns when the M is to exit.
 */
void kgo_schedule(struct kgo_m *m)
{
	struct kgo_g *g;
	bool inherit;

	switch (kgo_take_nextp(m)) {	/* the P kgo_m_create() gave it */
	case KGO_NEXTP_TAKEN:
		break;
	case KGO_NEXTP_NONE:
		if (kgo_stopm(m))
			break;
		return;
	default:
		return;
	}
	kgo_switch_baseline(m);
	for (;;) {
		/*
		 * Goroutines may run back to back for as long as there are
		 * any: let the kernel run its other tasks (a kthread must,
		 * where preemption is voluntary; else the watchdog fires).
		 */
		kgo_m_cond_resched();
		/* Its G blocked, its P was handed off, and the G came back. */
		if (!m->p && !kgo_m_stop_pless(m))
			break;
		g = kgo_findrunnable(m, &inherit);
		if (!g)
			break;
		if (m->spinning)
			kgo_resetspinning(m);
		kgo_execute(m, g, inherit);
	}
	WARN_ON_ONCE(m->p || m->spinning);
}

/* --- Making Gs runnable -------------------------------------------- */

/*
 * A new goroutine id. A P takes them KGO_GOID_BATCH at a time (Go's
 * goidcache), so that spawning on two CPUs does not bounce goidgen's
 * line: ids stay unique, and are in spawn order only per P.
 */
static u64 kgo_goid_next(struct kgo_sched *sched, struct kgo_p *p)
{
	if (!p) {
		kgo_count(KGO_COUNT_SHARED_RMW);
		return atomic64_inc_return(&sched->goidgen);
	}
	if (p->goidcache == p->goidcacheend) {
		kgo_count(KGO_COUNT_SHARED_RMW);
		p->goidcacheend = atomic64_add_return(KGO_GOID_BATCH, &sched->goidgen) + 1;
		p->goidcache = p->goidcacheend - KGO_GOID_BATCH;
	}
	return p->goidcache++;
}

static struct kgo_g *__kgo_newproc(struct kgo_m *m, struct kgo_gcache *gc,
				   kgo_func_t fn, void *arg, gfp_t gfp);

/**
 * kgo_newproc() - a RUNNABLE G for @fn, not yet queued
 * @fn: the function
 * @arg: its argument
 * @gfp: for the G's struct
 *
 * Context: any. From a G the G comes from the P's free list. The P is
 * taken for each use (kgo_g_p_get()): a fresh allocation may sleep, and
 * the G may then come back to no P, or to another.
 * Return: the G, or an ERR_PTR.
 */
struct kgo_g *kgo_newproc(kgo_func_t fn, void *arg, gfp_t gfp)
{
	return __kgo_newproc(kgo_g_m(), NULL, fn, arg, gfp);
}

/*
 * kgo_newproc() by a caller that has its M, @m = kgo_g_m() (NULL outside
 * a G).
 */
struct kgo_g *kgo_newproc_m(struct kgo_m *m, kgo_func_t fn, void *arg, gfp_t gfp)
{
	return __kgo_newproc(m, NULL, fn, arg, gfp);
}

/*
 * kgo_newproc() by a caller making many: outside any P, its dead Gs come
 * from @gc (g.c: a batch per sched.lock, not one G); on a P, from the
 * P's free list as always. The caller drains @gc when it is done.
 */
struct kgo_g *kgo_newproc_gc(struct kgo_gcache *gc, kgo_func_t fn, void *arg, gfp_t gfp)
{
	return __kgo_newproc(kgo_g_m(), gc, fn, arg, gfp);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_newproc_gc);

/*
 * On a P, nothing shared is written: the budget comes from the P's
 * credit, the id from its cache, the struct from its free list, and the
 * count of live Gs is the P's own counter (kgo_galive()).
 */
static struct kgo_g *__kgo_newproc(struct kgo_m *m, struct kgo_gcache *gc,
				   kgo_func_t fn, void *arg, gfp_t gfp)
{
	struct kgo_sched *sched = &kgo_sched;
	struct mem_cgroup *memcg, *old;
	struct kgo_g *g = NULL;
	struct kgo_p *p;
	bool charged;

	if (READ_ONCE(sched->stopping))
		return ERR_PTR(-ESHUTDOWN);
	/* Nothing new below the admission mark, reused or not (floor.c). */
	if (kgo_floor_below())
		return ERR_PTR(-ENOMEM);
	p = m ? kgo_g_p_get(m) : NULL;
	charged = kgo_budget_spawn(p);
	if (charged)
		g = !p && gc ? kgo_gcache_get(gc) : kgo_g_reuse(p);
	if (p)
		kgo_g_p_put();
	if (!charged)
		return ERR_PTR(-ENOMEM);
	memcg = kgo_memcg_spawner(m ? m->curg->memcg : NULL, m);
	if (!g && kgo_may_not_alloc()) {
		g = kgo_g_reserve_take();	/* PREEMPT_RT, atomic: g.c */
	} else if (!g) {
		old = set_active_memcg(memcg);
		g = kgo_g_alloc(gfp | __GFP_ACCOUNT);
		set_active_memcg(old);
	}
	if (!g) {
		mem_cgroup_put(memcg);
		/* Credits are one budget: any P's, or none, takes it back. */
		p = m ? kgo_g_p_get(m) : NULL;
		kgo_budget_unspawn(p);
		if (p)
			kgo_g_p_put();
		return ERR_PTR(-ENOMEM);
	}
	g->memcg = memcg;
	g->fn = fn;
	g->arg = arg;
	p = m ? kgo_g_p_get(m) : NULL;
	g->goid = kgo_goid_next(sched, p);
	/* Counts the G in kgo_galive(): before it can run, let alone exit. */
	if (p) {
		kgo_pstat_inc(p, gcreated);
		trace_kgo_g_create(g->goid, p->id, fn);
		kgo_g_p_put();
	} else {
		this_cpu_inc(kgo_ext_counts.created);
		trace_kgo_g_create(g->goid, -1, fn);
	}
	kgo_g_stamp_new(g);
	atomic_set(&g->status, KGO_G_RUNNABLE);
	return g;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_newproc);

/*
 * For a batch from outside any P: up to a ring's worth of @q's @n Gs go
 * into an idle P with an M of its CPU parked, this CPU's first (as
 * kgo_put_outside() does for one G), which is then started. An idle P's
 * queue is empty: none of them spills to the global queue.
 * Return: how many it took. Context: sched->lock held.
 */
static u32 kgo_inject_idle_p(struct kgo_sched *sched, struct kgo_gqueue *q, u32 n)
{
	struct kgo_p *p;
	u32 i;

	lockdep_assert_held(&sched->lock);
	if (sched->stopping || !atomic_read(&sched->npidle))
		return 0;
	p = kgo_pidleget_parked_m(sched, raw_cpu_read(kgo_cpu_p));
	if (!p)
		return 0;
	n = min_t(u32, n, KGO_RUNQ_SIZE);
	for (i = 0; i < n; i++)
		kgo_runqput(p, kgo_gqueue_pop(q), false);
	kgo_startm(p, false);
	return n;
}

/**
 * kgo_injectglist() - make a batch of RUNNABLE Gs run (Go's injectglist)
 * @q: the Gs, linked through schedlink; emptied
 * @n: how many
 *
 * From outside a G the batch fills an idle P, this CPU's first
 * (kgo_inject_idle_p()), and a spinning M is woken to steal from it;
 * what does not fit goes to the global queue and up to as many idle Ps
 * are started. From a G, as many as there are idle Ps go global (for
 * them) and the rest to the caller's P.
 *
 * Context: any, hardirq included.
 */
void kgo_injectglist(struct kgo_gqueue *q, u32 n)
{
	struct kgo_sched *sched = &kgo_sched;
	struct kgo_m *m = kgo_g_m();
	struct kgo_p *p = m ? kgo_g_p_get(m) : NULL;
	struct kgo_gqueue glob = {};
	unsigned long flags;
	struct kgo_g *g;
	u32 npidle, nglob;

	if (!n) {
		if (p)
			kgo_g_p_put();
		return;
	}
	if (!p) {
		kgo_sched_lock_irqsave(sched, flags);
		nglob = n - kgo_inject_idle_p(sched, q, n);
		if (nglob)
			kgo_globrunqputbatch(sched, q, nglob);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		if (nglob)
			kgo_start_idle(sched, nglob);
		else if (n > 1)
			kgo_wakep();	/* Rule 1: a spinner may take half */
		return;
	}
	npidle = atomic_read(&sched->npidle);
	for (nglob = 0; nglob < npidle && !kgo_gqueue_empty(q); nglob++)
		kgo_gqueue_push_back(&glob, kgo_gqueue_pop(q));
	if (nglob) {
		kgo_sched_lock_irqsave(sched, flags);
		kgo_globrunqputbatch(sched, &glob, nglob);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		kgo_start_idle(sched, nglob);
	}
	while ((g = kgo_gqueue_pop(q)))
		kgo_runqput(p, g, false);
	kgo_g_p_put();
}
EXPORT_SYMBOL_IF_KUNIT(kgo_injectglist);

/*
 * kgo_ready() by a caller that has its M, @m = kgo_g_m() (NULL outside a
 * G). From a G the readied G goes to runnext: the next G this P runs
 * once the caller switches out, which in a hand-off (a channel, a
 * WaitGroup's last done) it does at once. So no wake-up here: the P is
 * marked instead, and another M is called over only if the caller goes
 * on running (the design essay's rule 5 in sched.c). A G that was in
 * runnext before is kicked to the ring, where it waits behind us: that
 * one gets its wake-up now (none if it went to the fresh stack instead
 * and stayed there, as it does while no P is idle or spinning: runq.c).
 */
int kgo_ready_m(struct kgo_m *m, struct kgo_g *g)
{
	struct kgo_p *p;

	if (!kgo_g_readied(g))
		return -EINVAL;
	p = m ? kgo_g_p_get(m) : NULL;
	trace_kgo_g_ready(g->goid, p ? p->id : -1);
	if (p) {
		bool kicked;

		kgo_pstat_inc(p, readies);
		kicked = kgo_runqput(p, g, true);
		if (kicked)
			kgo_wakep();
		else
			kgo_wakep_defer(p);
		kgo_g_p_put();
	} else {
		this_cpu_inc(kgo_ext_counts.readies);
		kgo_put_outside(g);
	}
	return 0;
}

/* --- Init, exit, statistics ---------------------------------------- */

/**
 * kgo_galive() - goroutines spawned and not yet exited
 * @sched: the scheduler
 *
 * Not one shared counter that every spawn and exit would write: each P
 * counts the spawns of its Gs (gcreated) and the exits on it (gfinished)
 * in its own line, spawns from outside any P go to their CPU's
 * kgo_ext_counts, and this sums them. Exits are read first, then spawns,
 * with a read barrier between: a G's spawn is counted before the G is
 * queued, and its exit after it ran, so whoever reads an exit then reads
 * its spawn (the queue's release and acquire, and the status cmpxchgs,
 * order them; a plain per-CPU increment is ordered by them as the
 * unordered atomic64_inc() it replaced was). So the sum
 * only ever counts too many, by the Gs spawned during the reads: a zero
 * is exact, as kgo_sched_drain() needs. Context: any.
 *
 * Return: the count, never too few.
 */
s64 kgo_galive(struct kgo_sched *sched)
{
	u64 created, finished = 0;
	int i, cpu;

	for (i = 0; i < sched->nprocs; i++)
		finished += READ_ONCE(sched->allp[i]->stats.gfinished);
	/* Exits, then spawns: the writers' side is the queue's, see above. */
	smp_rmb();
	created = 0;
	for_each_possible_cpu(cpu)
		created += READ_ONCE(per_cpu(kgo_ext_counts, cpu).created);
	for (i = 0; i < sched->nprocs; i++)
		created += READ_ONCE(sched->allp[i]->stats.gcreated);
	return created - finished;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_galive);

/**
 * kgo_sched_ext() - spawns and readies from outside any P so far
 * @sum: filled with the totals over every possible CPU (offline ones
 *	 keep what they counted)
 *
 * Racy sums: an event in flight may be missing. Context: any.
 */
void kgo_sched_ext(struct kgo_ext_counts *sum)
{
	int cpu;

	sum->created = 0;
	sum->readies = 0;
	for_each_possible_cpu(cpu) {
		sum->created += READ_ONCE(per_cpu(kgo_ext_counts, cpu).created);
		sum->readies += READ_ONCE(per_cpu(kgo_ext_counts, cpu).readies);
	}
}
EXPORT_SYMBOL_IF_KUNIT(kgo_sched_ext);

void kgo_sched_snapshot(struct kgo_sched_snap *snap)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	int i;

	kgo_sched_lock_irqsave(sched, flags);
	snap->nprocs = sched->gomaxprocs;
	snap->npidle = atomic_read(&sched->npidle);
	snap->nmspinning = atomic_read(&sched->nmspinning);
	snap->mcount = sched->mcount;
	snap->nmidle = 0;
	for (i = 0; i < sched->nprocs; i++)
		snap->nmidle += sched->allp[i]->nmidle;
	snap->runqsize = sched->runqsize;
	snap->galive = kgo_galive(sched);
	raw_spin_unlock_irqrestore(&sched->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_sched_snapshot);

/*
 * Creates a P for every possible CPU, all OFFLINE: procs.c starts those
 * of the online CPUs, up to gomaxprocs, and follows CPU hotplug.
 */
int kgo_sched_init(void)
{
	struct kgo_sched *sched = &kgo_sched;
	int cpu, n = 0, i;

	/* The layout that sched.h's comment on struct kgo_sched explains. */
	BUILD_BUG_ON(IS_ENABLED(CONFIG_SMP) &&
		     offsetof(struct kgo_sched, stopping) / SMP_CACHE_BYTES <=
		     (offsetofend(struct kgo_sched, monitor_waiting) - 1) / SMP_CACHE_BYTES);
	BUILD_BUG_ON(IS_ENABLED(CONFIG_SMP) &&
		     offsetof(struct kgo_sched, npidle) / SMP_CACHE_BYTES <=
		     (offsetofend(struct kgo_sched, monitor) - 1) / SMP_CACHE_BYTES);
	init_waitqueue_head(&sched->pstop_wq);
	INIT_DELAYED_WORK(&sched->stackwait_retry, kgo_stackwait_retry_fn);
	sched->allp = kcalloc(num_possible_cpus(), sizeof(*sched->allp), GFP_KERNEL);
	if (!sched->allp)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct kgo_p *p;

		if (n == num_possible_cpus())
			break;
		p = kgo_p_create(sched, n, cpu);
		if (!p)
			break;
		p->status = KGO_P_OFFLINE;
		INIT_WORK(&p->newm_work, kgo_newm_workfn);
		per_cpu(kgo_cpu_p, cpu) = p;
		sched->allp[n++] = p;
	}
	sched->nprocs = n;
	if (n < num_possible_cpus()) {
		kgo_sched_exit();
		return -ENOMEM;
	}

	kgo_ncoprimes = 0;
	for (i = 1; i <= n; i++)
		if (gcd(i, n) == 1)
			kgo_coprimes[kgo_ncoprimes++] = i;
	return 0;
}

/*
 * Waits, at unload, for the goroutines still alive to end, while the Ms
 * still run. Nobody can start one any more (nothing holds the module),
 * but a task's last goroutine may be between dropping the last session
 * reference, and with it the module's, and its exit: queued, even, after
 * a preemption. Stopping the Ms first would abandon it. One leaked by a
 * kernel user (parked forever) holds unload forever: freeing the Ps and
 * stacks under it would be a use after free. The log names the holders
 * after 10 s, then at doubling intervals (so that a hung unload does not
 * fill the log, nor keep a watchdog on the console from seeing it).
 */
void kgo_sched_drain(void)
{
	unsigned long start = jiffies, next = start + 10 * HZ;
	s64 alive;

	while ((alive = kgo_galive(&kgo_sched)) > 0) {
		if (time_after_eq(jiffies, next)) {
			kgo_g_report_alive(&kgo_sched, alive, (jiffies - start) / HZ);
			next = jiffies + (jiffies - start);
		}
		msleep(time_before(jiffies, start + HZ) ? 1 : 20);
	}
}

/*
 * Stops every M and frees every P. Goroutines still alive at this point
 * are a bug of a user that did not wait for them: they are leaked.
 */
void kgo_sched_exit(void)
{
	struct kgo_sched *sched = &kgo_sched;
	struct kgo_m *m, *tmp;
	LIST_HEAD(allm);
	s64 alive;
	int i;

	kgo_sched_lock_irq(sched);
	sched->stopping = true;
	raw_spin_unlock_irq(&sched->lock);
	/*
	 * No M goes on a midle list once it saw stopping under the lock
	 * (kgo_stopm()); those already there are woken a P at a time, so
	 * that a section of the lock (raw on PREEMPT_RT) walks one CPU's.
	 */
	for (i = 0; i < sched->nprocs; i++) {
		struct kgo_p *p = sched->allp[i];

		kgo_sched_lock_irq(sched);
		list_for_each_entry_safe(m, tmp, &p->midle, idle_node) {
			list_del_init(&m->idle_node);
			p->nmidle--;
			kgo_m_wake(m, NULL, false);
		}
		raw_spin_unlock_irq(&sched->lock);
	}

	for (i = 0; i < sched->nprocs; i++)
		cancel_work_sync(&sched->allp[i]->newm_work);
	cancel_delayed_work_sync(&sched->stackwait_retry);

	/* No M is created after the works are cancelled. */
	kgo_sched_lock_irq(sched);
	list_splice_init(&sched->allm, &allm);
	raw_spin_unlock_irq(&sched->lock);
	list_for_each_entry_safe(m, tmp, &allm, all_node) {
		kthread_stop(m->task);
		put_task_struct(m->task);
	}
	alive = kgo_galive(sched);
	WARN(alive, "kgo: %lld goroutines alive at unload\n", alive);
	/* Nothing runs: every P's credit goes back to the budget. */
	for (i = 0; i < sched->nprocs; i++)
		kgo_budget_flush(sched->allp[i]);

	/*
	 * Stacks may still be looked at by an unwinder (stack.c), and an M
	 * by a kgo_this_m() that read its CPU's hint before the M exited.
	 */
	synchronize_rcu();
	list_for_each_entry_safe(m, tmp, &allm, all_node)
		kfree(m);
	for (i = 0; i < sched->nprocs; i++)
		kgo_p_destroy(sched->allp[i]);
	kgo_g_drain_free(NULL);
	kfree(sched->allp);
	sched->allp = NULL;
	sched->nprocs = 0;
}
