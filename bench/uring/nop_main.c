// SPDX-License-Identifier: GPL-2.0
/*
 * What the NOP benchmarks share (see nop.h):
 *
 *   nop_<impl> [-batch N | -pipe DEPTH] [-async] [-iters SCALE] [-smoke]
 *
 * Without -batch it runs batches of 1 and of 32, the metrics nop_b1 and
 * nop_b32, and prints one JSON line for each, "iters" the NOPs timed:
 *
 *   {"metric":"nop_b32","impl":"io_uring","unit":"ops/s","value":...,"iters":...}
 *
 * With -pipe it keeps DEPTH in flight (see nop.h) and prints two lines,
 * the metrics nop_pipe (ops/s) and nop_pipe_cpu (the submitting
 * thread's CPU ns per NOP), each with "depth".
 *
 * With -async the metrics are nop_async_b1, nop_async_b32,
 * nop_async_pipe and nop_async_pipe_cpu (see nop.h).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "nop.h"

#define NOPS_DEFAULT	200000ULL	/* a run, at -iters 1 */
#define NOPS_SMOKE	256ULL
#define BATCH_MAX	4096

/*
 * A run also ends when it has taken this long, whole batches only, and
 * its warm-up when it has taken a tenth of it: under emulation on a busy
 * host a slow side could otherwise take many minutes to reach its
 * count. The rate is over what was done, so it is not changed by this.
 */
#define RUN_MAX_NS	5000000000ULL
#define CLOCK_EVERY	16	/* batches between looks at the clock */

#define USAGE		"[-batch N | -pipe DEPTH] [-async] [-iters SCALE] [-smoke]"

int nop_async;

/* The metrics' prefix: nop_ or nop_async_. */
static const char *prefix(void)
{
	return nop_async ? "nop_async" : "nop";
}

/* The calling thread's CPU time so far, user and system. */
static unsigned long long thread_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die_errno("getrusage");
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* The pipelined run (nop.h): warm-up, then @nops timed, and its two lines. */
static void bench_pipe(unsigned int depth, unsigned long long nops)
{
	unsigned long long t0, t1, c0, c1;

	if (!nop_impl.pipe)
		die("%s has no pipelined mode", nop_impl.name);
	nop_impl.setup(depth);
	nop_impl.pipe(depth, nops / 10, RUN_MAX_NS / 10);
	c0 = thread_cpu_ns();
	t0 = now_ns();
	nops = nop_impl.pipe(depth, nops, RUN_MAX_NS);
	t1 = now_ns();
	c1 = thread_cpu_ns();
	nop_impl.teardown();
	printf("{\"metric\":\"%s_pipe\",\"impl\":\"%s\",\"unit\":\"ops/s\",", prefix(),
	       nop_impl.name);
	printf("\"value\":%.1f,\"iters\":%llu,\"depth\":%u}\n",
	       nops * 1e9 / (double)(t1 - t0 ?: 1), nops, depth);
	printf("{\"metric\":\"%s_pipe_cpu\",\"impl\":\"%s\",\"unit\":\"ns/op\",", prefix(),
	       nop_impl.name);
	printf("\"value\":%.1f,\"iters\":%llu,\"depth\":%u}\n",
	       (c1 - c0) / (double)(nops ?: 1), nops, depth);
	flush_stdout();
}

/* Batches until @nops are done or @max_ns have passed: how many were. */
static unsigned long long run(unsigned int batch, unsigned long long nops,
			      unsigned long long max_ns)
{
	unsigned long long t0 = now_ns(), done = 0;

	for (unsigned int n = 1; done < nops; n++) {
		nop_impl.run_batch(batch);
		done += batch;
		if (!(n % CLOCK_EVERY) && now_ns() - t0 >= max_ns)
			break;
	}
	return done;
}

/*
 * Runs up to @nops NOPs (a whole number of batches) and prints the line.
 * A tenth as many go first, untimed: the first batches fault in the
 * rings and the buffers and warm the caches, which is not what is
 * measured.
 */
static void bench(unsigned int batch, unsigned long long nops)
{
	unsigned long long t0, t1;

	nop_impl.setup(batch);
	run(batch, nops / 10, RUN_MAX_NS / 10);
	t0 = now_ns();
	nops = run(batch, nops, RUN_MAX_NS);
	t1 = now_ns();
	nop_impl.teardown();
	printf("{\"metric\":\"%s_b%u\",\"impl\":\"%s\",\"unit\":\"ops/s\",",
	       prefix(), batch, nop_impl.name);
	printf("\"value\":%.1f,\"iters\":%llu}\n",
	       nops * 1e9 / (double)(t1 - t0 ?: 1), nops);
	flush_stdout();
}

int main(int argc, char **argv)
{
	static const unsigned int batches[] = { 1, 32 };
	unsigned long long nops = NOPS_DEFAULT;
	unsigned int batch = 0, pipe = 0;
	double scale = 1;
	char *end;

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-smoke")) {
			nops = NOPS_SMOKE;
		} else if (!strcmp(argv[i], "-async")) {
			nop_async = 1;
		} else if (!strcmp(argv[i], "-batch") && i + 1 < argc) {
			batch = arg_u64(USAGE, "-batch", argv[++i], 1, BATCH_MAX);
		} else if (!strcmp(argv[i], "-pipe") && i + 1 < argc) {
			pipe = arg_u64(USAGE, "-pipe", argv[++i], 1, BATCH_MAX);
		} else if (!strcmp(argv[i], "-iters") && i + 1 < argc) {
			scale = strtod(argv[++i], &end);
			if (*end || !(scale > 0 && scale < 1e6))
				usage_die(USAGE, "-iters: '%s' is not a scale factor above 0",
					  argv[i]);
		} else {
			usage_die(USAGE, "unknown argument '%s'", argv[i]);
		}
	}
	if (nops == NOPS_DEFAULT)
		nops = (unsigned long long)(nops * scale) ?: 1;
	if (pipe && batch)
		usage_die(USAGE, "-batch and -pipe are two different runs");
	if (pipe) {
		/* A pipeline is worth measuring over many times its depth. */
		bench_pipe(pipe, nops < 8ULL * pipe ? 8ULL * pipe : nops);
		return 0;
	}

	for (size_t i = 0; i < ARRAY_SIZE(batches); i++) {
		unsigned int b = batch ?: batches[i];

		/* Whole batches only: round up. */
		bench(b, (nops + b - 1) / b * b);
		if (batch)
			break;
	}
	return 0;
}
