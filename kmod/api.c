// SPDX-License-Identifier: GPL-2.0
/*
 * The goroutine API of include/kgo.h, and the entry points kgo's own
 * files use beyond it (api.h): thin, each finds the caller's M and goes
 * to the core. Two exported calls live with the switch instead, so that
 * its parts stay inline in them: kgo_yield() and kgo_exit() (switch.c).
 */

#include <linux/export.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/timekeeping.h>
#include <linux/sched.h>

#include <kgo.h>
#include "api.h"
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

static s64 kgo_go_common(kgo_func_t fn, void *arg, struct kgo_waitgroup *wg,
			 gfp_t gfp)
{
	struct kgo_m *m = kgo_g_m();
	struct kgo_g *g = kgo_newproc_m(m, fn, arg, gfp);
	struct kgo_p *p;
	s64 goid;

	if (IS_ERR(g))
		return PTR_ERR(g);
	g->wg = wg;
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

s64 kgo_go(kgo_func_t fn, void *arg, gfp_t gfp)
{
	return kgo_go_common(fn, arg, NULL, gfp);
}
EXPORT_SYMBOL_NS_GPL(kgo_go, KGO_NS);

s64 kgo_go_wg(struct kgo_waitgroup *wg, kgo_func_t fn, void *arg, gfp_t gfp)
{
	s64 goid;

	/* Before the G exists: its done may come before kgo_go_common() returns. */
	kgo_wg_add(wg, 1);
	goid = kgo_go_common(fn, arg, wg, gfp);
	if (goid < 0)
		kgo_wg_done(wg);
	return goid;
}
EXPORT_SYMBOL_NS_GPL(kgo_go_wg, KGO_NS);

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
EXPORT_SYMBOL_NS_GPL(kgo_preempt_point, KGO_NS);

struct kgo_g *kgo_self(void)
{
	/* Not kgo_g_m(): inside kgo_block_begin/end it is still a G. */
	struct kgo_m *m = in_task() ? kgo_this_m() : NULL;

	return m ? m->curg : NULL;
}
EXPORT_SYMBOL_NS_GPL(kgo_self, KGO_NS);

u64 kgo_id(void)
{
	struct kgo_g *g = kgo_self();

	return g ? g->goid : 0;
}
EXPORT_SYMBOL_NS_GPL(kgo_id, KGO_NS);

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
EXPORT_SYMBOL_NS_GPL(kgo_park, KGO_NS);

int kgo_ready(struct kgo_g *g)
{
	return kgo_ready_m(kgo_g_m(), g);
}
EXPORT_SYMBOL_NS_GPL(kgo_ready, KGO_NS);

