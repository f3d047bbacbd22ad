// SPDX-License-Identifier: GPL-2.0
/*
 * The "fairness" group of make bench: how long a task waits when others
 * would hold up the Ps, through /dev/kgo.
 *
 *   sleep    SLEEP tasks of 1 ms, one at a time, while a SPIN task (a
 *            goroutine that never calls kgo) holds every P: how late
 *            each ends (hog.c).
 *   session  NOP tasks on a second fd, one at a time, while the first
 *            has 20,000 SPIN tasks of 100 us queued (feed.c).
 *   block    100 NOPs submitted with 8 BLOCK tasks of 20 ms (block.c).
 *   kgo_go   an in-kernel kgo_go() behind the session's backlog: this
 *            queues it, then runs the -insmod command, which loads
 *            kgo_bench.ko only=fair_kgo_go to measure (bench/kmod/fair.c),
 *            and checks that the backlog outlived the measurement.
 *
 * Each prints kgo's p99 in ns with the bound as its "goal"
 * field (a goal is not a measurement, so never a row of its own): 3
 * slices for sleep, session and kgo_go, 20 ms for block. kgo_go's p99 is
 * kgo_bench.ko's line in the kernel log; this passes it the goal.
 * A p99 of 0 ns is below the clock's resolution: reported missing.
 */

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>

#include "common.h"
#include "device.h"

static const char usage[] =
	"usage: fairbench [-smoke] -run sleep|session|block\n"
	"       fairbench [-smoke] -run kgo_go -insmod COMMAND";

#define HOG_TAG		(1ULL << 40)
#define MAX_SAMPLES	1000

static int smoke;
static __u64 slice_ns = 10 * NSEC_PER_MSEC;

static void read_slice(void)
{
	FILE *f = fopen("/sys/module/kgo/parameters/slice_ms", "r");
	unsigned int ms;

	if (f && fscanf(f, "%u", &ms) == 1)
		slice_ns = ms * NSEC_PER_MSEC;
	if (f)
		fclose(f);
}

static void submit_or_die(int fd, struct kgo_task *t, unsigned int n)
{
	struct kgo_submit s = {
		.size = sizeof(s), .tasks = (uintptr_t)t, .nr = n, .task_size = sizeof(*t),
	};
	int ret = ioctl(fd, KGO_IOC_SUBMIT, &s);

	if (ret < 0)
		die_errno("KGO_IOC_SUBMIT");
	if ((unsigned int)ret != n)
		die("KGO_IOC_SUBMIT took %d of %u", ret, n);
}

/* Reads completions of @fd until the one tagged @tag, which it returns. */
static struct kgo_completion read_tag(int fd, __u64 tag)
{
	struct kgo_completion c;

	for (;;) {
		if (read(fd, &c, sizeof(c)) != sizeof(c))
			die_errno("read");
		if (c.tag == tag)
			return c;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Prints the p99 (nearest rank) of @v and the goal beside it, with the
 * worst sample and its place in the run (0 is the first): a worst at 0
 * is what it cost to get going, one elsewhere a hiccup in steady state.
 */
static void report(const char *metric, __u64 *v, unsigned int n, __u64 goal)
{
	unsigned int rank = (n * 99 + 99) / 100, worst = 0, i;

	for (i = 1; i < n; i++)
		if (v[i] > v[worst])
			worst = i;
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("{\"metric\":\"%s\",\"impl\":\"kgo\",\"unit\":\"ns\",", metric);
	if (v[rank - 1])
		printf("\"value\":%llu,", (unsigned long long)v[rank - 1]);
	else
		printf("\"missing\":\"p99 below the clock's resolution (0 ns)\",");
	printf("\"goal\":%llu,\"samples\":%u,\"worst_at\":%u,\"max\":%llu}\n",
	       (unsigned long long)goal, n, worst, (unsigned long long)v[n - 1]);
}

static void cancel_all(int fd)
{
	struct kgo_cancel c = {
		.size = sizeof(c), .flags = KGO_CANCEL_ALL | KGO_CANCEL_RUNNING,
	};

	if (ioctl(fd, KGO_IOC_CANCEL, &c))
		die_errno("KGO_IOC_CANCEL");
}

static void run_sleep(unsigned int nprocs)
{
	unsigned int n = smoke ? 5 : 50, i;
	__u64 *late = xcalloc(n, sizeof(*late));
	int fd = open_dev();

	for (i = 0; i < nprocs; i++) {
		struct kgo_task hog = { .kind = KGO_TASK_SPIN, .tag = HOG_TAG + i,
					.args = { KGO_SPIN_MAX_NS } };

		submit_or_die(fd, &hog, 1);
	}
	usleep(3 * slice_ns / 1000);
	for (i = 0; i < n; i++) {
		struct kgo_task t = { .kind = KGO_TASK_SLEEP, .tag = i,
				      .args = { NSEC_PER_MSEC } };
		struct kgo_completion c;

		submit_or_die(fd, &t, 1);
		c = read_tag(fd, i);
		if (c.status)
			die("SLEEP completed with %d", c.status);
		late[i] = c.ended_ns - c.queued_ns - NSEC_PER_MSEC;
	}
	report("fair_sleep_p99", late, n, 3 * slice_ns);
	cancel_all(fd);
	close(fd);
	free(late);
}

static void run_session(void)
{
	unsigned int nback = smoke ? 200 : 20000, n = smoke ? 5 : 30, i;
	struct kgo_task *back = xcalloc(nback, sizeof(*back));
	__u64 *wait = xcalloc(n, sizeof(*wait));
	int a = open_dev(), b = open_dev();

	for (i = 0; i < nback; i++)
		back[i] = (struct kgo_task){ .kind = KGO_TASK_SPIN, .tag = i,
					     .args = { 100 * NSEC_PER_USEC } };
	submit_or_die(a, back, nback);
	for (i = 0; i < n; i++) {
		struct kgo_task t = { .kind = KGO_TASK_NOP, .tag = i };
		struct kgo_completion c;

		submit_or_die(b, &t, 1);
		c = read_tag(b, i);
		wait[i] = c.ended_ns - c.queued_ns;
		usleep(2000);
	}
	report("fair_session_p99", wait, n, 3 * slice_ns);
	close(b);
	close(a);	/* cancels the rest */
	free(wait);
	free(back);
}

static void run_block(void)
{
	unsigned int nnop = smoke ? 10 : 100, i;
	struct kgo_task *t = xcalloc(nnop + 8, sizeof(*t));
	__u64 *wait = xcalloc(nnop, sizeof(*wait));
	unsigned int got = 0, total = 0;
	int fd = open_dev();

	/* A BLOCK task every nnop/8 NOPs, as the mix. */
	for (i = 0; i < nnop + 8; i++) {
		bool block = i % (nnop / 8 + 1) == 0 && total < 8;

		if (block) {
			t[i] = (struct kgo_task){ .kind = KGO_TASK_BLOCK, .tag = HOG_TAG + i,
						  .args = { 20000 } };
			total++;
		} else {
			t[i] = (struct kgo_task){ .kind = KGO_TASK_NOP, .tag = i };
		}
	}
	submit_or_die(fd, t, nnop + 8);
	while (got < nnop) {
		struct kgo_completion c;

		if (read(fd, &c, sizeof(c)) != sizeof(c))
			die_errno("read");
		if (c.kind == KGO_TASK_NOP)
			wait[got++] = c.ended_ns - c.queued_ns;
	}
	report("fair_block_nop_p99", wait, got, 20 * NSEC_PER_MSEC);
	close(fd);
	free(wait);
	free(t);
}

/* The session's backlog, as run_session()'s, then @insmod measures. */
static void run_kgo_go(const char *insmod)
{
	unsigned int nback = smoke ? 200 : 20000, i;
	struct kgo_task *back = xcalloc(nback, sizeof(*back));
	struct kgo_wait w = { .size = sizeof(w), .min_complete = nback };
	int a = open_dev(), rc;
	char cmd[512];

	for (i = 0; i < nback; i++)
		back[i] = (struct kgo_task){ .kind = KGO_TASK_SPIN, .tag = i,
					     .args = { 100 * NSEC_PER_USEC } };
	submit_or_die(a, back, nback);
	/* The module reports the goal in its line, beside its figure. */
	snprintf(cmd, sizeof(cmd), "%s goal_ns=%llu", insmod,
		 (unsigned long long)(3 * slice_ns));
	rc = system(cmd);
	if (rc)
		die("%s: exit status %d", insmod, rc);
	/* Does not wait (timeout 0): -ETIMEDOUT while some are not done. */
	if (ioctl(a, KGO_IOC_WAIT, &w) && errno != ETIMEDOUT)
		die_errno("KGO_IOC_WAIT");
	/* A smoke backlog is 20 ms of work: it cannot outlive a load. */
	if (!smoke && w.ready >= nback)
		die("the backlog drained before the measurement ended");
	close(a);	/* cancels the rest */
	free(back);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "smoke", no_argument, NULL, 's' },
		{ "run", required_argument, NULL, 'r' },
		{ "insmod", required_argument, NULL, 'i' },
		{}
	};
	const char *run = NULL, *insmod = NULL;
	struct kgo_info info;
	int c, fd;

	prog = "fairbench";
	while ((c = getopt_long_only(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			smoke = 1;
			break;
		case 'r':
			run = optarg;
			break;
		case 'i':
			insmod = optarg;
			break;
		default:
			bad_option(usage, c, argv);
		}
	}
	if (!run || optind != argc)
		usage_die(usage, "-run names one benchmark");
	fd = open_dev();
	require_abi(fd, &info);
	close(fd);
	read_slice();
	if (!strcmp(run, "sleep"))
		run_sleep(info.nr_procs);
	else if (!strcmp(run, "session"))
		run_session();
	else if (!strcmp(run, "block"))
		run_block();
	else if (!strcmp(run, "kgo_go") && insmod)
		run_kgo_go(insmod);
	else if (!strcmp(run, "kgo_go"))
		usage_die(usage, "-run kgo_go needs -insmod");
	else
		usage_die(usage, "unknown benchmark %s", run);
	flush_stdout();
	return 0;
}
