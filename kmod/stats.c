// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler statistics for KGO_IOC_STATS: a snapshot of the global
 * state and each P's counters. Counters are written by each P's owner
 * and read here racily (see struct kgo_pstats): a snapshot, not a
 * transaction.
 */

#include <linux/log2.h>
#include <linux/string.h>

#include "proc.h"
#include "runq.h"
#include "sched.h"
#include "stats.h"
#include "user.h"

void kgo_stats_global(struct kgo_stats *st)
{
	struct kgo_sched *sched = &kgo_sched;
	struct kgo_ext_counts ext;
	struct kgo_sched_snap snap;
	int i, b;

	kgo_sched_snapshot(&snap);
	st->nr_procs = snap.nprocs;
	st->nr_procs_idle = snap.npidle;
	st->nr_ms = snap.mcount;
	st->nr_ms_idle = snap.nmidle;
	st->nr_ms_spinning = snap.nmspinning;
	st->goroutines = max_t(s64, snap.galive, 0);
	st->global_runq = snap.runqsize;
	kgo_sched_ext(&ext);
	st->created_outside = ext.created;
	st->readied_outside = ext.readies;
	memset(st->latency, 0, sizeof(st->latency));
	for (i = 0; i < sched->nprocs; i++)
		for (b = 0; b < KGO_LATENCY_BUCKETS; b++)
			st->latency[b] += READ_ONCE(sched->allp[i]->stats.latency[b]);
}

/*
 * What an unprivileged caller sees: the goroutines its user's sessions
 * caused, now, and nothing of the scheduler's or of other users'. No
 * per-P records (@nr_procs 0), and KGO_STATS_OWN says which view this is.
 */
void kgo_stats_own(struct kgo_user *u, struct kgo_stats *st)
{
	memset((char *)st + offsetof(struct kgo_stats, nr_procs), 0,
	       sizeof(*st) - offsetof(struct kgo_stats, nr_procs));
	st->flags = KGO_STATS_OWN;
	st->goroutines = max(atomic_read(&u->goroutines), 0);
}

/* P @id's record; false, and nothing written, if it is OFFLINE. */
bool kgo_stats_proc(int id, struct kgo_proc_stats *ps)
{
	struct kgo_p *p = kgo_sched.allp[id];
	const struct kgo_pstats *c = &p->stats;

	if (READ_ONCE(p->status) == KGO_P_OFFLINE)
		return false;
	memset(ps, 0, sizeof(*ps));
	ps->id = p->id;
	ps->cpu = p->cpu;
	ps->idle = READ_ONCE(p->status) == KGO_P_IDLE;
	ps->runq_len = kgo_runqlen(p);
	ps->idle_ns = READ_ONCE(p->idle_ns);
	ps->gcreated = READ_ONCE(c->gcreated);
	ps->gstarted = READ_ONCE(c->gstarted);
	ps->gfinished = READ_ONCE(c->gfinished);
	ps->schedticks = READ_ONCE(c->schedticks);
	ps->runnext_hits = READ_ONCE(c->runnext_hits);
	ps->globrunq_takes = READ_ONCE(c->globrunq_takes);
	ps->steal_attempts = READ_ONCE(c->steal_attempts);
	ps->steals = READ_ONCE(c->steals);
	ps->stolen = READ_ONCE(c->stolen);
	ps->parks = READ_ONCE(c->parks);
	ps->readies = READ_ONCE(c->readies);
	ps->yields = READ_ONCE(c->yields);
	ps->mparks = READ_ONCE(c->mparks);
	ps->mwakes = READ_ONCE(c->mwakes);
	ps->spinning = READ_ONCE(c->spinning);
	return true;
}
