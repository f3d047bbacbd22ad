// SPDX-License-Identifier: GPL-2.0
/*
 * The debugfs views in /sys/kernel/debug/kgo: every line of sched,
 * procs, ms and goroutines parses with its documented format, sched and
 * procs agree on the Ps, and goroutines shows parked goroutines with
 * their wait reason and function while they sleep, and stacks each one
 * with its kernel stack. Skips where the kernel has no debugfs.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/kgo.h>
#include <linux/magic.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

#define DEBUGFS		"/sys/kernel/debug"
#define KGO_DIR		DEBUGFS "/kgo"
#define MSEC		1000000ULL
#define NSLEEPERS	50
/*
 * Sleepers that end only when cancelled, once seen (or at this, the
 * longest sleep there is): however slowly a busy host lets them start,
 * they are all parked at once in the end.
 */
#define SLEEP_NS	KGO_SLEEP_MAX_NS

/* Counters a P line must have after gfreecnt= (struct kgo_pstats). */
static const char *const pstat_names[] = {
	"gcreated", "gstarted", "gfinished", "schedticks", "runnext_hits",
	"globrunq_takes", "steal_attempts", "steals", "stolen", "parks",
	"readies", "yields", "mparks", "mwakes", "spinning", "preempts",
	"handoffs", "hog_reliefs", "fresh_kept", "fresh_published", "fresh_aged",
};

static bool is_debugfs(const char *path)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == DEBUGFS_MAGIC;
}

/* Mounts debugfs if need be. Returns false if the kernel has none. */
static bool have_debugfs(void)
{
	if (is_debugfs(DEBUGFS))
		return true;
	return !mount("debugfs", DEBUGFS, "debugfs", 0, NULL) && is_debugfs(DEBUGFS);
}

static FILE *open_view(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), KGO_DIR "/%s", name);
	return fopen(path, "r");
}

/* A line with its newline cut off, or false at the end of @f. */
static bool next_line(FILE *f, char *line, size_t size)
{
	size_t len;

	if (!fgets(line, size, f))
		return false;
	len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[len - 1] = '\0';
	return true;
}

struct sched_line {
	int gomaxprocs, idleprocs, spinning;
	unsigned int threads, idlethreads, runqueue;
	long long goroutines;
};

/* The formats of the views; %n checks that a whole line was read. */
#define SCHED_FMT	"gomaxprocs=%d idleprocs=%d threads=%u spinningthreads=%d " \
			"idlethreads=%u runqueue=%u goroutines=%lld%n"
#define PROC_FMT	"P%d: cpu=%d status=%15[a-z] m=%lld schedtick=%u runqsize=%u " \
			"runnext=%llu fresh=%u gfreecnt=%u%n"
#define PSTAT_FMT	" %31[a-z_]=%llu%n"
#define M_FMT		"M%llu: cpu=%d p=%d curg=%llu spinning=%d state=%c%n"
/* fn is the rest of the line: "sym [module]" has a space. */
#define G_FMT		"G%llu: status=%15[a-z] waitreason=\"%31[^\"]\" for_ns=%llu m=%lld " \
			"fn=%127[^\n]%n"
/* %[^"] fails on an empty string: the empty reason has its own format. */
#define G_FMT_NOREASON	"G%llu: status=%15[a-z] waitreason=\"\" for_ns=%llu m=%lld fn=%127[^\n]%n"
#define STACK_G_FMT	"G%llu: status=waiting waitreason=\"%31[^\"]\" fn=%127[^\n]%n"

static int parse_sched(const char *line, struct sched_line *s)
{
	int end = -1;

	if (sscanf(line, SCHED_FMT, &s->gomaxprocs, &s->idleprocs, &s->threads,
		   &s->spinning, &s->idlethreads, &s->runqueue, &s->goroutines,
		   &end) != 7)
		return -1;
	return end == (int)strlen(line) ? 0 : -1;
}

FIXTURE(debugfs) {
	bool have;		/* debugfs is there: else every test skips */
	int fd;			/* /dev/kgo */
};

FIXTURE_SETUP(debugfs)
{
	KGO_OPEN(self->fd, 0);
	self->have = have_debugfs();
}

FIXTURE_TEARDOWN(debugfs)
{
	close(self->fd);
}

/* Runs one NOP to the end: at least one M exists afterwards. */
static int run_nop(int fd)
{
	struct kgo_task t = { .kind = KGO_TASK_NOP, .tag = 1 };
	struct kgo_completion c;

	if (submit(fd, &t, 1) != 1)
		return -1;
	if (read(fd, &c, sizeof(c)) != sizeof(c))
		return -1;
	return c.status;
}

TEST_F(debugfs, sched_and_procs)
{
	char line[1024], status[16];
	struct sched_line s;
	int nlines = 0, nonline = 0;
	FILE *f;

	if (!self->have)
		SKIP(return, "no debugfs");

	f = open_view("sched");
	ASSERT_NE(NULL, f) TH_LOG(KGO_DIR "/sched: %s", strerror(errno));
	ASSERT_TRUE(next_line(f, line, sizeof(line)));
	EXPECT_EQ(0, parse_sched(line, &s)) TH_LOG("sched: '%s'", line);
	EXPECT_FALSE(next_line(f, line, sizeof(line))) TH_LOG("sched: '%s'", line);
	fclose(f);
	EXPECT_LE(1, s.gomaxprocs);
	EXPECT_LE(0, s.idleprocs);
	EXPECT_GE(s.gomaxprocs, s.idleprocs);
	EXPECT_GE(s.threads, s.idlethreads);
	EXPECT_LE(0, s.goroutines);

	f = open_view("procs");
	ASSERT_NE(NULL, f) TH_LOG(KGO_DIR "/procs: %s", strerror(errno));
	while (next_line(f, line, sizeof(line))) {
		unsigned long long runnext, val;
		unsigned int schedtick, runqsize, fresh, gfreecnt;
		int id, cpu, end = -1, off, n;
		unsigned int seen;
		long long m;
		char key[32];

		n = sscanf(line, PROC_FMT, &id, &cpu, status, &m, &schedtick,
			   &runqsize, &runnext, &fresh, &gfreecnt, &end);
		ASSERT_EQ(9, n) TH_LOG("procs: '%s'", line);
		ASSERT_LT(0, end) TH_LOG("procs: '%s'", line);
		EXPECT_EQ(nlines, id) TH_LOG("procs: '%s'", line);
		EXPECT_LE(0, cpu);
		EXPECT_GE(256, runqsize) TH_LOG("procs: '%s'", line);
		EXPECT_GE(64, fresh) TH_LOG("procs: '%s'", line);
		EXPECT_LE(-1, m);
		if (!strcmp(status, "idle") || !strcmp(status, "running") ||
		    !strcmp(status, "syscall")) {
			nonline++;
		} else {
			EXPECT_STREQ("offline", status) TH_LOG("procs: '%s'", line);
		}
		/* Then the counters, each " key=value", to the end of the line. */
		seen = 0;
		for (off = end; line[off]; off += end) {
			end = -1;
			n = sscanf(line + off, PSTAT_FMT, key, &val, &end);
			ASSERT_EQ(2, n) TH_LOG("procs: '%s' at '%s'", line, line + off);
			ASSERT_LT(0, end) TH_LOG("procs: '%s' at '%s'", line, line + off);
			for (size_t i = 0; i < ARRAY_SIZE(pstat_names); i++)
				if (!strcmp(key, pstat_names[i]))
					seen |= 1U << i;
		}
		EXPECT_EQ((1U << ARRAY_SIZE(pstat_names)) - 1, seen)
			TH_LOG("procs: '%s' lacks counters", line);
		nlines++;
	}
	fclose(f);
	EXPECT_LE(s.gomaxprocs, nlines);
	/* Ps beyond gomaxprocs or of offline CPUs are listed as offline. */
	EXPECT_EQ(s.gomaxprocs, nonline);
}

TEST_F(debugfs, ms)
{
	char line[256], state;
	int nlines = 0;
	FILE *f;

	if (!self->have)
		SKIP(return, "no debugfs");
	ASSERT_EQ(0, run_nop(self->fd));

	f = open_view("ms");
	ASSERT_NE(NULL, f) TH_LOG(KGO_DIR "/ms: %s", strerror(errno));
	while (next_line(f, line, sizeof(line))) {
		unsigned long long id, curg;
		int cpu, p, spinning, end = -1, n;

		n = sscanf(line, M_FMT, &id, &cpu, &p, &curg, &spinning, &state, &end);
		ASSERT_EQ(6, n) TH_LOG("ms: '%s'", line);
		ASSERT_EQ((int)strlen(line), end) TH_LOG("ms: '%s'", line);
		EXPECT_LE(1, id);
		EXPECT_LE(0, cpu);
		EXPECT_LE(-1, p);
		EXPECT_TRUE(spinning == 0 || spinning == 1) TH_LOG("ms: '%s'", line);
		/* The letters of task_state_to_char(). */
		EXPECT_NE(NULL, strchr("RSDTtXZPI", state)) TH_LOG("ms: '%s'", line);
		nlines++;
	}
	fclose(f);
	EXPECT_LE(1, nlines);
}

/* Parses the goroutines view; returns how many Gs wait with @reason. */
static int count_waiting(struct __test_metadata *_metadata, const char *reason)
{
	char line[512], status[16], why[32], fn[128];
	int n = 0;
	FILE *f;

	f = open_view("goroutines");
	if (!f) {
		TH_LOG(KGO_DIR "/goroutines: %s", strerror(errno));
		return -1;
	}
	while (next_line(f, line, sizeof(line))) {
		unsigned long long goid, for_ns;
		int end = -1;
		long long m;

		why[0] = '\0';
		if (sscanf(line, G_FMT, &goid, status, why, &for_ns, &m, fn, &end) != 6 &&
		    sscanf(line, G_FMT_NOREASON, &goid, status, &for_ns, &m, fn, &end) != 5)
			end = -1;
		EXPECT_EQ((int)strlen(line), end) TH_LOG("goroutines: '%s'", line);
		if (end != (int)strlen(line))
			continue;
		EXPECT_LE(1, goid);
		/* A running G's M is read racily; the others have none. */
		if (strcmp(status, "running") && strcmp(status, "syscall")) {
			EXPECT_EQ(-1, m)
				TH_LOG("goroutines: '%s'", line);
		}
		if (!strcmp(status, "waiting")) {
			/* SLEEP tasks run in kgo's own task code. */
			if (!strcmp(why, reason) && strstr(fn, "[kgo]"))
				n++;
		} else {
			EXPECT_STREQ("", why) TH_LOG("goroutines: '%s'", line);
			EXPECT_TRUE(!strcmp(status, "runnable") || !strcmp(status, "running") ||
				    !strcmp(status, "syscall"))
				TH_LOG("goroutines: '%s'", line);
		}
	}
	fclose(f);
	return n;
}

/*
 * Parses the stacks view; returns how many Gs wait with @reason and
 * show a first frame in kgo's code (the caller of its stack switch),
 * each frame line a symbol.
 */
static int count_stacks(struct __test_metadata *_metadata, const char *reason)
{
	char line[512], why[32], fn[128];
	bool in_g = false, first = false;
	int n = 0;
	FILE *f;

	f = open_view("stacks");
	if (!f) {
		TH_LOG(KGO_DIR "/stacks: %s", strerror(errno));
		return -1;
	}
	while (next_line(f, line, sizeof(line))) {
		unsigned long long goid;
		int end = -1;

		if (line[0] == 'G') {
			in_g = sscanf(line, STACK_G_FMT, &goid, why, fn, &end) == 3 &&
			       end == (int)strlen(line) && !strcmp(why, reason);
			first = true;
			continue;
		}
		/* Frames: "  sym+off/size [mod]", "  ? ..." or "  ..." */
		EXPECT_EQ(0, strncmp(line, "  ", 2)) TH_LOG("stacks: '%s'", line);
		if (in_g && first && strstr(line, "[kgo]") && strchr(line, '+'))
			n++;
		first = false;
	}
	fclose(f);
	return n;
}

TEST_F_TIMEOUT(debugfs, goroutines_while_sleeping, 120)
{
	struct kgo_cancel cancel = {
		.size = sizeof(cancel), .flags = KGO_CANCEL_ALL | KGO_CANCEL_RUNNING,
	};
	struct kgo_task t[NSLEEPERS];
	struct kgo_completion c[NSLEEPERS];
	int most = 0, n;
	uint64_t deadline;
	unsigned int got = 0;

	if (!self->have)
		SKIP(return, "no debugfs");

	for (unsigned int i = 0; i < NSLEEPERS; i++)
		t[i] = (struct kgo_task){ .kind = KGO_TASK_SLEEP, .tag = i, .args = { SLEEP_NS } };
	ASSERT_EQ(NSLEEPERS, submit(self->fd, t, NSLEEPERS)) TH_LOG("%s", strerror(errno));

	/* Until all are parked at once, or the first is done: then we missed it. */
	deadline = now_ns() + SLEEP_NS;
	do {
		struct pollfd pfd = { .fd = self->fd, .events = POLLIN };

		n = count_waiting(_metadata, "sleep");
		ASSERT_LE(0, n);
		if (n > most)
			most = n;
		if (n >= NSLEEPERS)
			break;
		ASSERT_LE(0, poll(&pfd, 1, 0)) TH_LOG("poll: %s", strerror(errno));
		if (pfd.revents & POLLIN)
			break;
		usleep(1000);
	} while (now_ns() < deadline);
	EXPECT_LE(NSLEEPERS, most);
	/* All parked (or missed, which the check above reports): their stacks. */
	if (n >= NSLEEPERS)
		EXPECT_LE(NSLEEPERS, count_stacks(_metadata, "sleep"));
	ASSERT_EQ(0, ioctl(self->fd, KGO_IOC_CANCEL, &cancel));

	while (got < NSLEEPERS) {
		ssize_t r = read(self->fd, c + got, (NSLEEPERS - got) * sizeof(*c));

		ASSERT_LT(0, r) TH_LOG("read: %s", strerror(errno));
		got += r / sizeof(*c);
	}
	for (unsigned int i = 0; i < NSLEEPERS; i++) {
		EXPECT_TRUE(c[i].status == -ECANCELED || !c[i].status)
			TH_LOG("tag %llu: %d", (unsigned long long)c[i].tag, c[i].status);
	}
}

TEST_HARNESS_MAIN
