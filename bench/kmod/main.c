// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_bench: loading it runs the benchmark suite, in module init, and
 * prints each result as a JSON line (report.c); init then returns 0, so
 * that the module can be removed again. kgo.ko must be loaded first.
 *
 *   insmod kgo_bench.ko [smoke=1] [scale=N] [only=NAME,...] [impl=NAME]
 *                       [tree_depth=D]
 *
 * Default sizes take well under a minute in a 2-vCPU QEMU TCG guest;
 * scale multiplies them (on hardware, 10 or more); smoke=1 runs tiny
 * sizes in a few seconds, only to see that everything works.
 *
 * max_queued runs only when only= names it, and not in smoke mode: it
 * leaves nearly all memory in kgo's free lists, so kgo.ko should be
 * unloaded right after it (mem.c). The fairness rows (fair.c) run only
 * when named too: make bench runs them in the fairness group, the first
 * behind a backlog that bench/fair makes. So does blocking (blocking.c),
 * its own step of make bench, which creates up to 10,000 threads. So
 * does counts (counts.c), its own step too: counters of the whole
 * machine, read around batches that must run alone. And so do the
 * scheduler-under-load rows (sched_load.c: yield_n, chan_buf, select4,
 * chan_fanin, mutex_contended), make bench's step sched_load, which
 * runs them beside Go's own.
 */

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "bench.h"

#define KGO_BENCH_SCALE_MAX	1000

static bool smoke;
module_param(smoke, bool, 0444);
MODULE_PARM_DESC(smoke, "Tiny sizes: check that every workload runs");

static unsigned int scale = 1;
module_param(scale, uint, 0444);
MODULE_PARM_DESC(scale, "Multiply the default sizes (1-1000)");

static unsigned int tree_depth;
module_param(tree_depth, uint, 0444);
MODULE_PARM_DESC(tree_depth, "Levels below the spawn tree's root (default 14, smoke 12)");

static char *only;
module_param(only, charp, 0444);
MODULE_PARM_DESC(only, "Run only these workloads, comma-separated");

/*
 * One implementation of each comparison, kgo's or a peer's: so that an
 * instruction count of the run (make profile) is of that one alone.
 */
static char *impl;
module_param(impl, charp, 0444);
MODULE_PARM_DESC(impl, "Run only this implementation (kgo, kthread, ...) of each workload");

bool kgo_bench_impl_wanted(const char *name)
{
	return !impl || !*impl || !strcmp(impl, name);
}

/*
 * In this order: mem first, before this load's other workloads fill
 * kgo's free lists (earlier loads may have; see mem.c); max_queued
 * last, since it leaves its memory with kgo.
 */
static const struct kgo_bench_workload {
	const char *name;
	void (*run)(const struct kgo_bench_cfg *cfg);
	bool opt_in;	/* only if only= names it */
	bool no_smoke;	/* never in smoke mode */
} kgo_bench_workloads[] = {
	{ "mem",		kgo_bench_mem },
	{ "switch_raw",		kgo_bench_switch_raw },
	{ "spawn",		kgo_bench_spawn },
	{ "yield_pingpong",	kgo_bench_yield_pingpong },
	{ "chan_pingpong",	kgo_bench_chan_pingpong },
	{ "wake_latency",	kgo_bench_wake_latency },
	{ "tree_allp",		kgo_bench_tree_allp },
	{ "tree_1p",		kgo_bench_tree_1p },
	{ "fair_kgo_go",	kgo_bench_fair_kgo_go, true },
	{ "fair_pingpong_hog",	kgo_bench_fair_pingpong_hog, true },
	{ "blocking",		kgo_bench_blocking, true },
	{ "counts",		kgo_bench_counts, true },
	{ "yield_n",		kgo_bench_yield_n, true },
	{ "chan_buf",		kgo_bench_chan_buf, true },
	{ "select4",		kgo_bench_select4, true },
	{ "chan_fanin",		kgo_bench_chan_fanin, true },
	{ "mutex_contended",	kgo_bench_mutex_contended, true },
	{ "max_queued",		kgo_bench_max_queued, true, true },
};

/* Whether only= names @w; no only= names all but the opt-in ones. */
static bool kgo_bench_chosen(const struct kgo_bench_workload *w)
{
	size_t len = strlen(w->name);
	const char *s;

	if (!only || !*only)
		return !w->opt_in;
	for (s = only;; s++) {
		if (!strncmp(s, w->name, len) && (s[len] == ',' || !s[len]))
			return true;
		s = strchr(s, ',');
		if (!s)
			return false;
	}
}

/* Every name in only= must be a workload's: a typo should not pass. */
static int kgo_bench_check_only(void)
{
	const char *s = only, *end;
	int i;

	while (s && *s) {
		end = strchrnul(s, ',');
		for (i = 0; i < ARRAY_SIZE(kgo_bench_workloads); i++) {
			const char *name = kgo_bench_workloads[i].name;

			if (strlen(name) == end - s && !strncmp(s, name, end - s))
				break;
		}
		if (i == ARRAY_SIZE(kgo_bench_workloads)) {
			pr_err("only=%s: no workload %.*s\n", only, (int)(end - s), s);
			return -EINVAL;
		}
		s = *end ? end + 1 : NULL;
	}
	return 0;
}

static int __init kgo_bench_init(void)
{
	const struct kgo_bench_cfg cfg = {
		.smoke = smoke,
		.scale = scale,
		.tree_depth = tree_depth,
	};
	u64 t0 = ktime_get_ns();
	int i, ret;

	if (!scale || scale > KGO_BENCH_SCALE_MAX) {
		pr_err("scale=%u: must be 1 to %d\n", scale, KGO_BENCH_SCALE_MAX);
		return -EINVAL;
	}
	ret = kgo_bench_check_only();
	if (ret)
		return ret;

	pr_info("suite: smoke=%d scale=%u, %d Ps\n", smoke, scale, kgo_bench_nprocs());
	kgo_bench_report_config();
	for (i = 0; i < ARRAY_SIZE(kgo_bench_workloads); i++) {
		const struct kgo_bench_workload *w = &kgo_bench_workloads[i];

		if (!kgo_bench_chosen(w))
			continue;
		if (w->no_smoke && smoke) {
			pr_info("%s: skipped in smoke mode\n", w->name);
			continue;
		}
		w->run(&cfg);
	}
	pr_info("suite: done in %llu ms\n", (ktime_get_ns() - t0) / NSEC_PER_MSEC);
	return 0;
}

/* Everything the suite started has ended before init returned. */
static void __exit kgo_bench_exit(void)
{
}

module_init(kgo_bench_init);
module_exit(kgo_bench_exit);

MODULE_LICENSE("GPL");
KGO_MODULE_IMPORT();
MODULE_DESCRIPTION("kgo_bench: kgo's scheduler against the kernel's own mechanisms");
MODULE_AUTHOR("The kgo authors");
