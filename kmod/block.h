/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_BLOCK_H
#define _KGO_BLOCK_H

#include <linux/types.h>

struct kgo_m;
struct kgo_p;
struct kgo_sched;

int kgo_block_init(void);
void kgo_block_exit(void);
void kgo_block_m_start(struct kgo_m *m);
void kgo_block_m_stop(struct kgo_m *m);
bool kgo_retake(struct kgo_sched *sched, struct kgo_p *p, u64 now, u64 after_ns);
bool kgo_block_begin_unless_inside(void);

/* switch.c: the G of a P-less M goes to the global queue; the M parks. */
void kgo_exitsyscall_park(struct kgo_m *m);

#endif /* _KGO_BLOCK_H */
