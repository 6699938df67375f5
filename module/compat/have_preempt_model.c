// SPDX-License-Identifier: GPL-2.0-only
/* PD_HAVE_PREEMPT_MODEL: preempt_model_preemptible() (5.19) */
#include <linux/sched.h>

bool pd_probe(void);
bool pd_probe(void)
{
	return preempt_model_preemptible();
}
