// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_hello: goroutines, a WaitGroup, a cancel and a select with a
 * timeout. Loading it logs "kgo_hello: ok" once all of them have ended.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/module.h>
#include <kgo.h>

static struct kgo_waitgroup wg;
static struct kgo_ctx ctx;
static struct kgo_chan *quiet;	/* nobody sends on it */
static int slept, selected;

static void sleeper(void *arg)
{
	slept = kgo_ctx_sleep(&ctx, 60 * NSEC_PER_SEC);	/* cut short */
}

static void canceller(void *arg)
{
	struct kgo_select_case c = { .chan = quiet, .dir = KGO_SELECT_RECV };

	selected = kgo_select(&c, 1, 10 * NSEC_PER_MSEC);
	kgo_ctx_cancel(&ctx, -ECANCELED);	/* wakes sleeper() */
}

/* Started with plain kgo_go(): it must not return after its done. */
static void greeter(void *arg)
{
	pr_info("hello from goroutine %llu\n", kgo_id());
	kgo_wg_done_and_exit(&wg);
}

static int __init kgo_hello_init(void)
{
	s64 id;

	quiet = kgo_chan_create(0, 0, GFP_KERNEL);
	if (IS_ERR(quiet))
		return PTR_ERR(quiet);
	kgo_wg_init(&wg);
	kgo_ctx_init(&ctx, NULL);
	/* kgo_go_wg(): kgo is done on wg once the function has returned. */
	id = kgo_go_wg(&wg, sleeper, NULL, GFP_KERNEL);
	if (id > 0)
		id = kgo_go_wg(&wg, canceller, NULL, GFP_KERNEL);
	if (id > 0) {
		kgo_wg_add(&wg, 1);
		id = kgo_go(greeter, NULL, GFP_KERNEL);
		if (id < 0)
			kgo_wg_done(&wg);
	}
	if (id < 0)
		kgo_ctx_cancel(&ctx, -ECANCELED);
	kgo_wg_wait(&wg);	/* this thread sleeps; no goroutine is left */
	kgo_chan_destroy(quiet);
	if (id < 0)
		return id;
	if (selected != -ETIMEDOUT || slept != -ECANCELED) {
		pr_err("select %d, ctx sleep %d\n", selected, slept);
		return -EIO;
	}
	pr_info("ok: select timed out, ctx sleep cancelled, all goroutines done\n");
	return 0;
}

static void __exit kgo_hello_exit(void)
{
}

module_init(kgo_hello_init);
module_exit(kgo_hello_exit);
MODULE_DESCRIPTION("kgo's hello goroutine sample");
MODULE_LICENSE("GPL");
KGO_MODULE_IMPORT();
