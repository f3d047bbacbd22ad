/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_TEST_RUN_G_H
#define _KGO_TEST_RUN_G_H

int kgo_test_run_in_g(void (*fn)(void *arg), void *arg, unsigned int timeout_ms);
int kgo_test_wait_quiet(unsigned int timeout_ms);

#endif /* _KGO_TEST_RUN_G_H */
