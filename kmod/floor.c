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
 * is below a floor, mem_floor_mb, by default 1/32 of RAM clamped to
 * 16..512 MiB: kgo's own memory pressure then ends before the
 * kernel's reserves are reached, with headroom for others' faults.
 * Below the floor:
 *
 *  - a stack that is not in a P's cache is not allocated: the goroutine
 *    waits for memory on sched.stackwait, holding nothing, as when the
 *    allocation itself fails (sched.c);
 *  - a spawn that finds no dead G struct to reuse fails with -ENOMEM;
 *  - SUBMIT refuses a task with -ENOMEM before allocating its record.
 *
 * What already exists is not taken away: cached stacks and structs are
 * reused, and running goroutines run on. A stack allocation looks at
 * MemAvailable itself, since it is the allocation that moves it most
 * (THREAD_SIZE) and already costs a vmalloc. Spawns and SUBMIT, hot
 * paths that allocate a few hundred bytes, read a verdict that is at
 * most one jiffy old: two loads when fresh. A racing refresh writes the same kind of answer,
 * so the verdict's two fields need no lock: each is one word, written
 * and read once.
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
		 "MiB of MemAvailable below which kgo allocates no new stacks and refuses tasks; 0: 1/32 of RAM, 16 to 512 MiB");

static struct {
	unsigned long pages;	/* the floor; set at load, or by a test */
	unsigned long when;	/* jiffies of the last look */
	bool below;		/* what that look saw */
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

/**
 * kgo_floor_below_now() - whether MemAvailable is below the floor, looked at now
 *
 * Refreshes the verdict kgo_floor_below() reads.
 *
 * Context: any but NMI.
 */
bool kgo_floor_below_now(void)
{
	bool below = si_mem_available() < (long)READ_ONCE(kgo_floor.pages);

	WRITE_ONCE(kgo_floor.below, below);
	WRITE_ONCE(kgo_floor.when, jiffies);
	return below;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_floor_below_now);

/**
 * kgo_floor_below() - whether MemAvailable is below the floor, at most a jiffy ago
 *
 * Context: any but NMI.
 */
bool kgo_floor_below(void)
{
	if (READ_ONCE(kgo_floor.when) != jiffies)
		return kgo_floor_below_now();
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

	kgo_floor_below_now();
	return old;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_floor_set);
