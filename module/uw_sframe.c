// SPDX-License-Identifier: GPL-2.0-only
/*
 * uw_sframe.c - the row of an SFrame table (.sframe, PT_GNU_SFRAME) at an IP.
 *
 * Layouts, from binutils' include/sframe.h and libsframe/doc/sframe-spec.texi
 * (the format's definition), checked against the .sframe sections that GNU
 * as 2.40 (version 1) and 2.44 (version 2) write:
 *
 *  header (28 bytes, then sfh_auxhdr_len bytes): u16 magic 0xdee2, u8
 *    version, u8 flags, u8 abi/arch, s8 fixed FP offset, s8 fixed RA
 *    offset, u8 auxhdr_len, u32 num_fdes, num_fres, fre_len, fdeoff,
 *    freoff; the two offsets count from the header's end.
 *  version 1 FDE (17 bytes): s32 start, u32 size, u32 fre_off, u32
 *    num_fres, u8 info.
 *  version 2 FDE (20 bytes): the same, then u8 rep_size, u16 padding.
 *  version 3: a 16-byte index entry (s64 start, u32 size, u32 fre_off)
 *    and, at the function's fre_off in the FRE sub-section, 5 bytes of
 *    attributes (u16 num_fres, u8 info, u8 info2, u8 rep_size) that
 *    the function's FREs follow.
 *  info: bits 0-3 FRE type (start offset of 1, 2 or 4 bytes), bit 4 PC
 *    type (0: increments; 1: mask, FRE starts match (ip - start) modulo
 *    rep_size, for PLT entries), bit 5 aarch64's key; version 3: bit 7
 *    a signal frame.  info2 (version 3): bits 0-4 the FDE type.
 *  FRE: the start offset, an info byte (bit 0 the CFA base, SP if set,
 *    else FP; bits 1-4 the count of offsets; bits 5-6 their size, 1, 2
 *    or 4 bytes; bit 7 a mangled RA), then the signed offsets: CFA from
 *    its base, then RA from the CFA unless the header fixes it, then FP
 *    from the CFA.  No offsets at all: the RA is undefined, the
 *    outermost frame (versions 2 and 3).
 *  A function's start is its field's value plus the section's address,
 *    or, with SFRAME_F_FDE_FUNC_START_PCREL (versions 2, 3), plus the
 *    address of the field itself.
 *
 * Supported: versions 2 and 3, and version 1 but for its PC-mask FDEs
 * (the PLT's), whose repeat size that version does not record; the
 * architecture's own ABI: AMD64 (little-endian), with the RA at the fixed
 * CFA-8 and no fixed FP offset, or little-endian AArch64, with neither
 * fixed; sorted FDEs only.  -EINVAL for everything else, among it
 * version 3's flexible FDEs, an auxiliary header, a mangled RA on AMD64,
 * unknown flags or bits, and what the ABI cannot have: on AMD64 more than
 * two offsets (CFA, FP), a CFA less than 8 above its base, an FP saved at
 * CFA-8 or above; on AArch64 more than three (CFA, RA, FP), a CFA below
 * its base, an RA or FP saved at the CFA or above; FREs whose starts do
 * not increase.  Version 3 is as binutils
 * 2.46 defines it; no toolchain here writes it, so only hand-built tables
 * check it.  The row: CFA = SP or FP + offset; RA at CFA-8 (AMD64), or
 * at CFA + its offset if the FRE has one, else still in x30 (AArch64,
 * whose mangled RA, signed by pointer authentication, the walk strips);
 * FP at CFA + its offset if the FRE has one, else unchanged; every other
 * register unchanged.  An undefined RA comes as reg[PD_UW_RA] PD_UW_UNDEF (its CFA,
 * SP + 0, is no CFA).  An IP that no FDE covers, or that precedes its
 * FDE's first FRE: -ENOENT.
 *
 * The table is user memory: every field is read through pd_uw_read() in
 * pieces of at most a few dozen bytes, every offset is checked against
 * the section's size before the read, and the loops are bounded (a
 * binary search over at most 2^32 FDEs, at most SF_MAX_FRES FREs).
 */
#ifdef __KERNEL__
#include <linux/string.h>
#endif

#include "uwtab.h"

#define SF_MAGIC		0xdee2
#define SF_HDR_SIZE		28

#define SF_F_FDE_SORTED		0x1
#define SF_F_FRAME_POINTER	0x2
#define SF_F_START_PCREL	0x4

#define SF_ABI_AARCH64_LE	2
#define SF_ABI_AMD64_LE		3
#define SF_AMD64_RA_OFF		(-8)

#ifdef PD_UW_ARM64
#define SF_ABI			SF_ABI_AARCH64_LE
#define SF_FIXED_RA		0		/* none: the FREs say */
#define SF_MAX_OFFSETS		3		/* CFA, RA, FP */
#define SF_MIN_CFA_OFF		0		/* a leaf's CFA is its SP */
#define SF_MANGLED_RA		0		/* a signed RA: allowed */
#define SF_FDE_KEY		0		/* info bit 5: the PAC key */
#else
#define SF_ABI			SF_ABI_AMD64_LE
#define SF_FIXED_RA		SF_AMD64_RA_OFF
#define SF_MAX_OFFSETS		2		/* CFA, FP */
#define SF_MIN_CFA_OFF		(-SF_AMD64_RA_OFF)	/* the RA is at or above the base */
#define SF_MANGLED_RA		0x80		/* refused */
#define SF_FDE_KEY		0x20		/* aarch64's: refused */
#endif

#define SF_V1_FDE_SIZE		17
#define SF_V2_FDE_SIZE		20
#define SF_V3_IDX_SIZE		16
#define SF_V3_ATTR_SIZE		5

#define SF_FRE_ADDR4		2
#define SF_FRE_OFF_4B		2
#define SF_V3_FDE_DEFAULT	0

/* More FREs in one function than this is refused. */
#define SF_MAX_FRES		4096
/* log2(2^32 FDEs) + 1 */
#define SF_MAX_SEARCH		33

struct sf_sec {
	struct pd_uw_reader	*rd;
	unsigned long		sec;
	unsigned long		size;
	u8			ver;
	u8			flags;
	u32			num_fdes;
	u32			num_fres;
	unsigned long		fde_base;	/* section offsets */
	unsigned long		fre_base;
	unsigned long		fre_end;
	unsigned int		fde_size;
};

struct sf_fde {
	unsigned long		start;		/* run-time address */
	u32			size;
	u32			num_fres;
	unsigned long		fres;		/* section offset of the first FRE */
	u8			info;
	u8			info2;
	u8			rep;
};

static u16 sf_le16(const u8 *p)
{
	return (u16)(p[0] | (u16)p[1] << 8);
}

static u32 sf_le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u64 sf_le64(const u8 *p)
{
	return (u64)sf_le32(p) | (u64)sf_le32(p + 4) << 32;
}

/* @len bytes at section offset @off, which must lie below @end */
static int sf_read(struct sf_sec *s, unsigned long end, unsigned long off, void *buf,
		   unsigned long len)
{
	if (end > s->size || off > end || len > end - off)
		return -EINVAL;
	return pd_uw_read(s->rd, buf, s->sec + off, len);
}

static int sf_header(struct sf_sec *s)
{
	u8 h[SF_HDR_SIZE];
	u32 fre_len, fdeoff, freoff;
	u8 known;
	int ret;

	ret = sf_read(s, s->size, 0, h, sizeof(h));
	if (ret)
		return ret;
	if (sf_le16(h) != SF_MAGIC)
		return -EINVAL;
	s->ver = h[2];
	s->flags = h[3];
	switch (s->ver) {
	case 1:
		known = SF_F_FDE_SORTED | SF_F_FRAME_POINTER;
		s->fde_size = SF_V1_FDE_SIZE;
		break;
	case 2:
		known = SF_F_FDE_SORTED | SF_F_FRAME_POINTER | SF_F_START_PCREL;
		s->fde_size = SF_V2_FDE_SIZE;
		break;
	case 3:
		known = SF_F_FDE_SORTED | SF_F_START_PCREL;
		s->fde_size = SF_V3_IDX_SIZE;
		break;
	default:
		return -EINVAL;
	}
	if ((s->flags & ~known) || !(s->flags & SF_F_FDE_SORTED))
		return -EINVAL;
	/* the RA fixed at CFA-8 (AMD64) or not (AArch64), the FP never, no aux header */
	if (h[4] != SF_ABI || h[5] != 0 || (s8)h[6] != SF_FIXED_RA || h[7] != 0)
		return -EINVAL;

	s->num_fdes = sf_le32(h + 8);
	s->num_fres = sf_le32(h + 12);
	fre_len = sf_le32(h + 16);
	fdeoff = sf_le32(h + 20);
	freoff = sf_le32(h + 24);

	/* s->size < 2^32 here, so none of these sums can wrap */
	s->fde_base = SF_HDR_SIZE + (unsigned long)fdeoff;
	if (s->fde_base > s->size ||
	    s->num_fdes > (s->size - s->fde_base) / s->fde_size)
		return -EINVAL;
	s->fre_base = SF_HDR_SIZE + (unsigned long)freoff;
	if (s->fre_base > s->size || fre_len > s->size - s->fre_base)
		return -EINVAL;
	s->fre_end = s->fre_base + fre_len;
	return 0;
}

/* The run-time start address in the FDE (or index entry) at section offset @off, read as @b */
static unsigned long sf_start(const struct sf_sec *s, unsigned long off, const u8 *b)
{
	unsigned long base = s->sec;
	u64 v;

	/* sign-extend, then add modulo 2^64 */
	v = s->ver == 3 ? sf_le64(b) : (u64)(s64)(s32)sf_le32(b);
	if (s->flags & SF_F_START_PCREL)
		base += off;
	return base + (unsigned long)v;
}

/* The FDE that covers @ip: 0, -ENOENT, or an error. */
static int sf_find_fde(struct sf_sec *s, unsigned long ip, struct sf_fde *f)
{
	u32 lo = 0, hi = s->num_fdes, mid, i;
	unsigned long off, fres;
	u8 b[SF_V2_FDE_SIZE];
	int n, ret;

	for (n = 0; lo < hi; n++) {
		if (n >= SF_MAX_SEARCH)
			return -EINVAL;
		mid = lo + (hi - lo) / 2;
		off = s->fde_base + (unsigned long)mid * s->fde_size;
		ret = sf_read(s, s->size, off, b, s->ver == 3 ? 8 : 4);
		if (ret)
			return ret;
		if (sf_start(s, off, b) <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	i = lo - 1;

	off = s->fde_base + (unsigned long)i * s->fde_size;
	ret = sf_read(s, s->size, off, b, s->fde_size);
	if (ret)
		return ret;
	f->start = sf_start(s, off, b);
	if (s->ver == 3) {
		f->size = sf_le32(b + 8);
		fres = sf_le32(b + 12);
	} else {
		f->size = sf_le32(b + 4);
		fres = sf_le32(b + 8);
	}
	if (ip - f->start >= f->size)
		return -ENOENT;

	/* fre_base + fre_off, checked against the FRE sub-section */
	if (fres > s->fre_end - s->fre_base)
		return -EINVAL;
	fres += s->fre_base;
	if (s->ver == 3) {
		ret = sf_read(s, s->fre_end, fres, b, SF_V3_ATTR_SIZE);
		if (ret)
			return ret;
		f->num_fres = sf_le16(b);
		f->info = b[2];
		f->info2 = b[3];
		f->rep = b[4];
		fres += SF_V3_ATTR_SIZE;
	} else {
		f->num_fres = sf_le32(b + 12);
		f->info = b[16];
		f->info2 = SF_V3_FDE_DEFAULT;
		f->rep = s->ver == 2 ? b[17] : 0;
	}
	f->fres = fres;

	if ((f->info & 0xf) > SF_FRE_ADDR4 || f->info2 != SF_V3_FDE_DEFAULT)
		return -EINVAL;
	/* bit 5 is aarch64's key, bit 6 unused, bit 7 version 3's signal frame */
	if (f->info & ((s->ver == 3 ? 0x40 : 0xc0) | (SF_FDE_KEY)))
		return -EINVAL;
	if (f->info & 0x10) {
		/* version 1 has no repeat size for its PC-mask FDEs */
		if (s->ver == 1 || !f->rep)
			return -EINVAL;
	}
	if (f->num_fres > s->num_fres)
		return -EINVAL;
	return 0;
}

/* Bytes of the offsets of an FRE with info byte @info; -EINVAL if the ABI has no such FRE */
static int sf_fre_offsets(const struct sf_sec *s, u8 info, unsigned int *count,
			  unsigned int *osize)
{
	unsigned int sz = (info >> 5) & 3;

	*count = (info >> 1) & 0xf;
	if (sz > SF_FRE_OFF_4B || (info & SF_MANGLED_RA))
		return -EINVAL;
	*osize = 1u << sz;
	/* CFA, (RA,) FP.  None: RA undefined, not in version 1. */
	if (*count > SF_MAX_OFFSETS || (*count == 0 && s->ver == 1))
		return -EINVAL;
	return 0;
}

static s64 sf_soff(const u8 *p, unsigned int osize)
{
	if (osize == 1)
		return (s8)p[0];
	if (osize == 2)
		return (s16)sf_le16(p);
	return (s32)sf_le32(p);
}

static int sf_fre_row(struct sf_sec *s, const struct sf_fde *f, unsigned long ip,
		      struct pd_uw_row *row)
{
	unsigned int asize = 1u << (f->info & 0xf), count = 0, osize = 1;
	unsigned long pos = f->fres, chosen = 0;
	u32 off, fstart, prev = 0;
	u8 b[SF_MAX_OFFSETS * 4 + 1], info = 0;
	s64 cfa_off, ra_off, fp_off;
	bool found = false;
	u32 i;
	int ret;

	off = (u32)(ip - f->start);	/* < f->size */
	if (f->info & 0x10)
		off %= f->rep;

	for (i = 0; i < f->num_fres; i++) {
		u8 fi;

		if (i >= SF_MAX_FRES)
			return -EINVAL;
		ret = sf_read(s, s->fre_end, pos, b, asize + 1);
		if (ret)
			return ret;
		fstart = asize == 1 ? b[0] : asize == 2 ? sf_le16(b) : sf_le32(b);
		fi = b[asize];
		if (i && fstart <= prev)
			return -EINVAL;
		if (fstart > off)
			break;
		ret = sf_fre_offsets(s, fi, &count, &osize);
		if (ret)
			return ret;
		pos += asize + 1;
		chosen = pos;
		info = fi;
		found = true;
		if (count * osize > s->fre_end - pos)
			return -EINVAL;
		pos += count * osize;
		prev = fstart;
	}
	if (!found)
		return -ENOENT;

	ret = sf_fre_offsets(s, info, &count, &osize);
	if (ret)
		return ret;
	ret = sf_read(s, s->fre_end, chosen, b, count * osize);
	if (ret)
		return ret;

	for (i = 0; i < PD_UW_NREGS; i++)
		row->reg[i].how = PD_UW_SAME;
	row->cfa_how = PD_UW_CFA_REG;
	row->cfa_reg = PD_UW_SP;
	row->signal = s->ver == 3 && (f->info & 0x80);
	if (!count) {
		/* the outermost frame */
		row->reg[PD_UW_RA].how = PD_UW_UNDEF;
		return 0;
	}

	cfa_off = sf_soff(b, osize);
	if (cfa_off < SF_MIN_CFA_OFF)
		return -EINVAL;
	row->cfa_reg = (info & 1) ? PD_UW_SP : PD_UW_FP;
	row->cfa_off = cfa_off;
	i = 1;
#ifdef PD_UW_ARM64
	/* no RA offset: the RA is still in x30 (the row's default) */
	if (count >= 2) {
		ra_off = sf_soff(b + osize * i++, osize);
		if (ra_off >= 0)
			return -EINVAL;
		row->reg[PD_UW_RA].how = PD_UW_AT_CFA;
		row->reg[PD_UW_RA].off = ra_off;
	}
#else
	ra_off = SF_AMD64_RA_OFF;
	row->reg[PD_UW_RA].how = PD_UW_AT_CFA;
	row->reg[PD_UW_RA].off = ra_off;
#endif
	if (i < count) {
		fp_off = sf_soff(b + osize * i, osize);
		/* saved below the RA (AMD64), below the CFA (AArch64) */
		if (fp_off >= (SF_FIXED_RA ? ra_off : 0))
			return -EINVAL;
		row->reg[PD_UW_FP].how = PD_UW_AT_CFA;
		row->reg[PD_UW_FP].off = fp_off;
	}
	return 0;
}

int pd_sframe_row(struct pd_uw_reader *rd, unsigned long sec, unsigned long size,
		  unsigned long ip, struct pd_uw_row *row)
{
	struct sf_sec s = { .rd = rd, .sec = sec, .size = size };
	struct sf_fde f;
	int ret;

	memset(row, 0, sizeof(*row));
	/* the section's offsets are u32; and sec + size must not wrap */
	if (size < SF_HDR_SIZE || size > 0xffffffffUL || sec + size < sec)
		return -EINVAL;
	ret = sf_header(&s);
	if (ret)
		return ret;
	ret = sf_find_fde(&s, ip, &f);
	if (ret)
		return ret;
	return sf_fre_row(&s, &f, ip, row);
}
