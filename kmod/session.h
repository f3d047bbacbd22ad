/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_SESSION_H
#define _KGO_SESSION_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include <kgo.h>
#include <linux/kgo.h>

#include "feed.h"

struct kgo_g;
struct kgo_gcache;
struct kgo_gqueue;
struct kgo_job;
struct kgo_ring;
struct kgo_user;

/*
 * One open /dev/kgo: the tasks it submitted and their completions.
 * References: the open fd holds one, and so does every job. Field
 * rules (locking.h): S, this lock.
 *
 * A job is "in flight" from acceptance until its completion is read:
 * that is what the per-fd caps count, so that a reader that never reads
 * cannot pin unbounded memory.
 */
struct kgo_session {
	spinlock_t lock;	/* process context only; before ctx locks (ctx.c) */
	struct list_head pending; /* S: accepted, not completed */
	struct list_head done;	/* S: completed, not read (FIFO) */
	u32 ninflight;		/* S: accepted and not read */
	u32 ndone;		/* S: on done */
	u32 nring;		/* S: of ninflight, the ring's CQ slots */
	u64 bytes;		/* S: bytes copied in by jobs in flight */
	bool closed;		/* S: the fd is gone: completions are dropped */
	wait_queue_head_t wq;	/* read, poll and KGO_IOC_WAIT */
	struct kref ref;
	struct kgo_user *user;	/* the opener's user (user.c); holds a reference */
	struct kgo_ctx ctx;	/* cancelled at close: parent of each job's */
	struct kgo_feed feed;	/* its goroutines' way into the scheduler (feed.c) */
	struct kgo_ring *ring;	/* set once (release), freed with us; or NULL */
	struct mutex setup_lock; /* KGO_IOC_RING_SETUP, one at a time */
};

int kgo_session_init(void);
void kgo_session_exit(void);
struct kgo_session *kgo_session_create(void);
void kgo_session_close(struct kgo_session *s);
void kgo_session_get(struct kgo_session *s);
void kgo_session_put(struct kgo_session *s);

struct kgo_g *kgo_session_submit_one(struct kgo_session *s,
				     const struct kgo_task *t, struct kgo_gcache *gc);
int kgo_session_take(struct kgo_session *s, struct list_head *list, u32 n);
void kgo_session_putback(struct kgo_session *s, struct list_head *list, u32 n);
void kgo_job_complete_read(struct kgo_job *job);

u32 kgo_session_max_inflight(void);
int kgo_session_reserve(struct kgo_session *s, u32 n);
void kgo_session_unreserve_n(struct kgo_session *s, u32 n);
struct kgo_g *kgo_session_ring_job(struct kgo_session *s, struct kgo_job *job,
				   const struct kgo_task *t, u64 now, struct kgo_gcache *gc);
void kgo_session_add_pending(struct kgo_session *s, struct list_head *jobs);

ssize_t kgo_session_read(struct kgo_session *s, char __user *buf, size_t count,
			 bool nonblock);
__poll_t kgo_session_poll(struct kgo_session *s, struct file *file,
			  poll_table *wait);
int kgo_session_wait(struct kgo_session *s, u32 min, u64 timeout_ns, u32 *ready);
u32 kgo_session_cancel(struct kgo_session *s, bool all, u64 tag, bool running);

#endif /* _KGO_SESSION_H */
