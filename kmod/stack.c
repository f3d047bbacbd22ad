// SPDX-License-Identifier: GPL-2.0
/*
 * Goroutine stacks: THREAD_SIZE each, vmalloc'd (so an overflow hits
 * the guard page below, as for kernel stacks), and laid out like a task
 * stack, because current->stack points at the running goroutine's stack
 * and the kernel reads it as such:
 *
 *   base            STACK_END_MAGIC (schedule() checks it)
 *   ...             goroutine frames, growing down
 *   top - pt_regs   a zeroed struct pt_regs, where task_pt_regs() looks
 *   top
 *
 * Each P caches up to KGO_STACK_CACHE_MAX stacks. A goroutine takes one
 * when it first runs and gives it back when it exits, so queued
 * goroutines hold none.
 *
 * Behind the P caches is a global pool, as Go keeps the stacks of its
 * dead Gs until the next GC. A spawn tree keeps thousands of goroutines
 * waiting for their children, each on a stack; when a level exited, a
 * P cache of 64 kept 64 of their stacks and freed the rest, and the
 * next level allocated them again: vmalloc, a page table, and pages
 * zeroed at allocation (init_on_alloc, on in Debian's kernels). The
 * instruction profile of tree_1p had half of all its work in that
 * zeroing. A stack that a full P cache has no room for now goes to the
 * pool instead of being freed, and an empty P cache takes a batch back.
 *
 * Only stacks charged to no memcg go to the pool (a goroutine of the
 * root memcg allocated them: an in-kernel caller's, usually), and only
 * such goroutines take from it: a stack charged to one cgroup must not
 * let another cgroup's goroutine run uncharged. (The 64 of a P cache
 * are not sorted so: a goroutine may run on one charged to another
 * cgroup, as before the pool.)
 *
 * The pool holds at most stack_pool_max stacks (a module parameter) and
 * gives back what it did not need: every second, half of the stacks it
 * held unused for the whole second (the low-water mark of its count)
 * are freed, so an idle pool empties in a few seconds. They are freed
 * KGO_STACK_DECAY_CHUNK at a time, a tick apart: after a burst of
 * 10,000 parked goroutines the first round frees 2,047 stacks, which in
 * one go kept a CPU busy for 5.4 ms (measured under -icount, where it
 * was the slow mode of make bench's tree_allp whenever it fell inside
 * the timed tree), and handed RCU as many callbacks at once. A shrinker
 * hands back the pool's stacks, then the P caches', under memory
 * pressure.
 *
 * Freeing waits for an RCU grace period: an unwinder on another CPU
 * (/proc/PID/stack, sysrq-t) may have read current->stack of an M just
 * before the stack left it.
 */

#include <linux/atomic.h>
#include <linux/kasan.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched/task_stack.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "floor.h"
#include "g.h"
#include "proc.h"
#include "sched.h"
#include "stack.h"
#include "switch.h"

#ifdef CONFIG_KASAN_GENERIC
/*
 * Exported by mm/kasan/generic.c, which is the only KASAN unpoisoning
 * entry point a module can reach. Declared as the compiler's builtin of
 * the same name expects: (lowest address, end address as an integer).
 */
void __asan_allocas_unpoison(void *stack_top, long stack_bottom);
#endif

/* A freed stack's first bytes, reused to wait out the grace period. */
struct kgo_dead_stack {
	struct rcu_head rcu;
};

/* A pooled stack's first bytes: the pool is a list through them. */
struct kgo_pooled_stack {
	struct kgo_pooled_stack *next;
};

#define KGO_STACK_BATCH		(KGO_STACK_CACHE_MAX / 2)
#define KGO_STACK_POOL_DEFAULT	4096
#define KGO_STACK_POOL_LIMIT	SZ_1M	/* a count, not a bit: an int, printed with %d */
#define KGO_STACK_DECAY_CHUNK	64

static unsigned int stack_pool_max = KGO_STACK_POOL_DEFAULT;
module_param(stack_pool_max, uint, 0444);
MODULE_PARM_DESC(stack_pool_max,
		 "Idle goroutine stacks kept for reuse beyond the Ps' own, freed after a few idle seconds (0-1048576)");

/*
 * The pool. Lock order: a P's stack_lock, then the pool's lock, never
 * the other way; neither is taken from interrupts.
 */
static struct {
	spinlock_t lock;		/* the fields marked "lock" */
	struct kgo_pooled_stack *head;	/* lock */
	unsigned int n;			/* lock; READ_ONCE for the shrinker */
	unsigned int low;		/* lock: least n since the last decay */
	unsigned int decay_left;	/* lock: still to free this round */
	struct delayed_work decay;
} kgo_stack_pool = {
	.lock = __SPIN_LOCK_UNLOCKED(kgo_stack_pool.lock),
};

/*
 * A goroutine that exited, or was abandoned, mid-frame leaves KASAN
 * redzone poison behind in its stack's shadow; the next user of the
 * stack would trip over it. Clear the whole stack's shadow before reuse.
 */
static void kgo_stack_unpoison(void *stack)
{
#ifdef CONFIG_KASAN_GENERIC
	__asan_allocas_unpoison(stack, (long)stack + THREAD_SIZE);
#endif
}

static void kgo_stack_free(void *stack)
{
	struct kgo_dead_stack *dead = stack;

	kgo_stack_unpoison(stack);
	kvfree_rcu(dead, rcu);
}

/*
 * Refills @p's empty cache with up to a batch from the pool.
 * Context: @p->stack_lock held.
 */
static void kgo_stack_pool_take(struct kgo_p *p)
{
	struct kgo_pooled_stack *s;
	unsigned int k = 0;

	lockdep_assert_held(&p->stack_lock);
	if (!READ_ONCE(kgo_stack_pool.n))
		return;
	spin_lock(&kgo_stack_pool.lock);
	while (k < KGO_STACK_BATCH && p->nstacks < KGO_STACK_CACHE_MAX &&
	       (s = kgo_stack_pool.head)) {
		kgo_stack_pool.head = s->next;
		p->stacks[p->nstacks++] = s;
		k++;
	}
	WRITE_ONCE(kgo_stack_pool.n, kgo_stack_pool.n - k);
	kgo_stack_pool.low = min(kgo_stack_pool.low, kgo_stack_pool.n);
	spin_unlock(&kgo_stack_pool.lock);
}

/*
 * Whether @stack is charged to no memcg: allocated for a goroutine of
 * the root memcg (an in-kernel caller's, usually), whose __GFP_ACCOUNT
 * charges nobody. Only those go to the pool, and only such goroutines
 * take from it: a stack charged to one cgroup must not serve another
 * cgroup's goroutine, which would run uncharged (memcg_test).
 */
static bool kgo_stack_uncharged(void *stack)
{
#ifdef CONFIG_MEMCG
	return !READ_ONCE(vmalloc_to_page(stack)->memcg_data);
#else
	return true;
#endif
}

/*
 * Takes @stack, which @p's full cache has no room for, if it is
 * uncharged and the pool has room; the decay work is started when the
 * pool was empty.
 * Return: whether it was taken.
 */
static bool kgo_stack_pool_give(void *stack)
{
	struct kgo_pooled_stack *s = stack;
	bool was_empty;

	if (READ_ONCE(kgo_stack_pool.n) >= stack_pool_max || !kgo_stack_uncharged(stack))
		return false;
	spin_lock(&kgo_stack_pool.lock);
	if (kgo_stack_pool.n >= stack_pool_max) {
		spin_unlock(&kgo_stack_pool.lock);
		return false;
	}
	was_empty = !kgo_stack_pool.n;
	s->next = kgo_stack_pool.head;
	kgo_stack_pool.head = s;
	WRITE_ONCE(kgo_stack_pool.n, kgo_stack_pool.n + 1);
	if (was_empty) {
		kgo_stack_pool.low = kgo_stack_pool.n;
		kgo_stack_pool.decay_left = 0;	/* a round, if any, ended */
	}
	spin_unlock(&kgo_stack_pool.lock);
	if (was_empty)
		mod_delayed_work(system_unbound_wq, &kgo_stack_pool.decay, HZ);
	return true;
}

/* Frees up to @nr of the pool's stacks. Returns how many. */
static unsigned long kgo_stack_pool_free(unsigned long nr)
{
	struct kgo_pooled_stack *list = NULL, *s;
	unsigned long n = 0;

	spin_lock(&kgo_stack_pool.lock);
	while (n < nr && (s = kgo_stack_pool.head)) {
		kgo_stack_pool.head = s->next;
		s->next = list;
		list = s;
		n++;
	}
	WRITE_ONCE(kgo_stack_pool.n, kgo_stack_pool.n - n);
	kgo_stack_pool.low = min(kgo_stack_pool.low, kgo_stack_pool.n);
	spin_unlock(&kgo_stack_pool.lock);
	while ((s = list)) {
		list = s->next;
		kgo_stack_free(s);
	}
	return n;
}

/*
 * Once a second while the pool holds any, a round: half of what it held
 * unused all along goes back (at least one), so that a pool sized by a
 * burst empties within seconds of it, and one in steady use keeps its
 * size. A round frees KGO_STACK_DECAY_CHUNK per run, a tick apart, and
 * never more than the pool holds by then: stacks taken meanwhile were
 * needed after all.
 */
static void kgo_stack_pool_decay(struct work_struct *work)
{
	unsigned long delay = HZ;
	unsigned int chunk;
	bool more;

	spin_lock(&kgo_stack_pool.lock);
	if (!kgo_stack_pool.decay_left && kgo_stack_pool.low)
		kgo_stack_pool.decay_left = max(kgo_stack_pool.low / 2, 1U);
	kgo_stack_pool.decay_left = min(kgo_stack_pool.decay_left, kgo_stack_pool.n);
	chunk = min_t(unsigned int, kgo_stack_pool.decay_left, KGO_STACK_DECAY_CHUNK);
	kgo_stack_pool.decay_left -= chunk;
	spin_unlock(&kgo_stack_pool.lock);
	if (chunk)
		kgo_stack_pool_free(chunk);
	spin_lock(&kgo_stack_pool.lock);
	if (kgo_stack_pool.decay_left)
		delay = 1;			/* the round goes on */
	else
		kgo_stack_pool.low = kgo_stack_pool.n;	/* the next one starts */
	more = kgo_stack_pool.n;
	spin_unlock(&kgo_stack_pool.lock);
	if (more)
		queue_delayed_work(system_unbound_wq, &kgo_stack_pool.decay, delay);
}

/* How many stacks the pool holds (racy, for the shrinker and tests). */
unsigned long kgo_stack_pooled(void)
{
	return READ_ONCE(kgo_stack_pool.n);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_stack_pooled);

/**
 * kgo_stack_get() - a stack for a goroutine's first run
 * @p: the caller's P
 * @uncharged: the active memcg is the root or none, so that the pool's
 *             stacks, charged to nobody, may serve it
 *
 * Charged to the active memcg, which the caller sets (memcg.h).
 *
 * Context: the M holding @p, process context (may sleep).
 * Return: a stack or NULL when memory is short.
 */
void *kgo_stack_get(struct kgo_p *p, bool uncharged)
{
	void *stack = NULL;

	spin_lock(&p->stack_lock);
	if (!p->nstacks && uncharged)
		kgo_stack_pool_take(p);
	if (p->nstacks)
		stack = p->stacks[--p->nstacks];
	spin_unlock(&p->stack_lock);
	if (stack)
		return stack;
	/*
	 * A new stack only above the floor (floor.c), and not
	 * vmalloc_node(): a goroutine's stack must never call in the OOM
	 * killer. Short of memory, the G waits (sched.c), and the budget
	 * (budget.c) keeps that for when the machine really is.
	 */
	if (kgo_floor_stack_denied())
		return NULL;
	return __vmalloc(THREAD_SIZE,
			 GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN);
}

/**
 * kgo_stack_put() - give back the stack of a goroutine that exited
 * @p: the caller's P
 * @stack: the stack, no longer in use by anyone
 *
 * Context: the M holding @p.
 */
void kgo_stack_put(struct kgo_p *p, void *stack)
{
	kgo_stack_unpoison(stack);
	spin_lock(&p->stack_lock);
	if (p->nstacks < KGO_STACK_CACHE_MAX) {
		p->stacks[p->nstacks++] = stack;
		stack = NULL;
	}
	spin_unlock(&p->stack_lock);
	if (stack && !kgo_stack_pool_give(stack))
		kgo_stack_free(stack);
}

/*
 * Lays out @g's stack for its first switch: the pt_regs reserve, then a
 * frame that kgo_switch pops (r15..rbp) and returns from into
 * kgo_g_entry, which finds @g in %rbx. kgo_g_entry starts with %rsp
 * 16-byte aligned, as the ABI wants before its call.
 */
void kgo_stack_prepare(struct kgo_g *g)
{
	unsigned long top = (unsigned long)g->stack + THREAD_SIZE;
	unsigned long *sp;

	*(unsigned long *)g->stack = STACK_END_MAGIC;
	memset((void *)(top - sizeof(struct pt_regs)), 0, sizeof(struct pt_regs));
	sp = (unsigned long *)ALIGN_DOWN(top - sizeof(struct pt_regs), 16);
	*--sp = (unsigned long)kgo_g_entry;	/* kgo_switch's RET */
	*--sp = 0;				/* rbp */
	*--sp = (unsigned long)g;		/* rbx */
	*--sp = 0;				/* r12 */
	*--sp = 0;				/* r13 */
	*--sp = 0;				/* r14 */
	*--sp = 0;				/* r15 */
	g->sp = (unsigned long)sp;
}

/* Frees every cached stack of @p. Context: no M may use @p any more. */
void kgo_stack_drain(struct kgo_p *p)
{
	while (p->nstacks)
		kgo_stack_free(p->stacks[--p->nstacks]);
}

/*
 * How many stacks the Ps cache: a racy sum (for the shrinker's count and
 * tests), so that spawn and exit touch no shared counter.
 */
long kgo_stacks_cached(void)
{
	struct kgo_sched *sched = &kgo_sched;
	long n = 0;
	int i;

	for (i = 0; i < sched->nprocs; i++)
		n += READ_ONCE(sched->allp[i]->nstacks);
	return n + kgo_stack_pooled();
}
EXPORT_SYMBOL_IF_KUNIT(kgo_stacks_cached);

/*
 * Frees up to @nr cached stacks: the pool's first, then round the Ps.
 * Returns how many.
 */
unsigned long kgo_stack_shrink(unsigned long nr)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long freed = kgo_stack_pool_free(nr);
	int i;

	for (i = 0; i < sched->nprocs && freed < nr; i++) {
		struct kgo_p *p = sched->allp[i];
		void *batch[KGO_STACK_CACHE_MAX];
		unsigned int n = 0;

		spin_lock(&p->stack_lock);
		while (p->nstacks && freed + n < nr)
			batch[n++] = p->stacks[--p->nstacks];
		spin_unlock(&p->stack_lock);
		freed += n;
		while (n)
			kgo_stack_free(batch[--n]);
	}
	return freed;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_stack_shrink);

static unsigned long kgo_stack_shrink_count(struct shrinker *s,
					    struct shrink_control *sc)
{
	long n = kgo_stacks_cached();

	return n > 0 ? n : SHRINK_EMPTY;
}

static unsigned long kgo_stack_shrink_scan(struct shrinker *s,
					   struct shrink_control *sc)
{
	unsigned long freed = kgo_stack_shrink(sc->nr_to_scan);

	return freed ? freed : SHRINK_STOP;
}

static struct shrinker *kgo_stack_shrinker;

int kgo_stack_init(void)
{
	if (stack_pool_max > KGO_STACK_POOL_LIMIT) {
		pr_err("stack_pool_max=%u: must be 0 to %d\n", stack_pool_max,
		       KGO_STACK_POOL_LIMIT);
		return -EINVAL;
	}
	INIT_DELAYED_WORK(&kgo_stack_pool.decay, kgo_stack_pool_decay);
	kgo_stack_shrinker = kgo_shrinker_create("kgo-stacks", kgo_stack_shrink_count,
						 kgo_stack_shrink_scan);
	return kgo_stack_shrinker ? 0 : -ENOMEM;
}

/* Context: no M runs any more (the Ps' caches are drained later). */
void kgo_stack_exit(void)
{
	kgo_shrinker_destroy(kgo_stack_shrinker);
	kgo_stack_shrinker = NULL;
	/* The decay requeues itself while the pool holds any: empty it first. */
	kgo_stack_pool_free(ULONG_MAX);
	cancel_delayed_work_sync(&kgo_stack_pool.decay);
	kgo_stack_pool_free(ULONG_MAX);
}
