// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl's error reporting and the small helpers every command uses.
 */

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

const char *prog = "kgoctl";
void (*before_die)(void);

/* "EACCES (Permission denied)": the name is what people search for. */
void print_errno(int err, const char *what)
{
	const char *name = strerrorname_np(err);

	fprintf(stderr, "%s: %s: %s (%s)\n", prog, what, name ? name : "?",
		strerror(err));
}

static __noreturn void vdie_err(int err, const char *fmt, va_list ap)
{
	char what[256];

	vsnprintf(what, sizeof(what), fmt, ap);
	if (before_die)
		before_die();
	print_errno(err, what);
	if (err == ENOTTY && !strncmp(what, "KGO_IOC_", 8))
		fprintf(stderr, "%s: kgo.ko does not know this ioctl: older than %s?\n",
			prog, prog);
	exit(1);
}

__noreturn __printf(2, 3) void die_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie_err(err, fmt, ap);
}

__noreturn __printf(1, 2) void die_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vdie_err(err, fmt, ap);
}

/* For failures that are not an errno: the module broke a promise. */
__noreturn __printf(1, 2) void die(const char *fmt, ...)
{
	va_list ap;

	if (before_die)
		before_die();
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A usage error says what was wrong, then how the command is called. */
__noreturn __printf(2, 3) void usage_die(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s %s\n", prog, usage);
	exit(2);
}

/*
 * getopt_long() reports problems with argv[0], which is the command's
 * name here, not the program's: print them ourselves (opterr = 0).
 */
__noreturn void bad_option(const char *usage, int c, char **argv)
{
	if (c == ':')
		usage_die(usage, "option '%s' needs an argument", argv[optind - 1]);
	if (optopt)
		usage_die(usage, "unknown option '-%c'", optopt);
	usage_die(usage, "unknown option '%s'", argv[optind - 1]);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die_errno("allocate %zu x %zu bytes", n, size);
	return p;
}

/* Decimal only: "-1" must not turn into 2^64 - 1, nor "010" into eight. */
static bool parse_u64(const char *s, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

__u64 arg_u64(const char *usage, const char *what, const char *s,
	      __u64 min, __u64 max)
{
	__u64 v;

	if (!parse_u64(s, &v))
		usage_die(usage, "%s: '%s' is not a decimal number", what, s);
	if (v < min || v > max)
		usage_die(usage, "%s: %llu is not in %llu..%llu", what, v, min, max);
	return v;
}

__u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Stdout is the product: a full disk or a closed pipe is a failure too. */
void flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (!errno)
			errno = EIO;
		die_errno("write stdout");
	}
}
