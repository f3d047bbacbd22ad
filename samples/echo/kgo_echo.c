// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_echo: a TCP echo server in the kernel, one goroutine per
 * connection.
 *
 *	insmod kgo_echo.ko port=7007 max_conns=16384
 *
 * Each connection is served by the plainest loop there is, receive then
 * send back, written as if it blocked. It does not hold a thread while
 * it waits: kgo_sock_recv() parks the goroutine and the socket's
 * readiness makes it runnable again (kmod/sock.c). So ten thousand idle
 * connections cost ten thousand goroutine stacks and no kthread each,
 * and the few Ms that run them go from one ready connection to the next.
 *
 * Unloading must not free the module's code under a goroutine still in
 * it. So every goroutine counts itself in @all and ends with
 * kgo_wg_done_and_exit(), which does not come back here, and the exit
 * function wakes them all with kgo_sock_shutdown() and waits on @all.
 */

#include <linux/in.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

#include <kgo.h>
#include "compat.h"

static ushort port = 7007;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port to listen on, every address (default 7007)");

static uint max_conns = 16384;
module_param(max_conns, uint, 0444);
MODULE_PARM_DESC(max_conns, "connections served at once; more are closed at once (default 16384)");

/* What one receive may take; a longer message takes several. */
#define ECHO_BUF	1024

struct echo_conn {
	struct list_head node;		/* on conns, under conns_lock */
	struct kgo_sock *ks;
	char buf[ECHO_BUF];
};

static struct kgo_sock *listener;
/* The acceptor and every connection's goroutine: unloading waits for it. */
static struct kgo_waitgroup all;

/* conns, nconns and stopping. Never held across a kgo call. */
static DEFINE_SPINLOCK(conns_lock);
static LIST_HEAD(conns);
static unsigned int nconns;
static bool stopping;

/*
 * A connection the server itself ended, not its peer: whoever sees the
 * reset on the other side learns why from the log.
 */
static void echo_dropped(const char *what, long err)
{
	pr_warn_ratelimited("dropped a connection: %s: %ld\n", what, err);
}

/*
 * The peer's close (a receive of 0, a reset, a broken pipe, a reset
 * before the accept) or unloading (-ESHUTDOWN) ends a connection as it
 * should: only the rest is news.
 */
static bool echo_peer_ended(long err)
{
	return err >= 0 || err == -ESHUTDOWN || err == -ECONNRESET ||
	       err == -EPIPE || err == -ECONNABORTED;
}

static void echo_forget(struct echo_conn *c)
{
	spin_lock(&conns_lock);
	list_del(&c->node);
	nconns--;
	spin_unlock(&conns_lock);
	kgo_sock_close(c->ks);
	kfree(c);
}

static void echo_serve(void *arg)
{
	struct echo_conn *c = arg;
	ssize_t n;

	/* Until the peer closes, an error, or unloading (-ESHUTDOWN). */
	while ((n = kgo_sock_recv(c->ks, c->buf, ECHO_BUF, KGO_FOREVER)) > 0) {
		ssize_t sent = kgo_sock_send(c->ks, c->buf, n, KGO_FOREVER);

		if (sent != n) {
			if (!echo_peer_ended(sent))
				echo_dropped("send", sent);
			break;
		}
	}
	if (n < 0 && !echo_peer_ended(n))
		echo_dropped("receive", n);
	echo_forget(c);
	kgo_wg_done_and_exit(&all);
}

/* A new connection's goroutine, or the connection closed: no room. */
static void echo_start(struct kgo_sock *ks)
{
	struct echo_conn *c = kmalloc(sizeof(*c), GFP_KERNEL);
	s64 r;

	if (!c) {
		echo_dropped("no memory", -ENOMEM);
		kgo_sock_close(ks);
		return;
	}
	c->ks = ks;
	/* An echo is one small write per request: send it now (Nagle off). */
	tcp_sock_set_nodelay(kgo_sock_socket(ks)->sk);
	spin_lock(&conns_lock);
	if (stopping || nconns >= max_conns) {
		spin_unlock(&conns_lock);
		if (!stopping)
			echo_dropped("max_conns reached", -EMFILE);
		kgo_sock_close(ks);
		kfree(c);
		return;
	}
	list_add(&c->node, &conns);
	nconns++;
	kgo_wg_add(&all, 1);
	spin_unlock(&conns_lock);
	r = kgo_go(echo_serve, c, GFP_KERNEL);
	if (r < 0) {
		echo_dropped("kgo_go", r);
		echo_forget(c);
		kgo_wg_done(&all);
	}
}

static void echo_accept(void *unused)
{
	for (;;) {
		struct kgo_sock *ks;
		int r = kgo_sock_accept(listener, &ks, GFP_KERNEL, KGO_FOREVER);

		if (r == -ESHUTDOWN)
			break;
		if (!r)
			echo_start(ks);
		else if (!echo_peer_ended(r))
			echo_dropped("accept", r);
		if (r == -ENOMEM || r == -ENFILE)
			kgo_sleep(NSEC_PER_MSEC);	/* let memory come back */
		/* Else one connection failed (-ECONNABORTED...), not the server. */
	}
	kgo_wg_done_and_exit(&all);
}

static int __init kgo_echo_init(void)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(port),
	};
	struct socket *sock;
	s64 r;

	r = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (r)
		return r;
	sock_set_reuseaddr(sock->sk);
	r = kgo_kernel_bind(sock, &addr, sizeof(addr));
	if (!r)
		r = kernel_listen(sock, min_t(uint, max_conns, INT_MAX));
	if (r) {
		sock_release(sock);
		return r;
	}
	listener = kgo_sock_attach(sock, GFP_KERNEL);
	if (IS_ERR(listener)) {
		sock_release(sock);
		return PTR_ERR(listener);
	}
	kgo_wg_init(&all);
	kgo_wg_add(&all, 1);
	r = kgo_go(echo_accept, NULL, GFP_KERNEL);
	if (r < 0) {
		kgo_sock_close(listener);
		return r;
	}
	pr_info("listening on port %u\n", port);
	return 0;
}

static void __exit kgo_echo_exit(void)
{
	struct echo_conn *c;

	spin_lock(&conns_lock);
	stopping = true;
	kgo_sock_shutdown(listener);
	list_for_each_entry(c, &conns, node)
		kgo_sock_shutdown(c->ks);
	spin_unlock(&conns_lock);
	kgo_wg_wait(&all);
	kgo_sock_close(listener);
}

module_init(kgo_echo_init);
module_exit(kgo_echo_exit);
MODULE_LICENSE("GPL");
KGO_MODULE_IMPORT();
MODULE_DESCRIPTION("kgo sample: TCP echo server, a goroutine per connection");
