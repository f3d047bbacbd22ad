/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_DEV_H
#define _KGO_DEV_H

int kgo_dev_check_params(void);
int kgo_dev_init(void);
void kgo_dev_exit(void);

#endif /* _KGO_DEV_H */
