// SPDX-License-Identifier: GPL-2.0
/*
 * "tree_allp" and "tree_1p", ms: a fib-style spawn tree. Every node but
 * the leaves spawns two children one level down and waits for them with
 * a WaitGroup, as bench/go's tree does; the whole tree runs on all Ps,
 * then on one.
 *
 * A waiting node is a parked goroutine and holds its stack (THREAD_SIZE,
 * 16 KiB), where Go's would hold a few KiB. In Go's run queue order a
 * P starts the first children it queued oldest first, the largest
 * subtrees, and a model of one P holds 48,000 stacks at once at depth
 * 19. kgo runs goroutines that never ran newest first (the fresh stack,
 * kmod/runq.c): about a stack per level, and a subtree more for each
 * oldest-first take that the monitor orders against starvation. Depth
 * 19 (1,048,575 goroutines, scale 32) runs in the 1 GiB test VM. Depth
 * 14 by default (32767 goroutines, about a second under emulation)
 * keeps make bench short; scale adds levels (depth 14 + log2(scale)),
 * tree_depth sets them.
 *
 * "tree_steals" comes from outside: kgo exports no statistics to
 * modules, so make bench's VM job sums the steal counters of kgo's
 * debugfs view of the Ps around a load with only=tree_allp (which
 * includes the warm-up tree).
 */

#include <linux/ktime.h>
#include <linux/log2.h>

#include "bench.h"

#define TREE_DEPTH_MAX	24

struct tree_node_arg {
	unsigned int depth;
	struct kgo_waitgroup *parent;
	int *err;		/* the first failure, if any */
};

static void tree_node(void *arg)
{
	struct tree_node_arg *a = arg, kids[2];
	struct kgo_waitgroup wg;
	s64 ret;
	int i;

	/* *a is on the parent's stack, valid until our kgo_wg_done(). */
	if (a->depth) {
		kgo_wg_init(&wg);
		kgo_wg_add(&wg, 2);
		for (i = 0; i < 2; i++) {
			kids[i].depth = a->depth - 1;
			kids[i].parent = &wg;
			kids[i].err = a->err;
			ret = kgo_go(tree_node, &kids[i], GFP_KERNEL);
			if (ret < 0) {
				WRITE_ONCE(*a->err, ret);
				kgo_wg_done(&wg);
			}
		}
		kgo_wg_wait(&wg);
	}
	kgo_wg_done(a->parent);
}

/* Runs a tree @depth levels below its root; its time in *@ns. */
static int tree_run(unsigned int depth, u64 *ns)
{
	struct kgo_waitgroup wg;
	struct tree_node_arg root = { .depth = depth, .parent = &wg };
	int err = 0;
	u64 t0;
	s64 ret;

	root.err = &err;
	kgo_wg_init(&wg);
	kgo_wg_add(&wg, 1);
	t0 = ktime_get_ns();
	ret = kgo_go(tree_node, &root, GFP_KERNEL);
	if (ret < 0)
		return ret;
	kgo_bench_wg_wait(&wg);
	*ns = ktime_get_ns() - t0;
	return READ_ONCE(err);
}

static unsigned int tree_depth(const struct kgo_bench_cfg *cfg)
{
	if (cfg->tree_depth)
		return min(cfg->tree_depth, TREE_DEPTH_MAX);
	if (cfg->smoke)
		return 12;
	return min(14 + ilog2(cfg->scale), TREE_DEPTH_MAX);
}

/* A warm-up tree of an eighth of the size, then the timed one, on @procs Ps. */
static void tree_bench(const char *metric, unsigned int depth, int procs)
{
	u64 nodes = (2ULL << depth) - 1, ns;
	int ret;

	ret = tree_run(depth > 3 ? depth - 3 : 0, &ns);
	if (!ret)
		ret = tree_run(depth, &ns);
	if (ret)
		kgo_bench_report_error(metric, "kgo", ret);
	else
		kgo_bench_report(metric, "kgo", "ms", ns, NSEC_PER_MSEC,
				 "\"iters\":%llu,\"depth\":%u,\"procs\":%d",
				 nodes, depth, procs);
}

void kgo_bench_tree_allp(const struct kgo_bench_cfg *cfg)
{
	tree_bench("tree_allp", tree_depth(cfg), kgo_bench_nprocs());
}

/* On one P: kgo_gomaxprocs(1) (pin.c). */
void kgo_bench_tree_1p(const struct kgo_bench_cfg *cfg)
{
	struct kgo_bench_pin pin;
	int ret;

	ret = kgo_bench_pin_start(&pin);
	if (ret) {
		kgo_bench_report_error("tree_1p", "kgo", ret);
		return;
	}
	tree_bench("tree_1p", tree_depth(cfg), 1);
	kgo_bench_pin_stop(&pin);
}
