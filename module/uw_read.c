// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one way the table parsers (uw_ehframe.c, uw_sframe.c) and the walk
 * (unwind_table.c) read the task's memory: copy_from_user(), counted
 * against the unwind's byte budget.  On its own so that the parsers,
 * built for user space by tests/host with a reader of their own, call
 * nothing back in the walk.
 */
#include <linux/uaccess.h>

#include "perf_defer.h"
#include "uwtab.h"

int pd_uw_read(struct pd_uw_reader *rd, void *dst, unsigned long addr, size_t len)
{
	if (len > rd->budget)
		return -E2BIG;
	rd->budget -= len;
	if (copy_from_user(dst, (const void __user *)addr, len))
		return -EFAULT;
	return 0;
}
