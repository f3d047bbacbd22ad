/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every kgoctl command leans on: how it fails, how it reads a
 * number from the command line, the clock it measures with, and the
 * check that what it printed really got out. The NOP benchmarks
 * (bench/uring) use it too.
 */
#ifndef _KGOCTL_COMMON_H
#define _KGOCTL_COMMON_H

#include <stddef.h>

#include <linux/types.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define __noreturn		__attribute__((__noreturn__))
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))

#define NSEC_PER_USEC		1000ULL
#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL

extern const char *prog;

/* Called before a message that ends kgoctl: a command's cleanup of stderr. */
extern void (*before_die)(void);

/*
 * Messages on stderr after prog; all but print_errno() then exit.
 * die_errno() reports errno, die_err() an error number it is given
 * (liburing returns -errno).
 */
void print_errno(int err, const char *what);
__noreturn __printf(2, 3) void die_err(int err, const char *fmt, ...);
__noreturn __printf(1, 2) void die_errno(const char *fmt, ...);
__noreturn __printf(1, 2) void die(const char *fmt, ...);
__noreturn __printf(2, 3) void usage_die(const char *usage, const char *fmt, ...);
__noreturn void bad_option(const char *usage, int c, char **argv);

void *xcalloc(size_t n, size_t size);
__u64 arg_u64(const char *usage, const char *what, const char *s,
	      __u64 min, __u64 max);
__u64 now_ns(void);
void flush_stdout(void);

#endif /* _KGOCTL_COMMON_H */
