/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgo's stack switch, kmod/switch_64.S itself, assembled into this module
 * under names of its own, so that switch_raw times the very instructions
 * kgo runs. kgo exports neither kgo_switch nor kgo_g_entry, and its
 * kgo_g_entry calls kgo's kgo_g_main: the defines give us our own
 * copies, whose entry calls our own main (switch_raw.c).
 */

#define kgo_switch	kgo_bench_switch
#define kgo_g_entry	kgo_bench_g_entry
#define kgo_g_main	kgo_bench_g_main

#include "../../kmod/switch_64.S"
