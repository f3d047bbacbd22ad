// SPDX-License-Identifier: GPL-2.0
/*
 * The monitor: Go's sysmon, one kthread that holds no P.
 *
 * Every tick it looks at each P:
 *  - a P whose M has slept in the kernel for handoff_us is handed off
 *    (kgo_retake(), block.c): every such P in the same tick, each to
 *    an M of its CPU, a parked one if any (block.c keeps one spare);
 *  - a P that has run the same time slice (the same schedtick) for
 *    slice_ms has its running G marked: the G yields at its next kgo
 *    call (kgo_preempt_point(), a blocking channel operation, ...).
 *    kgo cannot stop a G between two kgo calls, as Go 1.14+ can with a
 *    signal. If the G is still in that slice one slice later, its M
 *    ran for half of it, and Gs wait, another M takes its P, and the
 *    kernel shares the CPU between the two Ms (hog.c).
 *  - with CONFIG_PREEMPT_NOTIFIERS off, nothing marks a blocked M
 *    (block.c); a P whose M sleeps with Gs queued gets a spinning M
 *    woken to steal them.
 *  - a P whose running G readied another into runnext and has gone on
 *    since the last tick pays the wake-up it deferred (sched.c, rule 5).
 * and once a second it stops Ms that have been idle for m_idle_ms,
 * keeping one per CPU: it takes them off its lists and tells them to
 * exit, and a work item waits for them (kgo_monitor_reaper_fn()).
 *
 * The tick starts at 20 us and doubles after 50 idle ticks, up to 10 ms,
 * as in Go. With every P idle the monitor sleeps until a P gets busy
 * (kgo_pidleget() wakes it at the next tick), so an idle kgo costs no
 * CPU. It then goes on at the tick it had, as Go's sysmon does after a
 * sleep that no system call cut short: only a tick that acted, or an M
 * that blocked (kgo_monitor_kick()), brings it back to 20 us. A server
 * whose Ps go idle between requests (issue 17's 100 connections) had
 * it start over at 20 us after every such sleep: 50 fast ticks each
 * time, 118,000 wake-ups of the monitor for 290,000 messages on one
 * CPU, each a context switch in and out for nothing.
 *
 * PREEMPT_RT: the kick is a HARD irq_work (all it does is wake the
 * monitor, as hardirq may there), where another would run in a
 * kthread, a wake-up more. Under sched.lock, raw on RT, the reap walks
 * one CPU's Ms idle past m_idle_ms at a time (at most max_ms_per_cpu),
 * once a second, and sends them to exit; a work item waits for them
 * and frees them, with no lock held.
 */

#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>

#include "block.h"
#include "g.h"
#include "hog.h"
#include "m.h"
#include "monitor.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"

#define KGO_MON_MIN_US		20
#define KGO_MON_MAX_US		10000
#define KGO_MON_IDLE_TICKS	50
#define KGO_MON_KICK_US		200	/* ticks slower than this get kicked */

#define KGO_SLICE_MS_MAX	10000

/* Writable: the monitor reads it afresh at every look at a P. */
static int kgo_param_set_slice(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n < 1 || n > KGO_SLICE_MS_MAX)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static const struct kernel_param_ops kgo_slice_ops = {
	.set = kgo_param_set_slice,
	.get = param_get_uint,
};

static unsigned int slice_ms = 10;
module_param_cb(slice_ms, &kgo_slice_ops, &slice_ms, 0644);
MODULE_PARM_DESC(slice_ms,
		 "A goroutine running this long is preempted at its next kgo call; one that makes none loses its P a slice later (1-10000)");

static unsigned int handoff_us = 20;
module_param(handoff_us, uint, 0444);
MODULE_PARM_DESC(handoff_us, "A P whose M has blocked this long goes to another M (1-1000000)");

static unsigned int m_idle_ms = 5000;
module_param(m_idle_ms, uint, 0444);
MODULE_PARM_DESC(m_idle_ms, "Stop an idle M after this long, keeping one per CPU (10-3600000)");

int kgo_monitor_check_params(void)
{
	if (slice_ms < 1 || slice_ms > KGO_SLICE_MS_MAX) {
		pr_err("slice_ms=%u: must be 1 to 10000\n", slice_ms);
		return -EINVAL;
	}
	if (handoff_us < 1 || handoff_us > 1000000) {
		pr_err("handoff_us=%u: must be 1 to 1000000\n", handoff_us);
		return -EINVAL;
	}
	if (kgo_max_ms < 2 || kgo_max_ms > 10000) {
		pr_err("max_ms_per_cpu=%u: must be 2 to 10000\n", kgo_max_ms);
		return -EINVAL;
	}
	if (m_idle_ms < 10 || m_idle_ms > 3600000) {
		pr_err("m_idle_ms=%u: must be 10 to 3600000\n", m_idle_ms);
		return -EINVAL;
	}
	return 0;
}

unsigned int kgo_slice_ms(void)
{
	return READ_ONCE(slice_ms);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_slice_ms);

/*
 * The CPU time @m's kthread has had, in ns. A hint, read racily: the
 * scheduler updates it at its ticks and switches, unmarked.
 */
static u64 kgo_m_cputime(const struct kgo_m *m)
{
	/* Unmarked writes by the scheduler: a hint, as said above. */
	return data_race(m->task->se.sum_exec_runtime);
}

/*
 * Marks the G running on @p if it has had the same slice too long; a
 * slice later, if it still has, has its P taken (hog.c).
 */
static bool kgo_monitor_preempt(struct kgo_p *p, u64 now)
{
	u64 slice = (u64)kgo_slice_ms() * NSEC_PER_MSEC;
	u32 tick = READ_ONCE(p->schedtick);
	struct kgo_m *m;
	struct kgo_g *g;
	u64 goid;

	if (p->mon_schedtick != tick) {
		p->mon_schedtick = tick;
		WRITE_ONCE(p->mon_schedwhen, now);
		return false;
	}
	if (now < p->mon_schedwhen + slice)
		return false;
	/*
	 * Gs queued behind one that ran its slice: until it next calls kgo
	 * they can only run elsewhere, so call a thief over if a P is idle.
	 */
	if (!kgo_runqempty(p) && atomic_read(&p->sched->npidle))
		kgo_wakep();
	/*
	 * Racy, as in Go's preemptone(): the G may have just switched out,
	 * and then another one gets a spurious early yield. Ms are freed
	 * only by this thread, but a G that exits may go back to its slab
	 * (g.c), a SLAB_TYPESAFE_BY_RCU cache: only inside an RCU read-side
	 * section is the struct read here still a G, the one that exited or
	 * a new goroutine reusing it, never a freed page. The G is known by
	 * its goid, read while it is still the M's curg: a struct reused
	 * for another goroutine is another G, with a slice of its own.
	 */
	rcu_read_lock();
	m = READ_ONCE(p->m);
	g = m ? kgo_m_curg_remote(m) : NULL;
	goid = g ? READ_ONCE(g->goid) : 0;
	smp_rmb();	/* the goid read above, before curg is read again */
	if (!g || kgo_m_curg_remote(m) != g) {
		rcu_read_unlock();
		return false;
	}
	if (!READ_ONCE(g->preempt) || goid != p->mon_markgoid) {
		/*
		 * Should g have exited since the check, the mark lands on a
		 * dead G (cleared at reuse) or on the goroutine that reuses
		 * it: a spurious yield at worst, never a freed page.
		 */
		WRITE_ONCE(g->preempt, true);
		rcu_read_unlock();
		p->mon_markgoid = goid;
		p->mon_markwhen = now;
		p->mon_markrun = kgo_m_cputime(m);
		kgo_hog_prepare(p->sched, p);
		return true;
	}
	rcu_read_unlock();
	/*
	 * This G, marked a whole slice ago, and no kgo call since: a hog.
	 * Counted from its own mark, not from the slice's start: a G taken
	 * from runnext inherits a slice that may be long over (sched.c),
	 * and is marked at once; it has not ignored anything yet.
	 */
	if (now < p->mon_markwhen + slice)
		return false;
	/*
	 * And it ran: half a slice of CPU since the mark at least (the
	 * count lags by up to a tick). An M that the kernel switched out
	 * for other tasks is no hog, and a relief would only add an M to
	 * the same CPU: kgo_echo's Ms, preempted by the load generator,
	 * got one, and a third M on that CPU. The G yields at its next kgo
	 * call once its M runs again.
	 */
	if (kgo_m_cputime(m) - p->mon_markrun < slice / 2)
		return false;
	return kgo_hog_relieve(p->sched, p, tick);
}

/* Without a notifier: call thieves to a P whose M sleeps with Gs queued. */
static bool kgo_monitor_call_thieves(struct kgo_p *p, u64 now)
{
	struct kgo_m *m;

	if (IS_ENABLED(CONFIG_PREEMPT_NOTIFIERS) || kgo_runqempty(p) ||
	    now < READ_ONCE(p->mon_schedwhen) + (u64)handoff_us * NSEC_PER_USEC)
		return false;
	m = READ_ONCE(p->m);
	if (!m || task_is_running(m->task))
		return false;
	kgo_wakep();
	return true;
}

/*
 * Rule 5's backstop (sched.c): a G readied into runnext by a G that has
 * run on since, without a switch or a channel operation, for a whole
 * tick. Its deferred wake-up is paid here: a thief may take it, as it
 * could have at once before the wake-up was deferred.
 */
static bool kgo_monitor_wakep_due(struct kgo_p *p)
{
	u32 seq = READ_ONCE(p->wakeseq);

	if (seq != p->mon_wakeseq) {	/* a new one, or none: look next tick */
		p->mon_wakeseq = seq;
		p->mon_wakepaid = false;
		return false;
	}
	if (!READ_ONCE(p->wakep_due) || p->mon_wakepaid)
		return false;
	p->mon_wakepaid = true;		/* once per deferral */
	kgo_wakep();
	return true;
}

/*
 * The fresh stack's bound on waiting (runq.c): while it holds Gs, if
 * neither its oldest G nor the ring's head changed for
 * KGO_FRESH_AGE_SLICES slices, the ring's head (or if none, that oldest
 * G) is taken next. Each such take in a spawn tree starts another
 * subtree while the current one is open, and so adds up to a stack per
 * level to the tree's peak: one per slice would hold more stacks than
 * Go's order after a second. Ten slices bound the wait at 100 ms by
 * default and keep a 2^20-node tree within a few thousand stacks.
 */
#define KGO_FRESH_AGE_SLICES	10

static bool kgo_monitor_fresh_age(struct kgo_p *p, u64 now)
{
	u64 slice = (u64)kgo_slice_ms() * NSEC_PER_MSEC * KGO_FRESH_AGE_SLICES;
	u32 head = READ_ONCE(p->freshhead) ^ READ_ONCE(p->runqhead);

	if (head != p->mon_freshhead || !kgo_fresh_len(p)) {
		p->mon_freshhead = head;
		p->mon_freshwhen = now;
		return false;
	}
	if (now < p->mon_freshwhen + slice || READ_ONCE(p->fresh_aged))
		return false;
	p->mon_freshwhen = now;
	WRITE_ONCE(p->fresh_aged, true);
	return true;
}

/* One look at every P; returns whether anything was done. */
static bool kgo_monitor_tick(struct kgo_sched *sched)
{
	u64 now = ktime_get_mono_fast_ns();
	bool acted = false;
	int i;

	for (i = 0; i < sched->nprocs; i++) {
		struct kgo_p *p = sched->allp[i];

		acted |= kgo_hog_unbind(sched, p);
		switch (READ_ONCE(p->status)) {
		case KGO_P_SYSCALL:
			acted |= kgo_retake(sched, p, now,
					    (u64)handoff_us * NSEC_PER_USEC);
			break;
		case KGO_P_RUNNING:
			acted |= kgo_monitor_preempt(p, now);
			acted |= kgo_monitor_call_thieves(p, now);
			acted |= kgo_monitor_wakep_due(p);
			acted |= kgo_monitor_fresh_age(p, now);
			break;
		default:
			break;
		}
	}
	return acted;
}

/*
 * Ms the monitor has told to exit, for kgo_monitor_reaper_fn() to wait
 * for and free, linked through idle_node. Leaf lock, process context only.
 */
static LIST_HEAD(kgo_reaped);
static DEFINE_SPINLOCK(kgo_reaped_lock);

/*
 * Waits for the Ms kgo_monitor_reap() stopped, and frees them. Not in
 * the monitor: each kthread_stop() waits for an M to be scheduled and
 * exit, and put_task_struct() may free its stack, some 5 ms of the
 * monitor's time per M on the debug kernel under TCG. A reap of 70 Ms
 * left by a burst of blocks kept it from ticking for 360 ms, and every
 * M that blocked meanwhile (eight BLOCK tasks of 20 ms) kept its P with
 * the goroutines queued there.
 */
static void kgo_monitor_reaper_fn(struct work_struct *work)
{
	struct kgo_m *m, *tmp;
	LIST_HEAD(dead);

	spin_lock(&kgo_reaped_lock);
	list_splice_init(&kgo_reaped, &dead);
	spin_unlock(&kgo_reaped_lock);

	list_for_each_entry_safe(m, tmp, &dead, idle_node) {
		kthread_stop(m->task);
		put_task_struct(m->task);
		kfree_rcu(m, rcu);	/* debugfs may be reading it */
	}
}

static DECLARE_WORK(kgo_monitor_reaper, kgo_monitor_reaper_fn);

/*
 * Stops the Ms that have been idle for m_idle_ms, keeping the most
 * recently parked one of each CPU. Does not wait for them to exit.
 */
static void kgo_monitor_reap(struct kgo_sched *sched)
{
	unsigned long ttl = msecs_to_jiffies(m_idle_ms);
	struct kgo_m *m;
	LIST_HEAD(dead);
	int i;

	/*
	 * The lock a P at a time: a section walks one CPU's idle Ms, not
	 * every CPU's (raw on PREEMPT_RT, it must stay short).
	 */
	for (i = 0; i < sched->nprocs; i++) {
		struct kgo_p *p = sched->allp[i];

		kgo_sched_lock_irq(sched);
		/* midle is newest first: the oldest is at the tail. */
		while (p->nmidle > 1) {
			m = list_last_entry(&p->midle, struct kgo_m, idle_node);
			if (time_before(jiffies, m->idle_since + ttl))
				break;
			list_del_init(&m->idle_node);
			p->nmidle--;
			p->mcount--;
			sched->mcount--;
			/*
			 * debugfs may be walking allm through m under RCU:
			 * all_node keeps pointing into allm, and the dead
			 * list links idle_node.
			 */
			list_del_rcu(&m->all_node);
			list_add(&m->idle_node, &dead);
			kgo_m_wake(m, NULL, false);	/* makes it exit */
		}
		raw_spin_unlock_irq(&sched->lock);
	}
	if (list_empty(&dead))
		return;

	spin_lock(&kgo_reaped_lock);
	list_splice_tail(&dead, &kgo_reaped);
	spin_unlock(&kgo_reaped_lock);
	queue_work(system_unbound_wq, &kgo_monitor_reaper);
}

/*
 * Sleeps while every P is idle and nothing else is due: until
 * kgo_pidleget() wakes us, or a second if idle Ms may expire.
 */
static void kgo_monitor_idle(struct kgo_sched *sched)
{
	bool spare = false;
	int i;

	kgo_sched_lock_irq(sched);
	if (atomic_read(&sched->npidle) != sched->gomaxprocs) {
		raw_spin_unlock_irq(&sched->lock);
		return;
	}
	/* Ms that kgo_monitor_reap() will stop: wake up for them. */
	for (i = 0; i < sched->nprocs; i++)
		spare |= sched->allp[i]->nmidle > 1;
	sched->monitor_waiting = true;
	set_current_state(TASK_IDLE);
	raw_spin_unlock_irq(&sched->lock);
	if (!kthread_should_stop())
		schedule_timeout(spare ? HZ : MAX_SCHEDULE_TIMEOUT);
	__set_current_state(TASK_RUNNING);

	kgo_sched_lock_irq(sched);
	sched->monitor_waiting = false;
	raw_spin_unlock_irq(&sched->lock);
}

/*
 * An M just blocked while the monitor ticks slowly (block.c): wake it,
 * so that the handoff waits for handoff_us, not for a 10 ms tick.
 */
static void kgo_monitor_kick_fn(struct irq_work *work)
{
	struct kgo_sched *sched = &kgo_sched;

	WRITE_ONCE(sched->monitor_kicked, true);
	wake_up_process(sched->monitor);
}

/*
 * HARD: on PREEMPT_RT an irq_work not so marked runs in a per-CPU
 * kthread, one more wake-up before the monitor's. This one only wakes a
 * task, which hardirq may do there too.
 */
static struct irq_work kgo_monitor_kick_work = IRQ_WORK_INIT_HARD(kgo_monitor_kick_fn);

/*
 * A P got busy while the monitor slept: wake it at this CPU's next tick,
 * a lazy irq_work. Waking it at once, from the wake-up that made the P
 * busy (often a hardirq), put a second wake-up on that path, and the
 * monitor then ran before the M it was woken for. It is only needed a
 * slice later, to preempt; a blocked M kicks it sooner (above).
 */
static void kgo_monitor_busy_fn(struct irq_work *work)
{
	wake_up_process(kgo_sched.monitor);
}

/* Context: any, sched_out under the rq lock included. */
void kgo_monitor_kick(void)
{
	if (READ_ONCE(kgo_sched.monitor_delay_us) > KGO_MON_KICK_US)
		irq_work_queue(&kgo_monitor_kick_work);
}

/*
 * Sleeps about @us, less if kicked or stopped. TASK_IDLE: the monitor is
 * not load (usleep_range() would count, and would not wake early).
 */
static void kgo_monitor_sleep(unsigned int us)
{
	ktime_t t = ns_to_ktime((u64)us * NSEC_PER_USEC);

	set_current_state(TASK_IDLE);
	if (!kthread_should_stop() && !READ_ONCE(kgo_sched.monitor_kicked))
		schedule_hrtimeout_range(&t, us * NSEC_PER_USEC / 2, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

static int kgo_monitor_main(void *arg)
{
	struct kgo_sched *sched = arg;
	unsigned int idle = 0, delay = KGO_MON_MIN_US;
	unsigned long next_reap = jiffies + HZ;

	while (!kthread_should_stop()) {
		if (READ_ONCE(sched->monitor_kicked)) {
			WRITE_ONCE(sched->monitor_kicked, false);
			idle = 0;
		}
		if (!idle)
			delay = KGO_MON_MIN_US;
		else if (idle > KGO_MON_IDLE_TICKS)
			delay = min(delay * 2, KGO_MON_MAX_US);
		WRITE_ONCE(sched->monitor_delay_us, delay);
		kgo_monitor_sleep(delay);

		if (time_after(jiffies, next_reap)) {
			kgo_monitor_reap(sched);
			next_reap = jiffies + HZ;
		}
		if (kgo_monitor_tick(sched)) {
			idle = 0;
			continue;
		}
		idle++;
		if (idle > KGO_MON_IDLE_TICKS)
			kgo_monitor_idle(sched);
	}
	return 0;
}

int kgo_monitor_init(void)
{
	struct kgo_sched *sched = &kgo_sched;
	struct task_struct *t;

	sched->monitor_busy = IRQ_WORK_INIT_LAZY(kgo_monitor_busy_fn);
	t = kthread_create(kgo_monitor_main, sched, "kgo/monitor");
	if (IS_ERR(t))
		return PTR_ERR(t);
	get_task_struct(t);
	sched->monitor = t;
	wake_up_process(t);
	return 0;
}

void kgo_monitor_exit(void)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;

	kthread_stop(sched->monitor);
	/* No more wake-ups from kgo_pidleget(). */
	kgo_sched_lock_irqsave(sched, flags);
	sched->monitor_waiting = false;
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	irq_work_sync(&kgo_monitor_kick_work);
	irq_work_sync(&sched->monitor_busy);
	/* The Ms it stopped exit before their code goes (no more reaps). */
	flush_work(&kgo_monitor_reaper);
	put_task_struct(sched->monitor);
	sched->monitor = NULL;
}
