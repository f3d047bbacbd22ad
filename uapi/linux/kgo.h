/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kgo: goroutines inside the Linux kernel -- the /dev/kgo ioctl ABI.
 *
 * Every ioctl takes a pointer to a struct that starts with
 * "__u32 size; __u32 flags;". @size is sizeof() the struct as the caller
 * was compiled with, so that old binaries keep working on new modules
 * and new binaries on old modules:
 *
 *  - a @size below the struct's first version gives -EINVAL: each
 *    struct's first size is named KGO_<STRUCT>_SIZE_VER0 below, and
 *    every size from it up to today's sizeof() is accepted; fields a
 *    shorter struct lacks read as zero, and are not written back;
 *  - a @size larger than the module knows is accepted if every byte past
 *    what the module knows is zero, and gives -E2BIG otherwise;
 *  - a @size larger than a page (the system's page size) is no struct
 *    version at all: -E2BIG, whatever the bytes past it, as clone3()
 *    and openat2() answer; the same holds for the task size of
 *    KGO_IOC_SUBMIT;
 *  - @flags bits the module does not know give -EINVAL, never silently
 *    ignored; fields named __reserved must be zero (-EINVAL);
 *  - output fields are written back only within @size bytes.
 *
 * Errors common to every ioctl: -EFAULT for a bad pointer, -ENOTTY for
 * an unknown ioctl number.
 */
#ifndef _UAPI_LINUX_KGO_H
#define _UAPI_LINUX_KGO_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KGO_DEVICE_PATH		"/dev/kgo"

/* Bumped for every incompatible change; additions extend structs instead. */
#define KGO_ABI_VERSION		1

/* Unassigned in Documentation/userspace-api/ioctl/ioctl-number.rst. */
#define KGO_IOC_MAGIC		0xB8

/*
 * The ioctl numbers do not encode a size (_IO, not _IOWR): the size
 * travels in the struct, which is what lets a struct grow.
 */
#define KGO_IOC_GET_INFO	_IO(KGO_IOC_MAGIC, 0x00)
#define KGO_IOC_SUBMIT		_IO(KGO_IOC_MAGIC, 0x01)
#define KGO_IOC_WAIT		_IO(KGO_IOC_MAGIC, 0x02)
#define KGO_IOC_STATS		_IO(KGO_IOC_MAGIC, 0x03)
#define KGO_IOC_CANCEL		_IO(KGO_IOC_MAGIC, 0x04)
#define KGO_IOC_RING_SETUP	_IO(KGO_IOC_MAGIC, 0x05)
#define KGO_IOC_ENTER		_IO(KGO_IOC_MAGIC, 0x06)

/**
 * struct kgo_info - argument of KGO_IOC_GET_INFO
 * @size: in: sizeof(struct kgo_info) as the caller knows it, at least
 *	  %KGO_INFO_SIZE_VER0
 * @flags: in: must be 0
 * @abi_version: out: %KGO_ABI_VERSION of the loaded module
 * @nr_procs: out: the number of Ps the scheduler runs goroutines on
 *	      (kgo's GOMAXPROCS: one per online CPU, or fewer as the
 *	      maxprocs parameter or kgo_gomaxprocs() set)
 * @stack_size: out: bytes of kernel stack each running goroutine holds
 * @task_size: out: sizeof(struct kgo_task) as the module knows it
 * @completion_size: out: sizeof(struct kgo_completion), the size of one
 *		     record read(2) returns
 * @__reserved: must be 0
 * @mem_budget: out: bytes that goroutine stacks and structs may hold in
 *		all (the max_mem_mb parameter). A spawn that would not
 *		leave room for one more stack fails with -ENOMEM: SUBMIT
 *		refuses the task, a SPAWN task completes with it (and
 *		with -EAGAIN when the user's max_user_goroutines is
 *		reached first).
 * @version: out: the module's version, KGO_VERSION_CODE(major, minor,
 *	     patch), as /sys/module/kgo/version spells it
 * @__reserved2: must be 0
 *
 * Describes the loaded module so that a tool can check it speaks the
 * same ABI before it submits anything.
 */
struct kgo_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 nr_procs;
	__u32 stack_size;
	__u32 task_size;
	__u32 completion_size;
	__u32 __reserved;
	__u64 mem_budget;
	__u32 version;
	__u32 __reserved2;
};

#define KGO_INFO_SIZE_VER0	16	/* up to and including @nr_procs */
#define KGO_INFO_SIZE_VER1	40	/* up to and including @mem_budget */
#define KGO_INFO_SIZE_VER2	48	/* up to and including @__reserved2 */

/* struct kgo_info's @version: 0.2.0 is KGO_VERSION_CODE(0, 2, 0). */
#define KGO_VERSION_CODE(major, minor, patch)	\
	(((major) << 16) | ((minor) << 8) | (patch))
#define KGO_VERSION_MAJOR(code)	((code) >> 16)
#define KGO_VERSION_MINOR(code)	(((code) >> 8) & 0xff)
#define KGO_VERSION_PATCH(code)	((code) & 0xff)

/*
 * The task catalogue: what a submitted task runs, as a goroutine.
 * Userspace cannot send code; these kinds are the vocabulary.
 *
 *  KGO_TASK_NOP       nothing.                        result: 0
 *  KGO_TASK_SPIN      busy CPU for args[0] ns, at most KGO_SPIN_MAX_NS,
 *                     without yielding to other goroutines.
 *                                                     result: ns spun
 *  KGO_TASK_YIELD     kgo_yield() args[0] times, at most KGO_YIELD_MAX.
 *                                                     result: yields done
 *  KGO_TASK_SPAWN     a tree of goroutines: every node spawns args[0]
 *                     children (the fan-out, 1..KGO_SPAWN_MAX_FANOUT)
 *                     down to args[1] levels below the root, and waits
 *                     for them with a WaitGroup. At most
 *                     KGO_SPAWN_MAX_NODES nodes (-E2BIG). A tree
 *                     that cannot grow completes with the nodes it
 *                     ran and status -EAGAIN (the user's
 *                     max_user_goroutines is reached) or -ENOMEM
 *                     (kgo's memory budget, see struct kgo_info).
 *                                                     result: nodes run
 *  KGO_TASK_CHECKSUM  CRC32C (Castagnoli, initial ~0, final xor ~0, as
 *                     iSCSI and ext4 use it) of args[1] bytes at user
 *                     address args[0], copied in at submit; at most
 *                     KGO_CHECKSUM_MAX_LEN bytes (-E2BIG).
 *                                                     result: the CRC
 *  KGO_TASK_SLEEP     a timer sleep of args[0] ns, at most
 *                     KGO_SLEEP_MAX_NS; the goroutine parks.
 *                                                     result: ns slept
 *  KGO_TASK_PINGPONG  two goroutines exchange args[0] round trips, at
 *                     most KGO_PINGPONG_MAX, over unbuffered channels.
 *                     (This kind, SELECT and PINGPONG_HOG run a second
 *                     goroutine, the user's too: when the user's
 *                     max_user_goroutines leaves no room for it, the
 *                     task completes with -EAGAIN.)
 *                                                     result: round trips
 *  KGO_TASK_SELECT    a producer goroutine sends args[0] values (at most
 *                     KGO_SELECT_TASK_MAX), one every args[1] ns (at
 *                     most KGO_SELECT_GAP_MAX_NS); the task receives
 *                     them in a select with a never-ready case and a
 *                     timeout of half the gap, which fires in between.
 *                                                     result: values received
 *  KGO_TASK_BLOCK     blocks in the kernel (an hrtimer sleep of the
 *                     kthread) for args[0] us, at most
 *                     KGO_BLOCK_MAX_US: its kthread sleeps, and kgo
 *                     hands the CPU's P to another one meanwhile.
 *                                                     result: ns blocked
 *  KGO_TASK_PINGPONG_HOG
 *                     Go's TestPingPongHog, one pair: two goroutines
 *                     pass a token back and forth over unbuffered
 *                     channels, and each, holding it, counts args[1]
 *                     times (1..KGO_PINGPONG_HOG_MAX_LOOP) in a loop
 *                     that makes no kgo call, until args[0] ns
 *                     (1..KGO_PINGPONG_HOG_MAX_NS) after the task was
 *                     accepted (after it started, on a ring with
 *                     KGO_RING_NO_TIMES). Tasks of this kind with a long and a
 *                     short loop, accepted together, show how the Ps
 *                     are shared between goroutines that hog them and
 *                     goroutines that switch often.
 *                                                     result: counts made
 *
 * Unused args must be 0. Every kind but NOP and CHECKSUM can be
 * interrupted by a cancel (struct kgo_cancel) or by closing the fd; the
 * result is then what it did until then, and a task done in full
 * reports args[0] (SPIN: at least args[0], SPAWN: every node,
 * PINGPONG_HOG: a multiple of args[1]).
 */
enum kgo_task_kind {
	KGO_TASK_NOP		= 1,
	KGO_TASK_SPIN		= 2,
	KGO_TASK_YIELD		= 3,
	KGO_TASK_SPAWN		= 4,
	KGO_TASK_CHECKSUM	= 5,
	KGO_TASK_SLEEP		= 6,
	KGO_TASK_PINGPONG	= 7,
	KGO_TASK_SELECT		= 8,
	KGO_TASK_BLOCK		= 9,
	KGO_TASK_PINGPONG_HOG	= 10,
};

#define KGO_SPIN_MAX_NS		1000000000ULL	/* 1 s */
#define KGO_YIELD_MAX		10000000ULL
#define KGO_SPAWN_MAX_FANOUT	64
#define KGO_SPAWN_MAX_NODES	(1ULL << 17)
#define KGO_CHECKSUM_MAX_LEN	(1ULL << 20)	/* 1 MiB */
#define KGO_SLEEP_MAX_NS	10000000000ULL	/* 10 s */
#define KGO_PINGPONG_MAX	10000000ULL
#define KGO_SELECT_TASK_MAX	1000000ULL
#define KGO_SELECT_GAP_MAX_NS	10000000ULL	/* 10 ms */
#define KGO_BLOCK_MAX_US	10000000ULL	/* 10 s */
#define KGO_PINGPONG_HOG_MAX_NS		10000000000ULL	/* 10 s */
#define KGO_PINGPONG_HOG_MAX_LOOP	10000000ULL

/*
 * Task flags (struct kgo_task's @flags).
 *
 * KGO_TASK_F_INLINE  run the task in the submitting thread, inside
 *     KGO_IOC_SUBMIT or KGO_IOC_ENTER, instead of in a goroutine, as
 *     io_uring issues a request inline unless told IOSQE_ASYNC. Its
 *     completion is posted before the call returns, so a following
 *     wait or read finds it without a context switch. Only kinds that
 *     never sleep and are bounded may ask: NOP and CHECKSUM (whose
 *     buffer is then read in place, not copied in). Any other kind
 *     with this flag is refused with -EINVAL. The completion's @cpu is
 *     the submitter's; it cannot be cancelled (it is done before
 *     anyone could ask). It does not take a turn behind the fd's
 *     backlog of goroutines: NOPs meant to measure the scheduler must
 *     not set it. A module older than this flag refuses it (-EINVAL).
 */
#define KGO_TASK_F_INLINE	(1U << 0)
#define KGO_TASK_FLAGS		KGO_TASK_F_INLINE

/**
 * struct kgo_task - one task descriptor of KGO_IOC_SUBMIT
 * @kind: enum kgo_task_kind
 * @flags: 0, or KGO_TASK_F_INLINE
 * @tag: any value; comes back in the task's completion
 * @args: kind-specific, see enum kgo_task_kind; unused ones must be 0
 * @__reserved: must be 0
 */
struct kgo_task {
	__u32 kind;
	__u32 flags;
	__aligned_u64 tag;
	__aligned_u64 args[3];
	__aligned_u64 __reserved;
};

#define KGO_TASK_SIZE_VER0	48	/* the first version: up to @__reserved */

/**
 * struct kgo_submit - argument of KGO_IOC_SUBMIT
 * @size: in: sizeof(struct kgo_submit)
 * @flags: in: must be 0
 * @tasks: in: user address of an array of @nr task descriptors
 * @nr: in: how many
 * @task_size: in: the size of one descriptor in that array, as the
 *	       caller knows struct kgo_task, at least %KGO_TASK_SIZE_VER0
 *	       (the same growth rules apply to each descriptor as to an
 *	       ioctl struct)
 *
 * Tasks are accepted in order. Each accepted task completes exactly
 * once: done, failed, or cancelled. The ioctl returns the number
 * accepted; it stops at the first task it cannot accept, which the
 * caller may submit again to learn why: if that is the first, the
 * ioctl returns the reason instead: -EINVAL (unknown kind, flags, a
 * non-zero reserved or unused field, an argument out of range), -E2BIG
 * (a tree or buffer over its maximum), -EFAULT (a bad buffer), -EAGAIN
 * (this fd's cap on tasks in flight or bytes copied in is reached:
 * read completions first), -ENOMEM (out of memory, or kgo's memory
 * budget for goroutines is full: see &struct kgo_info.mem_budget).
 *
 * A task is in flight from its acceptance until its completion is read.
 */
struct kgo_submit {
	__u32 size;
	__u32 flags;
	__aligned_u64 tasks;
	__u32 nr;
	__u32 task_size;
};

#define KGO_SUBMIT_SIZE_VER0	24	/* the first version: up to @task_size */

/**
 * struct kgo_completion - one completion record, as read(2) returns it
 * @tag: the task's tag
 * @result: kind-specific, see enum kgo_task_kind
 * @status: 0 done; -ECANCELED cancelled, before it started (@started_ns
 *	    0) or while it ran (@result is then what it did so far: see
 *	    enum kgo_task_kind); or -errno
 * @cpu: the CPU that ran it; ~0 if it never ran
 * @kind: the task's kind
 * @__reserved: 0
 * @queued_ns: when it was accepted (CLOCK_MONOTONIC)
 * @started_ns: when its goroutine started; 0 if it never ran
 * @ended_ns: when it completed
 *
 * read(2) returns whole records only: a buffer smaller than one record
 * is -EINVAL. It blocks until at least one is ready, unless the fd is
 * O_NONBLOCK (-EAGAIN). poll(2) reports POLLIN while records are ready.
 */
struct kgo_completion {
	__aligned_u64 tag;
	__aligned_u64 result;
	__s32 status;
	__u32 cpu;
	__u32 kind;
	__u32 __reserved;
	__aligned_u64 queued_ns;
	__aligned_u64 started_ns;
	__aligned_u64 ended_ns;
};

#define KGO_COMPLETION_SIZE_VER0 56	/* the first version: up to @ended_ns */

/**
 * struct kgo_wait - argument of KGO_IOC_WAIT
 * @size: in: sizeof(struct kgo_wait)
 * @flags: in: must be 0
 * @min_complete: in: wait until at least this many completions are
 *		  ready to read
 * @ready: out: how many are ready
 * @timeout_ns: in: give up after this long; 0 does not wait,
 *		%KGO_WAIT_FOREVER never gives up
 *
 * Returns 0 once @min_complete are ready, or once nothing more is in
 * flight that could complete (then @ready may be smaller: another
 * thread read them); -ETIMEDOUT when the time ran out; -EINTR on a
 * signal.
 */
struct kgo_wait {
	__u32 size;
	__u32 flags;
	__u32 min_complete;
	__u32 ready;
	__aligned_u64 timeout_ns;
};

#define KGO_WAIT_SIZE_VER0	24	/* the first version: up to @timeout_ns */

#define KGO_WAIT_FOREVER	(~0ULL)

/**
 * struct kgo_cancel - argument of KGO_IOC_CANCEL
 * @size: in: sizeof(struct kgo_cancel)
 * @flags: in: %KGO_CANCEL_ALL, or 0 to cancel by @tag; and
 *	   %KGO_CANCEL_RUNNING to interrupt running tasks too
 * @tag: in: without %KGO_CANCEL_ALL, cancel this fd's tasks with this tag
 * @cancelled: out: how many were cancelled
 * @__reserved: must be 0
 *
 * Cancels tasks of this fd that have not started: each completes with
 * status -ECANCELED. With %KGO_CANCEL_RUNNING, running tasks are
 * interrupted too: each stops at its next check (within a few ms; a
 * sleep ends at once) and completes with -ECANCELED and its partial
 * result, unless it finished first. Each task is counted once, however
 * often it is cancelled. Closing the fd (and so the exit of the last
 * process holding it) cancels every task of the fd, running ones
 * included, and drops their completions.
 */
struct kgo_cancel {
	__u32 size;
	__u32 flags;
	__aligned_u64 tag;
	__u32 cancelled;
	__u32 __reserved;
};

#define KGO_CANCEL_SIZE_VER0	24	/* the first version: up to @__reserved */

#define KGO_CANCEL_ALL		(1U << 0)
#define KGO_CANCEL_RUNNING	(1U << 1)

/*
 * Shared rings: the fast path, in io_uring's manner.
 *
 * KGO_IOC_RING_SETUP gives an fd one submission ring (SQ) of struct
 * kgo_task and one completion ring (CQ) of struct kgo_completion, in
 * memory shared with the caller: mmap(2) it whole, MAP_SHARED, at file
 * offset %KGO_RING_OFF_ALL, with the length and at the offsets that
 * struct kgo_ring_params returns. The caller writes tasks into the SQ
 * and CQ completions come back there; KGO_IOC_ENTER consumes submitted
 * tasks and waits for completions, both in one call.
 *
 * Four indices, free-running __u32 counters that wrap at 2^32; an
 * entry's slot is index & mask (entries - 1: both rings are powers of
 * two). Each is written by one side only:
 *
 *   sq_tail  the caller: one past the last task it wrote.
 *   sq_head  the module: one past the last task it consumed.
 *   cq_tail  the module: one past the last completion it wrote.
 *   cq_head  the caller: one past the last completion it consumed.
 *
 * The memory-ordering contract, each pair an acquire on one side of
 * the release on the other:
 *
 *  1. The caller writes SQ entries, then stores sq_tail with a
 *     store-release. The module loads sq_tail with a load-acquire
 *     (in KGO_IOC_ENTER) before it reads those entries.
 *  2. The module copies each entry it consumes once, then stores
 *     sq_head with a store-release. The caller loads sq_head with a
 *     load-acquire before it writes into a slot again: slots before
 *     sq_head are free.
 *  3. The module writes a CQ entry, then stores cq_tail with a
 *     store-release. The caller loads cq_tail with a load-acquire
 *     before it reads the entries up to it.
 *  4. The caller reads CQ entries, then stores cq_head with a
 *     store-release. The module loads cq_head with a load-acquire (in
 *     KGO_IOC_ENTER) before it promises their slots to new tasks.
 *
 * In C11: atomic_store_explicit(..., memory_order_release) and
 * atomic_load_explicit(..., memory_order_acquire), or the
 * __atomic_*_n builtins with __ATOMIC_RELEASE and __ATOMIC_ACQUIRE;
 * libkgo does it for you.
 *
 * No completion is ever dropped. The module accepts a task only if its
 * completion has a CQ slot waiting for it: tasks consumed from the SQ
 * and not yet consumed by the caller from the CQ never outnumber
 * cq_entries. Past that, KGO_IOC_ENTER consumes nothing more and
 * returns -EBUSY when it consumed nothing: consume completions (advance
 * cq_head), then enter again. The module never trusts an index the
 * caller writes: a sq_tail more than sq_entries past sq_head is -EINVAL,
 * a cq_head more than cq_entries behind, or ahead of, the tasks the
 * module consumed from the SQ counts as a full CQ; each slot the module
 * touches is index & mask.
 *
 * Each SQ entry is copied once, then validated as KGO_IOC_SUBMIT does:
 * one that is not a valid task (-EINVAL, -E2BIG, -EFAULT for a
 * CHECKSUM buffer) is consumed, and completes at once with that status
 * in its completion, with its tag. What is not the entry's fault (the
 * CQ full, the user's goroutine cap, memory) leaves it in the SQ.
 *
 * The caps: the CQ's entries count as tasks in flight against the
 * fd's max_inflight and the user's max_user_inflight from setup until
 * the ring goes (its fd closed and unmapped, every task done); tasks
 * still take the user's max_user_goroutines one each (and the poller of
 * a %KGO_RING_SQPOLL ring one, from setup until the ring goes), and
 * CHECKSUM buffers count against max_bytes. The ring itself is one of
 * the user's max_user_rings. The ring's memory is charged to the
 * caller's memory cgroup.
 *
 * The mapping may be unmapped, and mapped again, at any time: the
 * module writes through its own mapping. A child process after fork(2)
 * shares the mapped ring, as it shares the fd. Closing the fd cancels
 * its tasks only once the ring is unmapped too (the mapping holds the
 * file open), as with read(2)'s completions: completions of tasks
 * cancelled that way are still written while the ring is mapped.
 */

/* The file offset to mmap(2) the rings at: the only one there is. */
#define KGO_RING_OFF_ALL	0ULL

/* Most entries a ring may have; the CQ's is also at most max_inflight. */
#define KGO_RING_SQ_MAX		32768
#define KGO_RING_CQ_MAX		65536

/**
 * struct kgo_ring_offsets - where things are in the mapped ring
 * @sq_head: byte offset of the SQ head index (__u32, the module writes)
 * @sq_tail: of the SQ tail index (__u32, the caller writes)
 * @cq_head: of the CQ head index (__u32, the caller writes)
 * @cq_tail: of the CQ tail index (__u32, the module writes)
 * @sq_flags: of a __u32 of %KGO_SQ_* bits (the module writes)
 * @sqes: of the SQ: sq_entries struct kgo_task
 * @cqes: of the CQ: cq_entries struct kgo_completion
 * @__reserved: 0
 *
 * Each index has a cache line of its own.
 */
struct kgo_ring_offsets {
	__u32 sq_head;
	__u32 sq_tail;
	__u32 cq_head;
	__u32 cq_tail;
	__u32 sq_flags;
	__u32 sqes;
	__u32 cqes;
	__u32 __reserved;
};

#define KGO_RING_OFFSETS_SIZE_VER0 32	/* the first version: up to @__reserved */

/**
 * struct kgo_ring_params - argument of KGO_IOC_RING_SETUP
 * @size: in: sizeof(struct kgo_ring_params)
 * @flags: in: %KGO_RING_* bits
 * @sq_entries: in: at least this many SQ entries, 1..%KGO_RING_SQ_MAX;
 *		out: how many, rounded up to a power of two
 * @cq_entries: in: at least this many CQ entries, or 0 for twice
 *		@sq_entries; no fewer than @sq_entries, at most
 *		%KGO_RING_CQ_MAX and the max_inflight parameter; out: how
 *		many, a power of two
 * @sq_idle_ms: in: with %KGO_RING_SQPOLL, how long the poller polls an
 *		empty SQ before it sleeps, 1..1000 (0: 10); else 0
 * @mmap_size: out: the length to mmap(2); must be 0 on input
 * @off: out: where the indices and entries are in the mapping; must be
 *	 all 0 on input
 * @__reserved: must be 0
 *
 * Returns 0; -EBUSY if the fd has a ring already (one per fd);
 * -EINVAL for sizes out of range, unknown flags, non-zero reserved
 * fields or a non-zero @mmap_size or @off on input (so that they may
 * carry input in a later version); -EAGAIN if the CQ's entries do not
 * fit in the fd's or the user's cap on tasks in flight (see above), if
 * the user has max_user_rings rings already, or if a poller
 * (%KGO_RING_SQPOLL), which counts as one of the user's
 * max_user_goroutines for the ring's life, does not fit; -ENOMEM.
 * Nothing is allocated before the caps are checked.
 */
struct kgo_ring_params {
	__u32 size;
	__u32 flags;
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 sq_idle_ms;
	__u32 mmap_size;
	struct kgo_ring_offsets off;
	__aligned_u64 __reserved;
};

#define KGO_RING_PARAMS_SIZE_VER0 64	/* the first version: up to @__reserved */

/*
 * A goroutine of the module polls the SQ (io_uring's SQPOLL): tasks the
 * caller publishes with sq_tail are consumed without a system call, and
 * KGO_IOC_ENTER's @to_submit is ignored. After sq_idle_ms without any,
 * the poller sleeps and sets %KGO_SQ_NEED_WAKEUP in sq_flags: the
 * caller, after its store-release of sq_tail and a full fence, loads
 * sq_flags and if the bit is set wakes the poller with KGO_IOC_ENTER and
 * %KGO_ENTER_SQ_WAKEUP. CHECKSUM tasks complete with -EOPNOTSUPP on
 * such a ring: the poller cannot read the caller's memory. The pollers'
 * CPU time is in &struct kgo_stats.sqpoll_ns.
 */
#define KGO_RING_SQPOLL		(1U << 0)

/*
 * The ring's completions carry no times: queued_ns, started_ns and
 * ended_ns are 0 (cpu still tells whether the task ran). Each time is
 * a clock read, which costs little on hardware with a usable TSC and
 * a great deal where the clock is an emulated device.
 */
#define KGO_RING_NO_TIMES	(1U << 1)

/* sq_flags bits */
#define KGO_SQ_NEED_WAKEUP	(1U << 0)

/*
 * The SQ poller could not consume the entry at sq_head, for a reason
 * that is not the entry's fault, and left it there: KGO_SQ_EAGAIN for
 * what ENTER reports as -EAGAIN (the user's max_user_goroutines, say),
 * KGO_SQ_ENOMEM for -ENOMEM (memory, kgo's memory budget, the memory
 * cgroup). It retries on a timer, after 1 ms, then twice as long each
 * time, up to sq_idle_ms; KGO_ENTER_SQ_WAKEUP makes it retry at once.
 * The bit is cleared once it consumes again. A module older than these
 * bits never sets them (its poller retries without a pause).
 */
#define KGO_SQ_EAGAIN		(1U << 1)
#define KGO_SQ_ENOMEM		(1U << 2)

/**
 * struct kgo_enter - argument of KGO_IOC_ENTER
 * @size: in: sizeof(struct kgo_enter)
 * @flags: in: %KGO_ENTER_* bits
 * @to_submit: in: consume up to this many tasks from the SQ (at most
 *	       what is between sq_head and sq_tail); 0 submits nothing.
 *	       With %KGO_RING_SQPOLL the poller consumes them: to_submit
 *	       is then ignored
 * @min_complete: in: then wait until at least this many completions
 *		  are in the CQ (between cq_head and cq_tail), or until
 *		  every task consumed so far has completed, whichever is
 *		  first; 0 does not wait
 * @timeout_ns: in: give up waiting after this long: 0 does not wait,
 *		%KGO_WAIT_FOREVER never gives up
 *
 * Returns the number of SQ entries consumed (0 or more), which may be
 * fewer than @to_submit: it stops at the first it cannot accept, and
 * returns the reason if that is the first: -EBUSY (the CQ could
 * overflow: consume completions first), -EAGAIN (the user's
 * max_user_goroutines; this fd's max_bytes for CHECKSUM buffers; or
 * every one of the ring's cq_entries task slots still held: a task
 * whose completion is in the CQ, even consumed, keeps its slot until
 * its goroutine has exited, a moment later, so enter again),
 * -ENOMEM (memory, or kgo's memory budget),
 * -EINVAL (a sq_tail too far ahead of sq_head). When nothing was
 * consumed, a wait that did not end well returns -ETIMEDOUT or -EINTR;
 * when something was, the wait's outcome is what the CQ shows. Also
 * -EBADFD: the fd has no ring; -EINVAL: unknown flags.
 *
 * The waiter is woken once, when its count is reached, not per
 * completion. Several threads may enter at once: submissions are
 * serialised, waits are not.
 */
struct kgo_enter {
	__u32 size;
	__u32 flags;
	__u32 to_submit;
	__u32 min_complete;
	__aligned_u64 timeout_ns;
};

#define KGO_ENTER_SIZE_VER0	24	/* the first version: up to @timeout_ns */

/* KGO_IOC_ENTER flags */
#define KGO_ENTER_SQ_WAKEUP	(1U << 0)	/* wake a sleeping SQ poller */

/* Buckets of the runnable-to-running histogram: [2^i, 2^(i+1)) ns. */
#define KGO_LATENCY_BUCKETS	32

/**
 * struct kgo_proc_stats - one P's record in KGO_IOC_STATS
 * @id: P number
 * @cpu: the CPU it runs on
 * @idle: 1 if no M holds it now
 * @runq_len: Gs queued on it now (ring and runnext)
 * @idle_ns: time spent idle, up to the last time it went busy; counted
 *	in scheduler ticks, so right on average over many short periods
 * @gcreated: goroutines spawned from goroutines on this P
 * @gstarted: goroutines that first ran here
 * @gfinished: goroutines that exited here
 * @schedticks: new time slices
 * @runnext_hits: goroutines run from runnext
 * @globrunq_takes: takes from the global queue
 * @steal_attempts: steal tries on other Ps
 * @steals: tries that got something
 * @stolen: goroutines stolen
 * @parks: goroutines that parked here
 * @readies: goroutines readied by goroutines here
 * @yields: kgo_yield() calls
 * @mparks: times its M gave it up to sleep
 * @mwakes: times an M was woken to run it
 * @spinning: times an M started spinning on it
 */
struct kgo_proc_stats {
	__u32 id;
	__u32 cpu;
	__u32 idle;
	__u32 runq_len;
	__aligned_u64 idle_ns;
	__aligned_u64 gcreated;
	__aligned_u64 gstarted;
	__aligned_u64 gfinished;
	__aligned_u64 schedticks;
	__aligned_u64 runnext_hits;
	__aligned_u64 globrunq_takes;
	__aligned_u64 steal_attempts;
	__aligned_u64 steals;
	__aligned_u64 stolen;
	__aligned_u64 parks;
	__aligned_u64 readies;
	__aligned_u64 yields;
	__aligned_u64 mparks;
	__aligned_u64 mwakes;
	__aligned_u64 spinning;
};

/**
 * struct kgo_stats - argument of KGO_IOC_STATS
 * @size: in: sizeof(struct kgo_stats), at least %KGO_STATS_SIZE_VER0
 * @flags: in: must be 0; out: %KGO_STATS_OWN for a caller without
 *	   CAP_SYS_ADMIN, which sees only its own figures: @goroutines, those
 *	   its uid's sessions caused (as the module's max_user_goroutines
 *	   counts them), and every other figure 0, no
 *	   per-P record (@nr_procs 0). With CAP_SYS_ADMIN, the whole
 *	   scheduler's, as below, and @flags 0
 * @procs: in: user address of room for @procs_max records, or 0
 * @procs_max: in: how many records fit there
 * @proc_size: in: the size of one record as the caller knows struct
 *	       kgo_proc_stats (at least %KGO_PROC_STATS_SIZE_VER0); the
 *	       module writes min(@proc_size, its own size) bytes of each
 * @nr_procs: out: Ps in use (as %KGO_IOC_GET_INFO); records written, in P
 *	      id order: min(@nr_procs, @procs_max)
 * @nr_procs_idle: out: Ps with no M
 * @nr_ms: out: Ms (kthreads)
 * @nr_ms_idle: out: Ms parked
 * @nr_ms_spinning: out: Ms looking for work
 * @__reserved: must be 0
 * @goroutines: out: goroutines spawned and not yet exited
 * @global_runq: out: goroutines on the global queue
 * @created_outside: out: goroutines spawned from outside any goroutine
 * @readied_outside: out: goroutines readied from outside any goroutine
 * @sqpoll_ns: out: time SQ pollers (%KGO_RING_SQPOLL) have spent awake,
 *	       polling or submitting, since kgo was loaded
 * @sqpoll_tasks: out: tasks they consumed
 * @latency: out: goroutines by time spent runnable before they ran
 *	     (Go's /sched/latencies): @latency[i] counts [2^i, 2^(i+1)) ns,
 *	     the last bucket everything longer. A sample, as Go's is: one
 *	     in 8 of each goroutine's runs (the first run of one goroutine
 *	     in 8), so that the others read no clock
 */
struct kgo_stats {
	__u32 size;
	__u32 flags;
	__aligned_u64 procs;
	__u32 procs_max;
	__u32 proc_size;
	__u32 nr_procs;
	__u32 nr_procs_idle;
	__u32 nr_ms;
	__u32 nr_ms_idle;
	__u32 nr_ms_spinning;
	__u32 __reserved;
	__aligned_u64 goroutines;
	__aligned_u64 global_runq;
	__aligned_u64 created_outside;
	__aligned_u64 readied_outside;
	__aligned_u64 latency[KGO_LATENCY_BUCKETS];
	__aligned_u64 sqpoll_ns;
	__aligned_u64 sqpoll_tasks;
};

/* Out in @flags: the caller's own figures, not the scheduler's. */
#define KGO_STATS_OWN		(1U << 0)

/* The first version ended at @latency; @sqpoll_ns and @sqpoll_tasks came next. */
#define KGO_STATS_SIZE_VER0	336
#define KGO_STATS_SIZE_VER1	352	/* up to and including @sqpoll_tasks */

#define KGO_PROC_STATS_SIZE_VER0	144	/* the first version: spinning included */

#endif /* _UAPI_LINUX_KGO_H */
