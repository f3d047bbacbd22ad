// SPDX-License-Identifier: GPL-2.0
/*
 * Results as JSON lines in the kernel log, the format every benchmark
 * of `make bench` prints and tools/bench/report reads:
 *
 *   kgo_bench: {"metric":"spawn","impl":"kgo","unit":"ns/op","value":812.5,"iters":1000}
 *
 * The kernel has no floating point: a value is a ratio of integers,
 * printed with three decimals. A failed run prints "error" and no
 * "value"; a figure that could not be measured prints "missing" with
 * the reason, and no value: never a stand-in. The first line of a load
 * is the configuration the figures were taken on ("config"). Anything
 * else this module prints is plain text, which the report ignores.
 */

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/preempt.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/utsname.h>
#ifdef CONFIG_X86
#include <asm/processor.h>
#endif

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

/* A figure that this run could not measure, and why (no value). */
void kgo_bench_report_missing(const char *metric, const char *impl, const char *unit,
			      const char *reason, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("{\"metric\":\"%s\",\"impl\":\"%s\",\"unit\":\"%s\",\"missing\":\"%s\",%pV}\n",
		metric, impl, unit, reason, &vaf);
	va_end(args);
}

/*
 * The preemption model the kernel runs now: with PREEMPT_DYNAMIC the
 * boot's preempt= picks it, so the build's configuration does not say.
 */
static const char *kgo_bench_preempt_model(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		return "rt";
#ifdef CONFIG_ARCH_HAS_PREEMPT_LAZY	/* 6.13 on: the lazy model */
	if (preempt_model_lazy())
		return "lazy";
#endif
	if (preempt_model_full())
		return "full";
	if (preempt_model_voluntary())
		return "voluntary";
	if (preempt_model_none())
		return "none";
	return "unknown";
}

static const char *json_bool(bool b)
{
	return b ? "true" : "false";
}

/*
 * What the figures were taken on, as one "config" line: each of these
 * changes at least one row (a preemptible RCU read side, the notifiers
 * kgo's Ms hang on, the cost of a kernel entry with mitigations, the
 * CPU that QEMU emulates). The report puts it in results.json and in
 * the table's header.
 */
void kgo_bench_report_config(void)
{
	const char *cpu = "unknown";
	const char *mitigations = cpu_mitigations_off() ? "off" :
				  cpu_mitigations_auto_nosmt() ? "auto,nosmt" : "auto";
	struct new_utsname *u = init_utsname();
	char *line;
	size_t n = 0;

#ifdef CONFIG_X86
	if (boot_cpu_data.x86_model_id[0])
		cpu = boot_cpu_data.x86_model_id;
#endif
	line = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!line)
		return;
	n += scnprintf(line + n, PAGE_SIZE - n, "{\"config\":{\"kernel\":\"%s\",", u->release);
	n += scnprintf(line + n, PAGE_SIZE - n, "\"kernel_build\":\"%s\",", u->version);
	n += scnprintf(line + n, PAGE_SIZE - n, "\"machine\":\"%s\",", u->machine);
	n += scnprintf(line + n, PAGE_SIZE - n, "\"preempt\":\"%s\",", kgo_bench_preempt_model());
	n += scnprintf(line + n, PAGE_SIZE - n, "\"preempt_dynamic\":%s,",
		       json_bool(IS_ENABLED(CONFIG_PREEMPT_DYNAMIC)));
	n += scnprintf(line + n, PAGE_SIZE - n, "\"preempt_rcu\":%s,",
		       json_bool(IS_ENABLED(CONFIG_PREEMPT_RCU)));
	n += scnprintf(line + n, PAGE_SIZE - n, "\"preempt_notifiers\":%s,",
		       json_bool(IS_ENABLED(CONFIG_PREEMPT_NOTIFIERS)));
	n += scnprintf(line + n, PAGE_SIZE - n, "\"mitigations\":\"%s\",", mitigations);
	n += scnprintf(line + n, PAGE_SIZE - n, "\"cpu_model\":\"%s\",", cpu);
	scnprintf(line + n, PAGE_SIZE - n, "\"cpus\":%u}}", num_online_cpus());
	pr_info("%s\n", line);
	kfree(line);
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
