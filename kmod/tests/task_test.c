// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_task: descriptor validation, the catalogue's arithmetic, and a
 * task run inline on user memory.
 */

#include <kunit/test.h>

#include <linux/kgo.h>
#include "task.h"
#include "tests/user_mem.h"

struct validate_case {
	const char *name;
	struct kgo_task t;
	int want;
};

#define T(k, a0, a1, a2) { .kind = (k), .args = { (a0), (a1), (a2) } }

static const struct validate_case validate_cases[] = {
	{ "nop", T(KGO_TASK_NOP, 0, 0, 0), 0 },
	{ "nop with an arg", T(KGO_TASK_NOP, 1, 0, 0), -EINVAL },
	{ "nop inline", { .kind = KGO_TASK_NOP, .flags = KGO_TASK_F_INLINE }, 0 },
	{ "nop flag 2", { .kind = KGO_TASK_NOP, .flags = 2 }, -EINVAL },
	{ "checksum inline", { .kind = KGO_TASK_CHECKSUM, .flags = KGO_TASK_F_INLINE,
			       .args = { 4096, KGO_CHECKSUM_MAX_LEN } }, 0 },
	{ "checksum inline over max", { .kind = KGO_TASK_CHECKSUM, .flags = KGO_TASK_F_INLINE,
					.args = { 4096, KGO_CHECKSUM_MAX_LEN + 1 } }, -E2BIG },
	{ "spin inline", { .kind = KGO_TASK_SPIN, .flags = KGO_TASK_F_INLINE,
			   .args = { 1 } }, -EINVAL },
	{ "block inline", { .kind = KGO_TASK_BLOCK, .flags = KGO_TASK_F_INLINE,
			    .args = { 1 } }, -EINVAL },
	{ "unknown kind 0", T(0, 0, 0, 0), -EINVAL },
	{ "unknown kind 99", T(99, 0, 0, 0), -EINVAL },
	{ "spin max", T(KGO_TASK_SPIN, KGO_SPIN_MAX_NS, 0, 0), 0 },
	{ "spin over max", T(KGO_TASK_SPIN, KGO_SPIN_MAX_NS + 1, 0, 0), -EINVAL },
	{ "spin unused arg", T(KGO_TASK_SPIN, 1, 0, 1), -EINVAL },
	{ "yield max", T(KGO_TASK_YIELD, KGO_YIELD_MAX, 0, 0), 0 },
	{ "yield over max", T(KGO_TASK_YIELD, KGO_YIELD_MAX + 1, 0, 0), -EINVAL },
	{ "spawn 2x16", T(KGO_TASK_SPAWN, 2, 16, 0), 0 },
	{ "spawn 2x17", T(KGO_TASK_SPAWN, 2, 17, 0), -E2BIG },
	{ "spawn fanout 0", T(KGO_TASK_SPAWN, 0, 1, 0), -EINVAL },
	{ "spawn fanout over max", T(KGO_TASK_SPAWN, KGO_SPAWN_MAX_FANOUT + 1, 1, 0), -EINVAL },
	{ "spawn huge depth", T(KGO_TASK_SPAWN, 64, ~0ULL, 0), -E2BIG },
	{ "checksum max", T(KGO_TASK_CHECKSUM, 0x1000, KGO_CHECKSUM_MAX_LEN, 0), 0 },
	{ "checksum over max", T(KGO_TASK_CHECKSUM, 0x1000, KGO_CHECKSUM_MAX_LEN + 1, 0), -E2BIG },
	{ "checksum unused arg", T(KGO_TASK_CHECKSUM, 0x1000, 1, 1), -EINVAL },
	{ "sleep max", T(KGO_TASK_SLEEP, KGO_SLEEP_MAX_NS, 0, 0), 0 },
	{ "sleep over max", T(KGO_TASK_SLEEP, KGO_SLEEP_MAX_NS + 1, 0, 0), -EINVAL },
	{ "pingpong max", T(KGO_TASK_PINGPONG, KGO_PINGPONG_MAX, 0, 0), 0 },
	{ "pingpong over max", T(KGO_TASK_PINGPONG, KGO_PINGPONG_MAX + 1, 0, 0), -EINVAL },
	{ "select", T(KGO_TASK_SELECT, 10, KGO_SELECT_GAP_MAX_NS, 0), 0 },
	{ "select gap over max", T(KGO_TASK_SELECT, 10, KGO_SELECT_GAP_MAX_NS + 1, 0), -EINVAL },
	{ "select unused arg", T(KGO_TASK_SELECT, 10, 1, 1), -EINVAL },
	{ "block max", T(KGO_TASK_BLOCK, KGO_BLOCK_MAX_US, 0, 0), 0 },
	{ "block over max", T(KGO_TASK_BLOCK, KGO_BLOCK_MAX_US + 1, 0, 0), -EINVAL },
	{ "block unused arg", T(KGO_TASK_BLOCK, 10, 1, 0), -EINVAL },
	{ "pingpong hog max", T(KGO_TASK_PINGPONG_HOG, KGO_PINGPONG_HOG_MAX_NS,
				KGO_PINGPONG_HOG_MAX_LOOP, 0), 0 },
	{ "pingpong hog 0 ns", T(KGO_TASK_PINGPONG_HOG, 0, 1, 0), -EINVAL },
	{ "pingpong hog over max ns", T(KGO_TASK_PINGPONG_HOG, KGO_PINGPONG_HOG_MAX_NS + 1,
					1, 0), -EINVAL },
	{ "pingpong hog loop 0", T(KGO_TASK_PINGPONG_HOG, 1, 0, 0), -EINVAL },
	{ "pingpong hog loop over max", T(KGO_TASK_PINGPONG_HOG, 1,
					  KGO_PINGPONG_HOG_MAX_LOOP + 1, 0), -EINVAL },
	{ "pingpong hog unused arg", T(KGO_TASK_PINGPONG_HOG, 1, 1, 1), -EINVAL },
};

static void validate_desc(const struct validate_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(validate, validate_cases, validate_desc);

static void kgo_task_validate_test(struct kunit *test)
{
	const struct validate_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, kgo_task_validate(&c->t), c->want);
}

static void kgo_task_flags_reserved_test(struct kunit *test)
{
	struct kgo_task t = T(KGO_TASK_NOP, 0, 0, 0);

	t.flags = 2;	/* one the module lacks */
	KUNIT_EXPECT_EQ(test, kgo_task_validate(&t), -EINVAL);
	t.flags = ~KGO_TASK_FLAGS;
	KUNIT_EXPECT_EQ(test, kgo_task_validate(&t), -EINVAL);
	t.flags = 0;
	t.__reserved = 1;
	KUNIT_EXPECT_EQ(test, kgo_task_validate(&t), -EINVAL);
}

static void kgo_task_spawn_nodes_test(struct kunit *test)
{
	const u64 max = KGO_SPAWN_MAX_NODES;

	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(2, 0, max), 1ULL);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(2, 1, max), 3ULL);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(3, 3, max), 40ULL);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(1, 1000, max), 1001ULL);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(2, 16, max), (1ULL << 17) - 1);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(2, 17, max), max + 1);
	KUNIT_EXPECT_EQ(test, kgo_spawn_nodes(64, ~0ULL, max), max + 1);
}

static void kgo_task_checksum_test(struct kunit *test)
{
	/* The CRC32C check value (RFC 3720 uses the same CRC). */
	KUNIT_EXPECT_EQ(test, kgo_task_checksum("123456789", 9), 0xe3069283u);
	KUNIT_EXPECT_EQ(test, kgo_task_checksum("", 0), 0u);
}

struct inline_call {
	u64 len;
	u64 result;
};

static long inline_call(unsigned long uaddr, void *arg)
{
	struct inline_call *a = arg;
	struct kgo_task t = {
		.kind = KGO_TASK_CHECKSUM,
		.flags = KGO_TASK_F_INLINE,
		.args = { uaddr, a->len },
	};

	return kgo_task_run_inline(&t, &a->result);
}

/*
 * CHECKSUM run inline reads user memory in chunks: the CRC is the one
 * over the whole buffer at every length around a chunk, and a buffer
 * that faults is -EFAULT.
 */
static void kgo_task_run_inline_test(struct kunit *test)
{
	static const u64 lens[] = { 0, 1, 255, 256, 257, 511, 513, PAGE_SIZE };
	u8 *buf = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct kgo_task nop = { .kind = KGO_TASK_NOP, .flags = KGO_TASK_F_INLINE };
	struct inline_call a;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < PAGE_SIZE; i++)
		buf[i] = i * 7 + (i >> 8);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		a = (struct inline_call){ .len = lens[i], .result = ~0ULL };
		KUNIT_EXPECT_EQ(test, kgo_test_user_call(inline_call, &a, buf, PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ_MSG(test, a.result, (u64)kgo_task_checksum(buf, lens[i]),
				    "length %llu", lens[i]);
	}
	/* Address 0: nothing mapped there. */
	a = (struct inline_call){ .len = 64 };
	KUNIT_EXPECT_EQ(test, kgo_test_user_call(inline_call, &a, NULL, 0), -EFAULT);
	a.result = ~0ULL;
	KUNIT_EXPECT_EQ(test, kgo_task_run_inline(&nop, &a.result), 0);
	KUNIT_EXPECT_EQ(test, a.result, 0ULL);
}

static int kgo_task_suite_init(struct kunit_suite *suite)
{
	return kgo_test_user_mem_init();
}

static void kgo_task_suite_exit(struct kunit_suite *suite)
{
	kgo_test_user_mem_exit();
}

static struct kunit_case kgo_task_cases[] = {
	KUNIT_CASE_PARAM(kgo_task_validate_test, validate_gen_params),
	KUNIT_CASE(kgo_task_flags_reserved_test),
	KUNIT_CASE(kgo_task_spawn_nodes_test),
	KUNIT_CASE(kgo_task_checksum_test),
	KUNIT_CASE(kgo_task_run_inline_test),
	{}
};

static struct kunit_suite kgo_task_suite = {
	.name = "kgo_task",
	.suite_init = kgo_task_suite_init,
	.suite_exit = kgo_task_suite_exit,
	.test_cases = kgo_task_cases,
};

kunit_test_suite(kgo_task_suite);
