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
 * (KGO_STACK_CACHE_MAX) and the global pool behind them (stack_pool_max,
 * stack.c, emptied within seconds once idle), the dead G structs each P keeps (KGO_GFREE_MAX)
 * and the global free list (KGO_GFREE_GLOBAL_MAX, g.c).
 *
 * The count is one atomic, kgo_budget.used, but a spawn and an exit do
 * not touch it: each P holds a credit (p->budget_credit), bytes taken
 * from the count in batches of KGO_BUDGET_BATCH that no goroutine holds
 * yet, as Go's Ps take goroutine ids (and kgo's, p->goidcache). A spawn
 * or a first run on a P takes from its credit, an exit on a P gives back
 * to it, and only a credit that runs dry or grows past
 * KGO_BUDGET_CREDIT_MAX goes to the shared count: a spawn tree whose
 * goroutines exit where they were spawned never does. A P gives its
 * whole credit back when it stops and at unload (kgo_budget_flush).
 *
 * The count is then what live goroutines hold plus every P's credit, and
 * the bound holds as it did: a batch is taken only if it fits whole.
 * Near the limit, where no batch fits, a charge is made on the count
 * alone (spawns from outside any P always are) and checked against an
 * estimate of the live bytes, the count less the credits as read, racily,
 * now: otherwise credits idle on other Ps would make spawns fail early.
 * A P may spend the credit we read meanwhile, so live goroutines may
 * exceed the budget by at most nprocs * KGO_BUDGET_CREDIT_MAX, and only
 * within that distance of it (with 2 CPUs and 16 KiB stacks, about
 * 0.5 MiB against the default quarter of RAM). While the count is over
 * the limit (kgo_budget_set() lowered it, or such an overshoot) credits
 * are not used: every charge goes the exact way.
 *
 * Context of the credit: only the M holding the P, as the rest of its
 * O fields (proc.h), and a G on it with the P pinned (kgo_g_p_get());
 * kgo_budget_used_bytes() reads credits racily.
 */

#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/thread_info.h>
#include <kunit/visibility.h>

#include "budget.h"
#include "g.h"
#include "proc.h"
#include "sched.h"

static unsigned long max_mem_mb;
module_param(max_mem_mb, ulong, 0444);
MODULE_PARM_DESC(max_mem_mb,
		 "MiB that goroutine stacks and structs may hold in all; 0: a quarter of RAM");

/* The limit is read with the count: one line, written only by refills. */
static struct {
	atomic_long_t used;		/* bytes: live goroutines' plus credits */
	long limit;			/* bytes */
} kgo_budget ____cacheline_aligned_in_smp = { .used = ATOMIC_LONG_INIT(0) };

#define KGO_G_BYTES	((long)sizeof(struct kgo_g))
#define KGO_STACK_BYTES	((long)THREAD_SIZE)
/* What a P takes from the count at once, and keeps at most. */
#define KGO_BUDGET_BATCH	(8 * (KGO_STACK_BYTES + KGO_G_BYTES))
#define KGO_BUDGET_CREDIT_MAX	(2 * KGO_BUDGET_BATCH)

int kgo_budget_check_params(void)
{
	unsigned long ram_mb = totalram_pages() >> (20 - PAGE_SHIFT);

	if (max_mem_mb > ram_mb) {
		pr_err("max_mem_mb=%lu is more than the machine's %lu MiB of RAM\n",
		       max_mem_mb, ram_mb);
		return -EINVAL;
	}
	/* 1 MiB holds a stack and a struct even under KASAN's 32 KiB stacks. */
	kgo_budget.limit = (long)(max_mem_mb ?: max(ram_mb / 4, 1UL)) << 20;
	atomic_long_set(&kgo_budget.used, 0);
	return 0;
}

/**
 * kgo_budget_bytes() - the budget, in bytes
 *
 * Return: the budget, in bytes.
 */
u64 kgo_budget_bytes(void)
{
	return READ_ONCE(kgo_budget.limit);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_budget_bytes);

/* The count less every P's credit, as read now: what live Gs hold. */
static long kgo_budget_live(long used)
{
	struct kgo_sched *sched = &kgo_sched;
	int i;

	for (i = 0; i < sched->nprocs; i++)
		used -= READ_ONCE(sched->allp[i]->budget_credit);
	return used;
}

/**
 * kgo_budget_used_bytes() - what live goroutines hold now, in bytes
 *
 * Exact while no goroutine spawns or exits; racy otherwise.
 *
 * Return: bytes held.
 */
u64 kgo_budget_used_bytes(void)
{
	return max(kgo_budget_live(atomic_long_read(&kgo_budget.used)), 0L);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_budget_used_bytes);

/*
 * Charges @bytes to the count, if they and @room more fit: in the count,
 * or else in the estimate of live bytes (see above). Spawns check before
 * they add, so concurrent ones may overshoot by a struct each; stacks
 * (@room 0) add with one atomic and take back if over.
 */
static bool kgo_budget_charge(long bytes, long room)
{
	long limit = READ_ONCE(kgo_budget.limit), used;

	if (room) {
		used = atomic_long_read(&kgo_budget.used);
		if (used + bytes + room > limit &&
		    kgo_budget_live(used) + bytes + room > limit)
			return false;
		kgo_count(KGO_COUNT_SHARED_RMW);
		atomic_long_add(bytes, &kgo_budget.used);
		return true;
	}
	kgo_count(KGO_COUNT_SHARED_RMW);
	used = atomic_long_add_return(bytes, &kgo_budget.used);
	if (used <= limit || kgo_budget_live(used) <= limit)
		return true;
	kgo_count(KGO_COUNT_SHARED_RMW);
	atomic_long_sub(bytes, &kgo_budget.used);
	return false;
}

/*
 * Whether @p may spend @need of its credit, taking a batch first if it
 * holds less: not while the count is over the limit. Context: @p's owner.
 */
static bool kgo_budget_credit(struct kgo_p *p, long need)
{
	long limit = READ_ONCE(kgo_budget.limit);

	if (p->budget_credit >= need)
		/* A read of a line only refills write: no bounce. */
		return atomic_long_read(&kgo_budget.used) <= limit;
	kgo_count(KGO_COUNT_SHARED_RMW);
	if (atomic_long_add_return(KGO_BUDGET_BATCH, &kgo_budget.used) > limit) {
		kgo_count(KGO_COUNT_SHARED_RMW);
		atomic_long_sub(KGO_BUDGET_BATCH, &kgo_budget.used);
		return false;
	}
	WRITE_ONCE(p->budget_credit, p->budget_credit + KGO_BUDGET_BATCH);
	return true;
}

/*
 * Gives @bytes back to @p's credit, and what is past the most a P keeps
 * to the count. A full barrier either way: it pairs with the one between
 * queueing on sched.stackwait and re-checking the budget in
 * kgo_stackwait_add(), so that either the waiter sees the room or the
 * caller (who then calls kgo_stackwait_kick()) sees the waiter.
 */
static void kgo_budget_give(struct kgo_p *p, long bytes)
{
	long credit = p->budget_credit + bytes;

	if (credit > KGO_BUDGET_CREDIT_MAX) {
		WRITE_ONCE(p->budget_credit, KGO_BUDGET_BATCH);
		kgo_count(KGO_COUNT_SHARED_RMW);
		atomic_long_sub_return(credit - KGO_BUDGET_BATCH, &kgo_budget.used);
		return;
	}
	WRITE_ONCE(p->budget_credit, credit);
	/* Pairs with smp_mb() in kgo_stackwait_add(); the other branch has the _return. */
	smp_mb();
}

/**
 * kgo_budget_spawn() - charge a new goroutine's struct
 * @p: the spawner's P, pinned (kgo_g_p_get()), or NULL from outside any P
 *
 * Context: any.
 * Return: false, charging nothing, if the struct and one
 * stack would not fit.
 */
bool kgo_budget_spawn(struct kgo_p *p)
{
	if (p && kgo_budget_credit(p, KGO_G_BYTES + KGO_STACK_BYTES)) {
		WRITE_ONCE(p->budget_credit, p->budget_credit - KGO_G_BYTES);
		return true;
	}
	return kgo_budget_charge(KGO_G_BYTES, KGO_STACK_BYTES);
}

/* A spawn is undone: its struct is given back. */
void kgo_budget_unspawn(struct kgo_p *p)
{
	if (p) {
		kgo_budget_give(p, KGO_G_BYTES);
	} else {
		kgo_count(KGO_COUNT_SHARED_RMW);
		atomic_long_sub(KGO_G_BYTES, &kgo_budget.used);
	}
}

/**
 * kgo_budget_stack() - charge a stack for a goroutine's first run
 * @p: the P it runs on (its owner calls)
 *
 * Return: false, charging nothing, if it does not fit.
 */
bool kgo_budget_stack(struct kgo_p *p)
{
	if (kgo_budget_credit(p, KGO_STACK_BYTES)) {
		WRITE_ONCE(p->budget_credit, p->budget_credit - KGO_STACK_BYTES);
		return true;
	}
	return kgo_budget_charge(KGO_STACK_BYTES, 0);
}

/* The stack charged on @p could not be allocated: give it back. */
void kgo_budget_unstack(struct kgo_p *p)
{
	kgo_budget_give(p, KGO_STACK_BYTES);
}

/*
 * A goroutine exited on @p: its stack and struct go to the credit,
 * ordered as kgo_budget_give().
 */
void kgo_budget_exit(struct kgo_p *p)
{
	kgo_budget_give(p, KGO_STACK_BYTES + KGO_G_BYTES);
}

/*
 * Gives @p's whole credit back to the count: the P stops (its owner
 * calls), or at unload (nothing runs).
 */
void kgo_budget_flush(struct kgo_p *p)
{
	long credit = p->budget_credit;

	WRITE_ONCE(p->budget_credit, 0);
	if (credit) {
		kgo_count(KGO_COUNT_SHARED_RMW);
		atomic_long_sub_return(credit, &kgo_budget.used);
	}
}

/* Whether one more stack fits now: a hint, for the waiter's re-check. */
bool kgo_budget_stack_fits(void)
{
	return kgo_budget_live(atomic_long_read(&kgo_budget.used)) + KGO_STACK_BYTES <=
	       READ_ONCE(kgo_budget.limit);
}

/**
 * kgo_budget_set() - replace the budget, for tests
 * @bytes: the new limit
 *
 * Return: the old limit.
 */
u64 kgo_budget_set(u64 bytes)
{
	return xchg(&kgo_budget.limit, (long)min_t(u64, bytes, LONG_MAX));
}
EXPORT_SYMBOL_IF_KUNIT(kgo_budget_set);
