/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels kgo builds against, from 6.1 to 7.x,
 * in one place. Each helper is named for what kgo needs and says in
 * which release the kernel changed; the rest of the tree has no version
 * tests. Included by C and by assembly, and by the samples and the test
 * module, which meet the same changes.
 *
 * PREEMPT_RT is one such difference: where nothing may allocate
 * (kgo_may_not_alloc()), and how a wait for a sleeping spinlock_t looks
 * to sched_out (kgo_task_rtlock_wait()). Both compile to nothing on
 * other kernels.
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

#include <asm/asm-prototypes.h>
#include <linux/crc32.h>
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 15, 0)
#include <linux/crc32c.h>	/* crc32c(): libcrc32c's before 6.15 */
#endif
#include <linux/hrtimer.h>
#include <linux/kconfig.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>

/*
 * kgo_may_not_alloc() - whether the caller may not allocate at all
 *
 * PREEMPT_RT: kmalloc() and kfree() take sleeping locks, so nothing
 * allocates or frees, GFP_ATOMIC or not, where preemption or interrupts
 * are off: in hardirq proper (a HARD hrtimer, an IRQF_NO_THREAD
 * handler), under a raw spinlock or preempt_disable(). A threaded
 * interrupt handler, and a spinlock_t section, are preemptible there
 * and may. Other kernels allocate with GFP_ATOMIC in all those places:
 * never.
 */
static inline bool kgo_may_not_alloc(void)
{
	return IS_ENABLED(CONFIG_PREEMPT_RT) && !preemptible();
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

/*
 * kgo_current() - current, loaded afresh each time
 *
 * A goroutine that switches may resume on another M's kthread: current
 * before the switch is not current after it. The kernel's current
 * assumes it never changes within a function: from 6.2 x86 reads it
 * from pcpu_hot, and through a const alias (const_pcpu_hot, from 6.15
 * const_current_task) wherever the compiler has __seg_gs, so it may
 * load it once and keep it in a register across any call, kgo_switch()
 * included (earlier kernels' this_cpu_read_stable() is an asm without
 * volatile, which allows the same). This is a volatile per-CPU load.
 * For code on a goroutine's side of a switch that runs on after one:
 * the stores to current->stack and the look-up of the M (m.h).
 */
static __always_inline struct task_struct *kgo_current(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0) && \
	LINUX_VERSION_CODE < KERNEL_VERSION(6, 15, 0)
	return this_cpu_read(pcpu_hot.current_task);
#else
	return this_cpu_read(current_task);
#endif
}

/*
 * kgo_in_task() - in_task(), with current loaded afresh
 *
 * On PREEMPT_RT in_task() reads the softirq count from current
 * (softirq_disable_cnt), which the compiler may have loaded before a
 * switch (kgo_current()); elsewhere it reads only the preempt count, a
 * per-CPU load that it repeats.
 */
static __always_inline bool kgo_in_task(void)
{
#ifdef CONFIG_PREEMPT_RT
	return !(preempt_count() & (NMI_MASK | HARDIRQ_MASK)) &&
	       !(kgo_current()->softirq_disable_cnt & SOFTIRQ_MASK);
#else
	return in_task();
#endif
}

/*
 * kgo_task_rtlock_wait() - whether @t, switching out, waits for a lock
 * that is a spinlock on other kernels
 *
 * PREEMPT_RT makes spinlock_t and rwlock_t sleeping locks (rtlock): a
 * contended one dequeues its waiter as blocking does, where other
 * kernels spin. 5.15 gave that wait its own state, TASK_RTLOCK_WAIT
 * (the task's own state kept in saved_state meanwhile), which every
 * kernel kgo builds for has; a mutex or rt_mutex wait, real blocking,
 * is TASK_UNINTERRUPTIBLE there. Before 5.15 only pi_blocked_on told,
 * and told both apart from nothing: the #else is for those. Compiled
 * out on other kernels, where no task is ever in that state.
 */
static inline bool kgo_task_rtlock_wait(struct task_struct *t)
{
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		return false;
#ifdef TASK_RTLOCK_WAIT
	return READ_ONCE(t->__state) == TASK_RTLOCK_WAIT;
#else
	return READ_ONCE(t->pi_blocked_on);
#endif
}

/*
 * kgo_hrtimer_setup() - initialise @t to run @fn on @clock in @mode
 *
 * 6.13 added hrtimer_setup(), which sets the callback with the rest, and
 * 6.15 removed hrtimer_init(); the callback is __private from 6.13.
 */
static inline void kgo_hrtimer_setup(struct hrtimer *t,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/* kgo_hrtimer_setup() for a timer on the stack (destroy_hrtimer_on_stack()). */
static inline void kgo_hrtimer_setup_on_stack(struct hrtimer *t,
					      enum hrtimer_restart (*fn)(struct hrtimer *),
					      clockid_t clock, enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup_on_stack(t, fn, clock, mode);
#else
	hrtimer_init_on_stack(t, clock, mode);
	t->function = fn;
#endif
}

/*
 * kgo_crc32c() - CRC32C of @len bytes at @p, continuing from @crc (no
 * inversion on either side)
 *
 * 6.15 renamed the library's built-in __crc32c_le() to crc32c() (the
 * name that was libcrc32c's module before).
 */
static inline u32 kgo_crc32c(u32 crc, const void *p, size_t len)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
	return crc32c(crc, p, len);
#else
	return __crc32c_le(crc, p, len);
#endif
}

/*
 * kgo_canary_percpu_write() - the per-CPU stack canary that compiled code
 * checks against
 *
 * 6.15 removed fixed_percpu_data: the canary is the per-CPU
 * __stack_chk_guard, which the context switch reloads from
 * task->stack_canary as before. Modules see it only through its alias
 * __ref_stack_chk_guard (the symbol their own canary checks read, at
 * the same per-CPU offset), declared as a plain variable.
 */
static __always_inline void kgo_canary_percpu_write(unsigned long canary)
{
#ifdef CONFIG_STACKPROTECTOR
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
	this_cpu_write(*(unsigned long __percpu __force *)(uintptr_t)&__ref_stack_chk_guard,
		       canary);
#else
	this_cpu_write(fixed_percpu_data.stack_canary, canary);
#endif
#endif
}

/*
 * kgo_kernel_bind(), kgo_kernel_connect() - kernel_bind() and
 * kernel_connect() with a struct sockaddr
 *
 * 6.19 made their address a struct sockaddr_unsized, which callers
 * cast to.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
#define KGO_SOCKADDR(a) ((struct sockaddr_unsized *)(a))
#else
#define KGO_SOCKADDR(a) ((struct sockaddr *)(a))
#endif

static inline int kgo_kernel_bind(struct socket *sock, void *addr, int len)
{
	return kernel_bind(sock, KGO_SOCKADDR(addr), len);
}

static inline int kgo_kernel_connect(struct socket *sock, void *addr, int len,
				     int flags)
{
	return kernel_connect(sock, KGO_SOCKADDR(addr), len, flags);
}

/*
 * KGO_MODULE_IMPORT_NS() - MODULE_IMPORT_NS() of a bare namespace name
 *
 * 6.13 made the namespace a string literal.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define KGO_MODULE_IMPORT_NS(ns) MODULE_IMPORT_NS(#ns)
#else
#define KGO_MODULE_IMPORT_NS(ns) MODULE_IMPORT_NS(ns)
#endif

#endif /* __ASSEMBLY__ */
#endif /* _KGO_COMPAT_H */
