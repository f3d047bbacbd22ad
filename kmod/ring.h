/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_RING_H
#define _KGO_RING_H

#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <linux/kgo.h>

struct kgo_job;
struct kgo_session;
struct vm_area_struct;

/*
 * The rings of one fd (ring.c has the protocol). Field rules
 * (locking.h): I (at setup), U, K (through these pointers), R, S, W, A.
 */
struct kgo_ring {
	struct kgo_session *s;		/* I: the owner; no reference */
	struct page **pages;		/* I: the shared pages */
	unsigned int npages;		/* I */
	void *mem;			/* I: our mapping of them (vmap) */
	u32 *sq_head, *sq_tail;		/* I: K, U */
	u32 *cq_head, *cq_tail;		/* I: U, K */
	u32 *sq_flags;			/* I: K, by the SQ poller only (sqpoll.c) */
	struct kgo_task *sqes;		/* I: U */
	struct kgo_completion *cqes;	/* I: K */
	u32 sq_entries, cq_entries;	/* I: powers of two */
	u32 flags;			/* I: KGO_RING_* */
	struct kgo_ring_offsets off;	/* I */
	size_t size;			/* I: bytes mapped */

	struct mutex submit_lock;	/* ENTER's submissions, one at a time */
	u32 sq_khead;			/* R: our sq_head; the shared one a copy */
	u32 issued;			/* R, A (racy reads): entries consumed */
	struct kgo_job *jobs;		/* I: cq_entries preallocated jobs */
	struct llist_head free;		/* A: jobs given back, any context */
	struct llist_node *cache;	/* R: jobs taken off free, not yet used */

	/* S, A (racy reads): our cq_tail, stored after the shared one (ring.c) */
	u32 cq_ktail;

	spinlock_t wait_lock;		/* posters' slow path and waiters */
	struct list_head waiters;	/* W: struct kgo_ring_waiter */
	u32 nwaiters;			/* W, A (racy reads) */
	u32 wake_at;			/* W, A (racy reads): earliest target */
	bool poll_armed;		/* A: poll(2) looked: wake s->wq too */

	struct kgo_chan *sqpoll_wake;	/* I: KGO_RING_SQPOLL's (sqpoll.c) */
	u32 sq_idle_ms;			/* I */
};

/* The index arithmetic, in one place for the KUnit suite (kgo_ring). */

/* Whether free-running index @idx has reached @target (mod 2^32). */
static inline bool kgo_ring_reached(u32 idx, u32 target)
{
	return (s32)(idx - target) >= 0;
}

/*
 * Entries the caller published and we have not consumed; -EINVAL if
 * its @tail is not within @entries of our @head.
 */
static inline s64 kgo_ring_sq_ready(u32 tail, u32 head, u32 entries)
{
	u32 n = tail - head;

	if (n > entries)
		return -EINVAL;
	return n;
}

/*
 * Tasks we may still accept: CQ slots not promised to a completion.
 * @issued tasks were accepted in all, each owing one CQ entry; the
 * caller consumed completions up to @cq_head. A @cq_head outside
 * [issued - entries, issued] is the caller's garbage: no room.
 *
 * The head is bounded by what was issued, not by what was written:
 * the caller may consume an entry as soon as the shared cq_tail shows
 * it, before our cq_ktail has caught up (kgo_ring_post_commit() stores
 * them in that order), and that must not read as a full CQ. A caller
 * that claims to have consumed entries not yet written only loses its
 * own completions: each of ours still has a slot.
 */
static inline u32 kgo_ring_cq_room(u32 issued, u32 cq_head, u32 entries)
{
	u32 promised = issued - cq_head;

	if (promised > entries)
		return 0;
	return entries - promised;
}

int kgo_ring_layout(u32 sq_entries, u32 cq_entries, struct kgo_ring_offsets *off,
		    size_t *size);
int kgo_ring_entries(u32 want, u32 max, u32 *entries);

struct kgo_ring *kgo_ring_create(struct kgo_session *s, struct kgo_ring_params *p);
int kgo_ring_install(struct kgo_session *s, struct kgo_ring *r);
void kgo_ring_destroy(struct kgo_ring *r);
int kgo_ring_mmap(struct kgo_session *s, struct vm_area_struct *vma);

struct kgo_job *kgo_ring_job_get(struct kgo_ring *r);
void kgo_ring_job_put(struct kgo_ring *r, struct kgo_job *job);
u32 kgo_ring_post(struct kgo_ring *r, const struct kgo_completion *c);

/*
 * kgo_ring_post() in two steps, for a completion written in place: the
 * slot the next one goes in, then its publication (rule 3 of ring.c).
 * Context: session->lock held across both.
 */
static inline struct kgo_completion *kgo_ring_post_slot(struct kgo_ring *r)
{
	return &r->cqes[r->cq_ktail & (r->cq_entries - 1)];
}

static inline void kgo_ring_post_commit(struct kgo_ring *r)
{
	/*
	 * Release: the entry before the tail that shows it. The shared
	 * tail first: cq_ktail never runs ahead of what the caller sees.
	 */
	smp_store_release(r->cq_tail, r->cq_ktail + 1);
	WRITE_ONCE(r->cq_ktail, r->cq_ktail + 1);
}

void kgo_ring_wake(struct kgo_ring *r);
int kgo_ring_wait(struct kgo_ring *r, u32 min, u64 timeout_ns);
bool kgo_ring_cq_pending(struct kgo_ring *r);

long kgo_ring_enter(struct kgo_session *s, const struct kgo_enter *e);
long kgo_ring_submit(struct kgo_session *s, struct kgo_ring *r, u32 want);

int kgo_sqpoll_params(struct kgo_ring_params *p);
int kgo_sqpoll_start(struct kgo_ring *r);
void kgo_sqpoll_wake(struct kgo_ring *r);
void kgo_sqpoll_stop(struct kgo_ring *r);
void kgo_sqpoll_free(struct kgo_ring *r);
void kgo_sqpoll_stats(u64 *ns, u64 *tasks);

#endif /* _KGO_RING_H */
