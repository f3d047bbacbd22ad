/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgo_bench: kgo's scheduler against the kernel's own mechanisms,
 * measured in one module load. Each workload file runs one comparison
 * on every implementation and reports each result as a JSON line.
 */
#ifndef _KGO_BENCH_H
#define _KGO_BENCH_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/time64.h>
#include <linux/types.h>

#include <kgo.h>

/**
 * struct kgo_bench_cfg - how big the run is
 * @smoke: tiny sizes, only to see that everything runs
 * @scale: multiplies every default size (not the smoke sizes)
 * @tree_depth: levels below the tree's root; 0 for the default
 */
struct kgo_bench_cfg {
	bool smoke;
	unsigned int scale;
	unsigned int tree_depth;
};

/* Whether impl= leaves @name, an implementation's name, to be run. */
bool kgo_bench_impl_wanted(const char *name);

/* A workload's size: @full scaled by cfg->scale, or @smoke. */
static inline u64 kgo_bench_size(const struct kgo_bench_cfg *cfg, u64 full,
				 u64 smoke)
{
	return cfg->smoke ? smoke : full * cfg->scale;
}

/*
 * The timed workloads are first run untimed at a tenth of their size,
 * so that what is timed finds caches (kgo's free Gs and stacks, worker
 * pools, the slab) warm, as a long-running user would; bench/go does
 * the same for Go's runtime.
 */
static inline u64 kgo_bench_warm_size(u64 n)
{
	return n / 10 ? n / 10 : 1;
}

/*
 * A run of n operations also stops after this long (times scale), and
 * reports what it did: under emulation, with the host's CPUs shared, one
 * cross-CPU wake-up can take milliseconds, and the suite must still end
 * in time. Warm-up runs and smoke runs get a tenth of it, or both.
 */
#define KGO_BENCH_RUN_NS	(3ULL * NSEC_PER_SEC)

static inline u64 kgo_bench_budget(const struct kgo_bench_cfg *cfg, bool warm)
{
	u64 ns = cfg->smoke ? KGO_BENCH_RUN_NS / 10 : KGO_BENCH_RUN_NS * cfg->scale;

	return warm ? ns / 10 : ns;
}

/* Checked every this many operations: ktime_get_ns() is not free. */
#define KGO_BENCH_CHECK_EVERY	64

/* Whether operation @i of a run that ends at @deadline is to be the last. */
static inline bool kgo_bench_stop(u64 i, u64 deadline)
{
	return !(i % KGO_BENCH_CHECK_EVERY) && ktime_get_ns() > deadline;
}

/*
 * Waits that may be long (a big run under emulation) wake up every few
 * seconds: the hung-task detector warns about a task that sleeps
 * uninterruptibly for two minutes without once running.
 */
#define KGO_BENCH_WAIT_SLICE_NS	(5ULL * NSEC_PER_SEC)

static inline void kgo_bench_wg_wait(struct kgo_waitgroup *wg)
{
	while (kgo_wg_wait_timeout(wg, KGO_BENCH_WAIT_SLICE_NS))
		;
}

static inline void kgo_bench_wait(struct completion *done)
{
	while (!wait_for_completion_timeout(done, nsecs_to_jiffies(KGO_BENCH_WAIT_SLICE_NS)))
		;
}

/* report.c: one JSON object per line, "kgo_bench: {...}". */
__printf(6, 7)
void kgo_bench_report(const char *metric, const char *impl, const char *unit,
		      u64 num, u64 den, const char *fmt, ...);
void kgo_bench_report_error(const char *metric, const char *impl, int err);
__printf(5, 6)
void kgo_bench_report_missing(const char *metric, const char *impl, const char *unit,
			      const char *reason, const char *fmt, ...);
void kgo_bench_report_config(void);
u64 kgo_bench_median(u64 *v, size_t n);

/* pin.c: leave goroutines one P. */
struct kgo_bench_pin {
	int prev;			/* kgo_gomaxprocs() before */
};

int kgo_bench_pin_start(struct kgo_bench_pin *pin);
void kgo_bench_pin_stop(struct kgo_bench_pin *pin);
int kgo_bench_nprocs(void);

/* The workloads, each in its own file. */
void kgo_bench_mem(const struct kgo_bench_cfg *cfg);
void kgo_bench_max_queued(const struct kgo_bench_cfg *cfg);
void kgo_bench_switch_raw(const struct kgo_bench_cfg *cfg);
void kgo_bench_spawn(const struct kgo_bench_cfg *cfg);
void kgo_bench_yield_pingpong(const struct kgo_bench_cfg *cfg);
void kgo_bench_chan_pingpong(const struct kgo_bench_cfg *cfg);
void kgo_bench_wake_latency(const struct kgo_bench_cfg *cfg);
void kgo_bench_tree_allp(const struct kgo_bench_cfg *cfg);
void kgo_bench_tree_1p(const struct kgo_bench_cfg *cfg);
void kgo_bench_fair_kgo_go(const struct kgo_bench_cfg *cfg);
void kgo_bench_fair_pingpong_hog(const struct kgo_bench_cfg *cfg);
void kgo_bench_blocking(const struct kgo_bench_cfg *cfg);
void kgo_bench_counts(const struct kgo_bench_cfg *cfg);
void kgo_bench_yield_n(const struct kgo_bench_cfg *cfg);
void kgo_bench_chan_buf(const struct kgo_bench_cfg *cfg);
void kgo_bench_select4(const struct kgo_bench_cfg *cfg);
void kgo_bench_chan_fanin(const struct kgo_bench_cfg *cfg);
void kgo_bench_mutex_contended(const struct kgo_bench_cfg *cfg);

/* switch_asm.S: kmod/switch_64.S, assembled under names of our own. */
void *kgo_bench_switch(unsigned long *save_sp, unsigned long *load_sp, void *prev);
void kgo_bench_g_entry(void);
void __noreturn kgo_bench_g_main(void *arg);

#endif /* _KGO_BENCH_H */
