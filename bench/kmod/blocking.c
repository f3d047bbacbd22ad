// SPDX-License-Identifier: GPL-2.0
/*
 * "blocking": n tasks that each block, the work that goroutines exist to
 * make cheap, against what a kernel engineer would use instead. Two
 * kinds of blocking:
 *
 *   sleep   each task sleeps 1 ms (an hrtimer sleep on every side:
 *           kgo_sleep(), usleep_range(1000, 1000))
 *   event   tasks come in pairs: the first waits for an event that the
 *           second signals (a channel of one for kgo, a completion for
 *           the others), so every other task blocks until its partner
 *           runs
 *
 * and four ways to run the n tasks, each started from this thread, in
 * the order queued:
 *
 *   kgo         kgo_go() per task; a blocked goroutine parks, its M runs
 *               others
 *   system_wq   queue_work() on the system workqueue, which adds
 *               workers as items sleep, up to its max_active per CPU
 *   unbound_wq  queue_work() on an unbound alloc_workqueue() of default
 *               max_active
 *   kthread     kthread_run() per task
 *
 * For each, four rows, metric blk_<kind>_n<n>[_what]:
 *
 *   (none)     tasks/s: n over the time from the first start to the
 *              last end
 *   _p99       ns: the 99th percentile (nearest rank) of a task's time
 *              from its start (the call that queues it) to its end; the
 *              block itself is 1 ms of it for sleep
 *   _threads   threads: the most threads of the kind the impl makes
 *              (kgo's Ms, workqueue workers, the kthreads) that were
 *              alive during the run, less those alive before it: what
 *              it created to carry the blocked tasks
 *   _mem       B/task: the most memory in use (free pages fell by) during
 *              the run, less before, over n; missing when it did not
 *              grow (kgo's stack pool or the slab held what the run
 *              needed from an earlier run, or others freed more)
 *
 * Each task's struct (and its event) is allocated and initialised
 * before the clock starts, for every impl alike; what starts the task
 * (the G, the work item's queueing, the kthread) is inside it.
 *
 * The sizes are 100 and 10,000 tasks (smoke: 10 and 100). 100,000 is
 * not run: a kthread per task, or a worker per sleeping work item, is
 * a 16 KiB stack each, 1.6 GiB of the 2 GiB test VM, and so is a parked
 * goroutine's; the row says so, as missing.
 *
 * The threads and memory are sampled every 10 ms while the run lasts,
 * while the tasks are started as well as after (a kthread that sleeps
 * 1 ms may have exited before the last one is started); the peak may
 * fall between two samples, so both are lower bounds.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>

#include "bench.h"

#define BLK_SLEEP_NS		NSEC_PER_MSEC
#define BLK_SAMPLE_MS		10

enum blk_kind { BLK_SLEEP, BLK_EVENT };
enum blk_impl { BLK_KGO, BLK_SYSTEM_WQ, BLK_UNBOUND_WQ, BLK_KTHREAD, BLK_NR_IMPLS };

static const char *const blk_impl_names[BLK_NR_IMPLS] = {
	[BLK_KGO] = "kgo",
	[BLK_SYSTEM_WQ] = "system_wq",
	[BLK_UNBOUND_WQ] = "unbound_wq",
	[BLK_KTHREAD] = "kthread",
};

struct blk_task;

/* One run: its tasks, and the count of those not yet ended. */
struct blk_run {
	enum blk_kind kind;
	enum blk_impl impl;
	struct blk_task *tasks;
	u64 n;
	atomic_t left;
	struct completion done;
};

/*
 * One task. Task 2i of an event run waits on its own event, which task
 * 2i + 1 signals: the waiter's chan or done (the others' completion).
 */
struct blk_task {
	struct blk_run *run;
	u64 index;
	u64 t_start;		/* when the call that starts it began */
	u64 t_end;		/* when it ended */
	struct work_struct work;
	struct kgo_chan *chan;	/* kgo's event (waiters only) */
	struct completion event;	/* the others' event (waiters only) */
};

static void blk_block(struct blk_task *t)
{
	struct blk_run *run = t->run;
	bool kgo = run->impl == BLK_KGO;
	struct blk_task *partner;
	u8 token = 1;
	bool ok;

	if (run->kind == BLK_SLEEP) {
		if (kgo)
			kgo_sleep(BLK_SLEEP_NS);
		else
			usleep_range(BLK_SLEEP_NS / NSEC_PER_USEC, BLK_SLEEP_NS / NSEC_PER_USEC);
		return;
	}
	if (!(t->index & 1)) {	/* a waiter */
		if (kgo)
			kgo_chan_recv(t->chan, &token, &ok, KGO_FOREVER);
		else
			wait_for_completion(&t->event);
		return;
	}
	partner = &run->tasks[t->index - 1];
	if (kgo)
		kgo_chan_send(partner->chan, &token, KGO_FOREVER);
	else
		complete(&partner->event);
}

static void blk_task_body(struct blk_task *t)
{
	blk_block(t);
	t->t_end = ktime_get_ns();
	if (atomic_dec_and_test(&t->run->left))
		complete(&t->run->done);
}

static void blk_kgo_fn(void *arg)
{
	blk_task_body(arg);
}

static void blk_work_fn(struct work_struct *work)
{
	blk_task_body(container_of(work, struct blk_task, work));
}

static int blk_kthread_fn(void *arg)
{
	blk_task_body(arg);
	return 0;
}

/* Whether @p is a thread that @impl makes to run its tasks. */
static bool blk_thread_of(const struct task_struct *p, enum blk_impl impl)
{
	switch (impl) {
	case BLK_KGO:
		/* kgo's Ms: "kgo/CPU:ID" (kmod/m.c); not kgo/monitor. */
		return !strncmp(p->comm, "kgo/", 4) && p->comm[4] >= '0' && p->comm[4] <= '9';
	case BLK_SYSTEM_WQ:
	case BLK_UNBOUND_WQ:
		return p->flags & PF_WQ_WORKER;
	case BLK_KTHREAD:
		return !strncmp(p->comm, "kgo_bench_blk", 13);
	default:
		return false;
	}
}

static unsigned long blk_count_threads(enum blk_impl impl)
{
	struct task_struct *g, *p;
	unsigned long n = 0;

	rcu_read_lock();
	for_each_process_thread(g, p)
		if (blk_thread_of(p, impl))
			n++;
	rcu_read_unlock();
	return n;
}

static s64 blk_mem_used(void)
{
	return -(s64)global_zone_page_state(NR_FREE_PAGES) * PAGE_SIZE;
}

/* The peaks of a run, sampled at most every BLK_SAMPLE_MS. */
struct blk_peak {
	enum blk_impl impl;
	unsigned long threads;
	s64 mem;
	u64 next;		/* ktime of the next sample */
};

static void blk_sample(struct blk_peak *pk, bool force)
{
	u64 now = ktime_get_ns();

	if (!force && now < pk->next)
		return;
	pk->next = now + BLK_SAMPLE_MS * NSEC_PER_MSEC;
	pk->threads = max(pk->threads, blk_count_threads(pk->impl));
	pk->mem = max(pk->mem, blk_mem_used());
}

static int blk_start(struct blk_task *t, struct workqueue_struct *unbound)
{
	struct task_struct *k;
	s64 id;

	t->t_start = ktime_get_ns();
	switch (t->run->impl) {
	case BLK_KGO:
		id = kgo_go(blk_kgo_fn, t, GFP_KERNEL);
		return id < 0 ? id : 0;
	case BLK_SYSTEM_WQ:
		INIT_WORK(&t->work, blk_work_fn);
		queue_work(system_wq, &t->work);
		return 0;
	case BLK_UNBOUND_WQ:
		INIT_WORK(&t->work, blk_work_fn);
		queue_work(unbound, &t->work);
		return 0;
	case BLK_KTHREAD:
		k = kthread_run(blk_kthread_fn, t, "kgo_bench_blk");
		return IS_ERR(k) ? PTR_ERR(k) : 0;
	default:
		return -EINVAL;
	}
}

static int blk_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* One run of @n tasks; reports its four rows. */
static void blk_run_one(const char *metric, enum blk_kind kind, enum blk_impl impl,
			u64 n, struct workqueue_struct *unbound)
{
	const char *name = blk_impl_names[impl];
	struct blk_peak peak = { .impl = impl };
	unsigned long threads0;
	struct blk_run *run;
	u64 i, t0, t1, *lat = NULL;
	s64 mem0;
	char row[48];
	int ret = 0;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		goto nomem;
	run->tasks = kvcalloc(n, sizeof(*run->tasks), GFP_KERNEL);
	lat = kvcalloc(n, sizeof(*lat), GFP_KERNEL);
	if (!run->tasks || !lat)
		goto nomem;
	run->kind = kind;
	run->impl = impl;
	run->n = n;
	atomic_set(&run->left, n);
	init_completion(&run->done);
	for (i = 0; i < n; i++) {
		struct blk_task *t = &run->tasks[i];

		t->run = run;
		t->index = i;
		init_completion(&t->event);
		if (kind == BLK_EVENT && impl == BLK_KGO && !(i & 1)) {
			t->chan = kgo_chan_create(1, 1, GFP_KERNEL);
			if (!t->chan)
				goto nomem;
		}
	}

	threads0 = blk_count_threads(impl);
	mem0 = blk_mem_used();
	peak.threads = threads0;
	peak.mem = mem0;
	peak.next = ktime_get_ns() + BLK_SAMPLE_MS * NSEC_PER_MSEC;
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		ret = blk_start(&run->tasks[i], unbound);
		if (ret) {
			/* Those not started never end: count them down. */
			if (atomic_sub_and_test(n - i, &run->left))
				complete(&run->done);
			break;
		}
		/* Short-lived tasks (a kthread's) peak while they start. */
		blk_sample(&peak, false);
		if (!(i % 256))
			cond_resched();
	}
	blk_sample(&peak, true);
	/* An event waiter whose signaller never started waits for ever. */
	if (ret && kind == BLK_EVENT && (i & 1)) {
		if (impl == BLK_KGO)
			kgo_chan_send(run->tasks[i - 1].chan, &(u8){ 1 }, KGO_FOREVER);
		else
			complete(&run->tasks[i - 1].event);
	}
	while (!wait_for_completion_timeout(&run->done, msecs_to_jiffies(BLK_SAMPLE_MS)))
		blk_sample(&peak, false);
	t1 = 0;
	for (i = 0; i < n && !ret; i++) {
		t1 = max(t1, run->tasks[i].t_end);
		lat[i] = run->tasks[i].t_end - run->tasks[i].t_start;
	}
	/* The items' functions have ended; their workers may be returning. */
	if (impl == BLK_SYSTEM_WQ || impl == BLK_UNBOUND_WQ)
		for (i = 0; i < n && run->tasks[i].t_start; i++)
			flush_work(&run->tasks[i].work);
	if (ret) {
		kgo_bench_report_error(metric, name, ret);
		goto out;
	}

	kgo_bench_report(metric, name, "tasks/s", n * NSEC_PER_SEC, max(t1 - t0, 1ULL),
			 "\"n\":%llu,\"ns\":%llu", n, t1 - t0);
	sort(lat, n, sizeof(*lat), blk_cmp_u64, NULL);
	snprintf(row, sizeof(row), "%s_p99", metric);
	kgo_bench_report(row, name, "ns", lat[(n * 99 + 99) / 100 - 1], 1,
			 "\"n\":%llu,\"max\":%llu", n, lat[n - 1]);
	snprintf(row, sizeof(row), "%s_threads", metric);
	kgo_bench_report(row, name, "threads", peak.threads - threads0, 1,
			 "\"n\":%llu,\"before\":%lu", n, threads0);
	snprintf(row, sizeof(row), "%s_mem", metric);
	if (peak.mem > mem0)
		kgo_bench_report(row, name, "B/task", peak.mem - mem0, n,
				 "\"n\":%llu,\"peak_bytes\":%lld", n, peak.mem - mem0);
	else
		kgo_bench_report_missing(row, name, "B/task",
					 "free pages did not fall: memory came from pools filled before, or others freed more",
					 "\"n\":%llu", n);
	goto out;
nomem:
	kgo_bench_report_error(metric, name, -ENOMEM);
out:
	if (run && run->tasks)
		for (i = 0; i < n; i++)
			if (run->tasks[i].chan)
				kgo_chan_destroy(run->tasks[i].chan);
	if (run)
		kvfree(run->tasks);
	kvfree(lat);
	kfree(run);
}

void kgo_bench_blocking(const struct kgo_bench_cfg *cfg)
{
	static const char *const kinds[] = { [BLK_SLEEP] = "sleep", [BLK_EVENT] = "event" };
	const u64 full[] = { 100, 10000 }, smoke[] = { 10, 100 };
	struct workqueue_struct *unbound;
	char metric[32];
	int k, s, i;

	unbound = alloc_workqueue("kgo_bench_unbound", WQ_UNBOUND, 0);
	if (!unbound) {
		kgo_bench_report_error("blk_sleep", "unbound_wq", -ENOMEM);
		return;
	}
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		for (s = 0; s < ARRAY_SIZE(full); s++) {
			u64 n = cfg->smoke ? smoke[s] : full[s] * cfg->scale;

			snprintf(metric, sizeof(metric), "blk_%s_n%llu", kinds[k], n);
			for (i = 0; i < BLK_NR_IMPLS; i++)
				if (kgo_bench_impl_wanted(blk_impl_names[i]))
					blk_run_one(metric, k, i, n, unbound);
		}
		if (!cfg->smoke) {
			snprintf(metric, sizeof(metric), "blk_%s_n100000", kinds[k]);
			for (i = 0; i < BLK_NR_IMPLS; i++)
				kgo_bench_report_missing(metric, blk_impl_names[i], "tasks/s",
							 "not run: 100,000 blocked tasks need 1.6 GiB of stacks, of a 2 GiB VM",
							 "\"n\":100000");
		}
	}
	destroy_workqueue(unbound);
}
