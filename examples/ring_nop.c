// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * ring_nop: submit NOP tasks through a kgo ring and wait for them.
 *
 *	ring_nop [COUNT]
 *
 * Fills the submission ring, submits and waits in one call (with a
 * timeout, so that a stuck module cannot hang it), and checks every
 * completion that comes back. Exits 0 when all COUNT (default 1000)
 * completed with status 0; 1 on a failure; 4, kselftest's "skip",
 * when /dev/kgo is missing or closed to this user.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libkgo.h>

#define SKIP		4
#define TIMEOUT_NS	5000000000ULL	/* 5 s for a batch of NOPs */

int main(int argc, char **argv)
{
	unsigned long long count = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
	unsigned long long sent = 0, done = 0, failed = 0;
	struct kgo_completion *cqe;
	struct timespec t0, t1;
	struct kgo_ring ring;
	struct kgo_task *sqe;
	unsigned int head, n;
	int ret;

	ret = kgo_ring_init(64, &ring, 0);
	if (ret == -ENOENT || ret == -EACCES || ret == -EPERM) {
		printf("ring_nop: skip: " KGO_DEVICE_PATH ": %s (is kgo.ko loaded, and may this user open it?)\n",
		       strerror(-ret));
		return SKIP;
	}
	if (ret) {
		fprintf(stderr, "ring_nop: kgo_ring_init: %s\n", strerror(-ret));
		return 1;
	}
	printf("libkgo %d.%d.%d, a ring of %u SQ and %u CQ entries\n",
	       kgo_version_major(), kgo_version_minor(), kgo_version_patch(),
	       ring.sq_entries, ring.cq_entries);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < count) {
		/* As many as fit, and no more in flight than the CQ holds. */
		while (sent < count && sent - done < ring.cq_entries &&
		       (sqe = kgo_ring_get_sqe(&ring)))
			kgo_prep_nop(sqe, sent++);
		ret = kgo_ring_submit_and_wait_timeout(&ring, 1, TIMEOUT_NS);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "ring_nop: submit and wait: %s\n", strerror(-ret));
			break;
		}
		n = 0;
		kgo_ring_for_each_cqe(&ring, head, cqe) {
			if (cqe->status || cqe->tag >= sent)
				failed++;
			n++;
		}
		kgo_ring_cq_advance(&ring, n);
		done += n;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	kgo_ring_exit(&ring);
	printf("%llu NOPs completed, %llu failed, in %.3f ms\n", done, failed,
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	return done == count && !failed ? 0 : 1;
}
