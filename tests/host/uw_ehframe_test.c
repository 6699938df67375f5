// SPDX-License-Identifier: GPL-2.0-only
/*
 * uw_ehframe_test - module/uw_ehframe.c against binutils
 *
 * readelf --debug-dump=frames-interp prints every FDE's rows; each row's
 * first and last byte and a byte in between must give pd_ehframe_row()
 * the same CFA and the same rules for every register a row tracks, on
 * libc, ls (a PLT), libstdc++ and a program built here.  The parser may
 * refuse what it does not implement (-EINVAL), but at most 1% of the FDEs,
 * and never a row it gives.  Then: IPs no FDE covers, budgets, hand-made
 * tables for what real objects do not show, and corrupted tables under
 * ASan and UBSan.
 *
 * Built with -DPD_UW_ARM64 (uw_ehframe_arm64_test), the parser reads
 * AArch64's tables, still on this host: those of the cross libc, ld.so,
 * libm and libstdc++ (libc6-dev-arm64-cross, libstdc++6-arm64-cross) and
 * of the program cross-built here by clang, also with pointer
 * authentication (DW_CFA_AARCH64_negate_ra_state, the 'B' augmentation),
 * against aarch64-linux-gnu-readelf.  Without the cross tools, what needs
 * them is skipped, with the reason.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "uw_image.h"

#ifdef PD_UW_ARM64
#define READELF		"aarch64-linux-gnu-readelf"
#define CROSS_LIB	"/usr/aarch64-linux-gnu/lib"
#define OBJ_LIBC	CROSS_LIB "/libc.so.6"
#define OBJ_SMALL	CROSS_LIB "/ld-linux-aarch64.so.1"
#define PROG_CC		"clang --target=aarch64-linux-gnu " \
			"--ld-path=/usr/bin/aarch64-linux-gnu-ld -O2 -fomit-frame-pointer " \
			"-funwind-tables -fasynchronous-unwind-tables"
#define PAC_FLAGS	"-mbranch-protection=pac-ret+leaf+b-key"
#else
#define READELF		"readelf"
#define OBJ_LIBC	"/lib/x86_64-linux-gnu/libc.so.6"
#define OBJ_SMALL	"/usr/bin/ls"
#define PROG_CC		"cc -O2 -fomit-frame-pointer"
#endif

#define BIG_BUDGET	(1ul << 20)

/* what readelf says of a rule; beyond enum pd_uw_how */
enum { X_EXP = 16, X_UNSET };
/* ... and of the CFA */
enum { XC_REG, XC_PLT, XC_EXP };

struct xrule {
	u8	how;
	u8	reg;
	s64	off;
};

struct xrow {
	unsigned long	loc;
	bool		ra_other;	/* its CIE's return address column is not PD_UW_RA */
	u8		cfa_how, cfa_reg;
	s64		cfa_off;
	struct xrule	reg[PD_UW_NREGS];
};

struct xrec {
	unsigned long	off, len;	/* in .eh_frame */
	unsigned long	cie;		/* FDE: its CIE's offset */
	unsigned int	ra;		/* the return address column (an FDE's: its CIE's) */
	unsigned long	lo, hi;		/* FDE: pc range */
	bool		is_cie;
	bool		aug_b;		/* CIE: augmentation 'B' */
	u8		cfa_exprs;	/* DW_CFA_def_cfa_expression: EXPR_* */
	u64		undef;		/* CIE: the registers it leaves undefined */
	int		row0, nrows;	/* in frames.rows */
};

struct frames {
	struct xrec	*recs;
	int		nrecs;
	struct xrow	*rows;
	int		nrows;
	int		negates;	/* DW_CFA_AARCH64_negate_ra_state */
	int		undefs;		/* rules "u" that are DW_CFA_undefined */
};

/* readelf's names: the return address column is "ra" */
#ifdef PD_UW_ARM64
static const char *const reg_names[PD_UW_NREGS] = {
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
	"x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
	"x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
	"x24", "x25", "x26", "x27", "x28", "x29", "ra", "sp",
};
#else
static const char *const reg_names[PD_UW_NREGS] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ra",
};
#endif

static int reg_by_name(const char *s, size_t n)
{
	int i;

	for (i = 0; i < PD_UW_NREGS; i++)
		if (strlen(reg_names[i]) == n && !strncmp(s, reg_names[i], n))
			return i;
#ifdef PD_UW_ARM64
	/* x30 out of the return address column: as a CFA's base */
	if (n == 3 && !strncmp(s, "x30", 3))
		return PD_UW_X30;
#endif
	return -1;
}

/* NULL, or why the tools that this architecture's checks need are missing */
static const char *tools_missing(bool build)
{
#ifdef PD_UW_ARM64
	if (system("command -v " READELF " >/dev/null 2>&1"))
		return "no " READELF " (binutils-aarch64-linux-gnu)";
	if (build && (system("command -v clang >/dev/null 2>&1") ||
		      access("/usr/bin/aarch64-linux-gnu-ld", X_OK)))
		return "no clang or aarch64-linux-gnu-ld to cross-build with";
	if (build && access(CROSS_LIB "/crt1.o", R_OK))
		return "no " CROSS_LIB "/crt1.o (libc6-dev-arm64-cross)";
#endif
	return NULL;
}

/* room for element @n of an array of @n: doubled at 16, 32, 64... */
static void *grow(void *p, int n, size_t size)
{
	if (n && (n < 16 || (n & (n - 1))))
		return p;
	p = realloc(p, (n ? 2 * n : 16) * size);
	if (!p)
		abort();
	return p;
}

/* "u", "s", "c-16", "v+8", "r10 (r10)", "exp" */
static int parse_rule(const char *t, struct xrule *r)
{
	char *e;

	memset(r, 0, sizeof(*r));
	if (!strcmp(t, "u")) {
		r->how = X_UNSET;
	} else if (!strcmp(t, "s")) {
		r->how = PD_UW_SAME;
	} else if (t[0] == 'c' || t[0] == 'v') {
		r->how = t[0] == 'c' ? PD_UW_AT_CFA : PD_UW_IS_CFA;
		r->off = strtoll(t + 1, &e, 10);
		if (*e)
			return -1;
	} else if (t[0] == 'r' && isdigit((unsigned char)t[1])) {
		r->how = PD_UW_IN_REG;
		r->off = strtoll(t + 1, &e, 10);	/* the register, for now */
		r->reg = r->off < 256 ? r->off : 255;
		r->off = 0;
	} else {
		r->how = X_EXP;		/* exp, vexp, n/a */
	}
	return 0;
}

static int parse_cfa(const char *t, struct xrow *row)
{
	const char *p = strpbrk(t, "+-");
	int reg;

	if (!strcmp(t, "exp")) {
		row->cfa_how = XC_EXP;
		return 0;
	}
	if (!p)
		return -1;
	reg = reg_by_name(t, p - t);
	row->cfa_how = XC_REG;
	row->cfa_reg = reg < 0 ? 255 : reg;
	row->cfa_off = strtoll(p, NULL, 10);
	return 0;
}

static const struct xrec *find_cie(const struct frames *f, unsigned long off)
{
	int i;

	for (i = 0; i < f->nrecs; i++)
		if (f->recs[i].is_cie && f->recs[i].off == off)
			return &f->recs[i];
	return NULL;
}

#define EXPR_PLT	1	/* ld's PLT expression, with DW_OP_lit11 */
#define EXPR_OTHER	2

static const char plt_expr[] =
	"DW_CFA_def_cfa_expression (DW_OP_breg7 (rsp): 8; DW_OP_breg16 (rip): 0; "
	"DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus)";

/*
 * Which rules "u" are DW_CFA_undefined: frames-interp prints "u" for that
 * and for a register that no instruction has named yet, whose rule is the
 * default one (on AArch64 "same value" for x30, the return address
 * column).  The plain dump's instructions, followed here for the
 * registers they leave undefined, tell them apart.
 */
struct undef_walk {
	struct xrec	*rec;
	u64		mask, cie_mask;	/* the registers undefined; the CIE's */
	u64		stack[16];	/* DW_CFA_remember_state */
	int		depth;
	int		next;		/* the record's first row not marked yet */
};

/* The record's rows below @loc, which the instructions so far describe */
static void undef_rows(struct frames *f, struct undef_walk *w, unsigned long loc)
{
	int i;

	if (!w->rec)
		return;
	for (; w->next < w->rec->nrows; w->next++) {
		struct xrow *x = &f->rows[w->rec->row0 + w->next];

		if (x->loc >= loc)
			break;
		for (i = 0; i < PD_UW_NREGS; i++) {
			if ((w->mask >> i & 1) && x->reg[i].how == X_UNSET) {
				x->reg[i].how = PD_UW_UNDEF;
				f->undefs++;
			}
		}
	}
}

static void undef_insn(struct frames *f, struct undef_walk *w, const char *line)
{
	const char *s = strstr(line, "DW_CFA_"), *t;
	unsigned long to;
	unsigned int reg;
	char name[48];
	u64 bit;

	if (!s)
		return;
	s += 7;
	if (!strncmp(s, "advance_loc", 11)) {
		t = strstr(s, " to ");
		if (t && sscanf(t, " to %lx", &to) == 1)
			undef_rows(f, w, to);
	} else if (!strncmp(s, "remember_state", 14)) {
		if (w->depth < (int)ARRAY_SIZE(w->stack))
			w->stack[w->depth++] = w->mask;
	} else if (!strncmp(s, "restore_state", 13)) {
		if (w->depth)
			w->mask = w->stack[--w->depth];
	} else if (!strncmp(s, "AARCH64_negate_ra_state", 23)) {
		f->negates++;
	} else if (sscanf(s, "%47[A-Za-z0-9_]: r%u", name, &reg) == 2 && reg < PD_UW_NREGS &&
		   strncmp(name, "def_cfa", 7)) {
		/* an instruction that gives register @reg a rule */
		bit = 1ull << reg;
		if (!strcmp(name, "undefined"))
			w->mask |= bit;
		else if (!strncmp(name, "restore", 7))
			w->mask = (w->mask & ~bit) | (w->cie_mask & bit);
		else
			w->mask &= ~bit;
	}
}

/* The end of the walk's record; then @next's start, if any */
static void undef_next(struct frames *f, struct undef_walk *w, struct xrec *next)
{
	const struct xrec *cie;

	undef_rows(f, w, ~0ul);
	if (w->rec && w->rec->is_cie)
		w->rec->undef = w->mask;
	memset(w, 0, sizeof(*w));
	w->rec = next;
	if (next && !next->is_cie) {
		cie = find_cie(f, next->cie);
		w->mask = w->cie_mask = cie ? cie->undef : 0;
	}
}

/*
 * The plain dump: frames-interp says "exp" of every CFA expression, this
 * says which records have which; and the rules "u" that are undefined
 * ones, the CIEs with augmentation 'B', the negate_ra_state instructions.
 */
static int frames_insns(struct frames *f, const char *path)
{
	char cmd[512], line[1024];
	struct undef_walk w = { };
	struct xrec *cur = NULL;
	unsigned long a, b, c;
	const char *q;
	char kind[8];
	FILE *p;
	int i = 0;

	snprintf(cmd, sizeof(cmd), "LC_ALL=C " READELF " --debug-dump=frames '%s' 2>/dev/null",
		 path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, "ZERO terminator") || !strncmp(line, "section", 7))
			break;
		if (sscanf(line, "%lx %lx %lx %7s", &a, &b, &c, kind) == 4 &&
		    (!strcmp(kind, "CIE") || !strcmp(kind, "FDE"))) {
			/* the same records, in the same order */
			cur = i < f->nrecs && f->recs[i].off == a ? &f->recs[i++] : NULL;
			undef_next(f, &w, cur);
			if (!cur)
				break;
			continue;
		}
		if (!cur)
			continue;
		q = strstr(line, "Augmentation:");
		if (cur->is_cie && q && (q = strchr(q, '"')))
			cur->aug_b = memchr(q + 1, 'B', strcspn(q + 1, "\"")) != NULL;
		if (strstr(line, "DW_CFA_def_cfa_expression"))
			cur->cfa_exprs |= strstr(line, plt_expr) ? EXPR_PLT : EXPR_OTHER;
		undef_insn(f, &w, line);
	}
	undef_next(f, &w, NULL);
	pclose(p);
	return i == f->nrecs ? 0 : -1;
}

/* readelf's view of @path's .eh_frame: 0, or -1 */
static int frames_load(struct frames *f, const char *path)
{
	char cmd[512], line[1024], *tok[64], *s;
	int cols[64], ncols = 0, ntok, i;
	struct xrec *cur = NULL;
	FILE *p;

	memset(f, 0, sizeof(*f));
	snprintf(cmd, sizeof(cmd),
		 "LC_ALL=C " READELF " --debug-dump=frames-interp '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long a, b, c, lo, hi;
		char kind[8];

		if (strstr(line, "ZERO terminator") || !strncmp(line, "section", 7))
			break;
		if (sscanf(line, "%lx %lx %lx %7s", &a, &b, &c, kind) == 4 &&
		    (!strcmp(kind, "CIE") || !strcmp(kind, "FDE"))) {
			f->recs = grow(f->recs, f->nrecs, sizeof(*f->recs));
			cur = &f->recs[f->nrecs++];
			memset(cur, 0, sizeof(*cur));
			cur->off = a;
			cur->len = b;
			cur->is_cie = kind[0] == 'C';
			cur->row0 = f->nrows;
			if (cur->is_cie) {
				s = strstr(line, " ra=");
				if (!s || sscanf(s, " ra=%u", &cur->ra) != 1)
					goto bad;
			} else {
				const struct xrec *cie;

				s = strstr(line, "cie=");
				if (!s || sscanf(s, "cie=%lx pc=%lx..%lx", &c, &lo, &hi) != 3)
					goto bad;
				cur->cie = c;
				cur->lo = lo;
				cur->hi = hi;
				cie = find_cie(f, c);
				cur->ra = cie ? cie->ra : PD_UW_RA;
			}
			ncols = 0;
			continue;
		}
		/* split, gluing "(name)" to the "rN" before it */
		ntok = 0;
		for (s = strtok(line, " \n"); s && ntok < 64; s = strtok(NULL, " \n")) {
			if (s[0] == '(' && ntok) {
				s[-1] = ' ';
				continue;
			}
			tok[ntok++] = s;
		}
		if (!ntok || !cur)
			continue;
		if (!strcmp(tok[0], "LOC")) {
			for (i = 2, ncols = 0; i < ntok; i++)
				cols[ncols++] = reg_by_name(tok[i], strlen(tok[i]));
			continue;
		}
		if (strlen(tok[0]) != 16 || ntok != ncols + 2)
			goto bad;
		{
			struct xrow *row;
			struct xrule r;

			f->rows = grow(f->rows, f->nrows, sizeof(*f->rows));
			row = &f->rows[f->nrows++];
			memset(row, 0, sizeof(*row));
			for (i = 0; i < PD_UW_NREGS; i++)
				row->reg[i].how = X_UNSET;
			row->loc = strtoul(tok[0], NULL, 16);
			row->ra_other = cur->ra != PD_UW_RA;
			if (parse_cfa(tok[1], row))
				goto bad;
			for (i = 0; i < ncols; i++) {
				if (parse_rule(tok[i + 2], &r))
					goto bad;
				if (cols[i] >= 0)
					row->reg[cols[i]] = r;
			}
			cur->nrows++;
		}
	}
	pclose(p);
	if (!f->nrecs || frames_insns(f, path))
		return -1;
	/* the CFA "exp" of a record whose only expression is the PLT one */
	for (i = 0; i < f->nrecs; i++) {
		const struct xrec *r = &f->recs[i];
		const struct xrec *cie = r->is_cie ? NULL : find_cie(f, r->cie);
		u8 e = r->cfa_exprs | (cie ? cie->cfa_exprs : 0);
		int j;

		for (j = 0; j < r->nrows && e == EXPR_PLT; j++)
			if (f->rows[r->row0 + j].cfa_how == XC_EXP)
				f->rows[r->row0 + j].cfa_how = XC_PLT;
	}
	return 0;
bad:
	fprintf(stderr, "cannot parse readelf's line: %s\n", line);
	pclose(p);
	return -1;
}

static void frames_free(struct frames *f)
{
	free(f->recs);
	free(f->rows);
	memset(f, 0, sizeof(*f));
}

/* the row readelf gives @fde at @ip, or NULL */
static const struct xrow *expect_at(const struct frames *f, const struct xrec *fde,
				    unsigned long ip)
{
	const struct xrow *best = NULL;
	const struct xrec *cie;
	int i;

	if (!fde->nrows) {
		/* readelf prints no rows for an FDE of nops: the CIE's row */
		cie = find_cie(f, fde->cie);
		if (!cie || !cie->nrows)
			return NULL;
		return &f->rows[cie->row0 + cie->nrows - 1];
	}
	for (i = 0; i < fde->nrows; i++) {
		const struct xrow *r = &f->rows[fde->row0 + i];

		if (r->loc <= ip)
			best = r;	/* the last of equal locations wins */
	}
	return best;
}

/*
 * Does readelf's row say what the parser cannot give?  An expression, a
 * register that a row does not track; or another return address column
 * (glibc's __rawmemchr on AArch64 returns through x15).
 */
static bool expect_unsupported(const struct xrow *x)
{
	int i;

	if (x->ra_other || x->cfa_how == XC_EXP ||
	    (x->cfa_how == XC_REG && x->cfa_reg >= PD_UW_NGPRS))
		return true;
	for (i = 0; i < PD_UW_NREGS; i++)
		if (x->reg[i].how == X_EXP ||
		    (x->reg[i].how == PD_UW_IN_REG && x->reg[i].reg >= PD_UW_NREGS))
			return true;
	return false;
}

static const char *const how_names[] = { "same", "undef", "c", "v", "r" };

static void fmt_rule(char *buf, size_t n, u8 how, u8 reg, s64 off)
{
	if (how == X_UNSET)
		snprintf(buf, n, "u");
	else if (how == X_EXP)
		snprintf(buf, n, "exp");
	else if (how == PD_UW_IN_REG)
		snprintf(buf, n, "r%u", reg);
	else if (how == PD_UW_AT_CFA || how == PD_UW_IS_CFA)
		snprintf(buf, n, "%s%+lld", how_names[how], (long long)off);
	else if (how < 5)
		snprintf(buf, n, "%s", how_names[how]);
	else
		snprintf(buf, n, "?%u", how);
}

/* 0 if the parser's @row says what readelf's @x does; else the column + 1 (CFA: 1) */
static int row_cmp(const struct xrow *x, const struct pd_uw_row *row)
{
	int i;

	if (x->cfa_how == XC_PLT || x->cfa_how == XC_EXP) {
		if (row->cfa_how != PD_UW_CFA_PLT || row->cfa_off != 8)
			return 1;
	} else if (row->cfa_how != PD_UW_CFA_REG || row->cfa_reg != x->cfa_reg ||
		   row->cfa_off != x->cfa_off) {
		return 1;
	}
	for (i = 0; i < PD_UW_NREGS; i++) {
		const struct xrule *e = &x->reg[i];
		const struct pd_uw_rule *g = &row->reg[i];
		u8 how = e->how;

		/* unnamed, or named but unset: the default rule */
		if (how == X_UNSET)
			how = i == PD_UW_RA ? PD_UW_RA_DEFAULT : PD_UW_SAME;
		if (g->how != how)
			return i + 2;
		if (how == PD_UW_IN_REG && g->reg != e->reg)
			return i + 2;
		if ((how == PD_UW_AT_CFA || how == PD_UW_IS_CFA) && g->off != e->off)
			return i + 2;
	}
	return 0;
}

static void show_mismatch(const char *obj, unsigned long ip, const struct xrow *x,
			  const struct pd_uw_row *row, int col)
{
	char a[32], b[32];

	if (col == 1) {
		if (x->cfa_how == XC_REG)
			snprintf(a, sizeof(a), "%s%+lld", x->cfa_reg < PD_UW_NREGS ?
				 reg_names[x->cfa_reg] : "?", (long long)x->cfa_off);
		else
			snprintf(a, sizeof(a), "exp");
		if (row->cfa_how == PD_UW_CFA_REG)
			snprintf(b, sizeof(b), "%s%+lld", row->cfa_reg < PD_UW_NREGS ?
				 reg_names[row->cfa_reg] : "?", (long long)row->cfa_off);
		else
			snprintf(b, sizeof(b), "plt%+lld", (long long)row->cfa_off);
		fprintf(stderr, "# %s: %#lx: CFA: readelf %s, parser %s\n", obj, ip, a, b);
		return;
	}
	col -= 2;
	fmt_rule(a, sizeof(a), x->reg[col].how, x->reg[col].reg, x->reg[col].off);
	fmt_rule(b, sizeof(b), row->reg[col].how, row->reg[col].reg, row->reg[col].off);
	fprintf(stderr, "# %s: %#lx: %s: readelf %s, parser %s\n", obj, ip, reg_names[col], a, b);
}

struct tally {
	int fdes, fdes_ok, rows, ips, mismatches, refused, refused_expected;
	int ra_default;		/* rows whose RA rule is the default one */
	int negates, b_cies, undefs;	/* what frames_insns() found */
	size_t max_read;
};

/* One lookup, checked against readelf */
static void check_ip(const char *obj, const struct uw_image *im, const struct xrow *x,
		     unsigned long ip, struct tally *t)
{
	struct pd_uw_reader rd;
	struct pd_uw_row row;
	int ret, col;

	uw_reader_init(&rd, im, BIG_BUDGET);
	ret = pd_ehframe_row(&rd, im->eh_hdr, im->eh_hdr_size, ip, &row);
	if (BIG_BUDGET - rd.budget > t->max_read)
		t->max_read = BIG_BUDGET - rd.budget;
	t->ips++;
	if (ret) {
		if (ret == -EINVAL && expect_unsupported(x)) {
			t->refused_expected++;
			return;
		}
		if (t->refused++ < 10)
			fprintf(stderr, "# %s: %#lx: refused: %d (%s)\n", obj, ip, ret,
				strerror(-ret));
		return;
	}
	col = expect_unsupported(x) ? 1 : row_cmp(x, &row);
	if (col && t->mismatches++ < 10)
		show_mismatch(obj, ip, x, &row, col);
}

/* Every row of every FDE of @path; returns the tally */
static int check_object(struct __test_metadata *_metadata, const char *path, const char *obj,
			struct tally *t)
{
	struct frames f;
	struct uw_image im;
	int i, j;

	memset(t, 0, sizeof(*t));
	if (uw_image_load(&im, path))
		return -1;
	if (!im.eh_hdr || frames_load(&f, path)) {
		uw_image_free(&im);
		return -1;
	}
	for (i = 0; i < f.nrecs; i++) {
		const struct xrec *fde = &f.recs[i];
		struct pd_uw_reader rd;
		struct pd_uw_row row;
		int ret;

		if (fde->is_cie || fde->lo >= fde->hi)
			continue;
		t->fdes++;
		uw_reader_init(&rd, &im, BIG_BUDGET);
		ret = pd_ehframe_row(&rd, im.eh_hdr, im.eh_hdr_size, fde->lo, &row);
		if (!ret)
			t->fdes_ok++;
		else if (t->fdes - t->fdes_ok <= 10)
			fprintf(stderr, "# %s: FDE %#lx..%#lx refused: %d (%s)\n", obj, fde->lo,
				fde->hi, ret, strerror(-ret));

		for (j = 0; j < (fde->nrows ? fde->nrows : 1); j++) {
			const struct xrow *x = fde->nrows ? &f.rows[fde->row0 + j] : NULL;
			unsigned long lo = x ? x->loc : fde->lo, hi = fde->hi;
			unsigned long ips[4];
			int k, n = 0;

			if (j + 1 < fde->nrows)
				hi = f.rows[fde->row0 + j + 1].loc;
			if (lo < fde->lo || lo >= hi || hi > fde->hi)
				continue;	/* empty, or replaced by a row at the same place */
			x = expect_at(&f, fde, lo);
			if (!x)
				continue;
			t->rows++;
			if (x->reg[PD_UW_RA].how == X_UNSET)
				t->ra_default++;
			ips[n++] = lo;
			if (lo + 1 < hi)
				ips[n++] = lo + 1;
			if (lo + (hi - lo) / 2 > lo + 1)
				ips[n++] = lo + (hi - lo) / 2;
			if (hi - 1 > ips[n - 1])
				ips[n++] = hi - 1;
			for (k = 0; k < n; k++)
				check_ip(obj, &im, x, ips[k], t);
		}
	}
	for (i = 0; i < f.nrecs; i++)
		t->b_cies += f.recs[i].is_cie && f.recs[i].aug_b;
	t->negates = f.negates;
	t->undefs = f.undefs;
	TH_LOG("%s: %d FDEs, %d accepted at their start (%.2f%%); %d rows, %d IPs; "
	       "%d mismatches; %d refused (%d of them what readelf shows the parser lacks); "
	       "at most %zu bytes read per lookup",
	       obj, t->fdes, t->fdes_ok, t->fdes ? 100.0 * t->fdes_ok / t->fdes : 0.0, t->rows,
	       t->ips, t->mismatches, t->refused + t->refused_expected, t->refused_expected,
	       t->max_read);
	TH_LOG("%s: %d rows with the RA's default rule, %d rules \"u\" that are undefined; "
	       "%d negate_ra_state, %d CIEs with 'B'", obj, t->ra_default, t->undefs,
	       t->negates, t->b_cies);
	frames_free(&f);
	uw_image_free(&im);
	return 0;
}

/* A program with rbp-based frames (alloca, a VLA) and calls through its PLT */
static const char prog_src[] =
	"#include <alloca.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"__attribute__((noinline)) int vla(int n)\n"
	"{ int a[n]; for (int i = 0; i < n; i++) a[i] = rand(); return a[n / 2] + a[0]; }\n"
	"__attribute__((noinline)) int use_alloca(int n, const char *s)\n"
	"{ char *p = alloca(n + 1); memset(p, 'x', n); p[n] = 0;\n"
	"  return printf(\"%s %s\\n\", p, s) + (int)strlen(p); }\n"
	"__attribute__((noinline)) long many(long a, long b, long c, long d)\n"
	"{ long r = 0; for (long i = 0; i < a; i++) r += vla(i + 1) * b + use_alloca(c, \"x\") * d\n"
	"    + (long)rand() * (r ^ i); return r; }\n"
	"__attribute__((noinline)) int rec(int n) { return n < 2 ? puts(\"leaf\") : rec(n - 1) +\n"
	"    rec(n - 2) * (int)strtol(\"3\", 0, 10); }\n"
	"int main(int argc, char **argv)\n"
	"{ if (argc > 5) return vla(argc) + use_alloca(argc, argv[0]);\n"
	"  return (int)many(argc, 2, 3, 4) + rec(argc); }\n";

/*
 * tests/vm's wl_nofp, as tests/vm/Makefile builds it (after PROG_CC's
 * flags): static, without frame pointers, every call a frame
 */
#define WL_NOFP_FLAGS	"-O1 -fno-inline -fno-optimize-sibling-calls -fno-pie " \
			"-static -pthread -Wl,--eh-frame-hdr"

/*
 * @dir/prog, in a new directory whose name goes to @dir: prog_src, or the
 * source file @src, built by PROG_CC and @extra.  0, or -1.
 */
static int build_prog(char *dir, size_t n, const char *src, const char *extra)
{
	char cmd[1024], path[80];
	FILE *f;

	snprintf(dir, n, "/tmp/uw_ehframe_test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (!src) {
		snprintf(path, sizeof(path), "%s/prog.c", dir);
		f = fopen(path, "w");
		if (!f)
			return -1;
		fputs(prog_src, f);
		fclose(f);
		src = path;
	}
	snprintf(cmd, sizeof(cmd), PROG_CC " %s -o %s/prog '%s'", extra, dir, src);
	return system(cmd) ? -1 : 0;
}

static void rm_dir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "# cannot remove %s\n", dir);
}

FIXTURE(objects) {
	char dir[64];
	char prog[80];
	const char *path;
	const char *why;	/* why the checks cannot run, or NULL */
};

FIXTURE_VARIANT(objects) {
	const char *path;	/* NULL: the program built here */
	const char *src;	/* its source; NULL: prog_src */
	const char *extra;	/* its compiler's options beyond PROG_CC */
	bool pac;		/* with pointer authentication, which readelf must show */
};

#ifdef PD_UW_ARM64
FIXTURE_VARIANT_ADD(objects, libc) {
	.path = OBJ_LIBC,
};

FIXTURE_VARIANT_ADD(objects, ld_so) {
	.path = OBJ_SMALL,
};

FIXTURE_VARIANT_ADD(objects, libm) {
	.path = CROSS_LIB "/libm.so.6",
};

FIXTURE_VARIANT_ADD(objects, libstdcxx) {
	.path = CROSS_LIB "/libstdc++.so.6",
};

/* paciasp/autiasp: DW_CFA_AARCH64_negate_ra_state, and 'B' for the B key */
FIXTURE_VARIANT_ADD(objects, prog_pac) {
	.path = NULL,
	.extra = PAC_FLAGS,
	.pac = true,
};
#else
FIXTURE_VARIANT_ADD(objects, libc) {
	.path = OBJ_LIBC,
};

FIXTURE_VARIANT_ADD(objects, ls) {
	.path = OBJ_SMALL,
};

FIXTURE_VARIANT_ADD(objects, libstdcxx) {
	.path = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
};
#endif

FIXTURE_VARIANT_ADD(objects, prog) {
	.path = NULL,
	.extra = "",
};

/* the workload that tests/vm's walk_test walks, (the cross) libc.a's code in it */
FIXTURE_VARIANT_ADD(objects, wl_nofp) {
	.path = NULL,
	.src = PD_WL_CALLS,
	.extra = WL_NOFP_FLAGS,
};

FIXTURE_SETUP(objects)
{
	self->dir[0] = 0;
	self->path = variant->path;
	self->why = tools_missing(!variant->path);
	if (!self->why && variant->src && access(variant->src, R_OK))
		self->why = "no tests/vm/wl_calls.c";
	if (!self->path && !self->why) {
		ASSERT_EQ(0, build_prog(self->dir, sizeof(self->dir), variant->src,
					variant->extra));
		snprintf(self->prog, sizeof(self->prog), "%s/prog", self->dir);
		self->path = self->prog;
	}
}

FIXTURE_TEARDOWN(objects)
{
	if (self->dir[0])
		rm_dir(self->dir);
}

/* every row of every FDE, as readelf reads it */
TEST_F(objects, rows_match_readelf)
{
	struct tally t;

	if (self->why)
		SKIP(return, "%s", self->why);
	if (access(self->path, R_OK))
		SKIP(return, "no %s", self->path);
	ASSERT_EQ(0, check_object(_metadata, self->path,
				  variant->path ?: variant->src ? "wl_nofp" : "prog", &t));
	ASSERT_LT(0, t.fdes);
	ASSERT_LT(0, t.rows);
	EXPECT_EQ(0, t.mismatches);
	EXPECT_EQ(0, t.refused);
	/* at least 99% of the FDEs, at their start */
	EXPECT_GE(t.fdes_ok * 100L, t.fdes * 99L);
	if (variant->pac) {
		EXPECT_LT(0, t.negates);
		EXPECT_LT(0, t.b_cies);
	}
#ifdef PD_UW_ARM64
	/* a function's first row: the RA still in x30, "u" by default */
	EXPECT_LT(0, t.ra_default);
	if (!variant->path)
		EXPECT_LT(0, t.undefs) TH_LOG("_start's DW_CFA_undefined x30 not seen");
	if (variant->src)
		EXPECT_LT(500, t.fdes) TH_LOG("no libc.a in the static program?");
#endif
}

/* IPs no FDE covers */
TEST(outside_every_fde)
{
	const char *path = OBJ_SMALL;
	unsigned long ips[4];
	struct pd_uw_reader rd;
	struct pd_uw_row row;
	struct uw_image im;
	int i;

	if (access(path, R_OK))
		SKIP(return, "no %s", path);
	ASSERT_EQ(0, uw_image_load(&im, path));
	ASSERT_NE(0UL, im.eh_hdr);
	ips[0] = 0;
	ips[1] = im.base + im.size;
	ips[2] = ~0ul;
	ips[3] = im.eh_hdr;	/* data, not code */
	for (i = 0; i < 4; i++) {
		uw_reader_init(&rd, &im, BIG_BUDGET);
		EXPECT_EQ(-ENOENT, pd_ehframe_row(&rd, im.eh_hdr, im.eh_hdr_size, ips[i], &row))
			TH_LOG("ip %#lx", ips[i]);
	}
	uw_image_free(&im);
}

/*
 * Every budget short of what a lookup reads is -E2BIG (the reader's
 * refusal comes back, nothing else is read); the exact budget works.
 */
TEST(budget)
{
	const char *path = OBJ_LIBC, *why = tools_missing(false);
	struct pd_uw_row row, row2;
	struct pd_uw_reader rd;
	struct frames f;
	struct uw_image im;
	int i, done = 0;
	size_t need, b;

	if (why)
		SKIP(return, "%s", why);
	if (access(path, R_OK))
		SKIP(return, "no %s", path);
	ASSERT_EQ(0, uw_image_load(&im, path));
	ASSERT_EQ(0, frames_load(&f, path));
	for (i = 0; i < f.nrecs && done < 200; i += 7) {
		unsigned long ip = f.recs[i].hi - 1;

		if (f.recs[i].is_cie || f.recs[i].lo >= f.recs[i].hi)
			continue;
		uw_reader_init(&rd, &im, BIG_BUDGET);
		if (pd_ehframe_row(&rd, im.eh_hdr, im.eh_hdr_size, ip, &row))
			continue;
		need = BIG_BUDGET - rd.budget;
		/* a search of log2(FDEs) steps, two records and a header */
		ASSERT_GT(2048UL, need);
		ASSERT_GT(64UL, rd.reads);
		for (b = 0; b < need; b++) {
			uw_reader_init(&rd, &im, b);
			ASSERT_EQ(-E2BIG, pd_ehframe_row(&rd, im.eh_hdr, im.eh_hdr_size, ip, &row2))
				TH_LOG("ip %#lx budget %zu of %zu", ip, b, need);
		}
		uw_reader_init(&rd, &im, need);
		ASSERT_EQ(0, pd_ehframe_row(&rd, im.eh_hdr, im.eh_hdr_size, ip, &row2));
		ASSERT_EQ(0UL, rd.budget);
		ASSERT_EQ(0, memcmp(&row, &row2, sizeof(row)));
		done++;
	}
	ASSERT_EQ(200, done);
	frames_free(&f);
	uw_image_free(&im);
}

#ifndef PD_UW_ARM64
/* ld -z ibtplt's PLT expression (lit9): refused, the rest of the program read */
TEST(ibt_plt_refused)
{
	char dir[64], path[80];
	struct pd_uw_reader rd;
	struct pd_uw_row row;
	struct frames f;
	struct uw_image im;
	int i, plt = 0, other = 0;

	if (build_prog(dir, sizeof(dir), NULL, "-fcf-protection=full -Wl,-z,ibtplt -Wl,-z,lazy"))
		SKIP(return, "cannot build with -z ibtplt");
	snprintf(path, sizeof(path), "%s/prog", dir);
	ASSERT_EQ(0, uw_image_load(&im, path));
	ASSERT_EQ(0, frames_load(&f, path));
	for (i = 0; i < f.nrows; i++) {
		const struct xrow *x = &f.rows[i];

		if (x->loc < im.text || x->loc >= im.text_end)
			continue;	/* a CIE's row */
		uw_reader_init(&rd, &im, BIG_BUDGET);
		if (x->cfa_how == XC_EXP) {
			EXPECT_EQ(-EINVAL, pd_ehframe_row(&rd, im.eh_hdr, im.eh_hdr_size, x->loc,
							  &row));
			plt++;
		} else if (!pd_ehframe_row(&rd, im.eh_hdr, im.eh_hdr_size, x->loc, &row)) {
			EXPECT_EQ(0, row_cmp(x, &row));
			other++;
		}
	}
	EXPECT_LT(0, plt);
	EXPECT_LT(0, other);
	frames_free(&f);
	uw_image_free(&im);
	rm_dir(dir);
}
#endif

/*
 * Hand-made tables, for what the objects above do not show: a hdr, one
 * CIE, one FDE for [SYN_PC, SYN_PC + 0x100) and a terminator.
 */
#define SYN_BASE	0x10000ul
#define SYN_PC		0x20000ul
#define SYN_EH		(SYN_BASE + 0x40)

struct syn {
	u8		mem[4096];
	size_t		len;
	unsigned long	cie, fde, hdr_size;
	struct uw_image	im;
};

struct spec {
	u8		version;	/* 0: 1 */
	const char	*aug;		/* NULL: "zR" */
	const u8	*aug_data;	/* NULL: the FDE encoding alone */
	size_t		aug_len;
	u8		enc;		/* of the FDE's pc_begin; 0xff: 0x1b */
	u8		ra;		/* 0: PD_UW_RA */
	const u8	*cie_insns;	/* NULL: std_cie_insns */
	size_t		cie_n;
	const u8	*fde_aug;	/* the FDE's augmentation data */
	size_t		fde_aug_len;
	const u8	*insns;
	size_t		n;
};

static void put(struct syn *s, const void *p, size_t n)
{
	if (s->len + n > sizeof(s->mem))
		abort();
	memcpy(s->mem + s->len, p, n);
	s->len += n;
}

static void put8(struct syn *s, u8 v)
{
	put(s, &v, 1);
}

static void put32(struct syn *s, u32 v)
{
	put(s, &v, 4);
}

static void put_uleb(struct syn *s, u64 v)
{
	do {
		put8(s, (v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static unsigned long addr_of(const struct syn *s)
{
	return SYN_BASE + s->len;
}

/* pc_begin in encoding @enc, then the range 0x100 */
static void put_pc(struct syn *s, u8 enc)
{
	u64 pc = SYN_PC;

	if ((enc & 0x70) == 0x10)
		pc -= addr_of(s);
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c:
		put(s, &pc, 8);
		pc = 0x100;
		put(s, &pc, 8);
		break;
	case 0x03: case 0x0b:
		put32(s, pc);
		put32(s, 0x100);
		break;
	case 0x01:
		put_uleb(s, pc);
		put_uleb(s, 0x100);
		break;
	default:
		abort();
	}
}

#ifdef PD_UW_ARM64
/* def_cfa sp+0; the RA still in x30, as no instruction says otherwise */
static const u8 std_cie_insns[] = { 0x0c, 31, 0 };
#define SYN_CFA0	0
#else
/* def_cfa rsp+8, ra at c-8 */
static const u8 std_cie_insns[] = { 0x0c, 7, 8, 0x90, 1 };
#define SYN_CFA0	8
#endif

static void syn_build(struct syn *s, const struct spec *sp)
{
	const char *aug = sp->aug ? sp->aug : "zR";
	u8 enc = sp->enc == 0xff ? 0x1b : sp->enc;
	size_t at;

	memset(s, 0, sizeof(*s));
	/* hdr: version, eh_frame_ptr pcrel|sdata4, count udata4, table datarel|sdata4 */
	put8(s, 1);
	put8(s, 0x1b);
	put8(s, 0x03);
	put8(s, 0x3b);
	put32(s, SYN_EH - (SYN_BASE + 4));
	put32(s, 1);
	put32(s, SYN_PC - SYN_BASE);
	at = s->len;
	put32(s, 0);			/* the FDE, below */
	s->hdr_size = s->len;
	s->len = SYN_EH - SYN_BASE;

	s->cie = addr_of(s);
	put32(s, 0);			/* length, below */
	put32(s, 0);			/* CIE id */
	put8(s, sp->version ? sp->version : 1);
	put(s, aug, strlen(aug) + 1);
	if (sp->version == 4) {
		put8(s, 8);
		put8(s, 0);
	}
	put8(s, 1);			/* code alignment factor */
	put8(s, 0x78);			/* data alignment factor: -8 */
	if (sp->version == 3 || sp->version == 4)
		put_uleb(s, sp->ra ? sp->ra : PD_UW_RA);
	else
		put8(s, sp->ra ? sp->ra : PD_UW_RA);
	if (aug[0] == 'z') {
		if (sp->aug_data) {
			put_uleb(s, sp->aug_len);
			put(s, sp->aug_data, sp->aug_len);
		} else {
			put8(s, 1);
			put8(s, enc);
		}
	}
	if (sp->cie_insns)
		put(s, sp->cie_insns, sp->cie_n);
	else
		put(s, std_cie_insns, sizeof(std_cie_insns));
	while ((s->len - (s->cie - SYN_BASE)) % 8)
		put8(s, 0);
	*(u32 *)(s->mem + (s->cie - SYN_BASE)) = s->len - (s->cie - SYN_BASE) - 4;

	s->fde = addr_of(s);
	*(s32 *)(s->mem + at) = s->fde - SYN_BASE;
	put32(s, 0);
	put32(s, s->fde + 4 - s->cie);
	put_pc(s, enc);
	if (aug[0] == 'z') {
		put_uleb(s, sp->fde_aug_len);
		if (sp->fde_aug_len)
			put(s, sp->fde_aug, sp->fde_aug_len);
	}
	put(s, sp->insns, sp->n);
	*(u32 *)(s->mem + (s->fde - SYN_BASE)) = s->len - (s->fde - SYN_BASE) - 4;
	put32(s, 0);			/* terminator */

	s->im.mem = s->mem;
	s->im.base = SYN_BASE;
	s->im.size = sizeof(s->mem);
	s->im.eh_hdr = SYN_BASE;
	s->im.eh_hdr_size = s->hdr_size;
}

static int syn_row(struct syn *s, unsigned long ip, struct pd_uw_row *row)
{
	struct pd_uw_reader rd;

	uw_reader_init(&rd, &s->im, BIG_BUDGET);
	return pd_ehframe_row(&rd, s->im.eh_hdr, s->im.eh_hdr_size, ip, row);
}

#define RULE_EQ(how_, off_, r_) do {					\
	EXPECT_EQ(how_, (r_).how);					\
	EXPECT_EQ(off_, (r_).off);					\
} while (0)

#ifdef PD_UW_ARM64
/*
 * Each instruction on AArch64, pointer authentication's among them: x30,
 * the return address column, is "same value" until a rule is given
 */
TEST(synthetic_rules)
{
	static const u8 insns[] = {
		0x2d,			/* AARCH64_negate_ra_state: no rule changes */
		0x41,			/* advance 1 (to +1) */
		0x0e, 32,		/* def_cfa_offset 32 */
		0x9d, 4,		/* x29 at c-32 */
		0x9e, 3,		/* x30 at c-24 */
		0x42,			/* advance 2 (to +3) */
		0x93, 2,		/* x19 at c-16 */
		0x09, 20, 21,		/* x20 in x21 */
		0x14, 22, 1,		/* val_offset x22 v-8 */
		0x05, 72, 6,		/* offset_extended v8 c-48: ignored */
		0x16, 34, 1, 0x30,	/* val_expression RA_SIGN_STATE: ignored */
		0x0a,			/* remember_state */
		0x41,			/* advance 1 (to +4) */
		0x2d,			/* negate_ra_state: authenticated */
		0xde,			/* restore x30: same value, the CIE names none */
		0xdd,			/* restore x29 */
		0x0e, 0,		/* def_cfa_offset 0 */
		0x41,			/* advance 1 (to +5) */
		0x0b,			/* restore_state */
		0x0d, 29,		/* def_cfa_register x29: x29+32 */
		0x42,			/* advance 2 (to +7) */
		0x07, 30,		/* undefined x30: the outermost frame */
		0x08, 19,		/* same_value x19 */
		0,
	};
	struct spec sp = { .insns = insns, .n = sizeof(insns), .enc = 0xff };
	struct pd_uw_row r;
	struct syn s;
	int i;

	syn_build(&s, &sp);
	ASSERT_EQ(0, syn_row(&s, SYN_PC, &r));
	EXPECT_EQ(PD_UW_CFA_REG, r.cfa_how);
	EXPECT_EQ(PD_UW_SP, r.cfa_reg);
	EXPECT_EQ(0, r.cfa_off);
	/* x30 too: the return address is still in the link register */
	for (i = 0; i < PD_UW_NREGS; i++)
		RULE_EQ(PD_UW_SAME, 0, r.reg[i]);
	EXPECT_FALSE(r.signal);

	ASSERT_EQ(0, syn_row(&s, SYN_PC + 1, &r));
	EXPECT_EQ(PD_UW_SP, r.cfa_reg);
	EXPECT_EQ(32, r.cfa_off);
	RULE_EQ(PD_UW_AT_CFA, -32, r.reg[PD_UW_FP]);
	RULE_EQ(PD_UW_AT_CFA, -24, r.reg[PD_UW_RA]);
	RULE_EQ(PD_UW_SAME, 0, r.reg[PD_UW_X19]);
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 2, &r));
	RULE_EQ(PD_UW_AT_CFA, -24, r.reg[PD_UW_RA]);

	ASSERT_EQ(0, syn_row(&s, SYN_PC + 3, &r));
	RULE_EQ(PD_UW_AT_CFA, -16, r.reg[PD_UW_X19]);
	EXPECT_EQ(PD_UW_IN_REG, r.reg[20].how);
	EXPECT_EQ(21, r.reg[20].reg);
	RULE_EQ(PD_UW_IS_CFA, -8, r.reg[22]);
	RULE_EQ(PD_UW_AT_CFA, -24, r.reg[PD_UW_RA]);

	ASSERT_EQ(0, syn_row(&s, SYN_PC + 4, &r));
	EXPECT_EQ(PD_UW_SP, r.cfa_reg);
	EXPECT_EQ(0, r.cfa_off);
	RULE_EQ(PD_UW_SAME, 0, r.reg[PD_UW_RA]);
	RULE_EQ(PD_UW_SAME, 0, r.reg[PD_UW_FP]);
	RULE_EQ(PD_UW_AT_CFA, -16, r.reg[PD_UW_X19]);

	/* restore_state: the CFA and the rules as remembered */
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 5, &r));
	EXPECT_EQ(PD_UW_FP, r.cfa_reg);
	EXPECT_EQ(32, r.cfa_off);
	RULE_EQ(PD_UW_AT_CFA, -32, r.reg[PD_UW_FP]);
	RULE_EQ(PD_UW_AT_CFA, -24, r.reg[PD_UW_RA]);
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 6, &r));
	EXPECT_EQ(PD_UW_FP, r.cfa_reg);

	ASSERT_EQ(0, syn_row(&s, SYN_PC + 7, &r));
	RULE_EQ(PD_UW_UNDEF, 0, r.reg[PD_UW_RA]);
	RULE_EQ(PD_UW_SAME, 0, r.reg[PD_UW_X19]);
	RULE_EQ(PD_UW_AT_CFA, -32, r.reg[PD_UW_FP]);
	EXPECT_EQ(PD_UW_FP, r.cfa_reg);
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 0xff, &r));
	RULE_EQ(PD_UW_UNDEF, 0, r.reg[PD_UW_RA]);

	EXPECT_EQ(-ENOENT, syn_row(&s, SYN_PC + 0x100, &r));
	EXPECT_EQ(-ENOENT, syn_row(&s, SYN_PC - 1, &r));
}
#else
/* Each instruction, and the [loc, next loc) a row covers */
TEST(synthetic_rules)
{
	static const u8 cie[] = {
		0x0c, 7, 8,		/* def_cfa rsp+8 */
		0x90, 1,		/* ra at c-8 */
		0x83, 3,		/* rbx at c-24: the CIE's, for restore */
	};
	static const u8 insns[] = {
		0x41,			/* advance 1 (to +1) */
		0x0e, 16,		/* def_cfa_offset 16 */
		0x09, 6, 12,		/* rbp in r12 */
		0x14, 13, 1,		/* val_offset r13 v-8 */
		0x83, 2,		/* rbx at c-16 */
		0x42,			/* advance 2 (to +3) */
		0xc3,			/* restore rbx: c-24 */
		0x11, 14, 0x7e,		/* offset_extended_sf r14 -2: c+16 */
		0x07, 15,		/* undefined r15 */
		0x08, 6,		/* same_value rbp */
		0x2e, 16,		/* GNU_args_size 16 */
		0x10, 17, 2, 0x70, 0,	/* expression xmm0: ignored */
		0xa8, 3,		/* offset r40: ignored */
		0x05, 3, 5,		/* offset_extended rbx c-40 */
		0x0a,			/* remember_state */
		0x02, 4,		/* advance_loc1 4 (to +7) */
		0x0d, 6,		/* def_cfa_register rbp */
		0x13, 0x7d,		/* def_cfa_offset_sf -3: 24 */
		0x15, 12, 0x7f,		/* val_offset_sf r12 -1: v+8 */
		0x06, 3,		/* restore_extended rbx: c-24 */
		0x03, 1, 0,		/* advance_loc2 1 (to +8) */
		0x0b,			/* restore_state */
		0x04, 0x10, 0, 0, 0,	/* advance_loc4 16 (to +0x18) */
		0x12, 10, 0x7e,		/* def_cfa_sf r10 -2: 16 */
		0x07, 16,		/* undefined ra */
		0,
	};
	struct spec sp = { .version = 3, .cie_insns = cie, .cie_n = sizeof(cie),
			   .insns = insns, .n = sizeof(insns), .enc = 0xff };
	struct pd_uw_row r;
	struct syn s;

	syn_build(&s, &sp);
	ASSERT_EQ(0, syn_row(&s, SYN_PC, &r));
	EXPECT_EQ(PD_UW_CFA_REG, r.cfa_how);
	EXPECT_EQ(PD_UW_RSP, r.cfa_reg);
	EXPECT_EQ(8, r.cfa_off);
	RULE_EQ(PD_UW_AT_CFA, -8, r.reg[PD_UW_RA]);
	RULE_EQ(PD_UW_AT_CFA, -24, r.reg[PD_UW_RBX]);
	RULE_EQ(PD_UW_SAME, 0, r.reg[PD_UW_RBP]);
	EXPECT_FALSE(r.signal);

	ASSERT_EQ(0, syn_row(&s, SYN_PC + 1, &r));
	EXPECT_EQ(16, r.cfa_off);
	EXPECT_EQ(PD_UW_IN_REG, r.reg[PD_UW_RBP].how);
	EXPECT_EQ(PD_UW_R12, r.reg[PD_UW_RBP].reg);
	RULE_EQ(PD_UW_IS_CFA, -8, r.reg[PD_UW_R13]);
	RULE_EQ(PD_UW_AT_CFA, -16, r.reg[PD_UW_RBX]);
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 2, &r));
	RULE_EQ(PD_UW_AT_CFA, -16, r.reg[PD_UW_RBX]);

	ASSERT_EQ(0, syn_row(&s, SYN_PC + 3, &r));
	RULE_EQ(PD_UW_AT_CFA, -40, r.reg[PD_UW_RBX]);
	RULE_EQ(PD_UW_AT_CFA, 16, r.reg[PD_UW_R14]);
	RULE_EQ(PD_UW_UNDEF, 0, r.reg[PD_UW_R15]);
	RULE_EQ(PD_UW_SAME, 0, r.reg[PD_UW_RBP]);
	EXPECT_EQ(PD_UW_RSP, r.cfa_reg);
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 6, &r));
	EXPECT_EQ(PD_UW_RSP, r.cfa_reg);

	ASSERT_EQ(0, syn_row(&s, SYN_PC + 7, &r));
	EXPECT_EQ(PD_UW_RBP, r.cfa_reg);
	EXPECT_EQ(24, r.cfa_off);
	RULE_EQ(PD_UW_IS_CFA, 8, r.reg[PD_UW_R12]);
	RULE_EQ(PD_UW_AT_CFA, -24, r.reg[PD_UW_RBX]);

	/* restore_state: the CFA and the rules as remembered */
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 8, &r));
	EXPECT_EQ(PD_UW_RSP, r.cfa_reg);
	EXPECT_EQ(16, r.cfa_off);
	RULE_EQ(PD_UW_SAME, 0, r.reg[PD_UW_R12]);
	RULE_EQ(PD_UW_AT_CFA, -40, r.reg[PD_UW_RBX]);
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 0x17, &r));
	EXPECT_EQ(PD_UW_RSP, r.cfa_reg);

	ASSERT_EQ(0, syn_row(&s, SYN_PC + 0x18, &r));
	EXPECT_EQ(PD_UW_R10, r.cfa_reg);
	EXPECT_EQ(16, r.cfa_off);
	RULE_EQ(PD_UW_UNDEF, 0, r.reg[PD_UW_RA]);
	ASSERT_EQ(0, syn_row(&s, SYN_PC + 0xff, &r));
	EXPECT_EQ(PD_UW_R10, r.cfa_reg);

	EXPECT_EQ(-ENOENT, syn_row(&s, SYN_PC + 0x100, &r));
	EXPECT_EQ(-ENOENT, syn_row(&s, SYN_PC - 1, &r));
}

#endif

static const char *const aarch64_augs[] = { "zRB", "zRG", "zRBG", "zRSB", "zBR" };

/* CIE versions, augmentations and the FDE's pointer encodings */
TEST(synthetic_encodings)
{
	/* P: pcrel|sdata4|indirect, L: pcrel|sdata4, R, S */
	static const u8 aug_plrs[] = { 0x9b, 1, 2, 3, 4, 0x1b, 0x1b };
	static const u8 lsda[] = { 9, 9, 9, 9 };
	static const u8 insns[] = { 0x41, 0x0e, 16, 0 };
	static const u8 encs[] = { 0x1b, 0x03, 0x0b, 0x0c, 0x04, 0x00, 0x01, 0x13 };
	struct pd_uw_row r;
	struct syn s;
	int v, i;

	for (v = 1; v <= 4; v++) {
		struct spec sp = { .version = v, .insns = insns, .n = sizeof(insns), .enc = 0xff };

		if (v == 2)
			continue;
		syn_build(&s, &sp);
		ASSERT_EQ(0, syn_row(&s, SYN_PC + 1, &r)) TH_LOG("version %d", v);
		EXPECT_EQ(16, r.cfa_off);
	}
	for (i = 0; i < (int)sizeof(encs); i++) {
		struct spec sp = { .enc = encs[i], .insns = insns, .n = sizeof(insns) };

		syn_build(&s, &sp);
		ASSERT_EQ(0, syn_row(&s, SYN_PC + 1, &r)) TH_LOG("encoding %#x", encs[i]);
		EXPECT_EQ(16, r.cfa_off);
	}
	{
		struct spec sp = { .aug = "zPLRS", .aug_data = aug_plrs,
				   .aug_len = sizeof(aug_plrs), .enc = 0x1b, .fde_aug = lsda,
				   .fde_aug_len = sizeof(lsda), .insns = insns, .n = sizeof(insns) };

		syn_build(&s, &sp);
		ASSERT_EQ(0, syn_row(&s, SYN_PC, &r));
		EXPECT_TRUE(r.signal);
		EXPECT_EQ(SYN_CFA0, r.cfa_off);
		ASSERT_EQ(0, syn_row(&s, SYN_PC + 1, &r));
		EXPECT_EQ(16, r.cfa_off);
	}
	{
		/* no augmentation: absptr FDEs, no augmentation data */
		struct spec sp = { .aug = "", .enc = 0x00, .insns = insns, .n = sizeof(insns) };

		syn_build(&s, &sp);
		ASSERT_EQ(0, syn_row(&s, SYN_PC + 1, &r));
		EXPECT_EQ(16, r.cfa_off);
	}
	/*
	 * AArch64's augmentations, without data: 'B', the return address
	 * signed with the B key; 'G', MTE-tagged frames.  Nothing else has them.
	 */
	for (i = 0; i < (int)ARRAY_SIZE(aarch64_augs); i++) {
		struct spec sp = { .aug = aarch64_augs[i], .insns = insns, .n = sizeof(insns),
				   .enc = 0xff };

		syn_build(&s, &sp);
#ifdef PD_UW_ARM64
		ASSERT_EQ(0, syn_row(&s, SYN_PC + 1, &r))
			TH_LOG("augmentation %s", aarch64_augs[i]);
		EXPECT_EQ(16, r.cfa_off);
		EXPECT_EQ(PD_UW_SAME, r.reg[PD_UW_RA].how);
		EXPECT_EQ(strchr(aarch64_augs[i], 'S') != NULL, r.signal);
#else
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC + 1, &r)) TH_LOG("augmentation %s",
									aarch64_augs[i]);
#endif
	}
}

/* What the parser refuses, and why */
TEST(synthetic_refusals)
{
	static const u8 plt11[] = { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33,
				    0x24, 0x22 };
#ifdef PD_UW_ARM64
	/* DW_OP_breg31 (sp) 16; DW_OP_breg29 (x29) 0 */
	static const u8 cfa_expr[] = { 0x0f, 2, 0x8f, 16 };
	static const u8 expr_x19[] = { 0x10, 19, 2, 0x8d, 0 };
	static const u8 vexpr_x29[] = { 0x16, 29, 2, 0x8f, 0 };
	static const u8 vexpr_x30[] = { 0x16, 30, 2, 0x8f, 0 };
	static const u8 cfa_v0[] = { 0x0c, 64, 0 };
	static const u8 cfa_32[] = { 0x0c, 32, 0 };
	static const u8 x19_in_v8[] = { 0x09, 19, 72 };
	static const u8 negate[] = { 0x2d, 0x2d };
#else
	static const u8 plt9[] = { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x39, 0x2a, 0x33,
				   0x24, 0x22 };
	static const u8 plt_then_offset[] = { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a,
					      0x33, 0x24, 0x22, 0x0e, 16 };
	static const u8 expr_rbx[] = { 0x10, 3, 2, 0x76, 0 };
	static const u8 vexpr_rbp[] = { 0x16, 6, 2, 0x76, 0 };
	static const u8 cfa_xmm[] = { 0x0c, 17, 8 };
	static const u8 cfa_rip[] = { 0x0c, 16, 8 };
	static const u8 rbx_in_xmm[] = { 0x09, 3, 17 };
	/* DW_CFA_GNU_window_save (SPARC) elsewhere */
	static const u8 negate[] = { 0x2d };
#endif
	static const u8 remember5[] = { 0x0a, 0x0a, 0x0a, 0x0a, 0x0a };
	static const u8 remember4[] = { 0x0a, 0x0a, 0x0a, 0x0a, 0x0b, 0x0b, 0x0b, 0x0b };
	static const u8 restore0[] = { 0x0b };
	static const u8 set_loc[] = { 0x01, 0, 0, 2, 0, 0, 0, 0, 0 };
	static const u8 truncated[] = { 0x83 };
	static const u8 long_leb[] = { 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
				       0x80, 0x80, 0 };
	static const u8 neg_offset[] = { 0x2f, 3, 2 };
	static const u8 no_cfa[] = { 0x80 | PD_UW_RA, 1 };
	static const u8 nop;
	static u8 nops[1100];
	static const struct {
		const char *what;
		struct spec sp;
		int ret;
	} cases[] = {
#ifdef PD_UW_ARM64
		/* x86-64's PLT expression is no AArch64 one: no expression is */
		{ "PLT lit11", { .insns = plt11, .n = sizeof(plt11) }, -EINVAL },
		{ "CFA expression", { .insns = cfa_expr, .n = sizeof(cfa_expr) }, -EINVAL },
		{ "expression x19", { .insns = expr_x19, .n = sizeof(expr_x19) }, -EINVAL },
		{ "val_expression x29", { .insns = vexpr_x29, .n = sizeof(vexpr_x29) }, -EINVAL },
		{ "val_expression x30", { .insns = vexpr_x30, .n = sizeof(vexpr_x30) }, -EINVAL },
		{ "CFA in v0", { .insns = cfa_v0, .n = sizeof(cfa_v0) }, -EINVAL },
		{ "CFA in register 32", { .insns = cfa_32, .n = sizeof(cfa_32) }, -EINVAL },
		{ "x19 in v8", { .insns = x19_in_v8, .n = sizeof(x19_in_v8) }, -EINVAL },
		{ "negate_ra_state", { .insns = negate, .n = sizeof(negate) }, 0 },
#else
		{ "PLT lit11", { .insns = plt11, .n = sizeof(plt11) }, 0 },
		{ "PLT lit9", { .insns = plt9, .n = sizeof(plt9) }, -EINVAL },
		{ "offset of a PLT CFA", { .insns = plt_then_offset, .n = sizeof(plt_then_offset) },
		  -EINVAL },
		{ "expression rbx", { .insns = expr_rbx, .n = sizeof(expr_rbx) }, -EINVAL },
		{ "val_expression rbp", { .insns = vexpr_rbp, .n = sizeof(vexpr_rbp) }, -EINVAL },
		{ "CFA in xmm0", { .insns = cfa_xmm, .n = sizeof(cfa_xmm) }, -EINVAL },
		{ "CFA in rip", { .insns = cfa_rip, .n = sizeof(cfa_rip) }, -EINVAL },
		{ "rbx in xmm0", { .insns = rbx_in_xmm, .n = sizeof(rbx_in_xmm) }, -EINVAL },
		{ "negate_ra_state", { .insns = negate, .n = sizeof(negate) }, -EINVAL },
#endif
		{ "remember_state x5", { .insns = remember5, .n = sizeof(remember5) }, -EINVAL },
		{ "remember_state x4", { .insns = remember4, .n = sizeof(remember4) }, 0 },
		{ "restore_state, none", { .insns = restore0, .n = sizeof(restore0) }, -EINVAL },
		{ "set_loc", { .insns = set_loc, .n = sizeof(set_loc) }, -EINVAL },
		{ "cut by the FDE's end", { .insns = truncated, .n = sizeof(truncated) }, -EINVAL },
		{ "11-byte LEB128", { .insns = long_leb, .n = sizeof(long_leb) }, -EINVAL },
		{ "GNU_negative_offset", { .insns = neg_offset, .n = sizeof(neg_offset) }, -EINVAL },
		{ "1100 instructions", { .insns = nops, .n = sizeof(nops) }, -EINVAL },
		{ "no CFA", { .cie_insns = no_cfa, .cie_n = sizeof(no_cfa), .insns = &nop, .n = 1 },
		  -EINVAL },
		{ "CIE version 2", { .version = 2, .insns = &nop, .n = 1 }, -EINVAL },
		{ "augmentation zX", { .aug = "zRX", .insns = &nop, .n = 1 }, -EINVAL },
		{ "augmentation eh", { .aug = "eh", .insns = &nop, .n = 1 }, -EINVAL },
		{ "return address in r15", { .ra = 15, .insns = &nop, .n = 1 }, -EINVAL },
		{ "datarel FDE", { .enc = 0x3b, .insns = &nop, .n = 1 }, -EINVAL },
		{ "indirect FDE", { .enc = 0x9b, .insns = &nop, .n = 1 }, -EINVAL },
	};
	struct pd_uw_row r;
	struct syn s;
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(cases); i++) {
		struct spec sp = cases[i].sp;

		if (!sp.enc)
			sp.enc = 0xff;
		if (!strcmp(cases[i].what, "datarel FDE") || !strcmp(cases[i].what, "indirect FDE")) {
			/* the FDE is written pcrel; the CIE claims otherwise */
			sp.enc = 0x1b;
			syn_build(&s, &sp);
			/* after "zR", 1, -8, the RA column, 1 */
			s.mem[s.cie - SYN_BASE + 16] = cases[i].sp.enc;
		} else {
			syn_build(&s, &sp);
		}
		EXPECT_EQ(cases[i].ret, syn_row(&s, SYN_PC, &r)) TH_LOG("%s", cases[i].what);
		if (!cases[i].ret && !strcmp(cases[i].what, "PLT lit11")) {
			EXPECT_EQ(PD_UW_CFA_PLT, r.cfa_how);
			EXPECT_EQ(8, r.cfa_off);
		}
	}

	/* the hdr and the records' lengths */
	{
		struct spec sp = { .insns = &nop, .n = 1, .enc = 0xff };

		syn_build(&s, &sp);
		ASSERT_EQ(0, syn_row(&s, SYN_PC, &r));
		s.mem[0] = 2;
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC, &r));
		syn_build(&s, &sp);
		s.mem[3] = 0x1b;		/* table not datarel */
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC, &r));
		syn_build(&s, &sp);
		s.mem[2] = 0xff;		/* no table */
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC, &r));
		syn_build(&s, &sp);
		s.im.eh_hdr_size = 19;		/* the table's entry cut */
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC, &r));
		syn_build(&s, &sp);
		*(u32 *)(s.mem + (s.fde - SYN_BASE)) = 0;		/* a terminator */
		EXPECT_EQ(-ENOENT, syn_row(&s, SYN_PC, &r));
		syn_build(&s, &sp);
		*(u32 *)(s.mem + (s.fde - SYN_BASE)) = 0xffffffff;	/* 64-bit DWARF */
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC, &r));
		syn_build(&s, &sp);
		*(u32 *)(s.mem + (s.fde - SYN_BASE + 4)) = 0;		/* a CIE, not an FDE */
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC, &r));
		syn_build(&s, &sp);
		*(u32 *)(s.mem + (s.cie - SYN_BASE)) = 0xffffffff;
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC, &r));
		syn_build(&s, &sp);
		*(s32 *)(s.mem + 12) += 1;	/* the table's location is not the FDE's */
		EXPECT_EQ(-EINVAL, syn_row(&s, SYN_PC + 1, &r));
		syn_build(&s, &sp);
		*(s32 *)(s.mem + 16) = 0x4000;	/* the FDE outside the image */
		EXPECT_EQ(-EFAULT, syn_row(&s, SYN_PC, &r));
	}
}

/* A fixed PRNG (xorshift64) */
static u64 rnd(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* .eh_frame's address and size, from the section headers */
static int eh_frame_section(const char *path, unsigned long *addr, unsigned long *size)
{
	FILE *p;
	char cmd[512], line[512];
	int ret = -1;

	snprintf(cmd, sizeof(cmd), "LC_ALL=C " READELF " -SW '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, " .eh_frame ");

		if (s && sscanf(s, " .eh_frame %*s %lx %*x %lx", addr, size) == 2)
			ret = 0;
	}
	pclose(p);
	return ret;
}

/*
 * Random bytes of the table, the FDEs and CIEs changed: any answer, no
 * ASan or UBSan report, a bounded read, a sane row when it gives one.
 */
TEST(corrupted_tables)
{
	const char *path = OBJ_SMALL, *why = tools_missing(false);
	unsigned long eh, eh_size, ip;
	int i, j, k, res[5] = { 0 };
	struct pd_uw_reader rd;
	struct pd_uw_row row;
	struct frames f;
	struct uw_image im;
	u8 *save_eh, *save_hdr;
	u64 seed = 0x9e3779b97f4a7c15ull;
	size_t max_read = 0;

	if (why)
		SKIP(return, "%s", why);
	if (access(path, R_OK))
		SKIP(return, "no %s", path);
	ASSERT_EQ(0, uw_image_load(&im, path));
	ASSERT_EQ(0, frames_load(&f, path));
	ASSERT_EQ(0, eh_frame_section(path, &eh, &eh_size));
	ASSERT_LE(im.base, eh);
	ASSERT_LE(eh + eh_size, im.base + im.size);
	save_eh = malloc(eh_size);
	save_hdr = malloc(im.eh_hdr_size);
	ASSERT_NE(NULL, save_eh);
	ASSERT_NE(NULL, save_hdr);
	memcpy(save_eh, im.mem + (eh - im.base), eh_size);
	memcpy(save_hdr, im.mem + (im.eh_hdr - im.base), im.eh_hdr_size);

	for (i = 0; i < 2000; i++) {
		const struct xrec *fde;
		int n = 1 + rnd(&seed) % 8;

		memcpy(im.mem + (eh - im.base), save_eh, eh_size);
		memcpy(im.mem + (im.eh_hdr - im.base), save_hdr, im.eh_hdr_size);
		do
			fde = &f.recs[rnd(&seed) % f.nrecs];
		while (fde->is_cie || fde->lo >= fde->hi);
		for (k = 0; k < n; k++) {
			unsigned long at;
			u64 r = rnd(&seed);

			switch (r % 4) {
			case 0:		/* the header and table */
				at = im.eh_hdr + (r >> 8) % im.eh_hdr_size;
				break;
			case 1:		/* anywhere in .eh_frame */
				at = eh + (r >> 8) % eh_size;
				break;
			case 2:		/* the FDE looked up */
				at = eh + fde->off + (r >> 8) % (fde->len + 4);
				break;
			default:	/* its CIE */
				at = eh + fde->cie + (r >> 8) % 32;
				break;
			}
			if (at >= eh + eh_size && (at < im.eh_hdr || at >= im.eh_hdr + im.eh_hdr_size))
				continue;
			im.mem[at - im.base] = r >> 40;
		}
		for (k = 0; k < 4; k++) {
			u64 r = rnd(&seed);
			int ret;

			ip = k == 3 ? im.text + r % (im.text_end - im.text) :
				      fde->lo + r % (fde->hi - fde->lo);
			uw_reader_init(&rd, &im, k == 2 ? 40 : BIG_BUDGET);
			ret = pd_ehframe_row(&rd, im.eh_hdr, im.eh_hdr_size, ip, &row);
			if (k != 2 && BIG_BUDGET - rd.budget > max_read)
				max_read = BIG_BUDGET - rd.budget;
			switch (ret) {
			case 0:
				res[0]++;
				ASSERT_TRUE(row.cfa_how == PD_UW_CFA_REG || row.cfa_how == PD_UW_CFA_PLT);
				ASSERT_GT(PD_UW_NGPRS, row.cfa_reg);
				for (j = 0; j < PD_UW_NREGS; j++) {
					ASSERT_GE(PD_UW_IN_REG, row.reg[j].how);
					ASSERT_GT(PD_UW_NREGS, row.reg[j].reg);
				}
				break;
			case -ENOENT:
				res[1]++;
				break;
			case -EINVAL:
				res[2]++;
				break;
			case -EFAULT:
				res[3]++;
				break;
			case -E2BIG:
				res[4]++;
				break;
			default:
				ASSERT_EQ(0, ret);
			}
		}
	}
	TH_LOG("8000 lookups: %d rows, %d -ENOENT, %d -EINVAL, %d -EFAULT, %d -E2BIG; "
	       "at most %zu bytes read", res[0], res[1], res[2], res[3], res[4], max_read);
	/* 1024 instructions of at most 21 bytes, two headers, the search */
	EXPECT_GT(32768UL, max_read);
	EXPECT_LT(0, res[0]);
	EXPECT_LT(0, res[2]);
	EXPECT_LT(0, res[4]);
	free(save_eh);
	free(save_hdr);
	frames_free(&f);
	uw_image_free(&im);
}

TEST_HARNESS_MAIN
