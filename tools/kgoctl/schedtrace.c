// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl schedtrace: a line of scheduler state every MS milliseconds,
 * in the format of Go's GODEBUG=schedtrace.
 */

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <linux/kgo.h>

#include "commands.h"
#include "common.h"
#include "device.h"
#include "json.h"

/* Go's GODEBUG=schedtrace line; threads are Ms, runqueue the global queue. */
static void print_sched_line(const struct snapshot *s, __u64 since)
{
	const struct kgo_stats *st = &s->st;

	printf("SCHED %llums: gomaxprocs=%u idleprocs=%u threads=%u ",
	       since / NSEC_PER_MSEC, st->nr_procs, st->nr_procs_idle, st->nr_ms);
	printf("spinningthreads=%u idlethreads=%u runqueue=%llu goroutines=%llu [",
	       st->nr_ms_spinning, st->nr_ms_idle, st->global_runq, st->goroutines);
	for (__u32 p = 0; p < nr_records(s); p++)
		printf("%s%u", p ? " " : "", s->procs[p].runq_len);
	printf("]\n");
}

/* The same, as one JSON object a line; keys are struct kgo_stats's. */
static void print_sched_json(const struct snapshot *s, __u64 since)
{
	const struct kgo_stats *st = &s->st;
	struct json j;

	json_init(&j, stdout, true);
	json_object_begin(&j, NULL);
	json_u64(&j, "ms", since / NSEC_PER_MSEC);
	json_u64(&j, "nr_procs", st->nr_procs);
	json_u64(&j, "nr_procs_idle", st->nr_procs_idle);
	json_u64(&j, "nr_ms", st->nr_ms);
	json_u64(&j, "nr_ms_spinning", st->nr_ms_spinning);
	json_u64(&j, "nr_ms_idle", st->nr_ms_idle);
	json_u64(&j, "global_runq", st->global_runq);
	json_u64(&j, "goroutines", st->goroutines);
	json_array_begin(&j, "runq_len");
	for (__u32 p = 0; p < nr_records(s); p++)
		json_u64(&j, NULL, s->procs[p].runq_len);
	json_array_end(&j);
	json_object_end(&j);
	json_end(&j);
}

static void sleep_until(__u64 deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / NSEC_PER_SEC,
		.tv_nsec = deadline % NSEC_PER_SEC,
	};
	int err;

	/* Returns the error number itself; EINTR just means sleep on. */
	do {
		err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	} while (err == EINTR);
	if (err) {
		errno = err;
		die_errno("clock_nanosleep");
	}
}

int cmd_schedtrace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count",	required_argument,	NULL, 'n' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{}
	};
	struct snapshot s = {};
	struct kgo_info info;
	__u64 period, count = 0, t0, deadline, now;
	bool json = opt_json;
	int c, fd;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			count = arg_u64(SCHED_USAGE, "--count", optarg, 1, ~0ULL);
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			help_exit("schedtrace");
		default:
			bad_option(SCHED_USAGE, c, argv);
		}
	}
	if (argc - optind != 1)
		usage_die(SCHED_USAGE, "schedtrace takes one argument, MS");
	/* Bounded so that deadlines cannot overflow in any lifetime. */
	period = arg_u64(SCHED_USAGE, "MS", argv[optind], 1, 1ULL << 32) * NSEC_PER_MSEC;
	fd = open_dev();
	require_abi(fd, &info);

	/*
	 * Absolute deadlines, so the lines do not drift by the time each
	 * takes; ticks missed while stopped (^Z) are skipped, not caught up.
	 */
	t0 = now_ns();
	deadline = t0;
	for (__u64 line = 0; !count || line < count; line++) {
		if (line)
			sleep_until(deadline);
		now = now_ns();
		get_stats(fd, &s);
		if (json)
			print_sched_json(&s, now - t0);
		else
			print_sched_line(&s, now - t0);
		flush_stdout();
		while (deadline <= now)
			deadline += period;
	}
	close(fd);
	free(s.procs);
	return 0;
}
