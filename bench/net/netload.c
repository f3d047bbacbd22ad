// SPDX-License-Identifier: GPL-2.0
/*
 * netload: the load generator of make bench's "net" group. It opens
 * -conns TCP connections to 127.0.0.1:-port, and each runs a closed loop:
 * send one message of -size bytes, read until all of it came back (the
 * servers are byte-stream echoes, so a message may come back in pieces),
 * send the next. It prints the servers' figures as the JSON lines that
 * tools/bench/report reads: messages per second, p50 and p99 round-trip
 * latency, and optionally memory per connection and kgo's Ms per CPU.
 *
 *   netload -impl NAME [-conns N] [-size B] [-secs S | -msgs M]
 *           [-warmup S] [-port P] [-threads T] [-verify] [-mem] [-kgo-ms]
 *
 * One thread per CPU, each with its own epoll set and its share of the
 * connections: the client must not be what limits a server that scales
 * over the CPUs, and a thread per connection would cost the client what
 * the servers are being compared on. Latencies go into a log-linear
 * histogram per thread (32 steps per power of two, about 3%), so that
 * 10,000 connections cost no more memory than 100 to measure.
 *
 * The run: every connection is opened, then does one round trip, and
 * rests; that is when -mem reads the memory in use (see mem_used()).
 * Then all run for -warmup seconds unmeasured and -secs measured (or,
 * with -msgs, each does M more round trips, all measured). Every byte
 * sent is a function of the connection and its offset in the stream, so
 * -verify checks each echoed byte. Any error, a connection closed by
 * the server or (with -verify) a wrong byte ends the run with exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#define NSEC		1000000000ULL
#define MAX_SIZE	1048576
#define KGO_SCHED	"/sys/kernel/debug/kgo/sched"
#define HIST_SUB	32		/* steps per power of two */
#define HIST_BUCKETS	(64 + 58 * HIST_SUB)

enum phase { PH_PRIME, PH_WARMUP, PH_MEASURE, PH_STOP };

struct conn {
	int fd;
	__u32 id;
	__u32 sent;		/* bytes of the current message written */
	__u32 rcvd;		/* bytes of it read back */
	__u64 off;		/* stream offset of the current message */
	__u64 t0;		/* when its first byte was written */
	__u64 left;		/* round trips still to do with -msgs */
	bool out;		/* EPOLLOUT wanted: a write was short */
	bool idle;		/* no message in flight */
};

struct worker {
	pthread_t thread;
	int idx;
	int epfd;
	struct conn *conns;
	unsigned int nconns;
	unsigned char *sbuf, *rbuf;
	__u64 msgs;		/* round trips completed while measuring */
	__u64 *hist;
};

static struct {
	const char *impl;
	unsigned int conns, size, threads, port;
	double secs, warmup;
	__u64 msgs;		/* -msgs: round trips per connection */
	bool verify, mem, kgo_ms;
} opt = {
	.conns = 100, .size = 64, .port = 7007, .secs = 5, .warmup = 1,
};

static atomic_int phase = PH_PRIME;
static atomic_uint primed;	/* workers done with their first trip */
static atomic_uint finished;	/* workers done with -msgs */
static atomic_int failed;
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static __u64 min_u64(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static void sleep_ns(__u64 ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC, .tv_nsec = ns % NSEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The first error ends the run: every worker sees PH_STOP and returns. */
static void fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&err_lock);
	if (!atomic_exchange(&failed, 1)) {
		fprintf(stderr, "netload: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&err_lock);
	atomic_store(&phase, PH_STOP);
}

/* The byte at offset @off of connection @id's stream. */
static inline unsigned char pattern(__u32 id, __u64 off)
{
	__u64 x = (off + 1) * 0x9e3779b97f4a7c15ULL ^ (__u64)id * 0xbf58476d1ce4e5b9ULL;

	return x >> 56;
}

static unsigned int hist_bucket(__u64 v)
{
	unsigned int e;

	if (v < 64)
		return v;
	e = 63 - __builtin_clzll(v);	/* 6 and up */
	return 64 + (e - 6) * HIST_SUB + ((v >> (e - 5)) & (HIST_SUB - 1));
}

/* The middle of bucket @b's range. */
static __u64 hist_value(unsigned int b)
{
	unsigned int e, sub;
	__u64 lo, width;

	if (b < 64)
		return b;
	e = (b - 64) / HIST_SUB + 6;
	sub = (b - 64) % HIST_SUB;
	width = 1ULL << (e - 5);
	lo = (1ULL << e) + sub * width;
	return lo + width / 2;
}

static int set_events(struct worker *w, struct conn *c, bool out)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (out ? EPOLLOUT : 0),
		.data.ptr = c,
	};

	if (c->out == out)
		return 0;
	c->out = out;
	if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev)) {
		fail("epoll_ctl: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Writes what is left of @c's message; waits for EPOLLOUT if it must. */
static int conn_write(struct worker *w, struct conn *c)
{
	while (c->sent < opt.size) {
		ssize_t n;

		for (unsigned int i = c->sent; i < opt.size; i++)
			w->sbuf[i] = pattern(c->id, c->off + i);
		n = write(c->fd, w->sbuf + c->sent, opt.size - c->sent);
		if (n < 0 && errno == EAGAIN)
			return set_events(w, c, true);
		if (n < 0) {
			fail("connection %u: write: %s", c->id, strerror(errno));
			return -1;
		}
		c->sent += n;
	}
	return set_events(w, c, false);
}

static int conn_start(struct worker *w, struct conn *c)
{
	c->sent = 0;
	c->rcvd = 0;
	c->idle = false;
	c->t0 = now_ns();
	return conn_write(w, c);
}

/* Reads what came back; at the end of a message, counts it. */
static int conn_read(struct worker *w, struct conn *c)
{
	ssize_t n;
	__u64 t;
	int ph;

	if (c->idle) {
		/* Nothing was sent: the server is talking out of turn. */
		n = read(c->fd, w->rbuf, 1);
		if (n == 0)
			fail("connection %u: closed by the server", c->id);
		else if (n > 0)
			fail("connection %u: %zd byte(s) nobody sent", c->id, n);
		else if (errno != EAGAIN)
			fail("connection %u: read: %s", c->id, strerror(errno));
		return n < 0 && errno == EAGAIN ? 0 : -1;
	}
	/* A closed loop: never more than the message is owed to us. */
	n = read(c->fd, w->rbuf, opt.size - c->rcvd);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n < 0) {
		fail("connection %u: read: %s", c->id, strerror(errno));
		return -1;
	}
	if (n == 0) {
		fail("connection %u: closed by the server", c->id);
		return -1;
	}
	if (n > (ssize_t)c->sent - c->rcvd) {
		fail("connection %u: %zd bytes back, only %u sent", c->id, n,
		     c->sent - c->rcvd);
		return -1;
	}
	if (opt.verify) {
		for (ssize_t i = 0; i < n; i++) {
			__u64 off = c->off + c->rcvd + i;

			if (w->rbuf[i] != pattern(c->id, off)) {
				fail("connection %u: byte %llu is 0x%02x, not 0x%02x",
				     c->id, (unsigned long long)off, w->rbuf[i],
				     pattern(c->id, off));
				return -1;
			}
		}
	}
	c->rcvd += n;
	if (c->rcvd < opt.size)
		return 0;

	t = now_ns();
	c->off += opt.size;
	c->idle = true;
	ph = atomic_load_explicit(&phase, memory_order_relaxed);
	if (ph == PH_PRIME)
		return 1;	/* the first round trip: rest */
	if (ph == PH_MEASURE) {
		w->msgs++;
		w->hist[hist_bucket(t - c->t0)]++;
	}
	if (opt.msgs) {
		if (--c->left == 0)
			return 1;
	} else if (ph == PH_STOP) {
		return 1;
	}
	return conn_start(w, c) ? -1 : 0;
}

static int conn_open(struct worker *w, struct conn *c)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(opt.port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		fail("socket: %s", strerror(errno));
		return -1;
	}
	/* Blocking: a full accept queue then costs a wait, not an error. */
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fail("connection %u: connect to port %u: %s", c->id, opt.port,
		     strerror(errno));
		return -1;
	}
	/* Every message goes out at once, whatever is unacknowledged. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fcntl(c->fd, F_SETFL, O_NONBLOCK) ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev)) {
		fail("connection %u: %s", c->id, strerror(errno));
		return -1;
	}
	c->idle = true;
	c->left = opt.msgs;
	return 0;
}

/*
 * Serves @w's connections until PH_STOP, or with @until_rest until all
 * @busy of them in flight are at rest.
 */
static int run_loop(struct worker *w, unsigned int busy, bool until_rest)
{
	struct epoll_event evs[256];

	while (atomic_load(&phase) != PH_STOP) {
		int n;

		if (until_rest && busy == 0)
			return 0;
		n = epoll_wait(w->epfd, evs, 256, 50);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail("epoll_wait: %s", strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			int r = 0;

			if ((evs[i].events & EPOLLOUT) && !c->idle)
				r = conn_write(w, c);
			if (!r && (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
				r = conn_read(w, c);
			if (r < 0)
				return -1;
			if (r > 0)
				busy--;
		}
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	for (i = 0; i < w->nconns; i++)
		if (conn_open(w, &w->conns[i]))
			return NULL;
	/* One round trip each, then rest until every worker got there. */
	for (i = 0; i < w->nconns; i++)
		if (conn_start(w, &w->conns[i]))
			return NULL;
	if (run_loop(w, w->nconns, true))
		return NULL;
	atomic_fetch_add(&primed, 1);
	while (atomic_load(&phase) == PH_PRIME)
		sleep_ns(1000000);
	if (atomic_load(&phase) == PH_STOP)
		return NULL;
	for (i = 0; i < w->nconns; i++)
		if (conn_start(w, &w->conns[i]))
			return NULL;
	if (opt.msgs) {
		if (!run_loop(w, w->nconns, true))
			atomic_fetch_add(&finished, 1);
	} else {
		run_loop(w, w->nconns, false);
	}
	return NULL;
}

/*
 * Memory in use, in bytes: MemTotal - MemFree of /proc/meminfo. Of the
 * ways to count one server's memory, only this one is the same for all
 * four: a kthread's stack and task, a goroutine's vmalloc'd stack, a
 * socket in slab and a Go heap are each a page that MemFree no longer
 * has, whoever took it. The delta includes the client's end of each
 * connection, the same whatever the server; nothing else runs.
 */
static long long mem_used(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	long long total = -1, free_kb = -1, v;
	char line[256];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %lld kB", &v) == 1)
			total = v;
		else if (sscanf(line, "MemFree: %lld kB", &v) == 1)
			free_kb = v;
	}
	fclose(f);
	return total < 0 || free_kb < 0 ? -1 : (total - free_kb) * 1024;
}

/* kgo's Ms (threads=) and Ps (gomaxprocs=) from debugfs; 0 or -1. */
static int kgo_ms(unsigned int *ms, unsigned int *ps)
{
	FILE *f = fopen(KGO_SCHED, "r");
	char line[512], *t, *p;
	int ret = -1;

	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f)) {
		t = strstr(line, " threads=");
		p = strstr(line, "gomaxprocs=");
		if (t && p) {
			*ms = strtoul(t + 9, NULL, 10);
			*ps = strtoul(p + 11, NULL, 10);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

static void bad_usage(void)
{
	fputs("usage: netload -impl NAME [-conns N] [-size B] [-secs S | -msgs M]\n"
	      "    [-warmup S] [-port P] [-threads T] [-verify] [-mem] [-kgo-ms]\n", stderr);
	exit(2);
}

static unsigned long long num(const char *name, const char *s,
			      unsigned long long lo, unsigned long long hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "netload: %s %s: not a number from %llu to %llu\n",
			name, s, lo, hi);
		exit(2);
	}
	return v;
}

static double secs(const char *name, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= 0 && v <= 86400)) {
		fprintf(stderr, "netload: %s %s: not a time in seconds\n", name, s);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-verify")) {
			opt.verify = true;
			continue;
		}
		if (!strcmp(a, "-mem")) {
			opt.mem = true;
			continue;
		}
		if (!strcmp(a, "-kgo-ms")) {
			opt.kgo_ms = true;
			continue;
		}
		if (!v)
			bad_usage();
		i++;
		if (!strcmp(a, "-impl"))
			opt.impl = v;
		else if (!strcmp(a, "-conns"))
			opt.conns = num(a, v, 1, 1000000);
		else if (!strcmp(a, "-size"))
			opt.size = num(a, v, 1, MAX_SIZE);
		else if (!strcmp(a, "-secs"))
			opt.secs = secs(a, v);
		else if (!strcmp(a, "-msgs"))
			opt.msgs = num(a, v, 1, 1ULL << 40);
		else if (!strcmp(a, "-warmup"))
			opt.warmup = secs(a, v);
		else if (!strcmp(a, "-port"))
			opt.port = num(a, v, 1, 65535);
		else if (!strcmp(a, "-threads"))
			opt.threads = num(a, v, 1, 1024);
		else
			bad_usage();
	}
	if (!opt.impl || strchr(opt.impl, '"') || strchr(opt.impl, '\\'))
		bad_usage();
}

/* Room for every connection's fd, and then some. */
static void raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want = opt.conns + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want;
	if (rl.rlim_max < want)
		rl.rlim_max = want;	/* root may raise the hard limit */
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fprintf(stderr, "netload: cannot raise RLIMIT_NOFILE to %llu: %s\n",
			(unsigned long long)want, strerror(errno));
}

static void line(const char *what, const char *unit, const char *better,
		 double value, const char *extra)
{
	printf("{\"metric\":\"net_%s_c%u\",\"impl\":\"%s\",\"unit\":\"%s\",",
	       what, opt.conns, opt.impl, unit);
	printf("\"better\":\"%s\",\"value\":%.10g,\"conns\":%u,\"size\":%u%s}\n",
	       better, value, opt.conns, opt.size, extra);
}

/*
 * A figure that this run could not measure: the line says why, and has
 * no value, so that no reader mistakes a stand-in for a measurement.
 */
static void line_missing(const char *what, const char *unit, const char *reason,
			 const char *extra)
{
	printf("{\"metric\":\"net_%s_c%u\",\"impl\":\"%s\",\"unit\":\"%s\",",
	       what, opt.conns, opt.impl, unit);
	printf("\"missing\":\"%s\",\"conns\":%u,\"size\":%u%s}\n",
	       reason, opt.conns, opt.size, extra);
}

static __u64 quantile(const __u64 *hist, __u64 total, double q)
{
	__u64 rank = (__u64)(q * total + 0.999999), seen = 0;

	if (rank < 1)
		rank = 1;
	for (unsigned int b = 0; b < HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= rank)
			return hist_value(b);
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int i, t, ms_max = 0, ms_ps = 0;
	long long mem0 = -1, mem1 = -1;
	struct conn *conns;
	struct worker *ws;
	__u64 t0, t1, msgs = 0, *hist;
	char extra[128];

	parse(argc, argv);
	if (!opt.threads)
		opt.threads = sysconf(_SC_NPROCESSORS_ONLN) > 0 ?
			      sysconf(_SC_NPROCESSORS_ONLN) : 1;
	if (opt.threads > opt.conns)
		opt.threads = opt.conns;
	if (!opt.msgs && opt.secs <= 0)
		bad_usage();
	raise_nofile();

	conns = calloc(opt.conns, sizeof(*conns));
	ws = calloc(opt.threads, sizeof(*ws));
	hist = calloc(HIST_BUCKETS, sizeof(*hist));
	if (!conns || !ws || !hist) {
		fprintf(stderr, "netload: out of memory\n");
		return 1;
	}
	/* Each worker has a contiguous slice of the connections. */
	for (i = 0, t = 0; t < opt.threads; t++) {
		struct worker *w = &ws[t];

		w->idx = t;
		w->conns = &conns[i];
		w->nconns = opt.conns / opt.threads + (t < opt.conns % opt.threads);
		for (unsigned int k = 0; k < w->nconns; k++) {
			w->conns[k].id = i + k;
			w->conns[k].fd = -1;
		}
		i += w->nconns;
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		w->sbuf = malloc(opt.size);
		w->rbuf = malloc(opt.size);
		w->hist = calloc(HIST_BUCKETS, sizeof(*w->hist));
		if (w->epfd < 0 || !w->sbuf || !w->rbuf || !w->hist) {
			fprintf(stderr, "netload: worker setup: %s\n", strerror(errno));
			return 1;
		}
	}

	if (opt.mem)
		mem0 = mem_used();
	for (t = 0; t < opt.threads; t++)
		if (pthread_create(&ws[t].thread, NULL, worker_main, &ws[t])) {
			fprintf(stderr, "netload: pthread_create failed\n");
			return 1;
		}
	while (atomic_load(&primed) < opt.threads && !atomic_load(&failed))
		sleep_ns(10000000);
	if (opt.mem && !atomic_load(&failed)) {
		/* Every connection is open, served and at rest. */
		sleep_ns(NSEC / 2);
		mem1 = mem_used();
	}

	atomic_store(&phase, opt.msgs ? PH_MEASURE : PH_WARMUP);
	t0 = now_ns();
	if (!opt.msgs) {
		sleep_ns(opt.warmup * NSEC);
		atomic_store(&phase, PH_MEASURE);
		t0 = now_ns();
	}
	/* Measure, sampling kgo's Ms every 100 ms on the way. */
	for (;;) {
		__u64 now = now_ns();
		unsigned int ms, ps;

		if (atomic_load(&failed))
			break;
		if (opt.msgs ? atomic_load(&finished) == opt.threads :
			       now - t0 >= opt.secs * NSEC)
			break;
		if (opt.kgo_ms && !kgo_ms(&ms, &ps) && ms > ms_max) {
			ms_max = ms;
			ms_ps = ps;
		}
		if (opt.msgs)
			sleep_ns(10000000);
		else
			sleep_ns(min_u64(100000000, opt.secs * NSEC - (now - t0)));
	}
	t1 = now_ns();
	atomic_store(&phase, PH_STOP);
	for (t = 0; t < opt.threads; t++)
		pthread_join(ws[t].thread, NULL);
	for (i = 0; i < opt.conns; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
	if (atomic_load(&failed))
		return 1;

	for (t = 0; t < opt.threads; t++) {
		msgs += ws[t].msgs;
		for (unsigned int b = 0; b < HIST_BUCKETS; b++)
			hist[b] += ws[t].hist[b];
	}
	if (!msgs) {
		fprintf(stderr, "netload: no round trip completed while measuring\n");
		return 1;
	}
	snprintf(extra, sizeof(extra), ",\"msgs\":%llu,\"secs\":%.3f%s",
		 (unsigned long long)msgs, (t1 - t0) / 1e9,
		 opt.verify ? ",\"verified\":true" : "");
	line("msgs", "msgs/s", "higher", msgs * 1e9 / (t1 - t0), extra);
	line("p50", "ns", "lower", quantile(hist, msgs, 0.50), "");
	line("p99", "ns", "lower", quantile(hist, msgs, 0.99), "");
	if (opt.mem && mem0 >= 0 && mem1 >= 0) {
		double per = (double)(mem1 - mem0) / opt.conns;

		/*
		 * Noise (the page cache, a kworker's allocation) can outweigh
		 * a few connections: below a byte a connection, what was
		 * measured is the noise, and the figure is missing.
		 */
		snprintf(extra, sizeof(extra), ",\"delta_bytes\":%lld", mem1 - mem0);
		if (per >= 1)
			line("mem", "B/conn", "lower", per, extra);
		else
			line_missing("mem", "B/conn",
				     "MemTotal-MemFree did not grow by a byte per connection: noise outweighs them",
				     extra);
	}
	if (opt.kgo_ms) {
		if (!ms_ps) {
			fprintf(stderr, "netload: -kgo-ms: no threads= in %s\n", KGO_SCHED);
			return 1;
		}
		snprintf(extra, sizeof(extra), ",\"ms_max\":%u,\"ps\":%u,\"goal\":2",
			 ms_max, ms_ps);
		line("m_per_cpu", "Ms/CPU", "lower", (double)ms_max / ms_ps, extra);
	}
	return 0;
}
