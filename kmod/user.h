/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_USER_H
#define _KGO_USER_H

#include <linux/atomic.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/uidgid.h>

/*
 * One user (real uid of an opener) with /dev/kgo fds open: see user.c.
 * Field rules (locking.h): I, A; node under kgo_users_lock.
 */
struct kgo_user {
	kuid_t uid;			/* I */
	refcount_t ref;			/* A: one per session */
	atomic_t inflight;		/* A: tasks accepted and not read */
	atomic_t goroutines;		/* A: every goroutine its sessions cause */
	atomic_t rings;			/* A: rings set up and not yet freed */
	struct hlist_node node;		/* kgo_users_lock */
};

struct kgo_user *kgo_user_get(void);
void kgo_user_put(struct kgo_user *u);
bool kgo_user_task_get(struct kgo_user *u);
void kgo_user_task_put(struct kgo_user *u);
bool kgo_user_task_get_n(struct kgo_user *u, u32 n);
void kgo_user_task_put_n(struct kgo_user *u, u32 n);
bool kgo_user_g_get(struct kgo_user *u);
void kgo_user_g_put(struct kgo_user *u);
bool kgo_user_ring_get(struct kgo_user *u);
void kgo_user_ring_put(struct kgo_user *u);

#endif /* _KGO_USER_H */
