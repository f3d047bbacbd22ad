/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_STATS_H
#define _KGO_STATS_H

#include <linux/kgo.h>

struct kgo_p;
struct kgo_user;

void kgo_stats_global(struct kgo_stats *st);
void kgo_stats_own(struct kgo_user *u, struct kgo_stats *st);
bool kgo_stats_proc(int id, struct kgo_proc_stats *ps);

#endif /* _KGO_STATS_H */
