// SPDX-License-Identifier: GPL-2.0
/*
 * The crc32c sample (samples/crc32c, kgo_crc32c.ko): the CRC32C of a
 * file as its goroutines, its thread and its workqueue compute it is
 * the one userspace computes, for an empty file, one byte, a size that
 * is not a multiple of the chunk and a few MiB of random bytes, at
 * several chunk sizes; bad requests (no such file, a directory, a
 * device, a FIFO, a file over max_file_mb, a bad chunk size) fail with
 * their errno and leave the module working; no goroutine outlives a
 * request.
 *
 * Loads the module from $KGO_CRC32C_MODULE (default
 * /kgo/kgo_crc32c.ko) and unloads it at the end; skips without it.
 * Needs kgo loaded. The sample uses the kernel's crc32c() (libcrc32c):
 * a kernel that has it as a module needs it loaded first (modprobe
 * libcrc32c); the test VMs, which have no modprobe, list such modules
 * in /kgo/deps/order, which the test loads in that order.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>
#include "kgo_util.h"
#include "kselftest_harness.h"

#define DEFAULT_MODULE	"/kgo/kgo_crc32c.ko"
#define DEPS_DIR	"/kgo/deps"
#define DEBUGFS		"/sys/kernel/debug"
#define CRC_DIR		DEBUGFS "/kgo_crc32c"
#define CONTROL		CRC_DIR "/control"
#define RESULT		CRC_DIR "/result"
#define MAX_FILE_MB	"/sys/module/kgo_crc32c/parameters/max_file_mb"
#define CHUNK		(64 * 1024)	/* the module's default chunk_kb */
#define NMETHODS	3

static const char *const methods[NMETHODS] = { "kgo", "thread", "workqueue" };

/* CRC32C, Castagnoli: reflected 0x82F63B78, init ~0, final xor ~0. */
static uint32_t crc32c(const unsigned char *p, size_t len)
{
	static uint32_t table[256];
	uint32_t crc = ~0u;

	if (!table[1]) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = (c >> 1) ^ (0x82F63B78u & -(c & 1));
			table[i] = c;
		}
	}
	while (len--)
		crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xff];
	return ~crc;
}

/* finit_module(@path): 0 or an errno. */
static int load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret, err;

	if (fd < 0)
		return errno;
	ret = syscall(SYS_finit_module, fd, "", 0);
	err = errno;
	close(fd);
	return ret ? err : 0;
}

/* The kernel modules that /kgo/deps/order lists: loaded, or already. */
static int load_deps(void)
{
	FILE *f = fopen(DEPS_DIR "/order", "r");
	char name[128], path[256];
	int err = 0;

	if (!f)
		return 0;
	while (!err && fscanf(f, "%127s", name) == 1) {
		snprintf(path, sizeof(path), DEPS_DIR "/%s", name);
		err = load(path);
		if (err == EEXIST)
			err = 0;
		if (err)
			fprintf(stderr, "# loading %s: %s\n", path, strerror(err));
	}
	fclose(f);
	return err;
}

static bool have_debugfs(void)
{
	struct statfs sf;

	if (!statfs(DEBUGFS, &sf) && sf.f_type == DEBUGFS_MAGIC)
		return true;
	return !mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
}

/* Writes @len bytes of @data to @path. */
static int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return errno;
	n = len ? write(fd, data, len) : 0;
	close(fd);
	return n == (ssize_t)len ? 0 : EIO;
}

struct result {
	char method[16];
	uint32_t crc;
	unsigned long long ns, bytes;
	unsigned int chunks;
};

/* The result file's lines, up to NMETHODS; how many parsed. */
static int read_results(struct result *r)
{
	FILE *f = fopen(RESULT, "r");
	int n = 0;

	if (!f)
		return -1;
	while (n < NMETHODS &&
	       fscanf(f, "%15s crc=0x%x ns=%llu bytes=%llu chunks=%u\n", r[n].method,
		      &r[n].crc, &r[n].ns, &r[n].bytes, &r[n].chunks) == 5)
		n++;
	fclose(f);
	return n;
}

FIXTURE(crc32c) {
	const char *skip;
	bool loaded;
	long long goroutines;	/* alive before, from kgo's debugfs */
};

FIXTURE_SETUP(crc32c)
{
	const char *path = getenv("KGO_CRC32C_MODULE") ?: DEFAULT_MODULE;
	int err;

	/* The 6.1 harness runs the test after a SKIP in setup: say it there. */
	if (access(path, R_OK)) {
		self->skip = "no kgo_crc32c.ko (set KGO_CRC32C_MODULE)";
		return;
	}
	if (!have_debugfs()) {
		self->skip = "no debugfs";
		return;
	}
	ASSERT_EQ(0, access("/dev/kgo", F_OK)) TH_LOG("kgo is not loaded");
	ASSERT_EQ(0, load_deps());
	self->goroutines = goroutines_alive();
	err = load(path);
	ASSERT_EQ(0, err) TH_LOG("finit_module %s: %s (libcrc32c not loaded?)", path,
				 strerror(err));
	self->loaded = true;
}

FIXTURE_TEARDOWN(crc32c)
{
	uint64_t deadline = now_ns() + 10 * NSEC;
	int ret;

	if (!self->loaded)
		return;
	while ((ret = syscall(SYS_delete_module, "kgo_crc32c", O_NONBLOCK)) &&
	       (errno == EBUSY || errno == EAGAIN) && now_ns() < deadline)
		usleep(10000);
	EXPECT_EQ(0, ret) TH_LOG("delete_module kgo_crc32c: %s", strerror(errno));
}

/* Asks for @path's CRC32C (with @chunk, or the default if NULL). */
static int request(const char *path, const char *chunk)
{
	char line[512];

	snprintf(line, sizeof(line), "%s%s%s\n", path, chunk ? " " : "", chunk ?: "");
	return write_str(CONTROL, line);
}

/* Checks that every method found @expect over @len bytes in @chunk-byte chunks. */
static void check_results(struct __test_metadata *_metadata, uint32_t expect,
			  size_t len, size_t chunk)
{
	struct result r[NMETHODS];

	ASSERT_EQ(NMETHODS, read_results(r));
	for (int i = 0; i < NMETHODS; i++) {
		EXPECT_STREQ(methods[i], r[i].method);
		EXPECT_EQ(expect, r[i].crc) {
			TH_LOG("%s: crc 0x%08x, not 0x%08x (%zu bytes, chunk %zu)",
			       r[i].method, r[i].crc, expect, len, chunk);
		}
		EXPECT_EQ(len, r[i].bytes);
		EXPECT_EQ((len + chunk - 1) / chunk, r[i].chunks);
	}
	if (len >= 1 << 20)	/* shown, not judged: TCG's times mean little */
		TH_LOG("ns: %s %llu, %s %llu, %s %llu", r[0].method, r[0].ns,
		       r[1].method, r[1].ns, r[2].method, r[2].ns);
}

TEST_F_TIMEOUT(crc32c, matches_userspace, 300)
{
	static const struct {
		const char *name;
		size_t len;
		const char *chunk;	/* NULL: the module's default */
		size_t chunk_bytes;
	} cases[] = {
		{ "empty", 0, NULL, CHUNK },
		{ "one byte", 1, NULL, CHUNK },
		{ "3 chunks and a bit", 3 * CHUNK + 1000, NULL, CHUNK },
		{ "4 MiB and a bit", (4 << 20) + 17, NULL, CHUNK },
		{ "4 MiB, 4K chunks", (4 << 20) + 17, "4K", 4096 },
		{ "4 MiB, 1M chunks", (4 << 20) + 17, "1M", 1 << 20 },
		{ "4 MiB, one chunk", (4 << 20) + 17, "16M", 16 << 20 },
		{ "3 pages, 12345-byte chunks", 3 * 4096, "12345", 12345 },
	};
	const char *path = "/tmp/kgo_crc32c.data";
	unsigned char *data;
	int err;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	data = malloc((4 << 20) + 17);
	ASSERT_NE(NULL, data);
	fill_for_tag(data, (4 << 20) + 17, 0xc5c32);
	/* A known answer first: the table is the Castagnoli CRC. */
	ASSERT_EQ(0xe3069283u, crc32c((const unsigned char *)"123456789", 9));

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint32_t expect = crc32c(data, cases[i].len);

		TH_LOG("%s: %zu bytes, expect 0x%08x", cases[i].name, cases[i].len, expect);
		ASSERT_EQ(0, write_file(path, data, cases[i].len));
		err = request(path, cases[i].chunk);
		ASSERT_EQ(0, err) TH_LOG("%s: %s", cases[i].name, strerror(err));
		check_results(_metadata, expect, cases[i].len, cases[i].chunk_bytes);
	}
	unlink(path);
	free(data);
}

TEST_F_TIMEOUT(crc32c, bad_requests, 120)
{
	static const struct {
		const char *line;
		int err;
	} bad[] = {
		{ "/nonexistent/kgo_crc32c\n", ENOENT },
		{ "/tmp\n", EISDIR },
		{ "/dev/null\n", EINVAL },
		{ "/tmp/kgo_crc32c.fifo\n", EINVAL },	/* and not a wait for a writer */
		{ "\n", EINVAL },
		{ "/tmp/kgo_crc32c.small 1\n", EINVAL },	/* under 4K */
		{ "/tmp/kgo_crc32c.small 32M\n", EINVAL },	/* over 16M */
		{ "/tmp/kgo_crc32c.small 64Kx\n", EINVAL },
		{ "/tmp/kgo_crc32c.small x\n", EINVAL },
	};
	const char *small = "/tmp/kgo_crc32c.small", *big = "/tmp/kgo_crc32c.big";
	size_t big_len = (2 << 20) + 1;
	unsigned char *data;
	struct result r[NMETHODS];
	int err;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	data = calloc(1, big_len);
	ASSERT_NE(NULL, data);
	ASSERT_EQ(0, write_file(small, "kgo", 3));
	unlink("/tmp/kgo_crc32c.fifo");
	ASSERT_EQ(0, mkfifo("/tmp/kgo_crc32c.fifo", 0600));
	ASSERT_EQ(0, write_file(big, data, big_len));

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		/* A good request first, whose results the bad one must clear. */
		ASSERT_EQ(0, write_str(CONTROL, "/tmp/kgo_crc32c.small\n"));
		err = write_str(CONTROL, bad[i].line);
		EXPECT_EQ(bad[i].err, err) {
			TH_LOG("\"%.*s\": %s, not %s", (int)strcspn(bad[i].line, "\n"),
			       bad[i].line, strerror(err), strerror(bad[i].err));
		}
		EXPECT_EQ(0, read_results(r));
	}

	/* Over max_file_mb: EFBIG; then the same file within the bound works. */
	ASSERT_EQ(0, write_str(MAX_FILE_MB, "2"));
	EXPECT_EQ(EFBIG, write_str(CONTROL, "/tmp/kgo_crc32c.big\n"));
	EXPECT_EQ(0, read_results(r));
	ASSERT_EQ(0, write_str(MAX_FILE_MB, "3"));
	err = write_str(CONTROL, "/tmp/kgo_crc32c.big\n");
	EXPECT_EQ(0, err) TH_LOG("after max_file_mb=3: %s", strerror(err));
	check_results(_metadata, crc32c(data, big_len), big_len, CHUNK);
	ASSERT_EQ(0, write_str(MAX_FILE_MB, "256"));

	/* Still working, with the right answer. */
	ASSERT_EQ(0, write_str(CONTROL, "/tmp/kgo_crc32c.small\n"));
	check_results(_metadata, crc32c((const unsigned char *)"kgo", 3), 3, CHUNK);
	unlink(small);
	unlink(big);
	unlink("/tmp/kgo_crc32c.fifo");
	free(data);
}

/* Every request's goroutines end: as many alive as before (kgo's debugfs). */
TEST_F_TIMEOUT(crc32c, no_goroutine_left, 120)
{
	static unsigned char data[16 * 4096];
	long long n = -1;
	uint64_t deadline;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	if (self->goroutines < 0)
		SKIP(return, "no /sys/kernel/debug/kgo/sched");
	/* 16 goroutines a request. */
	ASSERT_EQ(0, write_file("/tmp/kgo_crc32c.data", data, sizeof(data)));
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, request("/tmp/kgo_crc32c.data", "4K"));
	check_results(_metadata, crc32c(data, sizeof(data)), sizeof(data), 4096);
	EXPECT_EQ(ENOENT, write_str(CONTROL, "/nonexistent\n"));
	unlink("/tmp/kgo_crc32c.data");
	/* A goroutine is counted until it has switched away for the last time. */
	deadline = now_ns() + 5 * NSEC;
	while ((n = goroutines_alive()) != self->goroutines && now_ns() < deadline)
		usleep(10000);
	EXPECT_EQ(self->goroutines, n);
}

TEST_HARNESS_MAIN
