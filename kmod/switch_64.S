/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The goroutine stack switch, after __switch_to_asm: save the
 * callee-saved registers on the old stack, swap %rsp through memory,
 * restore them from the new one. Both sides of every switch are a call
 * to kgo_switch, so objtool's view of the frame holds on both stacks
 * and ORC unwinds through it.
 */

#ifndef CONFIG_X86_64
#error "kgo's stack switch is x86_64 only"
#endif

#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/unwind_hints.h>

#include "compat.h"

	.text

/*
 * struct kgo_g *kgo_switch(unsigned long *save_sp, unsigned long *load_sp,
 *			    struct kgo_g *prev)
 *
 * Called with interrupts disabled. Returns on the stack whose %rsp was
 * at *load_sp, to whoever called kgo_switch there (or to kgo_g_entry on
 * a new goroutine's stack, see kgo_stack_prepare()), with @prev as its
 * value: that side learns who switched to it, as __switch_to_asm's
 * caller learns prev, and finishes what that G could not do on its own
 * stack (kgo_yield_finish()).
 */
SYM_FUNC_START(kgo_switch)
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15

	movq	%rsp, (%rdi)
	movq	(%rsi), %rsp

	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	movq	%rdx, %rax
	RET
SYM_FUNC_END(kgo_switch)

/*
 * The first frame of every goroutine stack, like ret_from_fork for a
 * kernel thread: reached by kgo_switch's return, with the G in %rbx.
 * The hint ends every unwind of a goroutine stack here.
 */
SYM_CODE_START(kgo_g_entry)
	UNWIND_HINT_END_OF_STACK
	ANNOTATE_NOENDBR	/* only ever returned to */
	movq	%rbx, %rdi
	call	kgo_g_main
	/*
	 * kgo_g_main() does not return. Not ud2: objtool (6.12 runs it on
	 * the linked module) knows the call is __noreturn and calls code
	 * after it unreachable; int3 is padding it accepts.
	 */
	int3
SYM_CODE_END(kgo_g_entry)
