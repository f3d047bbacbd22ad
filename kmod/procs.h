/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_PROCS_H
#define _KGO_PROCS_H

int kgo_procs_check_params(void);
int kgo_procs_init(void);
void kgo_procs_exit(void);

#endif /* _KGO_PROCS_H */
