/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_SCHED_H
#define _KGO_SCHED_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "count.h"
#include "g.h"
#include "idle.h"
#include "m.h"
#include "proc.h"
#include "switch.h"

struct kgo_m;
struct kgo_p;

/*
 * The global scheduler state (Go's schedt). Field rules (locking.h): I,
 * L (this lock; "racy" fields are also read without it as hints), A.
 *
 * Laid out in cache lines by who writes them. Every acquisition of lock
 * takes its line, and every readiness from outside a P acquires it; a
 * field read on every yield, park or spawn must not be in that line, or
 * each such readiness would steal it from every CPU reading it. So the
 * read-mostly fields, the atomics kgo_wakep() reads, and the rest each
 * start a line of their own (____cacheline_aligned_in_smp); lock and
 * what it guards come first, the struct being aligned as its most
 * aligned member.
 */
struct kgo_sched {
	/*
	 * Taken with interrupts off: kgo_ready() and kgo_go() from hardirq
	 * put Gs on the global queue. Lock order: sched->lock, then the
	 * scheduler's wake-ups (the rq lock inside wake_up_process()).
	 * Raw: on PREEMPT_RT it is taken from a HARD hrtimer, the sched_in
	 * notifier and with a P pinned, so its sections stay bounded
	 * (sched.c, "Lock order").
	 */
	raw_spinlock_t lock;

	struct kgo_gqueue runq;		/* L: the global run queue */
	u32 runqsize;			/* L, racy */
	struct kgo_p *pidle;		/* L: idle Ps, a stack through p->link */
	struct list_head allm;		/* L: every M */
	unsigned int mcount;		/* L */

	/*
	 * L: global free Gs (Go's sched.gFree), a stack of batches as Ps
	 * spill them, so that a P takes a batch back without walking it
	 * under the lock (g.c).
	 */
	struct kgo_g *gfree;
	unsigned int ngfree;		/* L, racy */
	/*
	 * PREEMPT_RT only: fresh G structs for spawns where nothing may be
	 * allocated (g.c's reserve), a stack through schedlink.
	 */
	struct kgo_g *greserve;		/* L */
	unsigned int ngreserve;		/* L, racy */

	/*
	 * RUNNABLE Gs whose first run found no stack within the budget, or
	 * no memory for one (budget.c): they wait here, holding none, until
	 * an exiting G gives a stack back or, after an allocation failure,
	 * the retry work runs (stackwait_retry, below).
	 */
	struct kgo_gqueue stackwait;	/* L */
	u32 nstackwait;			/* L, racy */
	bool monitor_waiting;		/* L: the monitor sleeps until a P is busy */

	/*
	 * Read-mostly: read on every yield, park, spawn and steal; written
	 * at load, unload and CPU hotplug only.
	 */
	bool stopping ____cacheline_aligned_in_smp; /* L, racy: unload began */
	int nprocs;			/* I: Ps, one per possible CPU */
	struct kgo_p **allp;		/* I: indexed by P id */
	int gomaxprocs;			/* L, racy: Ps not OFFLINE */
	struct task_struct *monitor;	/* I: monitor.c */

	/*
	 * Read by kgo_wakep() on every yield and spawn; written as Ms
	 * park, wake and spin: apart from lock's line, which every
	 * acquisition would take from their readers.
	 */
	atomic_t npidle ____cacheline_aligned_in_smp;	/* A: Ps on pidle */
	atomic_t nmspinning;		/* A: Ms looking for work, holding a P */
	atomic_t needspinning;		/* A: a wakep found no idle P */

	/* Written by spawns of new Gs and by M creation. */
	atomic64_t goidgen ____cacheline_aligned_in_smp; /* A: last goroutine id */
	atomic64_t mcreated;		/* A: Ms ever created */
	/* Every G struct allocated, dead or alive (Go's allgs). */
	spinlock_t allg_lock;		/* irq-safe: Gs are made in hardirq too */
	struct list_head allg;		/* allg_lock */
	/*
	 * Spawns and readies from outside any P are counted per CPU
	 * (kgo_ext_counts in sched.c), not here: kgo_sched_ext().
	 */

	/* The monitor's, and what is rarely touched. */
	bool monitor_kicked ____cacheline_aligned_in_smp; /* racy: an M blocked, see monitor.c */
	unsigned int monitor_delay_us;	/* racy: the monitor's tick */
	/*
	 * I: queued, under lock, by whoever clears monitor_waiting: the
	 * monitor's wake-up (monitor.c), which the core knows only as this.
	 */
	struct irq_work monitor_busy;
	struct delayed_work stackwait_retry;	/* I: see stackwait */
	/* Woken when a P goes OFFLINE (procs.c waits for it). */
	wait_queue_head_t pstop_wq;
};

extern struct kgo_sched kgo_sched;

/*
 * sched.lock is taken only through these, which count each acquisition
 * (count.h): the measure of what the issue 45 work is to remove from
 * the hot paths. The unlock is the lock's own; only taking it costs a
 * line every CPU writes. Macros, so that sparse and lockdep see the
 * lock taken at the caller.
 */
#define kgo_sched_lock_irqsave(sched, flags)			\
	do {							\
		kgo_count(KGO_COUNT_SCHED_LOCK);		\
		raw_spin_lock_irqsave(&(sched)->lock, flags); \
	} while (0)

#define kgo_sched_lock_irq(sched)				\
	do {							\
		kgo_count(KGO_COUNT_SCHED_LOCK);		\
		raw_spin_lock_irq(&(sched)->lock);		\
	} while (0)

/*
 * Every 61st new time slice a P looks at the global queue first (the
 * essay's step 1); the direct switch (switch.c) defers to the M's loop then.
 */
#define KGO_GLOBAL_CHECK	61

/* A consistent-enough view for tests and statistics. */
struct kgo_sched_snap {
	int nprocs;
	int npidle;
	int nmspinning;
	unsigned int mcount;
	unsigned int nmidle;
	u32 runqsize;
	s64 galive;
};

int kgo_sched_init(void);
void kgo_sched_drain(void);
void kgo_sched_exit(void);
void kgo_sched_snapshot(struct kgo_sched_snap *snap);
s64 kgo_galive(struct kgo_sched *sched);

/* Events from outside any P, summed over CPUs (sched.c). */
struct kgo_ext_counts {
	u64 created;	/* Gs spawned: with the Ps' counters, kgo_galive() */
	u64 readies;	/* Gs made ready */
};

void kgo_sched_ext(struct kgo_ext_counts *sum);

/* For the M loop (m.c). */
void kgo_schedule(struct kgo_m *m);

/* Spawns and readiness, for the API (api.c) and tests. */
struct kgo_g *kgo_newproc(kgo_func_t fn, void *arg, gfp_t gfp);
struct kgo_g *kgo_newproc_m(struct kgo_m *m, kgo_func_t fn, void *arg, gfp_t gfp);
struct kgo_gcache;
struct kgo_g *kgo_newproc_gc(struct kgo_gcache *gc, kgo_func_t fn, void *arg, gfp_t gfp);
void kgo_injectglist(struct kgo_gqueue *q, u32 n);

/**
 * kgo_wakep() - start a spinning M if work may be waiting and none spins
 *
 * Inline up to the slow path: most calls (every yield and spawn while
 * all Ps are busy) end at its first checks.
 *
 * Context: any, hardirq included.
 */
static inline void kgo_wakep(void)
{
	struct kgo_sched *sched = &kgo_sched;

	/*
	 * Rule 3's other half: the caller's store of work (to a queue, or
	 * under sched.lock, whose unlock is only a release) must be visible
	 * before we read nmspinning, or a spinning M dropping out could miss
	 * the work while we miss its decrement. Pairs with the full barrier
	 * of atomic_dec_return() in kgo_findrunnable(). Go has it for free:
	 * its unlock is an atomic exchange.
	 */
	smp_mb();
	/*
	 * Rule 1: only the producer that moves nmspinning 0 -> 1 starts one.
	 * Acquire: a spinner's drop out of nmspinning comes after it put its
	 * P on the idle list; seeing the one, we see npidle count the other.
	 */
	if (atomic_read_acquire(&sched->nmspinning))
		return;
	/*
	 * Rule 4, already asked: no P is idle and an earlier wakep set
	 * needspinning, which the next M to give up its P takes up. Asking
	 * again would take sched.lock to set it again: the cost of every
	 * yield and spawn while all Ps are busy. Go's wakep asks each time;
	 * its Ps are rarely all busy for long, ours are in every benchmark.
	 */
	if (!atomic_read(&sched->npidle) && atomic_read(&sched->needspinning))
		return;
	kgo_wakep_slow(sched);
}

/*
 * Rule 5 (sched.c): the wake-up owed to a G just readied into @p's
 * runnext, deferred. Context: the owner of @p, from a G.
 */
static inline void kgo_wakep_defer(struct kgo_p *p)
{
	WRITE_ONCE(p->wakeseq, p->wakeseq + 1);
	WRITE_ONCE(p->wakep_due, true);
}

/*
 * kgo_preempt_check() for a caller that has its M (or NULL outside a G).
 * Inline: a blocking channel operation makes it every time, and the G
 * is rarely to be preempted.
 * Return: the caller's M afterwards, another one if the G was preempted.
 */
static inline struct kgo_m *kgo_preempt_check_m(struct kgo_m *m)
{
	if (!m || likely(!READ_ONCE(m->curg->preempt)))
		return m;
	return kgo_preempt_now(m);
}

/* Whether the calling G's P has a wake-up deferred. @m: kgo_g_m(). */
static inline bool kgo_g_wakep_due(struct kgo_m *m)
{
	struct kgo_p *p = kgo_g_p_get(m);
	bool due;

	if (!p)
		return false;
	due = READ_ONCE(p->wakep_due);
	kgo_g_p_put();
	return due;
}

/*
 * The calling G saw a wake-up deferred on its P (kgo_g_wakep_due) before
 * an operation, and went on without switching out: pay what is owed now.
 * Callers call it only then: a wake-up the operation itself deferred is
 * owed only once the G goes on past its next one. @m: kgo_g_m().
 */
static inline void kgo_g_wakep_if_due(struct kgo_m *m)
{
	struct kgo_p *p = kgo_g_p_get(m);

	if (!p)
		return;
	if (READ_ONCE(p->wakep_due)) {
		WRITE_ONCE(p->wakep_due, false);
		kgo_wakep();
	}
	kgo_g_p_put();
}

#endif /* _KGO_SCHED_H */
