// SPDX-License-Identifier: GPL-2.0
/*
 * Feeds: one backlog cannot delay another source's work for long.
 *
 * Go has one user per scheduler. kgo has many: every open /dev/kgo, and
 * every module calling kgo_go(). When one fd submitted 20,000 tasks,
 * they all went to the global queue at once, and a task from another fd
 * (or a kernel caller's goroutine) queued behind every one of them.
 *
 * So each session keeps its own backlog, a feed, and lets only a few of
 * its Gs into the scheduler at a time: at most max_queued of them are
 * released and not yet started. Each first run of one of them (on its
 * M, in kgo_execute()) releases the next, onto that P's queue. Whatever
 * else is submitted meanwhile waits behind at most max_queued Gs of each
 * busy session, plus what the Ps run; sessions take turns in the order
 * their Gs reach the global queue, and a P's own queue gives way to the
 * global one every 61 slices (Go's rule). This is CMWQ's max_active per
 * workqueue, counted over Gs not yet started: a G that runs, blocks or
 * waits no longer counts, so a session's BLOCK tasks still all run at
 * once.
 *
 * The Gs exist from submission (so a spawn over budget fails at SUBMIT),
 * RUNNABLE but on no queue until released. A G's feed pointer is set by
 * the submitter before the G is published, and cleared at its first run:
 * the feed (in the session) lives as long as the G's job, which holds
 * the session.
 *
 * Lock rules: f->lock is a leaf, taken in process context only (the
 * submitter, which may be a G, and an M about to switch to a G for the
 * first time), never across a switch.
 */

#include <linux/minmax.h>
#include <linux/moduleparam.h>

#include <kgo.h>
#include "feed.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"

static unsigned int max_queued;
module_param(max_queued, uint, 0444);
MODULE_PARM_DESC(max_queued,
		 "Gs one fd may have queued and not yet started (0: 2 per P, at least 8; up to 65536)");

int kgo_feed_check_params(void)
{
	if (max_queued > 65536) {
		pr_err("max_queued=%u: must be 0 to 65536\n", max_queued);
		return -EINVAL;
	}
	return 0;
}

static u32 kgo_feed_max(void)
{
	return max_queued ?: max(8, 2 * READ_ONCE(kgo_sched.gomaxprocs));
}

void kgo_feed_init(struct kgo_feed *f)
{
	spin_lock_init(&f->lock);
	f->backlog = (struct kgo_gqueue){};
	f->nbacklog = 0;
	f->queued = 0;
}

/**
 * kgo_feed_inject() - queue @n RUNNABLE Gs of one source, in turn
 * @f: the source's feed
 * @q: the Gs, linked through schedlink; emptied
 * @n: how many
 *
 * They go behind the feed's backlog; as many as max_queued allows go to
 * the scheduler now (kgo_injectglist()), the rest as earlier ones start.
 *
 * Context: process: a submitter, or a G (the SQ poller, sqpoll.c); it
 * takes f->lock with interrupts on.
 */
void kgo_feed_inject(struct kgo_feed *f, struct kgo_gqueue *q, u32 n)
{
	struct kgo_gqueue now = {};
	u32 max = kgo_feed_max(), k = 0;
	struct kgo_g *g;

	if (!n)
		return;
	for (g = q->head; g; g = g->schedlink)
		g->feed = f;
	spin_lock(&f->lock);
	kgo_gqueue_push_back_all(&f->backlog, q);
	f->nbacklog += n;
	while (f->queued < max && (g = kgo_gqueue_pop(&f->backlog))) {
		kgo_gqueue_push_back(&now, g);
		f->nbacklog--;
		f->queued++;
		k++;
	}
	spin_unlock(&f->lock);
	kgo_injectglist(&now, k);
}

/**
 * kgo_feed_started() - a G of @f runs for the first time: release the next
 * @f: its feed
 * @p: the P it runs on, which the next one is queued on
 *
 * Context: the M holding @p, on its own stack.
 */
void kgo_feed_started(struct kgo_feed *f, struct kgo_p *p)
{
	struct kgo_g *next = NULL;

	spin_lock(&f->lock);
	WARN_ON_ONCE(!f->queued);
	f->queued--;
	if (f->queued < kgo_feed_max()) {
		next = kgo_gqueue_pop(&f->backlog);
		if (next) {
			f->nbacklog--;
			f->queued++;
		}
	}
	spin_unlock(&f->lock);
	if (next) {
		kgo_runqput(p, next, false);
		kgo_wakep();
	}
}
