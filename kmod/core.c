// SPDX-License-Identifier: GPL-2.0
/*
 * The switch and the M's loop, compiled as one unit, as the kernel builds
 * kernel/sched/ in build_policy.c and build_utility.c.
 *
 * Every switch to a G goes through kgo_execute() (switch.c), and its one
 * caller is kgo_schedule()'s loop (sched.c). Seen together, the compiler
 * inlines it there, as it did while both lived in one file: built apart,
 * each switch pays a call, a return and the saving of the loop's
 * callee-saved registers twice over, once for each stack. The files stay
 * apart in the tree, each one concept, and tools/callgraph.py still
 * checks that sched.c is the only one that calls down into the other.
 */
#include "switch.c"
#include "sched.c"
