/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KGO_SOCK_H
#define _KGO_SOCK_H

#include <linux/types.h>

struct sock;

/* For KUnit: whether a receive could only say -EAGAIN now (sock.c). */
bool kgo_sock_rd_surely_empty(struct sock *sk);

#endif /* _KGO_SOCK_H */
