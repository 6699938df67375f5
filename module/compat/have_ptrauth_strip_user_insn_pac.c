// SPDX-License-Identifier: GPL-2.0-only
/*
 * PD_HAVE_PTRAUTH_STRIP_USER_INSN_PAC: arm64 strips a user return
 * address's PAC with ptrauth_strip_user_insn_pac() (6.5), not
 * ptrauth_strip_insn_pac()
 */
#include <linux/sched.h>
#include <asm/pointer_auth.h>

unsigned long pd_probe(unsigned long lr);
unsigned long pd_probe(unsigned long lr)
{
	return ptrauth_strip_user_insn_pac(lr);
}
