/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_MEMCG_H
#define _KGO_MEMCG_H

/*
 * Whose memory cgroup pays for a goroutine. A goroutine's struct and its
 * stack are allocated on kgo's kthreads (a child spawned by a goroutine,
 * a stack at the first run), which belong to no cgroup of the user's.
 * So each G carries the memcg of whoever spawned it: the submitter's for
 * a task's goroutine, its parent's for a child. Allocations for it are
 * made __GFP_ACCOUNT inside set_active_memcg(); a charge over the
 * cgroup's memory.max fails the allocation (__GFP_NORETRY: no memcg OOM
 * kill), which the caller turns into -ENOMEM or a wait for a stack. The
 * scope never spans a goroutine switch: active_memcg belongs to the
 * task, the M, which another goroutine would inherit.
 *
 * Stacks and structs are cached for reuse (stack.c, g.c): one reused
 * stays charged to whoever allocated it first. The caches are bounded,
 * so that is bounded too.
 */

#include <linux/memcontrol.h>
#include <linux/sched/mm.h>

/*
 * The memcg a goroutine spawned now should be charged to, with a
 * reference: @self's when spawned by a goroutine, else the caller's own
 * (none from interrupt context, where current is whoever was
 * interrupted).
 */
static inline struct mem_cgroup *kgo_memcg_spawner(struct mem_cgroup *self, bool goroutine)
{
#ifdef CONFIG_MEMCG
	if (goroutine) {
		if (self)
			css_get(&self->css);
		return self;
	}
	return in_task() ? get_mem_cgroup_from_mm(NULL) : NULL;
#else
	return NULL;
#endif
}

/*
 * Whether @memcg charges nobody: none, or the root (whose charges the
 * kernel skips). mem_cgroup_is_root() needs root_mem_cgroup, which is
 * not exported; the root is the one memcg without a parent.
 */
static inline bool kgo_memcg_is_root(struct mem_cgroup *memcg)
{
#ifdef CONFIG_MEMCG
	return !memcg || !memcg->css.parent;
#else
	return true;
#endif
}

#endif /* _KGO_MEMCG_H */
