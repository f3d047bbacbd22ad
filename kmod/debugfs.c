// SPDX-License-Identifier: GPL-2.0
/*
 * Text views of the scheduler in /sys/kernel/debug/kgo/, in the spirit
 * of Go's GODEBUG=schedtrace=X,scheddetail=1:
 *
 *   sched       one line of global counts
 *   procs       one line per P: state, queue, counters
 *   ms          one line per M (kthread)
 *   goroutines  one line per live G: state, wait reason, for how long
 *   stacks      every switched-out G with its kernel stack, like the
 *               goroutine dump of Go's SIGQUIT
 *   counts      the events that cost more with more CPUs (count.h):
 *               one line of totals, then one per possible CPU
 *
 * Every line is "NAME: key=value ..." (sched's and counts' totals have
 * no NAME), so that
 * scripts can parse it with one scanf format.
 *
 * These are snapshots, not transactions: most fields belong to an M
 * that keeps running while we print, so they are read once with
 * READ_ONCE and may disagree with each other by an event or two. What
 * keeps the pointers we follow valid: P structs live until
 * kgo_sched_exit(), and kgo_debugfs_exit() runs before it, waiting for
 * readers in flight. Everything else is read under RCU, with interrupts
 * on and no scheduler lock held, however many Ms and Gs there are:
 * sched.allm and sched.allg are RCU lists, Ms are freed after a grace
 * period (monitor.c), and G structs are type-stable (SLAB_TYPESAFE_BY_RCU):
 * one freed and reused under us is still a G, whose fields we print as
 * a snapshot like any other.
 *
 * debugfs is optional: without it (CONFIG_DEBUG_FS=n, or debugfs_*
 * failing) the module loads without these files.
 */

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/thread_info.h>

#include "count.h"
#include "debugfs.h"
#include "g.h"
#include "m.h"
#include "proc.h"
#include "runq.h"
#include "sched.h"

/* /sys/kernel/debug/kgo, or NULL without debugfs. */
static struct dentry *kgo_debugfs_root;

static const char *const kgo_pstatus_names[] = {
	[KGO_P_IDLE]	= "idle",
	[KGO_P_RUNNING]	= "running",
	[KGO_P_SYSCALL]	= "syscall",
	[KGO_P_OFFLINE]	= "offline",
};

/* @st: an enum kgo_pstatus, read racily. */
static const char *kgo_debugfs_pstatus(unsigned int st)
{
	return st < ARRAY_SIZE(kgo_pstatus_names) && kgo_pstatus_names[st] ?
	       kgo_pstatus_names[st] : "?";
}

/* The counters of struct kgo_pstats, all but the latency histogram. */
#define KGO_PSTAT(field)	{ #field, offsetof(struct kgo_pstats, field) }
static const struct {
	const char *name;
	size_t off;
} kgo_pstat_fields[] = {
	KGO_PSTAT(gcreated),
	KGO_PSTAT(gstarted),
	KGO_PSTAT(gfinished),
	KGO_PSTAT(schedticks),
	KGO_PSTAT(runnext_hits),
	KGO_PSTAT(globrunq_takes),
	KGO_PSTAT(steal_attempts),
	KGO_PSTAT(steals),
	KGO_PSTAT(stolen),
	KGO_PSTAT(parks),
	KGO_PSTAT(parks_direct),
	KGO_PSTAT(readies),
	KGO_PSTAT(yields),
	KGO_PSTAT(yields_direct),
	KGO_PSTAT(mparks),
	KGO_PSTAT(mwakes),
	KGO_PSTAT(spinning),
	KGO_PSTAT(preempts),
	KGO_PSTAT(handoffs),
	KGO_PSTAT(hog_reliefs),
	KGO_PSTAT(fresh_kept),
	KGO_PSTAT(fresh_published),
	KGO_PSTAT(fresh_aged),
};

static u64 kgo_debugfs_pstat(const struct kgo_p *p, unsigned int i)
{
	const u64 *c = (const void *)&p->stats + kgo_pstat_fields[i].off;

	return READ_ONCE(*c);
}

/* An M's id, or -1 for none. */
static s64 kgo_debugfs_mid(const struct kgo_m *m)
{
	return m ? (s64)m->id : -1;
}

static int kgo_debugfs_sched_show(struct seq_file *s, void *unused)
{
	struct kgo_sched_snap snap;

	kgo_sched_snapshot(&snap);
	seq_printf(s, "gomaxprocs=%d idleprocs=%d threads=%u spinningthreads=%d idlethreads=%u runqueue=%u goroutines=%lld\n",
		   snap.nprocs, snap.npidle, snap.mcount, snap.nmspinning,
		   snap.nmidle, snap.runqsize, max_t(s64, snap.galive, 0));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kgo_debugfs_sched);

static int kgo_debugfs_procs_show(struct seq_file *s, void *unused)
{
	struct kgo_sched *sched = &kgo_sched;
	unsigned int f;
	int i;

	/* Every counter before the histogram is listed, or the build fails. */
	BUILD_BUG_ON(ARRAY_SIZE(kgo_pstat_fields) * sizeof(u64) !=
		     offsetof(struct kgo_pstats, latency));

	/* RCU keeps p->m's M alive (monitor.c frees Ms with kfree_rcu()). */
	rcu_read_lock();
	for (i = 0; i < sched->nprocs; i++) {
		struct kgo_p *p = sched->allp[i];
		struct kgo_g *next = READ_ONCE(p->runnext);

		seq_printf(s, "P%d: cpu=%d status=%s m=%lld schedtick=%u runqsize=%u runnext=%llu fresh=%u gfreecnt=%u",
			   p->id, p->cpu, kgo_debugfs_pstatus(READ_ONCE(p->status)),
			   kgo_debugfs_mid(READ_ONCE(p->m)), READ_ONCE(p->schedtick),
			   kgo_runq_ringlen(p), next ? READ_ONCE(next->goid) : 0,
			   kgo_fresh_len(p), READ_ONCE(p->ngfree));
		for (f = 0; f < ARRAY_SIZE(kgo_pstat_fields); f++)
			seq_printf(s, " %s=%llu", kgo_pstat_fields[f].name,
				   kgo_debugfs_pstat(p, f));
		seq_putc(s, '\n');
	}
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kgo_debugfs_procs);

static const char *const kgo_count_names[] = {
	[KGO_COUNT_SCHED_LOCK]	= "sched_lock",
	[KGO_COUNT_SHARED_RMW]	= "shared_rmw",
	[KGO_COUNT_XCPU_WAKE]	= "xcpu_wake",
};

/* Racy sums of per-CPU counters: a line may lag an event in flight. */
static int kgo_debugfs_counts_show(struct seq_file *s, void *unused)
{
	unsigned int e;
	int cpu;

	BUILD_BUG_ON(ARRAY_SIZE(kgo_count_names) != KGO_NR_COUNT_EVENTS);
	for (e = 0; e < KGO_NR_COUNT_EVENTS; e++)
		seq_printf(s, "%s%s=%llu", e ? " " : "", kgo_count_names[e],
			   kgo_count_sum(e));
	seq_putc(s, '\n');
	for_each_possible_cpu(cpu) {
		seq_printf(s, "CPU%d:", cpu);
		for (e = 0; e < KGO_NR_COUNT_EVENTS; e++)
			seq_printf(s, " %s=%llu", kgo_count_names[e],
				   READ_ONCE(per_cpu(kgo_pcpu_counts, cpu).ev[e]));
		seq_putc(s, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kgo_debugfs_counts);

/* allm under RCU: an M unlinked meanwhile is still readable. */
static int kgo_debugfs_ms_show(struct seq_file *s, void *unused)
{
	struct kgo_sched *sched = &kgo_sched;
	struct kgo_m *m;

	rcu_read_lock();
	list_for_each_entry_rcu(m, &sched->allm, all_node) {
		struct kgo_p *p = READ_ONCE(m->p);
		struct kgo_g *g = kgo_m_curg_remote(m);

		seq_printf(s, "M%llu: cpu=%d p=%d curg=%llu spinning=%d state=%c\n",
			   m->id, m->home->cpu, p ? p->id : -1,
			   g ? READ_ONCE(g->goid) : 0, READ_ONCE(m->spinning),
			   task_state_to_char(m->task));
	}
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kgo_debugfs_ms);

/*
 * allg can hold hundreds of thousands of G structs, so the goroutines
 * view is a seq_file iterator under RCU, from start to stop (one buffer
 * of output at a time, never across the copy to userspace). A G freed
 * and reused under us may be unlinked and linked again at the tail, or
 * zeroed by kmem_cache_zalloc() for a moment: a NULL or head link ends
 * the walk early, which a snapshot may do.
 */
static struct list_head *kgo_debugfs_allg_next(struct list_head *node)
{
	struct list_head *next = READ_ONCE(node->next);

	return next && next != &kgo_sched.allg ? next : NULL;
}

static void *kgo_debugfs_goroutines_start(struct seq_file *s, loff_t *pos)
	__acquires(RCU)
{
	struct list_head *node = &kgo_sched.allg;
	loff_t i;

	rcu_read_lock();
	for (i = 0; i <= *pos && node; i++)
		node = kgo_debugfs_allg_next(node);
	return node;
}

static void *kgo_debugfs_goroutines_next(struct seq_file *s, void *v, loff_t *pos)
{
	++*pos;
	return kgo_debugfs_allg_next(v);
}

static void kgo_debugfs_goroutines_stop(struct seq_file *s, void *v)
	__releases(RCU)
{
	rcu_read_unlock();
}

static int kgo_debugfs_goroutines_show(struct seq_file *s, void *v)
{
	struct kgo_g *g = list_entry(v, struct kgo_g, allg_node);
	enum kgo_waitreason why = KGO_WAIT_REASON_NONE;
	unsigned long now, since;
	struct kgo_m *m = NULL;
	const char *st;

	/* Acquire: pairs with kgo_execute() setting g->m before RUNNING. */
	switch (atomic_read_acquire(&g->status)) {
	case KGO_G_RUNNABLE:
		st = "runnable";
		break;
	case KGO_G_RUNNING:
		st = "running";
		/*
		 * The M it runs on, alive at least as long as the G runs
		 * there; the monitor frees stopped Ms with kfree_rcu(), and
		 * we are an RCU reader.
		 */
		m = READ_ONCE(g->m);
		/* Asleep in the kernel, its M with it (Go's _Gsyscall). */
		if (m && (READ_ONCE(m->insyscall) || READ_ONCE(m->blocking)))
			st = "syscall";
		break;
	case KGO_G_WAITING:
		st = "waiting";
		/* Only meaningful while waiting: left stale after. */
		why = READ_ONCE(g->waitreason);
		break;
	default:	/* IDLE or DEAD: not a goroutine right now */
		return 0;
	}
	/* In jiffies (gtime.h): whole ticks; clamped, as the G may move on. */
	since = READ_ONCE(g->since);
	now = jiffies;
	/* fn shares its word with a dead G's batch link: %ps shows any value. */
	seq_printf(s, "G%llu: status=%s waitreason=\"%s\" for_ns=%llu m=%lld fn=%ps\n",
		   READ_ONCE(g->goid), st, kgo_waitreason_str(why),
		   time_after(now, since) ? jiffies_to_nsecs(now - since) : 0,
		   kgo_debugfs_mid(m), READ_ONCE(g->fn));
	return 0;
}

static const struct seq_operations kgo_debugfs_goroutines_sops = {
	.start	= kgo_debugfs_goroutines_start,
	.next	= kgo_debugfs_goroutines_next,
	.stop	= kgo_debugfs_goroutines_stop,
	.show	= kgo_debugfs_goroutines_show,
};
DEFINE_SEQ_ATTRIBUTE(kgo_debugfs_goroutines);

/*
 * The stacks view. A switched-out G's stack has no task, so the
 * kernel's unwinder, which finds stacks through a task, cannot walk it.
 * We print what we can vouch for and mark the rest as the kernel's own
 * dumps do: the first frame is kgo_switch()'s return address, saved at
 * a known place above g->sp (kgo_stack_prepare() builds the same
 * frame); above it, every word that names kernel text is printed with
 * "? ", a possible caller, not a proven one.
 *
 * The G may be readied and run while we read: its words are then a
 * mix of old and new, which is why this is a snapshot. The memory stays
 * valid: we are an RCU reader and stacks are freed after a grace period
 * (stack.c). The words are read without KASAN's checks, as the
 * unwinder reads stacks, since a live frame's redzones are poisoned.
 */
#define KGO_DEBUGFS_SWITCH_WORDS 6	/* kgo_switch's pushes, then its RET */
#define KGO_DEBUGFS_MAX_FRAMES	 32	/* bounds one G's output */

static void kgo_debugfs_stack_show(struct seq_file *s, unsigned long sp,
				   unsigned long base)
{
	unsigned long top = base + THREAD_SIZE;
	unsigned long *w = (unsigned long *)sp + KGO_DEBUGFS_SWITCH_WORDS;
	char sym[KSYM_SYMBOL_LEN];
	int frames = 0;

	if (sp < base || (unsigned long)(w + 1) > top) {
		seq_puts(s, "  (stack pointer outside its stack: moved on)\n");
		return;
	}
	seq_printf(s, "  %pS\n", (void *)READ_ONCE_NOCHECK(*w));
	for (w++; (unsigned long)(w + 1) <= top; w++) {
		unsigned long word = READ_ONCE_NOCHECK(*w);

		/* Kernel and module text are in the top half. */
		if ((long)word >= 0)
			continue;
		sprint_symbol(sym, word);
		if (!strncmp(sym, "0x", 2))	/* no symbol: not text */
			continue;
		if (++frames > KGO_DEBUGFS_MAX_FRAMES) {
			seq_puts(s, "  ...\n");
			break;
		}
		seq_printf(s, "  ? %s\n", sym);
	}
}

static int kgo_debugfs_stacks_show(struct seq_file *s, void *v)
{
	struct kgo_g *g = list_entry(v, struct kgo_g, allg_node);
	unsigned long sp, base;
	int st;

	/* Acquire: pairs with the status store after the G switched out. */
	st = atomic_read_acquire(&g->status);
	if (st != KGO_G_WAITING && st != KGO_G_RUNNABLE)
		return 0;
	base = (unsigned long)READ_ONCE(g->stack);
	if (!base)		/* RUNNABLE, never ran: no stack yet */
		return 0;
	sp = READ_ONCE(g->sp);
	seq_printf(s, "G%llu: status=%s waitreason=\"%s\" fn=%ps\n",
		   READ_ONCE(g->goid), st == KGO_G_WAITING ? "waiting" : "runnable",
		   kgo_waitreason_str(st == KGO_G_WAITING ? READ_ONCE(g->waitreason)
							  : KGO_WAIT_REASON_NONE),
		   READ_ONCE(g->fn));
	kgo_debugfs_stack_show(s, sp, base);
	return 0;
}

static const struct seq_operations kgo_debugfs_stacks_sops = {
	.start	= kgo_debugfs_goroutines_start,
	.next	= kgo_debugfs_goroutines_next,
	.stop	= kgo_debugfs_goroutines_stop,
	.show	= kgo_debugfs_stacks_show,
};
DEFINE_SEQ_ATTRIBUTE(kgo_debugfs_stacks);

/**
 * kgo_debugfs_init() - create /sys/kernel/debug/kgo and its files
 *
 * Context: module init, after kgo_sched_init().
 * Return: 0, also when debugfs is not there: the views are optional.
 */
int kgo_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kgo", NULL);

	if (IS_ERR(dir)) {
		pr_debug("no debugfs views: %pe\n", dir);
		return 0;
	}
	/* Failures here only lose a file; debugfs wants them ignored. */
	debugfs_create_file("sched", 0444, dir, NULL, &kgo_debugfs_sched_fops);
	debugfs_create_file("procs", 0444, dir, NULL, &kgo_debugfs_procs_fops);
	debugfs_create_file("ms", 0444, dir, NULL, &kgo_debugfs_ms_fops);
	debugfs_create_file("goroutines", 0444, dir, NULL,
			    &kgo_debugfs_goroutines_fops);
	/* Root only: return addresses are kernel pointers, as in /proc/PID/stack. */
	debugfs_create_file("stacks", 0400, dir, NULL, &kgo_debugfs_stacks_fops);
	debugfs_create_file("counts", 0444, dir, NULL, &kgo_debugfs_counts_fops);
	kgo_debugfs_root = dir;
	return 0;
}

/**
 * kgo_debugfs_exit() - remove what kgo_debugfs_init() created
 *
 * Waits for reads in flight; a file still open afterwards reads as
 * -EIO. Context: module exit, before kgo_sched_exit() frees the Ms and
 * Ps these files look at.
 */
void kgo_debugfs_exit(void)
{
	debugfs_remove(kgo_debugfs_root);
	kgo_debugfs_root = NULL;
}
