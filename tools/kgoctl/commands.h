/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgoctl's commands: how each is called, and its entry point. Each gets
 * its arguments from the command's name on, as main() got them, and
 * returns the exit status.
 */
#ifndef _KGOCTL_COMMANDS_H
#define _KGOCTL_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

#include "common.h"

/* Usage lines, after "kgoctl ": shared by help, errors and the man page. */
#define INFO_USAGE	"info [--json]"
#define RUN_USAGE	"run KIND [ARG...] [--count N] [--batch B] [--size BYTES] [--ioctl] [--inline] [--quiet] [--json]"
#define RUN_KINDS	"KIND: nop | spin NS | yield N | spawn FANOUT DEPTH | checksum\n" \
			"        | sleep NS | pingpong N | select N GAP_NS | block US\n" \
			"        | pingpong_hog NS LOOP"
#define STATS_USAGE	"stats [--json]"
#define SCHED_USAGE	"schedtrace MS [--count K] [--json]"
#define HELP_USAGE	"help [COMMAND] [--json]"
#define VERSION_USAGE	"version [--json]"

/* --json given before the command (kgoctl --json info): every command's. */
extern bool opt_json;

int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_schedtrace(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* help.c: kgoctl's usage, and a command's help, for help and --help. */
void print_usage(FILE *out);
__noreturn void help_exit(const char *name);
bool json_opts(int argc, char **argv, const char *name, const char *usage);

#endif /* _KGOCTL_COMMANDS_H */
