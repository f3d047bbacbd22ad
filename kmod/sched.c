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
 * to it instead (kgo_switch_direct, below kgo_schedule).
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
 *   5. else give the P up and park the M.
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
#include "g.h"
#include "feed.h"
#include "floor.h"
#include "gtime.h"
#include "hog.h"
#include "memcg.h"
#include "m.h"
#include "monitor.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "stack.h"
#include "stats.h"
#include "switch.h"
#include "trace.h"

#define KGO_STEAL_TRIES		4
#define KGO_GLOBAL_CHECK	61
/* After a failed stack allocation, a waiting G tries again this much later. */
#define KGO_STACKWAIT_RETRY_MS	100

struct kgo_sched kgo_sched = {
	.lock = __SPIN_LOCK_UNLOCKED(kgo_sched.lock),
	.allm = LIST_HEAD_INIT(kgo_sched.allm),
	.allg_lock = __SPIN_LOCK_UNLOCKED(kgo_sched.allg_lock),
	.allg = LIST_HEAD_INIT(kgo_sched.allg),
};
EXPORT_SYMBOL_IF_KUNIT(kgo_sched);

/* Each CPU's P, for wake-ups that prefer the CPU they come from. */
static DEFINE_PER_CPU(struct kgo_p *, kgo_cpu_p);

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

/* --- Idle Ps ------------------------------------------------------- */

/* Context: sched->lock held. The P must have an empty run queue. */
void kgo_pidleput(struct kgo_sched *sched, struct kgo_p *p)
{
	lockdep_assert_held(&sched->lock);
	WARN_ON_ONCE(!kgo_runqempty_all(p) || p->m);
	WRITE_ONCE(p->status, KGO_P_IDLE);
	p->idle_since = jiffies;
	p->link = sched->pidle;
	sched->pidle = p;
	atomic_inc(&sched->npidle);
}

/*
 * Takes an idle P off the list, @prefer if it is idle, else the most
 * recently idled one (warmest caches). Context: sched->lock held.
 */
static struct kgo_p *kgo_pidleget(struct kgo_sched *sched, struct kgo_p *prefer)
{
	struct kgo_p **pp = &sched->pidle, *p;

	lockdep_assert_held(&sched->lock);
	if (prefer && READ_ONCE(prefer->status) == KGO_P_IDLE) {
		while (*pp != prefer)
			pp = &(*pp)->link;
	}
	p = *pp;
	if (!p)
		return NULL;
	*pp = p->link;
	p->link = NULL;
	p->idle_ns += jiffies_to_nsecs(jiffies - p->idle_since);
	WRITE_ONCE(p->status, KGO_P_RUNNING);
	atomic_dec(&sched->npidle);
	/* A P is busy again: the monitor has something to watch. */
	if (sched->monitor_waiting) {
		sched->monitor_waiting = false;
		kgo_monitor_wake_busy();
	}
	return p;
}

/* @p itself if it is idle, else NULL. Context: sched->lock held. */
struct kgo_p *kgo_pidleget_exact(struct kgo_sched *sched, struct kgo_p *p)
{
	lockdep_assert_held(&sched->lock);
	if (READ_ONCE(p->status) != KGO_P_IDLE)
		return NULL;
	return kgo_pidleget(sched, p);
}

/*
 * An idle P with an M of its CPU parked, @prefer if it qualifies, else
 * the list's head if it does; NULL otherwise. For a G handed to the P
 * itself: with no M parked, kgo_startm() would leave the P (and the G
 * on it) waiting for an M to be created, or, at max_ms_per_cpu, for one
 * to come back from the kernel, while busy Ps steal only once their own
 * queues run dry. Such a G belongs on the global queue, where every P
 * looks. Context: sched->lock held.
 */
static struct kgo_p *kgo_pidleget_parked_m(struct kgo_sched *sched,
					   struct kgo_p *prefer)
{
	lockdep_assert_held(&sched->lock);
	if (prefer && READ_ONCE(prefer->status) == KGO_P_IDLE && prefer->nmidle)
		return kgo_pidleget(sched, prefer);
	if (sched->pidle && sched->pidle->nmidle)
		return kgo_pidleget(sched, sched->pidle);
	return NULL;
}

/* As kgo_pidleget(), for a P that will spin: no P sets needspinning. */
static struct kgo_p *kgo_pidleget_spinning(struct kgo_sched *sched,
					   struct kgo_p *prefer)
{
	struct kgo_p *p = kgo_pidleget(sched, prefer);

	if (!p)
		atomic_set(&sched->needspinning, 1);
	return p;
}

/* --- Starting Ms --------------------------------------------------- */

/**
 * kgo_startm() - get an M of @p's CPU running @p
 * @p: a P just taken off the idle list
 * @spinning: the M starts spinning; the caller counted it in nmspinning
 *
 * Wakes an idle M of that CPU. With none idle, asks for one: an M of
 * that CPU about to park takes the P instead (kgo_stopm), or else a
 * worker creates a new M, up to max_ms_per_cpu; past it the P waits for
 * one of its CPU's Ms to come back. Never sleeps.
 *
 * Context: sched->lock held.
 */
void kgo_startm(struct kgo_p *p, bool spinning)
{
	struct kgo_m *m;

	lockdep_assert_held(&p->sched->lock);
	m = list_first_entry_or_null(&p->midle, struct kgo_m, idle_node);
	if (m) {
		list_del_init(&m->idle_node);
		p->nmidle--;
		kgo_m_wake(m, p, spinning);
		return;
	}
	WARN_ON_ONCE(p->wantm);
	p->wantm = true;
	p->wantm_spinning = spinning;
	/* An M of this CPU on its way to park will take it in kgo_stopm(). */
	if (p->mtransit)
		return;
	if (p->mcount < kgo_max_ms) {
		queue_work(system_unbound_wq, &p->newm_work);
		return;
	}
	/*
	 * max_ms_per_cpu: every M of this CPU runs or is blocked in the
	 * kernel. The first to come back takes the P (kgo_stopm()), and the
	 * other Ps' Ms steal its queue meanwhile. Without this cap a handoff
	 * that left the P idle, then new work, made one more M each time:
	 * BLOCK tasks every 11 ms grew hundreds of Ms per CPU. A spinning M
	 * the waker counted is not coming: undo it, or no wakep() would
	 * start a spinner until one did.
	 */
	if (spinning) {
		p->wantm_spinning = false;
		atomic_dec(&p->sched->nmspinning);
	}
}

/**
 * kgo_newm_spare() - have a spare M of @p's CPU created, parked
 * @p: a P whose CPU may have no M left parked: its G was just marked for
 *     running a whole slice (hog.c), an M of its CPU was just woken to
 *     relieve a hog on it (hog.c), or to take it from a blocked M
 *     (block.c)
 *
 * A burst of goroutines that block in the kernel (8 BLOCK tasks among
 * NOPs) blocks one M after another on each CPU: each handoff needs a
 * parked M, and without one the P waits for kgo_newm_workfn() to create
 * it, a kthread_create() through kthreadd that every CPU's creations
 * queue for. On the debug kernel under TCG that is some 5 ms each, and
 * the handoffs of the burst came one at a time, that far apart, while
 * the goroutines queued behind the blocked ones waited. Go's newm is a
 * clone() on the spot. The same wait made the first hog after loading
 * keep its P for several slices: its relief was the CPU's first M beyond
 * the one running. So each of those asks for one more M ahead of the
 * need, created while the Ms run; it parks at once (kgo_stopm() hands
 * it the P if an M is wanted by then) and the monitor stops it after
 * m_idle_ms if none needed it, keeping one parked per CPU. Plain
 * wake-ups (kgo_startm()) ask for none: a server whose goroutines
 * switch often keeps to the Ms it runs, at most two per CPU.
 * Within max_ms_per_cpu: kgo_newm_workfn() checks the cap before each
 * creation.
 *
 * Context: sched->lock held.
 */
void kgo_newm_spare(struct kgo_p *p)
{
	lockdep_assert_held(&p->sched->lock);
	/* One parked, or on its way to park (a spare just made, say), is it. */
	if (p->nmidle || p->mtransit || p->wantspare || p->sched->stopping ||
	    p->mcount + p->wantm + 1 > kgo_max_ms)
		return;
	p->wantspare = true;
	queue_work(system_unbound_wq, &p->newm_work);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_newm_spare);

/*
 * Creates the Ms @p's CPU is waiting for, one at a time: for a P that
 * kgo_startm() could not find one for (wantm), to relieve the P of a
 * hog (wantrelief, hog.c), or a spare (wantspare, kgo_newm_spare()).
 * The first two never wait at once for long: wantm is for a P that no
 * M holds, so a relief asked while the P was still held is void by
 * then.
 *
 * The cap: Ms of a CPU are created only here, and a work item never
 * runs twice at once, so checking p->mcount against max_ms_per_cpu
 * under sched.lock before each creation (kgo_m_create() counts the new
 * M under it too) bounds them exactly, whatever the requests assumed.
 */
static void kgo_newm_workfn(struct work_struct *work)
{
	struct kgo_p *p = container_of(work, struct kgo_p, newm_work);
	struct kgo_sched *sched = p->sched;
	enum { NEWM_NONE, NEWM_WANTM, NEWM_RELIEF, NEWM_SPARE } what;
	bool spinning = false;
	unsigned long flags;
	int ret;

again:
	what = NEWM_NONE;
	spin_lock_irqsave(&sched->lock, flags);
	if (sched->stopping) {
		/* kgo_sched_exit() cancels us and stops every M. */
	} else if (p->wantm && p->mcount >= kgo_max_ms) {
		/*
		 * At the cap, as in kgo_startm(): the P waits for an M of
		 * its CPU to come back (kgo_stopm()); a spinner counted for
		 * it is not coming. A relief or a spare is void.
		 */
		if (p->wantm_spinning) {
			p->wantm_spinning = false;
			atomic_dec(&sched->nmspinning);
		}
		p->wantrelief = false;
		p->relief_pending = false;
		p->wantspare = false;
	} else if (p->wantm) {
		p->wantm = false;
		spinning = p->wantm_spinning;
		if (p->wantrelief) {
			p->wantrelief = false;
			p->relief_pending = false;
		}
		what = NEWM_WANTM;
	} else if (p->wantrelief && p->mtransit) {
		/*
		 * An M of the CPU went on its way to park since the relief
		 * was asked: it takes it in kgo_stopm(). A spare asked too
		 * is void, that M being one.
		 */
		p->wantspare = false;
	} else if (p->wantrelief) {
		struct kgo_m *spare = list_first_entry_or_null(&p->midle, struct kgo_m,
							       idle_node);

		p->wantrelief = false;
		if (spare) {
			/*
			 * The spare the hog's mark asked for (kgo_hog_prepare())
			 * was still on its way when the relief was asked, and
			 * has parked since: it is the relief, as in
			 * kgo_hog_relieve(). Another M would be a third on the
			 * CPU.
			 */
			list_del_init(&spare->idle_node);
			p->nmidle--;
			spare->nextp_relief = true;
			kgo_m_wake(spare, p, false);
		} else if (p->mcount < kgo_max_ms) {
			what = NEWM_RELIEF;
		} else {
			p->relief_pending = false;	/* the hog keeps it */
		}
	} else if (p->wantspare) {
		p->wantspare = false;
		/*
		 * Void if an M of the CPU parked since it was asked, or is
		 * on its way to: a spare is one M parked ahead of the need,
		 * not one more. (Two marks 14 ms apart, the second while
		 * the first one's spare was still starting, made three Ms
		 * on one CPU under issue 17's 10,000 connections.)
		 */
		if (p->mcount < kgo_max_ms && !p->nmidle && !p->mtransit)
			what = NEWM_SPARE;
	}
	spin_unlock_irqrestore(&sched->lock, flags);
	if (what == NEWM_NONE)
		return;

	ret = kgo_m_create(p, what == NEWM_SPARE ? NULL : p, spinning,
			   what == NEWM_RELIEF);
	if (!ret)
		goto again;	/* more may have been asked meanwhile */
	/* No M for now: undo, and leave the work to the other Ps. */
	pr_warn_ratelimited("cannot start an M on CPU %d: %d\n", p->cpu, ret);
	spin_lock_irqsave(&sched->lock, flags);
	if (what == NEWM_RELIEF) {
		p->relief_pending = false;	/* the monitor may ask again */
	} else if (what == NEWM_WANTM) {
		if (spinning)
			atomic_dec(&sched->nmspinning);
		kgo_pidleput(sched, p);
	}
	spin_unlock_irqrestore(&sched->lock, flags);
}

/*
 * kgo_wakep() past its checks (sched.h): no M spins and an idle P may
 * take one. Only the caller that moves nmspinning 0 -> 1 goes on.
 */
void kgo_wakep_slow(struct kgo_sched *sched)
{
	unsigned long flags;
	struct kgo_p *p;

	if (atomic_cmpxchg(&sched->nmspinning, 0, 1))
		return;
	spin_lock_irqsave(&sched->lock, flags);
	/*
	 * This CPU's own P first, if idle: work readied from an interrupt
	 * or a thread here then runs here, without waking another CPU.
	 */
	p = READ_ONCE(sched->stopping) ? NULL :
	    kgo_pidleget_spinning(sched, raw_cpu_read(kgo_cpu_p));
	if (p)
		kgo_startm(p, true);
	else
		atomic_dec(&sched->nmspinning);
	spin_unlock_irqrestore(&sched->lock, flags);
}

/**
 * kgo_put_outside() - make RUNNABLE @g run, from outside any P
 * @g: a RUNNABLE G, on no queue
 *
 * See "Readiness from anywhere" above. The idle P preferred is this
 * CPU's, so that a G readied by an interrupt runs where it came.
 *
 * Context: any, hardirq included; not on an M that holds a P.
 */
void kgo_put_outside(struct kgo_g *g)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	struct kgo_p *p = NULL;

	spin_lock_irqsave(&sched->lock, flags);
	if (!sched->stopping && atomic_read(&sched->npidle))
		p = kgo_pidleget_parked_m(sched, raw_cpu_read(kgo_cpu_p));
	if (p) {
		/*
		 * Ours until kgo_startm() hands it over: no M holds it. An
		 * idle P's queue is empty, so this never spills to the
		 * global queue (which would take sched.lock again). The
		 * ring, not runnext: a G from outside starts a new time
		 * slice, which the monitor's preemption counts by (a G
		 * taken from runnext inherits the slice, and the P's old
		 * schedtick made a spinner be preempted at once).
		 */
		kgo_runqput(p, g, false);
		kgo_startm(p, false);
		spin_unlock_irqrestore(&sched->lock, flags);
		return;
	}
	kgo_globrunqput(sched, g);
	spin_unlock_irqrestore(&sched->lock, flags);
	kgo_wakep();
}

/* Starts up to @n non-spinning Ms on idle Ps, for injected work. */
void kgo_start_idle(struct kgo_sched *sched, u32 n)
{
	unsigned long flags;
	struct kgo_p *p;

	for (; n && atomic_read(&sched->npidle); n--) {
		spin_lock_irqsave(&sched->lock, flags);
		p = sched->stopping ? NULL : kgo_pidleget(sched, NULL);
		if (p)
			kgo_startm(p, false);
		spin_unlock_irqrestore(&sched->lock, flags);
		if (!p)
			break;
	}
}

/* --- Spinning ------------------------------------------------------ */

static void kgo_become_spinning(struct kgo_m *m)
{
	m->spinning = true;
	atomic_inc(&m->sched->nmspinning);
	/*
	 * Taken up. A full barrier (xchg) before we look for work: a
	 * producer that saw needspinning set and returned early from
	 * kgo_wakep() did so after storing its work and a full barrier, so
	 * either it saw our clear (and asks anew) or we see its work.
	 */
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
	WARN_ON_ONCE(atomic_dec_return(&m->sched->nmspinning) < 0);
	if (kgo_more_work(m->sched))
		kgo_wakep();
}

/* --- Holding and parking ------------------------------------------- */

/*
 * An M whose CPU went offline was moved elsewhere by the kernel (with
 * "no longer affine" in the log). Its home P only comes back with the
 * CPU, so bind it there again before it runs that P's goroutines.
 * Context: process, may sleep, the M itself, nothing held.
 */
static void kgo_m_rebind(struct kgo_m *m)
{
	const struct cpumask *home = cpumask_of(m->home->cpu);

	/*
	 * Bound to one CPU and on it: that CPU is home, and cpumask_equal()
	 * need not walk the mask on every wake-up.
	 */
	if (likely(current->nr_cpus_allowed == 1 &&
		   raw_smp_processor_id() == m->home->cpu))
		return;
	if (cpumask_equal(current->cpus_ptr, home))
		return;
	/* Fails only if the CPU went away again; its P then stops us. */
	if (set_cpus_allowed_ptr(current, home))
		pr_debug("M %llu: cannot rebind to CPU %d\n", m->id, m->home->cpu);
}

/*
 * kgo_m_settle() - bind the M home again before it holds a P or parks
 * @m: the M, holding no P
 *
 * A relieved hog's M may run anywhere (kgo_hog_unbind(), hog.c) until
 * here. Its P is its home CPU's, and a parked M is woken to relieve a
 * hog on that CPU, so both want it home. m->relieved is read without
 * the lock first: it was set under sched->lock with m->p = NULL, which
 * this M saw before coming here through sched->lock (the take-back,
 * the global queue, mtransit); and it is set again only for an M that
 * holds a P, which this one does not.
 *
 * Context: the M itself, may sleep, nothing held.
 */
static void kgo_m_settle(struct kgo_m *m)
{
	unsigned long flags;

	if (likely(!READ_ONCE(m->relieved))) {
		kgo_m_rebind(m);
		return;
	}
	mutex_lock(&m->affinity_lock);
	spin_lock_irqsave(&m->sched->lock, flags);
	WRITE_ONCE(m->relieved, false);
	spin_unlock_irqrestore(&m->sched->lock, flags);
	kgo_m_rebind(m);
	mutex_unlock(&m->affinity_lock);
}

/*
 * Context: the M, nothing held; @p was handed to it under sched->lock.
 * Preemptible when a G takes its P back (kgo_reacquire_home()): a hog
 * relief that switches us out between the two stores sees p->m but not
 * m->p, and leaves the P alone (kgo_hog_takeover()).
 */
static void kgo_acquirep(struct kgo_m *m, struct kgo_p *p)
{
	WARN_ON_ONCE(p->m || m->p || p != m->home);
	kgo_m_settle(m);
	p->m = m;
	barrier();	/* the hog's own CPU reads them: program order */
	m->p = p;
}

/* The M's own P, taken off the idle list if it is there; else NULL. */
static struct kgo_p *kgo_pidleget_home(struct kgo_m *m)
{
	struct kgo_sched *sched = m->sched;
	unsigned long flags;
	struct kgo_p *p;

	spin_lock_irqsave(&sched->lock, flags);
	p = sched->stopping ? NULL : kgo_pidleget_exact(sched, m->home);
	spin_unlock_irqrestore(&sched->lock, flags);
	return p;
}

/**
 * kgo_reacquire_home() - take the M's own P back if it is idle
 * @m: an M that holds no P (its P was handed off while it blocked)
 *
 * Go's exitsyscall fast path, for a P that was handed off and went idle.
 * Context: the M, nothing held. Return: whether @m now holds its P.
 */
bool kgo_reacquire_home(struct kgo_m *m)
{
	struct kgo_p *p = kgo_pidleget_home(m);

	if (!p)
		return false;
	kgo_acquirep(m, p);
	return true;
}

/**
 * kgo_reacquire_home_atomic() - kgo_reacquire_home() for sched_in
 * @m: an M that holds no P
 *
 * As kgo_reacquire_home(), but never sleeps: an M that the kernel moved
 * off its CPU (which went offline meanwhile) is not rebound here, and
 * does without its P until its next switch. Nobody else touches an idle
 * P, so taking it off the list under the lock makes it ours.
 */
void kgo_reacquire_home_atomic(struct kgo_m *m)
{
	struct kgo_p *p;

	/* Unsettled, it may be unbound at any time (hog.c). */
	if (READ_ONCE(m->relieved) ||
	    !cpumask_equal(current->cpus_ptr, cpumask_of(m->home->cpu)))
		return;
	p = kgo_pidleget_home(m);
	if (p) {
		p->m = m;
		m->p = p;
	}
}

/**
 * kgo_handoffp() - pass on a P whose M can no longer run it
 * @sched: the scheduler
 * @p: a RUNNING P that no M holds (p->m cleared by the caller)
 *
 * Go's handoffp: with work queued, another M of the P's CPU runs it;
 * without, the P goes idle, where wakep() finds it when work comes.
 * Context: sched->lock held.
 */
void kgo_handoffp(struct kgo_sched *sched, struct kgo_p *p)
{
	lockdep_assert_held(&sched->lock);
	WARN_ON_ONCE(p->m || READ_ONCE(p->status) != KGO_P_RUNNING);
	if (!kgo_runqempty_all(p) || sched->runqsize)
		kgo_startm(p, false);
	else
		kgo_pidleput(sched, p);
}

/*
 * Moves every G queued on @p to the global queue. Context: sched->lock
 * held, by @p's holder or by whoever took @p from a blocked M; thieves
 * may still take some meanwhile.
 */
void kgo_runq_drain(struct kgo_sched *sched, struct kgo_p *p)
{
	struct kgo_g *g;
	bool inherit;

	lockdep_assert_held(&sched->lock);
	while ((g = kgo_runqget(p, &inherit)))
		kgo_globrunqput(sched, g);
}

/* Context: sched->lock held; gives up the P the M holds. */
static struct kgo_p *kgo_releasep(struct kgo_m *m)
{
	struct kgo_p *p = m->p;

	lockdep_assert_held(&m->sched->lock);
	p->m = NULL;
	m->p = NULL;
	return p;
}

enum kgo_nextp {
	KGO_NEXTP_EXIT,		/* none: the M is to exit */
	KGO_NEXTP_NONE,		/* a relief came to nothing: park again */
	KGO_NEXTP_TAKEN,	/* the M holds the P */
};

/*
 * Takes the P that kgo_m_wake() or kgo_m_create() handed over, or, for
 * a relief, takes it from its hog; a spare M created with none goes to
 * park. On KGO_NEXTP_NONE the M is counted in its home's mtransit, for
 * kgo_stopm().
 *
 * The hand-over is ours to read since kgo_m_park() saw woken (m.h), so
 * only a relief takes sched.lock here. Each wake-up of an M from an
 * interrupt on another CPU took it before, and with it the line the
 * interrupt had just written.
 */
static enum kgo_nextp kgo_take_nextp(struct kgo_m *m)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_p *p = m->nextp;
	bool spinning = m->nextp_spinning, relief = m->nextp_relief, taken;
	unsigned long flags;

	m->nextp = NULL;
	m->nextp_relief = false;
	if (unlikely(m->nextp_spare)) {
		m->nextp_spare = false;
		/* Counted in mtransit by kgo_m_create(), until kgo_stopm(). */
		WARN_ON_ONCE(p || !READ_ONCE(m->home->mtransit));
		return KGO_NEXTP_NONE;
	}
	if (p && relief) {
		spin_lock_irqsave(&sched->lock, flags);
		taken = kgo_hog_takeover(m, p);
		if (!taken)
			m->home->mtransit++;	/* until kgo_stopm() */
		spin_unlock_irqrestore(&sched->lock, flags);
		return taken ? KGO_NEXTP_TAKEN : KGO_NEXTP_NONE;
	}
	if (!p)
		return KGO_NEXTP_EXIT;
	kgo_acquirep(m, p);
	kgo_pstat_inc(p, mwakes);
	if (spinning)
		m->spinning = true;	/* already counted by the waker */
	return KGO_NEXTP_TAKEN;
}

/*
 * Parks an M that holds no P until a P is handed to it. Returns false if
 * the M is to exit. First takes its home P if kgo_startm() wanted an M
 * for it while this one was on its way here.
 */
static bool kgo_stopm(struct kgo_m *m)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_p *home = m->home, *p;
	unsigned long flags;
	bool spinning;

	kgo_m_settle(m);
again:
	spin_lock_irqsave(&sched->lock, flags);
	WARN_ON_ONCE(!home->mtransit);
	home->mtransit--;
	if (sched->stopping) {
		spin_unlock_irqrestore(&sched->lock, flags);
		return false;
	}
	if (home->wantm) {
		home->wantm = false;
		/* The P is idle: its hog, if any, moved on. */
		if (home->wantrelief) {
			home->wantrelief = false;
			home->relief_pending = false;
		}
		p = home;
		spinning = home->wantm_spinning;
		spin_unlock_irqrestore(&sched->lock, flags);
		goto acquire;
	}
	if (home->wantrelief) {
		/*
		 * Asked while we were on our way (kgo_hog_relieve()): we are
		 * the relief, on the hog's CPU. If the hog moved on
		 * meanwhile, the takeover says so and we park.
		 */
		home->wantrelief = false;
		if (kgo_hog_takeover(m, home)) {
			spin_unlock_irqrestore(&sched->lock, flags);
			return true;
		}
	}
	m->woken = false;
	m->idle_since = jiffies;
	list_add(&m->idle_node, &home->midle);
	home->nmidle++;
	spin_unlock_irqrestore(&sched->lock, flags);

	kgo_m_park(m);
	switch (kgo_take_nextp(m)) {
	case KGO_NEXTP_TAKEN:
		return true;
	case KGO_NEXTP_NONE:
		goto again;
	default:
		return false;
	}
acquire:
	kgo_acquirep(m, p);
	kgo_pstat_inc(p, mwakes);
	if (spinning)
		m->spinning = true;	/* already counted by the waker */
	return true;
}

/*
 * Takes @m's P OFFLINE, as procs.c asked (p->stopreq): its queued Gs go
 * to the global queue for the other Ps. The M then parks in kgo_stopm().
 */
static void kgo_p_stop_held(struct kgo_m *m)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_p *p = m->p;
	unsigned long flags;
	u32 queued;

	if (m->spinning) {
		m->spinning = false;
		WARN_ON_ONCE(atomic_dec_return(&sched->nmspinning) < 0);
	}
	kgo_budget_flush(p);	/* its owner, once more */
	spin_lock_irqsave(&sched->lock, flags);
	kgo_runq_drain(sched, p);
	queued = sched->runqsize;
	kgo_releasep(m);
	p->stopreq = false;
	WRITE_ONCE(p->status, KGO_P_OFFLINE);
	WRITE_ONCE(sched->gomaxprocs, sched->gomaxprocs - 1);
	m->home->mtransit++;	/* until kgo_stopm() */
	spin_unlock_irqrestore(&sched->lock, flags);
	wake_up_all(&sched->pstop_wq);
	if (queued)
		kgo_start_idle(sched, queued);
}

/* Parks an M that lost its P (handed off while it blocked) until it gets one. */
static bool kgo_m_stop_pless(struct kgo_m *m)
{
	unsigned long flags;

	spin_lock_irqsave(&m->sched->lock, flags);
	m->home->mtransit++;	/* until kgo_stopm() */
	spin_unlock_irqrestore(&m->sched->lock, flags);
	return kgo_stopm(m);
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
		spin_lock_irqsave(&sched->lock, flags);
		g = kgo_globrunqget(sched, p, 1);
		spin_unlock_irqrestore(&sched->lock, flags);
		if (g) {
			/* Rule 5: runnext, if any, now waits behind it. */
			kgo_wakep_for_batch(p);
			return g;
		}
	}

	/* 2. Local; a P is idle: let it steal Gs of the fresh stack (runq.c). */
	g = kgo_runqget_sched(p, inherit);
	if (g) {
		if (*inherit)
			kgo_pstat_inc(p, runnext_hits);
		return g;
	}

	/* 3. Global. */
	if (READ_ONCE(sched->runqsize)) {
		spin_lock_irqsave(&sched->lock, flags);
		g = kgo_globrunqget(sched, p, 0);
		spin_unlock_irqrestore(&sched->lock, flags);
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
	spin_lock_irqsave(&sched->lock, flags);
	if (!sched->stopping && sched->runqsize) {
		g = kgo_globrunqget(sched, p, 0);
		spin_unlock_irqrestore(&sched->lock, flags);
		kgo_wakep_for_batch(p);
		return g;
	}
	if (!sched->stopping && !m->spinning && atomic_read(&sched->needspinning)) {
		/* Rule 4: a wakep found no idle P; spin on its behalf. */
		kgo_become_spinning(m);
		spin_unlock_irqrestore(&sched->lock, flags);
		goto top;
	}
	kgo_pstat_inc(p, mparks);
	kgo_pidleput(sched, kgo_releasep(m));
	m->home->mtransit++;	/* until kgo_stopm() or the recheck below */
	spin_unlock_irqrestore(&sched->lock, flags);

	if (m->spinning) {
		m->spinning = false;
		/*
		 * Rule 3, the delicate dance: drop nmspinning, then look at
		 * every source of work again. atomic_dec_return() is a full
		 * barrier; it pairs with the producer's queue store followed
		 * by its load of nmspinning in kgo_wakep() (ordered there by
		 * sched.lock for the global queue; a P-local queue has a
		 * running owner that will get to its Gs in any case).
		 */
		WARN_ON_ONCE(atomic_dec_return(&sched->nmspinning) < 0);
		if (READ_ONCE(sched->runqsize) || kgo_any_runq_busy(sched)) {
			spin_lock_irqsave(&sched->lock, flags);
			p = sched->stopping ? NULL :
			    kgo_pidleget_spinning(sched, m->home);
			if (p == m->home) {
				m->home->mtransit--;
				/* Our P was idle: a relief of it is void. */
				if (p->wantrelief) {
					p->wantrelief = false;
					p->relief_pending = false;
				}
				spin_unlock_irqrestore(&sched->lock, flags);
				kgo_acquirep(m, p);
				kgo_become_spinning(m);
				goto top;
			}
			if (p) {	/* our P was taken: wake another's M */
				atomic_inc(&sched->nmspinning);
				kgo_startm(p, true);
			}
			spin_unlock_irqrestore(&sched->lock, flags);
		}
	}

	if (!kgo_stopm(m))
		return NULL;
	goto top;
}

/* --- Stacks within the budget (budget.c) --------------------------- */

/**
 * kgo_stackwait_kick() - let up to @n Gs waiting for a stack try again
 * @sched: the scheduler
 * @n: how many
 *
 * Called when a stack may have become available: a G exited, or the
 * retry work ran after an allocation failure. The Gs go to the global
 * queue and try at their next first run.
 *
 * Context: any but hardirq; sched->lock not held.
 */
void kgo_stackwait_kick(struct kgo_sched *sched, u32 n)
{
	unsigned long flags;
	struct kgo_g *g;
	u32 k = 0;

	if (!READ_ONCE(sched->nstackwait))
		return;
	spin_lock_irqsave(&sched->lock, flags);
	while (k < n && (g = kgo_gqueue_pop(&sched->stackwait))) {
		kgo_globrunqput(sched, g);
		k++;
	}
	WRITE_ONCE(sched->nstackwait, sched->nstackwait - k);
	spin_unlock_irqrestore(&sched->lock, flags);
	if (k)
		kgo_wakep();
}

static void kgo_stackwait_retry_fn(struct work_struct *work)
{
	kgo_stackwait_kick(&kgo_sched, 1);
}

/*
 * Parks @g, which found no stack, on sched.stackwait. @nomem: the budget
 * had room but the allocation failed, so retry after a while rather than
 * at the next exit (which may never come: nothing else may be running).
 */
static void kgo_stackwait_add(struct kgo_sched *sched, struct kgo_g *g, bool nomem)
{
	unsigned long flags;

	spin_lock_irqsave(&sched->lock, flags);
	kgo_gqueue_push_back(&sched->stackwait, g);
	WRITE_ONCE(sched->nstackwait, sched->nstackwait + 1);
	spin_unlock_irqrestore(&sched->lock, flags);
	if (nomem) {
		pr_warn_ratelimited("no memory for a goroutine stack: retrying in %d ms\n",
				    KGO_STACKWAIT_RETRY_MS);
		queue_delayed_work(system_unbound_wq, &sched->stackwait_retry,
				   msecs_to_jiffies(KGO_STACKWAIT_RETRY_MS));
		return;
	}
	/*
	 * An exit between our failed charge and the queueing above gave a
	 * stack back but saw no waiter. The full barrier pairs with the one
	 * in kgo_budget_unstack(): either it sees us queued, or we see the
	 * room it left.
	 */
	smp_mb();
	if (kgo_budget_stack_fits())
		kgo_stackwait_kick(sched, 1);
}

/*
 * A stack for @g's first run, charged to the budget. Without one, @g
 * waits on sched.stackwait and the M goes on with other Gs: it must not
 * sleep holding the P, nor retry in a loop that keeps reclaim busy.
 */
static bool kgo_g_take_stack(struct kgo_sched *sched, struct kgo_p *p,
			     struct kgo_g *g)
{
	bool nomem = false;

	if (kgo_budget_stack(p)) {
		struct mem_cgroup *old = set_active_memcg(g->memcg);

		/* Marked: runq.c reads it racily, to tell Gs that never ran. */
		WRITE_ONCE(g->stack, kgo_stack_get(p, kgo_memcg_is_root(g->memcg)));
		set_active_memcg(old);
		if (likely(g->stack))
			return true;
		kgo_budget_unstack(p);
		nomem = true;
	}
	kgo_stackwait_add(sched, g, nomem);
	return false;
}

/* --- Running Gs ---------------------------------------------------- */

/*
 * A G about to run on @p: its wait for the P, if sampled, and the time
 * it starts its new status. Both switches to a G take it (kgo_execute(),
 * kgo_switch_direct()).
 */
static __always_inline void kgo_g_start_stats(struct kgo_p *p, struct kgo_g *g)
{
	if (unlikely(g->runnable_ns)) {
		u64 now = ktime_get_mono_fast_ns();
		u64 lat = now > g->runnable_ns ? now - g->runnable_ns : 0;

		if (kgo_g_tracked(g))
			kgo_stats_record_latency(p, lat);
		trace_kgo_g_start(g->goid, p->id, lat);
	} else {
		trace_kgo_g_start(g->goid, p->id, 0);
	}
	g->since = jiffies;
}

/*
 * Runs @g on @m until it switches back, then does what it asked. This is
 * Go's execute + gogo, and the g0 halves of gosched_m, park_m, goexit0.
 */
static void kgo_execute(struct kgo_m *m, struct kgo_g *g, bool inherit)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_p *p = m->p;
	unsigned long flags;
	bool parked, due;

	if (!inherit) {
		p->schedtick++;
		kgo_pstat_inc(p, schedticks);
		/* A new slice: an old preemption request is void. */
		WRITE_ONCE(g->preempt, false);
	}
	if (!g->stack) {
		if (unlikely(!kgo_g_take_stack(sched, p, g)))
			return;		/* it waits on stackwait; we go on */
		kgo_stack_prepare(g);
		kgo_pstat_inc(p, gstarted);
		if (unlikely(g->feed)) {
			kgo_feed_started(g->feed, p);
			g->feed = NULL;
		}
	}
	kgo_g_start_stats(p, g);
resume:
	/*
	 * g->m first: the status store (a release) publishes it, so a
	 * reader that sees RUNNING with acquire sees this M (debugfs.c).
	 */
	WRITE_ONCE(g->m, m);
	kgo_g_set_status(g, KGO_G_RUNNABLE, KGO_G_RUNNING);
	m->req = KGO_REQ_NONE;

	/*
	 * Interrupts off across the swap of %rsp and current->stack, and
	 * around curg's changes: curg is set exactly while the M is in G
	 * code, which a relief (hog.c) relies on.
	 */
	local_irq_disable();
	m->curg = g;
	kgo_m_ran_here(m);
	current->stack = g->stack;
	/*
	 * Back on our stack: the G set current->stack before switching. It
	 * may be another than @g, which yielded straight to it (the direct
	 * yield): kgo_switch() names the G that switched back.
	 */
	g = kgo_switch(&m->g0_sp, &g->sp, NULL);
	m->curg = NULL;
	kgo_g_stamp_stopped(g);
	/*
	 * The P may have been handed off while the G blocked in the kernel
	 * (block.c): then the M holds none, and every request below that
	 * would queue the G on it sends the G to the global queue instead.
	 */
	p = m->p;
	parked = false;
	/*
	 * Rule 5: the G switched out, and what it readied into runnext runs
	 * next, so a wake-up it deferred is not owed any more; the requests
	 * that queue the G call kgo_wakep() for both.
	 */
	due = p && p->wakep_due;
	if (due)
		WRITE_ONCE(p->wakep_due, false);
	if (m->req == KGO_REQ_PARK) {
		/*
		 * Still with interrupts off: the G may hold, for unlockf to
		 * release, a lock that interrupt context also takes.
		 */
		/*
		 * Before unlockf: once it has released the G's locks, the G
		 * may be readied and run again, and its next park reuse
		 * waitreason. A park that unlockf declines is traced too.
		 */
		trace_kgo_g_park(g->goid, p ? p->id : -1, g->waitreason);
		g->since = jiffies;
		kgo_g_cas_status(g, KGO_G_RUNNING, KGO_G_WAITING);
		parked = !g->unlockf || g->unlockf(g, g->unlock_arg);
	}
	local_irq_enable();

	switch (m->req) {
	case KGO_REQ_YIELD:
		if (!p)
			goto global;
		kgo_g_set_status(g, KGO_G_RUNNING, KGO_G_RUNNABLE);
		kgo_g_stamp_runnable(g);
		kgo_runqput_tail(p, g);
		kgo_pstat_inc(p, yields);
		kgo_wakep();
		break;
	case KGO_REQ_PARK:
		/* What the G held for unlockf must now be released. */
		kgo_switch_check(m, "park");
		if (p)
			kgo_pstat_inc(p, parks);
		if (parked)
			break;
		/* unlockf said don't park; unless someone readied it first. */
		if (atomic_cmpxchg(&g->status, KGO_G_WAITING, KGO_G_RUNNABLE) ==
		    KGO_G_WAITING) {
			/* It goes on after all: pay what it deferred. */
			if (due)
				kgo_wakep();
			goto resume;	/* same slice, never queued */
		}
		break;
	case KGO_REQ_PREEMPT:
		if (p) {
			kgo_pstat_inc(p, preempts);
			if (trace_kgo_preempt_enabled())
				trace_kgo_preempt(g->goid, p->id, ktime_get_mono_fast_ns() -
						  READ_ONCE(p->mon_schedwhen));
		}
		fallthrough;
	case KGO_REQ_EXITSYSCALL:
global:
		/*
		 * To the global queue, as Go's gopreempt_m and exitsyscall0
		 * do: a preempted G goes behind everything queued, and a G
		 * whose M lost its P runs on whichever P is free first.
		 */
		kgo_g_set_status(g, KGO_G_RUNNING, KGO_G_RUNNABLE);
		kgo_g_stamp_runnable(g);
		WRITE_ONCE(g->preempt, false);
		spin_lock_irqsave(&sched->lock, flags);
		kgo_globrunqput(sched, g);
		spin_unlock_irqrestore(&sched->lock, flags);
		kgo_wakep();
		break;
	case KGO_REQ_EXIT:
		/* kgo_goexit() made sure it has a P. */
		trace_kgo_g_end(g->goid, p->id);
		kgo_g_set_status(g, KGO_G_RUNNING, KGO_G_DEAD);
		kgo_stack_put(p, g->stack);
		WRITE_ONCE(g->stack, NULL);
		mem_cgroup_put(g->memcg);
		g->memcg = NULL;
		kgo_g_free(p, g);
		/* Counts the G out of kgo_galive(), see there. */
		kgo_pstat_inc(p, gfinished);
		kgo_budget_exit(p);
		/* Its stack may be what a waiting G needs. */
		kgo_stackwait_kick(sched, 1);
		break;
	default:
		WARN_ONCE(1, "kgo: goroutine switched back with request %d\n", m->req);
	}
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

/*
 * The direct switch
 *
 * A yield or park through the M is two stack switches and a pass of
 * the M's loop: G -> M, queue or park the G, cond_resched, look at
 * every queue in order, M -> next G. When the next G is local and has
 * run before, the M's loop would only pick it: kgo_switch_direct()
 * switches straight to it, as Linux's __schedule() goes from prev to
 * next with no stop in between.
 *
 * What the M did for the G after the switch back must still happen
 * after the switch: a yielder may not be queued, nor a parker's unlockf
 * release the locks that let it be readied, while we stand on its
 * stack, or another CPU could run it there. So the G we switch to does
 * it, on its own stack, as finish_task_switch() does for prev:
 * kgo_switch() returns the G that switched to whoever resumes, and
 * every place a G resumes (here, and kgo_switch_to_m_irqsoff() in
 * api.c) calls kgo_switch_finish() if it is not NULL. The M's own
 * switches to a G pass NULL; a G's switch to its M passes the G, and
 * kgo_execute() goes on with the G it is given: the M switched to one G
 * and may be switched back to by another. Interrupts stay off from the
 * first check to the finish, so the M can neither be preempted (a hog
 * relief, hog.c) nor lose its P in between, and curg moves from one G
 * to the other with no M code in G context.
 *
 * Whatever the M's loop would do differently goes the long way: no P,
 * the P or the module stopping, a reschedule due (the loop's
 * cond_resched; and without preemptible RCU, whose quiescent state that
 * call reports, every switch), the 1-in-61 look at the global queue, a
 * fresh stack to order against the ring (runq.c), an empty queue, or a
 * next G that never ran, which the M must give a stack.
 */

/*
 * The yielder @prev's switch out: what kgo_execute() does for
 * KGO_REQ_YIELD.
 */
static __always_inline void kgo_yield_finish(struct kgo_p *p, struct kgo_g *prev)
{
	kgo_g_set_status(prev, KGO_G_RUNNING, KGO_G_RUNNABLE);
	kgo_g_stamp_runnable(prev);
	kgo_runqput_tail(p, prev);
	kgo_pstat_inc(p, yields);
	kgo_pstat_inc(p, yields_direct);
	kgo_wakep();
}

/*
 * The parker @prev's switch out: what kgo_execute() does for
 * KGO_REQ_PARK. A park that unlockf declines goes on next, from
 * runnext, where the M's path would resume it at once; its trace event
 * came before the switch (kgo_switch_direct()).
 */
static __always_inline void kgo_park_finish(struct kgo_m *m, struct kgo_p *p,
					    struct kgo_g *prev)
{
	m->req = KGO_REQ_NONE;
	prev->since = jiffies;
	kgo_g_cas_status(prev, KGO_G_RUNNING, KGO_G_WAITING);
	if (prev->unlockf && !prev->unlockf(prev, prev->unlock_arg) &&
	    atomic_cmpxchg(&prev->status, KGO_G_WAITING, KGO_G_RUNNABLE) ==
	    KGO_G_WAITING) {
		kgo_g_stamp_runnable(prev);
		kgo_runqput(p, prev, true);
		kgo_wakep();
	}
	kgo_switch_check_irqsoff(m, "park");
	kgo_pstat_inc(p, parks);
	kgo_pstat_inc(p, parks_direct);
}

/*
 * @prev's switch out, done by the G that resumed in its place, on the
 * same M. m->req says which: a direct park sets it, a direct yield
 * leaves it at NONE. Context: a G, interrupts off, on the M and P
 * @prev ran on.
 */
static __always_inline void __kgo_switch_finish(struct kgo_g *prev)
{
	struct kgo_m *m = prev->m;
	struct kgo_p *p = m->p;

	lockdep_assert_irqs_disabled();
	WARN_ON_ONCE(m->curg == prev || !p);
	kgo_g_stamp_stopped(prev);
	/*
	 * Rule 5: a deferred wake-up is void. A yield pays it below; what
	 * a parker readied into runnext is running now.
	 */
	if (p->wakep_due)
		WRITE_ONCE(p->wakep_due, false);
	if (m->req == KGO_REQ_PARK)
		kgo_park_finish(m, p, prev);
	else
		kgo_yield_finish(p, prev);
}

/* The same, for a G that resumes in its M-path switch (api.c). */
void kgo_switch_finish(struct kgo_g *prev)
{
	__kgo_switch_finish(prev);
}

/*
 * kgo_switch_direct() - switch straight to the next local G
 * @m: the caller's M (kgo_g_m())
 * @g: the caller, @m's curg
 * @park: a park (m->req is KGO_REQ_PARK), else a yield
 *
 * Return: false, having done nothing, if the switch must go through the
 * M; else true, once the G runs again (on @m or another M).
 * Context: a G, interrupts off.
 */
static __always_inline bool kgo_switch_direct(struct kgo_m *m, struct kgo_g *g,
					      bool park)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_p *p = m->p;
	struct kgo_g *next, *prev;
	bool inherit;

	lockdep_assert_irqs_disabled();
	if (!IS_ENABLED(CONFIG_PREEMPT_RCU) || unlikely(!p) || need_resched() ||
	    READ_ONCE(sched->stopping) || READ_ONCE(p->stopreq) ||
	    p->freshtail != p->freshhead ||
	    (p->schedtick % KGO_GLOBAL_CHECK == 0 && READ_ONCE(sched->runqsize)))
		return false;
	next = __kgo_runqget(p, &inherit, false);
	if (!next)
		return false;
	/* Ours now: no thief reaches it, so its fields may be read. */
	if (unlikely(!next->stack)) {
		/*
		 * Never ran: the M gives it a stack. It goes back where it
		 * was next in line, runnext, which the get left empty (only
		 * the owner fills it). Release: as runqput's cmpxchg, for a
		 * thief that takes it from there.
		 */
		smp_store_release(&p->runnext, next);
		return false;
	}
	/*
	 * As kgo_execute(), before unlockf can let the G be readied and
	 * park again with another waitreason; and before the next G's start.
	 */
	if (park)
		trace_kgo_g_park(g->goid, p->id, g->waitreason);
	if (inherit) {
		kgo_pstat_inc(p, runnext_hits);
	} else {
		p->schedtick++;
		kgo_pstat_inc(p, schedticks);
		WRITE_ONCE(next->preempt, false);
	}
	kgo_g_start_stats(p, next);
	/* As kgo_execute(): g->m before the status that publishes it. */
	WRITE_ONCE(next->m, m);
	kgo_g_set_status(next, KGO_G_RUNNABLE, KGO_G_RUNNING);
	m->curg = next;
	current->stack = next->stack;
	prev = kgo_switch(&g->sp, &next->sp, g);
	/* Resumed, by an M or by a G's direct switch; @m may be stale. */
	if (prev)
		__kgo_switch_finish(prev);
	return true;
}

/*
 * kgo_park_reason() by a G that has its M, @m = kgo_g_m(). Here, as
 * kgo_yield() is, for the direct switch to be inline in it.
 */
void kgo_park_m(struct kgo_m *m, bool (*unlockf)(struct kgo_g *g, void *arg),
		void *arg, u8 reason)
{
	struct kgo_g *g = m->curg;

	/* With unlockf, the M checks once unlockf has released what it may. */
	if (!unlockf)
		kgo_switch_check(m, "park");
	g->unlockf = unlockf;
	g->unlock_arg = arg;
	g->waitreason = reason;
	m->req = KGO_REQ_PARK;
	local_irq_disable();
	if (likely(kgo_switch_direct(m, g, true))) {
		local_irq_enable();
		return;
	}
	kgo_switch_via_m(m, KGO_REQ_PARK);
}

/*
 * In this file rather than api.c with the other switches, so that the
 * direct switch and its finish are inline in it: a yield is then one
 * call, with no calls of its own but the switch and kgo_wakep()'s
 * rare slow path.
 */
void kgo_yield(void)
{
	struct kgo_m *m = kgo_g_m();

	if (!m) {
		cond_resched();
		return;
	}
	kgo_switch_check(m, "yield");
	local_irq_disable();
	if (likely(kgo_switch_direct(m, m->curg, false))) {
		local_irq_enable();
		return;
	}
	kgo_switch_via_m(m, KGO_REQ_YIELD);
}
EXPORT_SYMBOL_GPL(kgo_yield);

/* --- Making Gs runnable -------------------------------------------- */

/*
 * A new goroutine id. A P takes them KGO_GOID_BATCH at a time (Go's
 * goidcache), so that spawning on two CPUs does not bounce goidgen's
 * line: ids stay unique, and are in spawn order only per P.
 */
static u64 kgo_goid_next(struct kgo_sched *sched, struct kgo_p *p)
{
	if (!p)
		return atomic64_inc_return(&sched->goidgen);
	if (p->goidcache == p->goidcacheend) {
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
	if (!g) {
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
		trace_kgo_g_create(g->goid, p->id);
		kgo_g_p_put();
	} else {
		atomic64_inc(&sched->ext_created);
		trace_kgo_g_create(g->goid, -1);
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
 * queue is empty: none of them spills to the global queue. Return: how
 * many it took. Context: sched->lock held.
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
		spin_lock_irqsave(&sched->lock, flags);
		nglob = n - kgo_inject_idle_p(sched, q, n);
		if (nglob)
			kgo_globrunqputbatch(sched, q, nglob);
		spin_unlock_irqrestore(&sched->lock, flags);
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
		spin_lock_irqsave(&sched->lock, flags);
		kgo_globrunqputbatch(sched, &glob, nglob);
		spin_unlock_irqrestore(&sched->lock, flags);
		kgo_start_idle(sched, nglob);
	}
	while ((g = kgo_gqueue_pop(q)))
		kgo_runqput(p, g, false);
	kgo_g_p_put();
}
EXPORT_SYMBOL_IF_KUNIT(kgo_injectglist);

/* --- Init, exit, statistics ---------------------------------------- */

/**
 * kgo_galive() - goroutines spawned and not yet exited
 * @sched: the scheduler
 *
 * Not one shared counter that every spawn and exit would write: each P
 * counts the spawns of its Gs (gcreated) and the exits on it (gfinished)
 * in its own line, spawns from outside any P go to ext_created, and this
 * sums them. Exits are read first, then spawns, with a read barrier
 * between: a G's spawn is counted before the G is queued, and its exit
 * after it ran, so whoever reads an exit then reads its spawn (the queue's
 * release and acquire, and the status cmpxchgs, order them). So the sum
 * only ever counts too many, by the Gs spawned during the reads: a zero
 * is exact, as kgo_sched_drain() needs. Context: any.
 */
s64 kgo_galive(struct kgo_sched *sched)
{
	u64 created, finished = 0;
	int i;

	for (i = 0; i < sched->nprocs; i++)
		finished += READ_ONCE(sched->allp[i]->stats.gfinished);
	smp_rmb();
	created = atomic64_read(&sched->ext_created);
	for (i = 0; i < sched->nprocs; i++)
		created += READ_ONCE(sched->allp[i]->stats.gcreated);
	return created - finished;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_galive);

void kgo_sched_snapshot(struct kgo_sched_snap *snap)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	int i;

	spin_lock_irqsave(&sched->lock, flags);
	snap->nprocs = sched->gomaxprocs;
	snap->npidle = atomic_read(&sched->npidle);
	snap->nmspinning = atomic_read(&sched->nmspinning);
	snap->mcount = sched->mcount;
	snap->nmidle = 0;
	for (i = 0; i < sched->nprocs; i++)
		snap->nmidle += sched->allp[i]->nmidle;
	snap->runqsize = sched->runqsize;
	snap->galive = kgo_galive(sched);
	spin_unlock_irqrestore(&sched->lock, flags);
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

	spin_lock_irq(&sched->lock);
	sched->stopping = true;
	for (i = 0; i < sched->nprocs; i++) {
		struct kgo_p *p = sched->allp[i];

		list_for_each_entry_safe(m, tmp, &p->midle, idle_node) {
			list_del_init(&m->idle_node);
			p->nmidle--;
			kgo_m_wake(m, NULL, false);
		}
	}
	spin_unlock_irq(&sched->lock);

	for (i = 0; i < sched->nprocs; i++)
		cancel_work_sync(&sched->allp[i]->newm_work);
	cancel_delayed_work_sync(&sched->stackwait_retry);

	/* No M is created after the works are cancelled. */
	spin_lock_irq(&sched->lock);
	list_splice_init(&sched->allm, &allm);
	spin_unlock_irq(&sched->lock);
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
