/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_TEST_USER_MEM_H
#define _KGO_TEST_USER_MEM_H

#include <linux/types.h>

int kgo_test_user_mem_init(void);
void kgo_test_user_mem_exit(void);
long kgo_test_user_call(long (*fn)(unsigned long uaddr, void *arg), void *arg,
			void *buf, size_t len);

#endif /* _KGO_TEST_USER_MEM_H */
