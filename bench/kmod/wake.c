// SPDX-License-Identifier: GPL-2.0
/*
 * "wake_latency", ns: from an hrtimer callback (hardirq, as an interrupt
 * handler completing I/O would be) making a sleeper runnable, to the
 * sleeper running. The median of many samples is the value; min and max
 * go along.
 *
 *   kgo      a goroutine in kgo_park(); the callback kgo_ready()s it:
 *            global queue, wake an idle P's M, switch to the goroutine
 *   kthread  a kthread in schedule(); the callback wake_up_process()es it
 *
 * The goroutine arms the timer from kgo_park()'s unlockf, that is once
 * it is off its stack: kgo_ready() is only legal on a parked goroutine.
 * other_cpu counts the samples that ran on another CPU than the timer's:
 * a cross-CPU wake-up costs an IPI, and under emulation the other vCPU
 * may first have to be scheduled on the host.
 */

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "bench.h"

/* Long enough for the sleeper to be asleep when the timer fires. */
#define WAKE_DELAY_NS	(100 * NSEC_PER_USEC)

struct wake {
	struct hrtimer timer;
	u64 t_ready;		/* stamped by the callback, before the wake-up */
	int cpu_ready;		/* ... and the CPU it ran on */
	u64 *samples;
	u64 n;			/* samples to take; fewer after the deadline */
	u64 deadline;		/* ktime ns */
	u64 other_cpu;		/* samples woken up on another CPU */

	/* kgo */
	struct kgo_g *g;
	struct kgo_waitgroup wg;

	/* kthread */
	struct task_struct *task;
	bool fired;
	struct completion done;
};

/* --- kgo ----------------------------------------------------------- */

static enum hrtimer_restart wake_kgo_timer(struct hrtimer *t)
{
	struct wake *w = container_of(t, struct wake, timer);

	w->t_ready = ktime_get_ns();
	w->cpu_ready = smp_processor_id();
	/* Its cmpxchg orders t_ready before the goroutine can run. */
	kgo_ready(w->g);
	return HRTIMER_NORESTART;
}

/* kgo_park()'s unlockf: the goroutine is parked, the timer may fire. */
static bool wake_kgo_arm(struct kgo_g *g, void *arg)
{
	struct wake *w = arg;

	w->g = g;
	hrtimer_start(&w->timer, ns_to_ktime(WAKE_DELAY_NS), HRTIMER_MODE_REL_HARD);
	return true;
}

static void wake_kgo_sleeper(void *arg)
{
	struct wake *w = arg;
	u64 i;

	for (i = 0; i < w->n && !kgo_bench_stop(i + 1, w->deadline); i++) {
		kgo_park(wake_kgo_arm, w);
		w->samples[i] = ktime_get_ns() - READ_ONCE(w->t_ready);
		w->other_cpu += raw_smp_processor_id() != READ_ONCE(w->cpu_ready);
	}
	w->n = i;
	kgo_wg_done(&w->wg);
}

static int wake_kgo(struct wake *w)
{
	s64 ret;

	w->timer.function = wake_kgo_timer;
	kgo_wg_init(&w->wg);
	kgo_wg_add(&w->wg, 1);
	ret = kgo_go(wake_kgo_sleeper, w, GFP_KERNEL);
	if (ret < 0)
		return ret;
	kgo_bench_wg_wait(&w->wg);
	return 0;
}

/* --- kthread ------------------------------------------------------- */

static enum hrtimer_restart wake_kthread_timer(struct hrtimer *t)
{
	struct wake *w = container_of(t, struct wake, timer);

	w->t_ready = ktime_get_ns();
	w->cpu_ready = smp_processor_id();
	WRITE_ONCE(w->fired, true);
	wake_up_process(w->task);
	return HRTIMER_NORESTART;
}

static int wake_kthread_sleeper(void *arg)
{
	struct wake *w = arg;
	u64 i;

	for (i = 0; i < w->n && !kgo_bench_stop(i + 1, w->deadline); i++) {
		WRITE_ONCE(w->fired, false);
		/* Before the timer is armed: its wake-up is not lost. */
		set_current_state(TASK_UNINTERRUPTIBLE);
		hrtimer_start(&w->timer, ns_to_ktime(WAKE_DELAY_NS),
			      HRTIMER_MODE_REL_HARD);
		while (!READ_ONCE(w->fired)) {
			schedule();
			set_current_state(TASK_UNINTERRUPTIBLE);
		}
		__set_current_state(TASK_RUNNING);
		w->samples[i] = ktime_get_ns() - READ_ONCE(w->t_ready);
		w->other_cpu += raw_smp_processor_id() != READ_ONCE(w->cpu_ready);
	}
	w->n = i;
	complete(&w->done);
	return 0;
}

static int wake_kthread(struct wake *w)
{
	struct task_struct *t;

	w->timer.function = wake_kthread_timer;
	init_completion(&w->done);
	t = kthread_create(wake_kthread_sleeper, w, "kgo_bench_wake");
	if (IS_ERR(t))
		return PTR_ERR(t);
	/* Held for kthread_stop(): the thread exits by itself. */
	get_task_struct(t);
	w->task = t;
	wake_up_process(t);
	kgo_bench_wait(&w->done);
	kthread_stop(t);
	put_task_struct(t);
	return 0;
}

/* ------------------------------------------------------------------- */

static const struct wake_impl {
	const char *name;
	int (*run)(struct wake *w);
} wake_impls[] = {
	{ "kgo", wake_kgo },
	{ "kthread", wake_kthread },
};

/*
 * One run of @impl, up to @n samples in @budget ns; the caller owns and
 * frees *@wp.
 */
#ifdef KGO_BENCH_HRTIMER_SETUP
static enum hrtimer_restart wake_no_timer(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}
#endif

static int wake_run(const struct wake_impl *impl, u64 n, u64 budget,
		    struct wake **wp)
{
	struct wake *w = kzalloc(sizeof(*w), GFP_KERNEL);
	int ret;

	*wp = w;
	if (!w)
		return -ENOMEM;
	w->n = n;
	w->deadline = ktime_get_ns() + budget;
	w->samples = kvmalloc_array(n, sizeof(*w->samples), GFP_KERNEL);
	if (!w->samples)
		return -ENOMEM;
#ifdef KGO_BENCH_HRTIMER_SETUP
	/* Each impl names its own callback before it arms the timer. */
	hrtimer_setup(&w->timer, wake_no_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
#else
	hrtimer_init(&w->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
#endif
	ret = impl->run(w);
	/* The last callback may still be on its way out. */
	hrtimer_cancel(&w->timer);
	return ret;
}

static void wake_free(struct wake *w)
{
	if (w)
		kvfree(w->samples);
	kfree(w);
}

void kgo_bench_wake_latency(const struct kgo_bench_cfg *cfg)
{
	u64 n = kgo_bench_size(cfg, 1000, 50), median;
	struct wake *w;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(wake_impls); i++) {
		const struct wake_impl *impl = &wake_impls[i];

		if (!kgo_bench_impl_wanted(impl->name))
			continue;
		ret = wake_run(impl, kgo_bench_warm_size(n),
			       kgo_bench_budget(cfg, true), &w);
		wake_free(w);
		w = NULL;	/* a failed warm-up skips the run: not freed twice */
		if (!ret)
			ret = wake_run(impl, n, kgo_bench_budget(cfg, false), &w);
		if (!ret && !w->n)
			ret = -ETIMEDOUT;
		if (ret) {
			kgo_bench_report_error("wake_latency", impl->name, ret);
		} else {
			median = kgo_bench_median(w->samples, w->n);
			kgo_bench_report("wake_latency", impl->name, "ns", median, 1,
					 "\"iters\":%llu,\"min\":%llu,\"max\":%llu,\"other_cpu\":%llu",
					 w->n, w->samples[0], w->samples[w->n - 1],
					 w->other_cpu);
		}
		wake_free(w);
	}
}
