// SPDX-License-Identifier: GPL-2.0
/*
 * kgo's older path in the NOP benchmark (impl "kgo_ioctl"), beside its
 * rings (nop_ring.c): KGO_TASK_NOP tasks through /dev/kgo's ioctls.
 * A batch is one KGO_IOC_SUBMIT, then its completions: read(2) alone for
 * a batch of one (it blocks until one is ready), KGO_IOC_WAIT for all of
 * a bigger batch and then one read(2) for all of them. Reading as soon
 * as one is ready would wake this thread once per goroutine that ends;
 * waiting for the whole batch is what an io_uring user gets from
 * io_uring_submit_and_wait(), so each side is used as it is meant to be.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kgo.h>

#include "nop.h"

static int fd = -1;
static struct kgo_task *tasks;
static char *recs;
static size_t rec_size;	/* the module's struct kgo_completion */

static void kgo_setup(unsigned int batch)
{
	struct kgo_info info;

	fd = open_dev();
	require_abi(fd, &info);
	/* A newer module's records are longer: read whole ones, use ours. */
	rec_size = info.completion_size ?: sizeof(struct kgo_completion);
	if (rec_size < sizeof(struct kgo_completion))
		die("completion records of %zu bytes, shorter than ours", rec_size);
	tasks = xcalloc(batch, sizeof(*tasks));
	recs = xcalloc(batch, rec_size);
	for (unsigned int i = 0; i < batch; i++) {
		tasks[i].kind = KGO_TASK_NOP;
		tasks[i].flags = nop_async ? 0 : KGO_TASK_F_INLINE;
		tasks[i].tag = i;
	}
}

/* Accepted in order, maybe not all at once: offer the rest again. */
static void submit_all(unsigned int batch)
{
	struct kgo_submit sub = {
		.size = sizeof(sub),
		.task_size = sizeof(*tasks),
	};
	unsigned int done = 0;
	int ret;

	while (done < batch) {
		sub.tasks = (uintptr_t)(tasks + done);
		sub.nr = batch - done;
		ret = ioctl(fd, KGO_IOC_SUBMIT, &sub);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			die_err(ret ? errno : EPROTO, "KGO_IOC_SUBMIT");
		done += ret;
	}
}

static void wait_for(unsigned int n)
{
	struct kgo_wait w = {
		.size = sizeof(w),
		.min_complete = n,
		.timeout_ns = KGO_WAIT_FOREVER,
	};

	while (ioctl(fd, KGO_IOC_WAIT, &w))
		if (errno != EINTR)
			die_errno("KGO_IOC_WAIT");
}

static void kgo_run_batch(unsigned int batch)
{
	struct kgo_completion c;
	unsigned int seen = 0;
	ssize_t got;

	submit_all(batch);
	while (seen < batch) {
		if (batch - seen > 1)
			wait_for(batch - seen);
		got = read(fd, recs, (batch - seen) * rec_size);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			die_errno("read " KGO_DEVICE_PATH);
		if (got == 0 || got % rec_size)
			die("read " KGO_DEVICE_PATH ": %zd bytes, not whole records", got);
		for (char *p = recs; p < recs + got; p += rec_size) {
			memcpy(&c, p, sizeof(c));
			if (c.status)
				die_err(-c.status, "NOP task %llu", (unsigned long long)c.tag);
			if (c.kind != KGO_TASK_NOP || c.tag >= batch)
				die("a completion of kind %u, tag %llu: not one of ours",
				    c.kind, (unsigned long long)c.tag);
		}
		seen += got / rec_size;
	}
}

static void kgo_teardown(void)
{
	close(fd);
	free(tasks);
	free(recs);
}

const struct nop_impl nop_impl = {
	.name = "kgo_ioctl",
	.setup = kgo_setup,
	.run_batch = kgo_run_batch,
	.teardown = kgo_teardown,
};
