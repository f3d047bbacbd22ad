/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_MONITOR_H
#define _KGO_MONITOR_H

/* Module parameter max_ms_per_cpu: the most Ms a CPU may have. */
extern unsigned int kgo_max_ms;

int kgo_monitor_check_params(void);
unsigned int kgo_slice_ms(void);
int kgo_monitor_init(void);
void kgo_monitor_exit(void);
void kgo_monitor_kick(void);
void kgo_monitor_wake_busy(void);

#endif /* _KGO_MONITOR_H */
