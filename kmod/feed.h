/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_FEED_H
#define _KGO_FEED_H

#include <linux/spinlock.h>
#include <linux/types.h>

#include "g.h"

struct kgo_p;

/* One source of work's backlog, see feed.c. Field rules: locking.h. */
struct kgo_feed {
	spinlock_t lock;		/* process context; a leaf */
	struct kgo_gqueue backlog;	/* F: RUNNABLE Gs not yet released */
	u32 nbacklog;			/* F */
	u32 queued;			/* F: released and not yet started */
};

void kgo_feed_init(struct kgo_feed *f);
void kgo_feed_inject(struct kgo_feed *f, struct kgo_gqueue *q, u32 n);
/*
 * The core's one named upcall (tools/callgraph.py, HOOKS): kgo_execute()
 * (switch.c) calls it at a fed G's first run, so that the feed above the
 * core releases the next G of its backlog.
 */
void kgo_feed_started(struct kgo_feed *f, struct kgo_p *p);
int kgo_feed_check_params(void);

#endif /* _KGO_FEED_H */
