// SPDX-License-Identifier: GPL-2.0
/*
 * Results as JSON lines in the kernel log, the format every benchmark
 * of `make bench` prints and tools/bench/report reads:
 *
 *   kgo_bench: {"metric":"spawn","impl":"kgo","unit":"ns/op","value":812.5,"iters":1000}
 *
 * The kernel has no floating point: a value is a ratio of integers,
 * printed with three decimals. A failed run prints "error" and no
 * "value", which the report skips with a warning. Anything else this
 * module prints is plain text, which the report ignores.
 */

#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/printk.h>
#include <linux/sort.h>

#include "bench.h"

/**
 * kgo_bench_report() - print one result
 * @metric: what was measured, e.g. "spawn"
 * @impl: by which implementation, e.g. "kgo" or "workqueue"
 * @unit: of the value, e.g. "ns/op"
 * @num: the value is @num / @den
 * @den: not 0
 * @fmt: the object's further members, e.g. "\"iters\":%llu"
 */
void kgo_bench_report(const char *metric, const char *impl, const char *unit,
		      u64 num, u64 den, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;
	u64 milli;

	/* Rounded to the nearest thousandth; num stays far below 2^54. */
	milli = div64_u64(num * 1000 + den / 2, den);
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("{\"metric\":\"%s\",\"impl\":\"%s\",\"unit\":\"%s\",\"value\":%llu.%03llu,%pV}\n",
		metric, impl, unit, milli / 1000, milli % 1000, &vaf);
	va_end(args);
}

/* A run that failed: the line says so, and how. */
void kgo_bench_report_error(const char *metric, const char *impl, int err)
{
	pr_info("{\"metric\":\"%s\",\"impl\":\"%s\",\"error\":%d}\n",
		metric, impl, err);
}

static int kgo_bench_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v and returns its median (the lower one for even @n). */
u64 kgo_bench_median(u64 *v, size_t n)
{
	sort(v, n, sizeof(*v), kgo_bench_cmp_u64, NULL);
	return v[(n - 1) / 2];
}
