// SPDX-License-Identifier: GPL-2.0
/*
 * Start, run and finish n empty tasks, and wait for all of them; ns per
 * task. The tasks count themselves down on one atomic and the last
 * completes the waiter, the same for every implementation. Two rows,
 * each like for like:
 *
 * "spawn", from a goroutine, as a Go program spawns (bench/go's row):
 *
 *   kgo             kgo_go() from a goroutine (runnext, the P's ring,
 *                   overflow to the global queue)
 *
 * "spawn_ext", from a thread, as a driver hands work off:
 *
 *   kgo             kgo_go() from a thread: each G goes, under
 *                   sched.lock, to an idle P if there is one, else to
 *                   the global queue
 *   workqueue       queue_work() on a bound workqueue: the spawner's CPU
 *   kthread         kthread_create() + wake_up_process() per task, on a
 *                   thousandth of n: each costs a fork by kthreadd, some
 *                   milliseconds under emulation
 *   kthread_worker  kthread_queue_work() to the worker of the spawner's
 *                   CPU, one worker per CPU
 *
 * Each task's item is allocated inside the timed loop and freed by the
 * task, as kgo_go() makes its G there: a caller that hands off work has
 * a request to put it in, made when the work arises. And the peers
 * queue where the spawner runs, which is what queue_work() does, rather
 * than round the CPUs, which would charge each item a cross-CPU wake-up
 * that kgo's spawns from a thread, readied onto idle Ps, pay only per
 * idle P.
 */

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "bench.h"

/* Let other threads of this CPU run every so often in a long loop. */
#define SPAWN_RESCHED_EVERY	256

/*
 * The run in progress, one at a time. The spawner holds one count of
 * its own until it knows how many it spawned, so the waiter cannot wake
 * before that: left starts at n + 1.
 */
static struct {
	atomic_t left;
	struct completion done;
	u64 deadline;		/* stop spawning after this (ktime ns) */
} spawn_run;

static void spawn_run_start(u64 n, u64 budget)
{
	atomic_set(&spawn_run.left, n + 1);
	reinit_completion(&spawn_run.done);
	spawn_run.deadline = ktime_get_ns() + budget;
}

/* @k tasks are done (or will never start). */
static void spawn_count(int k)
{
	if (atomic_sub_and_test(k, &spawn_run.left))
		complete(&spawn_run.done);
}

/*
 * Whether the spawner is to stop before task @i of @n: at the deadline;
 * it lets other threads of its CPU run meanwhile.
 */
static bool spawn_stop(u64 i)
{
	if (i % SPAWN_RESCHED_EVERY)
		return false;
	cond_resched();
	return i && ktime_get_ns() > spawn_run.deadline;
}

/* The spawner spawned @k of @n: drops its own count and the rest. */
static void spawn_run_end(u64 k, u64 n)
{
	spawn_count(1 + n - k);
}

/* Waits for the run; returns ns since @t0. */
static u64 spawn_run_wait(u64 t0)
{
	kgo_bench_wait(&spawn_run.done);
	return ktime_get_ns() - t0;
}

/* --- kgo ----------------------------------------------------------- */

static void spawn_nop(void *arg)
{
	spawn_count(1);
}

struct spawn_kgo_arg {
	u64 n;
	u64 done;	/* spawned */
	int err;
};

static void spawn_kgo_spawner(void *arg)
{
	struct spawn_kgo_arg *a = arg;
	u64 i;
	s64 ret;

	for (i = 0; i < a->n && !spawn_stop(i); i++) {
		ret = kgo_go(spawn_nop, NULL, GFP_KERNEL);
		if (ret < 0) {
			a->err = ret;
			break;
		}
	}
	a->done = i;
	spawn_run_end(i, a->n);	/* *a may be gone after this */
}

static int spawn_kgo(u64 n, u64 *done, u64 *ns)
{
	struct spawn_kgo_arg a = { .n = n };
	u64 t0;
	s64 ret;

	t0 = ktime_get_ns();
	ret = kgo_go(spawn_kgo_spawner, &a, GFP_KERNEL);
	if (ret < 0)
		return ret;
	*ns = spawn_run_wait(t0);
	*done = a.done;
	return a.err;
}

static int spawn_kgo_ext(u64 n, u64 *done, u64 *ns)
{
	int err = 0;
	u64 i, t0;
	s64 ret;

	t0 = ktime_get_ns();
	for (i = 0; i < n && !spawn_stop(i); i++) {
		ret = kgo_go(spawn_nop, NULL, GFP_KERNEL);
		if (ret < 0) {
			err = ret;
			break;
		}
	}
	spawn_run_end(i, n);
	*ns = spawn_run_wait(t0);
	*done = i;
	return err;
}

/* --- workqueue ----------------------------------------------------- */

static void spawn_work_fn(struct work_struct *work)
{
	/* The workqueue lets an item's function free it. */
	kfree(work);
	spawn_count(1);
}

static int spawn_workqueue(u64 n, u64 *done, u64 *ns)
{
	struct workqueue_struct *wq;
	struct work_struct *work;
	int err = 0;
	u64 i, t0;

	/*
	 * A per-CPU (bound) workqueue with default flags: what the workqueue
	 * documentation recommends for items that do not hog the CPU, and
	 * the same worker pools as system_wq. Not WQ_HIGHPRI: its workers
	 * run at nice -20, while kgo's Ms run at nice 0. Not WQ_UNBOUND:
	 * kgo's Ms are bound too. A queue of our own rather than system_wq
	 * only so that destroying it waits for our items alone.
	 */
#ifdef KGO_BENCH_WQ_PERCPU
	wq = alloc_workqueue("kgo_bench", WQ_PERCPU, 0);
#else
	wq = alloc_workqueue("kgo_bench", 0, 0);
#endif
	if (!wq)
		return -ENOMEM;

	t0 = ktime_get_ns();
	for (i = 0; i < n && !spawn_stop(i); i++) {
		work = kmalloc(sizeof(*work), GFP_KERNEL);
		if (!work) {
			err = -ENOMEM;
			break;
		}
		INIT_WORK(work, spawn_work_fn);
		queue_work(wq, work);
	}
	spawn_run_end(i, n);
	*ns = spawn_run_wait(t0);
	*done = i;

	destroy_workqueue(wq);
	return err;
}

/* --- kthread ------------------------------------------------------- */

static int spawn_kthread_fn(void *arg)
{
	spawn_count(1);
	return 0;
}

static int spawn_kthread(u64 n, u64 *done, u64 *ns)
{
	struct task_struct **tasks, *t;
	int err = 0;
	u64 i, k, t0;

	tasks = kvmalloc_array(n, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		return -ENOMEM;

	t0 = ktime_get_ns();
	for (k = 0; k < n && !spawn_stop(k); k++) {
		t = kthread_create(spawn_kthread_fn, NULL, "kgo_bench_kt");
		if (IS_ERR(t)) {
			err = PTR_ERR(t);
			break;
		}
		/* Held for kthread_stop(), below, once the thread has exited. */
		get_task_struct(t);
		tasks[k] = t;
		wake_up_process(t);
	}
	spawn_run_end(k, n);
	*ns = spawn_run_wait(t0);
	*done = k;

	/*
	 * Each thread may still be on its way out of our code: kthread_stop()
	 * waits until it has exited, so that the module can go.
	 */
	for (i = 0; i < k; i++) {
		kthread_stop(tasks[i]);
		put_task_struct(tasks[i]);
	}
	kvfree(tasks);
	return err;
}

/* --- kthread_worker ------------------------------------------------ */

static void spawn_kwork_fn(struct kthread_work *work)
{
	/* Nothing of the worker's touches the item after its function. */
	kfree(work);
	spawn_count(1);
}

static int spawn_kthread_worker(u64 n, u64 *done, u64 *ns)
{
	struct kthread_worker **workers;
	struct kthread_work *work;
	int cpu, err = 0;
	u64 i, t0;

	workers = kcalloc(nr_cpu_ids, sizeof(*workers), GFP_KERNEL);
	if (!workers)
		return -ENOMEM;
	/* One worker per CPU, bound there, as kgo has one P per CPU. */
	for_each_online_cpu(cpu) {
		struct kthread_worker *w;

#ifdef KGO_BENCH_WORKER_NAMES_CPU
		w = kthread_create_worker_on_cpu(cpu, 0, "kgo_bench_kw/%u");
#else
		w = kthread_create_worker_on_cpu(cpu, 0, "kgo_bench_kw/%d", cpu);
#endif
		if (IS_ERR(w)) {
			err = PTR_ERR(w);
			goto out;
		}
		workers[cpu] = w;
	}

	t0 = ktime_get_ns();
	for (i = 0; i < n && !spawn_stop(i); i++) {
		work = kmalloc(sizeof(*work), GFP_KERNEL);
		if (!work) {
			err = -ENOMEM;
			break;
		}
		kthread_init_work(work, spawn_kwork_fn);
		/*
		 * The spawner may migrate between two items, or its CPU go
		 * offline after the workers were made: any online worker
		 * will do then, the next item goes home again.
		 */
		cpu = raw_smp_processor_id();
		if (!workers[cpu])
			cpu = cpumask_first(cpu_online_mask);
		kthread_queue_work(workers[cpu], work);
	}
	spawn_run_end(i, n);
	*ns = spawn_run_wait(t0);
	*done = i;
out:
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (workers[cpu])
			kthread_destroy_worker(workers[cpu]);
	kfree(workers);
	return err;
}

/* ------------------------------------------------------------------- */

static const struct spawn_impl {
	const char *metric;
	const char *name;
	int (*run)(u64 n, u64 *done, u64 *ns);
	unsigned int div;	/* runs n / div tasks */
} spawn_impls[] = {
	{ "spawn",	"kgo",			spawn_kgo,		1 },
	{ "spawn_ext",	"kgo",			spawn_kgo_ext,		1 },
	{ "spawn_ext",	"workqueue",		spawn_workqueue,	1 },
	{ "spawn_ext",	"kthread",		spawn_kthread,		1000 },
	{ "spawn_ext",	"kthread_worker",	spawn_kthread_worker,	1 },
};

/* One run of up to @n tasks, in @budget ns: how many, and their time. */
static int spawn_one(const struct spawn_impl *s, u64 n, u64 budget,
		     u64 *done, u64 *ns)
{
	spawn_run_start(n, budget);
	return s->run(n, done, ns);
}

void kgo_bench_spawn(const struct kgo_bench_cfg *cfg)
{
	u64 size = kgo_bench_size(cfg, 200000, 1000);
	int i, ret;

	init_completion(&spawn_run.done);
	for (i = 0; i < ARRAY_SIZE(spawn_impls); i++) {
		const struct spawn_impl *s = &spawn_impls[i];
		u64 n = max_t(u64, size / s->div, 1), done, ns;

		if (!kgo_bench_impl_wanted(s->name))
			continue;
		ret = spawn_one(s, kgo_bench_warm_size(n),
				kgo_bench_budget(cfg, true), &done, &ns);
		if (!ret)
			ret = spawn_one(s, n, kgo_bench_budget(cfg, false),
					&done, &ns);
		if (!ret && !done)
			ret = -ETIMEDOUT;
		if (ret)
			kgo_bench_report_error(s->metric, s->name, ret);
		else
			kgo_bench_report(s->metric, s->name, "ns/op", ns, done,
					 "\"iters\":%llu", done);
	}
}
