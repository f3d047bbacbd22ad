/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels kgo builds against, Debian's 6.1 and
 * 6.12, in one place. Each helper is named for what kgo needs and says
 * in which release the kernel changed; the rest of the tree has no
 * version tests. Included by C and by assembly.
 */
#ifndef _KGO_COMPAT_H
#define _KGO_COMPAT_H

#include <linux/version.h>

#ifdef __ASSEMBLY__

#include <asm/unwind_hints.h>

/*
 * 6.4 renamed the hint that ends an unwind. Both are assembler macros,
 * which the preprocessor cannot test for: go by the version.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
#define UNWIND_HINT_END_OF_STACK UNWIND_HINT_EMPTY
#endif

#else /* !__ASSEMBLY__ */

#include <linux/kconfig.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>

/*
 * kgo_kernel_unsupported() - the kind of kernel kgo refuses, or NULL
 *
 * PREEMPT_RT (Debian's -rt flavours): spinlock_t sleeps there, and
 * sched.lock is taken from a hardirq hrtimer and from the sched_in
 * preempt notifier; a wait on an RT lock looks like blocking to
 * sched_out; and a migrate-disabled M can be bound to a CPU going
 * offline. kgo loaded there crashes or hangs, so it does not load.
 * What support needs is in the README ("PREEMPT_RT").
 */
static inline const char *kgo_kernel_unsupported(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		return "PREEMPT_RT";
	return NULL;
}

/*
 * kgo_vm_flags_set() - set flags of a mapping being set up (->mmap)
 *
 * 6.3 made vma->vm_flags read-only, to be changed with vm_flags_set()
 * under the mmap lock, which ->mmap holds.
 */
static inline void kgo_vm_flags_set(struct vm_area_struct *vma, unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * kgo_shrinker_create() - register a shrinker
 * @name: its name in debugfs (/sys/kernel/debug/shrinker/)
 * @count: its count_objects
 * @scan: its scan_objects
 *
 * 6.7 made shrinkers dynamically allocated (shrinker_alloc() and
 * shrinker_register()) and removed register_shrinker(). Before, the
 * caller provided the struct: allocate it here, so that callers look
 * the same on both.
 *
 * Return: the shrinker, registered, or NULL (out of memory).
 */
static inline struct shrinker *
kgo_shrinker_create(const char *name,
		    unsigned long (*count)(struct shrinker *, struct shrink_control *),
		    unsigned long (*scan)(struct shrinker *, struct shrink_control *))
{
	struct shrinker *s;

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	s = shrinker_alloc(0, "%s", name);
	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	shrinker_register(s);
#else
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = DEFAULT_SEEKS;
	if (register_shrinker(s, "%s", name)) {
		kfree(s);
		return NULL;
	}
#endif
	return s;
}

/* Unregisters and frees what kgo_shrinker_create() made. */
static inline void kgo_shrinker_destroy(struct shrinker *s)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	shrinker_free(s);
#else
	unregister_shrinker(s);
	kfree(s);
#endif
}

/*
 * Whether @t, switching out, stays runnable: preempted, not asleep.
 * Before 6.12 a task that blocks has left its run queue (on_rq 0) by
 * the time its sched_out notifiers run. 6.12's EEVDF delays the dequeue
 * of a fair task that blocks with positive lag: it stays on_rq, marked
 * se.sched_delayed, until its lag is spent, and task_is_runnable() is
 * the test that knows it.
 */
static inline bool kgo_task_runnable(struct task_struct *t)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	return task_is_runnable(t);
#else
	return READ_ONCE(t->on_rq);
#endif
}

#endif /* __ASSEMBLY__ */
#endif /* _KGO_COMPAT_H */
