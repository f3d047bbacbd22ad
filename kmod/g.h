/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_G_H
#define _KGO_G_H

#include <linux/atomic.h>
#include <linux/types.h>

#include <kgo.h>

/*
 * Dead Gs the global list keeps for reuse; beyond, they go back to the
 * slab. Unbounded, a burst of a million goroutines would keep 128 MB of
 * structs until unload; this is 6 MiB of 192-byte slab objects, which a
 * shrinker gives back under memory pressure (g.c). Each P keeps up to
 * KGO_GFREE_MAX (proc.h).
 */
#define KGO_GFREE_GLOBAL_MAX	32768

struct kgo_feed;
struct kgo_m;
struct kgo_p;
struct kgo_sched;

/*
 * G states, as ownership rules. "Owner" is who may touch the G's
 * scheduling fields (sp, m, stack, schedlink) and change its state.
 *
 * IDLE      Just allocated or taken off a free list; owned by the
 *           spawner until it becomes RUNNABLE. No stack.
 * RUNNABLE  On exactly one run queue (a P's ring or runnext, or the
 *           global queue), or held by the M that just took it off one.
 *           Owned by that queue: the P for a local ring (thieves take
 *           ownership with their CAS on runqhead/runnext), sched.lock for
 *           the global queue. Holds a stack only if it ran before.
 * RUNNING   Executing on an M that holds a P. Owned by that M; the G
 *           owns its stack, which is current->stack.
 * WAITING   Parked. On no run queue; owned by whoever will ready it
 *           (a wait list, a timer). Holds its stack, switched out.
 *           Only the WAITING -> RUNNABLE transition is made by others,
 *           with a cmpxchg, so that exactly one ready wins; the owner's
 *           transitions are stores but for RUNNING -> WAITING (see
 *           kgo_g_set_status()).
 * DEAD      Exited. On a free list (P-local or global) for reuse; holds
 *           no stack.
 */
enum kgo_gstatus {
	KGO_G_IDLE,
	KGO_G_RUNNABLE,
	KGO_G_RUNNING,
	KGO_G_WAITING,
	KGO_G_DEAD,
};

/*
 * Why a WAITING G waits (Go's waitReason), for debugfs and tracing: the
 * one list of them, each KGO_WAIT_REASON_<name> with its word. Expanded
 * with em(name, word) for every entry but the last and eme() for that
 * one, as include/trace/events/migrate.h does: here into the enum, in
 * g.c into kgo_waitreason_str()'s table, in trace.h into the
 * tracepoints' enum definitions and __print_symbolic().
 */
#define KGO_WAIT_REASONS(em, eme)					\
	em(NONE,	"")						\
	em(PARK,	"park")		/* kgo_park() from a user */	\
	em(CHAN_SEND,	"chan send")					\
	em(CHAN_RECV,	"chan receive")					\
	em(SELECT,	"select")					\
	em(SLEEP,	"sleep")					\
	em(WAITGROUP,	"waitgroup")					\
	em(MUTEX,	"mutex")					\
	em(SOCK_READ,	"sock read")	/* kgo_sock_recv(), _accept() */ \
	eme(SOCK_WRITE,	"sock write")	/* kgo_sock_send(), _connect() */

#define KGO_WAIT_REASON_ENUM(name, word)	KGO_WAIT_REASON_##name,
enum kgo_waitreason {
	KGO_WAIT_REASONS(KGO_WAIT_REASON_ENUM, KGO_WAIT_REASON_ENUM)
	KGO_WAIT_REASON_NR,
};

#undef KGO_WAIT_REASON_ENUM

const char *kgo_waitreason_str(enum kgo_waitreason r);
/* switch.c */
void kgo_park_m(struct kgo_m *m, bool (*unlockf)(struct kgo_g *g, void *arg),
		void *arg, u8 reason);
/* sched.c */
int kgo_ready_m(struct kgo_m *m, struct kgo_g *g);
bool kgo_g_readied(struct kgo_g *g);

/*
 * A goroutine. Field rules (locking.h): O (per the state rules above),
 * A, I (at spawn).
 */
struct kgo_g {
	unsigned long sp;		/* O: saved %rsp while switched out */
	void *stack;			/* O: THREAD_SIZE stack, NULL before the first run */
	atomic_t status;		/* A: enum kgo_gstatus */
	u64 goid;			/* I: unique, never reused, starts at 1 */
	union {
		struct {
			kgo_func_t fn;		/* I */
			void *arg;		/* I */
		};
		/*
		 * DEAD, heading a batch of free Gs (linked through
		 * schedlink) on sched.gfree, under sched.lock (g.c).
		 */
		struct {
			struct kgo_g *batchnext;	/* the next batch */
			unsigned long batchlen;		/* Gs in this one */
		};
	};
	struct kgo_m *m;		/* O: the M running it, while RUNNING */
	struct kgo_g *schedlink;	/* O: link in the global queue or a free list */
	unsigned long since;		/* O: jiffies when it entered its status (gtime.h) */
	u64 runnable_ns;		/* O: when it became RUNNABLE, if timed, else 0 */
	u8 waitreason;			/* O: enum kgo_waitreason, while WAITING */
	bool preempt;			/* O: ran past its slice, see monitor.c */
	u8 trackseq;			/* O: its slices; one in 8 is sampled (gtime.h) */
	struct kgo_waitgroup *wg;	/* I: kgo_go_wg()'s, done as it exits */
	struct mem_cgroup *memcg;	/* I: pays for its stack and children; held (memcg.h) */
	struct kgo_feed *feed;		/* O: its source's, until its first run (feed.c) */

	/* Set by the G itself just before it parks; read by its M. */
	bool (*unlockf)(struct kgo_g *g, void *arg);
	void *unlock_arg;

	/*
	 * Not cleared on reuse: every allocated G struct is on sched.allg
	 * (as in Go's allgs) until given back to the slab, an RCU list
	 * written under sched.allg_lock (debugfs.c reads it).
	 */
	struct list_head allg_node;
};

/* kgo_g_reuse() clears a reused G up to here. */
#define KGO_G_CLEAR_SIZE	offsetof(struct kgo_g, allg_node)

/* A singly linked queue of Gs through schedlink (Go's gQueue). */
struct kgo_gqueue {
	struct kgo_g *head;
	struct kgo_g *tail;
};

static inline bool kgo_gqueue_empty(const struct kgo_gqueue *q)
{
	return !q->head;
}

static inline void kgo_gqueue_push_back(struct kgo_gqueue *q, struct kgo_g *g)
{
	g->schedlink = NULL;
	if (q->tail)
		q->tail->schedlink = g;
	else
		q->head = g;
	q->tail = g;
}

/* Appends all of @from to @q; @from is left empty. */
static inline void kgo_gqueue_push_back_all(struct kgo_gqueue *q,
					    struct kgo_gqueue *from)
{
	if (!from->tail)
		return;
	if (q->tail)
		q->tail->schedlink = from->head;
	else
		q->head = from->head;
	q->tail = from->tail;
	from->head = NULL;
	from->tail = NULL;
}

static inline struct kgo_g *kgo_gqueue_pop(struct kgo_gqueue *q)
{
	struct kgo_g *g = q->head;

	if (g) {
		q->head = g->schedlink;
		if (!q->head)
			q->tail = NULL;
		g->schedlink = NULL;
	}
	return g;
}

static inline enum kgo_gstatus kgo_g_status(struct kgo_g *g)
{
	return atomic_read(&g->status);
}

/*
 * The transitions made by the G's owner: a wrong old state is a bug.
 *
 * RUNNING -> WAITING is a cmpxchg, a full barrier: the parking G then
 * reads its waiter's claim (unlockf), while a timer or a claimer that
 * holds no lock of the G's may claim it and ready it, which is a
 * cmpxchg of WAITING. Store, then load, on both sides: without the
 * barrier each could miss the other's store, and the wake-up be lost.
 */
static inline void kgo_g_cas_status(struct kgo_g *g, enum kgo_gstatus old,
				    enum kgo_gstatus new)
{
	int was = atomic_cmpxchg(&g->status, old, new);

	WARN_ONCE(was != old, "kgo: goroutine %llu status %d, expected %d\n",
		  g->goid, was, old);
}

/*
 * The owner's other transitions (RUNNABLE -> RUNNING, RUNNING ->
 * RUNNABLE, RUNNING -> DEAD) need no atomic read-modify-write: in those
 * states nobody else writes the status. The one write by others,
 * kgo_g_readied()'s cmpxchg, changes only WAITING, and fails on any
 * other state without a store. So a store does it, two locked
 * instructions fewer per yield than the cmpxchg pair. Release: what
 * the owner wrote before (g->m before RUNNING) is seen by a reader
 * that sees the new state with acquire (debugfs.c); a queue that the
 * G goes onto next orders its own publication (runq.c, sched.lock).
 */
static inline void kgo_g_set_status(struct kgo_g *g, enum kgo_gstatus old,
				    enum kgo_gstatus new)
{
	int was = atomic_read(&g->status);

	WARN_ONCE(was != old, "kgo: goroutine %llu status %d, expected %d\n",
		  g->goid, was, old);
	atomic_set_release(&g->status, new);
}

int kgo_g_init(void);
void kgo_g_exit(void);
struct kgo_g *kgo_g_reuse(struct kgo_p *p);

/*
 * Dead Gs that a spawner outside any P (a thread submitting a batch of
 * tasks) took off the global list together, on its stack: see
 * kgo_gcache_get(). Only the spawner touches it; kgo_gcache_drain()
 * gives back what is left.
 */
struct kgo_gcache {
	struct kgo_g *head;	/* through schedlink */
	unsigned int n;
};

struct kgo_g *kgo_gcache_get(struct kgo_gcache *c);
void kgo_gcache_drain(struct kgo_gcache *c);
struct kgo_g *kgo_g_alloc(gfp_t gfp);
struct kgo_g *kgo_g_reserve_take(void);
void kgo_g_free(struct kgo_p *p, struct kgo_g *g);
void kgo_g_drain_free(struct kgo_p *p);
void kgo_g_report_alive(struct kgo_sched *sched, s64 alive, unsigned int secs);
unsigned long kgo_gfree_shrink(unsigned long nr);

#endif /* _KGO_G_H */
