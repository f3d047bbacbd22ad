// SPDX-License-Identifier: GPL-2.0
/*
 * Who may open /dev/kgo (the writable parameters disabled and group),
 * and what one user may take over all its fds (max_user_inflight,
 * max_user_goroutines). Each test puts the parameters and the device's
 * mode back in its teardown, whatever happened.
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

#define PARAMS		"/sys/module/kgo/parameters/"
#define NOBODY		65534
#define TEST_GID	4242

static long read_param(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Returns 0, or the errno of the write. */
static int write_param(const char *name, long v)
{
	char path[128], buf[32];
	int fd, n, err = 0;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	n = snprintf(buf, sizeof(buf), "%ld", v);
	if (write(fd, buf, n) != n)
		err = errno;
	close(fd);
	return err;
}

FIXTURE(access) {
	long disabled, group, inflight, goroutines;
	mode_t mode;
};

FIXTURE_SETUP(access)
{
	struct stat st;

	ASSERT_EQ(0, stat(KGO_DEVICE_PATH, &st));
	self->mode = st.st_mode & 07777;
	self->disabled = read_param("disabled");
	self->group = read_param("group");
	self->inflight = read_param("max_user_inflight");
	self->goroutines = read_param("max_user_goroutines");
	ASSERT_EQ(0, self->disabled);
	ASSERT_LT(0, self->inflight);
	ASSERT_LT(0, self->goroutines);
}

FIXTURE_TEARDOWN(access)
{
	write_param("disabled", self->disabled);
	write_param("group", self->group);
	write_param("max_user_inflight", self->inflight);
	write_param("max_user_goroutines", self->goroutines);
	chmod(KGO_DEVICE_PATH, self->mode);
}

/* In a child that is nobody (with TEST_GID among its groups if asked): open's errno. */
static int open_as_nobody(bool in_group)
{
	gid_t groups[] = { TEST_GID };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd;

		if (setgroups(in_group ? 1 : 0, groups) || setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		fd = open(KGO_DEVICE_PATH, O_RDWR);
		_exit(fd < 0 ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The parent's half of a child's user namespace set-up: once the child
 * says it has unshared, write its uid map (and gid map, if @gid_map),
 * let it go on, and return its exit status (-1 if it did not exit).
 */
static int userns_child_status(pid_t pid, int go[2], int ready[2],
			       const char *uid_map, const char *gid_map)
{
	char path[64], c = 0;
	int status;

	close(go[0]);
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
		write_str(path, uid_map);
		if (gid_map) {
			snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
			write_str(path, gid_map);
		}
		if (write(go[1], &c, 1) != 1)
			c = 1;
	}
	close(go[1]);
	close(ready[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * A child that ends up nobody outside (uid and gid NOBODY, no other
 * group) in a user namespace of its own where nobody's gid is called
 * TEST_GID: what any user can arrange where user namespaces are open to
 * all. Root, the parent, writes the child's maps, so that this works
 * where they are not. Return: the child's open() errno, 0 if it got in;
 * 101 without user namespaces; above 101 if the set-up failed.
 */
static int open_as_nobody_in_userns(void)
{
	char uid_map[32], gid_map[32], c = 0;
	int go[2], ready[2];
	pid_t pid;

	if (pipe(go) || pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd;

		close(go[1]);
		close(ready[0]);
		if (unshare(CLONE_NEWUSER))
			_exit(101);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(102);
		if (setgroups(0, NULL) || setresgid(TEST_GID, TEST_GID, TEST_GID) ||
		    setresuid(0, 0, 0))
			_exit(103);
		if (getegid() != TEST_GID)
			_exit(104);
		fd = open(KGO_DEVICE_PATH, O_RDWR);
		_exit(fd < 0 ? errno : 0);
	}
	snprintf(uid_map, sizeof(uid_map), "0 %d 1", NOBODY);
	snprintf(gid_map, sizeof(gid_map), "%d %d 1", TEST_GID, NOBODY);
	return userns_child_status(pid, go, ready, uid_map, gid_map);
}

TEST_F(access, disabled_values)
{
	EXPECT_EQ(EINVAL, write_param("disabled", 3));
	EXPECT_EQ(EINVAL, write_param("disabled", -1));
	EXPECT_EQ(0, read_param("disabled"));
}

/* 2: nobody opens, root included; an fd already open keeps working. */
TEST_F(access, disabled_closes_the_door)
{
	struct kgo_task t = { .kind = KGO_TASK_NOP, .tag = 7 };
	struct kgo_completion c;
	int fd = open(KGO_DEVICE_PATH, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_param("disabled", 2));
	EXPECT_EQ(-1, open(KGO_DEVICE_PATH, O_RDWR));
	EXPECT_EQ(EPERM, errno);
	ASSERT_EQ(1, submit(fd, &t, 1));
	ASSERT_EQ(sizeof(c), read(fd, &c, sizeof(c)));
	EXPECT_EQ(7, c.tag);
	EXPECT_EQ(0, c.status);
	close(fd);
	ASSERT_EQ(0, write_param("disabled", 0));
	fd = open(KGO_DEVICE_PATH, O_RDWR);
	EXPECT_LE(0, fd);
	close(fd);
}

/* 1: CAP_SYS_ADMIN, or members of the group; the device's mode still applies. */
TEST_F(access, disabled_admin_or_group)
{
	int fd;

	ASSERT_EQ(0, chmod(KGO_DEVICE_PATH, 0666));
	EXPECT_EQ(0, open_as_nobody(false));	/* the mode lets everyone in */
	ASSERT_EQ(0, write_param("disabled", 1));
	ASSERT_EQ(0, write_param("group", -1));
	fd = open(KGO_DEVICE_PATH, O_RDWR);	/* root */
	EXPECT_LE(0, fd);
	close(fd);
	EXPECT_EQ(EPERM, open_as_nobody(true));
	ASSERT_EQ(0, write_param("group", TEST_GID));
	EXPECT_EQ(0, open_as_nobody(true));
	EXPECT_EQ(EPERM, open_as_nobody(false));
	/* The mode comes first: without it, the group does not help. */
	ASSERT_EQ(0, chmod(KGO_DEVICE_PATH, 0600));
	EXPECT_EQ(EACCES, open_as_nobody(true));
}

/*
 * The group is a gid of the initial user namespace: one's own namespace
 * that calls one's gid the group's does not make one a member.
 */
TEST_F(access, group_not_from_a_user_namespace)
{
	int r;

	ASSERT_EQ(0, chmod(KGO_DEVICE_PATH, 0666));
	ASSERT_EQ(0, write_param("disabled", 1));
	ASSERT_EQ(0, write_param("group", TEST_GID));
	r = open_as_nobody_in_userns();
	if (r == 101)
		SKIP(return, "no user namespaces (CONFIG_USER_NS)");
	EXPECT_EQ(EPERM, r);
}

/* max_user_inflight counts every fd of the user, and frees as completions are read. */
TEST_F(access, user_inflight_cap)
{
	struct kgo_task t[6] = {};
	struct kgo_completion c[8];
	int a = open(KGO_DEVICE_PATH, O_RDWR), b = open(KGO_DEVICE_PATH, O_RDWR);
	int n;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	for (int i = 0; i < 6; i++)
		t[i].kind = KGO_TASK_NOP;
	ASSERT_EQ(0, write_param("max_user_inflight", 8));
	EXPECT_EQ(6, submit(a, t, 6));
	EXPECT_EQ(2, submit(b, t, 6));	/* the user's cap, not b's */
	EXPECT_EQ(-1, submit(b, t, 1));
	EXPECT_EQ(EAGAIN, errno);
	/* Reading frees in-flight slots: for either fd. */
	n = 0;
	while (n < 6) {
		ssize_t r = read(a, c, sizeof(c));

		ASSERT_LT(0, r);
		n += r / sizeof(c[0]);
	}
	EXPECT_EQ(6, submit(b, t, 6));
	close(a);
	close(b);
}

/*
 * max_user_goroutines bounds a SPAWN chain (each node waits for its
 * child): it stops with -EAGAIN, at no more nodes than the cap.
 */
TEST_F(access, user_goroutine_cap)
{
	struct kgo_task t = { .kind = KGO_TASK_SPAWN, .args = { 1, 1000 } };
	struct kgo_completion c;
	int fd = open(KGO_DEVICE_PATH, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_param("max_user_goroutines", 16));
	ASSERT_EQ(1, submit(fd, &t, 1));
	ASSERT_EQ(sizeof(c), read(fd, &c, sizeof(c)));
	TH_LOG("the chain stopped at %llu nodes: %s", (unsigned long long)c.result,
	       strerror(-c.status));
	EXPECT_EQ(-EAGAIN, c.status);
	EXPECT_LE(2, c.result);
	EXPECT_GE(16, c.result);
	close(fd);
}

/*
 * STATS: a caller without CAP_SYS_ADMIN sees its own figures only
 * (KGO_STATS_OWN): not root's sleeping goroutine, no per-P records, no
 * latencies; root sees the scheduler's. In the child: 0 if the view was
 * its own, else which check failed.
 */
static int stats_as_nobody(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		struct kgo_proc_stats ps[4];
		struct kgo_stats st = {
			.size = sizeof(st), .procs = (uintptr_t)ps, .procs_max = 4,
			.proc_size = sizeof(ps[0]),
		};
		int fd, i;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		fd = open(KGO_DEVICE_PATH, O_RDWR);
		if (fd < 0)
			_exit(101);
		if (ioctl(fd, KGO_IOC_STATS, &st))
			_exit(102);
		if (st.flags != KGO_STATS_OWN)
			_exit(1);
		if (st.goroutines || st.nr_procs || st.nr_ms || st.created_outside)
			_exit(2);
		for (i = 0; i < KGO_LATENCY_BUCKETS; i++)
			if (st.latency[i])
				_exit(3);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(access, stats_own_view)
{
	struct kgo_task t = { .kind = KGO_TASK_SLEEP, .args = { 2000000000ULL } };
	struct kgo_stats st = { .size = sizeof(st) };
	int fd = open(KGO_DEVICE_PATH, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, chmod(KGO_DEVICE_PATH, 0666));
	ASSERT_EQ(1, submit(fd, &t, 1));	/* root's goroutine, asleep */
	ASSERT_EQ(0, ioctl(fd, KGO_IOC_STATS, &st));
	EXPECT_EQ(0, st.flags);
	EXPECT_LT(0, st.nr_procs);
	EXPECT_LE(1, st.goroutines);
	EXPECT_EQ(0, stats_as_nobody());
	close(fd);
}

/*
 * The per-user caps charge a user namespace's maker, not the kuids in
 * it: nobody makes a namespace where ids 0 and 1 are two kuids of a
 * subordinate range (root writes the map, as newuidmap would), and as
 * 0 then 1 submits sleeps: with max_user_inflight 2, the third is
 * refused whichever id submits it. In the child: 0 if it was refused
 * with EAGAIN, 1 if it was accepted, 101 without user namespaces,
 * above 101 if the set-up failed.
 */
static int inflight_as_two_ids_in_userns(void)
{
	struct kgo_task t[2] = {
		{ .kind = KGO_TASK_SLEEP, .args = { 2000000000ULL } },
		{ .kind = KGO_TASK_SLEEP, .args = { 2000000000ULL } },
	};
	int go[2], ready[2];
	char c = 0;
	pid_t pid;

	if (pipe(go) || pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		int a, b;

		close(go[1]);
		close(ready[0]);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(105);
		if (unshare(CLONE_NEWUSER))
			_exit(101);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(102);
		if (setresuid(0, 0, 0))
			_exit(103);
		a = open(KGO_DEVICE_PATH, O_RDWR);
		if (a < 0 || submit(a, t, 2) != 2)
			_exit(104);
		if (setresuid(1, 1, 1))
			_exit(106);
		b = open(KGO_DEVICE_PATH, O_RDWR);
		if (b < 0)
			_exit(107);
		if (submit(b, t, 1) == 1)
			_exit(1);
		_exit(errno == EAGAIN ? 0 : 108);
	}
	return userns_child_status(pid, go, ready, "0 200000 2", NULL);
}

TEST_F(access, user_caps_charge_the_namespace_owner)
{
	int r;

	ASSERT_EQ(0, chmod(KGO_DEVICE_PATH, 0666));
	ASSERT_EQ(0, write_param("max_user_inflight", 2));
	r = inflight_as_two_ids_in_userns();
	if (r == 101)
		SKIP(return, "no user namespaces (CONFIG_USER_NS)");
	EXPECT_EQ(0, r);
}

TEST_HARNESS_MAIN
