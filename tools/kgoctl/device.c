// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kgo: opening it, and reading what the module is and how its
 * scheduler is doing. Failures here end the command: no command can do
 * without these.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/kgo.h>

#include "common.h"
#include "device.h"

int open_dev(void)
{
	int fd = open(KGO_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	int err = errno;

	if (fd >= 0)
		return fd;
	print_errno(err, "open " KGO_DEVICE_PATH);
	if (err == ENOENT)
		fprintf(stderr, "%s: is kgo.ko loaded? (insmod kmod/kgo.ko)\n", prog);
	else if (err == EACCES)
		fprintf(stderr, "%s: " KGO_DEVICE_PATH " is root's only (0600)\n", prog);
	exit(1);
}

/*
 * Zeroed first: a module older than this struct writes back only what it
 * knows, and what it does not know then reads as 0.
 */
void get_info(int fd, struct kgo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(fd, KGO_IOC_GET_INFO, info))
		die_errno("KGO_IOC_GET_INFO");
}

/*
 * Commands that submit work or interpret the module's records refuse a
 * different ABI version: that number is only bumped for changes that
 * the size convention cannot absorb.
 */
void require_abi(int fd, struct kgo_info *info)
{
	get_info(fd, info);
	if (info->abi_version != KGO_ABI_VERSION)
		die("the module speaks ABI %u, this %s ABI %u: rebuild one of them",
		    info->abi_version, prog, KGO_ABI_VERSION);
}

/*
 * Room for 256 Ps covers most machines with one call; should there be
 * more, the call is repeated with room for all, so that the records
 * printed always come from one consistent call.
 */
void get_stats(int fd, struct snapshot *s)
{
	if (!s->procs) {
		s->cap = 256;
		s->procs = xcalloc(s->cap, sizeof(*s->procs));
	}
	for (;;) {
		memset(&s->st, 0, sizeof(s->st));
		memset(s->procs, 0, s->cap * sizeof(*s->procs));
		s->st.size = sizeof(s->st);
		s->st.procs = (uintptr_t)s->procs;
		s->st.procs_max = s->cap;
		s->st.proc_size = sizeof(*s->procs);
		if (ioctl(fd, KGO_IOC_STATS, &s->st)) {
			if (errno == EINTR)
				continue;
			die_errno("KGO_IOC_STATS");
		}
		if (s->st.nr_procs <= s->cap)
			return;
		free(s->procs);
		s->cap = s->st.nr_procs;
		s->procs = xcalloc(s->cap, sizeof(*s->procs));
	}
}

/* The records get_stats() filled: never more than it had room for. */
__u32 nr_records(const struct snapshot *s)
{
	return s->st.nr_procs < s->cap ? s->st.nr_procs : s->cap;
}
