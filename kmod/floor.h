/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_FLOOR_H
#define _KGO_FLOOR_H

#include <linux/types.h>

/* The memory floor kgo leaves to everyone else: see floor.c. */
int kgo_floor_check_params(void);
bool kgo_floor_stack_denied(void);
bool kgo_floor_below(void);
unsigned long kgo_floor_set(unsigned long pages);

#endif /* _KGO_FLOOR_H */
