/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What older kernels lack, by the probes of compat/config.h (never by
 * version numbers): each stand-in does what the newer kernel's does.
 */
#ifndef _PD_COMPAT_H
#define _PD_COMPAT_H

#include <linux/irq_work.h>
#include <linux/preempt.h>
#include <linux/sched.h>

#include "config.h"

/* An irq_work run in hard interrupt context, on PREEMPT_RT too. */
static inline void pd_init_irq_work_hard(struct irq_work *work, void (*func)(struct irq_work *))
{
#ifdef PD_HAVE_IRQ_WORK_INIT_HARD
	*work = IRQ_WORK_INIT_HARD(func);
#else
	init_irq_work(work, func);
	atomic_set(&work->flags, IRQ_WORK_HARD_IRQ);
#endif
}

#ifndef PD_HAVE_PREEMPT_MODEL
/*
 * Before the preemption model could change at boot (PREEMPT_DYNAMIC),
 * it was the build's; a kernel with PREEMPT_DYNAMIC but not this
 * helper is taken as preemptible, which only makes unload wait longer.
 */
static inline bool preempt_model_preemptible(void)
{
	return IS_ENABLED(CONFIG_PREEMPTION) || IS_ENABLED(CONFIG_PREEMPT_DYNAMIC);
}
#endif

#endif /* _PD_COMPAT_H */
