// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86-64's side of the user walk (unwind.c): which tasks have a user
 * stack to walk, the frame-pointer walk, and where perf_regs' registers
 * sit in pt_regs.
 *
 * The walk follows the kernel's own unwinder (kernel/unwind/user.c,
 * 6.19): start at task_pt_regs(current); each frame's return address is
 * one word above the saved frame pointer; stop on a fault, on fp < sp, on
 * a CFA that does not move up, or on a CFA that is not word aligned.
 * Compat (32-bit) tasks have 4-byte words.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/perf_event.h>
#include <asm/ptrace.h>

#include "perf_defer.h"

/* 64- or 32-bit user mode; none for kernel mode and vm86 */
u64 pd_user_abi(struct pt_regs *regs)
{
	if (!user_mode(regs) || (regs->flags & X86_VM_MASK))
		return PERF_SAMPLE_REGS_ABI_NONE;
	return user_64bit_mode(regs) ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_32;
}

unsigned int pd_unwind_user_fp(struct pt_regs *regs, bool compat, u64 *ips, unsigned int max)
{
	unsigned int ws = compat ? sizeof(u32) : sizeof(u64), nr = 0;
	unsigned long ip, fp, sp, cfa, ra, next_fp;

	ip = regs->ip;
	fp = regs->bp;
	sp = regs->sp;
	if (compat) {
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

/*
 * Where each register of a sample_regs_user mask sits in struct pt_regs,
 * by bit number (the x86 perf_regs order); DS, ES, FS and GS are not
 * saved on x86-64 and are never in a valid mask.
 */
#define PD_REG(name)	offsetof(struct pt_regs, name)
static const unsigned short pd_reg_offset[PD_DUMP_REGS] = {
	PD_REG(ax), PD_REG(bx), PD_REG(cx), PD_REG(dx),
	PD_REG(si), PD_REG(di), PD_REG(bp), PD_REG(sp),
	PD_REG(ip), PD_REG(flags), PD_REG(cs), PD_REG(ss),
	0, 0, 0, 0,
	PD_REG(r8), PD_REG(r9), PD_REG(r10), PD_REG(r11),
	PD_REG(r12), PD_REG(r13), PD_REG(r14), PD_REG(r15),
};

/* compat tasks have theirs where 64-bit tasks do */
unsigned int pd_dump_reg_offset(unsigned int bit, u64 abi)
{
	return pd_reg_offset[bit];
}
