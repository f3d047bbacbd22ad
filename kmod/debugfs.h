/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_DEBUGFS_H
#define _KGO_DEBUGFS_H

int kgo_debugfs_init(void);
void kgo_debugfs_exit(void);

#endif /* _KGO_DEBUGFS_H */
