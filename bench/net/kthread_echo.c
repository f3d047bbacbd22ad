// SPDX-License-Identifier: GPL-2.0
/*
 * kthread_echo.ko: the in-kernel peer of make bench's "net" group, a TCP
 * echo server written the way the kernel has always served connections
 * when it did: a listener kthread, and a kthread per connection that
 * blocks in kernel_recvmsg() and kernel_sendmsg(). It is what kgo's echo
 * sample (a goroutine per connection) is measured against: the same
 * blocking code, each connection costing a task and its stack.
 *
 *   insmod kthread_echo.ko port=P max_conns=N
 *
 * It needs nothing of kgo and is built against the kernel alone.
 *
 * Lifetimes. Every connection is a struct kecho_conn on kecho.conns,
 * and only whoever takes it off that list (under kecho.lock) stops its
 * kthread, with kthread_stop(), which returns once the thread has left
 * this module's code, then releases its socket and frees it. A thread
 * whose peer closed marks itself done, queues kecho.reap and waits to
 * be stopped; the reaper takes done connections off the list. rmmod
 * stops the listener, then shuts every connection's socket down, which
 * wakes a thread blocked in a receive or a send, and stops them all.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "compat.h"	/* kmod/compat.h: kernel_bind() across 6.19 */

#define KECHO_BUF_SIZE	4096

static ushort port = 7007;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port to listen on, all addresses (default 7007)");

static uint max_conns = 4096;
module_param(max_conns, uint, 0444);
MODULE_PARM_DESC(max_conns, "Most connections served at once, each a kthread (1-100000; more are closed at accept)");

struct kecho_conn {
	struct list_head node;		/* on kecho.conns, under kecho.lock */
	struct socket *sock;
	struct task_struct *task;
	bool done;			/* the peer closed: reap me */
	unsigned int id;
};

static struct {
	struct socket *lsock;
	struct task_struct *listener;
	struct mutex lock;		/* conns, nconns */
	struct list_head conns;
	unsigned int nconns;
	unsigned int next_id;		/* listener only */
	unsigned long refused;		/* listener only */
	bool stopping;			/* set once, by rmmod */
	struct work_struct reap;
} kecho;

/* Until kthread_stop(): a thread's last act, whoever stops it. */
static void kecho_wait_stop(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

/* Stops, releases and frees the connections on @list (off kecho.conns). */
static void kecho_free_list(struct list_head *list)
{
	struct kecho_conn *c, *tmp;

	list_for_each_entry_safe(c, tmp, list, node) {
		list_del(&c->node);
		kthread_stop(c->task);
		put_task_struct(c->task);
		sock_release(c->sock);
		kfree(c);
	}
}

static void kecho_reap(struct work_struct *work)
{
	struct kecho_conn *c, *tmp;
	LIST_HEAD(done);

	mutex_lock(&kecho.lock);
	list_for_each_entry_safe(c, tmp, &kecho.conns, node) {
		if (READ_ONCE(c->done)) {
			list_move(&c->node, &done);
			kecho.nconns--;
		}
	}
	mutex_unlock(&kecho.lock);
	kecho_free_list(&done);
}

/* Sends all of @len bytes; 0 or a negative errno. */
static int kecho_send(struct socket *sock, void *buf, size_t len)
{
	while (len) {
		struct kvec iov = { .iov_base = buf, .iov_len = len };
		struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
		int n = kernel_sendmsg(sock, &msg, &iov, 1, len);

		if (n <= 0)
			return n ? n : -EPIPE;
		buf += n;
		len -= n;
	}
	return 0;
}

static int kecho_conn_fn(void *arg)
{
	struct kecho_conn *c = arg;
	void *buf = kmalloc(KECHO_BUF_SIZE, GFP_KERNEL);

	while (buf && !kthread_should_stop()) {
		struct kvec iov = { .iov_base = buf, .iov_len = KECHO_BUF_SIZE };
		struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
		int n = kernel_recvmsg(c->sock, &msg, &iov, 1, KECHO_BUF_SIZE, 0);

		/* 0: the peer closed, or rmmod shut the socket down. */
		if (n <= 0 || kecho_send(c->sock, buf, n))
			break;
	}
	kfree(buf);
	/* A connection with nothing to read or write is over: reap it. */
	kernel_sock_shutdown(c->sock, SHUT_RDWR);
	WRITE_ONCE(c->done, true);
	schedule_work(&kecho.reap);
	kecho_wait_stop();
	return 0;
}

/* Serves @sock on a kthread of its own, or closes it. */
static void kecho_start(struct socket *sock)
{
	struct kecho_conn *c;

	mutex_lock(&kecho.lock);
	if (kecho.nconns >= max_conns) {
		mutex_unlock(&kecho.lock);
		if (!kecho.refused++)
			pr_warn("max_conns=%u reached: closing new connections\n",
				max_conns);
		sock_release(sock);
		return;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		goto fail;
	c->sock = sock;
	c->id = kecho.next_id++;
	c->task = kthread_create(kecho_conn_fn, c, "kecho/%u", c->id);
	if (IS_ERR(c->task))
		goto fail;
	get_task_struct(c->task);	/* for kthread_stop() after it ran */
	list_add_tail(&c->node, &kecho.conns);
	kecho.nconns++;
	mutex_unlock(&kecho.lock);
	tcp_sock_set_nodelay(sock->sk);
	wake_up_process(c->task);
	return;
fail:
	mutex_unlock(&kecho.lock);
	kfree(c);
	sock_release(sock);
}

static int kecho_listen_fn(void *unused)
{
	while (!kthread_should_stop()) {
		struct socket *sock;
		int err = kernel_accept(kecho.lsock, &sock, 0);

		if (READ_ONCE(kecho.stopping)) {
			if (!err)
				sock_release(sock);
			break;
		}
		if (err == -ENOMEM || err == -ENFILE || err == -EMFILE)
			schedule_timeout_interruptible(HZ / 100);
		if (err)
			continue;
		kecho_start(sock);
	}
	kecho_wait_stop();
	return 0;
}

static int __init kecho_init(void)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int err;

	if (!port || !max_conns || max_conns > 100000) {
		pr_err("port=%u max_conns=%u: port must be set, max_conns 1 to 100000\n",
		       port, max_conns);
		return -EINVAL;
	}
	mutex_init(&kecho.lock);
	INIT_LIST_HEAD(&kecho.conns);
	INIT_WORK(&kecho.reap, kecho_reap);

	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP,
			       &kecho.lsock);
	if (err)
		return err;
	sock_set_reuseaddr(kecho.lsock->sk);
	err = kgo_kernel_bind(kecho.lsock, &sa, sizeof(sa));
	if (!err)
		err = kernel_listen(kecho.lsock, 4096);
	if (err) {
		pr_err("listening on port %u: %d\n", port, err);
		goto out_sock;
	}
	kecho.listener = kthread_run(kecho_listen_fn, NULL, "kecho-listen");
	if (IS_ERR(kecho.listener)) {
		err = PTR_ERR(kecho.listener);
		goto out_sock;
	}
	get_task_struct(kecho.listener);
	pr_info("listening on port %u, at most %u connections\n", port, max_conns);
	return 0;

out_sock:
	sock_release(kecho.lsock);
	return err;
}

static void __exit kecho_exit(void)
{
	struct kecho_conn *c;
	LIST_HEAD(all);

	/* No more connections: wake the listener out of its accept. */
	WRITE_ONCE(kecho.stopping, true);
	kernel_sock_shutdown(kecho.lsock, SHUT_RDWR);
	kthread_stop(kecho.listener);
	put_task_struct(kecho.listener);

	/* Every receive and send returns; each thread waits to be stopped. */
	mutex_lock(&kecho.lock);
	list_for_each_entry(c, &kecho.conns, node)
		kernel_sock_shutdown(c->sock, SHUT_RDWR);
	list_splice_init(&kecho.conns, &all);
	kecho.nconns = 0;
	mutex_unlock(&kecho.lock);
	kecho_free_list(&all);

	/* A reap queued by the last threads finds the list empty. */
	cancel_work_sync(&kecho.reap);
	sock_release(kecho.lsock);
	pr_info("stopped (%lu connection(s) refused over max_conns)\n",
		kecho.refused);
}

module_init(kecho_init);
module_exit(kecho_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("TCP echo server, a kthread per connection: kgo's echo sample's peer in make bench");
