// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets that park goroutines, not threads (Go's netpoller, for the
 * kernel's own sockets).
 *
 * A goroutine that calls kernel_recvmsg() on an empty socket sleeps its
 * M; kgo hands the P to another M, so each waiting connection costs a
 * kthread, which is what goroutines exist to avoid. Here every operation
 * is tried non-blocking (MSG_DONTWAIT, O_NONBLOCK) first; a plain TCP
 * receive that sees nothing queued does not even try
 * (kgo_sock_rd_surely_empty()). On -EAGAIN the caller parks on one of two
 * wait lists of its struct kgo_sock, one for reading (recv, accept) and
 * one for writing (send, connect), and the socket's own readiness
 * callbacks, which the network stack calls from softirq as data, acks,
 * connections and errors arrive, make it runnable again. No M sleeps
 * while a goroutine waits for the network; a thread that calls the same
 * functions sleeps as it would in the kernel's own calls.
 *
 * Go's netpoller asks epoll, in findRunnable, which descriptors became
 * ready. The kernel has no such list to ask: readiness is pushed to
 * sk_data_ready() and friends instead, so the push is where goroutines
 * are readied. The Gs a callback finds on a list are readied together
 * and handed over with one kgo_injectglist(), as Go's netpoll does
 * with what one epoll_wait() returned.
 *
 * No lost wake-up, and no lock when nobody waits. Each list has a
 * sequence number, which every callback bumps with a fully ordered
 * atomic whether or not anyone waits, and a count of the callers about
 * to wait on it or waiting. A caller reads the number (acquire: its
 * try then sees what the callback that bumped it saw) before its
 * non-blocking try. On -EAGAIN it takes @lock, counts itself in, and
 * with a full barrier between, reads the number again: if it moved, it
 * tries again; if not, it goes on the list before it drops @lock. The
 * callback bumps the number, then (the same full barrier) reads the
 * count, and takes @lock only if it is not zero. This is the store
 * buffer pattern of wq_has_sleeper() and waitqueue_active(): either
 * the caller sees the new number, or the callback sees the count and
 * waits for @lock, which the caller holds until it is on the list. So
 * a socket whose goroutine is busy elsewhere costs its callbacks one
 * atomic, not an interrupts-off lock. A callback that finds the count
 * set wakes every waiter of the list: each goes back to its try, and
 * those that lose the race for the data wait again.
 *
 * The callbacks. attach saves sk_data_ready, sk_write_space,
 * sk_state_change and sk_error_report and installs kgo's, under the
 * socket's sk_callback_lock, with sk_user_data pointing here; kgo's call
 * the saved ones after their own, so a thread in sk_wait_data() or
 * poll() on the same socket is still woken. The last reference restores
 * them under the same lock, after which no callback can reach the
 * struct. A callback that read the function pointer before that and
 * finds sk_user_data gone calls the restored one.
 *
 * Lifetime. The owner's reference is dropped by kgo_sock_close(). Each
 * call holds one of its own for as long as it runs, so a close from
 * another goroutine never frees a socket under a call; the last
 * reference, the owner's or a call's, releases the socket. Closing
 * (and kgo_sock_shutdown(), which anyone may call any number of times)
 * marks the socket closed and wakes every waiter: they and every later
 * call return -ESHUTDOWN.
 *
 * Lock order: sk_callback_lock (read, in callbacks) -> kgo_sock.lock ->
 * the scheduler's locks (kgo_injectglist()). @lock is taken with
 * interrupts off, as the waiter code expects (waiter.c); callbacks run
 * in softirq or, from release_sock()'s backlog, in process context.
 */

#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <kunit/visibility.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>
#include <net/transp_v6.h>

#include <kgo.h>
#include "compat.h"
#include "api.h"
#include "check.h"
#include "g.h"
#include "sched.h"
#include "sock.h"
#include "waiter.h"

struct kgo_sock_queue {
	struct list_head waiters;	/* kgo_wait_node, under kgo_sock.lock */
	atomic_long_t seq;		/* bumped by every callback; see above */
	atomic_t nwait;			/* callers counted in by kgo_sock_wait() */
};

struct kgo_sock {
	struct socket *sock;		/* owned: released with the last ref */
	refcount_t refs;		/* the owner's, and one per call running */
	spinlock_t lock;		/* the queues and closed; irqs off */
	bool closed;			/* set once, under lock; read lockless */
	struct kgo_sock_queue rd;	/* recv and accept */
	struct kgo_sock_queue wr;	/* send and connect */
	/* The socket's callbacks before attach; under sk_callback_lock. */
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	void (*saved_error_report)(struct sock *sk);
};

enum { KGO_SOCK_RD = 1, KGO_SOCK_WR = 2 };

/*
 * Readies every waiter of @q: goroutines into @gq (not yet handed to the
 * scheduler: the caller does that once it dropped @lock), threads at
 * once. Context: ks->lock held.
 */
static u32 kgo_sock_claim_all(struct kgo_sock_queue *q, struct kgo_gqueue *gq)
{
	struct kgo_wait_node *n;
	u32 count = 0;

	while ((n = kgo_waiter_dequeue(&q->waiters))) {
		struct kgo_waiter *w = n->w;

		/* A claimed G is parked: its park released @lock. */
		if (w->g && kgo_g_readied(w->g)) {
			kgo_gqueue_push_back(gq, w->g);
			count++;
		} else if (!w->g) {
			kgo_waiter_wake_m(w, NULL);
		}
	}
	return count;
}

/*
 * Bumps @q's sequence; whether anyone may wait on it. Fully ordered:
 * what the socket's readiness changed is visible before the new number
 * (the callers' acquire), and the count is read after it (the store
 * buffer pattern with kgo_sock_wait(), see the essay).
 */
static bool kgo_sock_bump(struct kgo_sock_queue *q)
{
	atomic_long_inc_return(&q->seq);
	return atomic_read(&q->nwait);
}

/*
 * Wakes the waiters of @which lists, or with @close all of them for
 * good. Context: any; ks->lock not held.
 */
static void kgo_sock_wake(struct kgo_sock *ks, unsigned int which, bool close)
{
	struct kgo_gqueue gq = {};
	unsigned long flags;
	unsigned int busy = 0;
	u32 n = 0;

	if ((which & KGO_SOCK_RD) && kgo_sock_bump(&ks->rd))
		busy |= KGO_SOCK_RD;
	if ((which & KGO_SOCK_WR) && kgo_sock_bump(&ks->wr))
		busy |= KGO_SOCK_WR;
	if (close)
		busy = which;
	if (!busy)
		return;		/* the common case of a busy goroutine: no lock */

	spin_lock_irqsave(&ks->lock, flags);
	if (close)
		WRITE_ONCE(ks->closed, true);
	if (busy & KGO_SOCK_RD)
		n += kgo_sock_claim_all(&ks->rd, &gq);
	if (busy & KGO_SOCK_WR)
		n += kgo_sock_claim_all(&ks->wr, &gq);
	spin_unlock_irqrestore(&ks->lock, flags);
	if (n)
		kgo_injectglist(&gq, n);
}

/*
 * The callbacks. Context: softirq, or process context with bottom
 * halves off (release_sock()'s backlog); the socket lock may be held.
 */
static void kgo_sock_data_ready(struct sock *sk)
{
	struct kgo_sock *ks;

	read_lock_bh(&sk->sk_callback_lock);
	ks = __locked_read_sk_user_data_with_flags(sk, 0);
	if (ks) {
		kgo_sock_wake(ks, KGO_SOCK_RD, false);
		ks->saved_data_ready(sk);
	} else if (sk->sk_data_ready != kgo_sock_data_ready) {
		sk->sk_data_ready(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void kgo_sock_write_space(struct sock *sk)
{
	struct kgo_sock *ks;

	read_lock_bh(&sk->sk_callback_lock);
	ks = __locked_read_sk_user_data_with_flags(sk, 0);
	if (ks) {
		kgo_sock_wake(ks, KGO_SOCK_WR, false);
		ks->saved_write_space(sk);
	} else if (sk->sk_write_space != kgo_sock_write_space) {
		sk->sk_write_space(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* A connection made or lost, an error: both sides' waiters look again. */
static void kgo_sock_state_change(struct sock *sk)
{
	struct kgo_sock *ks;

	read_lock_bh(&sk->sk_callback_lock);
	ks = __locked_read_sk_user_data_with_flags(sk, 0);
	if (ks) {
		kgo_sock_wake(ks, KGO_SOCK_RD | KGO_SOCK_WR, false);
		ks->saved_state_change(sk);
	} else if (sk->sk_state_change != kgo_sock_state_change) {
		sk->sk_state_change(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void kgo_sock_error_report(struct sock *sk)
{
	struct kgo_sock *ks;

	read_lock_bh(&sk->sk_callback_lock);
	ks = __locked_read_sk_user_data_with_flags(sk, 0);
	if (ks) {
		kgo_sock_wake(ks, KGO_SOCK_RD | KGO_SOCK_WR, false);
		ks->saved_error_report(sk);
	} else if (sk->sk_error_report != kgo_sock_error_report) {
		sk->sk_error_report(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * A connection accepted from a kgo listener is a clone of it, callbacks
 * included (sk_user_data is not copied: attach sets NOCOPY). Until it is
 * attached, kgo's callbacks on it find no state and call nothing: nobody
 * can wait on a connection not yet accepted. Attaching it puts back the
 * listener's originals first, then wraps them as for any socket: so its
 * connections must be accepted with kgo_sock_accept(), which knows the
 * listener.
 */
static bool kgo_sock_is_ours(struct sock *sk)
{
	return sk->sk_data_ready == kgo_sock_data_ready;
}

/*
 * Puts the listener's callbacks back on @sk, a connection accepted from
 * it that will not be attached: released with kgo's on, it could call
 * into kgo after unload (a lingering TCP socket still takes ICMP errors,
 * which a remote peer can send).
 */
static void kgo_sock_unclone(struct sock *sk, struct kgo_sock *parent)
{
	write_lock_bh(&sk->sk_callback_lock);
	if (kgo_sock_is_ours(sk) && !sk->sk_user_data) {
		sk->sk_data_ready = parent->saved_data_ready;
		sk->sk_write_space = parent->saved_write_space;
		sk->sk_state_change = parent->saved_state_change;
		sk->sk_error_report = parent->saved_error_report;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}

static struct kgo_sock *__kgo_sock_attach(struct socket *sock, gfp_t gfp,
					  struct kgo_sock *parent)
{
	struct sock *sk = sock->sk;
	struct kgo_sock *ks;

	ks = kzalloc(sizeof(*ks), gfp);
	if (!ks) {
		if (parent)
			kgo_sock_unclone(sk, parent);
		return ERR_PTR(-ENOMEM);
	}
	ks->sock = sock;
	refcount_set(&ks->refs, 1);
	spin_lock_init(&ks->lock);
	INIT_LIST_HEAD(&ks->rd.waiters);
	INIT_LIST_HEAD(&ks->wr.waiters);

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data || (kgo_sock_is_ours(sk) && !parent)) {
		write_unlock_bh(&sk->sk_callback_lock);
		kfree(ks);
		return ERR_PTR(sk->sk_user_data ? -EBUSY : -EINVAL);
	}
	if (parent && kgo_sock_is_ours(sk)) {
		sk->sk_data_ready = parent->saved_data_ready;
		sk->sk_write_space = parent->saved_write_space;
		sk->sk_state_change = parent->saved_state_change;
		sk->sk_error_report = parent->saved_error_report;
	}
	ks->saved_data_ready = sk->sk_data_ready;
	ks->saved_write_space = sk->sk_write_space;
	ks->saved_state_change = sk->sk_state_change;
	ks->saved_error_report = sk->sk_error_report;
	/* NOCOPY: a clone (an accepted connection) does not inherit it. */
	__rcu_assign_sk_user_data_with_flags(sk, ks, SK_USER_DATA_NOCOPY);
	sk->sk_data_ready = kgo_sock_data_ready;
	sk->sk_write_space = kgo_sock_write_space;
	sk->sk_state_change = kgo_sock_state_change;
	sk->sk_error_report = kgo_sock_error_report;
	write_unlock_bh(&sk->sk_callback_lock);
	/*
	 * Each attached socket holds kgo: a client that leaks one keeps
	 * rmmod kgo from freeing the callbacks it still runs.
	 */
	__module_get(THIS_MODULE);
	return ks;
}

struct kgo_sock *kgo_sock_attach(struct socket *sock, gfp_t gfp)
{
	return __kgo_sock_attach(sock, gfp, NULL);
}
EXPORT_SYMBOL_NS_GPL(kgo_sock_attach, KGO_NS);

struct socket *kgo_sock_socket(struct kgo_sock *ks)
{
	return ks->sock;
}
EXPORT_SYMBOL_NS_GPL(kgo_sock_socket, KGO_NS);

static void kgo_sock_put(struct kgo_sock *ks)
{
	struct sock *sk = ks->sock->sk;

	if (!refcount_dec_and_test(&ks->refs))
		return;
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = ks->saved_data_ready;
	sk->sk_write_space = ks->saved_write_space;
	sk->sk_state_change = ks->saved_state_change;
	sk->sk_error_report = ks->saved_error_report;
	rcu_assign_sk_user_data(sk, NULL);
	write_unlock_bh(&sk->sk_callback_lock);
	/* Nobody waits: a waiter holds a reference. */
	WARN_ON_ONCE(!list_empty(&ks->rd.waiters) || !list_empty(&ks->wr.waiters));
	sock_release(ks->sock);
	kfree(ks);
	/*
	 * A callback that read our pointer before the restore may still be
	 * running: from a socket's backlog, which sock_release() waited out
	 * when it locked the socket, or in softirq, which the unload waits
	 * out (free_module()'s synchronize_rcu()).
	 */
	module_put(THIS_MODULE);
}

void kgo_sock_shutdown(struct kgo_sock *ks)
{
	kgo_sock_wake(ks, KGO_SOCK_RD | KGO_SOCK_WR, true);
}
EXPORT_SYMBOL_NS_GPL(kgo_sock_shutdown, KGO_NS);

void kgo_sock_close(struct kgo_sock *ks)
{
	if (!ks)
		return;
	kgo_sock_shutdown(ks);
	kgo_sock_put(ks);
}
EXPORT_SYMBOL_NS_GPL(kgo_sock_close, KGO_NS);

/* A call's deadline: KGO_FOREVER, or an absolute CLOCK_MONOTONIC ns. */
static u64 kgo_sock_deadline(u64 timeout_ns)
{
	u64 now;

	if (timeout_ns == KGO_FOREVER || timeout_ns == KGO_NOWAIT)
		return timeout_ns;
	now = ktime_get_ns();
	return timeout_ns > U64_MAX - 1 - now ? KGO_FOREVER : now + timeout_ns;
}

/*
 * Waits on @q until a callback bumps its sequence past @seq, the socket
 * closes, or @deadline passes.
 *
 * Return: 0 to try again; -ESHUTDOWN, -ETIMEDOUT, -EAGAIN (KGO_NOWAIT).
 */
static int kgo_sock_wait(struct kgo_sock *ks, struct kgo_sock_queue *q,
			 unsigned long seq, u64 deadline, u8 reason)
{
	u64 left = KGO_FOREVER;
	int r;

	if (deadline == KGO_NOWAIT)
		return -EAGAIN;
	if (deadline != KGO_FOREVER) {
		u64 now = ktime_get_ns();

		if (now >= deadline)
			return -ETIMEDOUT;
		left = deadline - now;
	}
	spin_lock_irq(&ks->lock);
	if (ks->closed) {
		spin_unlock_irq(&ks->lock);
		return -ESHUTDOWN;
	}
	atomic_inc(&q->nwait);
	/* Pairs with kgo_sock_bump(): we see its number, or it our count. */
	smp_mb__after_atomic();
	if (atomic_long_read(&q->seq) != seq) {
		atomic_dec(&q->nwait);
		spin_unlock_irq(&ks->lock);
		return 0;
	}
	/* Releases ks->lock once the caller is parked or asleep. */
	r = kgo_waiter_wait_on(&q->waiters, &ks->lock, left, reason, false);
	atomic_dec(&q->nwait);
	return r;
}

/*
 * Every call: the caller's own reference, and the checks. A call from
 * atomic context may only be KGO_NOWAIT, and even that takes the
 * socket lock, which sleeps: process context always.
 *
 * Each call is also a preemption point. A goroutine that finds work at
 * every call never parks: an accept loop with connections queued, a
 * receive loop on a busy connection. Marked by the monitor, it yields
 * here, rather than keeping its P until the monitor takes the P away
 * and another M must run the rest (hog.c). The reference comes first:
 * while the caller is switched out, another goroutine may close the
 * socket, and the call must find it still there (sock_test's
 * kgo_sock_enter_close_test).
 */
static int kgo_sock_enter(struct kgo_sock *ks, const char *fn)
{
	if (!kgo_may_block(fn))
		return -EPERM;
	might_sleep();
	refcount_inc(&ks->refs);
	kgo_preempt_check();
	return 0;
}

/*
 * IPv6's TCP proto, where the kernel has it built in: a module's would
 * make kgo depend on ipv6.ko (its sockets then just always try).
 */
static bool kgo_sock_is_tcpv6(const struct proto *prot)
{
#if IS_BUILTIN(CONFIG_IPV6)
	return prot == &tcpv6_prot;
#else
	return false;
#endif
}

/* Acquire: the try below reads the socket after this. See the essay. */
static unsigned long kgo_sock_seq(struct kgo_sock_queue *q)
{
	return atomic_long_read_acquire(&q->seq);
}

/*
 * Whether a receive now could only say -EAGAIN: a plain TCP connection
 * with nothing in its receive queue, no error and no end of input. Read
 * without the socket lock, after kgo_sock_seq(): TCP queues an skb, then
 * calls sk_data_ready() (our bump), and sets an error or the shutdown
 * before it calls sk_state_change() or sk_error_report(), so anything
 * this misses moved the sequence, and the wait sees that and tries.
 * Data held in the backlog of a socket someone else locked is queued,
 * and data_ready called, by that owner's release_sock().
 *
 * Plain TCP: sk_prot is TCP's own. kTLS and sockmap put a proto of
 * theirs there, with a queue of their own that a receive reads first:
 * a TLS record already decrypted and announced waits there while
 * sk_receive_queue is empty, and a wait would never end. They, UDP
 * (two queues as well) and every other protocol always try.
 *
 * A server's goroutine that answered a request asks for the next at once,
 * and the next has almost never come yet: this spares that receive the
 * socket lock and the LSM hooks (about 500 instructions in make
 * profile's net_kgo_c10000 of about 40,000 a round trip).
 */
bool kgo_sock_rd_surely_empty(struct sock *sk)
{
	const struct proto *prot = READ_ONCE(sk->sk_prot);

	if (prot != &tcp_prot && !kgo_sock_is_tcpv6(prot))
		return false;
	return READ_ONCE(sk->sk_state) == TCP_ESTABLISHED &&
	       skb_queue_empty_lockless(&sk->sk_receive_queue) &&
	       !READ_ONCE(sk->sk_err) &&
	       !(READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN);
}
EXPORT_SYMBOL_IF_KUNIT(kgo_sock_rd_surely_empty);

ssize_t kgo_sock_recv(struct kgo_sock *ks, void *buf, size_t len, u64 timeout_ns)
{
	u64 deadline = kgo_sock_deadline(timeout_ns);
	ssize_t r;

	r = kgo_sock_enter(ks, "kgo_sock_recv");
	if (r)
		return r;
	for (;;) {
		struct kvec iov = { .iov_base = buf, .iov_len = len };
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		unsigned long seq = kgo_sock_seq(&ks->rd);

		if (READ_ONCE(ks->closed)) {
			r = -ESHUTDOWN;
			break;
		}
		if (kgo_sock_rd_surely_empty(ks->sock->sk))
			r = -EAGAIN;
		else
			r = kernel_recvmsg(ks->sock, &msg, &iov, 1, len, MSG_DONTWAIT);
		if (r != -EAGAIN)
			break;
		r = kgo_sock_wait(ks, &ks->rd, seq, deadline, KGO_WAIT_REASON_SOCK_READ);
		if (r)
			break;
	}
	kgo_sock_put(ks);
	return r;
}
EXPORT_SYMBOL_NS_GPL(kgo_sock_recv, KGO_NS);

ssize_t kgo_sock_send(struct kgo_sock *ks, const void *buf, size_t len, u64 timeout_ns)
{
	u64 deadline = kgo_sock_deadline(timeout_ns);
	size_t sent = 0;
	ssize_t r;

	r = kgo_sock_enter(ks, "kgo_sock_send");
	if (r)
		return r;
	while (sent < len) {
		struct kvec iov = {
			.iov_base = (void *)buf + sent,
			.iov_len = len - sent,
		};
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
		unsigned long seq = kgo_sock_seq(&ks->wr);

		if (READ_ONCE(ks->closed)) {
			r = -ESHUTDOWN;
			break;
		}
		r = kernel_sendmsg(ks->sock, &msg, &iov, 1, len - sent);
		if (r > 0) {
			sent += r;
			continue;
		}
		if (r != -EAGAIN)
			break;
		r = kgo_sock_wait(ks, &ks->wr, seq, deadline, KGO_WAIT_REASON_SOCK_WRITE);
		if (r)
			break;
	}
	kgo_sock_put(ks);
	/* What went out counts, as for a signal in send(2). */
	return sent ? sent : r;
}
EXPORT_SYMBOL_NS_GPL(kgo_sock_send, KGO_NS);

int kgo_sock_accept(struct kgo_sock *ks, struct kgo_sock **newp, gfp_t gfp,
		    u64 timeout_ns)
{
	u64 deadline = kgo_sock_deadline(timeout_ns);
	struct socket *nsock;
	int r;

	*newp = NULL;
	r = kgo_sock_enter(ks, "kgo_sock_accept");
	if (r)
		return r;
	for (;;) {
		unsigned long seq = kgo_sock_seq(&ks->rd);

		if (READ_ONCE(ks->closed)) {
			r = -ESHUTDOWN;
			break;
		}
		r = kernel_accept(ks->sock, &nsock, O_NONBLOCK);
		if (!r) {
			struct kgo_sock *nks = __kgo_sock_attach(nsock, gfp, ks);

			if (IS_ERR(nks)) {
				/* The peer sees a reset: no memory to serve it. */
				sock_release(nsock);
				r = PTR_ERR(nks);
			} else {
				*newp = nks;
			}
			break;
		}
		if (r != -EAGAIN)
			break;
		r = kgo_sock_wait(ks, &ks->rd, seq, deadline, KGO_WAIT_REASON_SOCK_READ);
		if (r)
			break;
	}
	kgo_sock_put(ks);
	return r;
}
EXPORT_SYMBOL_NS_GPL(kgo_sock_accept, KGO_NS);

int kgo_sock_connect(struct kgo_sock *ks, struct sockaddr *addr, int addrlen,
		     u64 timeout_ns)
{
	u64 deadline = kgo_sock_deadline(timeout_ns);
	int r;

	r = kgo_sock_enter(ks, "kgo_sock_connect");
	if (r)
		return r;
	for (;;) {
		unsigned long seq = kgo_sock_seq(&ks->wr);

		if (READ_ONCE(ks->closed)) {
			r = -ESHUTDOWN;
			break;
		}
		/*
		 * A connect already under way says -EALREADY, a finished
		 * one -EISCONN, a failed one its error (sock_error()).
		 */
		r = kgo_kernel_connect(ks->sock, addr, addrlen, O_NONBLOCK);
		if (r == -EISCONN)
			r = 0;
		if (r != -EINPROGRESS && r != -EALREADY)
			break;
		r = kgo_sock_wait(ks, &ks->wr, seq, deadline, KGO_WAIT_REASON_SOCK_WRITE);
		if (r)
			break;
	}
	kgo_sock_put(ks);
	return r;
}
EXPORT_SYMBOL_NS_GPL(kgo_sock_connect, KGO_NS);
