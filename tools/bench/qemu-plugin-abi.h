/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of QEMU's TCG plugin ABI, version 1 (QEMU 7.2's), that
 * insncount.c uses. Debian ships no header for it; these declarations
 * follow QEMU's documentation of the ABI. QEMU refuses a plugin whose
 * qemu_plugin_version it does not support.
 */
#ifndef KGO_QEMU_PLUGIN_ABI_H
#define KGO_QEMU_PLUGIN_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;

enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb,
				    void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

#endif /* KGO_QEMU_PLUGIN_ABI_H */
