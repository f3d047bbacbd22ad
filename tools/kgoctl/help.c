// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl help [COMMAND] and every command's --help: what each command
 * does and every option it takes, from one table. The man page, the
 * bash completion and this table list the same options; tests/check.sh
 * compares them.
 */

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kgo.h>

#include "commands.h"
#include "common.h"
#include "json.h"

struct opt_help {
	const char *name;	/* the long option, with its dashes */
	const char *arg;	/* its argument's name, or NULL */
	const char *help;
};

struct cmd_help {
	const char *name;
	const char *usage;
	const char *summary;		/* one line, for the command list */
	const char *more;		/* what help COMMAND adds, or NULL */
	const struct opt_help *opts;	/* ending with an empty entry */
};

#define OPT_JSON(what)	{ "--json", NULL, what }
#define OPT_HELP	{ "--help", NULL, "this help" }

static const struct opt_help info_opts[] = {
	OPT_JSON("one JSON object, keyed by struct kgo_info's field names"),
	OPT_HELP,
	{}
};

static const struct opt_help run_opts[] = {
	{ "--count", "N", "tasks to run, 1..4294967295 (default 1000)" },
	{ "--batch", "B", "tasks per submitting call, 1..1048576 (default 64)" },
	{ "--size", "BYTES", "checksum: bytes per buffer, 1..1048576 (default 4096)" },
	{ "--ioctl", NULL, "KGO_IOC_SUBMIT and read(2), not the shared rings" },
	{ "--inline", NULL, "nop, checksum: run each task in kgoctl's own thread" },
	{ "--quiet", NULL, "no summary (failures still on stderr), no progress line" },
	OPT_JSON("the summary as one JSON object"),
	OPT_HELP,
	{}
};

static const struct opt_help stats_opts[] = {
	OPT_JSON("one JSON object, keyed by struct kgo_stats's field names"),
	OPT_HELP,
	{}
};

static const struct opt_help sched_opts[] = {
	{ "--count", "K", "stop after K lines (default: until killed)" },
	OPT_JSON("one JSON object a line (JSON Lines)"),
	OPT_HELP,
	{}
};

static const struct opt_help help_opts[] = {
	OPT_JSON("the commands, or the command, as JSON"),
	OPT_HELP,
	{}
};

static const struct opt_help version_opts[] = {
	OPT_JSON("one JSON object"),
	OPT_HELP,
	{}
};

static const struct cmd_help helps[] = {
	{ "info", INFO_USAGE,
	  "the loaded module: version, ABI version, Ps, stack and record sizes",
	  NULL, info_opts },
	{ "run", RUN_USAGE,
	  "submit tasks, check every completion, report latencies",
	  "kinds, and their ARGs:\n"
	  "  nop                   nothing; result 0\n"
	  "  spin NS               busy NS ns (<= 1000000000) without yielding\n"
	  "  yield N               yield N times (<= 10000000)\n"
	  "  spawn FANOUT DEPTH    a tree of goroutines, FANOUT (1..64) children a\n"
	  "                        node, DEPTH levels; at most 131072 nodes\n"
	  "  checksum              CRC32C of a --size byte buffer, checked here\n"
	  "  sleep NS              a timer sleep of NS ns (<= 10000000000)\n"
	  "  pingpong N            N round trips between two goroutines (<= 10000000)\n"
	  "  select N GAP_NS       N values (<= 1000000) one every GAP_NS ns\n"
	  "                        (<= 10000000), received in a select\n"
	  "  block US              block in the kernel US us (<= 10000000)\n"
	  "  pingpong_hog NS LOOP  two goroutines pass a token for NS ns\n"
	  "                        (1..10000000000), counting LOOP (1..10000000)\n"
	  "                        times a turn\n"
	  "\nOn a terminal, a run longer than a second shows its progress on stderr.\n",
	  run_opts },
	{ "stats", STATS_USAGE,
	  "the scheduler's counters, per P, and its latency histogram",
	  NULL, stats_opts },
	{ "schedtrace", SCHED_USAGE,
	  "a line of scheduler state every MS ms, like GODEBUG=schedtrace",
	  NULL, sched_opts },
	{ "help", HELP_USAGE,
	  "the commands, or one command's usage and options",
	  NULL, help_opts },
	{ "version", VERSION_USAGE,
	  "kgoctl's version (also: kgoctl --version)",
	  NULL, version_opts },
};

static const struct cmd_help *find_help(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(helps); i++)
		if (!strcmp(name, helps[i].name))
			return &helps[i];
	return NULL;
}

void print_usage(FILE *out)
{
	fprintf(out, "usage: %s [--json] COMMAND [ARGS]\n\ncommands:\n", prog);
	for (size_t i = 0; i < ARRAY_SIZE(helps); i++)
		fprintf(out, "  %-11s %s\n", helps[i].name, helps[i].summary);
	fprintf(out, "\n%s help COMMAND shows a command's options; %s --version its version.\n"
		"See kgoctl(8).\n", prog, prog);
}

static void print_cmd_help(FILE *out, const struct cmd_help *h)
{
	const struct opt_help *o;
	char opt[32];

	fprintf(out, "usage: %s %s\n\n%s.\n", prog, h->usage, h->summary);
	if (h->more)
		fprintf(out, "\n%s", h->more);
	fprintf(out, "\noptions:\n");
	for (o = h->opts; o->name; o++) {
		snprintf(opt, sizeof(opt), "%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(out, "  %-14s %s\n", opt, o->help);
	}
}

__noreturn void help_exit(const char *name)
{
	print_cmd_help(stdout, find_help(name));
	flush_stdout();
	exit(0);
}

/*
 * The options of a command that has none but --json and --help: --help
 * prints @name's help and exits, anything else is a usage error against
 * @usage. The arguments left start at optind.
 * Return: whether to print JSON (asked here, or before the command).
 */
bool json_opts(int argc, char **argv, const char *name, const char *usage)
{
	static const struct option longopts[] = {
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{}
	};
	bool json = opt_json;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			help_exit(name);
		default:
			bad_option(usage, c, argv);
		}
	}
	return json;
}

static void json_cmd(struct json *j, const struct cmd_help *h)
{
	json_object_begin(j, NULL);
	json_string(j, "name", h->name);
	json_string(j, "usage", h->usage);
	json_string(j, "summary", h->summary);
	json_array_begin(j, "options");
	for (const struct opt_help *o = h->opts; o->name; o++) {
		json_object_begin(j, NULL);
		json_string(j, "name", o->name);
		if (o->arg)
			json_string(j, "arg", o->arg);
		else
			json_null(j, "arg");
		json_string(j, "help", o->help);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

int cmd_help(int argc, char **argv)
{
	const struct cmd_help *h = NULL;
	struct json j;
	bool json;

	json = json_opts(argc, argv, "help", HELP_USAGE);
	if (argc - optind > 1)
		usage_die(HELP_USAGE, "help takes one COMMAND at most");
	if (argc - optind == 1) {
		h = find_help(argv[optind]);
		if (!h)
			usage_die(HELP_USAGE, "unknown command '%s'", argv[optind]);
	}
	if (!json) {
		if (h)
			print_cmd_help(stdout, h);
		else
			print_usage(stdout);
		return 0;
	}
	json_init(&j, stdout, false);
	if (h) {
		json_cmd(&j, h);
	} else {
		json_object_begin(&j, NULL);
		json_array_begin(&j, "commands");
		for (size_t i = 0; i < ARRAY_SIZE(helps); i++)
			json_cmd(&j, &helps[i]);
		json_array_end(&j);
		json_object_end(&j);
	}
	json_end(&j);
	return 0;
}

int cmd_version(int argc, char **argv)
{
	struct json j;
	bool json;

	json = json_opts(argc, argv, "version", VERSION_USAGE);
	if (optind != argc)
		usage_die(VERSION_USAGE, "unexpected argument '%s'", argv[optind]);
	/* The module's own version is kgoctl info's. */
	if (!json) {
		printf("kgoctl %s (ABI %u)\n", KGO_VERSION, KGO_ABI_VERSION);
		return 0;
	}
	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	json_string(&j, "version", KGO_VERSION);
	json_u64(&j, "abi_version", KGO_ABI_VERSION);
	json_object_end(&j);
	json_end(&j);
	return 0;
}
