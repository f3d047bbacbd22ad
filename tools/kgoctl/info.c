// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl info: what the loaded module is, and whether its records are
 * the size this kgoctl was built for.
 */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/kgo.h>

#include "commands.h"
#include "common.h"
#include "device.h"

/* A record size the module reports, and ours when they differ. */
static void print_size(const char *name, __u32 theirs, size_t ours)
{
	if (!theirs)
		printf("%-16s ? (the module does not say)\n", name);
	else if (theirs != ours)
		printf("%-16s %u (this kgoctl: %zu)\n", name, theirs, ours);
	else
		printf("%-16s %u\n", name, theirs);
}

int cmd_info(int argc, char **argv)
{
	struct kgo_info info;
	int fd;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		printf("usage: %s " INFO_USAGE "\n", prog);
		return 0;
	}
	if (argc != 1)
		usage_die(INFO_USAGE, "info takes no arguments");
	fd = open_dev();
	get_info(fd, &info);
	close(fd);
	printf("%-16s %u\n", "abi_version", info.abi_version);
	/* 0 from a module older than the field. */
	if (info.version)
		printf("%-16s %u.%u.%u\n", "version", KGO_VERSION_MAJOR(info.version),
		       KGO_VERSION_MINOR(info.version), KGO_VERSION_PATCH(info.version));
	else
		printf("%-16s ? (the module does not say)\n", "version");
	printf("%-16s %u\n", "procs", info.nr_procs);
	printf("%-16s %u\n", "stack_size", info.stack_size);
	print_size("task_size", info.task_size, sizeof(struct kgo_task));
	print_size("completion_size", info.completion_size,
		   sizeof(struct kgo_completion));
	/* 0 from a module older than the field. */
	printf("%-16s %llu\n", "mem_budget", (unsigned long long)info.mem_budget);
	if (info.abi_version != KGO_ABI_VERSION)
		fprintf(stderr, "%s: warning: module speaks ABI %u, this kgoctl %u\n",
			prog, info.abi_version, KGO_ABI_VERSION);
	return 0;
}
