/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the adversarial selftests (fuzz, share, failslab, kill,
 * oom, memcg): a seeded PRNG, a table of every task submitted (to check
 * that each accepted one completes exactly once, and nothing else
 * does), a table-driven CRC32C for results, and readers of /proc and
 * sysfs files.
 *
 * Every function here is safe in a forked child: none uses the
 * harness's ASSERT or EXPECT macros.
 */
#ifndef _KGO_STRESS_H
#define _KGO_STRESS_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_crc32c.h"
#include "kgo_util.h"

#define REC		sizeof(struct kgo_completion)
#define MSEC		1000000ULL
#define USEC		1000ULL

/* xorshift64*: small, fast, and the same sequence for the same seed. */
struct rng {
	uint64_t s;
};

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	/* splitmix64 of the seed, so that 0 and small seeds are fine. */
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	r->s = (z ^ (z >> 31)) | 1;
}

static inline uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n), n > 0 (the modulo bias is irrelevant here). */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return rng_next(r) % n;
}

/* True with probability pct percent. */
static inline bool rng_pct(struct rng *r, unsigned int pct)
{
	return rng_below(r, 100) < pct;
}

/* The seed: $name if set (decimal or 0x), else from the clock. */
static inline uint64_t seed_from_env(const char *name)
{
	const char *s = getenv(name);

	if (s && *s)
		return strtoull(s, NULL, 0);
	return now_ns() ^ ((uint64_t)getpid() << 32);
}

/*
 * The book of tasks: one entry per descriptor a test handed to SUBMIT,
 * indexed by the low bits of its tag. A test may keep it in shared
 * memory (book_init(.., shared)) so that forked processes read
 * completions into the same book; updates are then atomic.
 */
enum {
	T_UNUSED,	/* no such tag */
	T_WRITTEN,	/* in a SUBMIT batch, not (yet) known accepted */
	T_ACCEPTED,	/* SUBMIT counted it: must complete exactly once */
	T_DONE,		/* its completion was read */
	T_ABANDONED,	/* accepted on an fd closed unread: no completion */
	T_REFUSED,	/* SUBMIT did not accept it: no completion */
};

struct tinfo {
	uint8_t state;
	uint8_t kind;
	uint8_t owner;		/* which fd or process submitted it */
	uint8_t dups;		/* completions read beyond the first */
	uint32_t aux;		/* kind-specific, e.g. a CHECKSUM length */
	uint64_t expect;	/* the result, where it is known */
};

struct book {
	struct tinfo *t;
	uint64_t cap;
	uint64_t next;		/* the next tag to hand out (shared: atomic) */
	uint64_t mask;		/* xor'ed into tags, so they use every bit */
	bool strict;		/* a completion before its SUBMIT returned is an error */
	/* KGO_CANCEL_RUNNING in use: a task may be cancelled after it started. */
	bool cancel_running;
	/*
	 * If set, a CHECKSUM entry's expect is an offset into this, aux its
	 * length, and the CRC is computed only when the task completes.
	 */
	const unsigned char *data;
	/* Counts, in the book so that processes sharing it share them. */
	uint64_t accepted, done, abandoned, errors;
	uint64_t status[8];	/* 0, ECANCELED, ENOMEM, EAGAIN, other */
	uint64_t logs;
};

#define BOOK_MAX_LOGS	20

/* A book of @cap tags; in MAP_SHARED memory when @shared. NULL on failure. */
static inline struct book *book_init(uint64_t cap, uint64_t mask, bool shared)
{
	size_t len = sizeof(struct book) + cap * sizeof(struct tinfo);
	struct book *b;

	b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (b == MAP_FAILED)
		return NULL;
	b->t = (struct tinfo *)(b + 1);
	b->cap = cap;
	b->mask = mask & ~0xffffffffULL;
	return b;
}

static inline void book_free(struct book *b)
{
	if (b)
		munmap(b, sizeof(*b) + b->cap * sizeof(struct tinfo));
}

static inline void __attribute__((format(printf, 2, 3)))
book_fail(struct book *b, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	__atomic_fetch_add(&b->errors, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&b->logs, 1, __ATOMIC_RELAXED) >= BOOK_MAX_LOGS)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# %s\n", line);
}

/* A fresh tag for a descriptor of @kind; ~0 when the book is full. */
static inline uint64_t book_new(struct book *b, uint32_t kind, uint8_t owner,
				uint64_t expect, uint32_t aux)
{
	uint64_t i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);

	if (i >= b->cap)
		return ~0ULL;
	b->t[i] = (struct tinfo){
		.state = T_WRITTEN, .kind = kind, .owner = owner,
		.expect = expect, .aux = aux,
	};
	return i ^ b->mask;
}

static inline struct tinfo *book_get(struct book *b, uint64_t tag)
{
	uint64_t i = tag ^ b->mask;

	if (i >= b->cap || i >= __atomic_load_n(&b->next, __ATOMIC_RELAXED))
		return NULL;
	return &b->t[i];
}

static inline void book_accept(struct book *b, uint64_t tag)
{
	struct tinfo *t = book_get(b, tag);
	uint8_t want = T_WRITTEN;

	/*
	 * A fast reader in another process may have read its completion
	 * already (T_DONE): that is fine, and counted there.
	 */
	if (t && __atomic_compare_exchange_n(&t->state, &want, T_ACCEPTED, false,
					     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_fetch_add(&b->accepted, 1, __ATOMIC_RELAXED);
}

/* SUBMIT stopped before this one: it must never complete. */
static inline void book_refuse(struct book *b, uint64_t tag)
{
	struct tinfo *t = book_get(b, tag);
	uint8_t want = T_WRITTEN;

	if (t && !__atomic_compare_exchange_n(&t->state, &want, T_REFUSED, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		book_fail(b, "tag %llu was refused by SUBMIT, but its completion was read",
			  (unsigned long long)(tag ^ b->mask));
}

/* The fd @owner is closed unread: its accepted tasks will never complete. */
static inline void book_abandon(struct book *b, uint8_t owner)
{
	uint64_t n = __atomic_load_n(&b->next, __ATOMIC_RELAXED);

	for (uint64_t i = 0; i < n && i < b->cap; i++) {
		if (b->t[i].owner == owner && b->t[i].state == T_ACCEPTED) {
			b->t[i].state = T_ABANDONED;
			b->abandoned++;
		}
	}
}

static inline int status_slot(int status)
{
	switch (status) {
	case 0: return 0;
	case -ECANCELED: return 1;
	case -ENOMEM: return 2;
	case -EAGAIN: return 3;
	default: return 4;
	}
}

/*
 * One completion read on the fd of @owner (~0: any owner may read it).
 * Checks that its tag was handed out and accepted (or is in a batch whose
 * SUBMIT has not returned yet: a fast reader elsewhere), that it is the
 * first completion of that tag, and that its fields agree with the
 * task. @allowed: ST_* bits, the statuses it may have.
 */
static inline void book_complete(struct book *b, const struct kgo_completion *c,
				 unsigned int owner, const uint64_t *allowed)
{
	struct tinfo *t = book_get(b, c->tag);
	unsigned long long tag = c->tag ^ b->mask;
	uint8_t old;
	int st = c->status;

	if (!t) {
		book_fail(b, "completion of unknown tag %#llx (status %d)",
			  (unsigned long long)c->tag, st);
		return;
	}
	old = __atomic_exchange_n(&t->state, T_DONE, __ATOMIC_RELAXED);
	if (old == T_DONE) {
		t->dups++;
		book_fail(b, "tag %llu completed again (status %d)", tag, st);
		return;
	}
	if (old != T_ACCEPTED && old != T_WRITTEN) {
		book_fail(b, "tag %llu completed in state %u (status %d)", tag, old, st);
		return;
	}
	if (old == T_WRITTEN) {
		/* Its SUBMIT has not returned yet, or did not accept it. */
		if (b->strict)
			book_fail(b, "tag %llu completed, but SUBMIT did not accept it", tag);
		__atomic_fetch_add(&b->accepted, 1, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&b->done, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&b->status[status_slot(st)], 1, __ATOMIC_RELAXED);
	if (owner != ~0U && t->owner != owner)
		book_fail(b, "tag %llu of fd %u read on fd %u", tag, t->owner, owner);
	if (c->kind != t->kind)
		book_fail(b, "tag %llu: kind %u, submitted as %u", tag, c->kind, t->kind);
	if (c->__reserved)
		book_fail(b, "tag %llu: __reserved %u", tag, c->__reserved);
	if (status_slot(st) == 4 || !(allowed[0] & (1ULL << status_slot(st)))) {
		book_fail(b, "tag %llu (kind %u): status %d", tag, c->kind, st);
		return;
	}
	if ((st == -ENOMEM || st == -EAGAIN) && c->kind != KGO_TASK_SPAWN &&
	    (st == -EAGAIN || (c->kind != KGO_TASK_PINGPONG && c->kind != KGO_TASK_SELECT)))
		book_fail(b, "tag %llu: kind %u cannot fail with status %d", tag, c->kind, st);
	if (st == -ECANCELED) {
		if (!c->started_ns && c->cpu == ~0U)
			return;		/* before it started */
		/* While it ran: only what KGO_CANCEL_RUNNING may interrupt. */
		if (!b->cancel_running || c->kind == KGO_TASK_NOP || c->kind == KGO_TASK_CHECKSUM)
			book_fail(b, "tag %llu cancelled after it started (cpu %u)", tag, c->cpu);
		else if (c->started_ns < c->queued_ns || c->ended_ns < c->started_ns)
			book_fail(b, "tag %llu: times queued %llu started %llu ended %llu", tag,
				  (unsigned long long)c->queued_ns,
				  (unsigned long long)c->started_ns,
				  (unsigned long long)c->ended_ns);
		return;
	}
	if (!c->started_ns || c->started_ns < c->queued_ns || c->ended_ns < c->started_ns)
		book_fail(b, "tag %llu: times queued %llu started %llu ended %llu", tag,
			  (unsigned long long)c->queued_ns, (unsigned long long)c->started_ns,
			  (unsigned long long)c->ended_ns);
	if (st)
		return;
	switch (c->kind) {
	case KGO_TASK_SPIN:
	case KGO_TASK_SLEEP:
		if (c->result < t->expect)
			book_fail(b, "tag %llu: kind %u result %llu < %llu", tag, c->kind,
				  (unsigned long long)c->result,
				  (unsigned long long)t->expect);
		break;
	case KGO_TASK_BLOCK:
		if (c->result < t->expect * USEC)
			book_fail(b, "tag %llu: blocked %llu ns < %llu us", tag,
				  (unsigned long long)c->result,
				  (unsigned long long)t->expect);
		break;
	case KGO_TASK_CHECKSUM:
		if (b->data) {
			uint32_t crc = kgo_crc32c(b->data + t->expect, t->aux);

			if (c->result != crc)
				book_fail(b, "tag %llu: CRC %#llx, not %#x", tag,
					  (unsigned long long)c->result, crc);
			break;
		}
		/* fall through */
	default:
		if (c->result != t->expect)
			book_fail(b, "tag %llu: kind %u result %#llx, not %#llx", tag,
				  c->kind, (unsigned long long)c->result,
				  (unsigned long long)t->expect);
	}
}

/*
 * After every fd was drained: each accepted tag completed exactly once.
 * Returns the number of accepted tags never completed; logs a few.
 */
static inline uint64_t book_missing(struct book *b)
{
	uint64_t n = __atomic_load_n(&b->next, __ATOMIC_RELAXED), missing = 0;

	for (uint64_t i = 0; i < n && i < b->cap; i++) {
		if (b->t[i].state != T_ACCEPTED)
			continue;
		if (missing++ < BOOK_MAX_LOGS)
			fprintf(stderr, "# tag %llu (kind %u, owner %u) never completed\n",
				(unsigned long long)i, b->t[i].kind, b->t[i].owner);
	}
	return missing;
}

/* Allowed-status masks for book_complete(), by status_slot(). */
#define ST_OK		(1ULL << 0)
#define ST_CANCELED	(1ULL << 1)
#define ST_NOMEM	(1ULL << 2)
#define ST_AGAIN	(1ULL << 3)

/*
 * Reads what is ready on @fd (at most @max records), into the book.
 * Returns records read, 0 if none (EAGAIN), -errno on a read error.
 */
static inline int book_read(struct book *b, int fd, unsigned int owner,
			    uint64_t allowed, unsigned int max)
{
	struct kgo_completion c[256];
	ssize_t r;

	if (max > 256)
		max = 256;
	r = read(fd, c, max * REC);
	if (r < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (r == 0 || r % REC) {
		book_fail(b, "read returned %zd bytes", r);
		return -EIO;
	}
	for (size_t i = 0; i < r / REC; i++)
		book_complete(b, &c[i], owner, &allowed);
	return r / REC;
}

/*
 * Reads @fd until nothing more is in flight (KGO_IOC_WAIT says no more
 * can complete), or @timeout_ns passes. @fd must be O_NONBLOCK. Returns
 * records read, or -ETIMEDOUT / -errno.
 */
static inline long book_drain(struct book *b, int fd, unsigned int owner,
			      uint64_t allowed, uint64_t timeout_ns)
{
	uint64_t end = now_ns() + timeout_ns;
	long total = 0;

	for (;;) {
		struct kgo_wait w = {
			.size = sizeof(w), .min_complete = 1, .timeout_ns = 200 * MSEC,
		};
		int r;

		if (ioctl(fd, KGO_IOC_WAIT, &w) && errno != ETIMEDOUT && errno != EINTR)
			return -errno;
		r = book_read(b, fd, owner, allowed, 256);
		if (r < 0)
			return r;
		total += r;
		if (!r && !w.ready) {
			/* Nothing ready: done if nothing is in flight either. */
			struct kgo_wait z = { .size = sizeof(z), .min_complete = ~0U };

			if (!ioctl(fd, KGO_IOC_WAIT, &z) && !z.ready)
				return total;
		}
		if (now_ns() > end)
			return -ETIMEDOUT;
	}
}

/* A number from the first line of @path; -1 if unreadable. */
static inline long long read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The value of "@key value" lines (/proc/vmstat, memory.events...); -1 if absent. */
static inline long long read_keyed(const char *path, const char *key)
{
	char k[128];
	long long v, found = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%127s %lld", k, &v) == 2) {
		if (!strcmp(k, key)) {
			found = v;
			break;
		}
	}
	fclose(f);
	return found;
}

/*
 * OOM kills so far: /proc/vmstat's oom_kill, or, on kernels without VM
 * event counters, the "Killed process" lines in the kernel log (which
 * may have wrapped: compare counts taken close together).
 */
static inline long long oom_kills(void)
{
	long long n = read_keyed("/proc/vmstat", "oom_kill");
	int len;
	char *buf, *p;

	if (n >= 0)
		return n;
	len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	if (len <= 0)
		return -1;
	buf = malloc(len + 1);
	if (!buf)
		return -1;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	n = 0;
	for (p = buf; (p = strstr(p, "Killed process")); p++)
		n++;
	free(buf);
	return n;
}

/* A /proc/meminfo field in KiB; -1 if absent. */
static inline long long meminfo_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* Goroutines spawned and not exited, from KGO_IOC_STATS; -1 on error. */
static inline long long kgo_goroutines(int fd)
{
	struct kgo_stats st = { .size = sizeof(st) };

	if (ioctl(fd, KGO_IOC_STATS, &st))
		return -1;
	return st.goroutines;
}

/*
 * Goroutines that have run and not exited (each holds a stack): the
 * sum over Ps of gstarted - gfinished. -1 on error.
 */
static inline long long kgo_goroutines_started(int fd)
{
	struct kgo_proc_stats ps[64];
	struct kgo_stats st = {
		.size = sizeof(st), .procs = (uintptr_t)ps, .procs_max = 64,
		.proc_size = sizeof(ps[0]),
	};
	long long n = 0;

	if (ioctl(fd, KGO_IOC_STATS, &st))
		return -1;
	for (unsigned int i = 0; i < st.nr_procs && i < 64; i++)
		n += (long long)(ps[i].gstarted - ps[i].gfinished);
	return n;
}

/*
 * Waits until no goroutine is alive (the scheduler drained), up to
 * @timeout_ns. Returns the last count seen.
 */
static inline long long kgo_wait_quiet(int fd, uint64_t timeout_ns)
{
	uint64_t end = now_ns() + timeout_ns;
	long long n;

	while ((n = kgo_goroutines(fd)) > 0 && now_ns() < end)
		usleep(10000);
	return n;
}

/* Opens /dev/kgo, waiting up to @timeout_ns for devtmpfs to make the node. */
static inline int kgo_open_wait(int flags, uint64_t timeout_ns)
{
	uint64_t end = now_ns() + timeout_ns;
	int fd;

	while ((fd = open(KGO_DEVICE_PATH, flags)) < 0 && errno == ENOENT &&
	       now_ns() < end)
		usleep(10000);
	return fd;
}

/*
 * Submits one NOP on a fresh fd and reads its completion: the module
 * works. Returns 0, or an errno (or EIO for a wrong completion).
 */
static inline int kgo_nop_works(uint64_t timeout_ns)
{
	struct kgo_task t = { .kind = KGO_TASK_NOP, .tag = 0x6b676f };
	struct kgo_wait w = {
		.size = sizeof(w), .min_complete = 1, .timeout_ns = timeout_ns,
	};
	struct kgo_completion c;
	int fd = kgo_open_wait(O_RDWR, 10 * NSEC), err = 0;

	if (fd < 0)
		return errno;
	if (submit(fd, &t, 1) != 1 || ioctl(fd, KGO_IOC_WAIT, &w))
		err = errno ? errno : EIO;
	else if (read(fd, &c, sizeof(c)) != sizeof(c))
		err = errno ? errno : EIO;
	else if (c.tag != t.tag || c.status || c.kind != KGO_TASK_NOP)
		err = EIO;
	close(fd);
	return err;
}

#endif /* _KGO_STRESS_H */
