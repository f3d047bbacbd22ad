// SPDX-License-Identifier: GPL-2.0
/*
 * Every way a G leaves its stack or enters one: the M's switch to a G
 * and what it does when the G switches back (kgo_execute, Go's execute,
 * gogo and the g0 halves of gosched_m, park_m and goexit0), the direct
 * switch from G to G (kgo_switch_direct) with the finish each resumed G
 * does for the one it replaced, and the stack a G takes for its first
 * run, or waits for (sched.stackwait); and the G's side of the switch
 * through the M: a yield or park the direct switch declined, preemption,
 * exitsyscall's park, and exit (kgo_goexit, and kgo_g_main, where a new
 * G starts).
 *
 * The assembly of the switch itself is switch_64.S; the M's loop that
 * calls kgo_execute() is kgo_schedule() in sched.c.
 *
 * PREEMPT_RT: sched.lock, taken here for the global queue and the
 * stack wait, is raw there and its sections here are O(1). A parking
 * G's unlockf runs with interrupts off and may release spinlock_t's,
 * which sleep on RT to be taken, never to be released (locking.h).
 * What an exit frees, and the stack a first run allocates, the M
 * handles on its own stack with interrupts on, where RT allows it.
 */

#include <linux/export.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>

#include <kgo.h>
#include "block.h"
#include "budget.h"
#include "check.h"
#include "feed.h"
#include "g.h"
#include "gtime.h"
#include "memcg.h"
#include "m.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "stack.h"
#include "stats.h"
#include "switch.h"
#include "trace.h"

/* After a failed stack allocation, a waiting G tries again this much later. */
#define KGO_STACKWAIT_RETRY_MS	100

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
	kgo_sched_lock_irqsave(sched, flags);
	while (k < n && (g = kgo_gqueue_pop(&sched->stackwait))) {
		kgo_globrunqput(sched, g);
		k++;
	}
	WRITE_ONCE(sched->nstackwait, sched->nstackwait - k);
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	if (k)
		kgo_wakep();
}

void kgo_stackwait_retry_fn(struct work_struct *work)
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

	kgo_sched_lock_irqsave(sched, flags);
	kgo_gqueue_push_back(&sched->stackwait, g);
	WRITE_ONCE(sched->nstackwait, sched->nstackwait + 1);
	raw_spin_unlock_irqrestore(&sched->lock, flags);
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
			kgo_pstat_latency(p, lat);
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
			/* The core's one upcall, by name (feed.h). */
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
	/*
	 * The G that switched back set our current->stack to our own: on
	 * its side of the switch, with kgo_current(). One that set another
	 * M's instead leaves ours on a G stack, which goes back to a cache
	 * and is reused while the unwinder, and schedule()'s check of
	 * STACK_END_MAGIC, still read it as ours.
	 */
	if (KGO_CHECK_SWITCHES)
		WARN_ONCE(current->stack != m->own_stack,
			  "kgo: M %llu back from G %llu with current->stack %px, not its own\n",
			  m->id, g->goid, current->stack);
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
		kgo_sched_lock_irqsave(sched, flags);
		kgo_globrunqput(sched, g);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
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
 * below) calls kgo_switch_finish() if it is not NULL. The M's own
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

/* The same, for a G that resumes in its M-path switch (below). */
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
	next = __kgo_runqget(p, &inherit, NULL);
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
	/*
	 * kgo_current(), not current: inlined into a G's function, current
	 * could be one loaded before an earlier switch, another M's task.
	 */
	kgo_current()->stack = next->stack;
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
 * Exported, yet here rather than in api.c, so that the direct switch
 * and its finish are inline in it: a yield is then one
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
EXPORT_SYMBOL_NS_GPL(kgo_yield, KGO_NS);

/* --- The switch through the M, and exit ---------------------------- */

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
	/*
	 * kgo_current(), not current: kgo_goexit() gets here after a park
	 * of its own (kgo_exitsyscall_park()), from which the G may resume
	 * on another M; with the kernel's current the compiler kept the
	 * task from before that park and stored to it. See below.
	 */
	kgo_current()->stack = m->own_stack;
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
	/* kgo_go_wg(): the G's function, and its module, are behind it now. */
	if (g->wg)
		kgo_wg_add(g->wg, -1);	/* kgo_wg_done(), named for callgraph.py */
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

/*
 * A yield or park the direct path declined (kgo_yield(), kgo_park_m()):
 * through the M, whose loop acts on @req. Context: a G,
 * interrupts off.
 */
void kgo_switch_via_m(struct kgo_m *m, int req)
{
	m->req = req;
	kgo_switch_to_m_irqsoff(m, m->curg);
}

/* kgo_preempt_check_m() when the G is to be preempted. */
struct kgo_m *kgo_preempt_now(struct kgo_m *m)
{
	kgo_switch_check(m, "preempt");
	m->req = KGO_REQ_PREEMPT;
	kgo_switch_to_m(m, m->curg);
	return kgo_g_m();
}

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

/* Exported, yet here with kgo_goexit(), which it is. */
void kgo_exit(void)
{
	struct kgo_m *m = in_task() ? kgo_this_m() : NULL;

	if (WARN_ONCE(!m || !m->curg, "%s() outside a goroutine\n", __func__))
		return;
	m = kgo_exiting_m();
	kgo_goexit(m, m->curg);
}
EXPORT_SYMBOL_NS_GPL(kgo_exit, KGO_NS);
