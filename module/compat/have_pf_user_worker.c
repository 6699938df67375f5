// SPDX-License-Identifier: GPL-2.0-only
/* PD_HAVE_PF_USER_WORKER: PF_USER_WORKER marks vhost and other user workers (6.4) */
#include <linux/sched.h>

unsigned int pd_probe(void);
unsigned int pd_probe(void)
{
	return PF_USER_WORKER;
}
