// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user side of a deferred sample, in task context with faults
 * allowed: the frame-pointer walk, or a dump of registers and stack.
 *
 * The user frame-pointer walk, by
 * the rules of the kernel's own unwinder (kernel/unwind/user.c, 6.19):
 * start at task_pt_regs(current); each frame's return address is one word
 * above the saved frame pointer; stop on a fault, on fp < sp, on a CFA
 * that does not move up, or on a CFA that is not word aligned.  Compat
 * (32-bit) tasks have 4-byte words.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/slab.h>
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

/*
 * Walk current's user stack into @ips by the methods of @order (see
 * perf_defer.h); returns the number of entries.
 */
unsigned int pd_unwind_user(u64 *ips, unsigned int max, unsigned int order)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long ip, fp, sp, cfa, ra, next_fp;
	unsigned int ws, nr = 0;

	if (!current->mm || !max || !user_mode(regs) ||
	    (regs->flags & X86_VM_MASK))
		return 0;

	ws = user_64bit_mode(regs) ? sizeof(u64) : sizeof(u32);
	if (ws == sizeof(u64) && order != PD_UW_METHOD_FP)
		return pd_unwind_user_tables(ips, max, order);
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
	this_cpu_add(pd_counters.uw_frames[PD_UW_METHOD_FP], nr - 1);
	return nr;
}

/*
 * Where each register of a sample_regs_user mask sits in struct pt_regs,
 * by bit number (the x86 perf_regs order); DS, ES, FS and GS are not
 * saved on x86-64 and are never in a valid mask.
 */
#define PD_REG(name)	offsetof(struct pt_regs, name)
static const unsigned short pd_reg_offset[] = {
	PD_REG(ax), PD_REG(bx), PD_REG(cx), PD_REG(dx),
	PD_REG(si), PD_REG(di), PD_REG(bp), PD_REG(sp),
	PD_REG(ip), PD_REG(flags), PD_REG(cs), PD_REG(ss),
	0, 0, 0, 0,
	PD_REG(r8), PD_REG(r9), PD_REG(r10), PD_REG(r11),
	PD_REG(r12), PD_REG(r13), PD_REG(r14), PD_REG(r15),
};

bool pd_dump_mask_valid(u64 mask)
{
	BUILD_BUG_ON(ARRAY_SIZE(pd_reg_offset) != 24);
	BUILD_BUG_ON(PERF_DEFER_DUMP_REGS_VALID >> ARRAY_SIZE(pd_reg_offset));
	return mask && !(mask & ~PERF_DEFER_DUMP_REGS_VALID);
}

/*
 * The largest PERF_DEFER_RECORD_USER_DUMP with @stack_size bytes of
 * stack: 24 registers and a full sample_id (see the uapi header), plus
 * the PERF_RECORD_LOST that may have to go before it.
 */
size_t pd_dump_record_max(u32 stack_size)
{
	/* header, cookie, abi, 24 regs, size, dyn_size, 6 sample_id words */
	size_t dump = 8 + 8 + 8 + 24 * 8 + 8 + 8 + 6 * 8;
	/* header, id, lost, 6 sample_id words */
	size_t lost = 8 + 16 + 6 * 8;

	BUILD_BUG_ON(8 + 8 + 8 + 24 * 8 + 8 + 8 + 6 * 8 + PERF_DEFER_DUMP_MAX_STACK != 0xfff8);
	return dump + stack_size + lost;
}

/* The registers of @mask, in bit order; returns how many. */
unsigned int pd_dump_regs(const struct pd_dump *d, u64 mask, u64 *out)
{
	unsigned int bit, n = 0;

	for (bit = 0; bit < ARRAY_SIZE(pd_reg_offset); bit++)
		if (mask & BIT_ULL(bit))
			out[n++] = *(const unsigned long *)((const u8 *)&d->regs +
							    pd_reg_offset[bit]);
	return n;
}

void pd_dump_free(struct pd_dump *d)
{
	kvfree(d->stack);
	d->stack = NULL;
	d->size = 0;
	d->dyn_size = 0;
}

/*
 * Take current's user registers (task_pt_regs) and @size bytes of its
 * stack from the user SP up.  Faults are allowed, so pages that are not
 * present are brought in; the copy comes out short only where the stack
 * mapping ends or a page cannot be read.  Called again with a larger
 * @size, it takes everything anew.  0 or -ENOMEM.
 */
int pd_dump_user(struct pd_dump *d, u32 size)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long sp, want, left;

	pd_dump_free(d);
	d->abi = PERF_SAMPLE_REGS_ABI_NONE;
	if (!current->mm || !user_mode(regs) || (regs->flags & X86_VM_MASK))
		return 0;
	d->regs = *regs;
	d->abi = user_64bit_mode(regs) ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_32;
	if (!size)
		return 0;

	d->stack = kvmalloc(size, GFP_KERNEL);
	if (!d->stack)
		return -ENOMEM;
	d->size = size;
	sp = regs->sp;
	if (d->abi == PERF_SAMPLE_REGS_ABI_32)
		sp = (u32)sp;
	/*
	 * Not past the top of the address space, as perf clamps its own
	 * dumps: with ASLR off the stack ends right at TASK_SIZE, and a
	 * range that crosses it fails access_ok() as a whole.
	 */
	want = sp < TASK_SIZE ? min_t(unsigned long, size, TASK_SIZE - sp) : 0;
	left = want ? copy_from_user(d->stack, (const void __user *)sp, want) : 0;
	d->dyn_size = want - left;
	memset(d->stack + d->dyn_size, 0, size - d->dyn_size);
	return 0;
}
