/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_TASK_H
#define _KGO_TASK_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/types.h>

#include <kgo.h>
#include <linux/kgo.h>

struct kgo_ring;
struct kgo_session;

enum kgo_job_state {
	KGO_JOB_QUEUED,		/* accepted, its goroutine not started */
	KGO_JOB_RUNNING,	/* its goroutine claimed it */
	KGO_JOB_CANCELLED,	/* cancel claimed it first */
	KGO_JOB_CURSOR,		/* not a job: a walker's place on pending */
};

/*
 * A submitted task: the kernel side of one struct kgo_task. Two
 * references: its goroutine's, and the completion's (dropped once the
 * completion is read, or when the session closes). Field rules
 * (locking.h): I (at submit), A, S, O (its goroutine, until it completes
 * the job).
 */
struct kgo_job {
	struct list_head node;		/* S: on session->pending, then ->done */
	struct kgo_session *s;		/* I: holds a session reference */
	struct kref ref;		/* A */
	atomic_t state;			/* A: enum kgo_job_state */
	struct kgo_task desc;		/* I */
	void *buf;			/* I: CHECKSUM data, copied at submit */
	u32 len;			/* I: its length, counted in session bytes */
	bool timed;			/* I: its completion carries times */
	atomic64_t nodes;		/* A: SPAWN nodes run */
	int err;			/* O */
	struct kgo_completion c;	/* O, then S once completed */
	struct kgo_ctx ctx;		/* its own; child of the session's */
	/* A ring's job (ring.c) posts to its CQ and goes back to its pool. */
	struct kgo_ring *ring;		/* set once, at ring setup; or NULL */
	struct llist_node fnode;	/* A: on ring->free while unused */
};

int kgo_task_validate(const struct kgo_task *t);
int kgo_task_validate_ring(const struct kgo_task *t, bool sqpoll);
u32 kgo_task_buf_len(const struct kgo_task *t);
u64 kgo_spawn_nodes(u64 fanout, u64 depth, u64 max);
u32 kgo_task_checksum(const void *buf, size_t len);
void kgo_job_run(struct kgo_job *job);
int kgo_task_run_inline(const struct kgo_task *t, u64 *result);

#endif /* _KGO_TASK_H */
