/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_TEST_RUN_G_H
#define _KGO_TEST_RUN_G_H

int kgo_test_run_in_g(void (*fn)(void *arg), void *arg, unsigned int timeout_ms);
int kgo_test_run_in_g_1p(void (*fn)(void *arg), void *arg, unsigned int timeout_ms);
int kgo_test_wait_quiet(unsigned int timeout_ms);

struct kunit;
int kgo_test_procs_init(struct kunit *test);
void kgo_test_procs_exit(struct kunit *test);

/* A per-P counter of struct kgo_pstats, summed over every P. */
u64 kgo_test_pstat_sum(size_t off);
#define KGO_TEST_PSTAT(field) \
	kgo_test_pstat_sum(offsetof(struct kgo_pstats, field))

#endif /* _KGO_TEST_RUN_G_H */
