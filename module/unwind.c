// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user frame-pointer walk, in task context with faults allowed, by
 * the rules of the kernel's own unwinder (kernel/unwind/user.c, 6.19):
 * start at task_pt_regs(current); each frame's return address is one word
 * above the saved frame pointer; stop on a fault, on fp < sp, on a CFA
 * that does not move up, or on a CFA that is not word aligned.  Compat
 * (32-bit) tasks have 4-byte words.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include "perf_defer.h"

static int pd_get_user_word(unsigned long *val, unsigned long addr,
			    unsigned int ws)
{
	if (ws == sizeof(u32)) {
		u32 v;

		if (get_user(v, (const u32 __user *)addr))
			return -EFAULT;
		*val = v;
		return 0;
	}
	return get_user(*val, (const unsigned long __user *)addr);
}

/* Walk current's user stack into @ips; returns the number of entries. */
unsigned int pd_unwind_user(u64 *ips, unsigned int max)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long ip, fp, sp, cfa, ra, next_fp;
	unsigned int ws, nr = 0;

	if (!current->mm || !max || !user_mode(regs) ||
	    (regs->flags & X86_VM_MASK))
		return 0;

	ws = user_64bit_mode(regs) ? sizeof(u64) : sizeof(u32);
	ip = regs->ip;
	fp = regs->bp;
	sp = regs->sp;
	if (ws == sizeof(u32)) {
		ip = (u32)ip;
		fp = (u32)fp;
		sp = (u32)sp;
	}

	for (;;) {
		ips[nr++] = ip;
		if (nr >= max)
			break;
		if (fp < sp)
			break;
		cfa = fp + 2 * ws;
		if (cfa <= sp || (cfa & (ws - 1)))
			break;
		if (pd_get_user_word(&ra, cfa - ws, ws) ||
		    pd_get_user_word(&next_fp, cfa - 2 * ws, ws))
			break;
		ip = ra;
		sp = cfa;
		fp = next_fp;
	}
	return nr;
}
