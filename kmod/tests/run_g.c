// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for suites that run code as goroutines. KUnit assertions must
 * not be used inside a goroutine (a failed ASSERT ends the current
 * kthread, which would be an M): goroutine bodies record what they saw
 * and the case checks it afterwards on its own thread.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include <kgo.h>
#include "proc.h"
#include "sched.h"
#include "tests/run_g.h"

struct run_g_ctx {
	void (*fn)(void *arg);
	void *arg;
	struct completion done;
};

static void run_g_body(void *arg)
{
	struct run_g_ctx *ctx = arg;

	ctx->fn(ctx->arg);
	complete(&ctx->done);
}

/*
 * Runs @fn(@arg) as a goroutine and waits for it to return. On timeout
 * the context is leaked on purpose: the goroutine may still use it.
 * Return: 0, -ETIMEDOUT, or kgo_go()'s error.
 */
int kgo_test_run_in_g(void (*fn)(void *arg), void *arg, unsigned int timeout_ms)
{
	struct run_g_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	s64 id;

	if (!ctx)
		return -ENOMEM;
	ctx->fn = fn;
	ctx->arg = arg;
	init_completion(&ctx->done);
	id = kgo_go(run_g_body, ctx, GFP_KERNEL);
	if (id < 0) {
		kfree(ctx);
		return id;
	}
	if (!wait_for_completion_timeout(&ctx->done, msecs_to_jiffies(timeout_ms)))
		return -ETIMEDOUT;
	kfree(ctx);
	return 0;
}

/* kgo_test_run_in_g() with goroutines on one P only, for its duration. */
int kgo_test_run_in_g_1p(void (*fn)(void *arg), void *arg, unsigned int timeout_ms)
{
	int prev = kgo_gomaxprocs(1);
	int ret = kgo_test_run_in_g(fn, arg, timeout_ms);

	kgo_gomaxprocs(prev);
	return ret;
}

u64 kgo_test_pstat_sum(size_t off)
{
	u64 sum = 0;
	int i;

	for (i = 0; i < kgo_sched.nprocs; i++)
		sum += READ_ONCE(*(u64 *)((char *)&kgo_sched.allp[i]->stats + off));
	return sum;
}

/*
 * Waits until every goroutine has exited, no M spins and every M is
 * parked with its P idle. Return: 0 or -ETIMEDOUT.
 */
int kgo_test_wait_quiet(unsigned int timeout_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	struct kgo_sched_snap s;

	do {
		kgo_sched_snapshot(&s);
		if (!s.galive && !s.nmspinning && s.nmidle == s.mcount &&
		    s.npidle == s.nprocs && !s.runqsize)
			return 0;
		usleep_range(10000, 20000);
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

/*
 * Suite .init and .exit for cases that change kgo_gomaxprocs(): .exit
 * runs even after a failed assertion ended the case half-way, so the
 * next case starts with the Ps this one found.
 */
int kgo_test_procs_init(struct kunit *test)
{
	test->priv = (void *)(long)kgo_gomaxprocs(0);
	return 0;
}

void kgo_test_procs_exit(struct kunit *test)
{
	kgo_gomaxprocs((long)test->priv);
}
