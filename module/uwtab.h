/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unwind tables of user objects: .eh_frame (through .eh_frame_hdr) and
 * SFrame.  The tables are the task's own memory, so untrusted: every
 * byte comes through pd_uw_read(), which bounds what one unwind may read,
 * and every loop of the parsers has a bound of its own.  A table that is
 * malformed, or uses something the parser does not know, gives an error,
 * never a guess.
 *
 * The parsers (uw_ehframe.c, uw_sframe.c) need nothing else from the
 * kernel, so that tests/host builds them in user space too, against
 * tests/host/uw_shim.h, and checks them against binutils' own reading of
 * real objects.
 *
 * Addresses are the task's: a table's encoded PC-relative and
 * data-relative values are resolved against where the table is mapped,
 * so the rows come out in run-time addresses and no load bias is needed.
 */
#ifndef PD_UWTAB_H
#define PD_UWTAB_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#else
#include "uw_shim.h"
#endif

/*
 * The architecture the tables describe: the kernel's own, and in
 * tests/host the host's unless PD_UW_ARM64 asks for AArch64's.
 */
#if defined(__KERNEL__) && defined(CONFIG_ARM64)
#define PD_UW_ARM64	1
#endif

#ifdef PD_UW_ARM64
/* DWARF register numbers of AArch64 (AADWARF64): x0-x30, then SP */
enum {
	PD_UW_X19 = 19, PD_UW_X29 = 29,
	PD_UW_X30 = 30,		/* LR: the return address column */
	PD_UW_SP = 31,
	PD_UW_NREGS		/* the ones a row can name */
};
#define PD_UW_FP	PD_UW_X29
#define PD_UW_RA	PD_UW_X30
/* a function that has not saved x30 returns through it (CIEs say nothing) */
#define PD_UW_RA_DEFAULT	PD_UW_SAME
/* the general registers, what a CFA may be based on: all */
#define PD_UW_NGPRS	PD_UW_NREGS
#else
/* DWARF register numbers of x86-64 (psABI): the ones a row can name */
enum {
	PD_UW_RAX, PD_UW_RDX, PD_UW_RCX, PD_UW_RBX,
	PD_UW_RSI, PD_UW_RDI, PD_UW_RBP, PD_UW_RSP,
	PD_UW_R8, PD_UW_R9, PD_UW_R10, PD_UW_R11,
	PD_UW_R12, PD_UW_R13, PD_UW_R14, PD_UW_R15,
	PD_UW_RA,		/* the return address column, no register */
	PD_UW_NREGS
};
#define PD_UW_FP	PD_UW_RBP
#define PD_UW_SP	PD_UW_RSP
#define PD_UW_RA_DEFAULT	PD_UW_UNDEF
/* the general registers, what a CFA may be based on: not the RA column */
#define PD_UW_NGPRS	PD_UW_RA
#endif

/* How the caller's value of a register is found */
enum pd_uw_how {
	PD_UW_SAME,		/* unchanged (callee-saved, not saved here) */
	PD_UW_UNDEF,		/* lost; for PD_UW_RA: the outermost frame */
	PD_UW_AT_CFA,		/* saved at CFA + off */
	PD_UW_IS_CFA,		/* is CFA + off (DW_CFA_val_offset) */
	PD_UW_IN_REG,		/* in register .reg of this frame */
};

struct pd_uw_rule {
	u8	how;		/* enum pd_uw_how */
	u8	reg;		/* PD_UW_IN_REG */
	s64	off;		/* PD_UW_AT_CFA, PD_UW_IS_CFA */
};

/*
 * A rule in the compact form of rows kept a while (uw_ehframe.c's
 * remembered states, the walk's row cache): its how and its register in
 * one byte, its offset in an s32, which a caller has made sure it fits.
 */
static inline u8 pd_uw_rule_pack(const struct pd_uw_rule *r)
{
	return r->how | r->reg << 3;
}

static inline void pd_uw_rule_unpack(struct pd_uw_rule *r, u8 packed, s32 off)
{
	r->how = packed & 7;
	r->reg = packed >> 3;
	r->off = off;
}

/* How the CFA is found */
enum pd_uw_cfa {
	PD_UW_CFA_REG,		/* register .cfa_reg + .cfa_off */
	/*
	 * A PLT entry's expression (x86-64 psABI): RSP + .cfa_off, plus 8
	 * once RIP & 15 >= 11
	 */
	PD_UW_CFA_PLT,
};

/* The unwind rules at one IP: what a caller's frame is made of. */
struct pd_uw_row {
	u8			cfa_how;	/* enum pd_uw_cfa */
	u8			cfa_reg;
	s64			cfa_off;
	struct pd_uw_rule	reg[PD_UW_NREGS];
	bool			signal;		/* a signal frame's FDE ('S') */
};

/*
 * Reads @len bytes of the task's memory at @addr into @dst: 0, or a
 * negative errno (-EFAULT; -E2BIG once the unwind's budget is spent).
 * In the module: copy_from_user(), counted against a per-unwind byte
 * budget; in tests/host: a file laid out at its link addresses.
 */
struct pd_uw_reader;
int pd_uw_read(struct pd_uw_reader *rd, void *dst, unsigned long addr, size_t len);

/*
 * The row of the .eh_frame FDE that covers @ip, found through the
 * .eh_frame_hdr mapped at @hdr (@hdr_size bytes, its PT_GNU_EH_FRAME
 * segment).  0; -ENOENT when no FDE covers @ip; -EINVAL for a table that
 * is malformed or uses what the parser does not implement; or what
 * pd_uw_read() returned.
 */
int pd_ehframe_row(struct pd_uw_reader *rd, unsigned long hdr, unsigned long hdr_size,
		   unsigned long ip, struct pd_uw_row *row);

/*
 * The same from the SFrame section mapped at @sec (@size bytes, its
 * PT_GNU_SFRAME segment).  SFrame versions 2 and 3, and version 1 but
 * for its PLT (PC-mask) entries, of the AMD64 or the little-endian
 * AArch64 ABI (the architecture's own); anything else is -EINVAL.
 */
int pd_sframe_row(struct pd_uw_reader *rd, unsigned long sec, unsigned long size,
		  unsigned long ip, struct pd_uw_row *row);

#endif /* PD_UWTAB_H */
