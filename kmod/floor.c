// SPDX-License-Identifier: GPL-2.0
/*
 * The memory floor: what kgo leaves to everyone else.
 *
 * The budget (budget.c) bounds what goroutines hold, and the caps
 * (session.c, user.c) bound what submitters queue. Neither knows what
 * the rest of the machine holds: on a machine that others have nearly
 * filled, even a budget's worth is more than is left. kgo's allocations
 * never call the OOM killer themselves (__GFP_NORETRY for stacks and
 * structs, __GFP_RETRY_MAYFAIL for tasks), but the page allocator still
 * lets each one that succeeds take free memory down to the zones' min
 * watermarks. Once kgo has done that, the next process to fault a page
 * in, a bystander, finds nothing to reclaim and meets the OOM killer.
 * The oom_test selftest saw exactly this: kgo's stacks failed
 * gracefully, and then the test's own page fault killed it.
 *
 * So kgo stops growing while MemAvailable (si_mem_available(): free
 * pages above the watermarks' reserve, plus what reclaim could free)
 * is low. The floor, mem_floor_mb, by default 1/32 of RAM clamped to
 * 16..512 MiB, is where stacks stop: kgo's own memory pressure then
 * ends before the kernel's reserves are reached, with headroom for
 * others' faults. Half a floor above it is the admission mark, where
 * new work stops:
 *
 *  - below the admission mark, a spawn fails with -ENOMEM, even one
 *    that would reuse a dead G's struct, and SUBMIT refuses a task with
 *    -ENOMEM before allocating its record;
 *  - below the floor, a stack that is not in a P's cache is not
 *    allocated: the goroutine waits for memory on sched.stackwait,
 *    holding nothing, as when the allocation itself fails (sched.c).
 *
 * Why two marks: a goroutine admitted by its spawn has yet to take its
 * stack, and a goroutine waiting for one may be what its spawner, and
 * the spawner's spawner, wait for. A SPAWN chain whose nodes hold the
 * very memory that keeps MemAvailable low would then wait for someone
 * else to free memory, the budget would never end it, and the task
 * would not complete. With half a floor between the marks, a goroutine
 * admitted above the one finds its stack above the other, unless the
 * rest of the machine took that half floor in between; and the chain's
 * next spawn, below the admission mark, fails, and it unwinds.
 *
 * What already exists is not taken away: cached stacks are reused, and
 * running goroutines run on. A stack allocation looks at MemAvailable
 * itself, since it is the allocation that moves it most (THREAD_SIZE)
 * and already costs a vmalloc; it refreshes the admission verdict on
 * the way. Spawns and SUBMIT, hot paths that allocate a few hundred
 * bytes, read that verdict, at most one jiffy old: two loads when
 * fresh. A racing refresh writes the same kind of answer, so the
 * verdict's two fields need no lock: each is one word, written and
 * read once.
 */

#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <kunit/visibility.h>

#include "floor.h"

static unsigned long mem_floor_mb;
module_param(mem_floor_mb, ulong, 0444);
MODULE_PARM_DESC(mem_floor_mb,
		 "MiB of MemAvailable below which kgo allocates no new stacks (1.5x that: refuses spawns and tasks); 0: 1/32 of RAM, 16 to 512 MiB");

static struct {
	unsigned long pages;	/* the floor; set at load, or by a test */
	unsigned long when;	/* jiffies of the last look */
	bool below;		/* what that look saw: below the admission mark */
} kgo_floor ____cacheline_aligned_in_smp;

int kgo_floor_check_params(void)
{
	unsigned long ram_mb = totalram_pages() >> (20 - PAGE_SHIFT);
	unsigned long mb = mem_floor_mb ?: clamp(ram_mb / 32, 16UL, 512UL);

	if (mb >= ram_mb) {
		pr_err("mem_floor_mb=%lu is not less than the machine's %lu MiB of RAM\n",
		       mb, ram_mb);
		return -EINVAL;
	}
	kgo_floor.pages = mb << (20 - PAGE_SHIFT);
	kgo_floor.when = jiffies - 1;
	kgo_floor.below = false;
	return 0;
}

/* Looks at MemAvailable; refreshes the admission verdict. Return: it. */
static long kgo_floor_look(unsigned long floor)
{
	long avail = si_mem_available();

	WRITE_ONCE(kgo_floor.below, avail < (long)(floor + floor / 2));
	WRITE_ONCE(kgo_floor.when, jiffies);
	return avail;
}

/**
 * kgo_floor_stack_denied() - whether MemAvailable is below the floor, looked at now
 *
 * Whether a new stack must wait. Refreshes the verdict kgo_floor_below()
 * reads.
 *
 * Context: any but NMI.
 * Return: true if below the floor.
 */
bool kgo_floor_stack_denied(void)
{
	unsigned long floor = READ_ONCE(kgo_floor.pages);

	return kgo_floor_look(floor) < (long)floor;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_floor_stack_denied);

/**
 * kgo_floor_below() - whether MemAvailable is below the admission mark, at most a jiffy ago
 *
 * Whether a spawn or a task must be refused.
 *
 * Context: any but NMI.
 * Return: true if below the mark.
 */
bool kgo_floor_below(void)
{
	if (READ_ONCE(kgo_floor.when) != jiffies)
		kgo_floor_look(READ_ONCE(kgo_floor.pages));
	return READ_ONCE(kgo_floor.below);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_floor_below);

/**
 * kgo_floor_set() - replace the floor, for tests
 * @pages: the new floor, in pages
 *
 * Return: the old one.
 */
unsigned long kgo_floor_set(unsigned long pages)
{
	unsigned long old = xchg(&kgo_floor.pages, pages);

	kgo_floor_look(pages);
	return old;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_floor_set);
