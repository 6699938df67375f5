// SPDX-License-Identifier: GPL-2.0-only
/* PD_HAVE_VM_FLAGS_SET: vm_flags is read-only, changed by vm_flags_*() (6.3) */
#include <linux/mm.h>

void pd_probe(struct vm_area_struct *vma);
void pd_probe(struct vm_area_struct *vma)
{
	vm_flags_clear(vma, VM_MAYEXEC);
}
