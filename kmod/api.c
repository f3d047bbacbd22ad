// SPDX-License-Identifier: GPL-2.0
/*
 * The goroutine API of include/kgo.h: the goroutine's side of every
 * switch. The M's side is kgo_execute() in sched.c.
 */

#include <linux/export.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/timekeeping.h>
#include <linux/sched.h>

#include <kgo.h>
#include "check.h"
#include "g.h"
#include "gtime.h"
#include "m.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "switch.h"
#include "trace.h"
#include "block.h"

/*
 * Switches from the calling G to its M's scheduler loop, having set
 * m->req. Returns when some M switches back to the G; that M set
 * current->stack to our stack before it did. @m is stale afterwards.
 * Inline, as is kgo_switch_to_m(): a yield or park is a call to
 * kgo_switch() and nothing more.
 */
static __always_inline void kgo_switch_to_m_irqsoff(struct kgo_m *m, struct kgo_g *g)
{
	struct kgo_g *prev;

	lockdep_assert_irqs_disabled();
	current->stack = m->own_stack;
	/* The M learns which G switched back: see kgo_switch_direct(). */
	prev = kgo_switch(&g->sp, &m->g0_sp, g);
	/* Resumed by a G's direct switch: its switch out is ours to finish. */
	if (prev)
		kgo_switch_finish(prev);
	/*
	 * A G always resumes with interrupts on: it parked with them on, or
	 * it parked holding an irq-disabling lock that unlockf released.
	 */
	local_irq_enable();
}

static __always_inline void kgo_switch_to_m(struct kgo_m *m, struct kgo_g *g)
{
	local_irq_disable();
	kgo_switch_to_m_irqsoff(m, g);
}

/*
 * The M of a G about to exit, its kgo_block_begin() ended if it left one
 * open: kgo_goexit() must run on a P the M really holds (kgo_g_m()).
 */
static struct kgo_m *kgo_exiting_m(void)
{
	struct kgo_m *m = kgo_this_m();

	if (m->blocking)
		kgo_block_end();
	return kgo_g_m();
}

static void __noreturn kgo_goexit(struct kgo_m *m, struct kgo_g *g)
{
	kgo_switch_check(m, "exit");
	/*
	 * Exit on a P: its counters, free list and stack cache take the
	 * G. An M whose P was handed off queues the G first. Interrupts
	 * off from the check to the switch: a preemption in between could
	 * lose the P again (hog.c).
	 */
	for (;;) {
		local_irq_disable();
		if (m->p)
			break;
		local_irq_enable();
		if (!kgo_reacquire_home(m)) {
			kgo_exitsyscall_park(m);
			m = kgo_g_m();
		}
	}
	m->req = KGO_REQ_EXIT;
	kgo_switch_to_m_irqsoff(m, g);
	/* A dead G is never switched back to: scheduler state is corrupt. */
	BUG();
}

/* Called by kgo_g_entry on a new G's stack, interrupts still off. */
void __noreturn kgo_g_main(struct kgo_g *g)
{
	local_irq_enable();
	g->fn(g->arg);
	kgo_goexit(kgo_exiting_m(), g);
}

s64 kgo_go(kgo_func_t fn, void *arg, gfp_t gfp)
{
	struct kgo_m *m = kgo_g_m();
	struct kgo_g *g = kgo_newproc_m(m, fn, arg, gfp);
	struct kgo_p *p;
	s64 goid;

	if (IS_ERR(g))
		return PTR_ERR(g);
	goid = g->goid;	/* g may run and be reused once queued */
	p = m ? kgo_g_p_get(m) : NULL;
	if (p) {
		kgo_runqput(p, g, true);
		kgo_wakep();
		kgo_g_p_put();
	} else {
		kgo_put_outside(g);
	}
	return goid;
}
EXPORT_SYMBOL_GPL(kgo_go);

/*
 * A yield or park the direct path declined (kgo_yield(), kgo_park_m(),
 * sched.c): through the M, whose loop acts on @req. Context: a G,
 * interrupts off.
 */
void kgo_switch_via_m(struct kgo_m *m, int req)
{
	m->req = req;
	kgo_switch_to_m_irqsoff(m, m->curg);
}

/**
 * kgo_preempt_check() - yield if the monitor asked the calling G to
 *
 * Go's preemption check at a function's prologue, at kgo's switch
 * points: kgo_preempt_point() and the operations that may block. The
 * caller can switch (no lock held, interrupts on).
 */
void kgo_preempt_check(void)
{
	kgo_preempt_check_m(kgo_g_m());
}

/* kgo_preempt_check_m() when the G is to be preempted. */
struct kgo_m *kgo_preempt_now(struct kgo_m *m)
{
	kgo_switch_check(m, "preempt");
	m->req = KGO_REQ_PREEMPT;
	kgo_switch_to_m(m, m->curg);
	return kgo_g_m();
}

void kgo_preempt_point(void)
{
	struct kgo_m *m = kgo_g_m();

	if (!m) {
		cond_resched();
		return;
	}
	/*
	 * Its P was handed off while it blocked, or taken while it ran on
	 * (hog.c): take it back if it went idle, else queue the G.
	 */
	if (!READ_ONCE(m->p) && !kgo_reacquire_home(m)) {
		kgo_exitsyscall_park(m);
		return;
	}
	kgo_preempt_check();
}
EXPORT_SYMBOL_GPL(kgo_preempt_point);

/*
 * The calling G's M lost its P and could not take it back: the G goes to
 * the global queue and the M parks (Go's exitsyscall0). The G resumes
 * here, on some M holding a P.
 */
void kgo_exitsyscall_park(struct kgo_m *m)
{
	kgo_switch_check(m, "exitsyscall");
	m->req = KGO_REQ_EXITSYSCALL;
	kgo_switch_to_m(m, m->curg);
}

void kgo_exit(void)
{
	struct kgo_m *m = in_task() ? kgo_this_m() : NULL;

	if (WARN_ONCE(!m || !m->curg, "kgo_exit() outside a goroutine\n"))
		return;
	m = kgo_exiting_m();
	kgo_goexit(m, m->curg);
}
EXPORT_SYMBOL_GPL(kgo_exit);

struct kgo_g *kgo_self(void)
{
	/* Not kgo_g_m(): inside kgo_block_begin/end it is still a G. */
	struct kgo_m *m = in_task() ? kgo_this_m() : NULL;

	return m ? m->curg : NULL;
}
EXPORT_SYMBOL_GPL(kgo_self);

u64 kgo_id(void)
{
	struct kgo_g *g = kgo_self();

	return g ? g->goid : 0;
}
EXPORT_SYMBOL_GPL(kgo_id);

/* kgo_park() with a wait reason: the park used inside kgo. */
int kgo_park_reason(bool (*unlockf)(struct kgo_g *g, void *arg), void *arg,
		    u8 reason)
{
	struct kgo_m *m = kgo_g_m();

	if (!m)
		return -EPERM;
	kgo_park_m(m, unlockf, arg, reason);
	return 0;
}

int kgo_park(bool (*unlockf)(struct kgo_g *g, void *arg), void *arg)
{
	return kgo_park_reason(unlockf, arg, KGO_WAIT_REASON_PARK);
}
EXPORT_SYMBOL_GPL(kgo_park);

int kgo_ready(struct kgo_g *g)
{
	return kgo_ready_m(kgo_g_m(), g);
}
EXPORT_SYMBOL_GPL(kgo_ready);

/*
 * The first half of a ready: @g, parked, is RUNNABLE and on no queue;
 * the caller queues it (kgo_injectglist(), for a batch). False, with a
 * warning, if @g was not parked. Context: any.
 */
bool kgo_g_readied(struct kgo_g *g)
{
	int was = atomic_cmpxchg(&g->status, KGO_G_WAITING, KGO_G_RUNNABLE);

	if (WARN_ONCE(was != KGO_G_WAITING,
		      "kgo: ready of goroutine %llu in state %d\n", g->goid, was))
		return false;
	kgo_g_stamp_runnable(g);
	return true;
}

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
		atomic64_inc(&kgo_sched.ext_readies);
		kgo_put_outside(g);
	}
	return 0;
}
