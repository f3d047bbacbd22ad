// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl: drive kgo through /dev/kgo.
 *
 *   info        what the loaded module is
 *   run         submit tasks, check every completion, report latencies
 *   stats       one snapshot of the scheduler's counters
 *   schedtrace  a line of scheduler state every MS, like Go's
 *               GODEBUG=schedtrace
 *   help        the commands, or one command's options
 *   version     kgoctl's own version
 *
 * Each takes --json, for scripts: one JSON object on stdout (schedtrace:
 * one a line). Errors stay text, on stderr, with the exit status.
 *
 * No kernel address is ever printed: the ABI hands out none, and the only
 * pointers kgoctl passes in are its own buffers, which it does not print
 * either.
 *
 * This file only picks the command. Each command is in the file of its
 * name (help and version: help.c); common.c, device.c and json.c hold
 * what they share.
 */

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common.h"

bool opt_json;

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "info",	cmd_info },
	{ "run",	cmd_run },
	{ "stats",	cmd_stats },
	{ "schedtrace",	cmd_schedtrace },
	{ "help",	cmd_help },
	{ "version",	cmd_version },
};

int main(int argc, char **argv)
{
	int ret;

	/* kgoctl --json COMMAND: as COMMAND --json. */
	if (argc >= 2 && !strcmp(argv[1], "--json")) {
		opt_json = true;
		argc--;
		argv++;
	}
	if (argc < 2) {
		print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version"))
		argv[1] = "version";
	else if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		argv[1] = "help";
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
