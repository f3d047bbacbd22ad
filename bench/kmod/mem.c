// SPDX-License-Identifier: GPL-2.0
/*
 * What goroutines cost in memory, in bytes each: what the slab and
 * vmalloc (the stacks) grow by while they exist.
 *
 *   mem_queued  goroutines spawned but not started. A filler goroutine
 *               spawns them on the one P left to it (pin.c) and never
 *               switches until it is done: nothing runs them meanwhile.
 *               A queued goroutine is its struct alone: the stack comes
 *               at its first run.
 *   mem_parked  goroutines blocked in a channel receive: struct, stack
 *               (THREAD_SIZE), and its vmalloc area.
 *   max_queued  how many goroutines the filler can queue before
 *               kgo_go() fails for memory, allocating with
 *               __GFP_NORETRY so that the failure comes before the OOM
 *               killer would. kgo keeps their structs on its free lists
 *               until it is unloaded, leaving the system next to no
 *               memory: it runs only when asked for by name (main.c),
 *               and kgo.ko should be unloaded right after it.
 *
 * kgo reuses the structs of dead goroutines, and frees none until it is
 * unloaded: goroutines spawned while its free lists last cost no new
 * memory. mem_queued drains them first, spawning until a chunk of
 * goroutines grows the slab, and then measures a batch of new ones.
 * mem_parked's structs may come off the free lists: its figure is the
 * stack's, and the struct's when it is new (a hundredth of it).
 *
 * The slab counter is the global vmstat one, which lags the per-CPU
 * truth by a few pages per CPU: the batches are large enough for that
 * not to matter. vmalloc's page count is only shown in /proc/meminfo
 * (vmalloc_nr_pages() is not exported), so that is where it is read.
 * The drop in free pages would count everything at once, but pages
 * move between the free lists and the per-CPU lists, which it does not
 * count, by megabytes at a time: it goes along as free_bytes, and only
 * stands in for the value if /proc/meminfo cannot be read.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>

#include "bench.h"

#define MEM_RESCHED_EVERY	256
/*
 * Draining kgo's free lists: a chunk that grows the slab by this much
 * per goroutine (less than a struct kgo_g, more than the counter's lag)
 * was mostly new structs, so the lists are empty.
 */
#define MEM_DRAIN_CHUNK		4096
#define MEM_DRAIN_FRESH_BYTES	64
#define MEM_DRAIN_MAX		2000000
/* How long the parked goroutines may take to get there. */
#define MEM_PARK_TIMEOUT_MS	30000
/*
 * max_queued holds this much back while it fills memory, and gives it
 * back as soon as kgo_go() fails: what the system needs before the
 * queued goroutines are gone again (their first stacks among it) must
 * not find memory at its very end.
 */
#define MEM_RESERVE_BYTES	(32UL << 20)
/* max_queued gives up after this long, however much memory is left. */
#define MEM_FILL_SECONDS	120

/* --- Measuring ------------------------------------------------------ */

struct mem_snap {
	long free;	/* bytes */
	long slab;	/* bytes */
	long vmalloc;	/* bytes, or -1 if unknown */
};

/* VmallocUsed of /proc/meminfo in bytes, or -1. Context: process. */
static long mem_vmalloc_bytes(void)
{
	struct file *f;
	loff_t pos = 0;
	long kb = -1;
	ssize_t len;
	char *buf, *p;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -1;
	f = filp_open("/proc/meminfo", O_RDONLY, 0);
	if (!IS_ERR(f)) {
		len = kernel_read(f, buf, PAGE_SIZE - 1, &pos);
		filp_close(f, NULL);
		if (len > 0) {
			buf[len] = '\0';
			p = strstr(buf, "\nVmallocUsed:");
			if (!p || sscanf(p, " VmallocUsed: %ld", &kb) != 1)
				kb = -1;
		}
	}
	kfree(buf);
	return kb < 0 ? -1 : kb * 1024;
}

/*
 * @vmalloc: read /proc/meminfo too, which may sleep; a filler goroutine
 * must not (its P could be handed to another M, which would run what it
 * queued: kmod/block.c).
 */
static void mem_snap(struct mem_snap *s, bool vmalloc)
{
	s->free = global_zone_page_state(NR_FREE_PAGES) * PAGE_SIZE;
	s->slab = (global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B) +
		   global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B)) * PAGE_SIZE;
	s->vmalloc = vmalloc ? mem_vmalloc_bytes() : -1;
}

/* Prints bytes per goroutine, from the change between two snapshots. */
static void mem_report(const char *metric, const struct mem_snap *before,
		       const struct mem_snap *after, u64 n, bool vmalloc)
{
	long free = before->free - after->free;
	long slab = after->slab - before->slab;
	long vm = after->vmalloc - before->vmalloc;
	bool known = before->vmalloc >= 0 && after->vmalloc >= 0;
	long used = slab + (known ? vm : 0);

	if (vmalloc && !known)
		used = free;
	if (used <= 0) {	/* others gave back more than we took */
		kgo_bench_report_missing(metric, "kgo", "bytes",
					 "others freed more than the goroutines took",
					 "\"iters\":%llu,\"delta_bytes\":%ld", n, used);
		return;
	}
	kgo_bench_report(metric, "kgo", "bytes", used, n,
			 "\"iters\":%llu,\"slab_bytes\":%lld,\"vmalloc_bytes\":%lld,\"free_bytes\":%lld,\"via\":\"%s\"",
			 n, div64_s64(slab, n), known ? div64_s64(vm, n) : -1,
			 div64_s64(free, n),
			 !vmalloc ? "slab" : known ? "slab+vmalloc" : "free_pages");
}

/* --- Spawning ------------------------------------------------------- */

/* The goroutines of one workload count down; the last completes. */
struct mem_run {
	atomic_t left;
	struct completion done;
};

/* The caller holds one count, dropped with mem_run_done() when done. */
static void mem_run_init(struct mem_run *m)
{
	atomic_set(&m->left, 1);
	init_completion(&m->done);
}

static void mem_run_done(struct mem_run *m)
{
	if (atomic_dec_and_test(&m->left))
		complete(&m->done);
}

/* What the queued goroutines run, once they are let go. */
static void mem_nop(void *arg)
{
	mem_run_done(arg);
}

/*
 * Spawns up to @n goroutines of @fn, each counted in @m, with @gfp.
 * Returns how many; *@err is the error that stopped it, or 0.
 */
static u64 mem_spawn(struct mem_run *m, kgo_func_t fn, void *arg, u64 n,
		     gfp_t gfp, s64 *err)
{
	s64 ret;
	u64 i;

	*err = 0;
	for (i = 0; i < n; i++) {
		atomic_inc(&m->left);
		ret = kgo_go(fn, arg, gfp);
		if (ret < 0) {
			*err = ret;
			mem_run_done(m);
			break;
		}
		if (!(i % MEM_RESCHED_EVERY))
			cond_resched();
	}
	return i;
}

/*
 * A filler: a goroutine that spawns without switching, alone on its P.
 * What it queues stays queued until it returns. Context for @fill:
 * a goroutine that must not sleep.
 */
struct mem_filler {
	struct mem_run m;
	void (*fill)(struct mem_filler *f);
	struct completion filled;	/* fill() returned */
	s64 err;

	/* mem_queued */
	u64 n;
	u64 drained;
	struct mem_snap before, after;

	/* max_queued */
	void *reserve;
	u64 queued;
	u64 fill_ns;
	bool timed_out;
};

static void mem_filler_fn(void *arg)
{
	struct mem_filler *f = arg;

	f->fill(f);
	complete(&f->filled);
	/* Now its P runs what it queued, and the others once unpinned. */
	mem_run_done(&f->m);
}

/*
 * Runs @f->fill on the one P left, then gives all Ps back to run what it
 * queued, and waits for all that.
 */
static int mem_filler_run(struct mem_filler *f)
{
	struct kgo_bench_pin pin;
	s64 ret;

	ret = kgo_bench_pin_start(&pin);
	if (ret)
		return ret;
	mem_run_init(&f->m);
	init_completion(&f->filled);
	atomic_inc(&f->m.left);		/* the filler's own */
	ret = kgo_go(mem_filler_fn, f, GFP_KERNEL);
	if (ret < 0) {
		mem_run_done(&f->m);
		complete(&f->filled);
	}
	kgo_bench_wait(&f->filled);
	kgo_bench_pin_stop(&pin);
	mem_run_done(&f->m);
	kgo_bench_wait(&f->m.done);
	return ret < 0 ? ret : 0;
}

/* --- mem_queued ----------------------------------------------------- */

static void mem_queued_fill(struct mem_filler *f)
{
	struct mem_snap a, b;

	/* Until a chunk is mostly new structs: the free lists are empty. */
	for (;;) {
		mem_snap(&a, false);
		f->drained += mem_spawn(&f->m, mem_nop, &f->m, MEM_DRAIN_CHUNK,
					GFP_KERNEL, &f->err);
		mem_snap(&b, false);
		if (f->err)
			return;
		if (b.slab - a.slab >= MEM_DRAIN_CHUNK * MEM_DRAIN_FRESH_BYTES)
			break;
		if (f->drained >= MEM_DRAIN_MAX) {
			f->err = -E2BIG;
			return;
		}
	}
	mem_snap(&f->before, false);
	mem_spawn(&f->m, mem_nop, &f->m, f->n, GFP_KERNEL, &f->err);
	mem_snap(&f->after, false);
}

static void mem_queued(const struct kgo_bench_cfg *cfg)
{
	struct mem_filler *f = kzalloc(sizeof(*f), GFP_KERNEL);
	int ret;

	if (!f) {
		kgo_bench_report_error("mem_queued", "kgo", -ENOMEM);
		return;
	}
	f->fill = mem_queued_fill;
	f->n = kgo_bench_size(cfg, 50000, 10000);
	ret = mem_filler_run(f);
	if (!ret)
		ret = f->err;
	if (ret)
		kgo_bench_report_error("mem_queued", "kgo", ret);
	else
		mem_report("mem_queued", &f->before, &f->after, f->n, false);
	kfree(f);
}

/* --- mem_parked ----------------------------------------------------- */

struct mem_parked {
	struct mem_run m;
	struct kgo_chan *c;
	atomic_t parked;	/* about to park */
};

static void mem_parked_fn(void *arg)
{
	struct mem_parked *mp = arg;
	bool ok;
	u64 v;

	atomic_inc(&mp->parked);
	kgo_chan_recv(mp->c, &v, &ok, KGO_FOREVER);	/* until closed */
	mem_run_done(&mp->m);
}

static void mem_parked(const struct kgo_bench_cfg *cfg)
{
	u64 n = kgo_bench_size(cfg, 10000, 1000);
	struct mem_snap before, after;
	unsigned long deadline;
	struct mem_parked mp;
	s64 err;

	mem_run_init(&mp.m);
	atomic_set(&mp.parked, 0);
	mp.c = kgo_chan_create(sizeof(u64), 0, GFP_KERNEL);
	if (IS_ERR(mp.c)) {
		kgo_bench_report_error("mem_parked", "kgo", PTR_ERR(mp.c));
		return;
	}
	mem_snap(&before, true);
	n = mem_spawn(&mp.m, mem_parked_fn, &mp, n, GFP_KERNEL, &err);
	deadline = jiffies + msecs_to_jiffies(MEM_PARK_TIMEOUT_MS);
	while (atomic_read(&mp.parked) < n && time_before(jiffies, deadline))
		usleep_range(1000, 2000);
	/* The last of them count themselves a moment before they park. */
	msleep(20);
	mem_snap(&after, true);
	if (atomic_read(&mp.parked) < n)
		err = -ETIMEDOUT;

	kgo_chan_close(mp.c);
	mem_run_done(&mp.m);
	kgo_bench_wait(&mp.m.done);
	kgo_chan_destroy(mp.c);
	if (err)
		kgo_bench_report_error("mem_parked", "kgo", err);
	else
		mem_report("mem_parked", &before, &after, n, true);
}

/*
 * Gives back what mem_parked left cached: its goroutines' stacks, which
 * kgo's pool would otherwise free over the next seconds (stack.c's
 * decay), a chunk a tick, inside whichever workload runs then. The
 * shrinkers of drop_caches (2: slab objects) free the pool and the Ps'
 * caches at once; the RCU barrier waits for the frees they defer. The
 * workloads after this one start as if it had not run.
 */
static void mem_give_back(void)
{
	static const char two[] = "2";
	struct file *f;
	loff_t pos = 0;
	ssize_t ret;

	f = filp_open("/proc/sys/vm/drop_caches", O_WRONLY, 0);
	if (IS_ERR(f)) {
		pr_warn("drop_caches: %ld: later workloads pay for the pool's decay\n",
			PTR_ERR(f));
		return;
	}
	ret = kernel_write(f, two, sizeof(two) - 1, &pos);
	filp_close(f, NULL);
	if (ret < 0)
		pr_warn("drop_caches: %zd: later workloads pay for the pool's decay\n",
			ret);
	rcu_barrier();
}

void kgo_bench_mem(const struct kgo_bench_cfg *cfg)
{
	mem_queued(cfg);
	mem_parked(cfg);
	mem_give_back();
}

/* --- max_queued ----------------------------------------------------- */

/* Queues goroutines until memory runs out, or time does. */
static void mem_max_fill(struct mem_filler *f)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN;
	u64 t0 = ktime_get_ns();
	u64 end = t0 + MEM_FILL_SECONDS * NSEC_PER_SEC;

	while (!f->err) {
		f->queued += mem_spawn(&f->m, mem_nop, &f->m, MEM_DRAIN_CHUNK,
				       gfp, &f->err);
		if (!f->err && ktime_get_ns() > end) {
			f->timed_out = true;
			break;
		}
	}
	f->fill_ns = ktime_get_ns() - t0;
	if (f->err == -ENOMEM)
		f->err = 0;
	/* Memory for what runs next, the queued goroutines' stacks first. */
	vfree(f->reserve);
}

void kgo_bench_max_queued(const struct kgo_bench_cfg *cfg)
{
	struct mem_filler *f = kzalloc(sizeof(*f), GFP_KERNEL);
	int ret = -ENOMEM;

	if (f)
		f->reserve = vmalloc(MEM_RESERVE_BYTES);
	if (f && f->reserve) {
		f->fill = mem_max_fill;
		ret = mem_filler_run(f);
		if (ret)
			vfree(f->reserve);	/* the filler never ran */
		else
			ret = f->err;
	}
	if (ret)
		kgo_bench_report_error("max_queued", "kgo", ret);
	else
		kgo_bench_report("max_queued", "kgo", "goroutines", f->queued, 1,
				 "\"iters\":%llu,\"reserve_bytes\":%lu,\"fill_ms\":%llu,\"complete\":%s",
				 f->queued, MEM_RESERVE_BYTES,
				 f->fill_ns / NSEC_PER_MSEC,
				 f->timed_out ? "false" : "true");
	if (f && !ret)
		pr_info("max_queued: kgo keeps the structs of %llu goroutines until it is unloaded\n",
			f->queued);
	kfree(f);
}
