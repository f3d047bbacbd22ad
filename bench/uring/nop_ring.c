// SPDX-License-Identifier: GPL-2.0
/*
 * kgo's side of the NOP benchmark through its shared rings (libkgo):
 * a batch is written into the SQ and submitted and waited for in one
 * KGO_IOC_ENTER, as io_uring_submit_and_wait() does on the other side.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "libkgo.h"

#include "nop.h"

static struct kgo_ring ring;

static void ring_setup(unsigned int batch)
{
	struct kgo_info info;
	int fd = open_dev(), ret;
	/*
	 * No times in the completions: io_uring's have none either, and
	 * under emulation each is a read of an emulated clock device.
	 */
	struct kgo_ring_params p = { .sq_entries = batch, .flags = KGO_RING_NO_TIMES };

	require_abi(fd, &info);
	ret = kgo_ring_init_params(fd, &ring, &p);
	if (ret)
		die_err(-ret, "kgo_ring_init_params(%u)", batch);
}

/* Checks and marks seen every completion there is: how many. */
static unsigned int reap(unsigned long long tags)
{
	struct kgo_completion *c;
	unsigned int head, n = 0;

	kgo_ring_for_each_cqe(&ring, head, c) {
		if (c->status)
			die_err(-c->status, "NOP task %llu", (unsigned long long)c->tag);
		if (c->kind != KGO_TASK_NOP || c->tag >= tags)
			die("a completion of kind %u, tag %llu: not one of ours",
			    c->kind, (unsigned long long)c->tag);
		n++;
	}
	kgo_ring_cq_advance(&ring, n);
	return n;
}

/* Submits what is in the SQ and waits for @wait_nr; all of it goes in. */
static void submit_and_wait(unsigned int wait_nr)
{
	int ret;

	do {
		ret = kgo_ring_submit_and_wait(&ring, wait_nr);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN)
			die_err(-ret, "kgo_ring_submit_and_wait");
	} while (kgo_ring_sq_ready(&ring));
}

static void ring_run_batch(unsigned int batch)
{
	unsigned int seen = 0;

	for (unsigned int i = 0; i < batch; i++) {
		struct kgo_task *t = kgo_ring_get_sqe(&ring);

		if (!t)
			die("kgo_ring_get_sqe: the ring is full");
		t->kind = KGO_TASK_NOP;
		t->flags = nop_async ? 0 : KGO_TASK_F_INLINE;
		t->tag = i;
	}
	submit_and_wait(batch);
	while ((seen += reap(batch)) < batch) {
		struct kgo_completion *c;
		int ret = kgo_ring_wait_cqe_nr(&ring, &c, batch - seen, KGO_WAIT_FOREVER);

		if (ret && ret != -EINTR && ret != -EAGAIN)
			die_err(-ret, "kgo_ring_wait_cqe_nr");
	}
}

static unsigned long long ring_pipe(unsigned int depth, unsigned long long nops,
				    unsigned long long max_ns)
{
	unsigned long long t0 = now_ns(), done = 0, sent = 0;
	unsigned int inflight = 0, round = 0;

	while (done < nops) {
		unsigned int n = 0;
		struct kgo_task *t;

		while (inflight + n < depth && sent + n < nops && (t = kgo_ring_get_sqe(&ring))) {
			t->kind = KGO_TASK_NOP;
			t->flags = nop_async ? 0 : KGO_TASK_F_INLINE;
			t->tag = 0;
			n++;
		}
		sent += n;
		inflight += n;
		submit_and_wait(inflight < PIPE_WAIT ? inflight : PIPE_WAIT);
		n = reap(1);
		inflight -= n;
		done += n;
		if (!(++round % 64) && now_ns() - t0 >= max_ns)
			break;
	}
	/* Whatever is still in flight comes back before the next run. */
	while (inflight)
		inflight -= (submit_and_wait(inflight), reap(1));
	return done;
}

static void ring_teardown(void)
{
	int fd = ring.fd;

	kgo_ring_exit(&ring);
	close(fd);
}

const struct nop_impl nop_impl = {
	.name = "kgo",
	.setup = ring_setup,
	.run_batch = ring_run_batch,
	.teardown = ring_teardown,
	.pipe = ring_pipe,
};
