// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: sockets (sock.c), over loopback TCP. A goroutine waiting for
 * data, for room to send or for a connection parks, with its reason, and
 * is readied by the socket: data arriving, the peer draining, a peer
 * connecting, the peer closing. Shutdown and close wake it with
 * -ESHUTDOWN, a timeout with -ETIMEDOUT.
 *
 * The goroutines record what they got; the case, on its own thread,
 * checks (see run_g.c).
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/inet_connection_sock.h>
#include <net/net_namespace.h>
#include <net/request_sock.h>
#include <net/sock.h>

#include <kgo.h>
#include "compat.h"
#include "g.h"
#include "monitor.h"
#include "proc.h"
#include "sock.h"
#include "tests/run_g.h"

#define MS		((u64)NSEC_PER_MSEC)
/* How long anything may take on a slow emulated machine. */
#define SLOW_MS		10000

enum sock_op { OP_RECV, OP_SEND, OP_ACCEPT, OP_CONNECT };

struct sock_call {
	enum sock_op op;
	struct kgo_sock *ks;
	void *buf;
	size_t len;
	u64 timeout_ns;
	struct sockaddr_in *addr;	/* OP_CONNECT */
	struct kgo_sock *accepted;	/* OP_ACCEPT */
	struct kgo_g *g;
	ssize_t ret;
	u64 took_ns;
	struct completion done;
};

static void sock_call_body(void *arg)
{
	struct sock_call *c = arg;
	u64 t0 = ktime_get_ns();

	WRITE_ONCE(c->g, kgo_self());
	switch (c->op) {
	case OP_RECV:
		c->ret = kgo_sock_recv(c->ks, c->buf, c->len, c->timeout_ns);
		break;
	case OP_SEND:
		c->ret = kgo_sock_send(c->ks, c->buf, c->len, c->timeout_ns);
		break;
	case OP_ACCEPT:
		c->ret = kgo_sock_accept(c->ks, &c->accepted, GFP_KERNEL, c->timeout_ns);
		break;
	case OP_CONNECT:
		c->ret = kgo_sock_connect(c->ks, (struct sockaddr *)c->addr,
					  sizeof(*c->addr), c->timeout_ns);
		break;
	}
	c->took_ns = ktime_get_ns() - t0;
	complete(&c->done);
}

static void sock_call_start(struct kunit *test, struct sock_call *c)
{
	init_completion(&c->done);
	KUNIT_ASSERT_GT(test, kgo_go(sock_call_body, c, GFP_KERNEL), 0);
}

/* Whether the call's goroutine parked (not slept) for @reason in time. */
static bool sock_call_parked(struct sock_call *c, u8 reason)
{
	unsigned long end = jiffies + msecs_to_jiffies(SLOW_MS);

	do {
		struct kgo_g *g = READ_ONCE(c->g);

		if (g && atomic_read(&g->status) == KGO_G_WAITING &&
		    READ_ONCE(g->waitreason) == reason)
			return true;
		msleep(1);
	} while (time_before(jiffies, end));
	return false;
}

static bool sock_call_done(struct sock_call *c)
{
	return wait_for_completion_timeout(&c->done, msecs_to_jiffies(SLOW_MS));
}

/* A listening socket on 127.0.0.1, an ephemeral port; @addr says which. */
static struct socket *sock_listener(struct kunit *test, struct sockaddr_in *addr)
{
	struct socket *ls;

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, &ls), 0);
	KUNIT_ASSERT_EQ(test, kgo_kernel_bind(ls, addr, sizeof(*addr)), 0);
	KUNIT_ASSERT_EQ(test, kernel_listen(ls, 16), 0);
	KUNIT_ASSERT_EQ(test, kernel_getsockname(ls, (struct sockaddr *)addr),
			(int)sizeof(*addr));
	return ls;
}

/*
 * A connection: @peer a plain kernel socket the case drives from its
 * thread, the return value the other end, attached to kgo.
 */
static struct kgo_sock *sock_pair(struct kunit *test, struct socket **peer)
{
	struct sockaddr_in addr;
	struct socket *ls = sock_listener(test, &addr), *srv;
	struct kgo_sock *ks;

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, peer), 0);
	KUNIT_ASSERT_EQ(test, kgo_kernel_connect(*peer, &addr,
						 sizeof(addr), 0), 0);
	KUNIT_ASSERT_EQ(test, kernel_accept(ls, &srv, 0), 0);
	sock_release(ls);
	ks = kgo_sock_attach(srv, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ks));
	/* A failed case must not block forever on the peer. */
	(*peer)->sk->sk_rcvtimeo = msecs_to_jiffies(SLOW_MS);
	return ks;
}

static int peer_send(struct socket *peer, const void *buf, size_t len)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };

	return kernel_sendmsg(peer, &msg, &iov, 1, len);
}

static int peer_recv(struct socket *peer, void *buf, size_t len)
{
	struct kvec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {};

	return kernel_recvmsg(peer, &msg, &iov, 1, len, 0);
}

static void kgo_sock_data_test(struct kunit *test)
{
	struct socket *peer;
	struct kgo_sock *ks = sock_pair(test, &peer);
	char buf[32] = {};
	struct sock_call c = {
		.op = OP_RECV, .ks = ks, .buf = buf, .len = sizeof(buf),
		.timeout_ns = KGO_FOREVER,
	};

	sock_call_start(test, &c);
	KUNIT_EXPECT_TRUE(test, sock_call_parked(&c, KGO_WAIT_REASON_SOCK_READ));
	KUNIT_EXPECT_EQ(test, peer_send(peer, "hello, kgo", 10), 10);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&c));
	KUNIT_EXPECT_EQ(test, c.ret, 10);
	KUNIT_EXPECT_EQ(test, memcmp(buf, "hello, kgo", 10), 0);

	/* The peer closing is an end of stream: 0, not a wait forever. */
	c.g = NULL;
	sock_call_start(test, &c);
	KUNIT_EXPECT_TRUE(test, sock_call_parked(&c, KGO_WAIT_REASON_SOCK_READ));
	kernel_sock_shutdown(peer, SHUT_WR);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&c));
	KUNIT_EXPECT_EQ(test, c.ret, 0);
	sock_release(peer);
	kgo_sock_close(ks);
}

/* SO_SNDBUF of 4096 (6.1 has no sock_set_sndbuf()): quick to fill. */
static void sock_small_sndbuf(struct sock *sk)
{
	lock_sock(sk);
	sk->sk_userlocks |= SOCK_SNDBUF_LOCK;
	WRITE_ONCE(sk->sk_sndbuf, max_t(int, 2 * 4096, SOCK_MIN_SNDBUF));
	release_sock(sk);
}

/* Fills @ks's way to @peer until a send would block; how much went. */
static size_t sock_fill(struct kgo_sock *ks, void *chunk, size_t len)
{
	size_t filled = 0;
	ssize_t r;

	while ((r = kgo_sock_send(ks, chunk, len, KGO_NOWAIT)) > 0)
		filled += r;
	return filled;
}

static void kgo_sock_write_space_test(struct kunit *test)
{
	const size_t more = 64 * 1024;
	struct socket *peer;
	struct kgo_sock *ks = sock_pair(test, &peer);
	char *out = kunit_kzalloc(test, more, GFP_KERNEL);
	char *in = kunit_kzalloc(test, 4096, GFP_KERNEL);
	struct sock_call c = {
		.op = OP_SEND, .ks = ks, .buf = out, .len = more,
		.timeout_ns = KGO_FOREVER,
	};
	size_t filled, got = 0;
	int r;

	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, in);
	sock_small_sndbuf(kgo_sock_socket(ks)->sk);
	filled = sock_fill(ks, out, more);
	KUNIT_EXPECT_GT(test, filled, 0);

	sock_call_start(test, &c);
	KUNIT_EXPECT_TRUE(test, sock_call_parked(&c, KGO_WAIT_REASON_SOCK_WRITE));
	/* Draining makes room: the goroutine sends the rest as it comes. */
	while (got < filled + more && (r = peer_recv(peer, in, 4096)) > 0)
		got += r;
	KUNIT_EXPECT_EQ(test, got, filled + more);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&c));
	KUNIT_EXPECT_EQ(test, c.ret, (ssize_t)more);
	sock_release(peer);
	kgo_sock_close(ks);
}

static void kgo_sock_close_g(void *arg)
{
	kgo_sock_close(arg);
}

static void kgo_sock_shutdown_test(struct kunit *test)
{
	struct socket *peer;
	struct kgo_sock *ks = sock_pair(test, &peer);
	char buf[8];
	struct sock_call c = {
		.op = OP_RECV, .ks = ks, .buf = buf, .len = sizeof(buf),
		.timeout_ns = KGO_FOREVER,
	};

	/* Shutdown wakes a parked reader; later calls fail at once. */
	sock_call_start(test, &c);
	KUNIT_EXPECT_TRUE(test, sock_call_parked(&c, KGO_WAIT_REASON_SOCK_READ));
	kgo_sock_shutdown(ks);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&c));
	KUNIT_EXPECT_EQ(test, c.ret, -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, kgo_sock_recv(ks, buf, sizeof(buf), KGO_FOREVER), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, kgo_sock_send(ks, buf, sizeof(buf), KGO_FOREVER), -ESHUTDOWN);
	kgo_sock_close(ks);
	/* The socket went with the close: the peer sees the end. */
	KUNIT_EXPECT_EQ(test, peer_recv(peer, buf, sizeof(buf)), 0);
	sock_release(peer);
}

static void kgo_sock_close_parked_test(struct kunit *test)
{
	struct socket *peer;
	struct kgo_sock *ks = sock_pair(test, &peer);
	char buf[8];
	struct sock_call c = {
		.op = OP_RECV, .ks = ks, .buf = buf, .len = sizeof(buf),
		.timeout_ns = KGO_FOREVER,
	};

	/* Closed by another goroutine while one is parked on it. */
	sock_call_start(test, &c);
	KUNIT_EXPECT_TRUE(test, sock_call_parked(&c, KGO_WAIT_REASON_SOCK_READ));
	KUNIT_EXPECT_EQ(test, kgo_test_run_in_g(kgo_sock_close_g, ks, SLOW_MS), 0);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&c));
	KUNIT_EXPECT_EQ(test, c.ret, -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, peer_recv(peer, buf, sizeof(buf)), 0);
	sock_release(peer);
}

static void kgo_sock_timeout_test(struct kunit *test)
{
	struct socket *peer;
	struct kgo_sock *ks = sock_pair(test, &peer);
	char buf[8];
	struct sock_call c = {
		.op = OP_RECV, .ks = ks, .buf = buf, .len = sizeof(buf),
		.timeout_ns = 50 * MS,
	};

	KUNIT_EXPECT_EQ(test, kgo_sock_recv(ks, buf, sizeof(buf), KGO_NOWAIT), -EAGAIN);
	sock_call_start(test, &c);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&c));
	KUNIT_EXPECT_EQ(test, c.ret, -ETIMEDOUT);
	KUNIT_EXPECT_GE(test, c.took_ns, 50 * MS);
	/* A thread waits the same way, asleep. */
	KUNIT_EXPECT_EQ(test, kgo_sock_recv(ks, buf, sizeof(buf), 20 * MS), -ETIMEDOUT);
	/* Data after a timeout is still there for the next call. */
	KUNIT_EXPECT_EQ(test, peer_send(peer, "x", 1), 1);
	KUNIT_EXPECT_EQ(test, kgo_sock_recv(ks, buf, sizeof(buf), SLOW_MS * MS), 1);
	sock_release(peer);
	kgo_sock_close(ks);
}

#define NACCEPT	4

/*
 * Goroutines parked in accept on one listener: a connect made through
 * kgo readies one, a close all the others, in one batch.
 */
static void kgo_sock_accept_test(struct kunit *test)
{
	struct sockaddr_in addr;
	struct socket *ls = sock_listener(test, &addr), *cs;
	struct kgo_sock *lks = kgo_sock_attach(ls, GFP_KERNEL), *cks;
	struct sock_call *acc = kunit_kcalloc(test, NACCEPT, sizeof(*acc), GFP_KERNEL);
	struct sock_call conn = {
		.op = OP_CONNECT, .addr = &addr, .timeout_ns = SLOW_MS * MS,
	};
	int i, accepted = 0, shut = 0;
	unsigned long end;
	char buf[4];

	KUNIT_ASSERT_FALSE(test, IS_ERR(lks));
	KUNIT_ASSERT_NOT_NULL(test, acc);
	/* One struct socket has one kgo state. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(kgo_sock_attach(ls, GFP_KERNEL)), -EBUSY);

	for (i = 0; i < NACCEPT; i++) {
		acc[i] = (struct sock_call){
			.op = OP_ACCEPT, .ks = lks, .timeout_ns = KGO_FOREVER,
		};
		sock_call_start(test, &acc[i]);
	}
	for (i = 0; i < NACCEPT; i++)
		KUNIT_EXPECT_TRUE(test, sock_call_parked(&acc[i], KGO_WAIT_REASON_SOCK_READ));

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, &cs), 0);
	cks = kgo_sock_attach(cs, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cks));
	conn.ks = cks;
	sock_call_start(test, &conn);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&conn));
	KUNIT_EXPECT_EQ(test, conn.ret, 0);
	/* Whichever accepted it, wait for it, then close the rest out. */
	end = jiffies + msecs_to_jiffies(SLOW_MS);
	while (!accepted && time_before(jiffies, end)) {
		msleep(1);
		for (i = 0; i < NACCEPT; i++)
			if (completion_done(&acc[i].done) && acc[i].ret == 0)
				accepted++;
	}
	KUNIT_EXPECT_EQ(test, accepted, 1);
	kgo_sock_close(lks);
	for (i = 0; i < NACCEPT; i++) {
		KUNIT_ASSERT_TRUE(test, sock_call_done(&acc[i]));
		if (acc[i].ret == -ESHUTDOWN) {
			shut++;
			continue;
		}
		KUNIT_ASSERT_EQ(test, acc[i].ret, 0);
		/* The two ends talk through kgo. */
		KUNIT_EXPECT_EQ(test, kgo_sock_send(cks, "ping", 4, SLOW_MS * MS), 4);
		KUNIT_EXPECT_EQ(test, kgo_sock_recv(acc[i].accepted, buf, 4, SLOW_MS * MS), 4);
		KUNIT_EXPECT_EQ(test, memcmp(buf, "ping", 4), 0);
		kgo_sock_close(acc[i].accepted);
	}
	KUNIT_EXPECT_EQ(test, shut, NACCEPT - 1);
	kgo_sock_close(cks);
}

/*
 * A connection of a kgo listener accepted with kernel_accept() carries
 * kgo's callbacks without kgo's state, and nothing says what they
 * replaced: attach refuses it. Its data still arrives (read here once
 * it is there: kgo's callbacks wake nobody on it, the misuse the
 * header warns of).
 */
static void kgo_sock_accept_behind_test(struct kunit *test)
{
	struct sockaddr_in addr;
	struct socket *ls = sock_listener(test, &addr), *cs, *srv;
	struct kgo_sock *lks = kgo_sock_attach(ls, GFP_KERNEL);
	char buf[4];

	KUNIT_ASSERT_FALSE(test, IS_ERR(lks));
	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, &cs), 0);
	KUNIT_ASSERT_EQ(test, kgo_kernel_connect(cs, &addr,
						 sizeof(addr), 0), 0);
	KUNIT_ASSERT_EQ(test, kernel_accept(ls, &srv, 0), 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kgo_sock_attach(srv, GFP_KERNEL)), -EINVAL);
	srv->sk->sk_rcvtimeo = msecs_to_jiffies(SLOW_MS);
	KUNIT_EXPECT_EQ(test, peer_send(cs, "abcd", 4), 4);
	KUNIT_EXPECT_EQ(test, peer_recv(srv, buf, 4), 4);
	sock_release(srv);
	sock_release(cs);
	kgo_sock_close(lks);
}

/* A connect to a port nobody listens on fails with the connection's error. */
static void kgo_sock_refused_test(struct kunit *test)
{
	struct sockaddr_in addr;
	struct socket *ls = sock_listener(test, &addr), *cs;
	struct kgo_sock *cks;
	struct sock_call conn = {
		.op = OP_CONNECT, .addr = &addr, .timeout_ns = SLOW_MS * MS,
	};

	sock_release(ls);	/* the port is free again */
	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, &cs), 0);
	cks = kgo_sock_attach(cs, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cks));
	conn.ks = cks;
	sock_call_start(test, &conn);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&conn));
	KUNIT_EXPECT_EQ(test, conn.ret, -ECONNREFUSED);
	kgo_sock_close(cks);
}

/*
 * Round trips of one byte: each arrives while the goroutine is somewhere
 * between its try and its park, or parked, or still sending the last
 * echo; a callback that missed a waiter it should have seen leaves a
 * round trip to time out. The goroutine counts what it echoed.
 */
#define PINGPONG_ROUNDS	2000

struct sock_echo {
	struct kgo_sock *ks;
	int rounds;
	ssize_t err;
	struct completion done;
};

static void sock_echo_body(void *arg)
{
	struct sock_echo *e = arg;
	char b;

	for (;;) {
		ssize_t r = kgo_sock_recv(e->ks, &b, 1, SLOW_MS * MS);

		if (r <= 0) {
			e->err = r;
			break;
		}
		r = kgo_sock_send(e->ks, &b, 1, SLOW_MS * MS);
		if (r != 1) {
			e->err = r;
			break;
		}
		e->rounds++;
	}
	complete(&e->done);
}

static void kgo_sock_pingpong_test(struct kunit *test)
{
	struct socket *peer;
	struct sock_echo e = { .ks = sock_pair(test, &peer) };
	int i, lost = 0;
	char b;

	/* No Nagle: each byte goes at once, as in kgo_echo. */
	tcp_sock_set_nodelay(peer->sk);
	tcp_sock_set_nodelay(kgo_sock_socket(e.ks)->sk);
	init_completion(&e.done);
	KUNIT_ASSERT_GT(test, kgo_go(sock_echo_body, &e, GFP_KERNEL), 0);
	for (i = 0; i < PINGPONG_ROUNDS; i++) {
		b = (char)i;
		if (peer_send(peer, &b, 1) != 1 || peer_recv(peer, &b, 1) != 1 ||
		    b != (char)i) {
			lost = i + 1;
			break;
		}
	}
	KUNIT_EXPECT_EQ(test, lost, 0);
	/* End of stream: the goroutine's recv returns 0 and it ends. */
	kernel_sock_shutdown(peer, SHUT_WR);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&e.done,
							    msecs_to_jiffies(2 * SLOW_MS)));
	KUNIT_EXPECT_EQ(test, e.err, 0);
	KUNIT_EXPECT_EQ(test, e.rounds, PINGPONG_ROUNDS);
	sock_release(peer);
	kgo_sock_close(e.ks);
}

/*
 * Every call that may wait is a preemption point. A goroutine that calls
 * kgo_sock_recv(KGO_NOWAIT) on an empty socket in a loop never parks;
 * on the only P, the goroutine it spawned into runnext runs only once
 * it yields. Marked by the monitor after a slice, it yields at its next
 * call: a preemption, not a relief M taking its P a slice later.
 */
struct sock_spin {
	struct kgo_sock *ks;
	u64 start, end, other_ran;
	u64 maxgap;		/* longest time between two calls */
	ssize_t err;
	struct kgo_waitgroup wg;
};

static void sock_spin_other(void *arg)
{
	struct sock_spin *x = arg;

	WRITE_ONCE(x->other_ran, ktime_get_ns());
	kgo_wg_done(&x->wg);
}

static void sock_spin_body(void *arg)
{
	struct sock_spin *x = arg;
	u64 last, now;
	char b;

	x->start = ktime_get_ns();
	kgo_wg_add(&x->wg, 1);
	if (kgo_go(sock_spin_other, x, GFP_KERNEL) < 0)
		kgo_wg_done(&x->wg);
	/* Until the other ran, or for 2 s, far past a slice. */
	last = ktime_get_ns();
	while (!READ_ONCE(x->other_ran) && last - x->start < 2000 * MS) {
		ssize_t r = kgo_sock_recv(x->ks, &b, 1, KGO_NOWAIT);

		now = ktime_get_ns();
		x->maxgap = max(x->maxgap, now - last);
		last = now;
		if (r != -EAGAIN) {
			x->err = r;
			break;
		}
		cond_resched();		/* as a kernel loop must */
	}
	x->end = ktime_get_ns();
	kgo_wg_done(&x->wg);
}

static void kgo_sock_preempt_test(struct kunit *test)
{
	struct socket *peer;
	struct sock_spin x = { .ks = sock_pair(test, &peer) };
	u64 preempts = KGO_TEST_PSTAT(preempts);
	u64 reliefs = KGO_TEST_PSTAT(hog_reliefs);
	int prev = kgo_gomaxprocs(1);

	kgo_wg_init(&x.wg);
	kgo_wg_add(&x.wg, 1);
	KUNIT_EXPECT_GT(test, kgo_go(sock_spin_body, &x, GFP_KERNEL), 0LL);
	KUNIT_EXPECT_EQ(test, kgo_wg_wait_timeout(&x.wg, 6 * SLOW_MS * MS), 0);
	kgo_gomaxprocs(prev);
	KUNIT_EXPECT_EQ(test, x.err, 0);
	/* The other ran while the loop went on: the loop saw it and ended. */
	KUNIT_EXPECT_GT(test, x.other_ran, 0ULL);
	KUNIT_EXPECT_LT(test, x.other_ran, x.end);
	KUNIT_EXPECT_GT(test, KGO_TEST_PSTAT(preempts), preempts);
	/*
	 * And no relief: that takes a slice without a kgo call after the
	 * mark. A host that stops the guest's vCPU for that long between
	 * two calls makes the loop one, as far as the guest can tell.
	 */
	if (x.maxgap < (u64)kgo_slice_ms() * MS)
		KUNIT_EXPECT_EQ(test, KGO_TEST_PSTAT(hog_reliefs), reliefs);
	pr_info("receive loop preempted after %llu us; longest between calls %llu us\n",
		(x.other_ran - x.start) / 1000, x.maxgap / 1000);
	sock_release(peer);
	kgo_sock_close(x.ks);
}

struct sock_enter_race {
	struct kgo_sock *ks;
	bool closed;		/* by the other goroutine, during the call */
	bool closed_first;	/* before the call went on */
	ssize_t ret;
};

static void sock_enter_closer(void *arg)
{
	struct sock_enter_race *x = arg;

	kgo_sock_close(x->ks);
	WRITE_ONCE(x->closed, true);
}

static void sock_enter_caller(void *arg)
{
	struct sock_enter_race *x = arg;
	char b;

	if (kgo_go(sock_enter_closer, x, GFP_KERNEL) < 0)
		return;
	/* As the monitor marks a G: the call's preemption point yields. */
	WRITE_ONCE(kgo_self()->preempt, true);
	x->ret = kgo_sock_recv(x->ks, &b, 1, KGO_NOWAIT);
	x->closed_first = READ_ONCE(x->closed);
}

/*
 * A call that yields at its preemption point while another goroutine
 * closes the socket: the call's reference, taken before it can switch
 * out, keeps the socket until the call returns -ESHUTDOWN. Taken after
 * (as it was), the close freed the socket under the call: KASAN's
 * use-after-free and refcount_t's "addition on 0".
 */
static void kgo_sock_enter_close_test(struct kunit *test)
{
	struct socket *peer;
	struct sock_enter_race x = { .ks = sock_pair(test, &peer) };

	KUNIT_ASSERT_EQ(test, kgo_test_run_in_g_1p(sock_enter_caller, &x, SLOW_MS), 0);
	KUNIT_EXPECT_EQ(test, kgo_test_wait_quiet(SLOW_MS), 0);
	sock_release(peer);
	KUNIT_ASSERT_TRUE(test, READ_ONCE(x.closed));
	if (!x.closed_first)
		kunit_skip(test, "the closer ran after the call: no race to judge");
	KUNIT_EXPECT_EQ(test, x.ret, (ssize_t)-ESHUTDOWN);
}

/*
 * An attached socket holds kgo, so that rmmod kgo cannot free the
 * callbacks of a socket a client leaked; the close lets go.
 */
static void kgo_sock_module_ref_test(struct kunit *test)
{
	struct socket *peer;
	struct kgo_sock *ks;
	struct module *kgo = NULL;
	struct module_use *use;
	int before;

	/* The modules this one uses: kgo, stable while this one is loaded. */
	list_for_each_entry(use, &THIS_MODULE->target_list, target_list)
		if (!strcmp(use->target->name, "kgo"))
			kgo = use->target;
	if (!kgo)
		kunit_skip(test, "kgo is built in");
	before = module_refcount(kgo);
	ks = sock_pair(test, &peer);
	KUNIT_EXPECT_EQ(test, module_refcount(kgo), before + 1);
	kgo_sock_close(ks);
	KUNIT_EXPECT_EQ(test, module_refcount(kgo), before);
	sock_release(peer);
}

/*
 * The receive that does not try (kgo_sock_rd_surely_empty()): only on a
 * plain TCP connection with nothing queued. Queued data, the peer's end
 * of input, or a proto that is not TCP's own (kTLS and sockmap put
 * theirs there, with queues of their own) make the receive try, and a
 * UDP socket always does.
 */
static void kgo_sock_surely_empty_test(struct kunit *test)
{
	struct socket *peer, *udp;
	struct kgo_sock *ks = sock_pair(test, &peer);
	struct sock *sk = kgo_sock_socket(ks)->sk;
	struct proto *tcp = READ_ONCE(sk->sk_prot);
	struct proto *other = kmemdup(tcp, sizeof(*tcp), GFP_KERNEL);
	unsigned long end = jiffies + msecs_to_jiffies(SLOW_MS);
	char b = 'x', buf[4];
	struct sock_call c = {
		.op = OP_RECV, .ks = ks, .buf = buf, .len = sizeof(buf),
		.timeout_ns = KGO_NOWAIT,
	};

	KUNIT_ASSERT_NOT_NULL(test, other);
	KUNIT_EXPECT_TRUE(test, kgo_sock_rd_surely_empty(sk));
	/* The same operations under another proto's address: it tries. */
	WRITE_ONCE(sk->sk_prot, other);
	KUNIT_EXPECT_FALSE(test, kgo_sock_rd_surely_empty(sk));
	WRITE_ONCE(sk->sk_prot, tcp);
	kfree(other);

	KUNIT_ASSERT_EQ(test, peer_send(peer, &b, 1), 1);
	while (kgo_sock_rd_surely_empty(sk) && time_before(jiffies, end))
		msleep(1);
	KUNIT_EXPECT_FALSE(test, kgo_sock_rd_surely_empty(sk));
	sock_call_start(test, &c);
	KUNIT_ASSERT_TRUE(test, sock_call_done(&c));
	KUNIT_EXPECT_EQ(test, c.ret, 1);
	KUNIT_EXPECT_TRUE(test, kgo_sock_rd_surely_empty(sk));

	kernel_sock_shutdown(peer, SHUT_WR);
	while (kgo_sock_rd_surely_empty(sk) && time_before(jiffies, end))
		msleep(1);
	KUNIT_EXPECT_FALSE(test, kgo_sock_rd_surely_empty(sk));

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_DGRAM,
					       IPPROTO_UDP, &udp), 0);
	KUNIT_EXPECT_FALSE(test, kgo_sock_rd_surely_empty(udp->sk));
	sock_release(udp);
	sock_release(peer);
	kgo_sock_close(ks);
}

/*
 * An accepted connection that kgo cannot attach (no memory for its
 * state) gets the listener's callbacks back before it is released: a
 * clone of a kgo listener, it carries kgo's, and a lingering TCP socket
 * still takes ICMP errors, after rmmod kgo too.
 *
 * The failure is the kernel's fault injection: failslab fails this
 * thread's next slab allocation that it may fail (fail-nth, which
 * /proc/thread-self/fail-nth sets). By default (failslab's
 * ignore-gfp-wait) those are the allocations that do not reclaim, and
 * on the way through kgo_sock_accept() the one with the caller's
 * GFP_NOWAIT is kgo's; kernel_accept() allocates with GFP_KERNEL. The
 * case still checks where the failure went, and tries a few connections
 * should another allocation of this thread have taken it. The child is
 * taken from the listener's accept queue beforehand, held, and looked
 * at once kgo has released it.
 */
#define ATTACH_FAIL_TRIES	3

/* The connection queued on @lsk, held; NULL if none is in time. */
static struct sock *sock_queued_child(struct sock *lsk)
{
	struct request_sock_queue *q = &inet_csk(lsk)->icsk_accept_queue;
	unsigned long end = jiffies + msecs_to_jiffies(SLOW_MS);
	struct request_sock *req;
	struct sock *child = NULL;

	/* connect() returns before the listener has seen the last ACK. */
	do {
		spin_lock_bh(&q->rskq_lock);
		req = q->rskq_accept_head;
		if (req) {
			child = req->sk;
			sock_hold(child);
		}
		spin_unlock_bh(&q->rskq_lock);
		if (child)
			return child;
		msleep(1);
	} while (time_before(jiffies, end));
	return NULL;
}

static void kgo_sock_accept_attach_fails_test(struct kunit *test)
{
#ifdef CONFIG_FAILSLAB
	struct sockaddr_in addr;
	struct socket *ls = sock_listener(test, &addr), *cs;
	struct sock *lsk = ls->sk, *child;
	/* The listener's own callbacks, before kgo wraps them. */
	void (*data_ready)(struct sock *sk) = lsk->sk_data_ready;
	void (*write_space)(struct sock *sk) = lsk->sk_write_space;
	void (*state_change)(struct sock *sk) = lsk->sk_state_change;
	void (*error_report)(struct sock *sk) = lsk->sk_error_report;
	struct kgo_sock *lks = kgo_sock_attach(ls, GFP_KERNEL), *nks;
	struct {
		void (*data_ready)(struct sock *sk);
		void (*write_space)(struct sock *sk);
		void (*state_change)(struct sock *sk);
		void (*error_report)(struct sock *sk);
		void *user_data;
	} got;
	unsigned int left;
	int tries, r;

	KUNIT_ASSERT_FALSE(test, IS_ERR(lks));
	KUNIT_ASSERT_PTR_NE(test, lsk->sk_data_ready, data_ready);

	for (tries = 1; tries <= ATTACH_FAIL_TRIES; tries++) {
		KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
						       IPPROTO_TCP, &cs), 0);
		KUNIT_ASSERT_EQ(test, kgo_kernel_connect(cs, &addr, sizeof(addr), 0), 0);
		child = sock_queued_child(lsk);
		KUNIT_ASSERT_NOT_NULL(test, child);
		/* A clone of the listener: kgo's callbacks, not yet kgo's state. */
		KUNIT_EXPECT_PTR_EQ(test, child->sk_data_ready, lsk->sk_data_ready);

		nks = NULL;
		current->fail_nth = 1;
		r = kgo_sock_accept(lks, &nks, GFP_NOWAIT | __GFP_NOWARN, KGO_NOWAIT);
		left = current->fail_nth;
		current->fail_nth = 0;
		if (r == 0) {
			/* Another allocation of this thread took the failure. */
			kunit_info(test, "try %d: the failure went elsewhere\n", tries);
			kgo_sock_close(nks);
			sock_put(child);
			sock_release(cs);
			continue;
		}
		break;
	}
	KUNIT_ASSERT_LE(test, tries, ATTACH_FAIL_TRIES);
	KUNIT_EXPECT_EQ(test, r, -ENOMEM);
	KUNIT_EXPECT_NULL(test, nks);
	KUNIT_EXPECT_EQ(test, left, 0U);
	/* Taken off the queue, so kernel_accept() did not fail: the attach did. */
	KUNIT_EXPECT_NULL(test, READ_ONCE(inet_csk(lsk)->icsk_accept_queue.rskq_accept_head));

	/*
	 * Released, and back on the listener's callbacks, not kgo's. Read
	 * under the lock, checked after it: a failed expectation allocates,
	 * which may sleep.
	 */
	read_lock_bh(&child->sk_callback_lock);
	got.data_ready = child->sk_data_ready;
	got.write_space = child->sk_write_space;
	got.state_change = child->sk_state_change;
	got.error_report = child->sk_error_report;
	got.user_data = child->sk_user_data;
	read_unlock_bh(&child->sk_callback_lock);
	KUNIT_EXPECT_PTR_EQ(test, got.data_ready, data_ready);
	KUNIT_EXPECT_PTR_EQ(test, got.write_space, write_space);
	KUNIT_EXPECT_PTR_EQ(test, got.state_change, state_change);
	KUNIT_EXPECT_PTR_EQ(test, got.error_report, error_report);
	KUNIT_EXPECT_NULL(test, got.user_data);

	sock_put(child);
	sock_release(cs);
	kgo_sock_close(lks);
#else
	kunit_skip(test, "no CONFIG_FAILSLAB");
#endif
}

static struct kunit_case kgo_sock_cases[] = {
	KUNIT_CASE(kgo_sock_data_test),
	KUNIT_CASE(kgo_sock_write_space_test),
	KUNIT_CASE(kgo_sock_shutdown_test),
	KUNIT_CASE(kgo_sock_close_parked_test),
	KUNIT_CASE(kgo_sock_timeout_test),
	KUNIT_CASE(kgo_sock_accept_test),
	KUNIT_CASE(kgo_sock_accept_behind_test),
	KUNIT_CASE(kgo_sock_accept_attach_fails_test),
	KUNIT_CASE(kgo_sock_refused_test),
	KUNIT_CASE(kgo_sock_pingpong_test),
	KUNIT_CASE(kgo_sock_preempt_test),
	KUNIT_CASE(kgo_sock_enter_close_test),
	KUNIT_CASE(kgo_sock_module_ref_test),
	KUNIT_CASE(kgo_sock_surely_empty_test),
	{}
};

static struct kunit_suite kgo_sock_suite = {
	.name = "kgo_sock",
	.test_cases = kgo_sock_cases,
};

kunit_test_suites(&kgo_sock_suite);
