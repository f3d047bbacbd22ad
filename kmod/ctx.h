/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_CTX_H
#define _KGO_CTX_H

#include <linux/types.h>

struct kgo_ctx;

int __kgo_ctx_sleep(struct kgo_ctx *ctx, u64 ns, bool park);
bool __kgo_ctx_cancel(struct kgo_ctx *ctx, int err, bool may_sleep);
bool kgo_ctx_cancel_sleepable(struct kgo_ctx *ctx, int err);

/*
 * kgo_ctx_sleep() with the thread asleep in the kernel, as if the
 * goroutine had called usleep_range(): its P is handed off.
 */
static inline int kgo_ctx_sleep_blocking(struct kgo_ctx *ctx, u64 ns)
{
	return __kgo_ctx_sleep(ctx, ns, false);
}

#endif /* _KGO_CTX_H */
