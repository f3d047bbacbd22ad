// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_unload_hold: a goroutine alive after every reference on kgo is
 * gone, for the test that rmmod kgo waits for it, names it in the log,
 * and finishes once it ends (tools/vm/jobs/unload.sh). Freeing the Ps
 * and the stack under it instead would be a use after free.
 *
 * A module that calls kgo's functions holds kgo: rmmod kgo refuses while
 * it is loaded. So this one links to none of them. It takes them with
 * symbol_get(), starts a goroutine that sleeps on a context of its own,
 * and puts them back: kgo's reference count is then what it was. The
 * goroutine sleeps until "release" is written:
 *
 *   echo 1 >/sys/module/kgo_unload_hold/parameters/release
 *
 * which cancels the context. That call, and the goroutine's own, go to
 * kgo after symbol_put(), which is safe only because kgo's unload waits
 * for the goroutine: what the test checks. Remove this module after kgo
 * (the job does): its exit cannot tell whether the goroutine still runs
 * here, and kgo may be gone by then, so it calls nothing of kgo's.
 */

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include <kgo.h>

static struct kgo_ctx hold_ctx;
/* kgo's, from symbol_get(); cancel is cleared by the one release. */
static int (*hold_sleep)(struct kgo_ctx *ctx, u64 ns);
static bool (*hold_cancel)(struct kgo_ctx *ctx, int err);
static atomic_t hold_state = ATOMIC_INIT(0);	/* 1 asleep, 2 woken */

/* The goroutine: its function is what the unload's log names. */
static void kgo_unload_hold_body(void *arg)
{
	int r;

	atomic_set(&hold_state, 1);
	r = hold_sleep(&hold_ctx, KGO_FOREVER);
	pr_info("released (%d)\n", r);
	atomic_set(&hold_state, 2);
}

static int hold_release(const char *val, const struct kernel_param *kp)
{
	typeof(hold_cancel) cancel = xchg(&hold_cancel, NULL);

	if (!cancel)
		return -EALREADY;
	cancel(&hold_ctx, -ECANCELED);
	return 0;
}

static int hold_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&hold_state));
}

static const struct kernel_param_ops hold_release_ops = {
	.set = hold_release,
	.get = hold_get,
};
module_param_cb(release, &hold_release_ops, NULL, 0600);
MODULE_PARM_DESC(release, "Write: wake the goroutine. Read: 0 not yet run, 1 asleep, 2 woken");

static int __init hold_init(void)
{
	s64 (*go)(kgo_func_t fn, void *arg, gfp_t gfp) = symbol_get(kgo_go);
	int (*ctx_init)(struct kgo_ctx *ctx, struct kgo_ctx *parent) = symbol_get(kgo_ctx_init);
	s64 goid = -ENOENT;

	hold_sleep = symbol_get(kgo_ctx_sleep);
	hold_cancel = symbol_get(kgo_ctx_cancel);
	if (go && ctx_init && hold_sleep && hold_cancel) {
		ctx_init(&hold_ctx, NULL);
		goid = go(kgo_unload_hold_body, NULL, GFP_KERNEL);
	}
	/* Each one got, put back: kgo is held by nothing of ours now. */
	if (go)
		symbol_put(kgo_go);
	if (ctx_init)
		symbol_put(kgo_ctx_init);
	if (hold_sleep)
		symbol_put(kgo_ctx_sleep);
	if (hold_cancel)
		symbol_put(kgo_ctx_cancel);
	if (goid < 0) {
		pr_err("no goroutine: %lld\n", goid);
		return goid;
	}
	pr_info("goroutine G%lld sleeps until released\n", goid);
	return 0;
}

static void __exit hold_exit(void)
{
}

module_init(hold_init);
module_exit(hold_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kgo test: a goroutine that holds rmmod kgo until released");
