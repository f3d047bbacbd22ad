/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_IOCTL_H
#define _KGO_IOCTL_H

struct file;

long kgo_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* _KGO_IOCTL_H */
