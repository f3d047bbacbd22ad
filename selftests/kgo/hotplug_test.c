// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug under load: the last CPU goes offline and comes back 20
 * times while a thread keeps tasks of every kind in flight (spawn trees,
 * yields, sleeps, blocking calls, spins). Every task must complete
 * exactly once, with its result; while the CPU is offline the module
 * reports one P fewer.
 *
 * Skips where no CPU can go offline (one CPU, or no hotplug).
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

#define ROUNDS		20
#define BATCH		64
#define MAX_TASKS	(1 << 20)

struct load {
	int fd;
	atomic_bool stop;
	uint64_t submitted;
	uint64_t completed;
	uint64_t bad;			/* wrong status or result */
	uint8_t *seen;			/* per tag: completions seen */
	int err;
};

static int cpu_online_path(char *buf, size_t len, int cpu)
{
	return snprintf(buf, len, "/sys/devices/system/cpu/cpu%d/online", cpu);
}

static int set_online(int cpu, int on)
{
	char path[64];
	int fd, ret;

	cpu_online_path(path, sizeof(path), cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

static void fill(struct kgo_task *t, uint64_t tag)
{
	static const struct { uint32_t kind; uint64_t a0, a1; } mix[] = {
		{ KGO_TASK_SPAWN, 2, 4 },	/* 31 goroutines */
		{ KGO_TASK_YIELD, 50, 0 },
		{ KGO_TASK_SLEEP, 200000, 0 },	/* 200 us */
		{ KGO_TASK_BLOCK, 300, 0 },	/* 300 us in the kernel */
		{ KGO_TASK_SPIN, 50000, 0 },	/* 50 us */
		{ KGO_TASK_NOP, 0, 0 },
	};
	unsigned int k = tag % (sizeof(mix) / sizeof(mix[0]));

	*t = (struct kgo_task){
		.kind = mix[k].kind, .tag = tag, .args = { mix[k].a0, mix[k].a1 },
	};
}

static bool result_ok(const struct kgo_completion *c)
{
	switch (c->kind) {
	case KGO_TASK_SPAWN:	return c->result == 31;
	case KGO_TASK_YIELD:	return c->result == 50;
	case KGO_TASK_SLEEP:	return c->result >= 200000;
	case KGO_TASK_BLOCK:	return c->result >= 300000;
	case KGO_TASK_SPIN:	return c->result >= 50000;
	case KGO_TASK_NOP:	return c->result == 0;
	}
	return false;
}

/* Reads every completion that is ready; returns how many. */
static int drain(struct load *l)
{
	struct kgo_completion c[BATCH];
	ssize_t r = read(l->fd, c, sizeof(c));
	int n;

	if (r < 0)
		return errno == EAGAIN ? 0 : -errno;
	n = r / sizeof(c[0]);
	for (int i = 0; i < n; i++) {
		if (c[i].tag >= l->submitted || l->seen[c[i].tag]++)
			l->bad++;
		else if (c[i].status || !result_ok(&c[i]))
			l->bad++;
	}
	l->completed += n;
	return n;
}

/* Keeps about 4 batches in flight until told to stop, then drains. */
static void *load_main(void *arg)
{
	struct load *l = arg;
	struct kgo_task t[BATCH];

	while (!atomic_load(&l->stop) && l->submitted + BATCH < MAX_TASKS) {
		if (l->submitted - l->completed < 4 * BATCH) {
			for (int i = 0; i < BATCH; i++)
				fill(&t[i], l->submitted + i);
			if (submit(l->fd, t, BATCH) != BATCH) {
				l->err = errno;
				break;
			}
			l->submitted += BATCH;
		}
		if (drain(l) < 0) {
			l->err = errno;
			break;
		}
		usleep(200);
	}
	while (l->completed < l->submitted) {
		struct kgo_wait w = {
			.size = sizeof(w), .min_complete = 1, .timeout_ns = 60 * NSEC,
		};

		if (ioctl(l->fd, KGO_IOC_WAIT, &w) || !w.ready || drain(l) < 0) {
			l->err = errno ? errno : ETIMEDOUT;
			break;
		}
	}
	return NULL;
}

static unsigned int nr_procs(int fd)
{
	struct kgo_info info = { .size = sizeof(info) };

	return ioctl(fd, KGO_IOC_GET_INFO, &info) ? 0 : info.nr_procs;
}

FIXTURE(hotplug) {
	int unused;
};

FIXTURE_SETUP(hotplug)
{
}

FIXTURE_TEARDOWN(hotplug)
{
}

/* A round takes about 1.5 s on the debug kernel under TCG. */
TEST_F_TIMEOUT(hotplug, offline_online_under_load, 600)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	int cpu = ncpus - 1, infofd;
	struct load l = { 0 };
	unsigned int procs;
	char path[64];
	pthread_t th;

	cpu_online_path(path, sizeof(path), cpu);
	if (ncpus < 2 || access(path, W_OK))
		SKIP(return, "no CPU that can go offline (%ld CPUs)", ncpus);
	ASSERT_EQ(0, set_online(cpu, 1));

	infofd = open(KGO_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, infofd);
	procs = nr_procs(infofd);
	ASSERT_LE(2, procs);

	l.fd = open(KGO_DEVICE_PATH, O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, l.fd);
	l.seen = calloc(MAX_TASKS, 1);
	ASSERT_NE(NULL, l.seen);
	ASSERT_EQ(0, pthread_create(&th, NULL, load_main, &l));

	for (int r = 0; r < ROUNDS; r++) {
		usleep(20000);
		ASSERT_EQ(0, set_online(cpu, 0)) TH_LOG("round %d: offline", r);
		EXPECT_EQ(procs - 1, nr_procs(infofd));
		usleep(20000);
		ASSERT_EQ(0, set_online(cpu, 1)) TH_LOG("round %d: online", r);
		EXPECT_EQ(procs, nr_procs(infofd));
	}
	atomic_store(&l.stop, true);
	ASSERT_EQ(0, pthread_join(th, NULL));

	TH_LOG("%d rounds: %llu tasks submitted, %llu completed", ROUNDS,
	       (unsigned long long)l.submitted, (unsigned long long)l.completed);
	EXPECT_EQ(0, l.err) TH_LOG("%s", strerror(l.err));
	EXPECT_EQ(l.submitted, l.completed);
	EXPECT_EQ(0, l.bad);
	EXPECT_LT(0, l.submitted);
	for (uint64_t tag = 0; tag < l.submitted; tag++)
		if (l.seen[tag] != 1) {
			EXPECT_EQ(1, l.seen[tag]) TH_LOG("tag %llu", (unsigned long long)tag);
			break;
		}
	free(l.seen);
	close(l.fd);
	close(infofd);
}

TEST_HARNESS_MAIN
