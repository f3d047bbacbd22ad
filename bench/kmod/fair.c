// SPDX-License-Identifier: GPL-2.0
/*
 * The fairness group's in-kernel rows (bench/fair has the others). Both
 * run only when only= names them: the first needs a backlog that
 * fairbench makes through /dev/kgo before it loads this module.
 *
 *   fair_kgo_go        p99 (nearest rank) of an in-kernel kgo_go()'s
 *                      wait, from the call (in this thread, outside any
 *                      goroutine) to the goroutine's first instruction,
 *                      one at a time, 2 ms apart: `fairbench -run
 *                      kgo_go` first queues 20,000 SPIN tasks of 100 us
 *                      on one fd, passes the goal (3 slices) as goal_ns=
 *                      and checks that the backlog outlived the run.
 *   fair_pingpong_hog  Go's TestPingPongHog on one P: a pair of "hog"
 *                      goroutines pass a token back and forth and count
 *                      a million times per turn in a loop without a kgo
 *                      call, a "light" pair does the same with a
 *                      thousand. The value is the larger of hog/light
 *                      and light/hog, against Go's bound of 20 (the
 *                      goal); "hog_per_light" is hog/light in
 *                      thousandths.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "bench.h"

/* --- fair_kgo_go --------------------------------------------------- */

/* The goal, which fairbench passes (it knows kgo's slice); 0: none. */
static unsigned long long goal_ns;
module_param(goal_ns, ullong, 0444);
MODULE_PARM_DESC(goal_ns, "fair_kgo_go's goal, reported beside its p99 (from fairbench)");

struct fair_go {
	u64 t_ran;
	struct completion done;
};

static void fair_go_fn(void *arg)
{
	struct fair_go *f = arg;

	f->t_ran = ktime_get_ns();
	complete(&f->done);
}

void kgo_bench_fair_kgo_go(const struct kgo_bench_cfg *cfg)
{
	u64 n = kgo_bench_size(cfg, 100, 10), i, *wait;
	struct fair_go f;
	s64 id;

	wait = kcalloc(n, sizeof(*wait), GFP_KERNEL);
	if (!wait) {
		kgo_bench_report_error("fair_kgo_go_p99", "kgo", -ENOMEM);
		return;
	}
	init_completion(&f.done);
	for (i = 0; i < n; i++) {
		u64 t0;

		reinit_completion(&f.done);
		t0 = ktime_get_ns();
		id = kgo_go(fair_go_fn, &f, GFP_KERNEL);
		if (id < 0) {
			kgo_bench_report_error("fair_kgo_go_p99", "kgo", id);
			goto out;
		}
		kgo_bench_wait(&f.done);
		wait[i] = f.t_ran - t0;
		usleep_range(2000, 2100);
	}
	kgo_bench_median(wait, n);	/* sorts */
	if (!wait[(n * 99 + 99) / 100 - 1])
		kgo_bench_report_missing("fair_kgo_go_p99", "kgo", "ns",
					 "p99 below the clock's resolution (0 ns)",
					 "\"samples\":%llu,\"max\":%llu,\"goal\":%llu", n,
					 wait[n - 1], goal_ns);
	else
		kgo_bench_report("fair_kgo_go_p99", "kgo", "ns", wait[(n * 99 + 99) / 100 - 1], 1,
				 "\"samples\":%llu,\"max\":%llu,\"goal\":%llu", n,
				 wait[n - 1], goal_ns);
out:
	kfree(wait);
}

/* --- fair_pingpong_hog --------------------------------------------- */

#define HOG_LOOP	1000000
#define LIGHT_LOOP	1000
#define HOG_WINDOW_MS	1000

struct hog_pair {
	struct kgo_chan *wake;
	struct kgo_chan *done;		/* closed at the end of the window */
	long count;			/* only the token's holder writes */
	long loop;
	struct kgo_waitgroup *wg;
};

/*
 * Go's player. cond_resched() every 1024 counts is no kgo call: it lets
 * the kernel share the CPU between the hog's M and the M that took its
 * P (the stock kernel preempts kernel code only there).
 */
static void hog_player(void *arg)
{
	struct hog_pair *pr = arg;
	bool v;
	struct kgo_select_case cs[2] = {
		{ .chan = pr->done, .dir = KGO_SELECT_RECV, .elem = &v },
		{ .chan = pr->wake, .dir = KGO_SELECT_RECV, .elem = &v },
	};
	long i;

	while (kgo_select(cs, 2, KGO_FOREVER) == 1) {
		for (i = 0; i < pr->loop; i++) {
			WRITE_ONCE(pr->count, READ_ONCE(pr->count) + 1);
			if (!(i & 1023))
				cond_resched();
		}
		v = true;
		if (kgo_chan_send(pr->wake, &v, KGO_FOREVER))
			break;
	}
	kgo_wg_done(pr->wg);
}

/* One contest; returns 0 with the two counts, or -errno. */
static int hog_contest(const struct kgo_bench_cfg *cfg, long *hog, long *light)
{
	struct kgo_chan *done = kgo_chan_create(sizeof(bool), 0, GFP_KERNEL);
	struct hog_pair pr[2] = { { .loop = HOG_LOOP }, { .loop = LIGHT_LOOP } };
	struct kgo_waitgroup wg;
	struct kgo_bench_pin pin;
	int ret = 0, i, k;
	bool v = true;

	if (IS_ERR(done))
		return PTR_ERR(done);
	for (i = 0; i < 2; i++) {
		pr[i].wake = kgo_chan_create(sizeof(bool), 0, GFP_KERNEL);
		if (IS_ERR(pr[i].wake)) {
			ret = PTR_ERR(pr[i].wake);
			pr[i].wake = NULL;
		}
		pr[i].done = done;
		pr[i].wg = &wg;
	}
	if (ret)
		goto out;
	ret = kgo_bench_pin_start(&pin);
	if (ret)
		goto out;
	kgo_wg_init(&wg);
	for (i = 0; i < 2; i++) {
		for (k = 0; k < 2; k++) {
			kgo_wg_add(&wg, 1);
			if (kgo_go(hog_player, &pr[i], GFP_KERNEL) < 0) {
				kgo_wg_done(&wg);
				ret = -ENOMEM;
			}
		}
	}
	for (i = 0; i < 2 && !ret; i++)
		ret = kgo_chan_send(pr[i].wake, &v, KGO_FOREVER);
	if (!ret)
		msleep(cfg->smoke ? HOG_WINDOW_MS / 5 : HOG_WINDOW_MS);
	kgo_chan_close(done);
	/* Take each token back: the pairs then see done and stop. */
	for (i = 0; i < 2 && !ret; i++)
		ret = kgo_chan_recv(pr[i].wake, &v, NULL, KGO_FOREVER);
	if (ret) {	/* a pair that never got its token: wake it */
		for (i = 0; i < 2; i++)
			kgo_chan_close(pr[i].wake);
	}
	kgo_bench_wg_wait(&wg);
	kgo_bench_pin_stop(&pin);
	*hog = READ_ONCE(pr[0].count);
	*light = READ_ONCE(pr[1].count);
out:
	for (i = 0; i < 2; i++)
		if (pr[i].wake)
			kgo_chan_destroy(pr[i].wake);
	kgo_chan_destroy(done);
	return ret;
}

void kgo_bench_fair_pingpong_hog(const struct kgo_bench_cfg *cfg)
{
	long hog = 0, light = 0;
	int ret = hog_contest(cfg, &hog, &light);

	if (!ret && (!hog || !light))
		ret = -EDOM;	/* a pair that never counted: starved */
	if (ret) {
		kgo_bench_report_error("fair_pingpong_hog", "kgo", ret);
		return;
	}
	/* The goal: neither side of the contest gets 20 times the other's. */
	kgo_bench_report("fair_pingpong_hog", "kgo", "x", max(hog, light), min(hog, light),
			 "\"hog\":%ld,\"light\":%ld,\"hog_per_light\":%llu,\"goal\":20",
			 hog, light, div64_u64(1000ULL * hog, light));
}
