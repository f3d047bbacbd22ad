/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NOP throughput benchmark of `make bench`, one binary per way of
 * getting work into the kernel and its completions back: io_uring
 * (nop_uring.c) and /dev/kgo (nop_kgo.c). nop_main.c does the rest,
 * the same for both: the options, the timing and the JSON line.
 *
 * One batch is: submit @batch NOPs, then wait until all of their
 * completions are back and checked. The figure is the operations per
 * second over a whole run of such batches, first submit to last
 * completion.
 */
#ifndef _KGO_BENCH_NOP_H
#define _KGO_BENCH_NOP_H

/* kgoctl's helpers, linked in: die*(), now_ns(), xcalloc(), open_dev()... */
#include "common.h"
#include "device.h"

struct nop_impl {
	const char *name;	/* "impl" in the JSON line */
	/* Everything a run of batches of @batch needs; dies on failure. */
	void (*setup)(unsigned int batch);
	/* One batch of @batch NOPs, submitted and completed; dies on failure. */
	void (*run_batch)(unsigned int batch);
	void (*teardown)(void);
};

extern const struct nop_impl nop_impl;

#endif /* _KGO_BENCH_NOP_H */
