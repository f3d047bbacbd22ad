// SPDX-License-Identifier: GPL-2.0
/*
 * Which Ps run goroutines: those of the online CPUs, at most
 * kgo_gomaxprocs() of them (the first ones, by CPU number).
 *
 * A P is started by putting it on the idle list, where kgo_wakep() finds
 * it. Stopping one (OFFLINE) moves its queued Gs to the global queue; who
 * does it depends on the P's state, since only its holder may touch its
 * ring:
 *   IDLE     here, under sched.lock: nobody holds it;
 *   SYSCALL  here, once we have taken it from its blocked M (block.c);
 *   RUNNING  its M, at its next look for work: we set p->stopreq and
 *            wait (kgo_p_stop_held() in sched.c).
 * A G that runs without ever calling kgo holds up a stop, as it holds up
 * everything else on its P.
 *
 * CPU hotplug: the offline callback runs once the CPU no longer takes new
 * tasks, and stops its P before it returns; the kernel moves Ms of that
 * CPU that run meanwhile to other CPUs, and they bind themselves to
 * their CPU again when it is back (kgo_m_rebind()). Ms asleep stay
 * asleep. The online callback starts the P again.
 *
 * Lock order: the CPU hotplug lock -> kgo_procs_lock -> sched.lock.
 *
 * PREEMPT_RT: sched.lock is raw, and the loops under it here walk the
 * Ps, as many as the CPUs. An M inside a spinlock_t section on RT is
 * migrate-disabled, and a CPU going offline waits for it to leave the
 * section; an M that binds itself to a CPU going offline is not moved
 * there (kgo_m_rebind() in idle.c).
 */

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/wait.h>

#include <kgo.h>
#include "block.h"
#include "g.h"
#include "procs.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"

static int maxprocs;
module_param(maxprocs, int, 0444);
MODULE_PARM_DESC(maxprocs, "Ps to run goroutines on (GOMAXPROCS); 0: one per online CPU");

static DEFINE_MUTEX(kgo_procs_lock);
static int kgo_procs_want;		/* kgo_procs_lock: 0 for every CPU */
static int kgo_cpuhp_state = -1;

/*
 * Stops @p now if nobody runs it; else asks its M to. Adds the Gs it
 * moved to the global queue to *@moved. Context: sched->lock held.
 * Return: whether @p is OFFLINE.
 */
static bool kgo_p_stop_locked(struct kgo_sched *sched, struct kgo_p *p, u32 *moved)
{
	struct kgo_m *m;
	u32 before;

	lockdep_assert_held(&sched->lock);
	switch (READ_ONCE(p->status)) {
	case KGO_P_OFFLINE:
		return true;
	case KGO_P_IDLE:
		kgo_pidleget_exact(sched, p);
		break;
	case KGO_P_SYSCALL:
		m = READ_ONCE(p->blocked_m);
		if (m && cmpxchg(&p->blocked_m, m, NULL) == m) {
			p->m = NULL;
			before = sched->runqsize;
			kgo_runq_drain(sched, p);
			*moved += sched->runqsize - before;
			break;
		}
		fallthrough;	/* its M woke and kept it */
	default:
		p->stopreq = true;
		return false;
	}
	p->stopreq = false;
	WRITE_ONCE(p->status, KGO_P_OFFLINE);
	WRITE_ONCE(sched->gomaxprocs, sched->gomaxprocs - 1);
	return true;
}

static void kgo_p_stop(struct kgo_sched *sched, struct kgo_p *p)
{
	u32 moved = 0;
	bool done;

	for (;;) {
		kgo_sched_lock_irq(sched);
		done = kgo_p_stop_locked(sched, p, &moved);
		raw_spin_unlock_irq(&sched->lock);
		if (done)
			break;
		/*
		 * Its M stops it and wakes us; if that M blocks in the kernel
		 * meanwhile, the next round takes the P from it.
		 */
		wait_event_timeout(sched->pstop_wq,
				   READ_ONCE(p->status) == KGO_P_OFFLINE,
				   msecs_to_jiffies(1));
	}
	if (moved)
		kgo_start_idle(sched, moved);
}

/* Context: sched->lock held. */
static void kgo_p_start_locked(struct kgo_sched *sched, struct kgo_p *p)
{
	lockdep_assert_held(&sched->lock);
	p->stopreq = false;	/* a stop not yet carried out is void */
	if (READ_ONCE(p->status) != KGO_P_OFFLINE)
		return;
	WRITE_ONCE(sched->gomaxprocs, sched->gomaxprocs + 1);
	kgo_pidleput(sched, p);
}

/*
 * Runs the Ps of the first kgo_procs_want online CPUs, except
 * @dying_cpu, and stops the others. Starts before it stops, so that
 * goroutines always have somewhere to go.
 * Context: kgo_procs_lock and the CPU hotplug lock held.
 */
static void kgo_procs_apply(struct kgo_sched *sched, int dying_cpu)
{
	int want = kgo_procs_want ? kgo_procs_want : INT_MAX;
	int i, n = 0;
	u32 queued;

	lockdep_assert_held(&kgo_procs_lock);
	kgo_sched_lock_irq(sched);
	for (i = 0; i < sched->nprocs; i++) {
		struct kgo_p *p = sched->allp[i];

		p->enabled = cpu_online(p->cpu) && p->cpu != dying_cpu && n < want;
		if (p->enabled) {
			n++;
			kgo_p_start_locked(sched, p);
		}
	}
	raw_spin_unlock_irq(&sched->lock);

	for (i = 0; i < sched->nprocs; i++)
		if (!sched->allp[i]->enabled)
			kgo_p_stop(sched, sched->allp[i]);

	queued = READ_ONCE(sched->runqsize);
	if (queued)
		kgo_start_idle(sched, queued);
}

static int kgo_cpu_online(unsigned int cpu)
{
	mutex_lock(&kgo_procs_lock);
	kgo_procs_apply(&kgo_sched, -1);
	mutex_unlock(&kgo_procs_lock);
	return 0;
}

static int kgo_cpu_offline(unsigned int cpu)
{
	mutex_lock(&kgo_procs_lock);
	kgo_procs_apply(&kgo_sched, cpu);
	mutex_unlock(&kgo_procs_lock);
	return 0;
}

int kgo_gomaxprocs(int n)
{
	bool block;
	int prev;

	might_sleep();
	if (n <= 0)
		return READ_ONCE(kgo_sched.gomaxprocs);
	/* From a goroutine: let its own P go, in case that one stops. */
	block = kgo_block_begin_unless_inside();
	cpus_read_lock();
	mutex_lock(&kgo_procs_lock);
	prev = READ_ONCE(kgo_sched.gomaxprocs);
	kgo_procs_want = n;
	kgo_procs_apply(&kgo_sched, -1);
	mutex_unlock(&kgo_procs_lock);
	cpus_read_unlock();
	if (block)
		kgo_block_end();
	return prev;
}
EXPORT_SYMBOL_NS_GPL(kgo_gomaxprocs, KGO_NS);

int kgo_procs_check_params(void)
{
	/* kgo_sched_init() makes a P per possible CPU. */
	if (maxprocs < 0 || maxprocs > num_possible_cpus()) {
		pr_err("maxprocs=%d: must be 0 (every CPU) to %u\n", maxprocs,
		       num_possible_cpus());
		return -EINVAL;
	}
	return 0;
}

int kgo_procs_init(void)
{
	int ret;

	cpus_read_lock();
	mutex_lock(&kgo_procs_lock);
	kgo_procs_want = maxprocs;
	kgo_procs_apply(&kgo_sched, -1);
	mutex_unlock(&kgo_procs_lock);
	ret = cpuhp_setup_state_nocalls_cpuslocked(CPUHP_AP_ONLINE_DYN, "kgo:online",
						   kgo_cpu_online, kgo_cpu_offline);
	cpus_read_unlock();
	if (ret < 0)
		return ret;
	kgo_cpuhp_state = ret;
	return 0;
}

void kgo_procs_exit(void)
{
	if (kgo_cpuhp_state >= 0)
		cpuhp_remove_state_nocalls(kgo_cpuhp_state);
	kgo_cpuhp_state = -1;
}
