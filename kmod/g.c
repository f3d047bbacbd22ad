// SPDX-License-Identifier: GPL-2.0
/*
 * Goroutine structs and their reuse. A dead G goes to its P's free list
 * (Go's p.gFree); past KGO_GFREE_MAX, half of that list spills to the
 * global list (sched.gFree), which also serves spawns from outside any P
 * and refills an empty P list. Dead Gs hold no stack, so a free list
 * costs only the structs.
 *
 * The global list holds up to KGO_GFREE_GLOBAL_MAX, enough for the
 * burst one spawner makes in a time slice (about 16,000 empty
 * goroutines under -icount), so that the next burst reuses them: a
 * struct from the slab costs a zeroed allocation and sched.allg's lock
 * on the way in and out, 220 of the 1176 instructions of a spawn, run
 * and exit in the spawn bench when the list held 4096. The list is a
 * cache, and a shrinker gives it back to the slab under memory
 * pressure.
 *
 * PREEMPT_RT: a spawn where nothing may be allocated (hardirq proper, a
 * raw spinlock held: kgo_may_not_alloc()) that finds no dead G to reuse
 * takes a fresh one from a reserve of KGO_G_RESERVE, made at load and
 * topped up by a work item whenever it falls below half: an allocation
 * there is not allowed, GFP_ATOMIC or not. A reserve rather than a
 * deferred spawn: kgo_go() returns the goroutine's id, and its caller
 * may count on the goroutine being queued when it returns (kgo_go_wg()
 * counts it already). Empty, the spawn fails with -ENOMEM, as a
 * GFP_ATOMIC one may anywhere. Other kernels keep no reserve.
 * allg_lock stays a spinlock_t: it is taken only where G structs are
 * allocated or freed, which on RT is never where preemption is off.
 */

#include <linux/rculist.h>
#include <kunit/visibility.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "g.h"
#include "gtime.h"
#include "proc.h"
#include "sched.h"

static struct kmem_cache *kgo_g_cache;

/* In the enum's order: both come from the one list. */
#define KGO_WAIT_REASON_WORD(name, word)	word,
static const char *const kgo_waitreasons[KGO_WAIT_REASON_NR] = {
	KGO_WAIT_REASONS(KGO_WAIT_REASON_WORD, KGO_WAIT_REASON_WORD)
};

#undef KGO_WAIT_REASON_WORD

const char *kgo_waitreason_str(enum kgo_waitreason r)
{
	return r < KGO_WAIT_REASON_NR ? kgo_waitreasons[r] : "?";
}

static void kgo_g_reserve_fill(struct work_struct *work);

static struct shrinker *kgo_gfree_shrinker;
static unsigned long kgo_gfree_shrink_count(struct shrinker *s,
					    struct shrink_control *sc);
static unsigned long kgo_gfree_shrink_scan(struct shrinker *s,
					   struct shrink_control *sc);

int kgo_g_init(void)
{
	/*
	 * Type-stable: a G struct freed back to the slab (g.c keeps only so
	 * many dead ones) is still a G until a grace period has passed, as
	 * when every struct stayed until unload. A late kgo_ready() of a G
	 * that exited reads a status, not freed memory.
	 */
	kgo_g_cache = KMEM_CACHE(kgo_g, SLAB_HWCACHE_ALIGN | SLAB_TYPESAFE_BY_RCU);
	if (!kgo_g_cache)
		return -ENOMEM;
	kgo_gfree_shrinker = kgo_shrinker_create("kgo-gfree", kgo_gfree_shrink_count,
						 kgo_gfree_shrink_scan);
	if (!kgo_gfree_shrinker) {
		kmem_cache_destroy(kgo_g_cache);
		return -ENOMEM;
	}
	/* Short of memory, spawns that may not allocate fail until a refill. */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		kgo_g_reserve_fill(NULL);
	return 0;
}

static void kgo_g_free_chain(struct kgo_g *g);

/* PREEMPT_RT: spawns that may not allocate find this many (see above). */
#define KGO_G_RESERVE	64

/*
 * Tops the reserve up, a G at a time: allocated with the lock dropped,
 * pushed under it. Charged to nobody, as a spawn from interrupt context
 * is anyway (memcg.h). Context: process, may sleep.
 */
static void kgo_g_reserve_fill(struct work_struct *work)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	struct kgo_g *g;

	while (READ_ONCE(sched->ngreserve) < KGO_G_RESERVE) {
		g = kgo_g_alloc(GFP_KERNEL);
		if (!g)
			return;		/* the next take asks again */
		kgo_sched_lock_irqsave(sched, flags);
		g->schedlink = sched->greserve;
		sched->greserve = g;
		WRITE_ONCE(sched->ngreserve, sched->ngreserve + 1);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
	}
}

static DECLARE_WORK(kgo_g_reserve_work, kgo_g_reserve_fill);

/**
 * kgo_g_reserve_take() - a G for a spawn that may not allocate (RT)
 *
 * One pop under sched.lock; below half, the refill is queued (a raw
 * pool lock: legal here on RT).
 *
 * Context: any, hardirq included. Return: an IDLE G, or NULL if the
 * reserve is empty.
 */
struct kgo_g *kgo_g_reserve_take(void)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	struct kgo_g *g;
	bool low;

	kgo_sched_lock_irqsave(sched, flags);
	g = sched->greserve;
	if (g) {
		sched->greserve = g->schedlink;
		WRITE_ONCE(sched->ngreserve, sched->ngreserve - 1);
		g->schedlink = NULL;
	}
	low = sched->ngreserve < KGO_G_RESERVE / 2 && !sched->stopping;
	raw_spin_unlock_irqrestore(&sched->lock, flags);
	if (low)
		queue_work(system_unbound_wq, &kgo_g_reserve_work);
	return g;
}

/* Context: the global list drained (kgo_sched_exit()). */
void kgo_g_exit(void)
{
	kgo_shrinker_destroy(kgo_gfree_shrinker);
	kgo_gfree_shrinker = NULL;
	kgo_g_drain_free(NULL);	/* what the shrinker may have raced in */
	/* No spawn is left to queue the refill again. */
	cancel_work_sync(&kgo_g_reserve_work);
	kgo_g_free_chain(kgo_sched.greserve);
	kgo_sched.greserve = NULL;
	kgo_sched.ngreserve = 0;
	kmem_cache_destroy(kgo_g_cache);
}

/*
 * The global list is a stack of batches: each batch a chain through
 * schedlink, its head carrying the next batch and its length (g.h). A
 * P's spill goes on as one batch and a P's refill takes one off, with no
 * walk under the lock (which had interrupts off over 32 cold lines).
 */

/* Pushes @q, @n Gs, as one batch. Context: sched->lock held. */
static void kgo_gfree_global_put(struct kgo_sched *sched, struct kgo_gqueue *q,
				 unsigned int n)
{
	struct kgo_g *head = q->head;

	lockdep_assert_held(&sched->lock);
	head->batchnext = sched->gfree;
	head->batchlen = n;
	sched->gfree = head;
	WRITE_ONCE(sched->ngfree, sched->ngfree + n);
}

/*
 * Takes the top batch, or only its first G with @one; *@taken is how
 * many. Context: sched->lock held.
 */
static struct kgo_g *kgo_gfree_global_take(struct kgo_sched *sched, bool one,
					   unsigned int *taken)
{
	struct kgo_g *head = sched->gfree, *rest;

	lockdep_assert_held(&sched->lock);
	*taken = 0;
	if (!head)
		return NULL;
	if (one && head->batchlen > 1) {
		rest = head->schedlink;
		rest->batchnext = head->batchnext;
		rest->batchlen = head->batchlen - 1;
		sched->gfree = rest;
		head->schedlink = NULL;
		*taken = 1;
	} else {
		sched->gfree = head->batchnext;
		*taken = head->batchlen;
	}
	WRITE_ONCE(sched->ngfree, sched->ngfree - *taken);
	return head;
}

/* Makes a dead G off a free list fit for a new goroutine. */
static void kgo_g_clear(struct kgo_g *g)
{
	WARN_ON_ONCE(kgo_g_status(g) != KGO_G_DEAD || g->stack);
	memset(g, 0, KGO_G_CLEAR_SIZE);
}

/**
 * kgo_g_reuse() - a dead G for a new goroutine, if one is free
 * @p: the caller's P, pinned (kgo_g_p_get()), or NULL
 *
 * Never sleeps.
 * Return: an IDLE G with its scheduling fields cleared,
 * or NULL.
 */
struct kgo_g *kgo_g_reuse(struct kgo_p *p)
{
	struct kgo_sched *sched = &kgo_sched;
	struct kgo_g *g = NULL;
	unsigned long flags;
	unsigned int n;

	if (p && !p->gfree && READ_ONCE(sched->ngfree)) {
		kgo_sched_lock_irqsave(sched, flags);
		p->gfree = kgo_gfree_global_take(sched, false, &n);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		p->ngfree = n;
	}
	if (p && p->gfree) {
		g = p->gfree;
		p->gfree = g->schedlink;
		p->ngfree--;
	} else if (!p && READ_ONCE(sched->ngfree)) {
		kgo_sched_lock_irqsave(sched, flags);
		g = kgo_gfree_global_take(sched, true, &n);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
	}
	if (g)
		kgo_g_clear(g);
	return g;
}

/**
 * kgo_gcache_get() - a dead G for a spawner outside any P, from its cache
 * @c: the spawner's cache, on its stack
 *
 * An empty cache takes a whole batch off the global list (a P's spill,
 * up to KGO_GFREE_MAX / 2 Gs) under one sched.lock: a thread submitting
 * many tasks takes the lock once a batch, not once a goroutine.
 *
 * Never sleeps.
 * Return: an IDLE G with its scheduling fields cleared,
 * or NULL if the global list is empty.
 */
struct kgo_g *kgo_gcache_get(struct kgo_gcache *c)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	struct kgo_g *g;

	if (!c->n) {
		if (!READ_ONCE(sched->ngfree))
			return NULL;
		kgo_sched_lock_irqsave(sched, flags);
		c->head = kgo_gfree_global_take(sched, false, &c->n);
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		if (!c->n)
			return NULL;
	}
	g = c->head;
	c->head = g->schedlink;
	c->n--;
	kgo_g_clear(g);
	return g;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_gcache_get);

/**
 * kgo_g_alloc() - a new G for a new goroutine
 * @gfp: for the allocation
 *
 * Context: may sleep if @gfp allows.
 * Return: an IDLE G, or NULL.
 */
struct kgo_g *kgo_g_alloc(gfp_t gfp)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	struct kgo_g *g;

	/* Never the OOM killer for a goroutine: the caller gets -ENOMEM. */
	g = kmem_cache_zalloc(kgo_g_cache, gfp | __GFP_NORETRY | __GFP_NOWARN);
	if (g) {
		spin_lock_irqsave(&sched->allg_lock, flags);
		list_add_tail_rcu(&g->allg_node, &sched->allg);	/* debugfs.c */
		spin_unlock_irqrestore(&sched->allg_lock, flags);
	}
	return g;
}

/* Gives the structs of @q back to the slab. Context: any. */
static void kgo_g_release_all(struct kgo_gqueue *q)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	struct kgo_g *g;

	while ((g = kgo_gqueue_pop(q))) {
		spin_lock_irqsave(&sched->allg_lock, flags);
		list_del_rcu(&g->allg_node);
		spin_unlock_irqrestore(&sched->allg_lock, flags);
		kmem_cache_free(kgo_g_cache, g);
	}
}

/*
 * Puts @q, @n dead Gs, on the global list as one batch, or back to the
 * slab if the list would pass KGO_GFREE_GLOBAL_MAX. Context: any.
 */
static void kgo_gfree_spill(struct kgo_sched *sched, struct kgo_gqueue *q,
			    unsigned int n)
{
	unsigned long flags;

	kgo_sched_lock_irqsave(sched, flags);
	if (sched->ngfree + n > KGO_GFREE_GLOBAL_MAX) {
		raw_spin_unlock_irqrestore(&sched->lock, flags);
		kgo_g_release_all(q);
		return;
	}
	kgo_gfree_global_put(sched, q, n);
	raw_spin_unlock_irqrestore(&sched->lock, flags);
}

/**
 * kgo_g_free() - put a DEAD G on a free list
 * @p: the caller's P when called on an M holding it, else NULL
 * @g: the G, which holds no stack
 */
void kgo_g_free(struct kgo_p *p, struct kgo_g *g)
{
	struct kgo_sched *sched = &kgo_sched;
	struct kgo_gqueue spill = {};
	unsigned int n = 0;

	WARN_ON_ONCE(g->stack);
	if (p) {
		g->schedlink = p->gfree;
		p->gfree = g;
		if (++p->ngfree < KGO_GFREE_MAX)
			return;
		/* Spill half to the global list. */
		while (p->ngfree > KGO_GFREE_MAX / 2) {
			g = p->gfree;
			p->gfree = g->schedlink;
			p->ngfree--;
			kgo_gqueue_push_back(&spill, g);
			n++;
		}
	} else {
		kgo_gqueue_push_back(&spill, g);
		n = 1;
	}
	kgo_gfree_spill(sched, &spill, n);
}

/**
 * kgo_gcache_drain() - give back what a spawner's cache has left
 * @c: the cache; empty afterwards
 *
 * Context: any.
 */
void kgo_gcache_drain(struct kgo_gcache *c)
{
	struct kgo_gqueue q = {};
	struct kgo_g *g;
	unsigned int n = c->n;

	while ((g = c->head)) {
		c->head = g->schedlink;
		kgo_gqueue_push_back(&q, g);
	}
	c->n = 0;
	if (n)
		kgo_gfree_spill(&kgo_sched, &q, n);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_gcache_drain);

/* Frees the structs of a chain through schedlink. */
static void kgo_g_free_chain(struct kgo_g *g)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long flags;
	struct kgo_g *next;

	for (; g; g = next) {
		next = g->schedlink;
		spin_lock_irqsave(&sched->allg_lock, flags);
		list_del_rcu(&g->allg_node);
		spin_unlock_irqrestore(&sched->allg_lock, flags);
		kmem_cache_free(kgo_g_cache, g);
	}
}

/*
 * Frees the structs on @p's list, or the global list for NULL. Context:
 * nothing else uses the list any more.
 */
void kgo_g_drain_free(struct kgo_p *p)
{
	struct kgo_sched *sched = &kgo_sched;
	struct kgo_g *batch, *next;

	if (p) {
		kgo_g_free_chain(p->gfree);
		p->gfree = NULL;
		p->ngfree = 0;
		return;
	}
	for (batch = sched->gfree; batch; batch = next) {
		next = batch->batchnext;
		kgo_g_free_chain(batch);
	}
	sched->gfree = NULL;
	sched->ngfree = 0;
}

/**
 * kgo_gfree_shrink() - give dead G structs of the global list to the slab
 * @nr: how many at least, if there are that many
 *
 * Takes whole batches, each under sched.lock, and frees them with the
 * lock dropped. Context: process.
 * Return: how many were freed.
 */
unsigned long kgo_gfree_shrink(unsigned long nr)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned long freed = 0;
	struct kgo_g *batch;
	unsigned int n;

	while (freed < nr) {
		kgo_sched_lock_irq(sched);
		batch = kgo_gfree_global_take(sched, false, &n);
		raw_spin_unlock_irq(&sched->lock);
		if (!batch)
			break;
		kgo_g_free_chain(batch);
		freed += n;
	}
	return freed;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_gfree_shrink);

static unsigned long kgo_gfree_shrink_count(struct shrinker *s,
					    struct shrink_control *sc)
{
	unsigned long n = READ_ONCE(kgo_sched.ngfree);

	return n ? n : SHRINK_EMPTY;
}

static unsigned long kgo_gfree_shrink_scan(struct shrinker *s,
					   struct shrink_control *sc)
{
	unsigned long freed = kgo_gfree_shrink(sc->nr_to_scan);

	return freed ? freed : SHRINK_STOP;
}

/*
 * The first half of a ready: @g, parked, is RUNNABLE and on no queue;
 * the caller queues it (kgo_injectglist(), for a batch). False, with a
 * warning, if @g was not parked. Context: any.
 */
bool kgo_g_readied(struct kgo_g *g)
{
	int was = atomic_cmpxchg(&g->status, KGO_G_WAITING, KGO_G_RUNNABLE);

	if (WARN_ONCE(was != KGO_G_WAITING,
		      "kgo: ready of goroutine %llu in state %d\n", g->goid, was))
		return false;
	kgo_g_stamp_runnable(g);
	return true;
}

/*
 * Names, in the kernel log, the goroutines that hold an unload (up to
 * KGO_G_REPORT_MAX of them): their function and what they wait for.
 * Copied under RCU, as debugfs.c reads allg, and printed after it: not
 * under allg_lock, which is raw (PREEMPT_RT) and so must not be held
 * over a walk as long as the dead Gs kept for reuse. G structs are
 * SLAB_TYPESAFE_BY_RCU: one freed and reused meanwhile is still a G,
 * and one put back on allg meanwhile goes to its tail, so the walk ends
 * early at worst; for a report, that is enough.
 */
#define KGO_G_REPORT_MAX	8

void kgo_g_report_alive(struct kgo_sched *sched, s64 alive, unsigned int secs)
{
	struct {
		u64 goid;
		kgo_func_t fn;
		int status;
		u8 why;
	} seen[KGO_G_REPORT_MAX];
	unsigned int n = 0, i;
	struct kgo_g *g;

	rcu_read_lock();
	list_for_each_entry_rcu(g, &sched->allg, allg_node) {
		int st = atomic_read(&g->status);

		if (st == KGO_G_IDLE || st == KGO_G_DEAD)
			continue;
		seen[n].goid = READ_ONCE(g->goid);
		seen[n].fn = READ_ONCE(g->fn);
		seen[n].status = st;
		seen[n].why = READ_ONCE(g->waitreason);
		if (++n == KGO_G_REPORT_MAX)
			break;
	}
	rcu_read_unlock();

	pr_warn("unload waits %us for %lld goroutines to exit:\n", secs, alive);
	for (i = 0; i < n; i++)
		pr_warn("  G%llu %ps: %s%s%s\n", seen[i].goid, seen[i].fn,
			seen[i].status == KGO_G_WAITING ? "waiting" :
			seen[i].status == KGO_G_RUNNING ? "running" : "runnable",
			seen[i].status == KGO_G_WAITING ? ", " : "",
			seen[i].status == KGO_G_WAITING ? kgo_waitreason_str(seen[i].why) : "");
}
