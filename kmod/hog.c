// SPDX-License-Identifier: GPL-2.0
/*
 * Goroutines that never call kgo: taking the P from under them.
 *
 * Go 1.14 stops a goroutine in a tight loop with a signal and switches
 * it out at the next safe point. kgo cannot: a goroutine runs on its
 * M's kthread, and nothing can move that thread to another stack
 * between two kgo calls. What it can do is what Go does for an M
 * blocked in a system call (block.c): let the M keep its goroutine, and
 * give the P, with every goroutine queued on it, to another M of the
 * same CPU. The two kthreads then share the CPU as the kernel's own
 * scheduler sees fit, and it preempts at its own points: cond_resched(),
 * and the return from an interrupt on a preemptible kernel. A hog that
 * reaches neither (a loop without cond_resched() under preempt=none)
 * keeps the CPU, as any kthread would; the watchdog names it.
 *
 * The steps:
 *
 *   relieve   The monitor (monitor.c) marks a G that has run one whole
 *             slice_ms, so that it yields at its next kgo call. If a
 *             second slice passes, the same slice still running, its M
 *             on the CPU for half of it at least, while Gs wait that no
 *             idle P can take, it wakes a spare M of the P's CPU (or
 *             leaves it to one on its way to park, or has one created,
 *             within max_ms_per_cpu), its P handed over "for relief"
 *             (m->nextp_relief; p->wantrelief for kgo_stopm()). An M
 *             the kernel switched out for other tasks is not hogging
 *             anything: another M on the same CPU would wait behind
 *             the same tasks.
 *   takeover  That M runs only when the kernel has switched the hog's M
 *             out, on the same CPU. Under sched.lock it checks that the
 *             hog is still in the slice it was asked about, on its own
 *             stack's G code (curg), holds the P in its own view too
 *             (hog->p, see below), and is not blocked or in a handoff of
 *             its own; then moves the P: hog->p = NULL, p->m = itself.
 *             Any other state means the hog moved on: the M parks again.
 *   after     The hog's M runs its G without a P. At the G's next kgo
 *             call, kgo_preempt_point() takes the P back if it went
 *             idle meanwhile, else the G goes to the global queue and
 *             its M parks, as after a handoff (Go's exitsyscall).
 *   unbind    Meanwhile the monitor lets the hog's M run on any CPU
 *             (kgo_hog_unbind()), until it next holds a P or parks,
 *             when it binds itself home again (kgo_m_settle() in
 *             sched.c). Go's preempted G goes to the global queue and
 *             runs on whichever P is free first; ours keeps running on
 *             its M, and bound there it could only share its own CPU.
 *             A CPU that runs slower than the others for the Ms on it
 *             (the host's other tasks, interrupts, a slower vCPU) then
 *             traps hogs: their turns there outlast two slices and are
 *             relieved, and a relieved M cannot leave, while turns on
 *             the other CPUs end before a relief and their Gs go back
 *             to the global queue, from where the trap takes them. On
 *             emulated 2-CPU kernels both hog pairs of pingpong_hog
 *             ended up relieved on the slow CPU, light pairs ran alone
 *             on the other, and the hogs counted 3% to 20% of what the
 *             light pairs did. Unbound, the kernel's load balancer
 *             moves the extra M to the CPU that has room, as Go's
 *             global queue would the G.
 *
 * Why the takeover is safe: the hog's M is off its CPU (we are on it),
 * and it was switched out at a preemption point, where the preempt
 * count is zero. So it was not inside any of kgo's own uses of its P:
 * a G uses m->p only with preemption off (kgo_g_p_get() in sched.h),
 * and kgo's M-side code that is preemptible runs with curg NULL, or
 * re-reads m->p after the switch back (kgo_execute()). A G asleep in
 * the kernel is not a hog: sched_out marked its P SYSCALL, and the
 * ordinary handoff applies. The preempt notifier's sched_in has nothing
 * to do for a relieved hog: m->p was cleared for it, under sched.lock,
 * while it was off the CPU, and it runs again on that CPU (or after a
 * migration, through the run queues' locks): it reads the NULL.
 *
 * One of kgo's uses of a P is preemptible, though: a G whose M lost its
 * P takes it back in kgo_reacquire_home(), and kgo_acquirep() sets
 * p->m before m->p. Switched out between the two, the M looks like the
 * P's hog from p->m while it does not hold it yet; a takeover then would
 * give the P to the relief M, and the hog's M would go on to set its
 * m->p: two Ms running one P, its lock-free queue with two consumers.
 * (The KCSAN kernel, whose instrumentation widens that window, caught
 * it as kgo_acquirep()'s warning of a P with an M.) So the takeover
 * also wants hog->p == p; once the hog holds it in both fields, losing
 * it is what every G's use of m->p copes with.
 *
 * Why the unbind is safe: only an M that holds no P may run off its
 * CPU. The monitor unbinds only while m->relieved says the M has not
 * settled since the takeover, and under the M's affinity_lock, which
 * the M takes to clear it and rebind: so the M cannot hold a P or park
 * in between (kgo_acquirep() and kgo_stopm() settle first), and the
 * atomic take-back at sched_in refuses an M that has not. The monitor
 * is also the only thread that frees Ms (kgo_monitor_reap()), and stops
 * before any other does at unload: the M it read from p->relieved_m
 * stays.
 *
 * Field rules: p->relief_pending, p->relief_tick, p->wantrelief and
 * p->relieved_m are under sched.lock; m->nextp_relief is set under it
 * and read by the woken M as m.h says; m->relieved as m.h says. At most
 * one relief per P is under way.
 *
 * PREEMPT_RT changes only the lock here: sched.lock is raw (sched.c,
 * "Lock order"), and the takeover's section under it reads and writes a
 * few fields. The unbind (set_cpus_allowed_ptr()) runs in the monitor,
 * which may sleep; where it finds the M's CPU among the online ones it
 * leaves the M where it is, inside a migrate-disabled spinlock_t section
 * or not.
 */

#include <linux/cpumask.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/smp.h>
#include <linux/workqueue.h>

#include "g.h"
#include "hog.h"
#include "m.h"
#include "monitor.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "trace.h"

/**
 * kgo_hog_prepare() - a G on @p was just marked: have its relief ready
 * @sched: the scheduler
 * @p: a P whose G has run a whole slice without a kgo call
 *
 * If it makes none for another slice, kgo_hog_relieve() wants an M of
 * @p's CPU, and creating one then took the first hog after loading
 * several slices (kthreadd must run, on CPUs that hogs hold). So the
 * mark asks for a spare now, while Gs wait behind it: a slice ahead.
 * Gs that switch are never marked, so a busy server with no hog (issue
 * 17's 10,000 connections) creates no M for this.
 *
 * Context: the monitor; takes sched->lock.
 */
void kgo_hog_prepare(struct kgo_sched *sched, struct kgo_p *p)
{
	unsigned long flags;

	if (kgo_runqempty_all(p) && !READ_ONCE(sched->runqsize))
		return;
	kgo_sched_lock_irqsave(sched, flags);
	kgo_newm_spare(p);
	raw_spin_unlock_irqrestore(&sched->lock, flags);
}

/**
 * kgo_hog_relieve() - ask for a spare M to take @p from its hog
 * @sched: the scheduler
 * @p: a P whose G has run the slice @tick for two slices
 * @tick: that slice (p->schedtick as the monitor saw it)
 *
 * Only when Gs wait that no idle P can take: the P's queue or the global
 * queue with no P idle, or the P's fresh stack, which no thief sees.
 *
 * Context: the monitor; takes sched->lock.
 * Return: whether it asked.
 */
bool kgo_hog_relieve(struct kgo_sched *sched, struct kgo_p *p, u32 tick)
{
	unsigned long flags;
	bool asked = false;
	struct kgo_m *m;

	if (kgo_runqempty_all(p) && !READ_ONCE(sched->runqsize))
		return false;
	/* An idle P can steal the rest, but not the fresh stack (runq.c). */
	if (atomic_read(&sched->npidle) && !kgo_fresh_len(p))
		return false;

	kgo_sched_lock_irqsave(sched, flags);
	if (sched->stopping || p->relief_pending || !p->m ||
	    READ_ONCE(p->status) != KGO_P_RUNNING)
		goto out;
	m = list_first_entry_or_null(&p->midle, struct kgo_m, idle_node);
	if (m) {
		list_del_init(&m->idle_node);
		p->nmidle--;
		m->nextp_relief = true;
		kgo_m_wake(m, p, false);
		/*
		 * No new spare behind it: the hog's M parks at the hog's
		 * next kgo call and is the spare then, and the next mark
		 * asks for one if it has not (kgo_hog_prepare()). A spare
		 * here made three Ms on the CPU of issue 17's relieved
		 * accept loop, against a goal of two.
		 */
	} else if (p->mtransit) {
		/*
		 * An M of the CPU is on its way to park: the spare the mark
		 * asked for, most often, still starting. It takes the
		 * relief in kgo_stopm(), as a wanted P. A new M for it
		 * would be a third on the CPU.
		 */
		p->wantrelief = true;
	} else if (p->mcount < kgo_max_ms) {
		p->wantrelief = true;
		queue_work(system_unbound_wq, &p->newm_work);
	} else {
		goto out;	/* max_ms_per_cpu: the hog keeps it */
	}
	p->relief_pending = true;
	p->relief_tick = tick;
	asked = true;
out:
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	return asked;
}

/**
 * kgo_hog_takeover() - take @p from its hog, for @m
 * @m: an M of @p's CPU, woken or created for the relief of @p
 * @p: the P
 *
 * Context: @m, sched->lock held (interrupts off).
 * Return: whether @m now holds @p; if not, the hog moved on and @m has nothing
 * to do.
 */
bool kgo_hog_takeover(struct kgo_m *m, struct kgo_p *p)
{
	struct kgo_sched *sched = m->sched;
	struct kgo_m *hog = p->m;

	lockdep_assert_held(&sched->lock);
	lockdep_assert_irqs_disabled();
	p->relief_pending = false;
	/*
	 * On the hog's CPU, so the hog is not running: the checks below
	 * read its M-only fields while it is switched out.
	 */
	if (sched->stopping || !hog || hog == m || m->p || hog->p != p ||
	    raw_smp_processor_id() != p->cpu || task_cpu(hog->task) != p->cpu ||
	    READ_ONCE(p->status) != KGO_P_RUNNING || p->schedtick != p->relief_tick ||
	    !hog->curg || hog->blocking || hog->insyscall)
		return false;
	hog->p = NULL;
	/* For the monitor: the hog's M may now leave the CPU. */
	WRITE_ONCE(hog->relieved, true);
	WRITE_ONCE(p->relieved_m, hog);
	p->m = m;
	m->p = p;
	kgo_pstat_inc(p, hog_reliefs);
	kgo_pstat_inc(p, mwakes);
	trace_kgo_hog_relief(p->id, hog->id, hog->curg->goid,
			     ktime_get_mono_fast_ns() - READ_ONCE(p->mon_schedwhen));
	return true;
}

/**
 * kgo_hog_unbind() - let the M of a hog taken from on @p run anywhere
 * @sched: the scheduler
 * @p: a P
 *
 * The M runs its G on without a P until the G's next kgo call: on any
 * CPU the kernel finds room on, rather than beside @p's new M only.
 *
 * Context: the monitor, may sleep; takes sched->lock, then the M's
 * affinity_lock.
 * Return: whether there was one.
 */
bool kgo_hog_unbind(struct kgo_sched *sched, struct kgo_p *p)
{
	struct kgo_m *hog;

	if (!READ_ONCE(p->relieved_m))
		return false;
	kgo_sched_lock_irq(sched);
	hog = p->relieved_m;
	WRITE_ONCE(p->relieved_m, NULL);
	raw_spin_unlock_irq(&sched->lock);
	if (!hog)
		return false;
	mutex_lock(&hog->affinity_lock);
	/* Not settled since the takeover: it holds no P and is not parked. */
	if (READ_ONCE(hog->relieved) && set_cpus_allowed_ptr(hog->task, cpu_online_mask))
		pr_debug("M %llu: cannot unbind\n", hog->id);
	mutex_unlock(&hog->affinity_lock);
	return true;
}
