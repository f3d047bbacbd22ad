/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgo: goroutines inside the Linux kernel -- the API for other modules.
 *
 * A goroutine runs a function on its own kernel stack, on one of kgo's
 * per-CPU kthreads (an M), and may switch away from that stack only at a
 * kgo call: kgo_yield(), kgo_park(), kgo_wg_wait(), kgo_exit() or the
 * function's return. Between kgo calls it is ordinary kernel code on a
 * kthread, and may do what a kthread may, sleeping included.
 *
 * Rules for code that runs as a goroutine:
 *
 *  - At a switch point no per-task kernel state may be live: no spinlock
 *    or sleeping lock held, interrupts and preemption enabled, outside
 *    any RCU read-side section and pagefault_disable(), no
 *    memalloc_*_save() scope, task state TASK_RUNNING. The goroutine may
 *    resume on another kthread and CPU, where none of that state exists.
 *    Debug kernels (lockdep or DEBUG_ATOMIC_SLEEP) check this at every
 *    switch and WARN.
 *  - Build it notrace (remove $(CC_FLAGS_FTRACE) in Kbuild): the
 *    function-graph tracer keeps a per-task return stack that a switch
 *    would leave pointing at the wrong frames.
 *  - A goroutine is not a task: it has no task_struct, signals or
 *    priority of its own. current is the kthread it runs on now.
 *  - What a goroutine may assume about its M: that it stays on it, and
 *    on its CPU, from one kgo call to the next (the M is bound to its
 *    CPU), and nothing else. Its M may lose the right to run goroutines
 *    (its P) meanwhile, to another M of the same CPU: when it sleeps in
 *    the kernel, and when it runs for two slices without a kgo call
 *    while other goroutines wait. The two kthreads then share the CPU
 *    as the kernel schedules them, so a goroutine that never calls kgo
 *    still lets the others run, at the kernel's preemption points:
 *    cond_resched(), and interrupt return on a preemptible kernel. A
 *    loop that reaches neither (no cond_resched() under preempt=none)
 *    holds its CPU, as any kthread would. At its next kgo call it gets
 *    a P back, or is queued until one is free.
 *
 * Context rules per function are in each kernel-doc comment below. A
 * call that may block (a sleep, a wait, a lock or a channel operation
 * with a timeout other than KGO_NOWAIT) made from atomic context
 * (interrupts, interrupts off, a spinlock or an RCU read side held)
 * warns once per function and fails with -EPERM, on every kernel; it
 * never sleeps there.
 *
 * On PREEMPT_RT, interrupt handlers run in threads, and a spinlock_t
 * sleeps. kgo_go() and kgo_ready() work in hard interrupt context too
 * there (a HARD hrtimer, an IRQF_NO_THREAD handler, a raw spinlock
 * held); such a spawn takes its struct from a small reserve, and fails
 * with -ENOMEM while it is empty. The calls that take a kgo_waitgroup's,
 * a kgo_mutex's, a context's or a channel's lock are for threaded
 * handlers and spinlock_t sections there, not hard interrupt context:
 * where this file says "hardirq included" of them, that is what it
 * means on RT, as for the kernel's own spinlock_t users.
 */
#ifndef _KGO_H
#define _KGO_H

#include <linux/atomic.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/version.h>

/*
 * The API is exported in the symbol namespace KGO. A module that calls
 * it says so once, beside its MODULE_LICENSE(): KGO_MODULE_IMPORT();
 * Without it, modpost fails the module's build and insmod refuses it.
 * 6.13 made namespace names string literals; KGO_NS is the name in the
 * form the kernel being built against wants, for MODULE_IMPORT_NS() and
 * kgo's own EXPORT_SYMBOL_NS_GPL().
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define KGO_NS "KGO"
#else
#define KGO_NS KGO
#endif
#define KGO_MODULE_IMPORT() MODULE_IMPORT_NS(KGO_NS)

struct kgo_g;

/* The body of a goroutine. Returning from it ends the goroutine. */
typedef void (*kgo_func_t)(void *arg);

/**
 * kgo_go() - start a goroutine
 * @fn: the function it runs
 * @arg: passed to @fn
 * @gfp: allocation flags for the goroutine's struct: GFP_KERNEL where the
 *	 caller may sleep, GFP_ATOMIC from atomic context
 *
 * Context: any, hardirq and softirq included (with GFP_ATOMIC). From a
 * goroutine, the new one goes to the front of the current P's queue
 * (Go's runnext) and inherits the rest of the time slice; from anywhere
 * else, to the global queue. An idle P is woken if there is one.
 *
 * The goroutine takes a stack only when it first runs: until then it
 * costs its struct alone. Goroutines live at once are bounded by kgo's
 * memory budget (the max_mem_mb parameter): a spawn that would not leave
 * room for one more stack fails with -ENOMEM, and one that was let in
 * waits for a stack at its first run if others took the room first.
 * While the machine's MemAvailable is low (below 1.5 times the
 * mem_floor_mb parameter), every spawn fails with -ENOMEM. Allocations
 * never call in the OOM killer.
 *
 * Return: the new goroutine's id (>= 1), -ENOMEM, or -ESHUTDOWN while
 * the module is unloading.
 */
s64 kgo_go(kgo_func_t fn, void *arg, gfp_t gfp);

/**
 * kgo_yield() - let other goroutines run (Go's runtime.Gosched)
 *
 * Context: a goroutine; outside one, this is cond_resched().
 * The caller goes to the back of its P's queue and runs again later,
 * maybe on another CPU.
 */
void kgo_yield(void);

/**
 * kgo_preempt_point() - a place where a long loop may be preempted
 *
 * Context: a goroutine, nothing held that it may not switch with;
 * outside one, this is cond_resched(). Like cond_resched(): yields only
 * if the goroutine has run for longer than its slice (module parameter
 * slice_ms, 10 ms by default), which kgo's monitor tracks; it then goes
 * behind everything on the global queue. Also the point where a
 * goroutine whose P was handed off while it blocked (see
 * kgo_block_begin()), or taken while it ran without a kgo call, takes
 * it back if it is idle, or else gives up its M. Cheap enough for every iteration.
 * Blocking channel operations, kgo_sleep(), kgo_mutex_lock() and every
 * kgo_sock_*() call that may wait check for preemption in the same way.
 */
void kgo_preempt_point(void);

/**
 * kgo_block_begin() - the goroutine is about to block in the kernel
 *
 * Brackets, with kgo_block_end(), a call known to sleep (I/O, msleep(),
 * wait_event()): the goroutine's P goes to another M at once, so the
 * goroutines queued behind it run meanwhile (Go's entersyscallblock).
 * Without it, kgo notices a goroutine that sleeps in the kernel and
 * hands its P off after handoff_us (module parameter, 20 us by default;
 * this needs CONFIG_PREEMPT_NOTIFIERS, which Debian's kernels have).
 *
 * Context: a goroutine, nothing held that it may not switch with; no
 * effect elsewhere. Not nested. Until kgo_block_end(), kgo treats the
 * caller as a thread: kgo calls that would switch goroutines block the
 * task instead (channels, kgo_wg_wait(), kgo_sleep()), kgo_yield() is
 * cond_resched(), kgo_park() fails with -EPERM, and what it spawns or
 * readies is queued as from outside. kgo_self() still names it.
 * Returning or kgo_exit() ends the block.
 */
void kgo_block_begin(void);

/**
 * kgo_block_end() - the blocking call of kgo_block_begin() returned
 *
 * Takes the P back if it is idle; else the goroutine goes to the global
 * queue and resumes on whichever P takes it (Go's exitsyscall).
 *
 * Context: the goroutine that called kgo_block_begin(), nothing held.
 */
void kgo_block_end(void);

/**
 * kgo_gomaxprocs() - how many Ps run goroutines (Go's runtime.GOMAXPROCS)
 * @n: the number to use, or <= 0 only to ask
 *
 * Ps are those of the first @n online CPUs (fewer if fewer are online);
 * the module parameter maxprocs sets it at load, 0 meaning every CPU.
 * Goroutines queued on a P that stops move to the others. Waits for a P
 * that runs a goroutine until that goroutine's next kgo call.
 *
 * Context: process, may sleep (from a goroutine too).
 * Return: the number of Ps running goroutines before the call.
 */
int kgo_gomaxprocs(int n);

/**
 * kgo_exit() - end the calling goroutine (Go's runtime.Goexit)
 *
 * Context: a goroutine, where it does not return. Called elsewhere it
 * WARNs and returns.
 */
void kgo_exit(void);

/**
 * kgo_self() - the calling goroutine
 *
 * Context: any.
 * Return: the goroutine, or NULL when not called from one
 * (interrupt context included).
 */
struct kgo_g *kgo_self(void);

/**
 * kgo_id() - id of the calling goroutine
 *
 * Return: the id kgo_go() returned for it, or 0 when not in a goroutine.
 */
u64 kgo_id(void);

/**
 * kgo_park() - block the calling goroutine until kgo_ready()
 * @unlockf: called once the goroutine is off its stack, on the kthread
 *	     that ran it; may be NULL
 * @arg: passed to @unlockf
 *
 * The goroutine is marked waiting and switched out; only then is
 * @unlockf called, typically to release the lock that protects the wait
 * list the goroutine put itself on. So whoever finds it there under that
 * lock finds it parked, and may kgo_ready() it at once. If @unlockf
 * returns false the goroutine does not park but continues (unless
 * someone readied it first, which comes to the same): at once, or, when
 * its switch went straight to another goroutine of its P, first in line
 * once that one switches out.
 *
 * @unlockf runs in the scheduler, between two goroutines, with
 * interrupts off: it must not sleep or park. It runs either on the
 * kthread's own stack or, when the switch went straight to the next
 * goroutine, on that goroutine's.
 *
 * Context: a goroutine.
 * Return: 0 once readied; -EPERM when not called
 * from a goroutine (nothing happens then).
 */
int kgo_park(bool (*unlockf)(struct kgo_g *g, void *arg), void *arg);

/**
 * kgo_ready() - make a parked goroutine runnable
 * @g: a goroutine in kgo_park()
 *
 * Context: any, hardirq included. From a goroutine, @g runs next on the
 * caller's P (Go's runnext); from anywhere else to an idle P whose CPU
 * has a parked M, or else to the global queue. Readying a goroutine that
 * is not parked is a bug: it WARNs once and does nothing. A ready meant
 * for an earlier park of a goroutine that has parked again cannot be
 * told from a rightful one: as in Go, exactly one waker owns each
 * wake-up, the one that took the goroutine off its wait list under that
 * list's lock (the pattern kgo_park()'s unlockf exists for). @g may run,
 * exit and be reused as soon as this is called: do not touch it
 * afterwards.
 *
 * Return: 0, or -EINVAL if @g was not parked.
 */
int kgo_ready(struct kgo_g *g);

/**
 * struct kgo_waitgroup - wait for a set of goroutines (Go's sync.WaitGroup)
 * @lock: protects @waiters, and the waiters flag of @state; irq-safe
 * @state: outstanding kgo_wg_done()s, and whether anyone may be waiting
 * @waiters: goroutines and threads in kgo_wg_wait()
 *
 * Initialise with kgo_wg_init(). Fields are private.
 */
struct kgo_waitgroup {
	spinlock_t lock;	/* @waiters, @state's waiters flag */
	atomic_long_t state;
	struct list_head waiters;
};

/**
 * kgo_wg_init() - a WaitGroup with a count of zero
 * @wg: the wait group
 *
 * Context: any.
 */
void kgo_wg_init(struct kgo_waitgroup *wg);

/**
 * kgo_wg_add() - add @delta (may be negative) to the count
 * @wg: the wait group
 * @delta: how many more kgo_wg_done() calls to wait for
 *
 * When the count reaches zero every waiter is woken. A count below zero
 * is a bug: it WARNs and is clamped to zero.
 *
 * Context: any, hardirq included.
 */
void kgo_wg_add(struct kgo_waitgroup *wg, long delta);

/**
 * kgo_wg_done() - kgo_wg_add(@wg, -1)
 * @wg: the wait group
 */
static inline void kgo_wg_done(struct kgo_waitgroup *wg)
{
	kgo_wg_add(wg, -1);
}

/**
 * kgo_wg_done_and_exit() - kgo_wg_done(), then end the calling goroutine
 * @wg: the wait group
 *
 * For a goroutine whose code is in a module that waits for it on @wg
 * before unloading (kthread_complete_and_exit()'s case): after a plain
 * kgo_wg_done() the goroutine still has to return through the module's
 * text, which the unload may already have freed. This one does not
 * return.
 *
 * Context: a goroutine. Elsewhere it WARNs once, as kgo_exit() does,
 * and returns after the kgo_wg_done().
 */
void kgo_wg_done_and_exit(struct kgo_waitgroup *wg);

/**
 * kgo_go_wg() - kgo_go(), counted on a WaitGroup until the goroutine ends
 * @wg: the wait group; kgo_wg_add(@wg, 1) now, kgo_wg_done(@wg) at the end
 * @fn: the function the goroutine runs
 * @arg: passed to @fn
 * @gfp: as for kgo_go()
 *
 * Go's WaitGroup.Go. The done is made by kgo's own code once the
 * goroutine has left @fn, by returning or by kgo_exit(), and nothing of
 * the goroutine runs in @fn's module after it. So a module that waits on
 * @wg in its exit function may be unloaded once the wait returns, as
 * flush_work() promises of a work item: @fn needs no
 * kgo_wg_done_and_exit(), and must not call kgo_wg_done(@wg) itself.
 *
 * Context: as kgo_go().
 * Return: as kgo_go(); on an error @wg's count is as before the call.
 */
s64 kgo_go_wg(struct kgo_waitgroup *wg, kgo_func_t fn, void *arg, gfp_t gfp);

/**
 * kgo_wg_wait_timeout() - wait until the count is zero
 * @wg: the wait group
 * @timeout_ns: KGO_NOWAIT, ns, or KGO_FOREVER
 *
 * Context: a goroutine, which parks (its kthread runs other goroutines),
 * or process context, which sleeps uninterruptibly.
 * Return: 0, or -ETIMEDOUT (-EAGAIN for KGO_NOWAIT) if it is not zero yet;
 * -EPERM from atomic context.
 */
int kgo_wg_wait_timeout(struct kgo_waitgroup *wg, u64 timeout_ns);

/**
 * kgo_wg_wait_killable() - kgo_wg_wait_timeout(), ended by a fatal signal
 * @wg: the wait group
 * @timeout_ns: KGO_NOWAIT, ns, or KGO_FOREVER
 *
 * The _killable variant is for a thread that waits on behalf of a
 * process (an ioctl, a write): a fatal signal ends the wait with
 * -EINTR, and nothing is lost, as at a timeout. A goroutine receives no
 * signals; for it the variant is the plain call.
 *
 * Context: as kgo_wg_wait_timeout(); a thread sleeps killable.
 * Return: as kgo_wg_wait_timeout(), or -EINTR if the thread was killed.
 */
int kgo_wg_wait_killable(struct kgo_waitgroup *wg, u64 timeout_ns);

/* kgo_wg_wait_timeout() with KGO_FOREVER. Return: 0; -EPERM from atomic context. */
static inline int kgo_wg_wait(struct kgo_waitgroup *wg)
{
	return kgo_wg_wait_timeout(wg, U64_MAX);	/* KGO_FOREVER */
}

/**
 * struct kgo_mutex - a goroutine-aware mutex
 * @lock: protects the fields below
 * @locked: held
 * @waiters: goroutines and threads waiting, FIFO
 *
 * A contended kgo_mutex_lock() parks the goroutine, not its kthread, and
 * a kgo_mutex may be held across switches (unlike a struct mutex, whose
 * owner is a task). kgo_mutex_unlock() hands the mutex straight to the
 * first waiter. Fields are private; DEFINE_KGO_MUTEX or kgo_mutex_init().
 */
struct kgo_mutex {
	spinlock_t lock;	/* @locked, @waiters */
	bool locked;
	struct list_head waiters;
};

#define KGO_MUTEX_INIT(name) {						\
	.lock = __SPIN_LOCK_UNLOCKED(name.lock),			\
	.waiters = LIST_HEAD_INIT(name.waiters),			\
}

#define DEFINE_KGO_MUTEX(name)	struct kgo_mutex name = KGO_MUTEX_INIT(name)

/**
 * kgo_mutex_init() - an unlocked mutex
 * @m: the mutex
 *
 * Context: any.
 */
void kgo_mutex_init(struct kgo_mutex *m);

/**
 * kgo_mutex_lock_timeout() - take the mutex
 * @m: the mutex
 * @timeout_ns: KGO_NOWAIT (a trylock: any context), ns, or KGO_FOREVER
 *	       (a goroutine or process context)
 *
 * Return: 0, or -EAGAIN / -ETIMEDOUT without the mutex; -EPERM from
 * atomic context unless KGO_NOWAIT.
 */
int kgo_mutex_lock_timeout(struct kgo_mutex *m, u64 timeout_ns);

/**
 * kgo_mutex_lock_killable() - kgo_mutex_lock_timeout(), ended by a fatal signal
 * @m: the mutex
 * @timeout_ns: as for kgo_mutex_lock_timeout()
 *
 * The _killable variant is for a thread that waits on behalf of a
 * process (an ioctl, a write): a fatal signal ends the wait with
 * -EINTR, and nothing is lost, as at a timeout. A goroutine receives no
 * signals; for it the variant is the plain call.
 *
 * Return: as kgo_mutex_lock_timeout(), or -EINTR, without the mutex, if
 * the thread was killed.
 */
int __must_check kgo_mutex_lock_killable(struct kgo_mutex *m, u64 timeout_ns);

/*
 * kgo_mutex_lock_timeout() with KGO_FOREVER.
 * Return: 0 with the mutex; -EPERM (and a warning) from atomic context, without
 * it: a caller that went on would unlock a mutex it does not hold.
 */
static inline int __must_check kgo_mutex_lock(struct kgo_mutex *m)
{
	return kgo_mutex_lock_timeout(m, U64_MAX);	/* KGO_FOREVER */
}

static inline bool kgo_mutex_trylock(struct kgo_mutex *m)
{
	return !kgo_mutex_lock_timeout(m, 0);
}

/**
 * kgo_mutex_unlock() - release the mutex, to its first waiter if any
 * @m: the mutex, locked
 *
 * Context: any; the holder need not be the goroutine that locked it.
 */
void kgo_mutex_unlock(struct kgo_mutex *m);

/**
 * struct kgo_once - run something exactly once (Go's sync.Once)
 * @done: set once @fn has returned
 * @m: serialises the first callers
 */
struct kgo_once {
	atomic_t done;
	struct kgo_mutex m;
};

#define DEFINE_KGO_ONCE(name)						\
	struct kgo_once name = { .m = KGO_MUTEX_INIT(name.m) }

/**
 * kgo_once_do() - call @fn(@arg) if no kgo_once_do() on @o called it yet
 * @o: the once
 * @fn: the function
 * @arg: its argument
 *
 * Every caller returns after the one call of @fn has returned.
 * Context: a goroutine or process context; from atomic context, only
 * once @fn has run.
 * Return: 0; -EPERM (and a warning) from atomic
 * context before that, without calling @fn.
 */
int kgo_once_do(struct kgo_once *o, void (*fn)(void *arg), void *arg);

/* Timeouts, in ns: KGO_NOWAIT never blocks, KGO_FOREVER never gives up. */
#define KGO_NOWAIT	0ULL
#define KGO_FOREVER	U64_MAX

/**
 * kgo_sleep() - sleep for @ns nanoseconds
 * @ns: how long
 *
 * Context: a goroutine, which parks (its kthread runs others), or process
 * context, which sleeps. An hrtimer ends the sleep.
 * Return: 0, or -EPERM from atomic context (see the top of this file).
 */
int kgo_sleep(u64 ns);

/**
 * struct kgo_ctx - a cancellation signal (the cancel half of Go's context)
 * @err: 0 until cancelled, then the cause; set once (read kgo_ctx_err())
 * @parent: whose cancellation this one inherits, or NULL
 * @lock: protects @waiters; irq-safe
 * @waiters: who sleeps in kgo_ctx_sleep() on this context or a child
 *
 * Long work checks kgo_ctx_err() between steps and sleeps with
 * kgo_ctx_sleep(), which a cancellation cuts short. Cancelling a context
 * cancels its children too. Rules: a parent outlives its children; a
 * context may be freed once nobody is in kgo_ctx_sleep() on it or on a
 * child. Fields are private; kgo_ctx_init().
 */
struct kgo_ctx {
	int err;
	struct kgo_ctx *parent;
	spinlock_t lock;	/* @waiters */
	struct list_head waiters;
};

/* How many contexts deep a chain may be, the root counted. */
#define KGO_CTX_DEPTH_MAX	4

/**
 * kgo_ctx_init() - a context, not cancelled
 * @ctx: the context
 * @parent: whose cancellation it inherits, or NULL
 *
 * Context: any.
 * Return: 0, or -EINVAL if the chain would be deeper than
 * KGO_CTX_DEPTH_MAX (@ctx is then a root: it works, but inherits nothing).
 */
int kgo_ctx_init(struct kgo_ctx *ctx, struct kgo_ctx *parent);

/**
 * kgo_ctx_cancel() - cancel a context and its children
 * @ctx: the context
 * @err: the cause the context reports: a negative errno (-ECANCELED for
 *	 a plain cancel, -ETIMEDOUT for a deadline); anything else WARNs
 *	 and becomes -ECANCELED
 *
 * Wakes everyone in kgo_ctx_sleep() on it. Never sleeps, nor yields the
 * CPU, however many sleepers it wakes. Context: any, hardirq and the
 * caller's own spinlocks included.
 * Return: true if this call cancelled it, false if it already was.
 */
bool kgo_ctx_cancel(struct kgo_ctx *ctx, int err);

/**
 * kgo_ctx_err() - whether a context is cancelled (Go's ctx.Err())
 * @ctx: the context
 *
 * Context: any; a few loads, cheap enough for every loop iteration.
 * Return: 0, or the cause given to kgo_ctx_cancel() on it or the
 * nearest cancelled parent.
 */
int kgo_ctx_err(const struct kgo_ctx *ctx);

/**
 * kgo_ctx_sleep() - sleep for @ns, unless @ctx is cancelled first
 * @ctx: the context
 * @ns: how long
 *
 * Context: a goroutine, which parks, or process context, which sleeps
 * uninterruptibly.
 * Return: 0 after @ns, or kgo_ctx_err() as soon as it is cancelled.
 */
int kgo_ctx_sleep(struct kgo_ctx *ctx, u64 ns);

/*
 * Channels: Go's chan of fixed-size elements, unbuffered (@cap 0: a send
 * waits for a receiver and hands the element over directly) or buffered
 * (a FIFO of @cap elements). Blocked senders and receivers are served in
 * FIFO order.
 *
 * Every operation takes a timeout: KGO_NOWAIT (never blocks: any context,
 * hardirq included), a number of ns, or KGO_FOREVER (goroutine or process
 * context only; a goroutine parks, a thread sleeps).
 */
struct kgo_chan;

/**
 * kgo_chan_create() - a new channel
 * @elem_size: bytes per element, up to KGO_CHAN_ELEM_MAX; 0 is allowed
 * @cap: elements it buffers, up to KGO_CHAN_CAP_MAX; 0 for unbuffered
 * @gfp: allocation flags
 *
 * Return: the channel, or an ERR_PTR (-EINVAL, -ENOMEM).
 */
struct kgo_chan *kgo_chan_create(size_t elem_size, unsigned int cap, gfp_t gfp);
#define KGO_CHAN_ELEM_MAX	4096
#define KGO_CHAN_CAP_MAX	SZ_1M	/* a count, not a bit */

/**
 * kgo_chan_destroy() - free a channel nobody uses any more
 * @c: the channel; no operation may be in progress or start
 *
 * Return: 0; or -EBUSY, with a warning, if goroutines or threads still
 * wait on it: it is then not freed (a leak, not a use after free), and
 * kgo_chan_close() first would have woken them.
 */
int kgo_chan_destroy(struct kgo_chan *c);

/**
 * kgo_chan_send() - send one element
 * @c: the channel
 * @elem: copied from here
 * @timeout_ns: KGO_NOWAIT, ns, or KGO_FOREVER
 *
 * Return: 0; -EPIPE if the channel is closed (a kernel API returns an
 * error where Go panics); -EAGAIN (KGO_NOWAIT) or -ETIMEDOUT if it would
 * block longer; -EPERM as for kgo_select().
 */
int kgo_chan_send(struct kgo_chan *c, const void *elem, u64 timeout_ns);

/**
 * kgo_chan_send_killable() - kgo_chan_send(), ended by a fatal signal
 * @c: the channel
 * @elem: copied from here
 * @timeout_ns: KGO_NOWAIT, ns, or KGO_FOREVER
 *
 * The _killable variant is for a thread that waits on behalf of a
 * process (an ioctl, a write): a fatal signal ends the wait with
 * -EINTR, and nothing is lost, as at a timeout. A goroutine receives no
 * signals; for it the variant is the plain call.
 *
 * Return: as kgo_chan_send(), or -EINTR, with nothing sent, if the
 * thread was killed.
 */
int kgo_chan_send_killable(struct kgo_chan *c, const void *elem, u64 timeout_ns);

/**
 * kgo_chan_recv() - receive one element
 * @c: the channel
 * @elem: written here; zeroed when the channel is closed and drained
 * @ok: set false when the zero came from a closed, drained channel
 * @timeout_ns: KGO_NOWAIT, ns, or KGO_FOREVER
 *
 * Return: 0 (check @ok), -EAGAIN or -ETIMEDOUT; -EPERM as for kgo_select().
 */
int kgo_chan_recv(struct kgo_chan *c, void *elem, bool *ok, u64 timeout_ns);

/**
 * kgo_chan_recv_killable() - kgo_chan_recv(), ended by a fatal signal
 * @c: the channel
 * @elem: written here, as by kgo_chan_recv()
 * @ok: as for kgo_chan_recv()
 * @timeout_ns: KGO_NOWAIT, ns, or KGO_FOREVER
 *
 * The _killable variant is for a thread that waits on behalf of a
 * process (an ioctl, a write): a fatal signal ends the wait with
 * -EINTR, and nothing is lost, as at a timeout. A goroutine receives no
 * signals; for it the variant is the plain call.
 *
 * Return: as kgo_chan_recv(), or -EINTR, with nothing received, if the
 * thread was killed.
 */
int kgo_chan_recv_killable(struct kgo_chan *c, void *elem, bool *ok, u64 timeout_ns);

/**
 * kgo_chan_close() - no more sends
 * @c: the channel
 *
 * Blocked receivers get zero values with ok false; blocked senders get
 * -EPIPE; buffered elements can still be received. Context: any.
 *
 * Return: 0, or -EPIPE if it was already closed.
 */
int kgo_chan_close(struct kgo_chan *c);

/**
 * kgo_chan_len() - elements buffered now
 * @c: the channel
 *
 * Context: any.
 * Return: the count, which may change as soon as it is read.
 */
unsigned int kgo_chan_len(struct kgo_chan *c);

/**
 * kgo_chan_cap() - the size of the channel's buffer
 * @c: the channel
 *
 * Context: any.
 * Return: the capacity given to kgo_chan_create().
 */
unsigned int kgo_chan_cap(struct kgo_chan *c);

enum kgo_select_dir {
	KGO_SELECT_SEND,
	KGO_SELECT_RECV,
};

/**
 * struct kgo_select_case - one case of kgo_select()
 * @chan: the channel; NULL for a case that is never ready
 * @dir: send or receive
 * @elem: send: copied from; receive: written to
 * @ok: receive: out, as for kgo_chan_recv()
 * @err: out: -EPIPE if a send case was chosen because the channel is closed
 */
struct kgo_select_case {
	struct kgo_chan *chan;
	enum kgo_select_dir dir;
	void *elem;
	bool ok;
	int err;
};

#define KGO_SELECT_MAX	64

/**
 * kgo_select() - Go's select
 * @cases: the cases
 * @n: how many, up to KGO_SELECT_MAX
 * @timeout_ns: KGO_NOWAIT (select with a default), ns, or KGO_FOREVER
 *
 * Waits until one case can proceed and does it. When several can, one
 * is chosen uniformly at random.
 *
 * Return: the index of the case done, -EAGAIN or -ETIMEDOUT if none
 * could in time, -EINVAL for bad arguments, -EPERM for a timeout other
 * than KGO_NOWAIT from atomic context.
 */
int kgo_select(struct kgo_select_case *cases, unsigned int n, u64 timeout_ns);

/**
 * kgo_select_killable() - kgo_select(), ended by a fatal signal
 * @cases: the cases
 * @n: how many, up to KGO_SELECT_MAX
 * @timeout_ns: KGO_NOWAIT, ns, or KGO_FOREVER
 *
 * The _killable variant is for a thread that waits on behalf of a
 * process (an ioctl, a write): a fatal signal ends the wait with
 * -EINTR, and nothing is lost, as at a timeout. A goroutine receives no
 * signals; for it the variant is the plain call.
 *
 * Return: as kgo_select(), or -EINTR, with no case done, if the thread
 * was killed.
 */
int kgo_select_killable(struct kgo_select_case *cases, unsigned int n, u64 timeout_ns);

/*
 * Sockets whose waits park the goroutine, not its kthread (Go's
 * netpoller; kmod/sock.c). A struct kgo_sock owns a kernel socket:
 * create and bind it as usual (sock_create_kern(), kernel_bind(),
 * kernel_listen()), then hand it to kgo_sock_attach(). Each call tries
 * the operation non-blocking first; if it would block, a goroutine parks
 * until the socket's readiness callbacks (data, write space, a state
 * change, an error) ready it, and a thread sleeps. Threads and
 * goroutines may share a socket.
 *
 * Lifetime: the owner calls kgo_sock_close() once, and starts no call
 * after it. Calls already running, on any goroutine or thread, return
 * -ESHUTDOWN, as do the calls of anyone parked; the socket is released
 * when the last of them returns. kgo_sock_shutdown() wakes every waiter
 * the same way without giving up the owner's reference: another thread
 * that must stop the socket's users (a module unloading) calls it.
 *
 * Context: process context, a goroutine or a thread: every call takes
 * the socket lock, which may sleep (briefly, without a P handoff being
 * needed). From atomic context they fail with -EPERM.
 *
 * Timeouts are KGO_NOWAIT (-EAGAIN at once where it would wait), ns, or
 * KGO_FOREVER; one that runs out returns -ETIMEDOUT.
 */
struct kgo_sock;
struct socket;
struct sockaddr;

/**
 * kgo_sock_attach() - take a socket over
 * @sock: a kernel socket, not yet used with kgo and with no
 *	  sk_user_data (kgo keeps its state there)
 * @gfp: for kgo's state
 *
 * kgo wraps the socket's sk_data_ready, sk_write_space, sk_state_change
 * and sk_error_report callbacks (the old ones still run) until the
 * socket is released. From now on @sock belongs to kgo: release it with
 * kgo_sock_close(), never sock_release().
 *
 * Context: process.
 * Return: the kgo socket; ERR_PTR(-ENOMEM), ERR_PTR(-EBUSY) if @sock has
 * sk_user_data, or ERR_PTR(-EINVAL) if it is a connection of a kgo listener
 * accepted other than with kgo_sock_accept() (then @sock is still the
 * caller's).
 */
struct kgo_sock *kgo_sock_attach(struct socket *sock, gfp_t gfp);

/**
 * kgo_sock_socket() - the kernel socket, for kernel_bind(), options...
 * @ks: the kgo socket
 *
 * Do not wait on it other than through kgo, nor release it; accept a
 * listener's connections with kgo_sock_accept() only (a connection
 * starts as a copy of its listener, kgo's callbacks included, which
 * kgo_sock_accept() undoes).
 *
 * Return: the socket @ks owns.
 */
struct socket *kgo_sock_socket(struct kgo_sock *ks);

/**
 * kgo_sock_accept() - accept a connection
 * @ks: a listening socket
 * @newp: the new connection, attached to kgo already; NULL on error
 * @gfp: for its state
 * @timeout_ns: how long to wait for a connection
 *
 * Return: 0; -ESHUTDOWN, -ETIMEDOUT, -EAGAIN, -EPERM; -ENOMEM (the
 * connection was accepted and is dropped); an error of kernel_accept().
 */
int kgo_sock_accept(struct kgo_sock *ks, struct kgo_sock **newp, gfp_t gfp,
		    u64 timeout_ns);

/**
 * kgo_sock_connect() - connect, waiting for the connection to be made
 * @ks: the kgo socket
 * @addr: the peer
 * @addrlen: its length
 * @timeout_ns: how long to wait
 *
 * Return: 0 once connected; -ESHUTDOWN, -ETIMEDOUT (the attempt goes on:
 * call again to wait more), -EAGAIN, -EPERM; an error of
 * kernel_connect(), the connection's own (-ECONNREFUSED...) included.
 */
int kgo_sock_connect(struct kgo_sock *ks, struct sockaddr *addr, int addrlen,
		     u64 timeout_ns);

/**
 * kgo_sock_recv() - receive what has arrived, waiting for at least a byte
 * @ks: the kgo socket
 * @buf: where to
 * @len: at most this much
 * @timeout_ns: how long to wait for data
 *
 * Return: bytes received (0 at the end of the stream); -ESHUTDOWN,
 * -ETIMEDOUT, -EAGAIN, -EPERM; an error of kernel_recvmsg().
 */
ssize_t kgo_sock_recv(struct kgo_sock *ks, void *buf, size_t len, u64 timeout_ns);

/**
 * kgo_sock_send() - send all of a buffer, waiting for room as needed
 * @ks: the kgo socket
 * @buf: what
 * @len: how much
 * @timeout_ns: how long, in all, to wait for room
 *
 * Never raises SIGPIPE.
 * Return: @len; fewer bytes if an error or the timeout came after some had gone
 * (as send(2) after a signal); else -ESHUTDOWN, -ETIMEDOUT, -EAGAIN, -EPERM or
 * an error of kernel_sendmsg().
 */
ssize_t kgo_sock_send(struct kgo_sock *ks, const void *buf, size_t len,
		      u64 timeout_ns);

/**
 * kgo_sock_shutdown() - wake everyone waiting on a socket, for good
 * @ks: the kgo socket, still owned by someone
 *
 * Every call parked on @ks, or made after, returns -ESHUTDOWN; the
 * connection itself stays until kgo_sock_close(). Any number of times.
 *
 * Context: any, hardirq included.
 */
void kgo_sock_shutdown(struct kgo_sock *ks);

/**
 * kgo_sock_close() - kgo_sock_shutdown(), and give up the owner's reference
 * @ks: the kgo socket, or NULL
 *
 * The socket is released (the peer sees the close) now, or when the
 * last call still running on it returns.
 *
 * Context: process.
 */
void kgo_sock_close(struct kgo_sock *ks);

/**
 * struct kgo_counts - events whose cost grows with the CPUs, since load
 * @sched_lock: acquisitions of the scheduler's global lock
 * @shared_rmw: atomic read-modify-writes of scheduler-global state
 * @xcpu_wake: wake-ups of an M (a kgo kthread) from another CPU than
 *	       its own: most cost an IPI
 *
 * Summed over CPUs. For benchmarks and diagnosis, not a stable API:
 * members may be added. /sys/kernel/debug/kgo/counts shows the same.
 */
struct kgo_counts {
	u64 sched_lock;
	u64 shared_rmw;
	u64 xcpu_wake;
};

/**
 * kgo_counts_read() - the totals of &struct kgo_counts so far
 * @c: filled in
 *
 * Read before and after a batch of operations, run alone: the
 * differences over the batch's size are counts per operation.
 *
 * Context: any.
 */
void kgo_counts_read(struct kgo_counts *c);

#endif /* _KGO_H */
