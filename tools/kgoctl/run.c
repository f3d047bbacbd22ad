// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl run: submits tasks of one kind, checks every completion that
 * comes back against what that kind promises, and reports throughput
 * and latencies. Through the fd's shared rings (libkgo), or with
 * --ioctl through KGO_IOC_SUBMIT and read(2).
 */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>

#include "kgo_crc32c.h"
#include "libkgo.h"

#include "commands.h"
#include "common.h"
#include "device.h"
#include "json.h"

static __u64 min_u64(__u64 a, __u64 b)
{
	return a < b ? a : b;
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
	{ "sleep",	KGO_TASK_SLEEP,		1 },
	{ "pingpong",	KGO_TASK_PINGPONG,	1 },
	{ "select",	KGO_TASK_SELECT,	2 },
	{ "block",	KGO_TASK_BLOCK,		1 },
	{ "pingpong_hog", KGO_TASK_PINGPONG_HOG, 2 },
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
	bool ioctl;		/* the older path, not the rings */
	bool inline_;		/* KGO_TASK_F_INLINE: run in the submitter */
	bool json;
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
	case KGO_TASK_SLEEP:
		o->args[0] = arg_u64(u, "sleep NS", args[0], 0, KGO_SLEEP_MAX_NS);
		break;
	case KGO_TASK_BLOCK:
		o->args[0] = arg_u64(u, "block US", args[0], 0, KGO_BLOCK_MAX_US);
		break;
	case KGO_TASK_PINGPONG:
		o->args[0] = arg_u64(u, "pingpong N", args[0], 0, KGO_PINGPONG_MAX);
		break;
	case KGO_TASK_SELECT:
		o->args[0] = arg_u64(u, "select N", args[0], 0, KGO_SELECT_TASK_MAX);
		o->args[1] = arg_u64(u, "select GAP_NS", args[1], 0, KGO_SELECT_GAP_MAX_NS);
		break;
	case KGO_TASK_PINGPONG_HOG:
		o->args[0] = arg_u64(u, "pingpong_hog NS", args[0], 1,
				     KGO_PINGPONG_HOG_MAX_NS);
		o->args[1] = arg_u64(u, "pingpong_hog LOOP", args[1], 1,
				     KGO_PINGPONG_HOG_MAX_LOOP);
		break;
	}
	if (o->size_given && o->kind->kind != KGO_TASK_CHECKSUM)
		usage_die(u, "--size is for checksum tasks only");
	if (o->inline_ && o->kind->kind != KGO_TASK_NOP && o->kind->kind != KGO_TASK_CHECKSUM)
		usage_die(u, "--inline is for nop and checksum tasks only");
}

static void parse_run(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "count",	required_argument,	NULL, 'n' },
		{ "batch",	required_argument,	NULL, 'b' },
		{ "size",	required_argument,	NULL, 's' },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ "ioctl",	no_argument,		NULL, 'i' },
		{ "inline",	no_argument,		NULL, 'I' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{}
	};
	const char *u = RUN_USAGE "\n  " RUN_KINDS;
	int c;

	*o = (struct run_opts){ .count = 1000, .batch = 64, .size = 4096,
				.json = opt_json };
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
		case 'i':
			o->ioctl = true;
			break;
		case 'I':
			o->inline_ = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			help_exit("run");
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
	struct kgo_ring ring;		/* without --ioctl */
	__u64 filled;			/* tags below this went into the SQ */

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

	bool progress;			/* stderr is a terminal, not --quiet */
	__u64 progress_at;		/* the next progress line, not before */
	int progress_len;		/* of the line shown, to clear it */
};

/*
 * The progress line: a run longer than PROGRESS_AFTER_NS shows, on a
 * terminal, how far it got, redrawn every PROGRESS_NS. Waits then end
 * every PROGRESS_NS to redraw it; they are waited again.
 */
#define PROGRESS_AFTER_NS	NSEC_PER_SEC
#define PROGRESS_NS		(250 * NSEC_PER_MSEC)

static void show_progress(struct run *r)
{
	__u64 now;
	int len;

	if (!r->progress)
		return;
	now = now_ns();
	if (now < r->progress_at)
		return;
	r->progress_at = now + PROGRESS_NS;
	len = fprintf(stderr, "\r%s run: %llu/%llu done, %llu in flight, %.1fs",
		      prog, r->nread, r->o->count, r->next - r->nread,
		      (double)(now - r->t0) / NSEC_PER_SEC);
	/* Over a longer line shown before: its tail must go. */
	if (len > 0 && len < r->progress_len)
		fprintf(stderr, "%*s", r->progress_len - len, "");
	if (len > r->progress_len)
		r->progress_len = len;
	fflush(stderr);
}

/* Before the summary, or a failure's message: no progress left behind. */
static void clear_progress(struct run *r)
{
	if (!r->progress_len)
		return;
	fprintf(stderr, "\r%*s\r", r->progress_len, "");
	fflush(stderr);
	r->progress_len = 0;
}

/* How long a wait may last: forever, or until the next progress line. */
static __u64 wait_timeout(const struct run *r)
{
	return r->progress ? PROGRESS_NS : KGO_WAIT_FOREVER;
}

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
	case KGO_TASK_SLEEP:
		if (c->result >= a[0])
			return true;
		fail(r, c->tag, "slept %llu ns, asked for at least %llu", c->result, a[0]);
		return false;
	case KGO_TASK_BLOCK:
		if (c->result >= a[0] * 1000)
			return true;
		fail(r, c->tag, "blocked %llu ns, asked for at least %llu us", c->result, a[0]);
		return false;
	case KGO_TASK_PINGPONG_HOG:
		/* Each turn counts LOOP times; the deadline ends it between turns. */
		if (c->result % a[1] == 0)
			return true;
		fail(r, c->tag, "counted %llu, not a multiple of %llu", c->result, a[1]);
		return false;
	case KGO_TASK_CHECKSUM:
		want = r->crcs[c->tag % NR_CSUM_BUFS];
		if (c->result == want)
			return true;
		fail(r, c->tag, "CRC32C 0x%08llx, expected 0x%08llx", c->result, want);
		return false;
	case KGO_TASK_YIELD:
	case KGO_TASK_PINGPONG:
	case KGO_TASK_SELECT:
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

/* kgo_prep_*() set every field: the flags come after. */
static void fill_task(const struct run *r, struct kgo_task *t, __u64 tag)
{
	if (r->o->kind->kind == KGO_TASK_CHECKSUM)
		kgo_prep_checksum(t, tag, r->bufs[tag % NR_CSUM_BUFS], r->o->size);
	else
		kgo_prep_task(t, r->o->kind->kind, tag, r->o->args[0], r->o->args[1]);
	t->flags = r->o->inline_ ? KGO_TASK_F_INLINE : 0;
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
		.timeout_ns = wait_timeout(r),
	};

	if (r->next == r->o->count)
		w.min_complete = min_u64(in_flight, r->rbuf_recs);
	while (ioctl(r->fd, KGO_IOC_WAIT, &w)) {
		if (errno == ETIMEDOUT) {
			show_progress(r);
			continue;
		}
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
		show_progress(r);
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

/*
 * Through the rings: fill the SQ with up to a batch, submit and, once
 * everything is submitted (or the SQ or CQ is full), wait in the same
 * call; then check every completion in the CQ. Entries the module
 * cannot take yet (-EBUSY: the CQ is full; -EAGAIN: a cap) stay in the
 * SQ for the next round.
 */
static void ring_setup(struct run *r)
{
	__u64 sq = 1;
	struct kgo_ring_params p;
	int ret;

	while (sq < r->o->batch && sq < KGO_RING_SQ_MAX)
		sq <<= 1;
	memset(&p, 0, sizeof(p));
	p.sq_entries = sq;
	ret = kgo_ring_init_params(r->fd, &r->ring, &p);
	if (ret)
		die_err(-ret, "KGO_IOC_RING_SETUP and mmap of a %llu-entry ring", sq);
}

/*
 * Checks the completions up to the tail as it is now. The clock is read
 * after the tail: each of them ended before "now", as check_times() wants
 * (later ones, seen by a loop that reads the tail again, may not have).
 */
static unsigned int ring_reap(struct run *r)
{
	struct kgo_completion *cqes[256];
	unsigned int n, i, total = 0;
	__u64 now;

	do {
		n = kgo_ring_peek_batch_cqe(&r->ring, cqes, ARRAY_SIZE(cqes));
		now = now_ns();
		for (i = 0; i < n; i++)
			check_completion(r, cqes[i], now);
		kgo_ring_cq_advance(&r->ring, n);
		total += n;
	} while (n == ARRAY_SIZE(cqes));
	r->nread += total;
	return total;
}

static void ring_loop(struct run *r)
{
	const struct run_opts *o = r->o;
	__u64 in_flight, entered;
	unsigned int wait;
	int ret;

	r->t0 = now_ns();
	while (r->next < o->count || r->nread < r->next) {
		struct kgo_task *t;
		__u64 n = 0;

		while (n < o->batch && r->filled < o->count && (t = kgo_ring_get_sqe(&r->ring))) {
			fill_task(r, t, r->filled++);
			n++;
		}
		in_flight = r->next - r->nread;
		/* All in the SQ: wait for as many as the CQ holds; else go on. */
		wait = 0;
		if (r->filled == o->count)
			wait = min_u64(in_flight + kgo_ring_sq_ready(&r->ring),
				       r->ring.cq_entries);
		show_progress(r);
		r->submits++;
		entered = now_ns();
		ret = kgo_ring_submit_and_wait_timeout(&r->ring, wait, wait_timeout(r));
		if (ret == -EBUSY || ret == -EAGAIN) {
			r->eagain++;
			if (!in_flight)
				die_stuck(r);
			ret = kgo_ring_enter(&r->ring, 0, 1, 0, wait_timeout(r));
		}
		if (ret == -ETIMEDOUT)
			ret = 0;	/* only a progress line is due */
		if (ret < 0 && ret != -EINTR)
			die_err(-ret, "KGO_IOC_ENTER (the task tagged %llu)", r->next);
		if (ret > 0) {
			if ((__u64)ret < kgo_ring_sq_ready(&r->ring) + ret)
				r->partial++;
			r->next += ret;
		}
		/*
		 * A wait returns early only once every task consumed has
		 * completed: if it brought nothing, nothing more will come
		 * (the missing tags are reported). Unless it may have ended
		 * for the progress line: then it is simply waited again.
		 */
		if (!ring_reap(r) && wait && ret >= 0 && !kgo_ring_sq_ready(&r->ring) &&
		    !(r->progress && now_ns() - entered >= PROGRESS_NS))
			break;
	}
	r->t1 = now_ns();
	check_missing(r);
}

/* ------------------------------------------------------------------ */
/* run: the summary                                                    */
/* ------------------------------------------------------------------ */

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

/* Sorts @v: the percentiles, and the maximum at its end. */
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
	printf("%-14s %llu %s (%llu partial, %llu %s)\n", "submit calls",
	       r->submits, o->ioctl ? "SUBMIT" : "ENTER", r->partial, r->eagain,
	       o->ioctl ? "EAGAIN" : "EBUSY/EAGAIN");
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

static void json_latency(struct json *j, const char *key, __u64 *v, __u64 n)
{
	if (!n) {
		json_null(j, key);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	json_object_begin(j, key);
	json_u64(j, "p50", percentile(v, n, 50));
	json_u64(j, "p99", percentile(v, n, 99));
	json_u64(j, "max", v[n - 1]);
	json_object_end(j);
}

/*
 * The summary's figures, unrounded: times in ns, throughput in tasks a
 * second. Keys the kind does not have (nodes, size) are absent.
 */
static void print_summary_json(struct run *r)
{
	const struct run_opts *o = r->o;
	__u64 wall = r->t1 - r->t0, ncpus = 0;
	struct json j;

	for (size_t i = 0; i < ARRAY_SIZE(r->cpus); i++)
		ncpus += __builtin_popcountll(r->cpus[i]);
	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	json_string(&j, "kind", o->kind->name);
	json_array_begin(&j, "args");
	for (unsigned int i = 0; i < o->kind->nargs; i++)
		json_u64(&j, NULL, o->args[i]);
	json_array_end(&j);
	if (o->kind->kind == KGO_TASK_SPAWN)
		json_u64(&j, "nodes", o->nodes);
	if (o->kind->kind == KGO_TASK_CHECKSUM)
		json_u64(&j, "size", o->size);
	json_string(&j, "path", o->ioctl ? "ioctl" : "ring");
	json_bool(&j, "inline", o->inline_);
	json_u64(&j, "count", o->count);
	json_u64(&j, "batch", o->batch);
	json_u64(&j, "submit_calls", r->submits);
	json_u64(&j, "partial", r->partial);
	json_u64(&j, "refused", r->eagain);
	json_u64(&j, "completed", r->nread);
	json_u64(&j, "failures", r->failures);
	json_array_begin(&j, "failures_shown");
	for (__u64 i = 0; i < r->failures && i < MAX_SHOWN; i++)
		json_string(&j, NULL, r->shown[i]);
	json_array_end(&j);
	json_u64(&j, "wall_ns", wall);
	json_u64(&j, "tasks_per_sec",
		 wall ? (__u64)((double)r->nread * NSEC_PER_SEC / wall + 0.5) : 0);
	json_u64(&j, "checked", r->nlat);
	json_latency(&j, "queue_to_start_ns", r->queue_ns, r->nlat);
	json_latency(&j, "start_to_end_ns", r->run_ns, r->nlat);
	json_u64(&j, "cpus", ncpus);
	json_u64(&j, "nr_procs", r->nr_procs);
	json_object_end(&j);
	json_end(&j);
}

/* A run that dies leaves no half-drawn progress line above the message. */
static struct run *dying_run;

static void run_before_die(void)
{
	if (dying_run)
		clear_progress(dying_run);
}

int cmd_run(int argc, char **argv)
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
	r->progress = !o.quiet && isatty(STDERR_FILENO);
	r->progress_at = now_ns() + PROGRESS_AFTER_NS;
	dying_run = r;
	before_die = run_before_die;
	if (o.ioctl) {
		run_loop(r);
	} else {
		ring_setup(r);
		ring_loop(r);
		kgo_ring_exit(&r->ring);
	}
	close(fd);
	clear_progress(r);
	if (o.json) {
		print_summary_json(r);
	} else if (!o.quiet) {
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
