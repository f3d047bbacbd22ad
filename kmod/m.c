// SPDX-License-Identifier: GPL-2.0
/*
 * Ms: the kthreads that run goroutines. Each is bound to one CPU and
 * only ever holds that CPU's P (its "home"): a P is a CPU's right to run
 * goroutines, and binding keeps the work where the P's queue and caches
 * are. Ms are created on demand, when a P must run and none of its
 * CPU's Ms is idle (see kgo_startm()), and stopped at module unload.
 *
 * PREEMPT_RT: kgo_m_wake() wakes under sched.lock, raw there:
 * wake_up_process() takes only the task's and the run queue's raw
 * locks, which RT allows under it.
 */

#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/stackprotector.h>
#include <linux/topology.h>
#include <kunit/visibility.h>

#include "block.h"
#include "m.h"
#include "monitor.h"
#include "proc.h"
#include "sched.h"
#include "switch.h"
#include "trace.h"

/*
 * The canary every M runs with, see kgo_canary_swap(). get_random_canary()
 * is in <linux/random.h> up to 6.1 and in <linux/stackprotector.h> from
 * 6.2: both are included.
 */
static unsigned long kgo_canary;

static void kgo_m_forget(struct kgo_m *m);

/* Checked with the monitor's parameters (kgo_monitor_check_params()). */
unsigned int kgo_max_ms = 64;
module_param_named(max_ms_per_cpu, kgo_max_ms, uint, 0444);
MODULE_PARM_DESC(max_ms_per_cpu, "Most Ms (kthreads) per CPU (2-10000)");

/*
 * The kthread function. It swaps the canary, so it must not have a
 * protected frame itself; everything it calls is pushed with the shared
 * canary and popped before the original is put back.
 */
static __no_stack_protector int kgo_m_main(void *arg)
{
	struct kgo_m *m = arg;
	unsigned long own;

	preempt_disable();
	own = kgo_canary_swap(kgo_canary);
	preempt_enable();

	kgo_block_m_start(m);
	kgo_schedule(m);
	kgo_block_m_stop(m);
	kgo_m_forget(m);

	preempt_disable();
	kgo_canary_swap(own);
	preempt_enable();
	return 0;
}

/*
 * The M that last switched to a goroutine on each CPU (kgo_m_ran_here):
 * a hint, so that every kgo call finds its M with one per-CPU load and
 * a compare against current, not two calls into kthread.c. Several Ms
 * share a CPU (one runs, others blocked or idle), so the hint may name
 * another M; the compare tells, and the slow path corrects it. The M it
 * names may be exiting: Ms are freed after an RCU grace period
 * (kfree_rcu() in monitor.c; kgo_sched_exit() after synchronize_rcu()),
 * and the hint is read with preemption off, an RCU read-side section.
 * An exiting M clears the hints that name it (kgo_m_forget).
 */
DEFINE_PER_CPU(struct kgo_m *, kgo_cpu_m);
EXPORT_SYMBOL_IF_KUNIT(kgo_cpu_m);

/* kgo_this_m() when the hint does not name current. */
struct kgo_m *kgo_this_m_slow(void)
{
	struct kgo_m *m;

	if (!(current->flags & PF_KTHREAD) || kthread_func(current) != kgo_m_main)
		return NULL;
	m = kthread_data(current);
	this_cpu_write(kgo_cpu_m, m);
	return m;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_this_m_slow);

/*
 * Debug kernels: the P a G is about to use is its M's. Whoever holds a
 * P is its p->m; an M that lost its P (handoff, hog relief) finds m->p
 * NULL before its G may look (kgo_g_p_get()).
 */
void kgo_g_p_check(struct kgo_m *m, struct kgo_p *p)
{
	/* Racy on purpose: p->m is stable only if @m holds @p, as checked. */
	WARN_ONCE(data_race(p->m) != m, "kgo: M %llu uses P %d, held by another M\n",
		  m->id, p->id);
}

/* The M is exiting: no hint may name it once it is freed. */
static void kgo_m_forget(struct kgo_m *m)
{
	int cpu;

	for_each_possible_cpu(cpu)
		cmpxchg(per_cpu_ptr(&kgo_cpu_m, cpu), m, NULL);
}

/**
 * kgo_m_create() - start a new M on @home's CPU
 * @home: the P of the CPU it is bound to
 * @p: the P it starts holding (always @home), or NULL for a spare that
 *     parks at once (kgo_newm_spare())
 * @spinning: it starts spinning (counted in nmspinning already)
 * @relief: @p is held by a hog, which the M is to relieve (hog.c)
 *
 * Context: process, may sleep; not under sched->lock.
 * Return: 0 or -errno.
 */
int kgo_m_create(struct kgo_p *home, struct kgo_p *p, bool spinning, bool relief)
{
	struct kgo_sched *sched = home->sched;
	struct task_struct *task;
	unsigned long flags;
	struct kgo_m *m;

	m = kzalloc_node(sizeof(*m), GFP_KERNEL, cpu_to_node(home->cpu));
	if (!m)
		return -ENOMEM;
	m->sched = sched;
	m->home = home;
	kgo_count(KGO_COUNT_SHARED_RMW);
	m->id = atomic64_inc_return(&sched->mcreated);
	m->rand = get_random_u64() | 1;
	INIT_LIST_HEAD(&m->idle_node);
	mutex_init(&m->affinity_lock);
	task = kthread_create_on_node(kgo_m_main, m, cpu_to_node(home->cpu),
				      "kgo/%d:%llu", home->cpu, m->id);
	if (IS_ERR(task)) {
		kfree(m);
		return PTR_ERR(task);
	}
	kthread_bind(task, home->cpu);
	get_task_struct(task);	/* kgo_sched_exit() stops it */
	m->task = task;
	m->own_stack = task->stack;

	kgo_sched_lock_irqsave(sched, flags);
	list_add_tail_rcu(&m->all_node, &sched->allm);	/* debugfs reads it under RCU */
	sched->mcount++;
	home->mcount++;
	/* Only kgo_newm_workfn() creates, checking the cap first. */
	WARN_ON_ONCE(home->mcount > kgo_max_ms);
	m->nextp = p;
	m->nextp_spinning = spinning;
	m->nextp_relief = relief;
	m->nextp_spare = !p;
	if (!p)
		home->mtransit++;	/* until its kgo_stopm() */
	m->woken = true;
	raw_spin_unlock_irqrestore(&sched->lock, flags);

	if (home->cpu != raw_smp_processor_id())
		kgo_count(KGO_COUNT_XCPU_WAKE);
	wake_up_process(task);
	return 0;
}

/*
 * Sleeps until kgo_m_wake(). TASK_IDLE: a parked M neither counts as
 * load nor looks like a hung task. Pairs with kgo_m_wake(): the store of
 * woken there is ordered before the wake-up, and set_current_state()
 * orders our state before the load of woken. The load is an acquire,
 * the store a release: what the waker handed over (m->nextp...) is
 * then ours to read without sched.lock (kgo_take_nextp()).
 */
void kgo_m_park(struct kgo_m *m)
{
	trace_kgo_m_park(m->id, m->home->cpu);
	for (;;) {
		set_current_state(TASK_IDLE);
		/* Pairs with the release in kgo_m_wake(): m->nextp... are ours. */
		if (smp_load_acquire(&m->woken))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

/**
 * kgo_m_wake() - hand @p to the parked @m and wake it
 * @m: an M taken off its home's midle list
 * @p: the P it is to hold (its home), or NULL to make it exit
 * @spinning: it is to start spinning
 *
 * Context: sched->lock held (any context: wake_up_process() nests).
 */
void kgo_m_wake(struct kgo_m *m, struct kgo_p *p, bool spinning)
{
	lockdep_assert_held(&m->sched->lock);
	trace_kgo_m_wake(m->id, m->home->cpu, p ? p->id : -1);
	m->nextp = p;
	m->nextp_spinning = spinning;
	/* Publishes m->nextp...: pairs with the acquire in kgo_m_park(). */
	smp_store_release(&m->woken, true);
	/* An M's CPU is its home: from any other, likely an IPI (count.h). */
	if (m->home->cpu != raw_smp_processor_id())
		kgo_count(KGO_COUNT_XCPU_WAKE);
	wake_up_process(m->task);
}

int kgo_m_init(void)
{
	kgo_canary = get_random_canary();
	return 0;
}
