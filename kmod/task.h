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

/**
 * struct kgo_task_def - what kgo knows of one task kind
 * @nargs: the arguments it uses; the others must be zero
 * @inline_ok: it may be submitted with KGO_TASK_F_INLINE: it neither
 *	sleeps nor runs unbounded (@run_inline set)
 * @needs_mm: it reads the submitter's memory (args[0], args[1] bytes):
 *	copied in at submit, read in place inline, refused where no
 *	process submits (SQPOLL)
 * @validate: the ranges of its arguments; NULL if any value goes
 * @run: its run in a goroutine; fills job->c.result, job->err
 * @run_inline: its run in the submitter (@inline_ok); fills *result
 */
struct kgo_task_def {
	u8 nargs;
	bool inline_ok;
	bool needs_mm;
	int (*validate)(const struct kgo_task *t);
	void (*run)(struct kgo_job *job);
	int (*run_inline)(const struct kgo_task *t, u64 *result);
};

/*
 * The table is task.c's; it is here so that the lookups a ring entry
 * makes on its way to a goroutine are inline in ring and session code,
 * rather than calls of their own for each entry.
 */
extern const struct kgo_task_def kgo_task_defs[KGO_TASK_PINGPONG_HOG + 1];

int __kgo_task_validate(const struct kgo_task *t);

/**
 * kgo_task_validate() - whether a descriptor may be accepted
 * @t: the descriptor, copied in
 *
 * Return: 0, -EINVAL (unknown kind, flags, non-zero reserved or unused
 * argument, argument out of range) or -E2BIG (a tree or a buffer over
 * its maximum). The CHECKSUM buffer itself is checked when copied.
 *
 * Inline for NOP, in one test: a ring's batch of them is all this, and
 * a call of its own for each, which saves registers for the table's
 * walk before it can test the kind, would be much of kgo's own cost
 * that make bench's NOP rows measure.
 */
static inline int kgo_task_validate(const struct kgo_task *t)
{
	if (t->kind == KGO_TASK_NOP)
		return (t->flags & ~KGO_TASK_FLAGS) | t->__reserved |
		       t->args[0] | t->args[1] | t->args[2] ? -EINVAL : 0;
	return __kgo_task_validate(t);
}

/* A validated task's entry. */
static inline const struct kgo_task_def *kgo_task_def(const struct kgo_task *t)
{
	return &kgo_task_defs[t->kind];
}

/**
 * kgo_task_validate_ring() - kgo_task_validate() for a ring's entry
 * @t: the entry, copied in
 * @sqpoll: the ring has an SQ poller, which runs in no process
 *
 * Return: as kgo_task_validate(); -EOPNOTSUPP for a kind that reads the
 * submitter's memory on a ring with SQPOLL.
 */
static inline int kgo_task_validate_ring(const struct kgo_task *t, bool sqpoll)
{
	int err = kgo_task_validate(t);

	if (!err && sqpoll && kgo_task_def(t)->needs_mm)
		return -EOPNOTSUPP;
	return err;
}

/*
 * The bytes of the submitter's memory a validated @t copies in at
 * submit, and holds until it completes: a needs_mm kind's, unless it
 * runs inline (which reads them in place).
 */
static inline u32 kgo_task_buf_len(const struct kgo_task *t)
{
	return kgo_task_def(t)->needs_mm && !(t->flags & KGO_TASK_F_INLINE) ?
	       t->args[1] : 0;
}

u64 kgo_spawn_nodes(u64 fanout, u64 depth, u64 max);
u32 kgo_task_checksum(const void *buf, size_t len);
void kgo_job_run(struct kgo_job *job);
int kgo_task_run_inline(const struct kgo_task *t, u64 *result);

#endif /* _KGO_TASK_H */
