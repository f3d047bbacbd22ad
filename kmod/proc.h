/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_PROC_H
#define _KGO_PROC_H

#include <linux/cache.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct kgo_g;
struct kgo_m;
struct kgo_sched;

#define KGO_RUNQ_SIZE		256	/* a power of two: indices wrap freely */
#define KGO_GFREE_MAX		64	/* free Gs a P keeps before spilling half */
#define KGO_STACK_CACHE_MAX	64	/* stacks a P keeps for reuse */
#define KGO_GOID_BATCH		16	/* ids a P takes from sched.goidgen at once */
#define KGO_FRESH_SIZE		64	/* a power of two: the fresh stack (runq.c) */

enum kgo_pstatus {
	KGO_P_IDLE,	/* on sched.pidle, no M */
	KGO_P_RUNNING,	/* held by an M, running or looking for Gs */
	KGO_P_SYSCALL,	/* held by an M blocked in the kernel: may be retaken */
	KGO_P_OFFLINE,	/* its CPU is offline, or beyond kgo_gomaxprocs() */
};

/*
 * Per-P counters. Written only by the M that holds the P, with plain
 * increments; read by anyone with READ_ONCE (a snapshot may be a few
 * events stale, never torn on 64-bit). Cacheline-aligned so that
 * counting does not bounce another P's line.
 */
struct kgo_pstats {
	u64 gcreated;		/* Gs spawned from a G on this P */
	u64 gstarted;		/* first runs (stack taken) */
	u64 gfinished;		/* exits */
	u64 schedticks;		/* new time slices (Go's schedtick) */
	u64 runnext_hits;	/* Gs taken from runnext */
	u64 globrunq_takes;	/* Gs taken from the global queue */
	u64 steal_attempts;	/* runqsteal() calls */
	u64 steals;		/* runqsteal() calls that got something */
	u64 stolen;		/* Gs moved by those */
	u64 parks;		/* Gs that parked here */
	u64 parks_direct;	/* ... whose switch went straight to the next G */
	u64 readies;		/* Gs readied by a G on this P */
	u64 yields;		/* kgo_yield() calls */
	u64 yields_direct;	/* ... that switched straight to the next G */
	u64 mparks;		/* an M gave this P up and slept */
	u64 mwakes;		/* an M was woken to run this P */
	u64 spinning;		/* an M became spinning on this P */
	u64 preempts;		/* Gs preempted at a kgo call after their slice */
	u64 handoffs;		/* taken from an M blocked in the kernel */
	u64 hog_reliefs;	/* taken from an M whose G ran two slices (hog.c) */
	u64 fresh_kept;		/* Gs kicked from runnext to the fresh stack */
	u64 fresh_published;	/* ... moved from it to the ring for an idle P */
	u64 fresh_aged;		/* ... taken oldest first, having waited a slice */
	/* Gs by time runnable before running: [2^i, 2^(i+1)) ns. */
	u64 latency[32];
} ____cacheline_aligned_in_smp;

/*
 * A P: the right to run goroutines on one CPU, with the local work that
 * goes with it. Field rules (locking.h): I, L, O (the M holding the P,
 * p->m), A (see runq.c for the protocol), P (stack_lock).
 */
struct kgo_p {
	int id;				/* I: index in sched->allp */
	int cpu;			/* I: the CPU its Ms are bound to */
	struct kgo_sched *sched;	/* I */

	/*
	 * enum kgo_pstatus. IDLE <-> RUNNING and <-> OFFLINE under
	 * sched->lock; RUNNING <-> SYSCALL by the holding M with cmpxchg
	 * (block.c), and SYSCALL -> RUNNING or OFFLINE by whoever takes the
	 * P from a blocked M, with cmpxchg under sched->lock: the cmpxchg
	 * decides between the M coming back and the taker. Read racily by
	 * thieves and the monitor.
	 */
	int status;
	bool stopreq;			/* L: to go OFFLINE at its M's next look */
	bool enabled;			/* L: CPU online and within gomaxprocs */
	struct kgo_p *link;		/* L: next on sched->pidle */
	struct list_head midle;		/* L: idle Ms bound to this CPU */
	unsigned int nmidle;		/* L */
	unsigned int mcount;		/* L: Ms bound to this CPU */
	unsigned int mtransit;		/* L: ... between giving this P up and parking */
	bool wantm;			/* L: waiting for an M, see kgo_startm() */
	bool wantm_spinning;		/* L: ... which starts spinning */
	bool wantrelief;		/* L: relief asked of a new M, or of one parking (hog.c) */
	bool relief_pending;		/* L: a relief M is on its way (hog.c) */
	bool wantspare;			/* L: a spare M is to be created (kgo_newm_spare) */
	u32 relief_tick;		/* L: ... for the slice with this schedtick */
	struct kgo_m *relieved_m;	/* L: a hog taken from, for the monitor to unbind */
	struct work_struct newm_work;	/* creates Ms for wantm, wantrelief, wantspare */

	struct kgo_m *m;		/* O (L when changing hands) */
	u32 schedtick;			/* O */
	/*
	 * O, read racily by the monitor: a G readied into runnext by the
	 * running G is owed a kgo_wakep(), deferred until the running G
	 * goes on instead of switching out (sched.c, rule 5). wakeseq counts
	 * the deferrals, so that the monitor sees one outlive its tick.
	 */
	bool wakep_due;
	u32 wakeseq;
	struct kgo_g *gfree;		/* O: dead Gs for reuse */
	unsigned int ngfree;		/* O */
	/* O: goroutine ids [goidcache, goidcacheend) taken from sched.goidgen */
	u64 goidcache;
	u64 goidcacheend;
	/*
	 * O (read racily by budget.c): bytes of the memory budget this P
	 * took and no goroutine holds yet; see budget.c.
	 */
	long budget_credit;
	/*
	 * L: jiffies when it went idle, and the total idle time before
	 * that, counted in ticks: a clock read on each park and each wake-up
	 * cost as much as the rest of the P's idle bookkeeping. A period
	 * shorter than a tick counts one tick or none, as often as the
	 * tick falls in it, so the sum is right on average.
	 */
	unsigned long idle_since;
	u64 idle_ns;

	/*
	 * The holding M while it is blocked in the kernel; whoever clears
	 * it with cmpxchg owns the P (block.c).
	 */
	struct kgo_m *blocked_m;
	/* Written by the holding M before it publishes blocked_m. */
	u64 syscall_since;		/* when its M blocked */
	u64 syscall_goid;		/* the G that blocked it */

	/* The monitor's view of this P (Go's sysmon pdesc); monitor only. */
	u32 mon_schedtick;
	u64 mon_schedwhen;
	/* The G it last marked to yield (its goid), and when. */
	u64 mon_markgoid;
	u64 mon_markwhen;
	u64 mon_markrun;		/* its M's CPU time then */
	u32 mon_wakeseq;
	bool mon_wakepaid;
	u32 mon_freshhead;		/* freshhead ^ runqhead, as last seen */
	u64 mon_freshwhen;

	/*
	 * The fresh stack (runq.c): Gs that never ran, kicked out of runnext.
	 * Slots [freshhead, freshtail); the owner takes
	 * the newest, and the oldest when the monitor sets fresh_aged. O,
	 * but others read the indices racily to see whether the P has work.
	 */
	u32 freshhead;			/* O */
	u32 freshtail;			/* O */
	bool fresh_aged;		/* the monitor sets it, the owner clears it */
	struct kgo_g *fresh[KGO_FRESH_SIZE]; /* O */
	u32 freshticket[KGO_FRESH_SIZE];	/* O: runqtail when each was pushed */

	spinlock_t stack_lock;		/* the shrinker empties caches remotely */
	unsigned int nstacks;		/* P (read racily by kgo_stacks_cached) */
	void *stacks[KGO_STACK_CACHE_MAX]; /* P */

	/* The run queue: the owner and thieves meet here. */
	u32 runqhead ____cacheline_aligned_in_smp; /* A: consumers CAS it */
	u32 runqtail;			/* A: owner store-release */
	struct kgo_g *runnext;		/* A: owner sets, anyone CASes to NULL */
	struct kgo_g *runq[KGO_RUNQ_SIZE]; /* A: slots [head, tail) */

	struct kgo_pstats stats;
};

#define kgo_pstat_inc(p, field)	WRITE_ONCE((p)->stats.field, (p)->stats.field + 1)
#define kgo_pstat_add(p, field, n) \
	WRITE_ONCE((p)->stats.field, (p)->stats.field + (n))

/*
 * One runnable-to-running delay, in its log2 bucket (KGO_LATENCY_BUCKETS
 * of them, as latency[]). Context: the M holding @p.
 */
static inline void kgo_pstat_latency(struct kgo_p *p, u64 ns)
{
	unsigned int b = ns ? min_t(unsigned int, ilog2(ns),
				    ARRAY_SIZE(p->stats.latency) - 1) : 0;

	kgo_pstat_inc(p, latency[b]);
}

struct kgo_p *kgo_p_create(struct kgo_sched *sched, int id, int cpu);
void kgo_p_destroy(struct kgo_p *p);

#endif /* _KGO_PROC_H */
