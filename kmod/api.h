/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_API_H
#define _KGO_API_H

/*
 * api.c's entry points for kgo's own files, beyond include/kgo.h's.
 * Context: a G, or anywhere if the caller may not be one.
 */

#include <linux/types.h>

struct kgo_g;

/* Yield if the monitor asked the calling G to (kgo_preempt_check_m()). */
void kgo_preempt_check(void);
/* kgo_park() with a wait reason (enum kgo_waitreason, g.h). */
int kgo_park_reason(bool (*unlockf)(struct kgo_g *g, void *arg), void *arg,
		    u8 reason);

#endif /* _KGO_API_H */
