/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_HOG_H
#define _KGO_HOG_H

#include <linux/types.h>

struct kgo_m;
struct kgo_p;
struct kgo_sched;

bool kgo_hog_relieve(struct kgo_sched *sched, struct kgo_p *p, u32 tick);
void kgo_hog_prepare(struct kgo_sched *sched, struct kgo_p *p);
bool kgo_hog_takeover(struct kgo_m *m, struct kgo_p *p);
bool kgo_hog_unbind(struct kgo_sched *sched, struct kgo_p *p);

#endif /* _KGO_HOG_H */
