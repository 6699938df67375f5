// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one way the table parsers (uw_ehframe.c, uw_sframe.c) and the walk
 * (unwind_table.c) read the task's memory: copy_from_user(), counted
 * against the unwind's byte budget.  On its own so that the parsers,
 * built for user space by tests/host with a reader of their own, call
 * nothing back in the walk.
 *
 * Most reads are of one 4- or 8-byte field (a search table's entry, a
 * saved register): those take get_user(), which spares them the
 * hardened-usercopy check that copy_from_user() makes of its kernel
 * buffer on every call of a size not known at build time.
 */
#include <linux/string.h>
#include <linux/uaccess.h>

#include "perf_defer.h"
#include "uwtab.h"

int pd_uw_read(struct pd_uw_reader *rd, void *dst, unsigned long addr, size_t len)
{
	unsigned long word;
	u32 v32;
	int ret;

	if (len == sizeof(word)) {
		ret = pd_uw_read_word(rd, &word, addr);
		if (!ret)
			memcpy(dst, &word, sizeof(word));
		return ret;
	}
	if (len > rd->budget)
		return -E2BIG;
	rd->budget -= len;
	switch (len) {
	case sizeof(v32):
		if (get_user(v32, (const u32 __user *)addr))
			return -EFAULT;
		memcpy(dst, &v32, sizeof(v32));
		return 0;
	}
	if (copy_from_user(dst, (const void __user *)addr, len))
		return -EFAULT;
	return 0;
}
