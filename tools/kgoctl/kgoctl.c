// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl: drive kgo through /dev/kgo.
 *
 *   info        what the loaded module is
 *   run         submit tasks, check every completion, report latencies
 *   stats       one snapshot of the scheduler's counters
 *   schedtrace  a line of scheduler state every MS, like Go's
 *               GODEBUG=schedtrace
 *
 * No kernel address is ever printed: the ABI hands out none, and the only
 * pointers kgoctl passes in are its own buffers, which it does not print
 * either.
 *
 * This file only picks the command. Each command is in the file of its
 * name; common.c and device.c hold what they share.
 */

#include <stdio.h>
#include <string.h>

#include <linux/kgo.h>

#include "commands.h"
#include "common.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	const char *help;
} commands[] = {
	{ "info", cmd_info, INFO_USAGE,
	  "the loaded module: ABI version, Ps, stack and record sizes" },
	{ "run", cmd_run, RUN_USAGE,
	  "submit tasks, check every completion, report latencies\n      " RUN_KINDS },
	{ "stats", cmd_stats, STATS_USAGE,
	  "the scheduler's counters, per P, and its latency histogram" },
	{ "schedtrace", cmd_schedtrace, SCHED_USAGE,
	  "a line of scheduler state every MS ms, like GODEBUG=schedtrace" },
};

static void print_usage(FILE *out)
{
	fprintf(out, "usage: %s COMMAND [ARGS]\n\ncommands:\n", prog);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %s\n      %s\n", commands[i].usage, commands[i].help);
	fprintf(out, "\n%s --version prints kgoctl's version. See kgoctl(8).\n", prog);
}

int main(int argc, char **argv)
{
	int ret;

	if (argc < 2) {
		print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		/* The module's own version is kgoctl info's. */
		printf("kgoctl %s (ABI %u)\n", KGO_VERSION, KGO_ABI_VERSION);
		flush_stdout();
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		print_usage(stdout);
		flush_stdout();
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		ret = commands[i].fn(argc - 1, argv + 1);
		flush_stdout();
		return ret;
	}
	fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
	print_usage(stderr);
	return 2;
}
