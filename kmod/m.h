/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_M_H
#define _KGO_M_H

#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/types.h>

#include "check.h"
#include "compat.h"

struct kgo_g;
struct kgo_p;
struct kgo_sched;

/* What a G asks of its M when it switches back to the M's own stack. */
enum kgo_mreq {
	KGO_REQ_NONE,
	KGO_REQ_YIELD,
	KGO_REQ_PARK,
	KGO_REQ_EXIT,
	KGO_REQ_PREEMPT,	/* ran past its slice: to the global queue */
	KGO_REQ_EXITSYSCALL,	/* lost its P while blocked: queue it, park */
};

/*
 * An M: a kthread bound to one CPU that runs Gs while it holds that
 * CPU's P. Its own kthread stack is the scheduler stack (Go's g0): the
 * M's loop runs there, and every G switches back to it to yield, park
 * or exit. Field rules (locking.h): I, O (this M's kthread), L, and X
 * (the monitor reads it under affinity_lock).
 */
struct kgo_m {
	struct task_struct *task;	/* I */
	struct kgo_sched *sched;	/* I */
	struct kgo_p *home;		/* I: the P of its CPU */
	u64 id;				/* I */
	void *own_stack;		/* I: task->stack as the kernel made it */
	unsigned long g0_sp;		/* O: saved %rsp of the scheduler loop */

	struct kgo_p *p;		/* O: the P held, or NULL */
	struct kgo_g *curg;		/* O: the G running, or NULL */
	bool spinning;			/* O: counted in sched->nmspinning */
	enum kgo_mreq req;		/* O: set by curg before switching back */
	u64 rand;			/* O: steal-order PRNG state */
	unsigned int memalloc_base;	/* O: PF_MEMALLOC* flags at start */
	bool insyscall;			/* O: blocked with its P in SYSCALL */
	bool blocking;			/* O: inside kgo_block_begin/end */
	/*
	 * A hog whose P was taken (hog.c) may run anywhere until it next
	 * holds a P or parks: the monitor lets it go, the M binds itself
	 * home again (kgo_m_settle() in sched.c).
	 */
	bool relieved;			/* X: taken from, not yet settled */
	struct mutex affinity_lock;	/* the monitor's unbind vs the M's rebind */
#ifdef CONFIG_PREEMPT_NOTIFIERS
	struct preempt_notifier pn;	/* O: tells us when it blocks */
#endif

	struct list_head idle_node;	/* L: on home->midle */
	struct list_head all_node;	/* L: on sched->allm */
	/*
	 * The hand-over. Written under L by whoever takes the M off midle
	 * (kgo_m_wake()) or creates it, before woken; the M reads them
	 * without the lock once kgo_m_park() has seen woken (acquire, with
	 * the waker's release), and they are its own until it goes on
	 * midle again.
	 */
	struct kgo_p *nextp;		/* P handed over by kgo_startm() */
	bool nextp_spinning;
	bool nextp_relief;		/* nextp is still a hog's (hog.c) */
	bool nextp_spare;		/* created with no P: park (kgo_newm_spare) */
	bool woken;			/* L, release: a wake-up is pending */
	unsigned long idle_since;	/* L: jiffies when it went on midle */
	struct rcu_head rcu;		/* freed after readers (debugfs.c) */
};

void kgo_g_p_check(struct kgo_m *m, struct kgo_p *p);

/**
 * kgo_g_p_get() - the P of the calling G's M, pinned
 * @m: the M running the calling G
 *
 * A G may lose its P whenever it can be switched out: asleep in the
 * kernel (block.c) or preempted by the kernel's scheduler (hog.c). So
 * a G reads m->p only here, and uses the P only until kgo_g_p_put(),
 * with preemption off and without sleeping in between. The M's own
 * loop, which runs with no G, is not bound by this.
 *
 * Return: the P, pinned; or NULL, not pinned, if the M holds none.
 */
static inline struct kgo_p *kgo_g_p_get(struct kgo_m *m)
{
	struct kgo_p *p;

	preempt_disable();
	p = READ_ONCE(m->p);
	if (!p) {
		preempt_enable();
		return NULL;
	}
	if (KGO_CHECK_SWITCHES)
		kgo_g_p_check(m, p);
	return p;
}

static inline void kgo_g_p_put(void)
{
	preempt_enable();
}

/* The M that last switched to a goroutine on each CPU: see m.c. */
DECLARE_PER_CPU(struct kgo_m *, kgo_cpu_m);
struct kgo_m *kgo_this_m_slow(void);

/**
 * kgo_this_m() - the M the caller runs on
 *
 * Inline, with the hint's check (m.c): every kgo call makes it, and a
 * call would cost it a call, a return and the return thunk.
 *
 * Context: process (in interrupt context current is whatever was
 * interrupted: callers check in_task() first).
 * Return: the M, or NULL if current is not one of kgo's kthreads.
 */
static __always_inline struct kgo_m *kgo_this_m(void)
{
	struct kgo_m *m;
	bool mine;

	/* An RCU read-side section: the M named may be exiting (m.c). */
	preempt_disable_notrace();
	m = __this_cpu_read(kgo_cpu_m);
	/* Afresh: the caller may be a G that switched since (compat.h). */
	mine = m && READ_ONCE(m->task) == kgo_current();
	preempt_enable_notrace();
	return likely(mine) ? m : kgo_this_m_slow();
}

/*
 * The M running the calling G, or NULL outside a G. The M may hold no P
 * (block.c, hog.c): callers that would use the P take it with
 * kgo_g_p_get(). NULL too inside kgo_block_begin/end: there m->p may
 * name a P handed to another M already (only kgo_block_end() learns),
 * and the M loop would run on it if the G switched; so to every kgo
 * call the G is a thread until kgo_block_end(), which blocks the task
 * instead of switching and queues what it readies or spawns from
 * outside. Stale once the G switches: a caller that looked it up
 * once passes it down the calls it makes before its next switch
 * (kgo_ready_m(), kgo_park_m(), the channel and waiter paths), rather
 * than have each look it up again. Inline: every kgo call makes it.
 */
static inline struct kgo_m *kgo_g_m(void)
{
	struct kgo_m *m;

	if (!kgo_in_task())
		return NULL;
	m = kgo_this_m();
	return m && m->curg && !m->blocking ? m : NULL;
}

/*
 * The G running on @m, for a thread that is not @m and that follows the
 * pointer (the monitor marks it). That G may exit meanwhile, and G
 * structs go back to a SLAB_TYPESAFE_BY_RCU cache (g.c): only inside an
 * RCU read-side section is the struct still a G, never a freed page.
 * Lockdep says so on a PROVE_RCU kernel, where a caller without it is a
 * "suspicious RCU usage" report (which fails a test run).
 */
static inline struct kgo_g *kgo_m_curg_remote(const struct kgo_m *m)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(),
			 "kgo: another M's running G followed outside RCU");
	return READ_ONCE(m->curg);
}

/*
 * Sets this CPU's hint to @m. Context: the M, about to switch to a
 * goroutine, interrupts off (so the CPU cannot change under the per-CPU
 * write).
 */
static inline void kgo_m_ran_here(struct kgo_m *m)
{
	lockdep_assert_irqs_disabled();
	__this_cpu_write(kgo_cpu_m, m);
}

int kgo_m_create(struct kgo_p *home, struct kgo_p *p, bool spinning, bool relief);
void kgo_m_park(struct kgo_m *m);
void kgo_m_wake(struct kgo_m *m, struct kgo_p *p, bool spinning);
int kgo_m_init(void);

/* Module parameter max_ms_per_cpu: the most Ms a CPU may have (m.c). */
extern unsigned int kgo_max_ms;

#endif /* _KGO_M_H */
