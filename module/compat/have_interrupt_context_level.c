// SPDX-License-Identifier: GPL-2.0-only
/* PD_HAVE_INTERRUPT_CONTEXT_LEVEL: interrupt_context_level() (6.2) */
#include <linux/preempt.h>

unsigned char pd_probe(void);
unsigned char pd_probe(void)
{
	return interrupt_context_level();
}
