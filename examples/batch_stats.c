// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * batch_stats: a batch of SPIN and CHECKSUM tasks, one cancelled SLEEP,
 * and the scheduler's counters afterwards.
 *
 *	batch_stats
 *
 * Shows the calls around the ring: kgo_get_info() for the module,
 * kgo_prep_*() for each kind, kgo_cancel() for a task that would take
 * too long, kgo_get_stats() for what the scheduler did. Exits 0 when
 * every task completed as it should; 1 otherwise; 4, kselftest's
 * "skip", when /dev/kgo is missing or closed to this user. The stats
 * need CAP_SYS_ADMIN for the whole scheduler's figures.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkgo.h>

#define SKIP		4
#define NR_SPIN		8
#define NR_CSUM		8
#define SLEEP_TAG	1000
#define MAX_PROCS	1024

static unsigned char buf[65536];

int main(void)
{
	static struct kgo_proc_stats procs[MAX_PROCS];
	unsigned int i, n, want = NR_SPIN + NR_CSUM + 1, bad = 0;
	struct kgo_ring_params p = { .sq_entries = 32 };
	struct kgo_completion *cqe;
	struct kgo_stats st;
	struct kgo_info info;
	struct kgo_ring ring;
	int fd, ret;

	fd = open(KGO_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == EACCES || errno == EPERM)) {
		printf("batch_stats: skip: " KGO_DEVICE_PATH ": %s (is kgo.ko loaded, and may this user open it?)\n",
		       strerror(errno));
		return SKIP;
	}
	if (fd < 0) {
		fprintf(stderr, "batch_stats: " KGO_DEVICE_PATH ": %s\n", strerror(errno));
		return 1;
	}
	ret = kgo_get_info(fd, &info);
	if (ret) {
		fprintf(stderr, "batch_stats: KGO_IOC_GET_INFO: %s\n", strerror(-ret));
		return 1;
	}
	printf("kgo %u.%u.%u, ABI %u, %u Ps\n", KGO_VERSION_MAJOR(info.version),
	       KGO_VERSION_MINOR(info.version), KGO_VERSION_PATCH(info.version),
	       info.abi_version, info.nr_procs);
	ret = kgo_ring_init_params(fd, &ring, &p);
	if (ret) {
		fprintf(stderr, "batch_stats: ring setup: %s\n", strerror(-ret));
		return 1;
	}

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i * 7;
	for (i = 0; i < NR_SPIN; i++)
		kgo_prep_spin(kgo_ring_get_sqe(&ring), i, 1000000);	/* 1 ms */
	for (i = 0; i < NR_CSUM; i++)
		kgo_prep_checksum(kgo_ring_get_sqe(&ring), NR_SPIN + i, buf, sizeof(buf));
	/* Ten seconds asleep: cancelled below, while it runs or before. */
	kgo_prep_sleep(kgo_ring_get_sqe(&ring), SLEEP_TAG, 10000000000ULL);
	ret = kgo_ring_submit(&ring);
	if (ret != (int)want) {
		fprintf(stderr, "batch_stats: submitted %d of %u\n", ret, want);
		return 1;
	}
	ret = kgo_cancel(fd, SLEEP_TAG, KGO_CANCEL_RUNNING);
	printf("cancel tag %u: %d cancelled\n", SLEEP_TAG, ret);

	for (n = 0; n < want; n++) {
		ret = kgo_ring_wait_cqe_nr(&ring, &cqe, 1, 5000000000ULL);
		if (ret) {
			fprintf(stderr, "batch_stats: wait: %s\n", strerror(-ret));
			return 1;
		}
		if (cqe->tag == SLEEP_TAG) {
			bad += cqe->status != -ECANCELED;
			printf("  tag %4llu  sleep     status %d (cancelled after %llu ns)\n",
			       cqe->tag, cqe->status, cqe->result);
		} else {
			bad += cqe->status != 0;
			printf("  tag %4llu  %-8s  status %d  result %#llx  cpu %u\n",
			       cqe->tag, cqe->kind == KGO_TASK_SPIN ? "spin" : "checksum",
			       cqe->status, cqe->result, cqe->cpu);
		}
		kgo_ring_cqe_seen(&ring, cqe);
	}
	kgo_ring_exit(&ring);

	ret = kgo_get_stats(fd, &st, procs, MAX_PROCS);
	if (ret) {
		fprintf(stderr, "batch_stats: stats: %s\n", strerror(-ret));
		return 1;
	}
	printf("goroutines now %llu%s; per P, goroutines started:",
	       st.goroutines, st.flags & KGO_STATS_OWN ? " (this user's)" : "");
	for (i = 0; i < st.nr_procs && i < MAX_PROCS; i++)
		printf(" %llu", procs[i].gstarted);
	printf("\n");
	close(fd);
	return bad ? 1 : 0;
}
