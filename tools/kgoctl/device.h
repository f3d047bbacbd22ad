/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/kgo: opening it, and the two ioctls that read the module's state,
 * GET_INFO and STATS.
 */
#ifndef _KGOCTL_DEVICE_H
#define _KGOCTL_DEVICE_H

#include <linux/kgo.h>
#include <linux/types.h>

/* One STATS snapshot: the counters and room for every P's record. */
struct snapshot {
	struct kgo_stats st;
	struct kgo_proc_stats *procs;
	__u32 cap;
};

int open_dev(void);
void get_info(int fd, struct kgo_info *info);
void require_abi(int fd, struct kgo_info *info);
void get_stats(int fd, struct snapshot *s);
__u32 nr_records(const struct snapshot *s);

#endif /* _KGOCTL_DEVICE_H */
