// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl info: what the loaded module is, and whether its records are
 * the size this kgoctl was built for.
 */

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include <linux/kgo.h>

#include "commands.h"
#include "common.h"
#include "device.h"
#include "json.h"

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

static void print_info_human(const struct kgo_info *info)
{
	printf("%-16s %u\n", "abi_version", info->abi_version);
	/* 0 from a module older than the field. */
	if (info->version)
		printf("%-16s %u.%u.%u\n", "version", KGO_VERSION_MAJOR(info->version),
		       KGO_VERSION_MINOR(info->version), KGO_VERSION_PATCH(info->version));
	else
		printf("%-16s ? (the module does not say)\n", "version");
	printf("%-16s %u\n", "procs", info->nr_procs);
	printf("%-16s %u\n", "stack_size", info->stack_size);
	print_size("task_size", info->task_size, sizeof(struct kgo_task));
	print_size("completion_size", info->completion_size,
		   sizeof(struct kgo_completion));
	/* 0 from a module older than the field. */
	printf("%-16s %llu\n", "mem_budget", (unsigned long long)info->mem_budget);
}

/* A field the module left 0 because it is older than the field: null. */
static void json_u64_or_null(struct json *j, const char *key, __u64 v)
{
	if (v)
		json_u64(j, key, v);
	else
		json_null(j, key);
}

/*
 * Keys are struct kgo_info's members, as stats' are struct kgo_stats's;
 * "version" is the dotted string, "version_code" the number.
 */
static void print_info_json(const struct kgo_info *info)
{
	char version[32];
	struct json j;

	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	json_u64(&j, "abi_version", info->abi_version);
	if (info->version) {
		snprintf(version, sizeof(version), "%u.%u.%u",
			 KGO_VERSION_MAJOR(info->version),
			 KGO_VERSION_MINOR(info->version),
			 KGO_VERSION_PATCH(info->version));
		json_string(&j, "version", version);
	} else {
		json_null(&j, "version");
	}
	json_u64_or_null(&j, "version_code", info->version);
	json_u64(&j, "nr_procs", info->nr_procs);
	json_u64(&j, "stack_size", info->stack_size);
	json_u64_or_null(&j, "task_size", info->task_size);
	json_u64_or_null(&j, "completion_size", info->completion_size);
	json_u64_or_null(&j, "mem_budget", info->mem_budget);
	json_object_begin(&j, "kgoctl");
	json_string(&j, "version", KGO_VERSION);
	json_u64(&j, "abi_version", KGO_ABI_VERSION);
	json_u64(&j, "task_size", sizeof(struct kgo_task));
	json_u64(&j, "completion_size", sizeof(struct kgo_completion));
	json_object_end(&j);
	json_object_end(&j);
	json_end(&j);
}

int cmd_info(int argc, char **argv)
{
	struct kgo_info info;
	bool json;
	int fd;

	json = json_opts(argc, argv, "info", INFO_USAGE);
	if (optind != argc)
		usage_die(INFO_USAGE, "info takes no arguments");
	fd = open_dev();
	get_info(fd, &info);
	close(fd);
	if (json)
		print_info_json(&info);
	else
		print_info_human(&info);
	if (info.abi_version != KGO_ABI_VERSION)
		fprintf(stderr, "%s: warning: module speaks ABI %u, this kgoctl %u\n",
			prog, info.abi_version, KGO_ABI_VERSION);
	return 0;
}
