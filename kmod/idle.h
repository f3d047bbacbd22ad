/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_IDLE_H
#define _KGO_IDLE_H

#include <linux/percpu.h>
#include <linux/types.h>

struct kgo_m;
struct kgo_p;
struct kgo_g;
struct kgo_sched;
struct work_struct;

/* Each CPU's P, for wake-ups that prefer the CPU they come from. */
DECLARE_PER_CPU(struct kgo_p *, kgo_cpu_p);

/* Idle Ps. Context: sched->lock held. */
void kgo_pidleput(struct kgo_sched *sched, struct kgo_p *p);
struct kgo_p *kgo_pidleget_exact(struct kgo_sched *sched, struct kgo_p *p);
struct kgo_p *kgo_pidleget_parked_m(struct kgo_sched *sched,
				    struct kgo_p *prefer);
struct kgo_p *kgo_pidleget_spinning(struct kgo_sched *sched,
				    struct kgo_p *prefer);

/* Starting Ms, and wakep()'s slow path (sched.h). */
void kgo_startm(struct kgo_p *p, bool spinning);
void kgo_newm_spare(struct kgo_p *p);
void kgo_newm_workfn(struct work_struct *work);
void kgo_wakep_slow(struct kgo_sched *sched);
void kgo_put_outside(struct kgo_g *g);
void kgo_start_idle(struct kgo_sched *sched, u32 n);

/* Holding and parking: for the M's loop (sched.c). */
enum kgo_nextp {
	KGO_NEXTP_EXIT,		/* none: the M is to exit */
	KGO_NEXTP_NONE,		/* a relief came to nothing: park again */
	KGO_NEXTP_TAKEN,	/* the M holds the P */
};

void kgo_acquirep(struct kgo_m *m, struct kgo_p *p);
struct kgo_p *kgo_releasep(struct kgo_m *m);
enum kgo_nextp kgo_take_nextp(struct kgo_m *m);
bool kgo_stopm(struct kgo_m *m);
bool kgo_releasep_stopm(struct kgo_m *m, unsigned long flags);
void kgo_p_stop_held(struct kgo_m *m);
bool kgo_m_stop_pless(struct kgo_m *m);

/* For P handoff, the monitor and P start/stop (block.c, monitor.c, procs.c). */
void kgo_handoffp(struct kgo_sched *sched, struct kgo_p *p);
bool kgo_reacquire_home(struct kgo_m *m);
void kgo_reacquire_home_atomic(struct kgo_m *m);
void kgo_runq_drain(struct kgo_sched *sched, struct kgo_p *p);

#endif /* _KGO_IDLE_H */
