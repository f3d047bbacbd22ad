// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl stats: one snapshot of the scheduler's counters, global and per
 * P, and its latency histogram, for people or as JSON.
 */

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/kgo.h>

#include "commands.h"
#include "common.h"
#include "device.h"
#include "json.h"

/* One counter of a struct: its name is the JSON key, and a column header. */
struct field {
	const char *name;
	const char *label;	/* for people, in the global section */
	size_t off;
	size_t size;
};

#define FIELD(type, member, label) \
	{ #member, label, offsetof(type, member), sizeof(((type *)0)->member) }
#define GFIELD(member, label)	FIELD(struct kgo_stats, member, label)
#define PFIELD(member)		FIELD(struct kgo_proc_stats, member, NULL)

static const struct field global_fields[] = {
	GFIELD(nr_procs,	"Ps"),
	GFIELD(nr_procs_idle,	"idle Ps"),
	GFIELD(nr_ms,		"Ms"),
	GFIELD(nr_ms_idle,	"idle Ms"),
	GFIELD(nr_ms_spinning,	"spinning Ms"),
	GFIELD(goroutines,	"goroutines"),
	GFIELD(global_runq,	"global queue"),
	GFIELD(created_outside,	"created outside"),
	GFIELD(readied_outside,	"readied outside"),
	GFIELD(sqpoll_ns,	"SQ pollers' ns awake"),
	GFIELD(sqpoll_tasks,	"SQ pollers' tasks"),
};

static const struct field proc_fields[] = {
	PFIELD(id),		PFIELD(cpu),		PFIELD(idle),
	PFIELD(runq_len),	PFIELD(idle_ns),	PFIELD(gcreated),
	PFIELD(gstarted),	PFIELD(gfinished),	PFIELD(schedticks),
	PFIELD(runnext_hits),	PFIELD(globrunq_takes),	PFIELD(steal_attempts),
	PFIELD(steals),		PFIELD(stolen),		PFIELD(parks),
	PFIELD(readies),	PFIELD(yields),		PFIELD(mparks),
	PFIELD(mwakes),		PFIELD(spinning),
};

#define NR_PROC_FIELDS	ARRAY_SIZE(proc_fields)

static __u64 field_get(const void *base, const struct field *f)
{
	const char *p = (const char *)base + f->off;
	__u32 v32;
	__u64 v64;

	if (f->size == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

/* Columns as wide as their widest cell, so that any P count lines up. */
static void print_proc_table(const struct snapshot *s)
{
	int width[NR_PROC_FIELDS];
	char cell[24];

	for (size_t f = 0; f < NR_PROC_FIELDS; f++) {
		width[f] = strlen(proc_fields[f].name);
		for (__u32 p = 0; p < nr_records(s); p++) {
			int len = snprintf(cell, sizeof(cell), "%llu",
					   field_get(&s->procs[p], &proc_fields[f]));

			if (len > width[f])
				width[f] = len;
		}
	}
	for (size_t f = 0; f < NR_PROC_FIELDS; f++)
		printf("%s%*s", f ? " " : "", width[f], proc_fields[f].name);
	putchar('\n');
	for (__u32 p = 0; p < nr_records(s); p++) {
		for (size_t f = 0; f < NR_PROC_FIELDS; f++)
			printf("%s%*llu", f ? " " : "", width[f],
			       field_get(&s->procs[p], &proc_fields[f]));
		putchar('\n');
	}
}

/*
 * 2^@i ns in the unit that makes it 1..512: a power of two is never a
 * round decimal, so 2^10 ns (1.024 us) shows as 1us, 2^20 as 1ms.
 */
static void fmt_pow2_ns(char *buf, size_t len, unsigned int i)
{
	static const char * const units[] = { "ns", "us", "ms", "s" };

	snprintf(buf, len, "%u%s", 1U << (i % 10), units[i / 10]);
}

/* Bucket i holds [2^i, 2^(i+1)) ns; the first also 0, the last all above. */
static void latency_label(char *buf, size_t len, unsigned int i)
{
	char lo[16], hi[16];

	fmt_pow2_ns(lo, sizeof(lo), i);
	fmt_pow2_ns(hi, sizeof(hi), i + 1);
	if (i == 0)
		snprintf(buf, len, "<%s", hi);
	else if (i == KGO_LATENCY_BUCKETS - 1)
		snprintf(buf, len, ">=%s", lo);
	else
		snprintf(buf, len, "%s-%s", lo, hi);
}

#define BAR_WIDTH	40

static void print_histogram(const struct snapshot *s)
{
	const __u64 *lat = s->st.latency;
	__u64 total = 0, most = 0;
	char label[32];

	for (int i = 0; i < KGO_LATENCY_BUCKETS; i++) {
		total += lat[i];
		if (lat[i] > most)
			most = lat[i];
	}
	printf("latency, runnable to running: %llu goroutines\n", total);
	if (!total)
		printf("  (none yet)\n");
	for (int i = 0; i < KGO_LATENCY_BUCKETS; i++) {
		int bar;

		if (!lat[i])
			continue;
		/* At least one '#': a bucket that is there should show. */
		bar = (int)((lat[i] * BAR_WIDTH + most - 1) / most);
		latency_label(label, sizeof(label), i);
		printf("  %-12s %12llu %6.2f%% %.*s\n", label, lat[i],
		       100.0 * lat[i] / total, bar,
		       "########################################");
	}
}

static void print_stats_human(const struct snapshot *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(global_fields); i++)
		printf("%-16s %llu\n", global_fields[i].label,
		       field_get(&s->st, &global_fields[i]));
	putchar('\n');
	print_proc_table(s);
	putchar('\n');
	print_histogram(s);
}

/* Keys are the struct members' names: stable, and greppable in kgo.h. */
static void print_stats_json(const struct snapshot *s)
{
	struct json j;

	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(global_fields); i++)
		json_u64(&j, global_fields[i].name, field_get(&s->st, &global_fields[i]));
	/* KGO_STATS_OWN: a caller's own figures, not the scheduler's. */
	json_bool(&j, "own", s->st.flags & KGO_STATS_OWN);
	json_array_begin(&j, "procs");
	for (__u32 p = 0; p < nr_records(s); p++) {
		json_object_begin(&j, NULL);
		for (size_t f = 0; f < NR_PROC_FIELDS; f++)
			json_u64(&j, proc_fields[f].name,
				 field_get(&s->procs[p], &proc_fields[f]));
		json_object_end(&j);
	}
	json_array_end(&j);
	json_array_begin(&j, "latency");
	for (int i = 0; i < KGO_LATENCY_BUCKETS; i++)
		json_u64(&j, NULL, s->st.latency[i]);
	json_array_end(&j);
	json_object_end(&j);
	json_end(&j);
}

int cmd_stats(int argc, char **argv)
{
	struct snapshot s = {};
	struct kgo_info info;
	bool json;
	int fd;

	json = json_opts(argc, argv, "stats", STATS_USAGE);
	if (optind != argc)
		usage_die(STATS_USAGE, "unexpected argument '%s'", argv[optind]);
	fd = open_dev();
	require_abi(fd, &info);
	get_stats(fd, &s);
	close(fd);
	if (json)
		print_stats_json(&s);
	else
		print_stats_human(&s);
	free(s.procs);
	return 0;
}
