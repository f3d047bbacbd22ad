// SPDX-License-Identifier: GPL-2.0
/*
 * Who may use /dev/kgo, and how much of it one user may take.
 *
 * The gate. The device's mode (dev_mode) says who may open it, once, at
 * load. An operator also needs to close the door on a running system, or
 * open it to one group only, without unloading the module and so
 * without killing what runs: the writable parameter "disabled" does
 * that, as io_uring_disabled does for io_uring.
 *
 *   0  anyone the device's mode lets in;
 *   1  only CAP_SYS_ADMIN, or members of the group "group" (a gid);
 *   2  nobody: new opens fail with -EPERM.
 *
 * It is checked at open. An fd already open keeps working, as a file
 * whose mode changed does: revoking open fds is close's and SIGKILL's
 * job.
 *
 * Per-user caps. One fd's caps (max_inflight, max_bytes in session.c)
 * bound one fd; a user with many fds, or many processes, is bounded by
 * these, per user, summed over every fd it opened: the opener's uid, or
 * the owner of the outermost user namespace it is in (kgo_user_charged()):
 *
 *   max_user_inflight    tasks accepted and not yet read;
 *   max_user_goroutines  goroutines its sessions cause at once: each
 *                        task's own, the nodes of its SPAWN trees, the
 *                        partner goroutine of a PINGPONG, SELECT or
 *                        PINGPONG_HOG task, and the poller of each
 *                        KGO_RING_SQPOLL ring (for the ring's life);
 *   max_user_rings       rings (KGO_IOC_RING_SETUP) not yet freed: each
 *                        costs pages, a vmap area and a session however
 *                        small its CQ.
 *
 * Past them SUBMIT refuses with -EAGAIN, a SPAWN node's spawn or a
 * task's partner fails with -EAGAIN, which the task reports, and
 * RING_SETUP refuses with -EAGAIN before it allocates anything. The machine-wide bound is the
 * memory budget (budget.c); these keep one user from taking all of it.
 *
 * A struct kgo_user per uid with an fd open, in a hash table under
 * kgo_users_lock; a session holds a reference to its user, and the counts
 * are atomics, so the hot paths take no lock.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <kunit/visibility.h>

#include "user.h"

#define KGO_DISABLED_MAX	2

static int kgo_param_set_disabled(const char *val, const struct kernel_param *kp)
{
	int n, ret = kstrtoint(val, 0, &n);

	if (ret)
		return ret;
	if (n < 0 || n > KGO_DISABLED_MAX)
		return -EINVAL;
	WRITE_ONCE(*(int *)kp->arg, n);
	return 0;
}

static const struct kernel_param_ops kgo_disabled_ops = {
	.set = kgo_param_set_disabled,
	.get = param_get_int,
};

static int disabled;
module_param_cb(disabled, &kgo_disabled_ops, &disabled, 0644);
MODULE_PARM_DESC(disabled,
		 "Who may open /dev/kgo: 0 anyone dev_mode lets in, 1 CAP_SYS_ADMIN or the group, 2 nobody");

static int group = -1;
module_param(group, int, 0644);
MODULE_PARM_DESC(group, "With disabled=1, the gid whose members may open /dev/kgo (-1: none)");

static unsigned int max_user_inflight = 262144;
module_param(max_user_inflight, uint, 0644);
MODULE_PARM_DESC(max_user_inflight, "Tasks one user may have in flight over all its fds");

static unsigned int max_user_goroutines = 262144;
module_param(max_user_goroutines, uint, 0644);
MODULE_PARM_DESC(max_user_goroutines,
		 "Goroutines one user's tasks may run at once (task goroutines and SPAWN nodes)");

static unsigned int max_user_rings = 64;
module_param(max_user_rings, uint, 0644);
MODULE_PARM_DESC(max_user_rings, "Rings one user may have set up over all its fds");

static DEFINE_HASHTABLE(kgo_users, 6);
static DEFINE_SPINLOCK(kgo_users_lock);

/* Whether the gate lets the caller open /dev/kgo. Context: process. */
static bool kgo_user_allowed(void)
{
	int gid;

	switch (READ_ONCE(disabled)) {
	case 0:
		return true;
	case 1:
		if (capable(CAP_SYS_ADMIN))
			return true;
		gid = READ_ONCE(group);
		return gid >= 0 && in_group_p(make_kgid(&init_user_ns, gid));
	default:
		return false;
	}
}

/*
 * Whom the caller's session is charged to: the caller's uid, or, inside
 * a user namespace, the owner of the outermost one under the initial
 * namespace, the user who made it. A user with a subordinate uid range
 * (or just a namespace of its own) can setuid() to many kuids in there,
 * and each would have fresh caps; so all of them count as the one user
 * outside, as RLIMIT_NPROC's ucounts charge up the chain.
 */
static kuid_t kgo_user_charged(void)
{
	const struct user_namespace *ns = current_user_ns();

	if (ns == &init_user_ns)
		return current_uid();
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns->owner;
}

/**
 * kgo_user_get() - the caller's user, for a new session
 *
 * Context: process, may sleep.
 * Return: a referenced user, or ERR_PTR (-EPERM: the gate is closed to the
 * caller; -ENOMEM).
 */
struct kgo_user *kgo_user_get(void)
{
	kuid_t uid = kgo_user_charged();
	struct kgo_user *u, *fresh;

	if (!kgo_user_allowed())
		return ERR_PTR(-EPERM);
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return ERR_PTR(-ENOMEM);
	spin_lock(&kgo_users_lock);
	hash_for_each_possible(kgo_users, u, node, __kuid_val(uid)) {
		if (uid_eq(u->uid, uid)) {
			refcount_inc(&u->ref);
			spin_unlock(&kgo_users_lock);
			kfree(fresh);
			return u;
		}
	}
	fresh->uid = uid;
	refcount_set(&fresh->ref, 1);
	hash_add(kgo_users, &fresh->node, __kuid_val(uid));
	spin_unlock(&kgo_users_lock);
	return fresh;
}
EXPORT_SYMBOL_IF_KUNIT(kgo_user_get);

/* Drops a session's reference; the last one frees the user. */
void kgo_user_put(struct kgo_user *u)
{
	if (!refcount_dec_and_lock(&u->ref, &kgo_users_lock))
		return;
	hash_del(&u->node);
	spin_unlock(&kgo_users_lock);
	WARN_ON_ONCE(atomic_read(&u->inflight) || atomic_read(&u->goroutines) ||
		     atomic_read(&u->rings));
	kfree(u);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_user_put);

/* Takes @n of @count against @max; false, taking nothing, past the cap. */
static bool kgo_user_take(atomic_t *count, unsigned int n, unsigned int max)
{
	if (n <= INT_MAX / 2 &&
	    atomic_add_return(n, count) <= (int)min_t(unsigned int, max, INT_MAX / 2))
		return true;
	if (n <= INT_MAX / 2)
		atomic_sub(n, count);
	return false;
}

bool kgo_user_task_get(struct kgo_user *u)
{
	return kgo_user_take(&u->inflight, 1, READ_ONCE(max_user_inflight));
}

void kgo_user_task_put(struct kgo_user *u)
{
	WARN_ON_ONCE(atomic_dec_return(&u->inflight) < 0);
}

/* As kgo_user_task_get(), for @n tasks at once: a ring's CQ (ring.c). */
bool kgo_user_task_get_n(struct kgo_user *u, u32 n)
{
	return kgo_user_take(&u->inflight, n, READ_ONCE(max_user_inflight));
}

void kgo_user_task_put_n(struct kgo_user *u, u32 n)
{
	WARN_ON_ONCE(atomic_sub_return(n, &u->inflight) < 0);
}

bool kgo_user_g_get(struct kgo_user *u)
{
	return kgo_user_take(&u->goroutines, 1, READ_ONCE(max_user_goroutines));
}

void kgo_user_g_put(struct kgo_user *u)
{
	WARN_ON_ONCE(atomic_dec_return(&u->goroutines) < 0);
}

bool kgo_user_ring_get(struct kgo_user *u)
{
	return kgo_user_take(&u->rings, 1, READ_ONCE(max_user_rings));
}

void kgo_user_ring_put(struct kgo_user *u)
{
	WARN_ON_ONCE(atomic_dec_return(&u->rings) < 0);
}
