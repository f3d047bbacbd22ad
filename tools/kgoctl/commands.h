/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgoctl's commands: how each is called, and its entry point. Each gets
 * its arguments from the command's name on, as main() got them, and
 * returns the exit status.
 */
#ifndef _KGOCTL_COMMANDS_H
#define _KGOCTL_COMMANDS_H

/* Usage lines, after "kgoctl ": shared by --help, errors and the table. */
#define INFO_USAGE	"info"
#define RUN_USAGE	"run KIND [ARG...] [--count N] [--batch B] [--size BYTES] [--ioctl] [--inline] [--quiet]"
#define RUN_KINDS	"KIND: nop | spin NS | yield N | spawn FANOUT DEPTH | checksum\n" \
			"        | sleep NS | pingpong N | select N GAP_NS | block US"
#define STATS_USAGE	"stats [--json]"
#define SCHED_USAGE	"schedtrace MS [--count K]"

int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_schedtrace(int argc, char **argv);

#endif /* _KGOCTL_COMMANDS_H */
