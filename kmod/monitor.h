/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_MONITOR_H
#define _KGO_MONITOR_H

int kgo_monitor_check_params(void);
unsigned int kgo_slice_ms(void);
int kgo_monitor_init(void);
void kgo_monitor_exit(void);
void kgo_monitor_kick(void);

#endif /* _KGO_MONITOR_H */
