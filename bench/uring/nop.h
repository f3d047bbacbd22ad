/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NOP throughput benchmark of `make bench`, one binary per way of
 * getting work into the kernel and its completions back: io_uring
 * (nop_uring.c), kgo's shared rings through libkgo (nop_ring.c, impl
 * "kgo") and kgo's older ioctl path (nop_kgo.c, impl "kgo_ioctl").
 * nop_main.c does the rest, the same for all: the options, the timing
 * and the JSON lines.
 *
 * One batch is: submit @batch NOPs, then wait until all of their
 * completions are back and checked. The figure is the operations per
 * second over a whole run of such batches, first submit to last
 * completion.
 *
 * Pipelined (-pipe DEPTH): @depth NOPs are kept in flight. Each round
 * reaps every completion there is, submits as many new NOPs, and
 * waits, in the same call, until PIPE_WAIT (or all in flight, if
 * fewer) are back. The figures are the sustained ops/s and the
 * submitting thread's CPU time (user + system) per NOP.
 *
 * A NOP completes where it is submitted, as io_uring issues one inline:
 * kgo's tasks carry KGO_TASK_F_INLINE, so these rows weigh the two
 * ways in and out of the kernel. With -async (nop_async), it runs
 * elsewhere: kgo's tasks are goroutines, io_uring's SQEs carry
 * IOSQE_ASYNC and run in its io-wq worker threads. Those rows weigh a
 * goroutine against a kernel thread pool's work item.
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
	/*
	 * Pipelined: @nops NOPs, @depth in flight at most, stopping early
	 * (whole rounds) after @max_ns; returns how many completed. Set up
	 * with setup(@depth). NULL if the impl has no such mode.
	 */
	unsigned long long (*pipe)(unsigned int depth, unsigned long long nops,
				   unsigned long long max_ns);
};

/* Completions a pipelined round waits for (see above). */
#define PIPE_WAIT	32

extern const struct nop_impl nop_impl;

/* -async: each NOP runs in a goroutine, or io_uring's io-wq (see above). */
extern int nop_async;

#endif /* _KGO_BENCH_NOP_H */
