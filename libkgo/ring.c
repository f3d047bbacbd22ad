// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libkgo: setting a ring up, tearing it down, and the system call.
 * The rest is inline in libkgo.h.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libkgo.h"

#define KGO_EXPORT __attribute__((visibility("default")))

/* A ring on @fd, which the caller opened; see kgo_ring_init_params(3). */
KGO_EXPORT int kgo_ring_init_params(int fd, struct kgo_ring *ring, struct kgo_ring_params *p)
{
	void *mem;

	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
	p->size = sizeof(*p);
	if (ioctl(fd, KGO_IOC_RING_SETUP, p) < 0)
		return -errno;
	mem = mmap(NULL, p->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		   fd, KGO_RING_OFF_ALL);
	if (mem == MAP_FAILED)
		return -errno;	/* the fd keeps its ring: mmap it again */
	ring->fd = fd;
	ring->flags = p->flags;
	ring->mem = mem;
	ring->mem_size = p->mmap_size;
	ring->sq_head = (unsigned int *)((char *)mem + p->off.sq_head);
	ring->sq_tail = (unsigned int *)((char *)mem + p->off.sq_tail);
	ring->sq_flags = (unsigned int *)((char *)mem + p->off.sq_flags);
	ring->cq_head = (unsigned int *)((char *)mem + p->off.cq_head);
	ring->cq_tail = (unsigned int *)((char *)mem + p->off.cq_tail);
	ring->sqes = (struct kgo_task *)((char *)mem + p->off.sqes);
	ring->cqes = (struct kgo_completion *)((char *)mem + p->off.cqes);
	ring->sq_entries = p->sq_entries;
	ring->cq_entries = p->cq_entries;
	ring->sq_local_tail = *ring->sq_tail;
	return 0;
}

/* Opens /dev/kgo and sets up a ring of @entries SQ entries (CQ: twice). */
KGO_EXPORT int kgo_ring_init(unsigned int entries, struct kgo_ring *ring, unsigned int flags)
{
	struct kgo_ring_params p;
	int fd, ret;

	memset(&p, 0, sizeof(p));
	p.sq_entries = entries;
	p.flags = flags;
	fd = open(KGO_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = kgo_ring_init_params(fd, ring, &p);
	if (ret) {
		close(fd);
		return ret;
	}
	ring->own_fd = 1;
	return 0;
}

/*
 * Unmaps the ring, and closes the fd if kgo_ring_init() opened it: tasks
 * still in flight are then cancelled (see kgo_ring_exit(3)).
 */
KGO_EXPORT void kgo_ring_exit(struct kgo_ring *ring)
{
	if (ring->mem)
		munmap(ring->mem, ring->mem_size);
	if (ring->own_fd && ring->fd >= 0)
		close(ring->fd);
	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
}

/* KGO_IOC_ENTER as it is; interrupted waits are not retried. */
KGO_EXPORT int kgo_ring_enter(struct kgo_ring *ring, unsigned int to_submit,
			      unsigned int min_complete, unsigned int flags,
			      unsigned long long timeout_ns)
{
	struct kgo_enter e = {
		.size = sizeof(e),
		.flags = flags,
		.to_submit = to_submit,
		.min_complete = min_complete,
		.timeout_ns = timeout_ns,
	};
	int ret = ioctl(ring->fd, KGO_IOC_ENTER, &e);

	return ret < 0 ? -errno : ret;
}

/* Publishes the entries got since the last call; returns how many are ready. */
static unsigned int kgo_ring_flush_sq(struct kgo_ring *ring)
{
	/* Release: the entries are written before the tail shows them. */
	if (*ring->sq_tail != ring->sq_local_tail)
		kgo_ring_store_release(ring->sq_tail, ring->sq_local_tail);
	return kgo_ring_sq_ready(ring);
}

/*
 * With an SQ poller (KGO_RING_SQPOLL) publishing is submitting: enter
 * only to wake it, if it sleeps, or to wait. Returns what was published.
 */
static int kgo_ring_submit_sqpoll(struct kgo_ring *ring, unsigned int wait_nr,
				  unsigned long long timeout_ns)
{
	unsigned int n = ring->sq_local_tail - *ring->sq_tail, flags = 0;
	int ret;

	kgo_ring_flush_sq(ring);
	/* Pairs with the poller's barrier between NEED_WAKEUP and its look. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(ring->sq_flags, __ATOMIC_RELAXED) & KGO_SQ_NEED_WAKEUP)
		flags |= KGO_ENTER_SQ_WAKEUP;
	if (wait_nr && kgo_ring_cq_ready(ring) >= wait_nr)
		wait_nr = 0;
	if (!flags && !wait_nr)
		return n;
	do
		ret = kgo_ring_enter(ring, 0, wait_nr, flags, timeout_ns);
	while (ret == -EINTR);
	/* Published is submitted: a wait that ran out changes nothing. */
	if (ret == -ETIMEDOUT && n)
		return n;
	return ret < 0 ? ret : (int)n;
}

static int kgo_ring_submit_wait(struct kgo_ring *ring, unsigned int wait_nr,
				unsigned long long timeout_ns)
{
	unsigned int n;
	int ret;

	if (ring->flags & KGO_RING_SQPOLL)
		return kgo_ring_submit_sqpoll(ring, wait_nr, timeout_ns);
	n = kgo_ring_flush_sq(ring);

	if (!n && !wait_nr)
		return 0;
	if (wait_nr && kgo_ring_cq_ready(ring) >= wait_nr)
		wait_nr = 0;	/* nothing to wait for */
	do
		ret = kgo_ring_enter(ring, n, wait_nr, 0, timeout_ns);
	while (ret == -EINTR && !n);	/* a signal before anything was done */
	return ret;
}

KGO_EXPORT int kgo_ring_submit_and_wait(struct kgo_ring *ring, unsigned int wait_nr)
{
	return kgo_ring_submit_wait(ring, wait_nr, KGO_WAIT_FOREVER);
}

KGO_EXPORT int kgo_ring_submit(struct kgo_ring *ring)
{
	return kgo_ring_submit_and_wait(ring, 0);
}

/*
 * Waits for @wait_nr completions (or every task in flight, if fewer),
 * up to @timeout_ns, then returns the oldest in *@cqe.
 */
KGO_EXPORT int kgo_ring_wait_cqe_nr(struct kgo_ring *ring, struct kgo_completion **cqe,
				    unsigned int wait_nr, unsigned long long timeout_ns)
{
	int ret;

	if (kgo_ring_cq_ready(ring) < wait_nr) {
		ret = kgo_ring_enter(ring, 0, wait_nr, 0, timeout_ns);
		if (ret < 0)
			return ret;
	}
	return kgo_ring_peek_cqe(ring, cqe);
}

/* Up to @count of the oldest completions, in order; marks none seen. */
KGO_EXPORT unsigned int kgo_ring_peek_batch_cqe(struct kgo_ring *ring,
						struct kgo_completion **cqes,
						unsigned int count)
{
	unsigned int ready = kgo_ring_cq_ready(ring), head = *ring->cq_head, i;

	if (count > ready)
		count = ready;
	for (i = 0; i < count; i++)
		cqes[i] = &ring->cqes[(head + i) & (ring->cq_entries - 1)];
	return count;
}

/*
 * As kgo_ring_submit_and_wait(), but a wait gives up after @timeout_ns:
 * -ETIMEDOUT if nothing was submitted either, else what was submitted
 * (the CQ then shows whether the wait was met).
 */
KGO_EXPORT int kgo_ring_submit_and_wait_timeout(struct kgo_ring *ring, unsigned int wait_nr,
						unsigned long long timeout_ns)
{
	return kgo_ring_submit_wait(ring, wait_nr, timeout_ns);
}

KGO_EXPORT int kgo_get_info(int fd, struct kgo_info *info)
{
	/* Zeroed: an older module leaves the fields it lacks alone. */
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, KGO_IOC_GET_INFO, info) < 0 ? -errno : 0;
}

/*
 * One snapshot: the counters into @stats and up to @procs_max per-P
 * records into @procs (may be NULL with 0). stats->nr_procs says how
 * many Ps there are; if more than @procs_max, call again with room.
 */
KGO_EXPORT int kgo_get_stats(int fd, struct kgo_stats *stats,
			     struct kgo_proc_stats *procs, unsigned int procs_max)
{
	memset(stats, 0, sizeof(*stats));
	stats->size = sizeof(*stats);
	stats->procs = (uintptr_t)procs;
	stats->procs_max = procs ? procs_max : 0;
	stats->proc_size = sizeof(*procs);
	return ioctl(fd, KGO_IOC_STATS, stats) < 0 ? -errno : 0;
}

/*
 * Cancels this fd's tasks tagged @tag, or all of them with
 * KGO_CANCEL_ALL (@tag is then ignored); KGO_CANCEL_RUNNING interrupts
 * running ones too. Returns how many were cancelled.
 */
KGO_EXPORT int kgo_cancel(int fd, unsigned long long tag, unsigned int flags)
{
	struct kgo_cancel c = {
		.size = sizeof(c),
		.flags = flags,
		.tag = flags & KGO_CANCEL_ALL ? 0 : tag,
	};

	if (ioctl(fd, KGO_IOC_CANCEL, &c) < 0)
		return -errno;
	return c.cancelled;
}

/* The header a program was built with says LIBKGO_VERSION_*; these, the library. */
KGO_EXPORT int kgo_version_major(void)
{
	return LIBKGO_VERSION_MAJOR;
}

KGO_EXPORT int kgo_version_minor(void)
{
	return LIBKGO_VERSION_MINOR;
}

KGO_EXPORT int kgo_version_patch(void)
{
	return LIBKGO_VERSION_PATCH;
}
