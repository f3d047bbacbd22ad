// SPDX-License-Identifier: GPL-2.0
/*
 * Idle Ps and idle Ms: Go's "worker thread parking/unparking", the half
 * of the scheduler that sched.c's essay calls spinning and wake-ups
 * from the side of the M that has no G.
 *
 * A P with nothing queued goes on sched.pidle (kgo_pidleput); an M that
 * holds no P parks on its home P's midle list (kgo_stopm) until another
 * hands it one (kgo_startm, kgo_m_wake), or is created for one by its
 * P's newm_work. kgo_wakep()'s slow path and readiness from outside any
 * P (kgo_put_outside) take an idle P and start an M on it. A P whose M
 * blocked in the kernel is passed on by kgo_handoffp(), and taken back
 * by kgo_reacquire_home().
 *
 * Everything here that changes pidle, midle, mtransit or the want*
 * requests does so under sched.lock.
 *
 * PREEMPT_RT: sched.lock is raw (sched.c, "Lock order"). Under it here:
 * O(1) list operations, a walk of the idle Ps, and wake-ups by
 * wake_up_process(), queue_work() and irq_work_queue(), all of which
 * take raw locks only. kgo_reacquire_home_atomic() runs in the sched_in
 * notifier. An M is home on the CPU it runs on, not the one its mask
 * names (kgo_m_rebind()): RT's migrate-disabled spinlock_t sections
 * made the difference a WARNING at CPU hotplug.
 */

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/cpu.h>
#include <linux/irq_work.h>
#include <kunit/visibility.h>

#include "budget.h"
#include "g.h"
#include "hog.h"
#include "idle.h"
#include "m.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "stats.h"

/* Each CPU's P, for wake-ups that prefer the CPU they come from. */
DEFINE_PER_CPU(struct kgo_p *, kgo_cpu_p);

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
	kgo_count(KGO_COUNT_SHARED_RMW);
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
	kgo_count(KGO_COUNT_SHARED_RMW);
	atomic_dec(&sched->npidle);
	/* A P is busy again: the monitor has something to watch. */
	if (sched->monitor_waiting) {
		sched->monitor_waiting = false;
		irq_work_queue(&sched->monitor_busy);
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
struct kgo_p *kgo_pidleget_parked_m(struct kgo_sched *sched,
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
struct kgo_p *kgo_pidleget_spinning(struct kgo_sched *sched,
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
		kgo_count(KGO_COUNT_SHARED_RMW);
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
void kgo_newm_workfn(struct work_struct *work)
{
	struct kgo_p *p = container_of(work, struct kgo_p, newm_work);
	struct kgo_sched *sched = p->sched;
	enum { NEWM_NONE, NEWM_WANTM, NEWM_RELIEF, NEWM_SPARE } what;
	bool spinning = false;
	unsigned long flags;
	int ret;

again:
	what = NEWM_NONE;
	kgo_sched_lock_irqsave(sched, flags);
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
			kgo_count(KGO_COUNT_SHARED_RMW);
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
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	if (what == NEWM_NONE)
		return;

	ret = kgo_m_create(p, what == NEWM_SPARE ? NULL : p, spinning,
			   what == NEWM_RELIEF);
	if (!ret)
		goto again;	/* more may have been asked meanwhile */
	/* No M for now: undo, and leave the work to the other Ps. */
	pr_warn_ratelimited("cannot start an M on CPU %d: %d\n", p->cpu, ret);
	kgo_sched_lock_irqsave(sched, flags);
	if (what == NEWM_RELIEF) {
		p->relief_pending = false;	/* the monitor may ask again */
	} else if (what == NEWM_WANTM) {
		if (spinning) {
			kgo_count(KGO_COUNT_SHARED_RMW);
			atomic_dec(&sched->nmspinning);
		}
		kgo_pidleput(sched, p);
	}
	raw_spin_unlock_irqrestore(&sched->lock, flags);
}

/*
 * kgo_wakep() past its checks (sched.h): no M spins and an idle P may
 * take one. Only the caller that moves nmspinning 0 -> 1 goes on.
 */
void kgo_wakep_slow(struct kgo_sched *sched)
{
	unsigned long flags;
	struct kgo_p *p;

	kgo_count(KGO_COUNT_SHARED_RMW);
	if (atomic_cmpxchg(&sched->nmspinning, 0, 1))
		return;
	kgo_sched_lock_irqsave(sched, flags);
	/*
	 * This CPU's own P first, if idle: work readied from an interrupt
	 * or a thread here then runs here, without waking another CPU.
	 */
	p = READ_ONCE(sched->stopping) ? NULL :
	    kgo_pidleget_spinning(sched, raw_cpu_read(kgo_cpu_p));
	if (p) {
		kgo_startm(p, true);
	} else {
		kgo_count(KGO_COUNT_SHARED_RMW);
		atomic_dec(&sched->nmspinning);
	}
	raw_spin_unlock_irqrestore(&sched->lock, flags);
}

/**
 * kgo_put_outside() - make RUNNABLE @g run, from outside any P
 * @g: a RUNNABLE G, on no queue
 *
 * See "Readiness from anywhere" in sched.c. The idle P preferred is this
 * CPU's, so that a G readied by an interrupt runs where it came.
 *
 * Context: any, hardirq included; not on an M that holds a P.
 */
void kgo_put_outside(struct kgo_g *g)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	struct kgo_p *p = NULL;

	kgo_sched_lock_irqsave(sched, flags);
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
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		return;
	}
	kgo_globrunqput(sched, g);
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	kgo_wakep();
}

/* Starts up to @n non-spinning Ms on idle Ps, for injected work. */
void kgo_start_idle(struct kgo_sched *sched, u32 n)
{
	unsigned long flags;
	struct kgo_p *p;

	for (; n && atomic_read(&sched->npidle); n--) {
		kgo_sched_lock_irqsave(sched, flags);
		p = sched->stopping ? NULL : kgo_pidleget(sched, NULL);
		if (p)
			kgo_startm(p, false);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		if (!p)
			break;
	}
}

/* --- Holding and parking ------------------------------------------- */

/*
 * An M whose CPU went offline was moved elsewhere by the kernel (with
 * "no longer affine" in the log). Its home P only comes back with the
 * CPU, so bind it there again before it runs that P's goroutines.
 *
 * Bound is not the same as there. While its CPU goes offline (online,
 * no longer active), set_cpus_allowed_ptr() accepts the mask of that
 * CPU alone for a kthread, and returns 0 without moving it: no task may
 * go there any more (the stopper's __migrate_task() refuses a dying
 * CPU). The M then runs on another CPU, one its mask excludes, and the
 * test below used to find it home by its mask: it could take its P
 * when the CPU came back and run the P's goroutines there. The first
 * preemption inside a migrate_disable() section (any spinlock_t on
 * PREEMPT_RT, vmalloc()'s) then ends in migrate_enable() finding the
 * task outside its mask with no migration pending: the WARNING in
 * affine_move_task() that CPU hotplug gave on 6.1-rt and 6.12-rt. So
 * success is where we run, not the mask; and an M that could not get
 * home leaves its mask open to every CPU, as the kernel's own fallback
 * does, for the next call to try again.
 *
 * Context: process, may sleep, the M itself, nothing held.
 */
static void kgo_m_rebind(struct kgo_m *m)
{
	int home = m->home->cpu;

	/* Bound to one CPU and on it: that CPU is home. */
	if (likely(current->nr_cpus_allowed == 1 && raw_smp_processor_id() == home))
		return;
	if (!set_cpus_allowed_ptr(current, cpumask_of(home)) &&
	    raw_smp_processor_id() == home)
		return;
	/* Its CPU is going or gone: its P stops us, or waits for the CPU. */
	pr_debug("M %llu: cannot rebind to CPU %d\n", m->id, home);
	if (set_cpus_allowed_ptr(current, cpu_possible_mask))
		pr_debug("M %llu: cannot unbind either\n", m->id);
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
	kgo_sched_lock_irqsave(m->sched, flags);
	WRITE_ONCE(m->relieved, false);
	raw_spin_unlock_irqrestore(&m->sched->lock, flags);
	kgo_m_rebind(m);
	mutex_unlock(&m->affinity_lock);
}

/*
 * Context: the M, nothing held; @p was handed to it under sched->lock.
 * Preemptible when a G takes its P back (kgo_reacquire_home()): a hog
 * relief that switches us out between the two stores sees p->m but not
 * m->p, and leaves the P alone (kgo_hog_takeover()).
 */
void kgo_acquirep(struct kgo_m *m, struct kgo_p *p)
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

	kgo_sched_lock_irqsave(sched, flags);
	p = sched->stopping ? NULL : kgo_pidleget_exact(sched, m->home);
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	return p;
}

/**
 * kgo_reacquire_home() - take the M's own P back if it is idle
 * @m: an M that holds no P (its P was handed off while it blocked)
 *
 * Go's exitsyscall fast path, for a P that was handed off and went idle.
 * Context: the M, nothing held.
 * Return: whether @m now holds its P.
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

	/*
	 * Unsettled, it may be unbound at any time (hog.c). Bound home and
	 * on it, as kgo_m_rebind() tests, not bound alone: a mask of the
	 * home CPU while it goes offline does not bring us there.
	 */
	if (READ_ONCE(m->relieved) || current->nr_cpus_allowed != 1 ||
	    raw_smp_processor_id() != m->home->cpu)
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
struct kgo_p *kgo_releasep(struct kgo_m *m)
{
	struct kgo_p *p = m->p;

	lockdep_assert_held(&m->sched->lock);
	p->m = NULL;
	m->p = NULL;
	return p;
}

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
enum kgo_nextp kgo_take_nextp(struct kgo_m *m)
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
		kgo_sched_lock_irqsave(sched, flags);
		taken = kgo_hog_takeover(m, p);
		if (!taken)
			m->home->mtransit++;	/* until kgo_stopm() */
		raw_spin_unlock_irqrestore(&sched->lock, flags);
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
 * kgo_stopm() from where it holds sched->lock, taken with @flags: the M
 * holds no P and is counted in no mtransit. Releases the lock, and takes
 * it again each time the M is woken for nothing.
 */
static bool kgo_stopm_locked(struct kgo_m *m, unsigned long flags)
	__releases(&m->sched->lock)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_p *home = m->home, *p;
	bool spinning;

	for (;;) {
		lockdep_assert_held(&sched->lock);
		if (sched->stopping) {
			raw_spin_unlock_irqrestore(&sched->lock, flags);
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
			raw_spin_unlock_irqrestore(&sched->lock, flags);
			break;
		}
		if (home->wantrelief) {
			/*
			 * Asked while we were on our way (kgo_hog_relieve()):
			 * we are the relief, on the hog's CPU. If the hog
			 * moved on meanwhile, the takeover says so and we park.
			 */
			home->wantrelief = false;
			if (kgo_hog_takeover(m, home)) {
				raw_spin_unlock_irqrestore(&sched->lock, flags);
				return true;
			}
		}
		m->woken = false;
		m->idle_since = jiffies;
		list_add(&m->idle_node, &home->midle);
		home->nmidle++;
		raw_spin_unlock_irqrestore(&sched->lock, flags);

		kgo_m_park(m);
		switch (kgo_take_nextp(m)) {
		case KGO_NEXTP_TAKEN:
			return true;
		case KGO_NEXTP_NONE:
			break;
		default:
			return false;
		}
		kgo_m_settle(m);
		kgo_sched_lock_irqsave(sched, flags);
		WARN_ON_ONCE(!home->mtransit);
		home->mtransit--;
	}
	kgo_acquirep(m, p);
	kgo_pstat_inc(p, mwakes);
	if (spinning)
		m->spinning = true;	/* already counted by the waker */
	return true;
}

/*
 * Parks an M that holds no P until a P is handed to it. Returns false if
 * the M is to exit. First takes its home P if kgo_startm() wanted an M
 * for it while this one was on its way here.
 */
bool kgo_stopm(struct kgo_m *m)
{
	unsigned long flags;

	kgo_m_settle(m);
	kgo_sched_lock_irqsave(m->sched, flags);
	WARN_ON_ONCE(!m->home->mtransit);
	m->home->mtransit--;
	return kgo_stopm_locked(m, flags);
}

/**
 * kgo_releasep_stopm() - give the M's P up, idle, and park the M
 * @m: the M, holding its P with nothing queued, not spinning
 * @flags: the irqsave flags of the caller's kgo_sched_lock_irqsave()
 *
 * kgo_findrunnable()'s step 5 for an M that is not spinning, in one
 * sched.lock section where Go takes two (findRunnable's pidleput, then
 * stopm's mput): only a spinner has anything to do in between (the
 * delicate dance), so the order of the checks is Go's. The M is not
 * settled first, as kgo_stopm() does: one that holds its P is (only an
 * M running a G is relieved of it, and comes back without a P), and
 * every way out of the park settles it, before it holds a P again.
 *
 * Context: the M, sched->lock held (interrupts off), which it releases.
 * Return: as kgo_stopm().
 */
bool kgo_releasep_stopm(struct kgo_m *m, unsigned long flags)
	__releases(&m->sched->lock)
{
	lockdep_assert_held(&m->sched->lock);
	WARN_ON_ONCE(m->spinning);
	kgo_pidleput(m->sched, kgo_releasep(m));
	return kgo_stopm_locked(m, flags);
}

/*
 * Takes @m's P OFFLINE, as procs.c asked (p->stopreq): its queued Gs go
 * to the global queue for the other Ps. The M then parks in kgo_stopm().
 */
void kgo_p_stop_held(struct kgo_m *m)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_p *p = m->p;
	unsigned long flags;
	u32 queued;

	if (m->spinning) {
		m->spinning = false;
		kgo_count(KGO_COUNT_SHARED_RMW);
		WARN_ON_ONCE(atomic_dec_return(&sched->nmspinning) < 0);
	}
	kgo_budget_flush(p);	/* its owner, once more */
	kgo_sched_lock_irqsave(sched, flags);
	kgo_runq_drain(sched, p);
	queued = sched->runqsize;
	kgo_releasep(m);
	p->stopreq = false;
	WRITE_ONCE(p->status, KGO_P_OFFLINE);
	WRITE_ONCE(sched->gomaxprocs, sched->gomaxprocs - 1);
	m->home->mtransit++;	/* until kgo_stopm() */
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	wake_up_all(&sched->pstop_wq);
	if (queued)
		kgo_start_idle(sched, queued);
}

/* Parks an M that lost its P (handed off while it blocked) until it gets one. */
bool kgo_m_stop_pless(struct kgo_m *m)
{
	unsigned long flags;

	kgo_sched_lock_irqsave(m->sched, flags);
	m->home->mtransit++;	/* until kgo_stopm() */
	raw_spin_unlock_irqrestore(&m->sched->lock, flags);
	return kgo_stopm(m);
}
