// SPDX-License-Identifier: GPL-2.0-only
/*
 * uw_ehframe.c - the row of an .eh_frame FDE that covers an IP (x86-64, AArch64).
 *
 * The object's .eh_frame_hdr (its PT_GNU_EH_FRAME segment) holds a table
 * sorted by initial location; a binary search finds the FDE, the FDE names
 * its CIE, and the CIE's initial instructions then the FDE's instructions
 * are run until the location passes the IP.  What they leave is the row.
 *
 * Everything is read through pd_uw_read(), a record at a time in small
 * chunks, and never beyond the length the record gives itself.  The
 * search, every LEB128, the number of CFA instructions and the depth of
 * the remembered-state stack all have fixed bounds; there is no recursion
 * and no allocation, and the stack frame stays under a kilobyte.
 *
 * Supported: CIE versions 1, 3 and 4, augmentations "z" with R, P, L and
 * S; the pointer encodings of the LSB (absptr, [us]data2/4/8, [us]leb128,
 * pcrel; datarel only in the .eh_frame_hdr table; indirect only for the
 * personality, which is skipped unread), the hdr table as ld writes it
 * (datarel|sdata4); every CFA instruction gcc, clang and gas emit for
 * x86-64 and AArch64 code except expressions: the one CFA expression
 * recognised is that of ld's x86-64 PLT entries (.plt/.plt.sec, the "plus
 * 8 once RIP & 15 >= 11" form), anything else that needs a DWARF
 * expression is -EINVAL.  Rules for registers a row does not track
 * (x86-64's xmm and st, AArch64's v registers) are ignored; a tracked
 * register kept in, or a CFA based on, such a register is -EINVAL.
 *
 * AArch64: the return address column is x30 (LR), which a function
 * that has not saved it still holds, so a rule no instruction gave is
 * "same value" there (x86-64's return address column, no register, is
 * undefined until the CIE places it).  DW_CFA_AARCH64_negate_ra_state
 * (pointer authentication signed the return address) changes no rule:
 * the walk strips the code from every return address.  The CIE
 * augmentations 'B' (signed with the B key) and 'G' (MTE-tagged stack
 * frames) carry no data and change nothing a row says.
 */
#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/string.h>
#endif

#include "uwtab.h"

/* DW_EH_PE_*: pointer encodings */
#define EH_PE_ABSPTR	0x00
#define EH_PE_ULEB128	0x01
#define EH_PE_UDATA2	0x02
#define EH_PE_UDATA4	0x03
#define EH_PE_UDATA8	0x04
#define EH_PE_SLEB128	0x09
#define EH_PE_SDATA2	0x0a
#define EH_PE_SDATA4	0x0b
#define EH_PE_SDATA8	0x0c
#define EH_PE_FORMAT	0x0f
#define EH_PE_PCREL	0x10
#define EH_PE_DATAREL	0x30
#define EH_PE_APPL	0x70
#define EH_PE_INDIRECT	0x80
#define EH_PE_OMIT	0xff

/* DW_CFA_*: call frame instructions */
#define CFA_NOP			0x00
#define CFA_ADVANCE_LOC1	0x02
#define CFA_ADVANCE_LOC2	0x03
#define CFA_ADVANCE_LOC4	0x04
#define CFA_OFFSET_EXTENDED	0x05
#define CFA_RESTORE_EXTENDED	0x06
#define CFA_UNDEFINED		0x07
#define CFA_SAME_VALUE		0x08
#define CFA_REGISTER		0x09
#define CFA_REMEMBER_STATE	0x0a
#define CFA_RESTORE_STATE	0x0b
#define CFA_DEF_CFA		0x0c
#define CFA_DEF_CFA_REGISTER	0x0d
#define CFA_DEF_CFA_OFFSET	0x0e
#define CFA_DEF_CFA_EXPRESSION	0x0f
#define CFA_EXPRESSION		0x10
#define CFA_OFFSET_EXTENDED_SF	0x11
#define CFA_DEF_CFA_SF		0x12
#define CFA_DEF_CFA_OFFSET_SF	0x13
#define CFA_VAL_OFFSET		0x14
#define CFA_VAL_OFFSET_SF	0x15
#define CFA_VAL_EXPRESSION	0x16
#define CFA_GNU_ARGS_SIZE	0x2e
#define CFA_AARCH64_NEGATE_RA	0x2d	/* DW_CFA_GNU_window_save's number */
/* the high two bits of these carry the opcode, the low six an operand */
#define CFA_ADVANCE_LOC		0x1
#define CFA_OFFSET		0x2
#define CFA_RESTORE		0x3

#define UW_CHUNK	64	/* bytes a cursor reads at a time */
#define UW_MAX_INSNS	1024	/* CFA instructions per CIE + FDE */
#define UW_MAX_DEPTH	4	/* DW_CFA_remember_state nesting: gcc and clang use 1 */
#define UW_MAX_SEARCH	64	/* binary search steps */
#define UW_MAX_AUG	8	/* augmentation string, with its NUL */
#define UW_MAX_FACTOR	0x10000	/* |code or data alignment factor| */
#define UW_HDR_TABLE	(EH_PE_DATAREL | EH_PE_SDATA4)
#define UW_CFA_NONE	0xff	/* row.cfa_how while no CFA rule is set */

#ifndef PD_UW_ARM64
/*
 * ld's CFA expression for PLT entries (x86-64 psABI): DW_OP_breg7 (rsp) 8;
 * DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge;
 * DW_OP_lit3; DW_OP_shl; DW_OP_plus.  ld -z ibtplt writes lit9 (lit10
 * before binutils 2.37) in place of lit11: rejected, as a row cannot say
 * so yet.
 */
static const u8 uw_plt_expr[] = {
	0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
};
#endif

/* A window on one record of the task's memory, read UW_CHUNK bytes at a time. */
struct uw_cur {
	struct pd_uw_reader	*rd;
	unsigned long		addr;	/* address of buf[0] */
	unsigned long		end;	/* the record's end: never read at or past it */
	unsigned int		pos, len;
	u8			buf[UW_CHUNK];
};

/* What the FDEs of a CIE need of it */
struct uw_cie {
	unsigned long	insn, end;	/* its initial instructions */
	u64		caf;		/* code alignment factor */
	s64		daf;		/* data alignment factor */
	u8		fde_enc;	/* 'R' */
	bool		fde_aug;	/* 'z': the FDEs have augmentation data */
	bool		signal;		/* 'S' */
};

/* A row, compactly, for the remembered-state stack and the CIE's row */
struct uw_state {
	s32	off[PD_UW_NREGS];
	s32	cfa_off;
	u8	rule[PD_UW_NREGS];	/* pd_uw_rule_pack() */
	u8	cfa_how, cfa_reg;
};

struct uw_exec {
	struct pd_uw_row	*row;		/* the current row */
	const struct uw_cie	*cie;
	unsigned long		loc, ip;
	unsigned int		insns, depth;
	bool			in_cie;		/* running the CIE's initial instructions */
	bool			done;		/* the location passed the IP */
	struct uw_state		initial;	/* the row the CIE's instructions left */
	struct uw_state		stack[UW_MAX_DEPTH];
};

static int uw_open(struct uw_cur *cur, struct pd_uw_reader *rd, unsigned long start,
		   unsigned long end)
{
	if (end < start)
		return -EINVAL;
	cur->rd = rd;
	cur->addr = start;
	cur->end = end;
	cur->pos = 0;
	cur->len = 0;
	return 0;
}

/* the address of the next byte */
static unsigned long uw_where(const struct uw_cur *cur)
{
	return cur->addr + cur->pos;
}

static int uw_u8(struct uw_cur *cur, u8 *v)
{
	if (cur->pos == cur->len) {
		unsigned long next = cur->addr + cur->len;
		unsigned long n = cur->end - next;
		int ret;

		if (!n)
			return -EINVAL;
		if (n > UW_CHUNK)
			n = UW_CHUNK;
		ret = pd_uw_read(cur->rd, cur->buf, next, n);
		if (ret)
			return ret;
		cur->addr = next;
		cur->pos = 0;
		cur->len = n;
	}
	*v = cur->buf[cur->pos++];
	return 0;
}

static int uw_skip(struct uw_cur *cur, u64 n)
{
	unsigned long at = uw_where(cur);

	if (n > cur->end - at)
		return -EINVAL;
	if (n <= cur->len - cur->pos) {
		cur->pos += n;
	} else {
		cur->addr = at + n;
		cur->pos = 0;
		cur->len = 0;
	}
	return 0;
}

/* @size bytes, little-endian, zero-extended */
static int uw_fixed(struct uw_cur *cur, unsigned int size, u64 *v)
{
	unsigned int i;
	u64 r = 0;
	u8 b;
	int ret;

	for (i = 0; i < size; i++) {
		ret = uw_u8(cur, &b);
		if (ret)
			return ret;
		r |= (u64)b << (8 * i);
	}
	*v = r;
	return 0;
}

/* LEB128 of at most ten bytes; @sign: sign-extend it */
static int uw_leb(struct uw_cur *cur, bool sign, u64 *v)
{
	unsigned int shift = 0, i;
	u64 r = 0;
	u8 b;
	int ret;

	for (i = 0; i < 10; i++) {
		ret = uw_u8(cur, &b);
		if (ret)
			return ret;
		r |= (u64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (sign && shift < 64 && (b & 0x40))
				r |= ~(u64)0 << shift;
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

static int uw_uleb(struct uw_cur *cur, u64 *v)
{
	return uw_leb(cur, false, v);
}

static int uw_sleb(struct uw_cur *cur, s64 *v)
{
	u64 r;
	int ret = uw_leb(cur, true, &r);

	*v = (s64)r;
	return ret;
}

/*
 * A pointer in encoding @enc, read at the cursor: pcrel against the
 * field's own address, datarel against @datarel (0: not allowed here).
 * DW_EH_PE_indirect only if @indirect, and then not followed: the caller
 * skips the value.
 */
static int uw_ptr(struct uw_cur *cur, u8 enc, unsigned long datarel, bool indirect, u64 *v)
{
	unsigned long field = uw_where(cur);
	u64 r;
	s64 s;
	int ret;

	if (enc == EH_PE_OMIT || ((enc & EH_PE_INDIRECT) && !indirect))
		return -EINVAL;
	switch (enc & EH_PE_FORMAT) {
	case EH_PE_ABSPTR:
	case EH_PE_UDATA8:
	case EH_PE_SDATA8:
		ret = uw_fixed(cur, 8, &r);
		break;
	case EH_PE_UDATA2:
		ret = uw_fixed(cur, 2, &r);
		break;
	case EH_PE_SDATA2:
		ret = uw_fixed(cur, 2, &r);
		r = (u64)(s64)(s16)(u16)r;
		break;
	case EH_PE_UDATA4:
		ret = uw_fixed(cur, 4, &r);
		break;
	case EH_PE_SDATA4:
		ret = uw_fixed(cur, 4, &r);
		r = (u64)(s64)(s32)(u32)r;
		break;
	case EH_PE_ULEB128:
		ret = uw_uleb(cur, &r);
		break;
	case EH_PE_SLEB128:
		ret = uw_sleb(cur, &s);
		r = (u64)s;
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	switch (enc & EH_PE_APPL) {
	case 0:
		break;
	case EH_PE_PCREL:
		r += field;
		break;
	case EH_PE_DATAREL:
		if (!datarel)
			return -EINVAL;
		r += datarel;
		break;
	default:
		return -EINVAL;
	}
	*v = r;
	return 0;
}

static int uw_read32(struct pd_uw_reader *rd, unsigned long addr, u32 *v)
{
	u8 b[4];
	int ret = pd_uw_read(rd, b, addr, sizeof(b));

	if (!ret)
		*v = b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
	return ret;
}

/*
 * The length of the record at @addr, and where its body starts and ends.
 * A terminator (length 0) is -ENOENT; 64-bit DWARF is not supported.
 */
static int uw_record(struct pd_uw_reader *rd, unsigned long addr, unsigned long *body,
		     unsigned long *end)
{
	u32 len;
	int ret = uw_read32(rd, addr, &len);

	if (ret)
		return ret;
	if (!len)
		return -ENOENT;
	if (len == 0xffffffff || len < 4 || addr + 4 + (u64)len < addr)
		return -EINVAL;
	*body = addr + 4;
	*end = addr + 4 + (u64)len;
	return 0;
}

/* The CIE at @addr: its header, and where its initial instructions are */
static int uw_parse_cie(struct uw_cur *cur, struct pd_uw_reader *rd, unsigned long addr,
			struct uw_cie *cie)
{
	unsigned long body, end, aug_end = 0;
	char aug[UW_MAX_AUG];
	unsigned int i;
	u64 id, v, ra;
	s64 daf;
	u8 version, b;
	int ret;

	ret = uw_record(rd, addr, &body, &end);
	if (ret)
		return ret == -ENOENT ? -EINVAL : ret;
	ret = uw_open(cur, rd, body, end);
	if (!ret)
		ret = uw_fixed(cur, 4, &id);
	if (!ret)
		ret = uw_u8(cur, &version);
	if (ret)
		return ret;
	if (id != 0 || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	for (i = 0; ; i++) {
		if (i == UW_MAX_AUG)
			return -EINVAL;
		ret = uw_u8(cur, &b);
		if (ret)
			return ret;
		aug[i] = b;
		if (!b)
			break;
	}
	if (version == 4) {
		/* address_size, segment_selector_size */
		ret = uw_fixed(cur, 2, &v);
		if (ret)
			return ret;
		if (v != 8)
			return -EINVAL;
	}
	ret = uw_uleb(cur, &cie->caf);
	if (!ret)
		ret = uw_sleb(cur, &daf);
	if (ret)
		return ret;
	if (version == 1) {
		ret = uw_u8(cur, &b);
		ra = b;
	} else {
		ret = uw_uleb(cur, &ra);
	}
	if (ret)
		return ret;
	if (!cie->caf || cie->caf > UW_MAX_FACTOR || daf < -UW_MAX_FACTOR ||
	    daf > UW_MAX_FACTOR || ra != PD_UW_RA)
		return -EINVAL;
	cie->daf = daf;
	cie->fde_enc = EH_PE_ABSPTR;
	cie->fde_aug = false;
	cie->signal = false;

	if (aug[0] == 'z') {
		ret = uw_uleb(cur, &v);
		if (ret)
			return ret;
		if (v > end - uw_where(cur))
			return -EINVAL;
		aug_end = uw_where(cur) + v;
		cie->fde_aug = true;
	} else if (aug[0]) {
		return -EINVAL;
	}
	for (i = 1; aug[0] && aug[i]; i++) {
		switch (aug[i]) {
		case 'R':
			ret = uw_u8(cur, &cie->fde_enc);
			break;
		case 'P':
			ret = uw_u8(cur, &b);
			if (!ret)
				ret = uw_ptr(cur, b, 0, true, &v);
			break;
		case 'L':
			/* the LSDA's encoding: the FDEs' data is skipped whole */
			ret = uw_u8(cur, &b);
			break;
		case 'S':
			cie->signal = true;
			break;
#ifdef PD_UW_ARM64
		case 'B':
		case 'G':
			break;
#endif
		default:
			return -EINVAL;
		}
		if (ret)
			return ret;
	}
	if (aug[0]) {
		if (uw_where(cur) > aug_end)
			return -EINVAL;
		ret = uw_skip(cur, aug_end - uw_where(cur));
		if (ret)
			return ret;
	}
	cie->insn = uw_where(cur);
	cie->end = end;
	return 0;
}

static void uw_save(struct uw_state *s, const struct pd_uw_row *row)
{
	unsigned int i;

	for (i = 0; i < PD_UW_NREGS; i++) {
		s->off[i] = row->reg[i].off;
		s->rule[i] = pd_uw_rule_pack(&row->reg[i]);
	}
	s->cfa_off = row->cfa_off;
	s->cfa_how = row->cfa_how;
	s->cfa_reg = row->cfa_reg;
}

static void uw_load_reg(struct pd_uw_row *row, const struct uw_state *s, unsigned int i)
{
	pd_uw_rule_unpack(&row->reg[i], s->rule[i], s->off[i]);
}

static void uw_load(struct pd_uw_row *row, const struct uw_state *s)
{
	unsigned int i;

	for (i = 0; i < PD_UW_NREGS; i++)
		uw_load_reg(row, s, i);
	row->cfa_off = s->cfa_off;
	row->cfa_how = s->cfa_how;
	row->cfa_reg = s->cfa_reg;
}

/* the rule of a register no instruction has named */
static void uw_default_reg(struct pd_uw_row *row, unsigned int i)
{
	row->reg[i].how = i == PD_UW_RA ? PD_UW_RA_DEFAULT : PD_UW_SAME;
	row->reg[i].reg = 0;
	row->reg[i].off = 0;
}

/* @f * the data alignment factor, which must fit an s32 (f: a uleb or sleb) */
static int uw_factor(const struct uw_exec *x, u64 f, bool sign, s64 *off)
{
	s64 v = (s64)f;

	if (sign ? (v < -0x7fffffffLL || v > 0x7fffffffLL) : f > 0x7fffffffULL)
		return -EINVAL;
	v *= x->cie->daf;	/* |v| < 2^31, |daf| <= 2^16 */
	if (v < -0x80000000LL || v > 0x7fffffffLL)
		return -EINVAL;
	*off = v;
	return 0;
}

static int uw_set(struct uw_exec *x, u64 reg, u8 how, u64 in, s64 off)
{
	struct pd_uw_rule *r;

	if (reg >= PD_UW_NREGS)
		return 0;	/* not a register a row tracks */
	if (how == PD_UW_IN_REG && in >= PD_UW_NREGS)
		return -EINVAL;
	if (off < -0x80000000LL || off > 0x7fffffffLL)
		return -EINVAL;
	r = &x->row->reg[reg];
	r->how = how;
	r->reg = how == PD_UW_IN_REG ? in : 0;
	r->off = off;
	return 0;
}

static int uw_restore(struct uw_exec *x, u64 reg)
{
	if (reg >= PD_UW_NREGS)
		return 0;
	if (x->in_cie)
		uw_default_reg(x->row, reg);
	else
		uw_load_reg(x->row, &x->initial, reg);
	return 0;
}

static int uw_def_cfa(struct uw_exec *x, u64 reg, s64 off)
{
	/* CFA only from a general register; not from rip, nor an xmm */
	if (reg >= PD_UW_NGPRS || off < -0x80000000LL || off > 0x7fffffffLL)
		return -EINVAL;
	x->row->cfa_how = PD_UW_CFA_REG;
	x->row->cfa_reg = reg;
	x->row->cfa_off = off;
	return 0;
}

static int uw_advance(struct uw_exec *x, u64 delta)
{
	u64 d = delta * x->cie->caf;	/* delta < 2^32, caf <= 2^16 */

	if (x->loc + d < x->loc)
		return -EINVAL;
	x->loc += d;
	if (x->loc > x->ip)
		x->done = true;
	return 0;
}

/* DW_CFA_def_cfa_expression: ld's x86-64 PLT expression, nothing else */
static int uw_cfa_expr(struct uw_exec *x, struct uw_cur *cur)
{
#ifdef PD_UW_ARM64
	return -EINVAL;
#else
	unsigned int i;
	u64 len;
	u8 b;
	int ret = uw_uleb(cur, &len);

	if (ret)
		return ret;
	if (len != sizeof(uw_plt_expr))
		return -EINVAL;
	for (i = 0; i < sizeof(uw_plt_expr); i++) {
		ret = uw_u8(cur, &b);
		if (ret)
			return ret;
		if (b != uw_plt_expr[i])
			return -EINVAL;
	}
	x->row->cfa_how = PD_UW_CFA_PLT;
	x->row->cfa_reg = PD_UW_RSP;
	x->row->cfa_off = 8;
	return 0;
#endif
}

/* The instructions with an opcode of their own (the high two bits 0) */
static int uw_insn(struct uw_exec *x, struct uw_cur *cur, u8 op)
{
	struct pd_uw_row *row = x->row;
	u64 a, b;
	s64 s;
	int ret;

	switch (op) {
	case CFA_NOP:
		return 0;
	case CFA_ADVANCE_LOC1:
	case CFA_ADVANCE_LOC2:
	case CFA_ADVANCE_LOC4:
		ret = uw_fixed(cur, op == CFA_ADVANCE_LOC1 ? 1 : op == CFA_ADVANCE_LOC2 ? 2 : 4,
			       &a);
		return ret ?: uw_advance(x, a);
	case CFA_OFFSET_EXTENDED:
	case CFA_VAL_OFFSET:
		ret = uw_uleb(cur, &a);
		ret = ret ?: uw_uleb(cur, &b);
		ret = ret ?: uw_factor(x, b, false, &s);
		return ret ?: uw_set(x, a, op == CFA_VAL_OFFSET ? PD_UW_IS_CFA : PD_UW_AT_CFA,
				     0, s);
	case CFA_OFFSET_EXTENDED_SF:
	case CFA_VAL_OFFSET_SF:
		ret = uw_uleb(cur, &a);
		ret = ret ?: uw_sleb(cur, &s);
		ret = ret ?: uw_factor(x, s, true, &s);
		return ret ?: uw_set(x, a, op == CFA_VAL_OFFSET_SF ? PD_UW_IS_CFA : PD_UW_AT_CFA,
				     0, s);
	case CFA_RESTORE_EXTENDED:
		ret = uw_uleb(cur, &a);
		return ret ?: uw_restore(x, a);
	case CFA_UNDEFINED:
	case CFA_SAME_VALUE:
		ret = uw_uleb(cur, &a);
		return ret ?: uw_set(x, a, op == CFA_UNDEFINED ? PD_UW_UNDEF : PD_UW_SAME, 0, 0);
	case CFA_REGISTER:
		ret = uw_uleb(cur, &a);
		ret = ret ?: uw_uleb(cur, &b);
		return ret ?: uw_set(x, a, PD_UW_IN_REG, b, 0);
	case CFA_REMEMBER_STATE:
		if (x->depth == UW_MAX_DEPTH)
			return -EINVAL;
		uw_save(&x->stack[x->depth++], row);
		return 0;
	case CFA_RESTORE_STATE:
		if (!x->depth)
			return -EINVAL;
		uw_load(row, &x->stack[--x->depth]);
		return 0;
	case CFA_DEF_CFA:
		ret = uw_uleb(cur, &a);
		ret = ret ?: uw_uleb(cur, &b);
		if (!ret && b > 0x7fffffffULL)
			ret = -EINVAL;
		return ret ?: uw_def_cfa(x, a, b);
	case CFA_DEF_CFA_SF:
		ret = uw_uleb(cur, &a);
		ret = ret ?: uw_sleb(cur, &s);
		ret = ret ?: uw_factor(x, s, true, &s);
		return ret ?: uw_def_cfa(x, a, s);
	case CFA_DEF_CFA_REGISTER:
		ret = uw_uleb(cur, &a);
		if (!ret && row->cfa_how != PD_UW_CFA_REG)
			ret = -EINVAL;
		return ret ?: uw_def_cfa(x, a, row->cfa_off);
	case CFA_DEF_CFA_OFFSET:
		ret = uw_uleb(cur, &b);
		if (!ret && (b > 0x7fffffffULL || row->cfa_how != PD_UW_CFA_REG))
			ret = -EINVAL;
		return ret ?: uw_def_cfa(x, row->cfa_reg, b);
	case CFA_DEF_CFA_OFFSET_SF:
		ret = uw_sleb(cur, &s);
		ret = ret ?: uw_factor(x, s, true, &s);
		if (!ret && row->cfa_how != PD_UW_CFA_REG)
			ret = -EINVAL;
		return ret ?: uw_def_cfa(x, row->cfa_reg, s);
	case CFA_DEF_CFA_EXPRESSION:
		return uw_cfa_expr(x, cur);
	case CFA_EXPRESSION:
	case CFA_VAL_EXPRESSION:
		/* fine for a register no row tracks: skip its expression */
		ret = uw_uleb(cur, &a);
		ret = ret ?: uw_uleb(cur, &b);
		if (!ret && a < PD_UW_NREGS)
			ret = -EINVAL;
		return ret ?: uw_skip(cur, b);
	case CFA_GNU_ARGS_SIZE:
		return uw_uleb(cur, &a);
#ifdef PD_UW_ARM64
	case CFA_AARCH64_NEGATE_RA:
		return 0;
#endif
	default:
		/* DW_CFA_set_loc, DW_CFA_GNU_negative_offset_extended, vendor ones */
		return -EINVAL;
	}
}

/* Runs the instructions in [@start, @end) until the location passes the IP */
static int uw_run(struct uw_exec *x, struct uw_cur *cur, unsigned long start,
		  unsigned long end)
{
	u64 v;
	s64 off;
	u8 op;
	int ret = uw_open(cur, cur->rd, start, end);

	while (!ret && !x->done && uw_where(cur) < end) {
		if (++x->insns > UW_MAX_INSNS)
			return -EINVAL;
		ret = uw_u8(cur, &op);
		if (ret)
			break;
		switch (op >> 6) {
		case CFA_ADVANCE_LOC:
			ret = uw_advance(x, op & 0x3f);
			break;
		case CFA_OFFSET:
			ret = uw_uleb(cur, &v);
			ret = ret ?: uw_factor(x, v, false, &off);
			ret = ret ?: uw_set(x, op & 0x3f, PD_UW_AT_CFA, 0, off);
			break;
		case CFA_RESTORE:
			ret = uw_restore(x, op & 0x3f);
			break;
		default:
			ret = uw_insn(x, cur, op);
			break;
		}
	}
	return ret;
}

/*
 * The .eh_frame_hdr: the FDE whose table entry is the last at or below
 * @ip, and that entry's initial location.
 */
static int uw_search(struct uw_cur *cur, struct pd_uw_reader *rd, unsigned long hdr,
		     unsigned long hdr_size, unsigned long ip, unsigned long *eh_frame,
		     unsigned long *loc, unsigned long *fde)
{
	unsigned long table, lo, hi, mid;
	unsigned int steps;
	u64 v, count;
	u32 e;
	u8 h[4];
	int ret, i;

	if (hdr_size < 4 || hdr + hdr_size < hdr)
		return -EINVAL;
	/* version, three encodings, eh_frame_ptr and fde_count (at most 2 x 10) */
	ret = uw_open(cur, rd, hdr, hdr + min(hdr_size, 24UL));
	for (i = 0; !ret && i < 4; i++)
		ret = uw_u8(cur, &h[i]);
	if (ret)
		return ret;
	if (h[0] != 1 || h[2] == EH_PE_OMIT || (h[2] & ~EH_PE_FORMAT) || h[3] != UW_HDR_TABLE)
		return -EINVAL;
	ret = uw_ptr(cur, h[1], hdr, false, &v);
	ret = ret ?: uw_ptr(cur, h[2], 0, false, &count);
	if (ret)
		return ret;
	*eh_frame = v;
	table = uw_where(cur);
	if (count > (hdr + hdr_size - table) / 8)
		return -EINVAL;
	/* the first entry with a location above @ip */
	lo = 0;
	hi = count;
	for (steps = 0; lo < hi; steps++) {
		if (steps == UW_MAX_SEARCH)
			return -EINVAL;
		mid = lo + (hi - lo) / 2;
		ret = uw_read32(rd, table + mid * 8, &e);
		if (ret)
			return ret;
		if (hdr + (u64)(s64)(s32)e <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	ret = uw_read32(rd, table + (lo - 1) * 8, &e);
	if (ret)
		return ret;
	*loc = hdr + (u64)(s64)(s32)e;
	ret = uw_read32(rd, table + (lo - 1) * 8 + 4, &e);
	if (ret)
		return ret;
	*fde = hdr + (u64)(s64)(s32)e;
	return 0;
}

int pd_ehframe_row(struct pd_uw_reader *rd, unsigned long hdr, unsigned long hdr_size,
		   unsigned long ip, struct pd_uw_row *row)
{
	unsigned long eh_frame, loc, fde, body, end, insn, cie_addr;
	struct uw_cur cur;
	struct uw_cie cie;
	struct uw_exec x;
	u64 id, pc, range;
	unsigned int i;
	int ret;

	ret = uw_search(&cur, rd, hdr, hdr_size, ip, &eh_frame, &loc, &fde);
	if (ret)
		return ret;
	if (fde < eh_frame)
		return -EINVAL;
	ret = uw_record(rd, fde, &body, &end);
	if (ret)
		return ret;
	ret = uw_open(&cur, rd, body, end);
	ret = ret ?: uw_fixed(&cur, 4, &id);
	if (ret)
		return ret;
	/* a CIE pointer counts back from its own address; 0 is a CIE */
	if (!id || id > body || body - id < eh_frame)
		return -EINVAL;
	cie_addr = body - id;
	ret = uw_parse_cie(&cur, rd, cie_addr, &cie);
	if (ret)
		return ret;

	ret = uw_open(&cur, rd, body + 4, end);
	ret = ret ?: uw_ptr(&cur, cie.fde_enc, 0, false, &pc);
	ret = ret ?: uw_ptr(&cur, cie.fde_enc & EH_PE_FORMAT, 0, false, &range);
	if (!ret && cie.fde_aug) {
		ret = uw_uleb(&cur, &id);
		ret = ret ?: uw_skip(&cur, id);
	}
	if (ret)
		return ret;
	insn = uw_where(&cur);
	if (pc != loc || pc + range < pc)
		return -EINVAL;
	if (ip < pc || ip - pc >= range)
		return -ENOENT;

	memset(row, 0, sizeof(*row));
	for (i = 0; i < PD_UW_NREGS; i++)
		uw_default_reg(row, i);
	row->cfa_how = UW_CFA_NONE;
	row->signal = cie.signal;
	x.row = row;
	x.cie = &cie;
	x.loc = pc;
	x.ip = ip;
	x.insns = 0;
	x.depth = 0;
	x.done = false;
	x.in_cie = true;
	ret = uw_run(&x, &cur, cie.insn, cie.end);
	if (ret)
		return ret;
	uw_save(&x.initial, row);
	x.in_cie = false;
	ret = uw_run(&x, &cur, insn, end);
	if (ret)
		return ret;
	if (row->cfa_how == UW_CFA_NONE)
		return -EINVAL;
	return 0;
}
