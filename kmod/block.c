// SPDX-License-Identifier: GPL-2.0
/*
 * Goroutines that block in the kernel (Go's system calls).
 *
 * A goroutine may call anything that sleeps: msleep, a contended mutex,
 * wait_event, I/O. Its M sleeps with it, and would keep its P asleep
 * too, with every goroutine queued there. As Go does, kgo lets the P go:
 *
 *   entersyscall  The M, going to sleep with a G, marks its P SYSCALL
 *                 and publishes itself in p->blocked_m. The M learns
 *                 that it sleeps from a preempt notifier: sched_out runs
 *                 inside schedule() under the rq lock, so it only marks.
 *   retake        The monitor (monitor.c) sees a P whose M has slept
 *                 longer than handoff_us and takes it: whoever clears
 *                 p->blocked_m with cmpxchg owns the P, so the M waking
 *                 up and the monitor cannot both have it. The monitor
 *                 then hands it to another M of the same CPU, or leaves
 *                 it idle if nothing is queued (kgo_handoffp()). One
 *                 tick does this for every P whose M has slept that
 *                 long. A handoff that leaves the CPU with no M parked
 *                 has a spare created (kgo_newm_spare()): the next M of
 *                 the CPU to block then need not wait for a kthread's
 *                 creation, which under a burst of blocks serialised
 *                 the handoffs some 5 ms apart on the debug kernel.
 *   exitsyscall   sched_in, when the M runs again: the same cmpxchg
 *                 keeps the P if nobody took it; else the M takes it
 *                 back if it went idle. Failing both, the M holds no P:
 *                 its G runs on without one until its next switch, when
 *                 kgo_execute() puts it on the global queue and the M
 *                 parks (Go's exitsyscall0).
 *
 * kgo_block_begin() and kgo_block_end() bracket a call known to block:
 * the P goes at once (Go's entersyscallblock) and the M waits for no
 * monitor. Without CONFIG_PREEMPT_NOTIFIERS only these annotations hand
 * Ps off: a P cannot safely be taken from an M that might wake and use
 * it without telling anyone, so the monitor can only call other Ms over
 * to steal what is queued there (monitor.c).
 *
 * No ABA on blocked_m: once the monitor cleared it, only the old M could
 * set it to itself again, and that M first has to learn it lost the P.
 *
 * PREEMPT_RT: a contended spinlock_t takes its waiter off the run queue
 * too, in TASK_RTLOCK_WAIT, where other kernels spin. sched_out keeps
 * the P for that wait, as for a preemption (kgo_task_rtlock_wait() in
 * compat.h): a handoff for each contended lock would cost more than the
 * wait, which priority inheritance keeps short. The notifiers run
 * inside the scheduler with interrupts off; the one lock they take,
 * sched.lock in sched_in's take-back, is raw, and the kick to the
 * monitor is a HARD irq_work (monitor.c).
 */

#include <linux/ktime.h>
#include <linux/preempt.h>
#include <linux/sched.h>

#include <kgo.h>
#include "block.h"
#include "check.h"
#include "compat.h"
#include "g.h"
#include "m.h"
#include "monitor.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "trace.h"

/*
 * Marks @m's P as held by a blocked M. Context: the M, with a G running,
 * from sched_out (rq lock held, interrupts off) or kgo_block_begin().
 */
static void kgo_entersyscall(struct kgo_m *m)
{
	struct kgo_p *p = m->p;

	p->syscall_since = ktime_get_mono_fast_ns();
	p->syscall_goid = m->curg->goid;
	WRITE_ONCE(p->status, KGO_P_SYSCALL);
	/* Release: the monitor reads syscall_since after it sees us here. */
	smp_store_release(&p->blocked_m, m);
	m->insyscall = true;
	kgo_monitor_kick();
}

/*
 * The M runs again: keep its P, or take it back if it went idle, or go
 * on without one. Context: the M; may not sleep (sched_in).
 */
static void kgo_exitsyscall_fast(struct kgo_m *m)
{
	struct kgo_p *p = m->p;

	m->insyscall = false;
	if (cmpxchg(&p->blocked_m, m, NULL) == m) {
		WRITE_ONCE(p->status, KGO_P_RUNNING);
		return;
	}
	/* Handed off: p->m was cleared by whoever took it. */
	m->p = NULL;
	kgo_reacquire_home_atomic(m);
}

#ifdef CONFIG_PREEMPT_NOTIFIERS
static void kgo_m_sched_out(struct preempt_notifier *pn, struct task_struct *next)
{
	struct kgo_m *m = container_of(pn, struct kgo_m, pn);

	/*
	 * Runnable (kgo_task_runnable(): still on its run queue, and on 6.12
	 * not kept there only by a delayed dequeue) means preempted, not
	 * asleep. A preempted M keeps its P, as does one on its own stack
	 * (no curg) or inside kgo_block_begin/end, which handled its P
	 * already. So does one that waits for a spinlock_t on PREEMPT_RT
	 * (kgo_task_rtlock_wait()): where other kernels spin, and a wait
	 * kept as short, with the owner boosted to it; a handoff for each
	 * contended lock would cost more than the wait.
	 */
	if (kgo_task_runnable(current) || !m->curg || !m->p || m->blocking ||
	    kgo_task_rtlock_wait(current))
		return;
	kgo_entersyscall(m);
}

static void kgo_m_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct kgo_m *m = container_of(pn, struct kgo_m, pn);

	/* Inside kgo_block_begin/end, only kgo_block_end() gives back. */
	if (m->insyscall && !m->blocking)
		kgo_exitsyscall_fast(m);
}

static struct preempt_ops kgo_m_preempt_ops = {
	.sched_in = kgo_m_sched_in,
	.sched_out = kgo_m_sched_out,
};

/* Context: the new M itself, before it runs anything. */
void kgo_block_m_start(struct kgo_m *m)
{
	preempt_notifier_init(&m->pn, &kgo_m_preempt_ops);
	preempt_notifier_register(&m->pn);
}

void kgo_block_m_stop(struct kgo_m *m)
{
	preempt_notifier_unregister(&m->pn);
}

int kgo_block_init(void)
{
	preempt_notifier_inc();
	return 0;
}

void kgo_block_exit(void)
{
	preempt_notifier_dec();
}
#else
void kgo_block_m_start(struct kgo_m *m)
{
}

void kgo_block_m_stop(struct kgo_m *m)
{
}

int kgo_block_init(void)
{
	return 0;
}

void kgo_block_exit(void)
{
}
#endif

/**
 * kgo_retake() - take @p from its blocked M and hand it off
 * @sched: the scheduler
 * @p: a P, maybe in SYSCALL
 * @now: ktime_get_mono_fast_ns()
 * @after_ns: only if its M has slept this long; 0: now, whatever it has
 *
 * Go's retake: a P with nothing queued is left alone for up to 10 ms
 * while other Ps are idle or spinning, since they can take new work.
 * Only as many Ms as kgo_max_ms allows are started for handoffs, spares
 * included (kgo_newm_spare()).
 *
 * Context: process or the monitor; takes sched->lock.
 * Return: whether @p was handed off.
 */
bool kgo_retake(struct kgo_sched *sched, struct kgo_p *p, u64 now, u64 after_ns)
{
	/* Acquire: pairs with the release in kgo_entersyscall(). */
	struct kgo_m *m = smp_load_acquire(&p->blocked_m);
	bool work, taken = false;
	unsigned long flags;
	u64 since, goid;

	if (!m)
		return false;
	since = READ_ONCE(p->syscall_since);
	goid = READ_ONCE(p->syscall_goid);
	if (now < since + after_ns)
		return false;
	work = !kgo_runqempty_all(p) || READ_ONCE(sched->runqsize);
	if (after_ns && !work && atomic_read(&sched->nmspinning) + atomic_read(&sched->npidle) &&
	    now < since + 10 * NSEC_PER_MSEC)
		return false;

	kgo_sched_lock_irqsave(sched, flags);
	/* Spare Ms are bounded: past the cap, thieves drain the P instead. */
	if (!sched->stopping && !p->stopreq &&
	    (!work || p->nmidle || p->mcount < kgo_max_ms) &&
	    cmpxchg(&p->blocked_m, m, NULL) == m) {
		WRITE_ONCE(p->status, KGO_P_RUNNING);
		p->m = NULL;
		kgo_pstat_inc(p, handoffs);
		kgo_handoffp(sched, p);
		/*
		 * Handed to an M with none of its CPU left parked: the next
		 * M of the CPU to block should not wait for one's creation.
		 */
		if (READ_ONCE(p->status) == KGO_P_RUNNING)
			kgo_newm_spare(p);
		taken = true;
	}
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	/*
	 * Blocked until now, not until the tick's @now: with trace_clock
	 * "mono" (the same clock), the event's time less blocked_ns is
	 * when the M blocked (make bench's handoff latency).
	 */
	if (taken)
		trace_kgo_handoff(p->id, m->id, goid, ktime_get_mono_fast_ns() - since);
	return taken;
}

void kgo_block_begin(void)
{
	struct kgo_m *m = in_task() ? kgo_this_m() : NULL;
	struct kgo_p *p = m && m->curg ? kgo_g_p_get(m) : NULL;

	if (!p)
		return;
	if (WARN_ONCE(m->blocking, "kgo: %s() nested\n", __func__)) {
		kgo_g_p_put();
		return;
	}
	/*
	 * First: a preemption from here on must not give the P back. Our
	 * own notifiers read it, on this task: a compiler barrier orders.
	 */
	WRITE_ONCE(m->blocking, true);
	barrier();
	kgo_entersyscall(m);
	/* If this fails (the M cap), the monitor tries again later. */
	kgo_retake(m->sched, p, ktime_get_mono_fast_ns(), 0);
	kgo_g_p_put();
}
EXPORT_SYMBOL_NS_GPL(kgo_block_begin, KGO_NS);

/*
 * kgo_block_begin() for kgo's own calls that may sleep (kgo_gomaxprocs()),
 * which a user may make inside a kgo_block_begin/end of theirs: then the
 * P is already let go, and their kgo_block_end() is the one to end it.
 * Return: whether it began a block, which the caller then ends.
 */
bool kgo_block_begin_unless_inside(void)
{
	struct kgo_m *m = in_task() ? kgo_this_m() : NULL;

	if (m && m->blocking)
		return false;
	kgo_block_begin();
	return true;
}

void kgo_block_end(void)
{
	struct kgo_m *m = in_task() ? kgo_this_m() : NULL;

	if (!m || !m->curg || !m->blocking)
		return;
	/*
	 * Our exitsyscall first, then blocking off: while blocking is set,
	 * the notifiers leave the P alone. The other order let a preemption
	 * between the two run sched_in's exitsyscall in the middle of ours:
	 * ours then read m->p as NULL (a KASAN null-ptr-deref), or undid the
	 * P sched_in had just taken back, leaving it RUNNING for an M that
	 * parked without it and every goroutine queued for good. The
	 * notifiers run on this CPU: a compiler barrier orders.
	 */
	if (m->insyscall)
		kgo_exitsyscall_fast(m);
	barrier();
	WRITE_ONCE(m->blocking, false);
	if (!m->p && !kgo_reacquire_home(m))
		kgo_exitsyscall_park(m);
}
EXPORT_SYMBOL_NS_GPL(kgo_block_end, KGO_NS);
