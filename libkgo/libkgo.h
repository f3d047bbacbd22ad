/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libkgo: kgo's shared rings from userspace, in liburing's manner.
 *
 *	struct kgo_ring ring;
 *	struct kgo_completion *cqe;
 *	struct kgo_task *sqe;
 *
 *	kgo_ring_init(64, &ring, 0);		// opens /dev/kgo, maps the ring
 *	sqe = kgo_ring_get_sqe(&ring);		// a slot in the SQ
 *	kgo_prep_nop(sqe, 1);			// a NOP tagged 1
 *	kgo_ring_submit_and_wait(&ring, 1);	// one system call
 *	kgo_ring_peek_cqe(&ring, &cqe);		// cqe->tag == 1, cqe->status
 *	kgo_ring_cqe_seen(&ring, cqe);
 *	kgo_ring_exit(&ring);
 *
 * Functions return 0 or a count on success and a negative errno on
 * failure, as liburing's do; errno is not set. A ring is used by one
 * thread at a time; the module lets several rings (several fds), or
 * several threads that lock around one ring, enter at once.
 *
 * The index protocol and its memory ordering are the module's (see
 * <linux/kgo.h>): this header does the acquires and releases.
 */
#ifndef LIBKGO_H
#define LIBKGO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/kgo.h>

/*
 * libkgo's version, which is the project's (VERSION at the top of the
 * tree; libkgo's Makefile refuses to build when they differ). The
 * shared library's soname, libkgo.so.2, changes only with its ABI:
 * what the version script (libkgo.map) exports, and the layout of
 * struct kgo_ring, which callers allocate and the inline functions
 * below read.
 */
#define LIBKGO_VERSION_MAJOR	0
#define LIBKGO_VERSION_MINOR	2
#define LIBKGO_VERSION_PATCH	0

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The caller allocates it (on its stack, say) and the inline functions
 * below read its fields: its size and layout are libkgo's ABI. The
 * reserved words are zeroed by kgo_ring_init_params(); a later libkgo
 * may give them a meaning without a new soname, as long as zero keeps
 * today's. A field added past them changes the soname.
 */
struct kgo_ring {
	int fd;
	unsigned int flags;		/* KGO_RING_* of the setup */
	void *mem;			/* the mapping */
	size_t mem_size;
	unsigned int *sq_head, *sq_tail, *sq_flags;	/* in the mapping */
	unsigned int *cq_head, *cq_tail;
	struct kgo_task *sqes;
	struct kgo_completion *cqes;
	unsigned int sq_entries, cq_entries;
	unsigned int sq_local_tail;	/* entries handed out by get_sqe */
	int own_fd;			/* kgo_ring_exit() closes fd */
	unsigned int __reserved[4];
	void *__reserved_ptr[4];
};

int kgo_ring_init(unsigned int entries, struct kgo_ring *ring, unsigned int flags);
int kgo_ring_init_params(int fd, struct kgo_ring *ring, struct kgo_ring_params *p);
void kgo_ring_exit(struct kgo_ring *ring);
int kgo_ring_enter(struct kgo_ring *ring, unsigned int to_submit,
		   unsigned int min_complete, unsigned int flags,
		   unsigned long long timeout_ns);
int kgo_ring_submit(struct kgo_ring *ring);
int kgo_ring_submit_and_wait(struct kgo_ring *ring, unsigned int wait_nr);
int kgo_ring_wait_cqe_nr(struct kgo_ring *ring, struct kgo_completion **cqe,
			 unsigned int wait_nr, unsigned long long timeout_ns);
unsigned int kgo_ring_peek_batch_cqe(struct kgo_ring *ring,
				     struct kgo_completion **cqes, unsigned int count);
int kgo_ring_submit_and_wait_timeout(struct kgo_ring *ring, unsigned int wait_nr,
				     unsigned long long timeout_ns);

/*
 * The other ioctls, on any /dev/kgo fd (a ring's is ring->fd). Each
 * fills in size and returns 0, or a count, or a negative errno.
 */
int kgo_get_info(int fd, struct kgo_info *info);
int kgo_get_stats(int fd, struct kgo_stats *stats,
		  struct kgo_proc_stats *procs, unsigned int procs_max);
int kgo_cancel(int fd, unsigned long long tag, unsigned int flags);

/* The version of the libkgo.so this program runs with. */
int kgo_version_major(void);
int kgo_version_minor(void);
int kgo_version_patch(void);

static inline unsigned int kgo_ring_load_acquire(const unsigned int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void kgo_ring_store_release(unsigned int *p, unsigned int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* SQ slots free for kgo_ring_get_sqe(). */
static inline unsigned int kgo_ring_sq_space_left(const struct kgo_ring *ring)
{
	/* Acquire: the module is done with the slots before sq_head. */
	return ring->sq_entries - (ring->sq_local_tail - kgo_ring_load_acquire(ring->sq_head));
}

/* Entries got and not yet consumed by the module. */
static inline unsigned int kgo_ring_sq_ready(const struct kgo_ring *ring)
{
	return ring->sq_local_tail - kgo_ring_load_acquire(ring->sq_head);
}

/*
 * The next free SQ slot, zeroed, or NULL when the SQ is full. Fill in
 * the task; kgo_ring_submit() publishes it.
 */
static inline struct kgo_task *kgo_ring_get_sqe(struct kgo_ring *ring)
{
	struct kgo_task *t;

	if (!kgo_ring_sq_space_left(ring))
		return NULL;
	t = &ring->sqes[ring->sq_local_tail++ & (ring->sq_entries - 1)];
	memset(t, 0, sizeof(*t));
	return t;
}

/* Completions in the CQ, not yet marked seen. */
static inline unsigned int kgo_ring_cq_ready(const struct kgo_ring *ring)
{
	/* Acquire: the entries before cq_tail are written. */
	return kgo_ring_load_acquire(ring->cq_tail) - *ring->cq_head;
}

/* Marks the oldest @n completions seen: their slots go back to the module. */
static inline void kgo_ring_cq_advance(struct kgo_ring *ring, unsigned int n)
{
	/* Release: our reads of those entries come first. */
	kgo_ring_store_release(ring->cq_head, *ring->cq_head + n);
}

/* Marks the oldest completion (got from peek or wait) seen. */
static inline void kgo_ring_cqe_seen(struct kgo_ring *ring, struct kgo_completion *cqe)
{
	(void)cqe;
	kgo_ring_cq_advance(ring, 1);
}

/* The oldest completion, if there is one: 0, or -EAGAIN. */
static inline int kgo_ring_peek_cqe(struct kgo_ring *ring, struct kgo_completion **cqe)
{
	unsigned int head = *ring->cq_head;

	if (kgo_ring_load_acquire(ring->cq_tail) == head) {
		*cqe = NULL;
		return -EAGAIN;
	}
	*cqe = &ring->cqes[head & (ring->cq_entries - 1)];
	return 0;
}

/* Waits for one completion, then as kgo_ring_peek_cqe(). */
static inline int kgo_ring_wait_cqe(struct kgo_ring *ring, struct kgo_completion **cqe)
{
	return kgo_ring_wait_cqe_nr(ring, cqe, 1, KGO_WAIT_FOREVER);
}

/*
 * kgo_prep_*(): fill in an SQ entry (from kgo_ring_get_sqe(), zeroed)
 * for one task kind, with its tag; see enum kgo_task_kind in
 * <linux/kgo.h> for what each does and its limits. Each sets every
 * field, so an array for KGO_IOC_SUBMIT needs no memset: flags
 * (KGO_TASK_F_INLINE) are the caller's to add afterwards.
 */
static inline void kgo_prep_task(struct kgo_task *t, unsigned int kind,
				 unsigned long long tag, unsigned long long arg0,
				 unsigned long long arg1)
{
	t->kind = kind;
	t->flags = 0;
	t->tag = tag;
	t->args[0] = arg0;
	t->args[1] = arg1;
	t->args[2] = 0;
	t->__reserved = 0;
}

static inline void kgo_prep_nop(struct kgo_task *t, unsigned long long tag)
{
	kgo_prep_task(t, KGO_TASK_NOP, tag, 0, 0);
}

static inline void kgo_prep_spin(struct kgo_task *t, unsigned long long tag,
				 unsigned long long ns)
{
	kgo_prep_task(t, KGO_TASK_SPIN, tag, ns, 0);
}

static inline void kgo_prep_yield(struct kgo_task *t, unsigned long long tag,
				  unsigned long long n)
{
	kgo_prep_task(t, KGO_TASK_YIELD, tag, n, 0);
}

static inline void kgo_prep_spawn(struct kgo_task *t, unsigned long long tag,
				  unsigned long long fanout, unsigned long long depth)
{
	kgo_prep_task(t, KGO_TASK_SPAWN, tag, fanout, depth);
}

/* The module copies @buf in at submission (read in place if inline). */
static inline void kgo_prep_checksum(struct kgo_task *t, unsigned long long tag,
				     const void *buf, unsigned long long len)
{
	kgo_prep_task(t, KGO_TASK_CHECKSUM, tag, (unsigned long long)(uintptr_t)buf, len);
}

static inline void kgo_prep_sleep(struct kgo_task *t, unsigned long long tag,
				  unsigned long long ns)
{
	kgo_prep_task(t, KGO_TASK_SLEEP, tag, ns, 0);
}

static inline void kgo_prep_pingpong(struct kgo_task *t, unsigned long long tag,
				     unsigned long long n)
{
	kgo_prep_task(t, KGO_TASK_PINGPONG, tag, n, 0);
}

static inline void kgo_prep_select(struct kgo_task *t, unsigned long long tag,
				   unsigned long long n, unsigned long long gap_ns)
{
	kgo_prep_task(t, KGO_TASK_SELECT, tag, n, gap_ns);
}

static inline void kgo_prep_block(struct kgo_task *t, unsigned long long tag,
				  unsigned long long us)
{
	kgo_prep_task(t, KGO_TASK_BLOCK, tag, us, 0);
}

static inline void kgo_prep_pingpong_hog(struct kgo_task *t, unsigned long long tag,
					 unsigned long long ns, unsigned long long loop)
{
	kgo_prep_task(t, KGO_TASK_PINGPONG_HOG, tag, ns, loop);
}

/*
 * Every completion in the CQ, oldest first: then kgo_ring_cq_advance()
 * by how many were looked at.
 */
#define kgo_ring_for_each_cqe(ring, head, cqe)					\
	for ((head) = *(ring)->cq_head;						\
	     (head) != kgo_ring_load_acquire((ring)->cq_tail) &&		\
	     ((cqe) = &(ring)->cqes[(head) & ((ring)->cq_entries - 1)], 1);	\
	     (head)++)

#ifdef __cplusplus
}
#endif

#endif /* LIBKGO_H */
