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
 *
 * Context rules per function are in each kernel-doc comment below.
 */
#ifndef _KGO_H
#define _KGO_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

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
 * costs its struct alone.
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
 * kgo_exit() - end the calling goroutine (Go's runtime.Goexit)
 *
 * Context: a goroutine, where it does not return. Called elsewhere it
 * WARNs and returns.
 */
void kgo_exit(void);

/**
 * kgo_self() - the calling goroutine
 *
 * Context: any. Return: the goroutine, or NULL when not called from one
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
 * returns false the goroutine does not park but continues at once
 * (unless someone readied it first, which comes to the same).
 *
 * @unlockf runs in the scheduler, between two goroutines: it must not
 * sleep or park.
 *
 * Context: a goroutine. Return: 0 once readied; -EPERM when not called
 * from a goroutine (nothing happens then).
 */
int kgo_park(bool (*unlockf)(struct kgo_g *g, void *arg), void *arg);

/**
 * kgo_ready() - make a parked goroutine runnable
 * @g: a goroutine in kgo_park()
 *
 * Context: any, hardirq included. From a goroutine, @g runs next on the
 * caller's P (Go's runnext); from anywhere else it goes to the global
 * queue and an idle P is woken. Readying a goroutine that is not parked
 * is a bug and WARNs. @g may run, exit and be reused as soon as this is
 * called: do not touch it afterwards.
 */
void kgo_ready(struct kgo_g *g);

/**
 * struct kgo_waitgroup - wait for a set of goroutines (Go's sync.WaitGroup)
 * @lock: protects the fields below
 * @count: outstanding kgo_wg_done()s
 * @waiters: goroutines in kgo_wg_wait()
 * @wq: threads that are not goroutines in kgo_wg_wait()
 *
 * Initialise with kgo_wg_init(). Fields are private.
 */
struct kgo_waitgroup {
	spinlock_t lock;	/* irq-safe: kgo_wg_add() from hardirq */
	long count;
	struct list_head waiters;
	wait_queue_head_t wq;
};

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
 * kgo_wg_wait() - wait until the count is zero
 * @wg: the wait group
 *
 * Context: a goroutine, which parks (its kthread runs other goroutines),
 * or process context, which sleeps uninterruptibly.
 */
void kgo_wg_wait(struct kgo_waitgroup *wg);

#endif /* _KGO_H */
