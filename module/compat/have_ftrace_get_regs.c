// SPDX-License-Identifier: GPL-2.0-only
/* PD_HAVE_FTRACE_GET_REGS: ftrace callbacks take ftrace_regs, ftrace_get_regs() (5.11) */
#include <linux/ftrace.h>

struct pt_regs *pd_probe(struct ftrace_regs *fregs);
struct pt_regs *pd_probe(struct ftrace_regs *fregs)
{
	return ftrace_get_regs(fregs);
}
