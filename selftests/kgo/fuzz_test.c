// SPDX-License-Identifier: GPL-2.0
/*
 * A seeded fuzzer of /dev/kgo: a million ioctl calls (and a few thousand
 * reads) with random command numbers, sizes, flags, reserved fields,
 * pointers and task descriptors, each checked against what the uapi
 * header says it must return.
 *
 * Every call has a model (header_model() and each command's checks): the
 * set of errnos the ABI allows for exactly that argument, or success.
 * Arguments sit in memory laid out so that the model knows what the
 * kernel can read and write: a read-write arena followed by a PROT_NONE
 * page (structs end exactly at its edge), a read-only page of valid
 * structs (out-params there must give -EFAULT), an unmapped page,
 * addresses no process can map, and kernel addresses. A return outside
 * the model, or outside the errnos the header documents, fails the test.
 *
 * Only cheap tasks can be accepted (SPIN <= 1 us, SLEEP <= 1 ms, BLOCK
 * <= 1 ms, SPAWN <= 40 nodes...); invalid ones carry exactly one defect,
 * so the model knows which errno SUBMIT must give for them. Every accepted
 * task must complete exactly once, with the right kind and result; tasks
 * in flight stay bounded by reading completions as the run goes, and one
 * fd is closed and reopened now and then with tasks in flight.
 *
 * KGO_FUZZ_SEED sets the seed (printed either way); KGO_FUZZ_CALLS the
 * number of ioctl calls (default 1000000). The calls stop earlier when
 * BUDGET_NS has gone by: a fuzzer covers what it covers in its time, and
 * the debug kernel under TCG beside a CPU hog made 2,600 calls a second,
 * so a million of them measured the host against the harness's limit.
 * The run must still have called every command and the magic's every nr.
 */

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kgo_stress.h"
#include "kselftest_harness.h"

#define DEFAULT_CALLS	1000000ULL
#define NFDS		4
#define CHURN_FD	(NFDS - 1)	/* closed with tasks in flight, reopened */
#define CHURN_EVERY	50000		/* iterations */
#define INFLIGHT_HIGH	192		/* per fd: read completions above this */
#define INFLIGHT_LOW	64
#define BOOK_CAP	(8ULL << 20)
#define DATA_LEN	(64 << 10)	/* CHECKSUM data */
#define TASK_LEN	48		/* offsetofend(struct kgo_task, __reserved) */
#define PROC_LEN	KGO_PROC_STATS_SIZE_VER0
#define MAX_LOGS	30
#define TIMEOUT_S	600
/* The calls' time: the reads, the drain and the checks after fit beside it. */
#define BUDGET_NS	(300 * NSEC)

/* Addresses userspace cannot use: below mmap_min_addr, and the kernel's. */
static const uint64_t bad_ptrs[] = {
	0, 0x1000, 0x8000, 0xfff8,
	0xffff888000000000ULL,		/* the direct map */
	0xffffffff81000000ULL,		/* kernel text */
	0x0000800000000000ULL,		/* just past user space */
	0x8000000000000000ULL,		/* non-canonical */
	~0ULL - 7, ~0ULL,
};

/* Command types the VFS handles itself, before the driver: not fuzzed. */
static bool vfs_type(unsigned int type)
{
	return type == 0x00 || type == 0x15 || type == 'T' || type == 'X' ||
	       type == 'f' || type == 0x94;
}

/* errnos as bits of a 64-bit set; ETIMEDOUT (110) gets bit 63. */
static uint64_t ebit(int e)
{
	if (e == ETIMEDOUT)
		return 1ULL << 63;
	return e > 0 && e < 63 ? 1ULL << e : 0;
}

#define E(e)		ebit(e)
#define SUCCESS		(1ULL << 0)	/* bit 0: the call may succeed */

static const int documented[] = {
	EINVAL, E2BIG, EFAULT, ENOTTY, EAGAIN, ENOMEM, ETIMEDOUT, ETIME, EINTR,
};

struct fuzz {
	struct rng rng;
	struct book *book;
	int fds[NFDS];
	uint32_t inflight[NFDS];	/* accepted, completion not read */
	long page;
	unsigned int nprocs;

	unsigned char *arena;	/* RW, 2 pages: argument structs */
	unsigned char *guard;	/* PROT_NONE page after it */
	unsigned char *ro;	/* read-only page of valid structs */
	unsigned char *tasks;	/* RW, 2 pages of descriptors, then a guard */
	unsigned char *tasks_end;
	unsigned char *scratch;	/* RW, 4 pages, then a guard: reads, STATS records */
	unsigned char *scratch_end;
	unsigned char *data;	/* read-only CHECKSUM data, then a guard */
	unsigned char *hole;	/* an unmapped page */

	/* Figures. */
	uint64_t calls, reads, bad;
	uint64_t by_cmd[6], ok_by_cmd[6];
	uint64_t errs[64];	/* errno histogram, ETIMEDOUT in 63 */
	uint64_t submitted, accepted, short_submits, cancelled, churns;
	uint64_t magic_seen[4];	/* which nr of the magic were called */
	uint64_t logs;
};

static void __attribute__((format(printf, 2, 3))) flog(struct fuzz *f, const char *fmt, ...)
{
	char line[300];
	va_list ap;

	f->bad++;
	if (f->logs++ >= MAX_LOGS)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# %s\n", line);
}

/* What the kernel may read: the arena, the read-only page, the descriptors, the data. */
static bool readable(struct fuzz *f, uint64_t p, uint64_t len)
{
	uint64_t a = (uintptr_t)f->arena, r = (uintptr_t)f->ro;
	uint64_t t = (uintptr_t)f->tasks, d = (uintptr_t)f->data;
	uint64_t s = (uintptr_t)f->scratch;

	if (p + len < p)
		return false;
	return (p >= a && p + len <= a + 2 * f->page) ||
	       (p >= r && p + len <= r + f->page) ||
	       (p >= t && p + len <= (uintptr_t)f->tasks_end) ||
	       (p >= s && p + len <= (uintptr_t)f->scratch_end) ||
	       (p >= d && p + len <= d + DATA_LEN);
}

/* What it may write: the arena and the scratch pages. */
static bool writable(struct fuzz *f, uint64_t p, uint64_t len)
{
	uint64_t a = (uintptr_t)f->arena, s = (uintptr_t)f->scratch;

	if (p + len < p)
		return false;
	return (p >= a && p + len <= a + 2 * f->page) ||
	       (p >= s && p + len <= (uintptr_t)f->scratch_end);
}

static bool all_zero(const unsigned char *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

static uint64_t bad_ptr(struct fuzz *f)
{
	unsigned int x = rng_below(&f->rng, 100);

	if (x < 15)
		return (uintptr_t)f->guard + rng_below(&f->rng, f->page);
	if (x < 25)	/* a page that was mapped and is not any more */
		return (uintptr_t)f->hole + rng_below(&f->rng, f->page);
	return bad_ptrs[rng_below(&f->rng, ARRAY_SIZE(bad_ptrs))];
}

/* kioctl: every ioctl on a kgo fd goes through here, and is counted. */
static long kioctl(struct fuzz *f, int fd, unsigned long cmd, uint64_t arg)
{
	f->calls++;
	return ioctl(fd, cmd, (void *)(uintptr_t)arg);
}

/*
 * Checks a return against the model @allowed (SUCCESS and E() bits) and
 * the documented errnos. Returns true if it succeeded.
 */
static bool judge(struct fuzz *f, const char *what, long ret, int err, uint64_t allowed,
		  uint32_t usize, uint64_t ptr)
{
	bool doc = false;

	if (ret >= 0) {
		if (!(allowed & SUCCESS))
			flog(f, "%s (size %u, ptr %#llx): returned %ld, model allows only errors %#llx",
			     what, usize, (unsigned long long)ptr, ret,
			     (unsigned long long)allowed);
		return true;
	}
	f->errs[err == ETIMEDOUT ? 63 : (err & 63)]++;
	for (size_t i = 0; i < ARRAY_SIZE(documented); i++)
		doc |= err == documented[i];
	if (!doc)
		flog(f, "%s (size %u, ptr %#llx): errno %d (%s) is not one the ABI documents",
		     what, usize, (unsigned long long)ptr, err, strerror(err));
	else if (!(allowed & ebit(err)))
		flog(f, "%s (size %u, ptr %#llx): errno %d (%s), model allows %#llx",
		     what, usize, (unsigned long long)ptr, err, strerror(err),
		     (unsigned long long)allowed);
	return false;
}

/*
 * The size/flags convention before any command-specific check: returns
 * 0 when the header passes (the command's own checks follow), else the
 * errnos it must fail with.
 */
static uint64_t header_model(struct fuzz *f, uint64_t p, uint32_t usize, size_t ksize,
			     size_t minsize)
{
	if (!readable(f, p, sizeof(uint32_t)))
		return E(EFAULT);
	if (usize < minsize)
		return E(EINVAL);
	if (usize > f->page)
		return E(E2BIG);
	if (usize > ksize) {
		uint64_t t = p + ksize, len = usize - ksize, ok = 0;

		/* How much of the tail can be read, and is that zero? */
		while (ok < len && readable(f, t + ok, 1))
			ok++;
		if (ok < len)
			return E(EFAULT) |
			       (all_zero((void *)(uintptr_t)t, ok) ? 0 : E(E2BIG));
		if (!all_zero((void *)(uintptr_t)t, len))
			return E(E2BIG);
	}
	if (!readable(f, p, usize < ksize ? usize : ksize))
		return E(EFAULT);
	return 0;
}

/* ----- task descriptors ----- */

enum defect { D_NONE, D_FLAGS, D_RESERVED, D_KIND, D_UNUSED, D_RANGE, D_BIG, D_FAULT, D_TAIL };

/* What a descriptor must do at SUBMIT: 0 (accepted if there is room), or an errno. */
struct tmodel {
	int err;
	bool precaps;	/* the error comes before the caps (else EAGAIN/ENOMEM may win) */
};

static uint64_t spawn_nodes(uint64_t fanout, uint64_t depth)
{
	uint64_t level = 1, total = 1;

	for (uint64_t d = 0; d < depth; d++) {
		level *= fanout;
		total += level;
	}
	return total;
}

/*
 * Writes one descriptor of @tsize bytes at @dst (zero past the struct,
 * unless the defect is a non-zero tail) and registers its tag with @fd
 * as owner. Returns its model.
 */
static struct tmodel gen_task(struct fuzz *f, unsigned char *dst, uint32_t tsize, int fdi)
{
	struct rng *r = &f->rng;
	struct kgo_task t = { 0 };
	struct tmodel m = { 0, true };
	enum defect d = D_NONE;
	uint64_t expect = 0;
	uint32_t aux = 0;

	if (!rng_pct(r, 70))
		d = 1 + rng_below(r, D_TAIL);
	if (d == D_TAIL && tsize <= TASK_LEN)
		d = D_FLAGS;
	t.kind = 1 + rng_below(r, KGO_TASK_BLOCK);
	switch (t.kind) {
	case KGO_TASK_NOP:
		break;
	case KGO_TASK_SPIN:
		t.args[0] = expect = rng_below(r, 1001);
		break;
	case KGO_TASK_YIELD:
		t.args[0] = expect = rng_below(r, 11);
		break;
	case KGO_TASK_SPAWN:
		t.args[0] = 1 + rng_below(r, 3);
		t.args[1] = rng_below(r, 4);
		expect = spawn_nodes(t.args[0], t.args[1]);
		break;
	case KGO_TASK_CHECKSUM: {
		uint64_t len = rng_below(r, 4097), off = rng_below(r, DATA_LEN - len + 1);

		t.args[0] = len || rng_pct(r, 50) ? (uintptr_t)f->data + off : 0;
		t.args[1] = len;
		expect = off;	/* the book computes the CRC when it completes */
		aux = len;
		break;
	}
	case KGO_TASK_SLEEP:
		t.args[0] = expect = rng_below(r, MSEC + 1);
		break;
	case KGO_TASK_PINGPONG:
		t.args[0] = expect = rng_below(r, 11);
		break;
	case KGO_TASK_SELECT:
		t.args[0] = expect = rng_below(r, 4);
		t.args[1] = rng_below(r, 100 * USEC + 1);
		break;
	case KGO_TASK_BLOCK:
		t.args[0] = expect = rng_below(r, 1001);
		break;
	}

	switch (d) {
	case D_NONE:
		/* Some run in the submitter: their completions come the same. */
		if ((t.kind == KGO_TASK_NOP || t.kind == KGO_TASK_CHECKSUM) && rng_pct(r, 30))
			t.flags = KGO_TASK_F_INLINE;
		break;
	case D_FLAGS:
		/* A flag the module lacks, or INLINE on a kind that may not. */
		if (t.kind != KGO_TASK_NOP && t.kind != KGO_TASK_CHECKSUM && rng_pct(r, 30))
			t.flags = KGO_TASK_F_INLINE;
		else
			t.flags = 2U << rng_below(r, 31);
		m.err = EINVAL;
		break;
	case D_RESERVED:
		t.__reserved = rng_next(r) | 1;
		m.err = EINVAL;
		break;
	case D_KIND:
		t.kind = rng_pct(r, 30) ? 0 : KGO_TASK_PINGPONG_HOG + 1 + rng_below(r, 1U << 31);
		m.err = EINVAL;
		break;
	case D_UNUSED: {
		/* How many args each kind uses: one past them is unused. */
		static const unsigned int used[] = { 0, 0, 1, 1, 2, 2, 1, 1, 2, 1 };
		unsigned int u = used[t.kind];

		t.args[u + rng_below(r, 3 - u)] = rng_next(r) | 1;
		m.err = EINVAL;
		break;
	}
	case D_RANGE:
		m.err = EINVAL;
		switch (t.kind) {
		case KGO_TASK_SPIN:
			t.args[0] = KGO_SPIN_MAX_NS + 1 + rng_below(r, 1ULL << 62);
			break;
		case KGO_TASK_YIELD:
			t.args[0] = KGO_YIELD_MAX + 1 + rng_below(r, 1ULL << 62);
			break;
		case KGO_TASK_SLEEP:
			t.args[0] = KGO_SLEEP_MAX_NS + 1 + rng_below(r, 1ULL << 62);
			break;
		case KGO_TASK_BLOCK:
			t.args[0] = KGO_BLOCK_MAX_US + 1 + rng_below(r, 1ULL << 62);
			break;
		case KGO_TASK_PINGPONG:
			t.args[0] = KGO_PINGPONG_MAX + 1 + rng_below(r, 1ULL << 62);
			break;
		case KGO_TASK_SELECT:
			if (rng_pct(r, 50))
				t.args[0] = KGO_SELECT_TASK_MAX + 1 + rng_below(r, 1ULL << 62);
			else
				t.args[1] = KGO_SELECT_GAP_MAX_NS + 1 + rng_below(r, 1ULL << 62);
			break;
		case KGO_TASK_SPAWN:
			t.args[0] = rng_pct(r, 50) ? 0 : KGO_SPAWN_MAX_FANOUT + 1 +
							rng_below(r, 1ULL << 62);
			break;
		default:	/* NOP, CHECKSUM: no range; an unknown kind instead */
			t.kind = 0;
		}
		break;
	case D_BIG:
		m.err = E2BIG;
		if (t.kind == KGO_TASK_CHECKSUM || rng_pct(r, 50)) {
			t.kind = KGO_TASK_CHECKSUM;
			t.args[0] = (uintptr_t)f->data;
			t.args[1] = KGO_CHECKSUM_MAX_LEN + 1 + rng_below(r, 1ULL << 40);
		} else {
			t.kind = KGO_TASK_SPAWN;
			t.args[0] = 1 + rng_below(r, KGO_SPAWN_MAX_FANOUT);
			/* 2^17 + 1 nodes at least: fan-out 1 needs depth 2^17. */
			t.args[1] = t.args[0] == 1 ? KGO_SPAWN_MAX_NODES + rng_below(r, 1ULL << 40)
						   : 17 + rng_below(r, 1ULL << 40);
		}
		t.args[2] = 0;
		break;
	case D_FAULT:
		/* A CHECKSUM buffer the kernel cannot read: after the caps. */
		t.kind = KGO_TASK_CHECKSUM;
		t.args[1] = 1 + rng_below(r, 4096);
		if (rng_pct(r, 30))	/* straddling the data's guard page */
			t.args[0] = (uintptr_t)f->data + DATA_LEN - rng_below(r, t.args[1]);
		else
			t.args[0] = bad_ptr(f);
		t.args[2] = 0;
		m.err = EFAULT;
		m.precaps = false;
		break;
	case D_TAIL:
		m.err = E2BIG;
		break;
	}

	t.tag = book_new(f->book, t.kind, fdi, expect, aux);
	memset(dst, 0, tsize);
	memcpy(dst, &t, TASK_LEN < tsize ? TASK_LEN : tsize);
	if (d == D_TAIL)
		dst[TASK_LEN + rng_below(r, tsize - TASK_LEN)] = 1 + rng_below(r, 255);
	f->submitted++;
	return m;
}

/* ----- the commands ----- */

/* Where an argument struct goes. */
enum where { W_NORMAL, W_EDGE, W_RO, W_BAD };

static enum where pick_where(struct fuzz *f)
{
	unsigned int x = rng_below(&f->rng, 100);

	return x < 70 ? W_NORMAL : x < 82 ? W_EDGE : x < 90 ? W_RO : W_BAD;
}

/* A size field for a struct of @ksize (first version @minsize). */
static uint32_t pick_size(struct fuzz *f, size_t ksize, size_t minsize, bool *tail)
{
	struct rng *r = &f->rng;
	unsigned int x = rng_below(r, 100);

	*tail = false;
	if (x < 55)
		return ksize;
	if (x < 63)
		return ksize + 8 * (1 + rng_below(r, 16));
	if (x < 68) {
		*tail = true;	/* a non-zero byte past what the module knows */
		return ksize + 1 + rng_below(r, 64);
	}
	if (x < 74)
		return rng_pct(r, 30) ? 0 : rng_below(r, minsize);
	if (x < 80 && minsize < ksize)
		return minsize + rng_below(r, ksize - minsize);
	if (x < 84)
		return f->page;
	if (x < 88)
		return f->page + 1 + rng_below(r, 64);
	if (x < 92)
		return 0xffffffffu;
	return rng_next(r);
}

/*
 * Places a struct of @usize bytes (@ksize known to the kernel): returns
 * its address, zeroed up to what the model needs, with a non-zero tail
 * byte when @tail. The caller fills the fields (not for W_RO or W_BAD,
 * whose contents are fixed).
 */
static uint64_t place(struct fuzz *f, enum where w, uint32_t usize, size_t ksize, bool tail)
{
	struct rng *r = &f->rng;
	size_t len = usize < ksize ? ksize : usize;
	unsigned char *p;

	switch (w) {
	case W_NORMAL:
		if (len > (size_t)f->page)
			len = f->page;
		p = f->arena + 8 * rng_below(r, f->page / 8);
		break;
	case W_EDGE: {
		/* Ends exactly at the guard page, or is cut short by it. */
		size_t room;

		switch (rng_below(r, 4)) {
		case 0:
			room = ksize;
			break;
		case 1:
			room = 8 + 8 * rng_below(r, ksize / 8);
			break;
		case 2:
			room = 4;	/* the size field, and nothing more */
			break;
		default:
			room = 2;	/* not even that */
		}
		p = f->guard - room;
		len = room;
		break;
	}
	default:
		return 0;
	}
	memset(p, 0, len);
	if (tail && usize > ksize && p + usize <= f->guard)
		p[ksize + rng_below(r, usize - ksize)] = 1 + rng_below(r, 255);
	/* A canary past it: nothing may be written there. */
	if (p + len + 64 <= f->guard)
		memset(p + len, 0xa5, 64);
	return (uintptr_t)p;
}

/* The read-only page's structs, at these offsets. */
enum {
	RO_INFO = 0,
	RO_WAIT = 128,
	RO_CANCEL = 256,
	RO_STATS = 512,
	RO_SUBMIT = 1024,
};

/* Bytes past @p + @len that place() set to 0xa5 must still be. */
static void check_canary(struct fuzz *f, const char *what, uint64_t p, size_t len)
{
	unsigned char *c = (unsigned char *)(uintptr_t)p + len;

	if (c < f->arena || c + 64 > f->guard)
		return;
	for (int i = 0; i < 64; i++) {
		if (c[i] != 0xa5) {
			flog(f, "%s wrote past its struct: byte %zu+%d is %#x", what, len, i, c[i]);
			return;
		}
	}
}

static void do_get_info(struct fuzz *f, int fdi)
{
	const size_t K = sizeof(struct kgo_info);
	enum where w = pick_where(f);
	uint64_t p, allowed;
	uint32_t usize;
	bool tail;
	long ret;

	f->by_cmd[0]++;
	if (w == W_RO) {
		p = (uintptr_t)f->ro + RO_INFO;
		usize = K;
	} else if (w == W_BAD) {
		p = bad_ptr(f);
		usize = 0;
	} else {
		usize = pick_size(f, K, KGO_INFO_SIZE_VER0, &tail);
		p = place(f, w, usize, K, tail);
		if (readable(f, p, 4)) {
			struct kgo_info *in = (void *)(uintptr_t)p;

			in->size = usize;
			if (readable(f, p, 8) && rng_pct(&f->rng, 8))
				in->flags = 1U << rng_below(&f->rng, 32);
			if (readable(f, p, 32) && rng_pct(&f->rng, 8))
				in->__reserved = rng_next(&f->rng) | 1;
			if (readable(f, p, K) && usize >= K && rng_pct(&f->rng, 8))
				in->__reserved2 = rng_next(&f->rng) | 1;
			/* Past a valid size: ours, never read or written. */
			if (usize >= KGO_INFO_SIZE_VER0 && usize < K && readable(f, p, K))
				memset((char *)in + usize, 0x5a, K - usize);
		}
	}
	allowed = header_model(f, p, usize, K, KGO_INFO_SIZE_VER0);
	if (!allowed) {
		const struct kgo_info *in = (void *)(uintptr_t)p;
		uint32_t wlen = usize < K ? usize : K;

		/* The kernel reads only @usize bytes: a cut reserved field counts in part. */
		static const size_t ros[] = { offsetof(struct kgo_info, __reserved),
					      offsetof(struct kgo_info, __reserved2) };
		bool reserved_set = false;

		for (size_t i = 0; i < ARRAY_SIZE(ros); i++) {
			size_t rend = usize < ros[i] + 4 ? usize : ros[i] + 4;

			if (rend > ros[i] &&
			    !all_zero((const unsigned char *)in + ros[i], rend - ros[i]))
				reserved_set = true;
		}
		if (in->flags || reserved_set)
			allowed = E(EINVAL);
		else if (!writable(f, p, wlen))
			allowed = E(EFAULT);
		else
			allowed = SUCCESS;
	}
	ret = kioctl(f, f->fds[fdi], KGO_IOC_GET_INFO, p);
	if (judge(f, "GET_INFO", ret, errno, allowed, usize, p)) {
		const struct kgo_info *out = (void *)(uintptr_t)p;

		f->ok_by_cmd[0]++;
		if (ret != 0 || out->abi_version != KGO_ABI_VERSION || out->nr_procs != f->nprocs)
			flog(f, "GET_INFO: ret %ld abi %u nr_procs %u", ret, out->abi_version,
			     out->nr_procs);
		if (usize >= KGO_INFO_SIZE_VER1 && out->mem_budget == 0)
			flog(f, "GET_INFO: mem_budget 0");
		if (usize < K && readable(f, p, K)) {
			/* Output only within size: what lies past it is ours. */
			for (size_t i = usize; i < K; i++) {
				if (((unsigned char *)out)[i] != 0x5a) {
					flog(f, "GET_INFO size %u wrote byte %zu", usize, i);
					break;
				}
			}
		} else {
			check_canary(f, "GET_INFO", p, usize);
		}
	}
}

static void do_wait(struct fuzz *f, int fdi)
{
	const size_t K = sizeof(struct kgo_wait);
	enum where w = pick_where(f);
	struct rng *r = &f->rng;
	uint64_t p, allowed;
	uint32_t usize;
	bool tail;
	long ret;

	int err;

	f->by_cmd[1]++;
	if (w == W_RO) {
		p = (uintptr_t)f->ro + RO_WAIT;
		usize = K;
	} else if (w == W_BAD) {
		p = bad_ptr(f);
		usize = 0;
	} else {
		usize = pick_size(f, K, K, &tail);
		p = place(f, w, usize, K, tail);
		if (readable(f, p, 4))
			*(uint32_t *)(uintptr_t)p = usize;
		if (readable(f, p, K)) {
			struct kgo_wait *a = (void *)(uintptr_t)p;
			unsigned int x = rng_below(r, 100);

			if (rng_pct(r, 8))
				a->flags = 1U << rng_below(r, 32);
			a->min_complete = rng_pct(r, 70) ? rng_below(r, 4) : rng_next(r);
			a->ready = rng_next(r);	/* out only: ignored */
			/* Short timeouts: the fuzzer never waits long. */
			a->timeout_ns = x < 70 ? 0 : x < 97 ? rng_below(r, 50 * USEC) :
					KGO_WAIT_FOREVER;
			if (a->timeout_ns == KGO_WAIT_FOREVER)
				a->min_complete = rng_below(r, 2);
		}
	}
	allowed = header_model(f, p, usize, K, K);
	if (!allowed) {
		const struct kgo_wait *a = (void *)(uintptr_t)p;

		if (a->flags)
			allowed = E(EINVAL);
		else if (!writable(f, p, K))
			allowed = E(EFAULT);
		else
			allowed = SUCCESS | E(ETIMEDOUT) | E(EINTR);
	}
	ret = kioctl(f, f->fds[fdi], KGO_IOC_WAIT, p);
	err = errno;
	if (!judge(f, "WAIT", ret, err, allowed, usize, p) &&
	    !(err == ETIMEDOUT && (allowed & SUCCESS)))
		return;
	if (ret == 0)
		f->ok_by_cmd[1]++;
	{
		const struct kgo_wait *a = (void *)(uintptr_t)p;

		if (a->ready > f->inflight[fdi])
			flog(f, "WAIT: ready %u, but only %u in flight", a->ready,
			     f->inflight[fdi]);
		if (ret == 0 && a->ready < a->min_complete && a->ready != f->inflight[fdi])
			flog(f, "WAIT returned with ready %u < min %u, %u in flight",
			     a->ready, a->min_complete, f->inflight[fdi]);
		check_canary(f, "WAIT", p, usize > K ? usize : K);
	}
}

static void do_cancel(struct fuzz *f, int fdi)
{
	const size_t K = sizeof(struct kgo_cancel);
	enum where w = pick_where(f);
	struct rng *r = &f->rng;
	uint64_t p, allowed;
	uint32_t usize;
	bool tail;
	long ret;

	f->by_cmd[4]++;
	if (w == W_RO) {
		p = (uintptr_t)f->ro + RO_CANCEL;
		usize = K;
	} else if (w == W_BAD) {
		p = bad_ptr(f);
		usize = 0;
	} else {
		usize = pick_size(f, K, K, &tail);
		p = place(f, w, usize, K, tail);
		if (readable(f, p, 4))
			*(uint32_t *)(uintptr_t)p = usize;
		if (readable(f, p, K)) {
			struct kgo_cancel *a = (void *)(uintptr_t)p;
			uint64_t n = f->book->next;

			a->flags = rng_pct(r, 30) ? KGO_CANCEL_ALL : 0;
			if (rng_pct(r, 50))
				a->flags |= KGO_CANCEL_RUNNING;
			if (rng_pct(r, 8))
				a->flags |= 1U << rng_below(r, 32);
			if (rng_pct(r, 8))
				a->__reserved = rng_next(r) | 1;
			/* A recent tag, so that some cancels hit. */
			a->tag = rng_pct(r, 80) && n ? (n - 1 - rng_below(r, n < 64 ? n : 64)) ^
							f->book->mask : rng_next(r);
			a->cancelled = rng_next(r);
		}
	}
	allowed = header_model(f, p, usize, K, K);
	if (!allowed) {
		const struct kgo_cancel *a = (void *)(uintptr_t)p;

		if ((a->flags & ~(KGO_CANCEL_ALL | KGO_CANCEL_RUNNING)) || a->__reserved)
			allowed = E(EINVAL);
		else if (!writable(f, p, K))
			allowed = E(EFAULT);
		else
			allowed = SUCCESS;
	}
	ret = kioctl(f, f->fds[fdi], KGO_IOC_CANCEL, p);
	if (judge(f, "CANCEL", ret, errno, allowed, usize, p)) {
		const struct kgo_cancel *a = (void *)(uintptr_t)p;

		f->ok_by_cmd[4]++;
		f->cancelled += a->cancelled;
		if (ret || a->cancelled > f->inflight[fdi])
			flog(f, "CANCEL: ret %ld, cancelled %u of %u in flight", ret,
			     a->cancelled, f->inflight[fdi]);
		check_canary(f, "CANCEL", p, usize > K ? usize : K);
	}
}

static void do_stats(struct fuzz *f, int fdi)
{
	const size_t K = sizeof(struct kgo_stats);
	enum where w = pick_where(f);
	struct rng *r = &f->rng;
	uint64_t p, allowed;
	uint32_t usize;
	bool tail;
	long ret;

	f->by_cmd[3]++;
	if (w == W_RO) {
		p = (uintptr_t)f->ro + RO_STATS;
		usize = K;
	} else if (w == W_BAD) {
		p = bad_ptr(f);
		usize = 0;
	} else {
		usize = pick_size(f, K, KGO_STATS_SIZE_VER0, &tail);
		p = place(f, w, usize, K, tail);
		if (readable(f, p, 4))
			*(uint32_t *)(uintptr_t)p = usize;
		if (readable(f, p, K)) {
			struct kgo_stats *a = (void *)(uintptr_t)p;
			unsigned int x = rng_below(r, 100);

			if (rng_pct(r, 6))
				a->flags = 1U << rng_below(r, 32);
			if (rng_pct(r, 6))
				a->__reserved = rng_next(r) | 1;
			a->procs_max = rng_below(r, 4);
			a->proc_size = PROC_LEN + 8 * rng_below(r, 8);
			if (x < 10) {
				a->procs = 0;
			} else if (x < 60) {
				a->procs = (uintptr_t)f->scratch + 8 * rng_below(r, 64);
			} else if (x < 70) {
				/* The last record runs into the guard page. */
				a->procs = (uintptr_t)f->scratch_end - a->proc_size -
					   rng_below(r, a->proc_size);
			} else if (x < 75) {
				a->procs = (uintptr_t)f->ro;
			} else if (x < 85) {
				a->procs = bad_ptr(f);
			} else if (x < 92) {
				a->proc_size = rng_below(r, PROC_LEN);	/* too small */
				a->procs = (uintptr_t)f->scratch;
			} else {
				/* A huge stride: one record only, never two. */
				a->proc_size = PROC_LEN + rng_below(r, 1ULL << 32);
				a->procs_max = rng_below(r, 2);
				a->procs = (uintptr_t)f->scratch;
			}
		}
	}
	allowed = header_model(f, p, usize, K, KGO_STATS_SIZE_VER0);
	if (!allowed) {
		const struct kgo_stats *a = (void *)(uintptr_t)p;
		unsigned int n = a->procs_max < f->nprocs ? a->procs_max : f->nprocs;
		size_t rec = a->proc_size < sizeof(struct kgo_proc_stats) ?
			     a->proc_size : sizeof(struct kgo_proc_stats);

		if (a->flags || a->__reserved ||
		    (a->procs_max && a->proc_size < KGO_PROC_STATS_SIZE_VER0)) {
			allowed = E(EINVAL);
		} else {
			allowed = SUCCESS;
			for (unsigned int i = 0; i < n; i++)
				if (!writable(f, a->procs + (uint64_t)i * a->proc_size, rec))
					allowed = E(EFAULT);
			/* Written back within the caller's size only. */
			if (!writable(f, p, usize < K ? usize : K))
				allowed = E(EFAULT);
		}
	}
	ret = kioctl(f, f->fds[fdi], KGO_IOC_STATS, p);
	if (judge(f, "STATS", ret, errno, allowed, usize, p)) {
		const struct kgo_stats *a = (void *)(uintptr_t)p;

		f->ok_by_cmd[3]++;
		if (ret || a->nr_procs != f->nprocs)
			flog(f, "STATS: ret %ld nr_procs %u", ret, a->nr_procs);
		check_canary(f, "STATS", p, usize > K ? usize : K);
	}
}

/* Reads what is ready on fd @fdi into the book. */
static int reap(struct fuzz *f, int fdi, unsigned int max)
{
	const uint64_t allowed = ST_OK | ST_CANCELED | ST_NOMEM | ST_AGAIN;
	struct kgo_wait w = { .size = sizeof(w) };
	int n;

	/* fd 0 is blocking: read it only when something is ready. */
	if (fdi == 0) {
		f->calls++;
		if (ioctl(f->fds[0], KGO_IOC_WAIT, &w) && errno != ETIMEDOUT)
			flog(f, "WAIT before a read: %s", strerror(errno));
		if (!w.ready)
			return 0;
	}
	f->reads++;
	n = book_read(f->book, f->fds[fdi], fdi, allowed, max);
	if (n < 0) {
		flog(f, "read: %s", strerror(-n));
		return 0;
	}
	if ((uint32_t)n > f->inflight[fdi])
		flog(f, "read %d completions, only %u in flight", n, f->inflight[fdi]);
	else
		f->inflight[fdi] -= n;
	return n;
}

/*
 * Reads completions of fd @fdi until at most @low are in flight,
 * waiting for them (all are cheap) up to 10 s.
 */
static void reap_down(struct fuzz *f, int fdi, uint32_t low)
{
	uint64_t end = now_ns() + 10 * NSEC;

	while (f->inflight[fdi] > low) {
		struct kgo_wait w = {
			.size = sizeof(w), .min_complete = f->inflight[fdi] - low,
			.timeout_ns = 100 * MSEC,
		};

		f->calls++;
		if (ioctl(f->fds[fdi], KGO_IOC_WAIT, &w) && errno != ETIMEDOUT)
			flog(f, "WAIT for completions: %s", strerror(errno));
		while (reap(f, fdi, 256) > 0)
			;
		if (now_ns() > end) {
			flog(f, "fd %d: %u tasks still in flight after 10 s", fdi,
			     f->inflight[fdi]);
			return;
		}
	}
}

static void do_submit(struct fuzz *f, int fdi)
{
	const size_t K = sizeof(struct kgo_submit);
	enum where w = pick_where(f);
	struct rng *r = &f->rng;
	uint64_t p, allowed;
	struct tmodel m[256], *first_bad = NULL;
	uint32_t usize, tsize = TASK_LEN, nr = 0, prefix = 0, ndesc = 0;
	unsigned char *desc = f->tasks;
	bool tail, straddle_e2big = false;
	long ret;
	int err;

	f->by_cmd[2]++;
	if (w == W_RO) {
		/* A valid SUBMIT, read from a read-only page: no write-back, so it works. */
		p = (uintptr_t)f->ro + RO_SUBMIT;
		usize = K;
		tsize = TASK_LEN;
		nr = 1;
		desc = f->tasks;
		m[0] = (struct tmodel){ 0, true };
		memset(desc, 0, TASK_LEN);
		((struct kgo_task *)desc)->kind = KGO_TASK_NOP;
		((struct kgo_task *)desc)->tag = book_new(f->book, KGO_TASK_NOP, fdi, 0, 0);
		f->submitted++;
		ndesc = 1;
	} else if (w == W_BAD) {
		p = bad_ptr(f);
		usize = 0;
	} else {
		struct kgo_submit *a;
		unsigned int x = rng_below(r, 100);
		size_t room;

		usize = pick_size(f, K, K, &tail);
		p = place(f, w, usize, K, tail);
		if (readable(f, p, 4))
			*(uint32_t *)(uintptr_t)p = usize;
		a = (void *)(uintptr_t)p;

		/* The descriptor size. */
		if (x < 60)
			tsize = TASK_LEN;
		else if (x < 80)
			tsize = TASK_LEN + 8 * (1 + rng_below(r, 8));
		else if (x < 90)
			tsize = TASK_LEN + 1 + rng_below(r, f->page - TASK_LEN);
		else if (x < 95)
			tsize = rng_below(r, TASK_LEN);
		else
			tsize = rng_pct(r, 50) ? 0xffffffffu : f->page + 1 + rng_below(r, 1U << 30);

		/* How many, and where: some runs end at the guard page. */
		x = rng_below(r, 100);
		nr = x < 5 ? 0 : x < 75 ? 1 + rng_below(r, 4) : x < 95 ? 5 + rng_below(r, 12) :
		     rng_pct(r, 50) ? 0xffffffffu : 17 + rng_below(r, 1U << 31);
		room = f->tasks_end - f->tasks;
		if (tsize >= TASK_LEN && tsize <= f->page) {
			size_t fit = room / tsize;

			/* A huge nr: up to 16 descriptors, then the guard page. */
			if (fit > 16 && nr > 16)
				fit = 1 + rng_below(r, 16);
			ndesc = nr < fit ? nr : fit;
			if (nr > fit || rng_pct(r, 20)) {
				/* The run ends exactly at the guard, or straddles it. */
				desc = f->tasks_end - ndesc * tsize;
				if (rng_pct(r, 30) && ndesc)
					desc += 8 * (1 + rng_below(r, 4));
			}
			for (uint32_t i = 0; i < ndesc; i++) {
				if (desc + (i + 1) * tsize > f->tasks_end) {
					ndesc = i;
					break;
				}
				m[i] = gen_task(f, desc + i * tsize, tsize, fdi);
			}
		}
		if (readable(f, p, K)) {
			if (rng_pct(r, 6))
				a->flags = 1U << rng_below(r, 32);
			a->tasks = rng_pct(r, 93) ? (uintptr_t)desc : bad_ptr(f);
			a->nr = nr;
			a->task_size = tsize;
		}
	}

	allowed = header_model(f, p, usize, K, K);
	if (!allowed) {
		const struct kgo_submit *a = (void *)(uintptr_t)p;

		if (a->flags || a->task_size < TASK_LEN) {
			allowed = E(EINVAL);
		} else if (a->task_size > f->page) {
			allowed = E(E2BIG);
		} else if (!a->nr) {
			allowed = SUCCESS;	/* returns 0 */
		} else {
			/* Walk the descriptors as the kernel will. */
			for (prefix = 0; prefix < a->nr; prefix++) {
				uint64_t d = a->tasks + (uint64_t)prefix * a->task_size;

				if (!readable(f, d, a->task_size) ||
				    (unsigned char *)(uintptr_t)d != desc + prefix * tsize ||
				    prefix >= ndesc) {
					/*
					 * Cut by the guard page. The kernel checks the
					 * bytes past the struct first: a non-zero one
					 * there before the fault is -E2BIG.
					 */
					static struct tmodel fault = { EFAULT, true };
					uint64_t ok = 0, len = a->task_size - TASK_LEN;

					while (ok < len && readable(f, d + TASK_LEN + ok, 1))
						ok++;
					if (ok && !all_zero((void *)(uintptr_t)(d + TASK_LEN), ok))
						straddle_e2big = true;
					first_bad = &fault;
					break;
				}
				if (m[prefix].err) {
					first_bad = &m[prefix];
					break;
				}
			}
			allowed = (prefix ? SUCCESS : 0) | E(EAGAIN) | E(ENOMEM);
			if (first_bad && !prefix) {
				if (first_bad->precaps)
					allowed = E(first_bad->err);
				else
					allowed |= E(first_bad->err);
				if (straddle_e2big)
					allowed |= E(E2BIG);
			}
		}
	}
	ret = kioctl(f, f->fds[fdi], KGO_IOC_SUBMIT, p);
	err = errno;
	if (!judge(f, "SUBMIT", ret, err, allowed, usize, p))
		return;
	f->ok_by_cmd[2]++;
	if (ret > prefix) {
		flog(f, "SUBMIT accepted %ld tasks, only %u valid ones lead (task_size %u, nr %u)",
		     ret, prefix, tsize, nr);
		ret = prefix;
	}
	if (ret < prefix)
		f->short_submits++;
	for (long i = 0; i < ret; i++) {
		const struct kgo_task *t = (const void *)(desc + i * tsize);

		book_accept(f->book, t->tag);
	}
	f->accepted += ret;
	f->inflight[fdi] += ret;
	if (f->inflight[fdi] > INFLIGHT_HIGH)
		reap_down(f, fdi, INFLIGHT_LOW);
}

/* A command number that is not one of kgo's, and not one the VFS takes. */
static unsigned long bad_cmd(struct fuzz *f)
{
	struct rng *r = &f->rng;
	unsigned int x = rng_below(r, 100), nr, dir, size, type;

	if (x < 45) {
		/* Every nr of the magic: plain for 7..255, with dir/size for 0..6. */
		nr = rng_below(r, 256);
		f->magic_seen[nr / 64] |= 1ULL << (nr % 64);
		if (nr > 6 && rng_pct(r, 50))
			return _IO(KGO_IOC_MAGIC, nr);
		dir = 1 + rng_below(r, 3);
		size = rng_below(r, 1U << _IOC_SIZEBITS);
		if (!size && dir == _IOC_NONE)
			size = 1;
		return _IOC(dir, KGO_IOC_MAGIC, nr, size);
	}
	if (x < 55) {
		/* kgo's numbers with one more bit set anywhere. */
		static const unsigned long cmds[] = {
			KGO_IOC_GET_INFO, KGO_IOC_SUBMIT, KGO_IOC_WAIT, KGO_IOC_STATS,
			KGO_IOC_CANCEL, KGO_IOC_RING_SETUP, KGO_IOC_ENTER,
		};
		unsigned long c0 = cmds[rng_below(r, ARRAY_SIZE(cmds))], c;

		/* nr stays; type, size or dir change. */
		do {
			c = c0 ^ (1UL << (8 + rng_below(r, 24)));
		} while (vfs_type(_IOC_TYPE(c)));
		return c;
	}
	do {
		type = rng_below(r, 256);
	} while (type == KGO_IOC_MAGIC || vfs_type(type));
	if (x < 60)	/* and 64-bit garbage: the kernel takes 32 bits */
		return ((uint64_t)rng_next(r) << 32) | _IOC(rng_below(r, 4), type,
							    rng_below(r, 256),
							    rng_below(r, 1U << 14));
	return _IOC(rng_below(r, 4), type, rng_below(r, 256), rng_below(r, 1U << 14));
}

static void do_bad_cmd(struct fuzz *f, int fdi)
{
	unsigned long cmd = bad_cmd(f);
	struct rng *r = &f->rng;
	unsigned char before[64];
	uint64_t p;
	bool snap = false;
	long ret;

	f->by_cmd[5]++;
	if (rng_pct(r, 40)) {
		p = bad_ptr(f);
	} else {
		p = (uintptr_t)f->arena + 8 * rng_below(r, f->page / 8);
		if (rng_pct(r, 3)) {
			snap = true;
			for (int i = 0; i < 64; i++)
				((unsigned char *)(uintptr_t)p)[i] = before[i] = rng_next(r);
		}
	}
	ret = kioctl(f, f->fds[fdi], cmd, p);
	judge(f, "bad cmd", ret, errno, E(ENOTTY), (uint32_t)cmd, p);
	if (snap && memcmp(before, (void *)(uintptr_t)p, 64))
		flog(f, "ioctl %#lx (ENOTTY) wrote to its argument", cmd);
}

/* read(2) with odd buffers: too small, unaligned sizes, read-only, cut short. */
static void do_read(struct fuzz *f, int fdi)
{
	const uint64_t allowed = ST_OK | ST_CANCELED | ST_NOMEM | ST_AGAIN;
	struct rng *r = &f->rng;
	struct kgo_wait w = { .size = sizeof(w) };
	unsigned int x = rng_below(r, 100);
	unsigned char *buf;
	size_t count, wrec;
	ssize_t ret;
	int err;

	f->calls++;
	if (ioctl(f->fds[fdi], KGO_IOC_WAIT, &w) && errno != ETIMEDOUT)
		flog(f, "WAIT (read): %s", strerror(errno));
	if (fdi == 0 && !w.ready)
		return;	/* blocking fd */

	if (x < 15) {
		count = rng_below(r, REC);
		buf = f->scratch;
	} else if (x < 55) {
		count = REC * (1 + rng_below(r, 8)) + (rng_pct(r, 30) ? rng_below(r, REC) : 0);
		buf = f->scratch + 8 * rng_below(r, 64);
	} else if (x < 75) {
		/* Room for k records, the last one cut by the guard page. */
		size_t k = rng_below(r, 4);

		count = REC * (k + 1 + rng_below(r, 4));
		buf = f->scratch_end - k * REC - rng_below(r, REC);
	} else if (x < 85) {
		count = REC * (1 + rng_below(r, 4));
		buf = f->ro;
	} else {
		count = REC * (1 + rng_below(r, 4));
		buf = (unsigned char *)(uintptr_t)bad_ptr(f);
	}
	wrec = 0;
	while (wrec < count / REC && writable(f, (uintptr_t)buf + wrec * REC, REC))
		wrec++;

	f->reads++;
	ret = read(f->fds[fdi], buf, count);
	err = errno;
	if (ret < 0) {
		bool ok = count < REC ? err == EINVAL :
			  err == EAGAIN ? fdi != 0 : err == EFAULT && !wrec;

		if (!ok)
			flog(f, "read(%zu bytes, %zu writable records) on fd %d: %s", count,
			     wrec, fdi, strerror(err));
		return;
	}
	if (count < REC || ret % REC || (size_t)ret > wrec * REC || !ret) {
		flog(f, "read(%zu bytes, %zu writable records) returned %zd", count, wrec, ret);
		return;
	}
	for (size_t i = 0; i < (size_t)ret / REC; i++) {
		struct kgo_completion c;

		memcpy(&c, buf + i * REC, REC);
		book_complete(f->book, &c, fdi, &allowed);
	}
	if ((uint32_t)(ret / REC) > f->inflight[fdi])
		flog(f, "read %zd records, only %u in flight", ret / REC, f->inflight[fdi]);
	else
		f->inflight[fdi] -= ret / REC;
}

/* Closes the churn fd with its tasks in flight (unread), and reopens it. */
static void churn(struct fuzz *f)
{
	book_abandon(f->book, CHURN_FD);
	close(f->fds[CHURN_FD]);
	f->fds[CHURN_FD] = open(KGO_DEVICE_PATH, O_RDWR | O_NONBLOCK);
	if (f->fds[CHURN_FD] < 0)
		flog(f, "reopen %s: %s", KGO_DEVICE_PATH, strerror(errno));
	f->inflight[CHURN_FD] = 0;
	f->churns++;
}

static void *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

FIXTURE(fuzz) {
	struct fuzz f;
	unsigned char *region;
	size_t region_len;
};

FIXTURE_SETUP(fuzz)
{
	struct fuzz *f = &self->f;
	struct kgo_info info = { .size = sizeof(info) };
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *q;

	f->page = pg;
	/*
	 * One reservation, carved up: arena (2) guard (1) ro (1) guard (1)
	 * tasks (2) guard (1) scratch (4) guard (1) data (16) guard (1).
	 */
	self->region_len = (30 + DATA_LEN / pg) * pg;
	self->region = map(self->region_len, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, self->region);
	q = self->region;
	f->arena = q;
	f->guard = q + 2 * pg;
	f->ro = q + 3 * pg;
	f->tasks = q + 5 * pg;
	f->tasks_end = f->tasks + 2 * pg;
	f->scratch = q + 8 * pg;
	f->scratch_end = f->scratch + 4 * pg;
	f->data = q + 13 * pg;
	ASSERT_EQ(0, mprotect(f->guard, pg, PROT_NONE));
	ASSERT_EQ(0, mprotect(f->ro + pg, pg, PROT_NONE));
	ASSERT_EQ(0, mprotect(f->tasks_end, pg, PROT_NONE));
	ASSERT_EQ(0, mprotect(f->scratch_end, pg, PROT_NONE));
	ASSERT_EQ(0, mprotect(f->data + DATA_LEN, pg, PROT_NONE));
	/* The rest: no access, with an unmapped hole in it. */
	ASSERT_EQ(0, mprotect(f->data + DATA_LEN + pg, self->region_len - (f->data + DATA_LEN + pg -
								       self->region), PROT_NONE));
	f->hole = f->data + DATA_LEN + 3 * pg;
	ASSERT_EQ(0, munmap(f->hole, pg));

	/* fd 0 blocking (read only when WAIT says ready), the rest not. */
	for (int i = 0; i < NFDS; i++)
		KGO_OPEN(f->fds[i], i ? O_NONBLOCK : 0);
	ASSERT_EQ(0, ioctl(f->fds[0], KGO_IOC_GET_INFO, &info));
	f->nprocs = info.nr_procs;
	ASSERT_EQ(sizeof(struct kgo_task), info.task_size);
	ASSERT_EQ(REC, info.completion_size);
}

FIXTURE_TEARDOWN(fuzz)
{
	for (int i = 0; i < NFDS; i++)
		if (self->f.fds[i] > 0)
			close(self->f.fds[i]);
	if (self->region)
		munmap(self->region, self->region_len);
	book_free(self->f.book);
}

/* The read-only page: one valid struct of each command, then read-only. */
static void fill_ro(struct fuzz *f)
{
	struct kgo_info *info = (void *)(f->ro + RO_INFO);
	struct kgo_wait *w = (void *)(f->ro + RO_WAIT);
	struct kgo_cancel *c = (void *)(f->ro + RO_CANCEL);
	struct kgo_stats *st = (void *)(f->ro + RO_STATS);
	struct kgo_submit *s = (void *)(f->ro + RO_SUBMIT);

	memset(f->ro, 0, f->page);
	info->size = sizeof(*info);
	*w = (struct kgo_wait){ .size = sizeof(*w) };
	*c = (struct kgo_cancel){ .size = sizeof(*c), .flags = KGO_CANCEL_ALL };
	st->size = sizeof(*st);
	*s = (struct kgo_submit){
		.size = sizeof(*s), .tasks = (uintptr_t)f->tasks, .nr = 1,
		.task_size = TASK_LEN,
	};
}

TEST_F_TIMEOUT(fuzz, ioctls, TIMEOUT_S)
{
	struct fuzz *f = &self->f;
	const char *env = getenv("KGO_FUZZ_CALLS");
	uint64_t seed = seed_from_env("KGO_FUZZ_SEED");
	uint64_t target = env ? strtoull(env, NULL, 0) : DEFAULT_CALLS;
	uint64_t iter = 0, start, elapsed, missing, left = 0;
	const uint64_t allowed = ST_OK | ST_CANCELED | ST_NOMEM | ST_AGAIN;
	int err;

	TH_LOG("seed %#llx (KGO_FUZZ_SEED=%#llx to repeat), %llu calls",
	       (unsigned long long)seed, (unsigned long long)seed,
	       (unsigned long long)target);
	rng_seed(&f->rng, seed);
	f->book = book_init(BOOK_CAP, rng_next(&f->rng), false);
	ASSERT_NE(NULL, f->book);
	f->book->strict = true;
	f->book->cancel_running = true;	/* do_cancel() sets KGO_CANCEL_RUNNING */
	f->book->data = f->data;
	for (size_t i = 0; i < DATA_LEN; i++)
		f->data[i] = rng_next(&f->rng);
	ASSERT_EQ(0, mprotect(f->data, DATA_LEN, PROT_READ));
	fill_ro(f);
	ASSERT_EQ(0, mprotect(f->ro, f->page, PROT_READ));

	start = now_ns();
	while (f->calls < target && f->bad < 1000 && now_ns() - start < BUDGET_NS) {
		int fdi = rng_below(&f->rng, NFDS);
		unsigned int x = rng_below(&f->rng, 1000);

		if (f->fds[fdi] < 0)
			break;
		/* Mostly cheap calls, so that a million fit in the time. */
		if (x < 500)
			do_bad_cmd(f, fdi);
		else if (x < 720)
			do_get_info(f, fdi);
		else if (x < 800)
			do_wait(f, fdi);
		else if (x < 840)
			do_cancel(f, fdi);
		else if (x < 900)
			do_stats(f, fdi);
		else if (x < 996)
			do_submit(f, fdi);
		else
			do_read(f, fdi);
		if (++iter % CHURN_EVERY == 0)
			churn(f);
	}
	elapsed = now_ns() - start;

	/* Everything in flight: read it all. */
	for (int i = 0; i < NFDS; i++) {
		long n;

		if (f->fds[i] < 0)
			continue;
		if (i == 0) {
			/* Blocking fd: a non-blocking twin would be another session. */
			reap_down(f, 0, 0);
			continue;
		}
		n = book_drain(f->book, f->fds[i], i, allowed, 60 * NSEC);
		EXPECT_LE(0, n) TH_LOG("draining fd %d: %s", i, strerror(-n));
		if (n > 0)
			f->inflight[i] -= n < f->inflight[i] ? n : f->inflight[i];
		left += f->inflight[i];
	}
	missing = book_missing(f->book);

	TH_LOG("%llu ioctl calls and %llu reads in %.1f s: %.0f calls/s; %llu iterations",
	       (unsigned long long)f->calls, (unsigned long long)f->reads, elapsed / 1e9,
	       f->calls / (elapsed / 1e9), (unsigned long long)iter);
	TH_LOG("per command (calls/succeeded): GET_INFO %llu/%llu WAIT %llu/%llu SUBMIT %llu/%llu STATS %llu/%llu CANCEL %llu/%llu bad cmd %llu",
	       (unsigned long long)f->by_cmd[0], (unsigned long long)f->ok_by_cmd[0],
	       (unsigned long long)f->by_cmd[1], (unsigned long long)f->ok_by_cmd[1],
	       (unsigned long long)f->by_cmd[2], (unsigned long long)f->ok_by_cmd[2],
	       (unsigned long long)f->by_cmd[3], (unsigned long long)f->ok_by_cmd[3],
	       (unsigned long long)f->by_cmd[4], (unsigned long long)f->ok_by_cmd[4],
	       (unsigned long long)f->by_cmd[5]);
	TH_LOG("errnos: EINVAL %llu E2BIG %llu EFAULT %llu ENOTTY %llu EAGAIN %llu ENOMEM %llu ETIMEDOUT %llu EINTR %llu",
	       (unsigned long long)f->errs[EINVAL], (unsigned long long)f->errs[E2BIG],
	       (unsigned long long)f->errs[EFAULT], (unsigned long long)f->errs[ENOTTY],
	       (unsigned long long)f->errs[EAGAIN], (unsigned long long)f->errs[ENOMEM],
	       (unsigned long long)f->errs[63], (unsigned long long)f->errs[EINTR]);
	TH_LOG("tasks: %llu descriptors, %llu accepted (%llu abandoned on %llu closes), %llu completed (ok %llu, cancelled %llu, ENOMEM %llu, EAGAIN %llu, other %llu); %llu short SUBMITs",
	       (unsigned long long)f->submitted, (unsigned long long)f->accepted,
	       (unsigned long long)f->book->abandoned, (unsigned long long)f->churns,
	       (unsigned long long)f->book->done,
	       (unsigned long long)f->book->status[0], (unsigned long long)f->book->status[1],
	       (unsigned long long)f->book->status[2], (unsigned long long)f->book->status[3],
	       (unsigned long long)f->book->status[4], (unsigned long long)f->short_submits);

	/* Every call the budget allowed: the loop only ends early on its clock. */
	EXPECT_TRUE(f->calls >= target || elapsed >= BUDGET_NS)
		TH_LOG("%llu of %llu calls in %.1f s", (unsigned long long)f->calls,
		       (unsigned long long)target, elapsed / 1e9);
	for (int i = 0; i < 6; i++) {
		int cmd = i;

		EXPECT_LT(0, f->by_cmd[cmd]) TH_LOG("command %d never called", cmd);
	}
	EXPECT_EQ(0, f->bad);
	EXPECT_EQ(0, f->book->errors);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, left);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(~0ULL, f->magic_seen[i]) TH_LOG("not every nr of the magic was called");
	EXPECT_LT(0, f->accepted);
	EXPECT_EQ(f->accepted, f->book->done + f->book->abandoned);

	/* The module still works: every fd closed, a fresh one runs a NOP. */
	for (int i = 0; i < NFDS; i++) {
		if (f->fds[i] >= 0)
			close(f->fds[i]);
		f->fds[i] = -1;
	}
	err = kgo_nop_works(30 * NSEC);
	EXPECT_EQ(0, err) TH_LOG("a NOP on a fresh fd: %s", strerror(err));
	{
		int fd = open(KGO_DEVICE_PATH, O_RDWR);
		long long g;

		ASSERT_LE(0, fd);
		g = kgo_wait_quiet(fd, 10 * NSEC);
		EXPECT_EQ(0, g) TH_LOG("%lld goroutines still alive", g);
		close(fd);
	}
}

TEST_HARNESS_MAIN
