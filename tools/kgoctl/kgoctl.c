// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl: drive kgo through /dev/kgo.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>

static const char *prog = "kgoctl";

/* "EACCES (Permission denied)": the name is what people search for. */
static void die_errno(const char *what)
{
	int err = errno;
	const char *name = strerrorname_np(err);

	fprintf(stderr, "%s: %s: %s (%s)\n", prog, what, name ? name : "?",
		strerror(err));
	if (err == ENOENT && !strcmp(what, "open " KGO_DEVICE_PATH))
		fprintf(stderr, "%s: is kgo.ko loaded? (insmod kmod/kgo.ko)\n", prog);
	exit(1);
}

static int open_dev(void)
{
	int fd = open(KGO_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die_errno("open " KGO_DEVICE_PATH);
	return fd;
}

static int cmd_info(int argc, char **argv)
{
	struct kgo_info info = { .size = sizeof(info) };
	int fd;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: %s info\n", prog);
		return 2;
	}
	fd = open_dev();
	if (ioctl(fd, KGO_IOC_GET_INFO, &info))
		die_errno("KGO_IOC_GET_INFO");
	close(fd);
	printf("abi_version %u\n", info.abi_version);
	printf("procs       %u\n", info.nr_procs);
	printf("stack_size  %u\n", info.stack_size);
	if (info.abi_version != KGO_ABI_VERSION)
		fprintf(stderr, "%s: warning: module speaks ABI %u, this kgoctl %u\n",
			prog, info.abi_version, KGO_ABI_VERSION);
	return 0;
}

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "info", cmd_info, "info            ABI version, Ps, goroutine stack size" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: %s COMMAND [ARGS]\n\ncommands:\n", prog);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %s\n", commands[i].help);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
	usage(stderr);
	return 2;
}
