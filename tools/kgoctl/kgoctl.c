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
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/kgo.h>

#include "kgo_crc32c.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define __noreturn		__attribute__((__noreturn__))
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))

#define NSEC_PER_USEC		1000ULL
#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL

/* Usage lines, after "kgoctl ": shared by --help, errors and the table. */
#define INFO_USAGE	"info"
#define RUN_USAGE	"run KIND [ARG...] [--count N] [--batch B] [--size BYTES] [--quiet]"
#define RUN_KINDS	"KIND: nop | spin NS | yield N | spawn FANOUT DEPTH | checksum"
#define STATS_USAGE	"stats [--json]"
#define SCHED_USAGE	"schedtrace MS [--count K]"

static const char *prog = "kgoctl";

/* ------------------------------------------------------------------ */
/* Errors and small helpers                                            */
/* ------------------------------------------------------------------ */

/* "EACCES (Permission denied)": the name is what people search for. */
static void print_errno(int err, const char *what)
{
	const char *name = strerrorname_np(err);

	fprintf(stderr, "%s: %s: %s (%s)\n", prog, what, name ? name : "?",
		strerror(err));
}

static __noreturn __printf(1, 2) void die_errno(const char *fmt, ...)
{
	int err = errno;
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	print_errno(err, what);
	if (err == ENOTTY && !strncmp(what, "KGO_IOC_", 8))
		fprintf(stderr, "%s: kgo.ko does not know this ioctl: older than kgoctl?\n",
			prog);
	exit(1);
}

/* For failures that are not an errno: the module broke a promise. */
static __noreturn __printf(1, 2) void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A usage error says what was wrong, then how the command is called. */
static __noreturn __printf(2, 3) void usage_die(const char *usage, const char *fmt, ...)
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
static __noreturn void bad_option(const char *usage, int c, char **argv)
{
	if (c == ':')
		usage_die(usage, "option '%s' needs an argument", argv[optind - 1]);
	if (optopt)
		usage_die(usage, "unknown option '-%c'", optopt);
	usage_die(usage, "unknown option '%s'", argv[optind - 1]);
}

static void *xcalloc(size_t n, size_t size)
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

static __u64 arg_u64(const char *usage, const char *what, const char *s,
		     __u64 min, __u64 max)
{
	__u64 v;

	if (!parse_u64(s, &v))
		usage_die(usage, "%s: '%s' is not a decimal number", what, s);
	if (v < min || v > max)
		usage_die(usage, "%s: %llu is not in %llu..%llu", what, v, min, max);
	return v;
}

static __u64 min_u64(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* 950ns, 1.20us, 35.00ms, 1.500s */
static const char *fmt_ns(char *buf, size_t len, __u64 ns)
{
	if (ns < NSEC_PER_USEC)
		snprintf(buf, len, "%lluns", ns);
	else if (ns < NSEC_PER_MSEC)
		snprintf(buf, len, "%.2fus", (double)ns / NSEC_PER_USEC);
	else if (ns < NSEC_PER_SEC)
		snprintf(buf, len, "%.2fms", (double)ns / NSEC_PER_MSEC);
	else
		snprintf(buf, len, "%.3fs", (double)ns / NSEC_PER_SEC);
	return buf;
}

/* Stdout is the product: a full disk or a closed pipe is a failure too. */
static void flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (!errno)
			errno = EIO;
		die_errno("write stdout");
	}
}

/* ------------------------------------------------------------------ */
/* The device                                                          */
/* ------------------------------------------------------------------ */

static int open_dev(void)
{
	int fd = open(KGO_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	int err = errno;

	if (fd >= 0)
		return fd;
	print_errno(err, "open " KGO_DEVICE_PATH);
	if (err == ENOENT)
		fprintf(stderr, "%s: is kgo.ko loaded? (insmod kmod/kgo.ko)\n", prog);
	else if (err == EACCES)
		fprintf(stderr, "%s: " KGO_DEVICE_PATH " is root's only (0600)\n", prog);
	exit(1);
}

/*
 * Zeroed first: a module older than this struct writes back only what it
 * knows, and what it does not know then reads as 0.
 */
static void get_info(int fd, struct kgo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(fd, KGO_IOC_GET_INFO, info))
		die_errno("KGO_IOC_GET_INFO");
}

/*
 * Commands that submit work or interpret the module's records refuse a
 * different ABI version: that number is only bumped for changes that
 * the size convention cannot absorb.
 */
static void require_abi(int fd, struct kgo_info *info)
{
	get_info(fd, info);
	if (info->abi_version != KGO_ABI_VERSION)
		die("the module speaks ABI %u, this kgoctl ABI %u: rebuild one of them",
		    info->abi_version, KGO_ABI_VERSION);
}

/* One STATS snapshot: the counters and room for every P's record. */
struct snapshot {
	struct kgo_stats st;
	struct kgo_proc_stats *procs;
	__u32 cap;
};

/*
 * Room for 256 Ps covers most machines with one call; should there be
 * more, the call is repeated with room for all, so that the records
 * printed always come from one consistent call.
 */
static void get_stats(int fd, struct snapshot *s)
{
	if (!s->procs) {
		s->cap = 256;
		s->procs = xcalloc(s->cap, sizeof(*s->procs));
	}
	for (;;) {
		memset(&s->st, 0, sizeof(s->st));
		memset(s->procs, 0, s->cap * sizeof(*s->procs));
		s->st.size = sizeof(s->st);
		s->st.procs = (uintptr_t)s->procs;
		s->st.procs_max = s->cap;
		s->st.proc_size = sizeof(*s->procs);
		if (ioctl(fd, KGO_IOC_STATS, &s->st)) {
			if (errno == EINTR)
				continue;
			die_errno("KGO_IOC_STATS");
		}
		if (s->st.nr_procs <= s->cap)
			return;
		free(s->procs);
		s->cap = s->st.nr_procs;
		s->procs = xcalloc(s->cap, sizeof(*s->procs));
	}
}

/* ------------------------------------------------------------------ */
/* info                                                                */
/* ------------------------------------------------------------------ */

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

static int cmd_info(int argc, char **argv)
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
	printf("%-16s %u\n", "procs", info.nr_procs);
	printf("%-16s %u\n", "stack_size", info.stack_size);
	print_size("task_size", info.task_size, sizeof(struct kgo_task));
	print_size("completion_size", info.completion_size,
		   sizeof(struct kgo_completion));
	if (info.abi_version != KGO_ABI_VERSION)
		fprintf(stderr, "%s: warning: module speaks ABI %u, this kgoctl %u\n",
			prog, info.abi_version, KGO_ABI_VERSION);
	return 0;
}

/* ------------------------------------------------------------------ */
/* run: parsing                                                        */
/* ------------------------------------------------------------------ */

static const struct kind {
	const char *name;
	__u32 kind;
	unsigned int nargs;
} kinds[] = {
	{ "nop",	KGO_TASK_NOP,		0 },
	{ "spin",	KGO_TASK_SPIN,		1 },
	{ "yield",	KGO_TASK_YIELD,		1 },
	{ "spawn",	KGO_TASK_SPAWN,		2 },
	{ "checksum",	KGO_TASK_CHECKSUM,	0 },
};

#define RUN_MAX_COUNT	0xffffffffULL
#define RUN_MAX_BATCH	1048576ULL

struct run_opts {
	const struct kind *kind;
	__u64 args[2];		/* the KIND's arguments, as given */
	__u64 nodes;		/* spawn: the tree's size, its expected result */
	__u64 count;
	__u64 batch;
	__u64 size;		/* checksum: bytes per buffer */
	bool size_given;
	bool quiet;
};

/*
 * Nodes in a tree @fanout wide and @depth levels below the root, or 0
 * when that is over KGO_SPAWN_MAX_NODES. Stops adding as soon as it is:
 * @nodes grows by at least one a level, so a huge @depth ends quickly.
 */
static __u64 spawn_nodes(__u64 fanout, __u64 depth)
{
	__u64 nodes = 0, level = 1;

	for (__u64 d = 0; d <= depth; d++) {
		nodes += level;
		if (nodes > KGO_SPAWN_MAX_NODES)
			return 0;
		level *= fanout;	/* <= 2^17 * 64: no overflow */
	}
	return nodes;
}

static const struct kind *find_kind(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(name, kinds[i].name))
			return &kinds[i];
	return NULL;
}

static __noreturn void run_help(void)
{
	printf("usage: %s " RUN_USAGE "\n  " RUN_KINDS "\n", prog);
	exit(0);
}

/*
 * The module would refuse these with -EINVAL or -E2BIG on the first
 * task; saying which limit it is, before anything is submitted, is kinder.
 */
static void parse_kind_args(struct run_opts *o, char **args)
{
	const char *u = RUN_USAGE "\n  " RUN_KINDS;

	switch (o->kind->kind) {
	case KGO_TASK_SPIN:
		o->args[0] = arg_u64(u, "spin NS", args[0], 0, KGO_SPIN_MAX_NS);
		break;
	case KGO_TASK_YIELD:
		o->args[0] = arg_u64(u, "yield N", args[0], 0, KGO_YIELD_MAX);
		break;
	case KGO_TASK_SPAWN:
		o->args[0] = arg_u64(u, "spawn FANOUT", args[0], 1,
				     KGO_SPAWN_MAX_FANOUT);
		o->args[1] = arg_u64(u, "spawn DEPTH", args[1], 0, ~0ULL);
		o->nodes = spawn_nodes(o->args[0], o->args[1]);
		if (!o->nodes)
			usage_die(u, "spawn %llu %llu: the tree has more than %llu nodes",
				  o->args[0], o->args[1], KGO_SPAWN_MAX_NODES);
		break;
	}
	if (o->size_given && o->kind->kind != KGO_TASK_CHECKSUM)
		usage_die(u, "--size is for checksum tasks only");
}

static void parse_run(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "count",	required_argument,	NULL, 'n' },
		{ "batch",	required_argument,	NULL, 'b' },
		{ "size",	required_argument,	NULL, 's' },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ "help",	no_argument,		NULL, 'h' },
		{}
	};
	const char *u = RUN_USAGE "\n  " RUN_KINDS;
	int c;

	*o = (struct run_opts){ .count = 1000, .batch = 64, .size = 4096 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->count = arg_u64(u, "--count", optarg, 1, RUN_MAX_COUNT);
			break;
		case 'b':
			o->batch = arg_u64(u, "--batch", optarg, 1, RUN_MAX_BATCH);
			break;
		case 's':
			o->size = arg_u64(u, "--size", optarg, 1, KGO_CHECKSUM_MAX_LEN);
			o->size_given = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			run_help();
		default:
			bad_option(u, c, argv);
		}
	}
	if (optind >= argc)
		usage_die(u, "run needs a KIND");
	o->kind = find_kind(argv[optind]);
	if (!o->kind)
		usage_die(u, "unknown KIND '%s'", argv[optind]);
	if ((unsigned int)(argc - optind - 1) != o->kind->nargs)
		usage_die(u, "%s takes %u argument%s", o->kind->name,
			  o->kind->nargs, o->kind->nargs == 1 ? "" : "s");
	parse_kind_args(o, argv + optind + 1);
	o->batch = min_u64(o->batch, o->count);
}

/* ------------------------------------------------------------------ */
/* run: state                                                          */
/* ------------------------------------------------------------------ */

#define NR_CSUM_BUFS	4	/* checksum inputs: tag % 4 picks one */
#define MAX_CPUS	65536	/* more than any NR_CPUS Linux builds with */
#define MAX_SHOWN	8	/* failures described one by one */
#define RBUF_MIN_RECS	256

struct run {
	const struct run_opts *o;
	int fd;
	__u32 nr_procs;

	struct kgo_task *tasks;		/* one batch, refilled for each submit */
	void *rbuf;			/* records as read(2) returns them */
	size_t rec_size;		/* one record, as the module writes it */
	size_t rbuf_recs;
	unsigned char *bufs[NR_CSUM_BUFS];
	__u32 crcs[NR_CSUM_BUFS];

	__u64 next;			/* tags below this were accepted */
	__u64 nread;			/* records read */
	__u64 submits, partial, eagain;
	__u64 t0, t1;			/* first submit, last record read */

	__u64 *seen;			/* bitmap: tags that came back */
	__u64 *queue_ns;		/* started - queued, good records only */
	__u64 *run_ns;			/* ended - started */
	__u64 nlat;
	__u64 cpus[MAX_CPUS / 64];	/* bitmap: CPUs that ran a task */

	__u64 failures;
	char shown[MAX_SHOWN][160];
};

/* xorshift64: reproducible noise, so that a bad CRC can be chased. */
static void fill_random(unsigned char *p, size_t len, __u64 seed)
{
	__u64 x = seed;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x >> 56;
	}
}

static void setup_checksum(struct run *r)
{
	for (int i = 0; i < NR_CSUM_BUFS; i++) {
		r->bufs[i] = xcalloc(1, r->o->size);
		fill_random(r->bufs[i], r->o->size, 0x9e3779b97f4a7c15ULL * (i + 1));
		r->crcs[i] = kgo_crc32c(r->bufs[i], r->o->size);
	}
}

/*
 * The module's records may be longer than ours (a newer module: we read
 * the prefix we know) but not shorter: there is no older record layout.
 */
static void setup_run(struct run *r, const struct run_opts *o,
		      const struct kgo_info *info)
{
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->nr_procs = info->nr_procs;
	r->rec_size = info->completion_size ? info->completion_size :
					      sizeof(struct kgo_completion);
	if (r->rec_size < sizeof(struct kgo_completion))
		die("the module's completion records are %zu bytes, kgoctl needs %zu",
		    r->rec_size, sizeof(struct kgo_completion));
	r->rbuf_recs = o->batch > RBUF_MIN_RECS ? o->batch : RBUF_MIN_RECS;
	r->rbuf = xcalloc(r->rbuf_recs, r->rec_size);
	r->tasks = xcalloc(o->batch, sizeof(*r->tasks));
	r->seen = xcalloc((o->count + 63) / 64, sizeof(*r->seen));
	r->queue_ns = xcalloc(o->count, sizeof(*r->queue_ns));
	r->run_ns = xcalloc(o->count, sizeof(*r->run_ns));
	if (o->kind->kind == KGO_TASK_CHECKSUM)
		setup_checksum(r);
}

/* The process is about to exit, but a leak checker should stay quiet. */
static void free_run(struct run *r)
{
	for (int i = 0; i < NR_CSUM_BUFS; i++)
		free(r->bufs[i]);
	free(r->rbuf);
	free(r->tasks);
	free(r->seen);
	free(r->queue_ns);
	free(r->run_ns);
	free(r);
}

/* ------------------------------------------------------------------ */
/* run: checking completions                                           */
/* ------------------------------------------------------------------ */

static __printf(3, 4) void fail(struct run *r, __u64 tag, const char *fmt, ...)
{
	char *msg;
	int len;
	va_list ap;

	if (r->failures++ >= MAX_SHOWN)
		return;
	msg = r->shown[r->failures - 1];
	len = snprintf(msg, sizeof(r->shown[0]), "tag %llu: ", tag);
	va_start(ap, fmt);
	vsnprintf(msg + len, sizeof(r->shown[0]) - len, fmt, ap);
	va_end(ap);
}

static bool check_result(struct run *r, const struct kgo_completion *c)
{
	const __u64 *a = r->o->args;
	__u64 want;

	switch (c->kind) {
	case KGO_TASK_SPIN:
		if (c->result >= a[0])
			return true;
		fail(r, c->tag, "spun %llu ns, asked for at least %llu", c->result, a[0]);
		return false;
	case KGO_TASK_CHECKSUM:
		want = r->crcs[c->tag % NR_CSUM_BUFS];
		if (c->result == want)
			return true;
		fail(r, c->tag, "CRC32C 0x%08llx, expected 0x%08llx", c->result, want);
		return false;
	case KGO_TASK_YIELD:
		want = a[0];
		break;
	case KGO_TASK_SPAWN:
		want = r->o->nodes;
		break;
	default:
		want = 0;
		break;
	}
	if (c->result == want)
		return true;
	fail(r, c->tag, "result %llu, expected %llu", c->result, want);
	return false;
}

/*
 * CLOCK_MONOTONIC, as the ABI says: so the task was queued after kgoctl
 * took t0 and ended before the read that returned it.
 */
static bool check_times(struct run *r, const struct kgo_completion *c, __u64 now)
{
	if (c->started_ns && r->t0 <= c->queued_ns && c->queued_ns <= c->started_ns &&
	    c->started_ns <= c->ended_ns && c->ended_ns <= now)
		return true;
	fail(r, c->tag, "queued/started/ended/read at %+lld/%+lld/%+lld/%+lld ns: out of order",
	     (long long)(c->queued_ns - r->t0), (long long)(c->started_ns - r->t0),
	     (long long)(c->ended_ns - r->t0), (long long)(now - r->t0));
	return false;
}

/* -ECANCELED is a failure too: nothing here cancels, so someone else did. */
static bool check_status(struct run *r, const struct kgo_completion *c)
{
	/* Negated only in errno range: -INT_MIN would overflow. */
	int err = c->status < 0 && c->status > -4096 ? -c->status : 0;
	const char *name = err ? strerrorname_np(err) : NULL;

	if (!c->status)
		return true;
	if (name)
		fail(r, c->tag, "status %d %s (%s)", c->status, name, strerror(err));
	else
		fail(r, c->tag, "status %d, not an errno", c->status);
	return false;
}

/*
 * Every tag the run submitted must come back exactly once, done, with
 * the result its kind promises and times in order.
 */
static void check_completion(struct run *r, const struct kgo_completion *c, __u64 now)
{
	__u64 tag = c->tag, bit = 1ULL << (tag % 64);

	if (tag >= r->next) {
		fail(r, tag, "never submitted (%llu were)", r->next);
		return;
	}
	if (r->seen[tag / 64] & bit) {
		fail(r, tag, "completed twice");
		return;
	}
	r->seen[tag / 64] |= bit;
	if (!check_status(r, c))
		return;
	if (c->kind != r->o->kind->kind) {
		fail(r, tag, "kind %u, submitted as %u", c->kind, r->o->kind->kind);
		return;
	}
	if (c->cpu >= MAX_CPUS) {
		fail(r, tag, "done, but on CPU %u", c->cpu);
		return;
	}
	if (!check_result(r, c) || !check_times(r, c, now))
		return;
	r->cpus[c->cpu / 64] |= 1ULL << (c->cpu % 64);
	r->queue_ns[r->nlat] = c->started_ns - c->queued_ns;
	r->run_ns[r->nlat] = c->ended_ns - c->started_ns;
	r->nlat++;
}

/*
 * After the last record: tags that never came back (lost, or a duplicate
 * took their place), and those a stalled run never got to submit.
 */
static void check_missing(struct run *r)
{
	if (r->next < r->o->count)
		fail(r, r->next, "not submitted, nor the %llu after it: the run stalled",
		     r->o->count - r->next - 1);
	for (__u64 tag = 0; tag < r->next; tag++) {
		if (r->seen[tag / 64] == ~0ULL) {
			tag += 63;
			continue;
		}
		if (!(r->seen[tag / 64] & (1ULL << (tag % 64))))
			fail(r, tag, "no completion");
	}
}

/* ------------------------------------------------------------------ */
/* run: the submission loop                                            */
/* ------------------------------------------------------------------ */

static void fill_task(const struct run *r, struct kgo_task *t, __u64 tag)
{
	memset(t, 0, sizeof(*t));
	t->kind = r->o->kind->kind;
	t->tag = tag;
	if (t->kind == KGO_TASK_CHECKSUM) {
		t->args[0] = (uintptr_t)r->bufs[tag % NR_CSUM_BUFS];
		t->args[1] = r->o->size;
	} else {
		t->args[0] = r->o->args[0];
		t->args[1] = r->o->args[1];
	}
}

/*
 * Offers the module the next batch. Returns how many it accepted, or 0
 * if it accepted none because this fd's cap is reached (EAGAIN): then
 * completions must be read first. Any other refusal ends the run. After
 * a partial acceptance the caller simply submits the rest: the module
 * then either takes more or says why not.
 */
static __u64 submit_batch(struct run *r)
{
	__u64 n = min_u64(r->o->batch, r->o->count - r->next);
	struct kgo_submit sub = {
		.size = sizeof(sub),
		.tasks = (uintptr_t)r->tasks,
		.nr = n,
		.task_size = sizeof(*r->tasks),
	};
	int ret;

	for (__u64 i = 0; i < n; i++)
		fill_task(r, &r->tasks[i], r->next + i);
	do {
		r->submits++;
		ret = ioctl(r->fd, KGO_IOC_SUBMIT, &sub);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0 && errno == EAGAIN) {
		r->eagain++;
		return 0;
	}
	if (ret < 0)
		die_errno("KGO_IOC_SUBMIT (the task tagged %llu)", r->next);
	if (ret == 0 || (__u64)ret > n)
		die("KGO_IOC_SUBMIT accepted %d of %llu tasks and gave no error", ret, n);
	if ((__u64)ret < n)
		r->partial++;
	r->next += ret;
	return ret;
}

static void read_completions(struct run *r)
{
	struct kgo_completion c;
	ssize_t got;
	__u64 now;

	do {
		got = read(r->fd, r->rbuf, r->rbuf_recs * r->rec_size);
	} while (got < 0 && errno == EINTR);
	if (got < 0)
		die_errno("read " KGO_DEVICE_PATH);
	if (got == 0)
		die("read " KGO_DEVICE_PATH ": end of file with %llu tasks in flight",
		    r->next - r->nread);
	if ((size_t)got % r->rec_size)
		die("read " KGO_DEVICE_PATH ": %zd bytes, not whole %zu-byte records",
		    got, r->rec_size);
	now = now_ns();
	for (size_t off = 0; off < (size_t)got; off += r->rec_size) {
		memcpy(&c, (char *)r->rbuf + off, sizeof(c));
		check_completion(r, &c, now);
	}
	r->nread += got / r->rec_size;
}

/*
 * Waits for completions with KGO_IOC_WAIT rather than in read(2) alone:
 * WAIT also returns once nothing this fd has in flight could complete.
 * Should the module's count of our tasks in flight fall short of ours,
 * the run then ends with the missing tags reported, instead of a
 * read(2) that blocks forever. (A task that never finishes still blocks
 * here, as it would anywhere.) While tasks remain to be submitted one
 * completion is enough to make room; after that, waiting for a full
 * buffer saves reads. Returns false when nothing more will come.
 */
static bool wait_and_read(struct run *r)
{
	__u64 in_flight = r->next - r->nread;
	struct kgo_wait w = {
		.size = sizeof(w),
		.min_complete = 1,
		.timeout_ns = KGO_WAIT_FOREVER,
	};

	if (r->next == r->o->count)
		w.min_complete = min_u64(in_flight, r->rbuf_recs);
	while (ioctl(r->fd, KGO_IOC_WAIT, &w)) {
		if (errno != EINTR)
			die_errno("KGO_IOC_WAIT");
	}
	if (!w.ready)
		return false;
	read_completions(r);
	return true;
}

/* Reads what is ready without blocking, to keep the pipeline short. */
static bool ready_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* EAGAIN with nothing in flight: no completion will ever make room. */
static __noreturn void die_stuck(const struct run *r)
{
	die("KGO_IOC_SUBMIT: EAGAIN with nothing in flight: this fd's cap is below one task%s",
	    r->o->kind->kind == KGO_TASK_CHECKSUM ? " (try a smaller --size)" : "");
}

static void run_loop(struct run *r)
{
	r->t0 = now_ns();
	/* nread can pass next only through bogus records, already failed. */
	while (r->next < r->o->count || r->nread < r->next) {
		if (r->next < r->o->count) {
			if (submit_batch(r)) {
				if (ready_now(r->fd))
					read_completions(r);
				continue;
			}
			if (r->nread >= r->next)
				die_stuck(r);
		}
		if (!wait_and_read(r))
			break;
	}
	r->t1 = now_ns();
	check_missing(r);
}

/* ------------------------------------------------------------------ */
/* run: the summary                                                    */
/* ------------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least @pct% at or below it. */
static __u64 percentile(const __u64 *sorted, __u64 n, unsigned int pct)
{
	__u64 rank = (n * pct + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

static void print_latency(const char *name, __u64 *v, __u64 n)
{
	char a[32], b[32], c[32];

	if (!n) {
		printf("%-14s -\n", name);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("%-14s p50 %s  p99 %s  max %s\n", name,
	       fmt_ns(a, sizeof(a), percentile(v, n, 50)),
	       fmt_ns(b, sizeof(b), percentile(v, n, 99)),
	       fmt_ns(c, sizeof(c), v[n - 1]));
}

static void print_failures(FILE *f, const struct run *r)
{
	for (__u64 i = 0; i < r->failures && i < MAX_SHOWN; i++)
		fprintf(f, "  %s\n", r->shown[i]);
	if (r->failures > MAX_SHOWN)
		fprintf(f, "  ... and %llu more\n", r->failures - MAX_SHOWN);
}

static void print_summary(const struct run *r)
{
	const struct run_opts *o = r->o;
	__u64 wall = r->t1 - r->t0, ncpus = 0;
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(r->cpus); i++)
		ncpus += __builtin_popcountll(r->cpus[i]);
	printf("%-14s %s", "kind", o->kind->name);
	for (unsigned int i = 0; i < o->kind->nargs; i++)
		printf(" %llu", o->args[i]);
	if (o->kind->kind == KGO_TASK_SPAWN)
		printf(" (%llu goroutines a tree)", o->nodes);
	if (o->kind->kind == KGO_TASK_CHECKSUM)
		printf(", %llu-byte buffers", o->size);
	printf("\n%-14s %llu in batches of %llu\n", "tasks", o->count, o->batch);
	printf("%-14s %llu (%llu partial, %llu EAGAIN)\n", "submit calls",
	       r->submits, r->partial, r->eagain);
	printf("%-14s %llu\n", "failures", r->failures);
	print_failures(stdout, r);
	printf("%-14s %s\n", "wall", fmt_ns(buf, sizeof(buf), wall));
	printf("%-14s %.0f tasks/s\n", "throughput",
	       wall ? (double)r->nread * NSEC_PER_SEC / wall : 0.0);
	if (r->nlat != o->count)
		printf("%-14s of the %llu completions that checked out\n", "latencies",
		       r->nlat);
	print_latency("queue->start", r->queue_ns, r->nlat);
	print_latency("start->end", r->run_ns, r->nlat);
	printf("%-14s %llu (of %u Ps)\n", "cpus", ncpus, r->nr_procs);
}

static int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	struct kgo_info info;
	struct run *r;
	int fd, ret;

	parse_run(argc, argv, &o);
	fd = open_dev();
	require_abi(fd, &info);
	/* Big (the CPU bitmap): off the stack. */
	r = xcalloc(1, sizeof(*r));
	setup_run(r, &o, &info);
	r->fd = fd;
	run_loop(r);
	close(fd);
	if (!o.quiet) {
		print_summary(r);
	} else if (r->failures) {
		fprintf(stderr, "%s: run: %llu failures in %llu tasks\n", prog,
			r->failures, o.count);
		print_failures(stderr, r);
	}
	ret = r->failures ? 1 : 0;
	free_run(r);
	return ret;
}

/* ------------------------------------------------------------------ */
/* stats                                                               */
/* ------------------------------------------------------------------ */

/* One counter of a struct: its name is the JSON key, and a column header. */
struct field {
	const char *name;
	const char *label;	/* for people, in the global section */
	size_t off;
	size_t size;
};

#define FIELD(type, member, label) \
	{ #member, label, offsetof(type, member), sizeof(((type *)0)->member) }
#define GFIELD(member, label)	FIELD(struct kgo_stats, member, label)
#define PFIELD(member)		FIELD(struct kgo_proc_stats, member, NULL)

static const struct field global_fields[] = {
	GFIELD(nr_procs,	"Ps"),
	GFIELD(nr_procs_idle,	"idle Ps"),
	GFIELD(nr_ms,		"Ms"),
	GFIELD(nr_ms_idle,	"idle Ms"),
	GFIELD(nr_ms_spinning,	"spinning Ms"),
	GFIELD(goroutines,	"goroutines"),
	GFIELD(global_runq,	"global queue"),
	GFIELD(created_outside,	"created outside"),
	GFIELD(readied_outside,	"readied outside"),
};

static const struct field proc_fields[] = {
	PFIELD(id),		PFIELD(cpu),		PFIELD(idle),
	PFIELD(runq_len),	PFIELD(idle_ns),	PFIELD(gcreated),
	PFIELD(gstarted),	PFIELD(gfinished),	PFIELD(schedticks),
	PFIELD(runnext_hits),	PFIELD(globrunq_takes),	PFIELD(steal_attempts),
	PFIELD(steals),		PFIELD(stolen),		PFIELD(parks),
	PFIELD(readies),	PFIELD(yields),		PFIELD(mparks),
	PFIELD(mwakes),		PFIELD(spinning),
};

#define NR_PROC_FIELDS	ARRAY_SIZE(proc_fields)

static __u64 field_get(const void *base, const struct field *f)
{
	const char *p = (const char *)base + f->off;
	__u32 v32;
	__u64 v64;

	if (f->size == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

static __u32 nr_records(const struct snapshot *s)
{
	return s->st.nr_procs < s->cap ? s->st.nr_procs : s->cap;
}

/* Columns as wide as their widest cell, so that any P count lines up. */
static void print_proc_table(const struct snapshot *s)
{
	int width[NR_PROC_FIELDS];
	char cell[24];

	for (size_t f = 0; f < NR_PROC_FIELDS; f++) {
		width[f] = strlen(proc_fields[f].name);
		for (__u32 p = 0; p < nr_records(s); p++) {
			int len = snprintf(cell, sizeof(cell), "%llu",
					   field_get(&s->procs[p], &proc_fields[f]));

			if (len > width[f])
				width[f] = len;
		}
	}
	for (size_t f = 0; f < NR_PROC_FIELDS; f++)
		printf("%s%*s", f ? " " : "", width[f], proc_fields[f].name);
	putchar('\n');
	for (__u32 p = 0; p < nr_records(s); p++) {
		for (size_t f = 0; f < NR_PROC_FIELDS; f++)
			printf("%s%*llu", f ? " " : "", width[f],
			       field_get(&s->procs[p], &proc_fields[f]));
		putchar('\n');
	}
}

/*
 * 2^@i ns in the unit that makes it 1..512: a power of two is never a
 * round decimal, so 2^10 ns (1.024 us) shows as 1us, 2^20 as 1ms.
 */
static void fmt_pow2_ns(char *buf, size_t len, unsigned int i)
{
	static const char * const units[] = { "ns", "us", "ms", "s" };

	snprintf(buf, len, "%u%s", 1U << (i % 10), units[i / 10]);
}

/* Bucket i holds [2^i, 2^(i+1)) ns; the first also 0, the last all above. */
static void latency_label(char *buf, size_t len, unsigned int i)
{
	char lo[16], hi[16];

	fmt_pow2_ns(lo, sizeof(lo), i);
	fmt_pow2_ns(hi, sizeof(hi), i + 1);
	if (i == 0)
		snprintf(buf, len, "<%s", hi);
	else if (i == KGO_LATENCY_BUCKETS - 1)
		snprintf(buf, len, ">=%s", lo);
	else
		snprintf(buf, len, "%s-%s", lo, hi);
}

#define BAR_WIDTH	40

static void print_histogram(const struct snapshot *s)
{
	const __u64 *lat = s->st.latency;
	__u64 total = 0, most = 0;
	char label[32];

	for (int i = 0; i < KGO_LATENCY_BUCKETS; i++) {
		total += lat[i];
		if (lat[i] > most)
			most = lat[i];
	}
	printf("latency, runnable to running: %llu goroutines\n", total);
	if (!total)
		printf("  (none yet)\n");
	for (int i = 0; i < KGO_LATENCY_BUCKETS; i++) {
		int bar;

		if (!lat[i])
			continue;
		/* At least one '#': a bucket that is there should show. */
		bar = (int)((lat[i] * BAR_WIDTH + most - 1) / most);
		latency_label(label, sizeof(label), i);
		printf("  %-12s %12llu %6.2f%% %.*s\n", label, lat[i],
		       100.0 * lat[i] / total, bar,
		       "########################################");
	}
}

static void print_stats_human(const struct snapshot *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(global_fields); i++)
		printf("%-16s %llu\n", global_fields[i].label,
		       field_get(&s->st, &global_fields[i]));
	putchar('\n');
	print_proc_table(s);
	putchar('\n');
	print_histogram(s);
}

/* Keys are the struct members' names: stable, and greppable in kgo.h. */
static void print_stats_json(const struct snapshot *s)
{
	printf("{\n");
	for (size_t i = 0; i < ARRAY_SIZE(global_fields); i++)
		printf("  \"%s\": %llu,\n", global_fields[i].name,
		       field_get(&s->st, &global_fields[i]));
	printf("  \"procs\": [");
	for (__u32 p = 0; p < nr_records(s); p++) {
		printf("%s\n    {", p ? "," : "");
		for (size_t f = 0; f < NR_PROC_FIELDS; f++)
			printf("%s\"%s\": %llu", f ? ", " : "", proc_fields[f].name,
			       field_get(&s->procs[p], &proc_fields[f]));
		putchar('}');
	}
	printf("\n  ],\n  \"latency\": [");
	for (int i = 0; i < KGO_LATENCY_BUCKETS; i++)
		printf("%s%llu", i ? ", " : "", s->st.latency[i]);
	printf("]\n}\n");
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{}
	};
	struct snapshot s = {};
	struct kgo_info info;
	bool json = false;
	int c, fd;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: %s " STATS_USAGE "\n", prog);
			return 0;
		default:
			bad_option(STATS_USAGE, c, argv);
		}
	}
	if (optind != argc)
		usage_die(STATS_USAGE, "unexpected argument '%s'", argv[optind]);
	fd = open_dev();
	require_abi(fd, &info);
	get_stats(fd, &s);
	close(fd);
	if (json)
		print_stats_json(&s);
	else
		print_stats_human(&s);
	free(s.procs);
	return 0;
}

/* ------------------------------------------------------------------ */
/* schedtrace                                                          */
/* ------------------------------------------------------------------ */

/* Go's GODEBUG=schedtrace line; threads are Ms, runqueue the global queue. */
static void print_sched_line(const struct snapshot *s, __u64 since)
{
	const struct kgo_stats *st = &s->st;

	printf("SCHED %llums: gomaxprocs=%u idleprocs=%u threads=%u ",
	       since / NSEC_PER_MSEC, st->nr_procs, st->nr_procs_idle, st->nr_ms);
	printf("spinningthreads=%u idlethreads=%u runqueue=%llu goroutines=%llu [",
	       st->nr_ms_spinning, st->nr_ms_idle, st->global_runq, st->goroutines);
	for (__u32 p = 0; p < nr_records(s); p++)
		printf("%s%u", p ? " " : "", s->procs[p].runq_len);
	printf("]\n");
}

static void sleep_until(__u64 deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / NSEC_PER_SEC,
		.tv_nsec = deadline % NSEC_PER_SEC,
	};
	int err;

	/* Returns the error number itself; EINTR just means sleep on. */
	do {
		err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	} while (err == EINTR);
	if (err) {
		errno = err;
		die_errno("clock_nanosleep");
	}
}

static int cmd_schedtrace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count",	required_argument,	NULL, 'n' },
		{ "help",	no_argument,		NULL, 'h' },
		{}
	};
	struct snapshot s = {};
	struct kgo_info info;
	__u64 period, count = 0, t0, deadline, now;
	int c, fd;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			count = arg_u64(SCHED_USAGE, "--count", optarg, 1, ~0ULL);
			break;
		case 'h':
			printf("usage: %s " SCHED_USAGE "\n", prog);
			return 0;
		default:
			bad_option(SCHED_USAGE, c, argv);
		}
	}
	if (argc - optind != 1)
		usage_die(SCHED_USAGE, "schedtrace takes one argument, MS");
	/* Bounded so that deadlines cannot overflow in any lifetime. */
	period = arg_u64(SCHED_USAGE, "MS", argv[optind], 1, 1ULL << 32) * NSEC_PER_MSEC;
	fd = open_dev();
	require_abi(fd, &info);

	/*
	 * Absolute deadlines, so the lines do not drift by the time each
	 * takes; ticks missed while stopped (^Z) are skipped, not caught up.
	 */
	t0 = now_ns();
	deadline = t0;
	for (__u64 line = 0; !count || line < count; line++) {
		if (line)
			sleep_until(deadline);
		now = now_ns();
		get_stats(fd, &s);
		print_sched_line(&s, now - t0);
		flush_stdout();
		while (deadline <= now)
			deadline += period;
	}
	close(fd);
	free(s.procs);
	return 0;
}

/* ------------------------------------------------------------------ */
/* main                                                                */
/* ------------------------------------------------------------------ */

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
	fprintf(out, "\nSee kgoctl(8).\n");
}

int main(int argc, char **argv)
{
	int ret;

	if (argc < 2) {
		print_usage(stderr);
		return 2;
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
