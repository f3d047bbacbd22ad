// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring's side of the NOP benchmark: IORING_OP_NOP through liburing,
 * a batch submitted and waited for in one io_uring_enter().
 */

#include <errno.h>
#include <string.h>

#include <liburing.h>

#include "nop.h"

static struct io_uring ring;

static void uring_setup(unsigned int batch)
{
	/* Room for one batch (or the pipeline's depth): all there is in flight. */
	int ret = io_uring_queue_init(batch, &ring, 0);

	/* EPERM: kernel.io_uring_disabled says no. */
	if (ret)
		die_err(-ret, "io_uring_queue_init(%u)", batch);
}

static void uring_run_batch(unsigned int batch)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;
	int ret;

	for (unsigned int i = 0; i < batch; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		if (!sqe)
			die("io_uring_get_sqe: the ring is full");
		io_uring_prep_nop(sqe);
		if (nop_async)
			sqe->flags |= IOSQE_ASYNC;
		sqe->user_data = i;
	}
	ret = io_uring_submit_and_wait(&ring, batch);
	if (ret < 0)
		die_err(-ret, "io_uring_submit_and_wait");
	if ((unsigned int)ret != batch)
		die("io_uring_submit_and_wait: %d of %u submitted", ret, batch);
	/* All @batch are in: submit_and_wait waited for that many. */
	while (seen < batch) {
		unsigned int n = 0;

		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res)
				die_err(-cqe->res, "NOP %llu",
					(unsigned long long)cqe->user_data);
			n++;
		}
		io_uring_cq_advance(&ring, n);
		seen += n;
		if (seen < batch) {
			ret = io_uring_wait_cqe(&ring, &cqe);
			if (ret)
				die_err(-ret, "io_uring_wait_cqe");
		}
	}
}

/* Checks and marks seen every completion there is: how many. */
static unsigned int reap(void)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	io_uring_for_each_cqe(&ring, head, cqe) {
		if (cqe->res)
			die_err(-cqe->res, "NOP %llu", (unsigned long long)cqe->user_data);
		n++;
	}
	io_uring_cq_advance(&ring, n);
	return n;
}

static unsigned long long uring_pipe(unsigned int depth, unsigned long long nops,
				     unsigned long long max_ns)
{
	unsigned long long t0 = now_ns(), done = 0, sent = 0;
	unsigned int inflight = 0, round = 0;
	int ret;

	while (done < nops) {
		unsigned int n = 0;
		struct io_uring_sqe *sqe;

		while (inflight + n < depth && sent + n < nops && (sqe = io_uring_get_sqe(&ring))) {
			io_uring_prep_nop(sqe);
			if (nop_async)
				sqe->flags |= IOSQE_ASYNC;
			sqe->user_data = 0;
			n++;
		}
		sent += n;
		inflight += n;
		ret = io_uring_submit_and_wait(&ring, inflight < PIPE_WAIT ? inflight : PIPE_WAIT);
		if (ret < 0 && ret != -EINTR)
			die_err(-ret, "io_uring_submit_and_wait");
		n = reap();
		inflight -= n;
		done += n;
		if (!(++round % 64) && now_ns() - t0 >= max_ns)
			break;
	}
	while (inflight) {
		ret = io_uring_submit_and_wait(&ring, inflight);
		if (ret < 0 && ret != -EINTR)
			die_err(-ret, "io_uring_submit_and_wait");
		inflight -= reap();
	}
	return done;
}

static void uring_teardown(void)
{
	io_uring_queue_exit(&ring);
}

const struct nop_impl nop_impl = {
	.name = "io_uring",
	.setup = uring_setup,
	.run_batch = uring_run_batch,
	.teardown = uring_teardown,
	.pipe = uring_pipe,
};
