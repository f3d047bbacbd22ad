// SPDX-License-Identifier: GPL-2.0
/*
 * The memory budget: the most that goroutines may cost the machine.
 *
 * A goroutine costs a G struct from its spawn to its exit, and a
 * THREAD_SIZE stack from its first run to its exit. Unbounded, one valid
 * task (a SPAWN chain whose nodes each wait for their child while
 * holding a stack) asks for more than a small machine has, and the OOM
 * killer then kills bystanders until the kernel panics. So the bytes that
 * live goroutines hold are counted against a budget (max_mem_mb, by
 * default a quarter of RAM), and the two places that add to them check it:
 *
 *  - spawning (kgo_budget_spawn) fails with -ENOMEM unless the new G's
 *    struct and one stack still fit. The caller that can act on it gets
 *    the error: kgo_go() returns it, a SPAWN node records it in its
 *    task's status, SUBMIT refuses the task. A chain of goroutines that
 *    each wait for their child therefore ends with an error at the
 *    budget, instead of with the machine.
 *
 *  - a first run (kgo_budget_stack) takes a stack only if it fits. A
 *    queued goroutine holds no stack, so spawning can admit more of them
 *    than there are stacks for (a million queued tasks cost only their
 *    structs). One that finds the budget full waits, parked on
 *    sched.stackwait and holding nothing, until an exiting goroutine
 *    gives a stack back (kgo_stackwait_kick). It never spins: a running
 *    goroutine has always been let through the spawn check, which left
 *    it room, so some stack holder is running, not waiting, and will
 *    either exit or fail its own spawns and unwind.
 *
 * Not counted here, and bounded apart: the stacks each P caches
 * (KGO_STACK_CACHE_MAX), the dead G structs each P keeps (KGO_GFREE_MAX)
 * and the global free list (KGO_GFREE_GLOBAL_MAX, g.c).
 *
 * The count is one atomic in the cache line of sched.galive, which spawn
 * and exit write anyway. Spawn checks before it adds, so concurrent
 * spawners may overshoot the limit by a struct each, never by a stack:
 * stacks are added with one atomic and taken back if over.
 */

#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/thread_info.h>
#include <kunit/visibility.h>

#include "budget.h"
#include "g.h"

static unsigned long max_mem_mb;
module_param(max_mem_mb, ulong, 0444);
MODULE_PARM_DESC(max_mem_mb,
		 "MiB that goroutine stacks and structs may hold in all; 0: a quarter of RAM");

static long kgo_budget_limit;			/* bytes */
static atomic_long_t kgo_budget_used = ATOMIC_LONG_INIT(0);

#define KGO_G_BYTES	((long)sizeof(struct kgo_g))
#define KGO_STACK_BYTES	((long)THREAD_SIZE)

int kgo_budget_check_params(void)
{
	unsigned long ram_mb = totalram_pages() >> (20 - PAGE_SHIFT);

	if (max_mem_mb > ram_mb) {
		pr_err("max_mem_mb=%lu is more than the machine's %lu MiB of RAM\n",
		       max_mem_mb, ram_mb);
		return -EINVAL;
	}
	/* 1 MiB holds a stack and a struct even under KASAN's 32 KiB stacks. */
	kgo_budget_limit = (long)(max_mem_mb ?: max(ram_mb / 4, 1UL)) << 20;
	atomic_long_set(&kgo_budget_used, 0);
	return 0;
}

/**
 * kgo_budget_bytes() - the budget, in bytes
 */
u64 kgo_budget_bytes(void)
{
	return READ_ONCE(kgo_budget_limit);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_budget_bytes);

/**
 * kgo_budget_used_bytes() - what live goroutines hold now, in bytes
 */
u64 kgo_budget_used_bytes(void)
{
	return max(atomic_long_read(&kgo_budget_used), 0L);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_budget_used_bytes);

/**
 * kgo_budget_spawn() - charge a new goroutine's struct
 *
 * Context: any. Return: false, charging nothing, if the struct and one
 * stack would not fit.
 */
bool kgo_budget_spawn(void)
{
	if (atomic_long_read(&kgo_budget_used) + KGO_G_BYTES + KGO_STACK_BYTES >
	    READ_ONCE(kgo_budget_limit))
		return false;
	atomic_long_add(KGO_G_BYTES, &kgo_budget_used);
	return true;
}

/* An exited goroutine, or one whose spawn was undone, gives its struct back. */
void kgo_budget_unspawn(void)
{
	atomic_long_sub(KGO_G_BYTES, &kgo_budget_used);
}

/**
 * kgo_budget_stack() - charge a stack for a goroutine's first run
 *
 * Context: any. Return: false, charging nothing, if it does not fit.
 */
bool kgo_budget_stack(void)
{
	if (atomic_long_add_return(KGO_STACK_BYTES, &kgo_budget_used) <=
	    READ_ONCE(kgo_budget_limit))
		return true;
	atomic_long_sub(KGO_STACK_BYTES, &kgo_budget_used);
	return false;
}

/**
 * kgo_budget_unstack() - a goroutine gave its stack back (or never got it)
 *
 * A full barrier (a value-returning atomic) after the store: it pairs
 * with the one between queueing on sched.stackwait and re-checking the
 * budget in kgo_stackwait_add(), so that either the waiter sees the room
 * or the caller (who then calls kgo_stackwait_kick()) sees the waiter.
 */
void kgo_budget_unstack(void)
{
	atomic_long_sub_return(KGO_STACK_BYTES, &kgo_budget_used);
}

/*
 * An exited goroutine gives its stack and struct back at once: one
 * atomic on the shared counter instead of two, ordered as
 * kgo_budget_unstack().
 */
void kgo_budget_exit(void)
{
	atomic_long_sub_return(KGO_STACK_BYTES + KGO_G_BYTES, &kgo_budget_used);
}

/* Whether one more stack fits now: a hint, for the waiter's re-check. */
bool kgo_budget_stack_fits(void)
{
	return atomic_long_read(&kgo_budget_used) + KGO_STACK_BYTES <=
	       READ_ONCE(kgo_budget_limit);
}

/**
 * kgo_budget_set() - replace the budget, for tests
 * @bytes: the new limit
 *
 * Return: the old limit.
 */
u64 kgo_budget_set(u64 bytes)
{
	return xchg(&kgo_budget_limit, (long)min_t(u64, bytes, LONG_MAX));
}
EXPORT_SYMBOL_IF_KUNIT(kgo_budget_set);
