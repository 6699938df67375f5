// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user side of a deferred sample, in task context with faults
 * allowed: the walk of current's user stack, by the session's methods, or
 * a dump of its registers and stack.  The frame-pointer walk and the
 * registers are the architecture's (unwind_x86.c, unwind_arm64.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include "perf_defer.h"

/*
 * Walk current's user stack into @ips by the methods of @order (see
 * perf_defer.h); returns the number of entries.  The unwind tables serve
 * 64-bit tasks; compat ones (x86's 32-bit, arm64's AArch32) walk frame
 * pointers.  The time it takes counts in walk_ns.
 */
unsigned int pd_unwind_user(u64 *ips, unsigned int max, unsigned int order)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned int nr;
	u64 abi, t0;

	if (!current->mm || !max)
		return 0;
	abi = pd_user_abi(regs);
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	t0 = local_clock();
	if (abi == PERF_SAMPLE_REGS_ABI_64 && order != PD_UW_METHOD_FP) {
		nr = pd_unwind_user_tables(ips, max, order);
	} else {
		/* the first entry, the IP, is no frame found */
		nr = pd_unwind_user_fp(regs, abi == PERF_SAMPLE_REGS_ABI_32, ips, max);
		this_cpu_add(pd_counters.uw_frames[PD_UW_METHOD_FP], nr - 1);
	}
	this_cpu_add(pd_counters.walk_ns, local_clock() - t0);
	return nr;
}

bool pd_dump_mask_valid(u64 mask)
{
	BUILD_BUG_ON(PD_DUMP_REGS_VALID >> PD_DUMP_REGS);
	return mask && !(mask & ~PD_DUMP_REGS_VALID);
}

/*
 * The largest PERF_DEFER_RECORD_USER_DUMP with @stack_size bytes of
 * stack: every register and a full sample_id (see the uapi header), plus
 * the PERF_RECORD_LOST that may have to go before it.
 */
size_t pd_dump_record_max(u32 stack_size)
{
	/* header, cookie, abi, the regs, size, dyn_size, 6 sample_id words */
	size_t dump = 8 + 8 + 8 + PD_DUMP_REGS * 8 + 8 + 8 + 6 * 8;
	/* header, id, lost, 6 sample_id words */
	size_t lost = 8 + 16 + 6 * 8;

	BUILD_BUG_ON(8 + 8 + 8 + PD_DUMP_REGS * 8 + 8 + 8 + 6 * 8 +
		     PERF_DEFER_DUMP_MAX_STACK != 0xfff8);
	return dump + stack_size + lost;
}

/* The registers of @mask, in bit order; returns how many. */
unsigned int pd_dump_regs(const struct pd_dump *d, u64 mask, u64 *out)
{
	unsigned int bit, n = 0;

	for (bit = 0; bit < PD_DUMP_REGS; bit++)
		if (mask & BIT_ULL(bit))
			out[n++] = *(const unsigned long *)((const u8 *)&d->regs +
							    pd_dump_reg_offset(bit, d->abi));
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
	unsigned long sp, want, left, i;

	pd_dump_free(d);
	d->abi = PERF_SAMPLE_REGS_ABI_NONE;
	if (!current->mm)
		return 0;
	d->abi = pd_user_abi(regs);
	if (d->abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	d->regs = *regs;
	if (!size)
		return 0;

	d->stack = kvmalloc(size, GFP_KERNEL);
	if (!d->stack)
		return -ENOMEM;
	d->size = size;
	sp = user_stack_pointer(regs);
	if (d->abi == PERF_SAMPLE_REGS_ABI_32)
		sp = (u32)sp;
	/*
	 * Not past the top of the address space, as perf clamps its own
	 * dumps: with ASLR off the stack ends right at TASK_SIZE, and a
	 * range that crosses it fails access_ok() as a whole.
	 */
	want = sp < TASK_SIZE ? min_t(unsigned long, size, TASK_SIZE - sp) : 0;
	left = want ? copy_from_user(d->stack, (const void __user *)sp, want) : 0;
	/*
	 * arm64's copy_from_user() may stop some bytes short of the first
	 * one it cannot read (where the stack mapping ends above a 48-bit
	 * stack on a 52-bit kernel, say): take those one at a time, up to
	 * the page boundary where the fault is.
	 */
	for (i = 0; left && i < PAGE_SIZE; i++, left--)
		if (copy_from_user(d->stack + want - left,
				   (const void __user *)(sp + want - left), 1))
			break;
	d->dyn_size = want - left;
	memset(d->stack + d->dyn_size, 0, size - d->dyn_size);
	return 0;
}
