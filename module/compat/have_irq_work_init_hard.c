// SPDX-License-Identifier: GPL-2.0-only
/* PD_HAVE_IRQ_WORK_INIT_HARD: IRQ_WORK_INIT_HARD() (5.12) */
#include <linux/irq_work.h>

static void pd_probe_fn(struct irq_work *work)
{
}

struct irq_work pd_probe(void);
struct irq_work pd_probe(void)
{
	return IRQ_WORK_INIT_HARD(pd_probe_fn);
}
