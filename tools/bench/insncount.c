// SPDX-License-Identifier: GPL-2.0
/*
 * insncount: a QEMU TCG plugin that counts the guest kernel's executed
 * instructions per translation block, for `KGO_PROFILE_INSN=1 make
 * profile` (tools/bench/profile.sh).
 *
 * Why: perf's cpu-clock samples are timer interrupts, so the time a
 * path spends with interrupts off lands where it turns them on again,
 * and kgo's switch path runs with them off. An emulator can count
 * every instruction instead, exactly, without changing the guest's
 * execution (the count is an inline add in the translated code, not a
 * guest instruction, so -icount's clock does not see it).
 *
 * Each translation of a block at a kernel address (top bit set) gets a
 * record with an inline 64-bit add of 1 per execution. At exit, the
 * records are written to the file named by the plugin's "out="
 * argument, a line each: start address, instructions in the block and
 * executions, in hex. A block translated more than once has a line per
 * translation; the report (tools/bench/insn-report) sums them. The
 * counter is not atomic, as QEMU's inline adds are not: run it with one
 * vCPU (as -icount does) or read the figures as approximate.
 *
 * QEMU installs plugins through a small C ABI: qemu-plugin-abi.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-abi.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/* --- The counts -------------------------------------------------------- */

/*
 * One per translation, never freed while QEMU runs: the translated code
 * holds a pointer to count. Chunks of them, so that translating a block
 * (which QEMU serialises) costs no malloc most of the time.
 */
struct block {
	uint64_t vaddr;
	uint64_t count;
	uint32_t ninsns;
};

#define CHUNK 65536

struct chunk {
	struct chunk *next;
	size_t used;
	struct block b[CHUNK];
};

static struct chunk *chunks;
static char *out;

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	if (!(vaddr >> 63))	/* user space: not ours to count */
		return;
	if (!chunks || chunks->used == CHUNK) {
		struct chunk *c = calloc(1, sizeof(*c));

		if (!c)
			return;	/* the block goes uncounted; the report says less */
		c->next = chunks;
		chunks = c;
	}
	b = &chunks->b[chunks->used++];
	b->vaddr = vaddr;
	b->ninsns = qemu_plugin_tb_n_insns(tb);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->count, 1);
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	struct chunk *c;
	FILE *f = fopen(out, "w");
	size_t i;

	if (!f) {
		perror(out);
		return;
	}
	for (c = chunks; c; c = c->next)
		for (i = 0; i < c->used; i++)
			if (c->b[i].count)
				fprintf(f, "%" PRIx64 " %" PRIx32 " %" PRIx64 "\n",
					c->b[i].vaddr, c->b[i].ninsns, c->b[i].count);
	if (fclose(f))
		perror(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	if (!out || !*out) {
		fprintf(stderr, "insncount: needs out=FILE\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
