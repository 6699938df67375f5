// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm64's side of the user walk (unwind.c): which tasks have a user stack
 * to walk, the frame-record walk, and where perf_regs' registers sit in
 * pt_regs.
 *
 * The walk is perf's own arm64 perf_callchain_user() (perf_callchain.c;
 * arch_stack_walk_user() in stacktrace.c from 6.11 on), so that a
 * deferred chain equals the one perf takes in the interrupt wherever that
 * one can read the stack: the PC first; then, from the frame record that
 * x29 points to, each record's saved x30 with its pointer-authentication
 * code stripped, while the record's address is non-NULL and 8-byte
 * aligned, until a record fails to point above itself.  The leaf's own
 * x30 is not used: a function that has not stored its frame record yet
 * loses its caller, as it does in perf's walk.
 *
 * AArch32 (compat) tasks follow perf's compat walk: the APCS frame
 * {fp, sp, lr} that sits just below the address in r11, return addresses
 * as they are (no PAC there).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <asm/pointer_auth.h>
#include <asm/ptrace.h>

#include "perf_defer.h"

/* A return address without its PAC, as perf strips it */
unsigned long pd_strip_pac(unsigned long lr)
{
#ifdef PD_HAVE_PTRAUTH_STRIP_USER_INSN_PAC
	return ptrauth_strip_user_insn_pac(lr);
#else
	return ptrauth_strip_insn_pac(lr);
#endif
}

/* 64- or 32-bit user mode; none for kernel mode */
u64 pd_user_abi(struct pt_regs *regs)
{
	if (!user_mode(regs))
		return PERF_SAMPLE_REGS_ABI_NONE;
	return compat_user_mode(regs) ? PERF_SAMPLE_REGS_ABI_32 : PERF_SAMPLE_REGS_ABI_64;
}

/* AArch32's frame below r11: fp, sp, lr (struct compat_frame_tail) */
#define PD_COMPAT_TAIL	12

static unsigned int pd_unwind_compat(struct pt_regs *regs, u64 *ips, unsigned int max)
{
	unsigned long tail = regs->compat_fp - PD_COMPAT_TAIL, fp, lr;
	unsigned int nr = 0;

	ips[nr++] = regs->pc;
	while (nr < max && tail && !(tail & 0x3)) {
		if (pd_get_user_word(&fp, tail, sizeof(u32)) ||
		    pd_get_user_word(&lr, tail + 2 * sizeof(u32), sizeof(u32)))
			break;
		ips[nr++] = lr;
		if (tail + PD_COMPAT_TAIL >= fp)
			break;
		tail = fp - PD_COMPAT_TAIL;
	}
	return nr;
}

unsigned int pd_unwind_user_fp(struct pt_regs *regs, bool compat, u64 *ips, unsigned int max)
{
	unsigned long tail = regs->regs[29], fp, lr;
	unsigned int nr = 0;

	if (compat)
		return pd_unwind_compat(regs, ips, max);
	ips[nr++] = regs->pc;
	while (nr < max && tail && !(tail & 0x7)) {
		if (pd_get_user_word(&fp, tail, sizeof(u64)) ||
		    pd_get_user_word(&lr, tail + sizeof(u64), sizeof(u64)))
			break;
		ips[nr++] = pd_strip_pac(lr);
		if (tail >= fp)
			break;
		tail = fp;
	}
	return nr;
}

/*
 * Where each register of a sample_regs_user mask sits in struct pt_regs,
 * by bit number (arm64's perf_regs order: X0 ... X28, X29, LR, SP, PC) of
 * a 64-bit task.
 */
#define PD_REG(r)	offsetof(struct pt_regs, r)
static const unsigned short pd_reg_offset[PD_DUMP_REGS] = {
	PD_REG(regs[0]), PD_REG(regs[1]), PD_REG(regs[2]), PD_REG(regs[3]),
	PD_REG(regs[4]), PD_REG(regs[5]), PD_REG(regs[6]), PD_REG(regs[7]),
	PD_REG(regs[8]), PD_REG(regs[9]), PD_REG(regs[10]), PD_REG(regs[11]),
	PD_REG(regs[12]), PD_REG(regs[13]), PD_REG(regs[14]), PD_REG(regs[15]),
	PD_REG(regs[16]), PD_REG(regs[17]), PD_REG(regs[18]), PD_REG(regs[19]),
	PD_REG(regs[20]), PD_REG(regs[21]), PD_REG(regs[22]), PD_REG(regs[23]),
	PD_REG(regs[24]), PD_REG(regs[25]), PD_REG(regs[26]), PD_REG(regs[27]),
	PD_REG(regs[28]), PD_REG(regs[29]), PD_REG(regs[30]), PD_REG(sp), PD_REG(pc),
};

/*
 * An AArch32 task's SP and LR are its r13 and r14, and bit 15 its PC, as
 * perf_reg_value() gives them
 */
unsigned int pd_dump_reg_offset(unsigned int bit, u64 abi)
{
	if (abi == PERF_SAMPLE_REGS_ABI_32) {
		if (bit == PERF_REG_ARM64_SP)
			return PD_REG(compat_sp);
		if (bit == PERF_REG_ARM64_LR)
			return PD_REG(compat_lr);
		if (bit == 15)
			return PD_REG(pc);
	}
	return pd_reg_offset[bit];
}
