// SPDX-License-Identifier: GPL-2.0
/*
 * Confining goroutines to one P.
 *
 * Some workloads need their goroutines on one P: the yield ping-pong,
 * tree_1p, and the memory ones, whose filler keeps what it spawns from
 * starting by never switching on the only P. kgo_gomaxprocs(1) leaves
 * one P; where include/kgo.h has no kgo_gomaxprocs() (Kbuild looks for
 * it), hogs do it: goroutines that hold a P without ever switching,
 * until told to stop. A P whose goroutine never returns to the
 * scheduler neither runs nor steals anything else: with hogs on all Ps
 * but one, whatever is spawned next runs on that one alone.
 *
 * A hog spins with cond_resched(): a preempted M keeps its P (only an
 * M that sleeps may have it taken, see kmod/block.c), and other threads
 * of that CPU, the benchmark's own among them, still get to run. It
 * burns its CPU, which under emulation slows the other vCPU somewhat:
 * another reason to prefer kgo_gomaxprocs().
 */

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/sched.h>

#include "bench.h"

#ifndef KGO_BENCH_HAVE_GOMAXPROCS
/* How long a hog may take to start before we give up on kgo. */
#define HOG_START_MS	5000

static void hog(void *arg)
{
	struct kgo_bench_pin *pin = arg;

	atomic_inc(&pin->running);
	while (!READ_ONCE(pin->stop))
		cond_resched();
	kgo_wg_done(&pin->hogs);
}

/* Ends the hogs and waits for them. */
static void hogs_stop(struct kgo_bench_pin *pin)
{
	WRITE_ONCE(pin->stop, true);
	kgo_bench_wg_wait(&pin->hogs);
}

/* Occupies @n Ps with a hog each; 0 or -errno with none left. */
static int hogs_start(struct kgo_bench_pin *pin, int n)
{
	unsigned long deadline;
	s64 ret = 0;
	int i;

	atomic_set(&pin->running, 0);
	WRITE_ONCE(pin->stop, false);
	kgo_wg_init(&pin->hogs);
	for (i = 0; i < n; i++) {
		kgo_wg_add(&pin->hogs, 1);
		ret = kgo_go(hog, pin, GFP_KERNEL);
		if (ret < 0) {
			kgo_wg_done(&pin->hogs);
			goto fail;
		}
		/*
		 * One at a time: a hog queued while the previous one waits
		 * might be taken by the P that then runs the previous one,
		 * and wait behind it forever. Queued once the previous one
		 * runs, it can only go to an idle P.
		 */
		deadline = jiffies + msecs_to_jiffies(HOG_START_MS);
		while (atomic_read(&pin->running) <= i) {
			if (time_after(jiffies, deadline)) {
				ret = -ETIMEDOUT;
				goto fail;
			}
			usleep_range(50, 100);
		}
	}
	return 0;
fail:
	hogs_stop(pin);
	return ret;
}
#endif

/**
 * kgo_bench_pin_start() - leave goroutines one P
 * @pin: the state to undo it, initialised here
 *
 * Goroutines spawned from process context after this run on the one P
 * left, and only there, until kgo_bench_pin_stop().
 *
 * Context: process, outside any goroutine (a goroutine would hold a P
 * itself). Return: 0 or -errno, with nothing changed.
 */
int kgo_bench_pin_start(struct kgo_bench_pin *pin)
{
#ifdef KGO_BENCH_HAVE_GOMAXPROCS
	pin->prev = kgo_gomaxprocs(1);
	return pin->prev < 0 ? pin->prev : 0;
#else
	return hogs_start(pin, kgo_bench_nprocs() - 1);
#endif
}

/* Undoes kgo_bench_pin_start(). Context: process, not a goroutine. */
void kgo_bench_pin_stop(struct kgo_bench_pin *pin)
{
#ifdef KGO_BENCH_HAVE_GOMAXPROCS
	kgo_gomaxprocs(pin->prev);
#else
	hogs_stop(pin);
#endif
}

/* How kgo_bench_pin_start() does it, for the results. */
const char *kgo_bench_pin_via(void)
{
#ifdef KGO_BENCH_HAVE_GOMAXPROCS
	return "gomaxprocs";
#else
	return "hogs";
#endif
}

/* The Ps kgo runs goroutines on. */
int kgo_bench_nprocs(void)
{
#ifdef KGO_BENCH_HAVE_GOMAXPROCS
	return kgo_gomaxprocs(0);
#else
	/* kgo makes one P per CPU online when it is loaded. */
	return num_online_cpus();
#endif
}
