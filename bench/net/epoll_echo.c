// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_echo: the C peer of make bench's "net" group, a TCP echo server
 * as event-driven servers are written: one thread per CPU, each with
 * its own epoll set and nonblocking sockets, every byte read written
 * straight back.
 *
 *   epoll_echo [-port P] [-threads T]
 *
 * Each thread has a listening socket of its own on the same port
 * (SO_REUSEPORT) rather than all sharing one: the kernel then spreads
 * new connections over the threads by hash, with no accept lock or
 * thundering herd between them, and a connection stays on the thread
 * that accepted it; this is how nginx and its kind scale accept.
 *
 * A connection costs a small struct and nothing more while it keeps up:
 * data is read into the thread's buffer and written back at once. Only
 * what a full send buffer refused is kept (in a buffer of its own), and
 * the connection reads nothing more until that is written, so that a
 * client that does not read cannot make the server buffer without end.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE	65536
#define NR_EVENTS	256

struct conn {
	int fd;
	unsigned int len, done;	/* bytes of pend kept, and written since */
	char *pend;		/* what the socket refused, or NULL */
};

static unsigned int port = 7007;

static int listener(void)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 4096)) {
		fprintf(stderr, "epoll_echo: listen on port %u: %s\n", port,
			strerror(errno));
		exit(1);
	}
	return fd;
}

static void conn_close(struct conn *c)
{
	close(c->fd);	/* which takes it out of the epoll set */
	free(c->pend);
	free(c);
}

static void conn_watch(int epfd, struct conn *c, bool out)
{
	struct epoll_event ev = {
		.events = out ? EPOLLOUT : EPOLLIN,
		.data.ptr = c,
	};

	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes @len bytes of @buf; keeps what the socket refused. 0 or -1. */
static int conn_send(int epfd, struct conn *c, const char *buf, unsigned int len)
{
	unsigned int off = 0;

	while (off < len) {
		ssize_t n = write(c->fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0)
			return -1;
		off += n;
	}
	if (off == len)
		return 0;
	c->pend = malloc(len - off);
	if (!c->pend)
		return -1;
	memcpy(c->pend, buf + off, len - off);
	c->len = len - off;
	c->done = 0;
	conn_watch(epfd, c, true);
	return 0;
}

/* EPOLLOUT: more of what was kept; reading again once it is all out. */
static int conn_flush(int epfd, struct conn *c)
{
	while (c->done < c->len) {
		ssize_t n = write(c->fd, c->pend + c->done, c->len - c->done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -1;
		c->done += n;
	}
	free(c->pend);
	c->pend = NULL;
	conn_watch(epfd, c, false);
	return 0;
}

static void accept_all(int epfd, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN };
		struct conn *c;
		int one = 1;

		if (fd < 0) {
			/* EAGAIN: none left; EMFILE and such: try later. */
			if (errno != EAGAIN && errno != ECONNABORTED && errno != EINTR)
				fprintf(stderr, "epoll_echo: accept: %s\n", strerror(errno));
			if (errno == ECONNABORTED || errno == EINTR)
				continue;
			return;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		ev.data.ptr = c;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
			free(c);
			close(fd);
		}
	}
}

static void *serve(void *unused)
{
	struct epoll_event evs[NR_EVENTS], ev = { .events = EPOLLIN };
	int epfd = epoll_create1(EPOLL_CLOEXEC), lfd = listener();
	char *buf = malloc(BUF_SIZE);

	(void)unused;
	ev.data.ptr = NULL;	/* the listener */
	if (epfd < 0 || !buf || epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev)) {
		fprintf(stderr, "epoll_echo: setup: %s\n", strerror(errno));
		exit(1);
	}
	for (;;) {
		int n = epoll_wait(epfd, evs, NR_EVENTS, -1);

		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t r;

			if (!c) {
				accept_all(epfd, lfd);
				continue;
			}
			if (c->pend) {
				if (conn_flush(epfd, c))
					conn_close(c);
				continue;
			}
			r = read(c->fd, buf, BUF_SIZE);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0 || conn_send(epfd, c, buf, r))
				conn_close(c);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = sysconf(_SC_NPROCESSORS_ONLN);
	struct rlimit rl = { 1 << 20, 1 << 20 };
	pthread_t t;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-port") && i + 1 < argc) {
			port = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-threads") && i + 1 < argc) {
			threads = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: epoll_echo [-port P] [-threads T]\n");
			return 2;
		}
	}
	if (port < 1 || port > 65535 || threads < 1 || threads > 1024) {
		fprintf(stderr, "epoll_echo: bad -port or -threads\n");
		return 2;
	}
	/* A connection is an fd: as many as the kernel allows (root). */
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (long i = 1; i < threads; i++)
		if (pthread_create(&t, NULL, serve, NULL)) {
			fprintf(stderr, "epoll_echo: pthread_create failed\n");
			return 1;
		}
	serve(NULL);
	return 0;
}
