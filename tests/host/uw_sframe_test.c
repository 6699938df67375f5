// SPDX-License-Identifier: GPL-2.0-only
/*
 * uw_sframe_test - module/uw_sframe.c, pd_sframe_row(), in user space
 *
 * Real objects: a small program built here with -Wa,--gsframe, by the
 * host's gcc (binutils 2.40: SFrame version 1) and by the trixie chroot's
 * (binutils 2.44: version 2), checked at every byte of every function
 * against 'objdump --sframe' of the same toolchain.  The PLT's FDEs are
 * PC-mask ones; version 1 has no repeat size for them, so the parser
 * refuses them there (-EINVAL) and decodes them in version 2.
 *
 * Tables built here by hand from the format's definition (binutils'
 * include/sframe.h): version 3, which no toolchain here writes, every
 * FRE type and offset size, PC-relative starts, PC-mask FDEs, the
 * undefined RA, and the malformed tables that must give -EINVAL.
 *
 * Then random corruption of real tables, read through a reader that holds
 * the section only: any answer but a read outside the section (-EFAULT)
 * or a sanitizer's report is fine.
 *
 * Built with -DPD_UW_ARM64 (uw_sframe_arm64_test), the parser reads the
 * AArch64 ABI's tables: the program, cross-built by clang and assembled
 * by GNU as 2.40 (aarch64-linux-gnu-as, version 1), plainly and with
 * pointer authentication (mangled RAs, B-key FDEs), checked against
 * 'aarch64-linux-gnu-readelf --sframe'; no toolchain here writes version
 * 2 for AArch64, so the hand-made tables check it, and 3.  There the FREs
 * have a CFA offset, then an RA offset, then an FP one; without an RA
 * offset the RA is still in x30.  Without the cross tools, the tests of
 * real code are skipped, with the reason.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "uw_image.h"

#ifndef CHROOT
#define CHROOT		"/var/cache/perf-defer/chroot/trixie"
#endif
#define SEC_ADDR	0x10000UL
#define BIG_BUDGET	(1u << 20)

/* the header's ABI and fixed RA offset; the most offsets an FRE has; its least CFA offset */
#ifdef PD_UW_ARM64
#define ABI		2		/* AArch64, little-endian */
#define OTHER_ABI	3
#define FIXED_RA	0		/* none */
#define MAX_OFFSETS	3		/* CFA, RA, FP */
#define MIN_CFA		0
#define HOST_CC		"clang --target=aarch64-linux-gnu " \
			"--ld-path=/usr/bin/aarch64-linux-gnu-ld -fno-integrated-as"
#define HOST_DUMP	"aarch64-linux-gnu-readelf --sframe"
#define PAC_FLAGS	"-mbranch-protection=pac-ret+leaf+b-key"
#else
#define ABI		3		/* AMD64, little-endian */
#define OTHER_ABI	2
#define FIXED_RA	(-8)
#define MAX_OFFSETS	2		/* CFA, FP */
#define MIN_CFA		8		/* the RA, at CFA-8, is at or above the base */
#define HOST_CC		"gcc"
#define HOST_DUMP	"objdump --sframe"
#endif

/* ---- the program, built in the constructor ---- */

static const char prog_src[] =
	"#include <alloca.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"__attribute__((noinline)) int leaf(int a) { return a * 3 + 1; }\n"
	"__attribute__((noinline)) int nonleaf(int a)\n"
	"{ int r = leaf(a) + leaf(a + 1); printf(\"%d\\n\", r); return r + 1; }\n"
	"__attribute__((noinline)) int with_alloca(int n)\n"
	"{ char *p = alloca(n); memset(p, n, n); return nonleaf(p[n / 2]) + p[0]; }\n"
	"__attribute__((noinline)) int big2(int n)\n"
	"{ volatile char b[5000]; b[n] = 1; return b[n / 2] + leaf(n); }\n"
	"__attribute__((noinline)) int big4(int n)\n"
	"{ volatile char b[70000]; b[n] = 1; return b[n / 2] + leaf(n); }\n"
	"int main(int argc, char **argv)\n"
	"{ (void)argv; return with_alloca(argc * 16 + 8) + big2(argc) + big4(argc) +\n"
	"  (int)strlen(getenv(\"HOME\") ? getenv(\"HOME\") : \"\"); }\n";

#define CFLAGS_SF "-O2 -fomit-frame-pointer -Wa,--gsframe"
/* tests/vm's wl_nofp_sframe, as tests/vm/Makefile builds it: static, no frame pointers */
#define WL_FLAGS_SF "-O1 -fomit-frame-pointer -funwind-tables -fasynchronous-unwind-tables " \
		    "-fno-inline -fno-optimize-sibling-calls -fno-pie -Wa,--gsframe " \
		    "-static -pthread -Wl,--eh-frame-hdr"

static char tmpdir[] = "/tmp/pd-sframe-XXXXXX";
static bool have_tmpdir;
static bool host_built, wl_built;
/* why the program was not built; host_skip: for want of the tools, a skip */
static char host_why[256] = "not tried";
static bool host_skip;
#ifndef PD_UW_ARM64
static char croot_dir[PATH_MAX];	/* the chroot's /tmp/pd-sframe-XXXXXX, host path */
static bool have_croot_dir;
static bool croot_built;
static char croot_why[256] = "not tried";
#endif

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(text, f) >= 0;
	return !fclose(f) && ok;
}

/* wl: tests/vm's wl_nofp_sframe, by the compiler of p1 */
static void build_wl(void)
{
	if (!access(PD_WL_CALLS, R_OK))
		wl_built = !sh("cd '%s' && " HOST_CC " " WL_FLAGS_SF " -o wl '%s' 2>wl.err && "
			       HOST_DUMP " wl >wl.sframe 2>&1", tmpdir, PD_WL_CALLS);
}

#ifdef PD_UW_ARM64
/* The cross tools: false, and why in host_why, if one is missing */
static bool have_cross_tools(void)
{
	static const char *const tools[] = {
		"clang", "aarch64-linux-gnu-as", "aarch64-linux-gnu-ld",
		"aarch64-linux-gnu-readelf",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tools); i++) {
		if (sh("command -v %s >/dev/null 2>&1", tools[i])) {
			snprintf(host_why, sizeof(host_why), "no %s to cross-build with", tools[i]);
			return false;
		}
	}
	if (access("/usr/aarch64-linux-gnu/lib/crt1.o", R_OK)) {
		snprintf(host_why, sizeof(host_why),
			 "no /usr/aarch64-linux-gnu/lib/crt1.o (libc6-dev-arm64-cross)");
		return false;
	}
	return true;
}

/* p1, and p1pac with pointer authentication (B key), and what readelf says of them */
static void __attribute__((constructor)) build_inputs(void)
{
	char path[PATH_MAX + 16];

	have_tmpdir = mkdtemp(tmpdir) != NULL;
	if (!have_tmpdir)
		return;
	if (!have_cross_tools()) {
		host_skip = true;
		return;
	}
	snprintf(path, sizeof(path), "%s/p.c", tmpdir);
	if (write_file(path, prog_src))
		host_built = !sh("cd '%s' && "
				 HOST_CC " " CFLAGS_SF " -o p1 p.c 2>cc1.err && "
				 HOST_DUMP " p1 >p1.sframe 2>&1 && "
				 HOST_CC " " CFLAGS_SF " " PAC_FLAGS " -o p1pac p.c 2>cc2.err && "
				 HOST_DUMP " p1pac >p1pac.sframe 2>&1", tmpdir);
	if (!host_built)
		snprintf(host_why, sizeof(host_why), "cross-building failed, see %.180s/cc*.err",
			 tmpdir);
	else
		build_wl();
}

static void __attribute__((destructor)) remove_inputs(void)
{
	if (have_tmpdir && sh("rm -rf '%s'", tmpdir))
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}
#else
static void __attribute__((constructor)) build_inputs(void)
{
	char path[PATH_MAX + 16], *name;
	struct stat st;

	have_tmpdir = mkdtemp(tmpdir) != NULL;
	if (!have_tmpdir)
		return;
	snprintf(path, sizeof(path), "%s/p.c", tmpdir);
	if (write_file(path, prog_src))
		host_built = !sh("cd '%s' && " HOST_CC " " CFLAGS_SF " -o p1 p.c 2>gcc1.err && "
				 HOST_DUMP " p1 >p1.sframe 2>&1", tmpdir);
	if (!host_built)
		snprintf(host_why, sizeof(host_why),
			 "host gcc -Wa,--gsframe failed, see %.180s/gcc1.err", tmpdir);
	else
		build_wl();

	if (stat(CHROOT "/bin/sh", &st)) {
		snprintf(croot_why, sizeof(croot_why), "no chroot at %s", CHROOT);
		return;
	}
	if (geteuid()) {
		snprintf(croot_why, sizeof(croot_why), "chroot needs root");
		return;
	}
	snprintf(croot_dir, sizeof(croot_dir), CHROOT "/tmp/pd-sframe-XXXXXX");
	have_croot_dir = mkdtemp(croot_dir) != NULL;
	if (!have_croot_dir) {
		snprintf(croot_why, sizeof(croot_why), "cannot make a directory in %s/tmp", CHROOT);
		return;
	}
	name = croot_dir + strlen(CHROOT);
	snprintf(path, sizeof(path), "%s/p.c", croot_dir);
	if (!write_file(path, prog_src))
		return;
	croot_built = !sh("chroot " CHROOT " /bin/sh -c 'cd %s && "
			  "CC=$(command -v gcc || command -v gcc-14) && "
			  "$CC " CFLAGS_SF " -o p2 p.c 2>gcc2.err && "
			  "objdump --sframe p2 >p2.sframe 2>&1'", name);
	if (!croot_built)
		snprintf(croot_why, sizeof(croot_why), "the chroot's gcc or objdump failed (%.180s)",
			 croot_dir);
}

static void __attribute__((destructor)) remove_inputs(void)
{
	if (have_tmpdir && sh("rm -rf '%s'", tmpdir))
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	if (have_croot_dir && sh("rm -rf '%s'", croot_dir))
		fprintf(stderr, "cannot remove %s\n", croot_dir);
}
#endif

/* The program built above: skipped without the tools, failed if it could not be built */
#define NEED_HOST_BUILT() do {							\
	if (!host_built && host_skip)						\
		SKIP(return, "%s", host_why);					\
	ASSERT_TRUE(host_built) TH_LOG("%s", host_why);				\
} while (0)

/* ---- objdump --sframe (readelf --sframe), parsed ---- */

enum { R_SAME, R_AT };

struct ofre {
	u64	pc;		/* address; the offset in the block for a PC-mask FDE */
	bool	ra_undef;
	bool	cfa_sp;
	s64	cfa_off;
	int	fp_how;
	s64	fp_off;
	s64	ra_off;
	bool	ra_x30;		/* AArch64: the RA not saved, still in x30 */
	bool	mangled;
};

struct ofde {
	u64		pc, size;
	bool		mask;
	bool		key_b;		/* AArch64: "pauth = B key" */
	int		nfres;
	struct ofre	fre[64];
};

struct odump {
	int		ver;
	int		nfdes;
	struct ofde	fde[64];
};

/* 0, or -1 for a line not understood */
static int parse_fre(struct ofde *f, const char *line)
{
	char t1[64], t2[64], t3[64];
	struct ofre *r;
	char base[3];
	u64 pc;
	int n;

	n = sscanf(line, "%" SCNx64 " %63s %63s %63s", &pc, t1, t2, t3);
	if (n < 3 || f->nfres >= 64)
		return -1;
	r = &f->fre[f->nfres++];
	memset(r, 0, sizeof(*r));
	r->pc = pc;
	if (!strcmp(t1, "RA") && !strcmp(t2, "undefined")) {
		r->ra_undef = true;
		return 0;
	}
	if (n < 4 || sscanf(t1, "%2[a-z]%" SCNd64, base, &r->cfa_off) != 2)
		return -1;
	if (!strcmp(base, "sp"))
		r->cfa_sp = true;
	else if (strcmp(base, "fp"))
		return -1;
	if (!strcmp(t2, "u")) {
		r->fp_how = R_SAME;
	} else if (t2[0] == 'c') {
		r->fp_how = R_AT;
		r->fp_off = strtoll(t2 + 1, NULL, 10);
	} else {
		return -1;
	}
	r->mangled = strstr(t3, "[s]") != NULL;
#ifdef PD_UW_ARM64
	/* 'u': no RA offset, the RA is in x30; no fixed offset */
	if (t3[0] == 'u')
		r->ra_x30 = true;
#else
	/* 'f': the header's fixed offset; 'u' (version 1's objdump): the same */
	if (t3[0] == 'f' || t3[0] == 'u')
		r->ra_off = -8;
#endif
	else if (t3[0] == 'c')
		r->ra_off = strtoll(t3 + 1, NULL, 10);
	else
		return -1;
	return 0;
}

static int parse_objdump(struct odump *d, const char *path)
{
	char line[512];
	struct ofde *f = NULL;
	int idx, bad = 0;
	FILE *fp;

	memset(d, 0, sizeof(*d));
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		char *s = line + strspn(line, " \t");
		u64 pc, size;

		if (sscanf(s, "Version: SFRAME_VERSION_%d", &d->ver) == 1)
			continue;
		if (sscanf(s, "func idx [%d]: pc = 0x%" SCNx64 ", size = %" SCNu64, &idx, &pc,
			   &size) == 3) {
			if (idx != d->nfdes || d->nfdes >= 64) {
				bad++;
				f = NULL;
				continue;
			}
			f = &d->fde[d->nfdes++];
			f->pc = pc;
			f->size = size;
			f->key_b = strstr(s, "pauth = B key") != NULL;
			continue;
		}
		if (!strncmp(s, "STARTPC", 7)) {
			if (f)
				f->mask = !strncmp(s, "STARTPC[m]", 10);
			continue;
		}
		if (f && strspn(s, "0123456789abcdef") == 16 && parse_fre(f, s))
			bad++;
	}
	fclose(fp);
	return bad ? -1 : 0;
}

/* ---- checking an object against its dump ---- */

struct obj {
	struct uw_image	im;
	struct odump	d;
};

static int load_obj(struct obj *o, const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (uw_image_load(&o->im, path))
		return -1;
	snprintf(path, sizeof(path), "%s/%s.sframe", dir, name);
	if (parse_objdump(&o->d, path)) {
		uw_image_free(&o->im);
		return -1;
	}
	return 0;
}

static int sf_row(const struct uw_image *im, unsigned long ip, struct pd_uw_row *row,
		  size_t budget)
{
	struct pd_uw_reader rd;

	uw_reader_init(&rd, im, budget);
	return pd_sframe_row(&rd, im->sframe, im->sframe_size, ip, row);
}

/* The repeat size of FDE @i of a version 2 table, read here independently */
static unsigned int raw_rep_v2(const struct uw_image *im, int i)
{
	const u8 *h = im->mem + (im->sframe - im->base);
	u32 fdeoff;

	memcpy(&fdeoff, h + 20, 4);
	return h[28 + h[7] + fdeoff + 20 * i + 17];
}

static bool row_matches(const struct pd_uw_row *row, const struct ofre *e, char *why,
			size_t wlen)
{
	int i;

	if (e->ra_undef) {
		if (row->reg[PD_UW_RA].how != PD_UW_UNDEF) {
			snprintf(why, wlen, "RA not undefined");
			return false;
		}
		return true;
	}
	if (row->cfa_how != PD_UW_CFA_REG ||
	    row->cfa_reg != (e->cfa_sp ? PD_UW_SP : PD_UW_FP) || row->cfa_off != e->cfa_off) {
		snprintf(why, wlen, "CFA %d/r%d%+lld, want %s%+lld", row->cfa_how, row->cfa_reg,
			 (long long)row->cfa_off, e->cfa_sp ? "sp" : "fp", (long long)e->cfa_off);
		return false;
	}
	if (e->ra_x30 ? row->reg[PD_UW_RA].how != PD_UW_SAME :
	    row->reg[PD_UW_RA].how != PD_UW_AT_CFA || row->reg[PD_UW_RA].off != e->ra_off) {
		snprintf(why, wlen, "RA %d%+lld", row->reg[PD_UW_RA].how,
			 (long long)row->reg[PD_UW_RA].off);
		return false;
	}
	if (e->fp_how == R_SAME ? row->reg[PD_UW_FP].how != PD_UW_SAME :
	    row->reg[PD_UW_FP].how != PD_UW_AT_CFA || row->reg[PD_UW_FP].off != e->fp_off) {
		snprintf(why, wlen, "FP %d%+lld", row->reg[PD_UW_FP].how,
			 (long long)row->reg[PD_UW_FP].off);
		return false;
	}
	for (i = 0; i < PD_UW_NREGS; i++) {
		if (i != PD_UW_RA && i != PD_UW_FP && row->reg[i].how != PD_UW_SAME) {
			snprintf(why, wlen, "reg %d not same", i);
			return false;
		}
	}
	return true;
}

struct cmp_stats {
	long	ips, rows, mismatches, refused_mask, fdes_ok, mask_fdes;
	long	ra_x30, mangled, key_b;	/* AArch64: rows of each, FDEs with the B key */
};

/*
 * Every byte of every FDE against the dump.  A PC-mask FDE of version 1
 * must be refused (-EINVAL) at every byte, and on x86-64 an FRE with a
 * mangled RA.
 */
static void compare_obj(struct __test_metadata *_metadata, const struct obj *o,
			struct cmp_stats *st)
{
	struct pd_uw_row row;
	char why[160];
	int i, j, ret;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < o->d.nfdes; i++) {
		const struct ofde *f = &o->d.fde[i];
		unsigned int rep = 0;
		long bad = st->mismatches;
		u64 off;

		if (f->mask) {
			st->mask_fdes++;
			if (o->d.ver == 2)
				rep = raw_rep_v2(&o->im, i);
		}
		st->key_b += f->key_b;
		for (off = 0; off < f->size; off++) {
			u64 key = off;
			const struct ofre *e = NULL;

			st->ips++;
			ret = sf_row(&o->im, f->pc + off, &row, BIG_BUDGET);
			if (f->mask && o->d.ver == 1) {
				if (ret == -EINVAL) {
					st->refused_mask++;
				} else {
					st->mismatches++;
					TH_LOG("v1 mask FDE %d: %#lx gave %d", i,
					       (unsigned long)(f->pc + off), ret);
				}
				continue;
			}
			if (f->mask)
				key = rep ? off % rep : off;
			for (j = 0; j < f->nfres; j++) {
				u64 s = f->mask ? f->fre[j].pc : f->fre[j].pc - f->pc;

				if (s <= key)
					e = &f->fre[j];
			}
			if (!e) {
				if (ret != -ENOENT) {
					st->mismatches++;
					TH_LOG("FDE %d %#lx: before its first FRE, got %d", i,
					       (unsigned long)(f->pc + off), ret);
				}
				continue;
			}
#ifndef PD_UW_ARM64
			if (e->mangled) {
				if (ret != -EINVAL)
					st->mismatches++;
				continue;
			}
#endif
			if (ret) {
				st->mismatches++;
				TH_LOG("FDE %d %#lx: %d", i, (unsigned long)(f->pc + off), ret);
				continue;
			}
			st->rows++;
			st->ra_x30 += e->ra_x30;
			st->mangled += e->mangled;
			if (!row_matches(&row, e, why, sizeof(why))) {
				st->mismatches++;
				TH_LOG("FDE %d %#lx: %s", i, (unsigned long)(f->pc + off), why);
			}
		}
		if (st->mismatches == bad && !(f->mask && o->d.ver == 1))
			st->fdes_ok++;
	}
}

/* -ENOENT at every byte of the text that no FDE covers, and far away */
static void check_uncovered(struct __test_metadata *_metadata, const struct obj *o,
			    long *n)
{
	static const unsigned long far[] = { 0, 1, 0xffffffffffffffffUL, 0x7fffffffffffUL };
	struct pd_uw_row row;
	unsigned long ip;
	unsigned int k;
	int i;

	*n = 0;
	for (ip = o->im.text; ip < o->im.text_end; ip++) {
		bool in = false;

		for (i = 0; i < o->d.nfdes; i++)
			if (ip >= o->d.fde[i].pc && ip - o->d.fde[i].pc < o->d.fde[i].size)
				in = true;
		if (in)
			continue;
		EXPECT_EQ(-ENOENT, sf_row(&o->im, ip, &row, BIG_BUDGET)) TH_LOG("ip %#lx", ip);
		(*n)++;
	}
	for (k = 0; k < ARRAY_SIZE(far); k++) {
		EXPECT_EQ(-ENOENT, sf_row(&o->im, far[k], &row, BIG_BUDGET));
		(*n)++;
	}
	ip = o->d.fde[o->d.nfdes - 1].pc + o->d.fde[o->d.nfdes - 1].size;
	EXPECT_EQ(-ENOENT, sf_row(&o->im, ip, &row, BIG_BUDGET));
	EXPECT_EQ(-ENOENT, sf_row(&o->im, o->d.fde[0].pc - 1, &row, BIG_BUDGET));
}

/* A tiny budget: -E2BIG, never a row or another error */
static void check_budget(struct __test_metadata *_metadata, const struct obj *o)
{
	const struct ofde *f = &o->d.fde[o->d.nfdes - 1];
	unsigned long ip = f->pc + f->size - 1;
	struct pd_uw_reader rd;
	struct pd_uw_row row;
	size_t b, used;

	uw_reader_init(&rd, &o->im, BIG_BUDGET);
	ASSERT_EQ(0, pd_sframe_row(&rd, o->im.sframe, o->im.sframe_size, ip, &row));
	used = BIG_BUDGET - rd.budget;
	TH_LOG("one lookup: %zu bytes in %zu reads", used, rd.reads);
	ASSERT_GT(used, 28U);
	ASSERT_LT(used, 512U);
	for (b = 0; b < used; b++) {
		uw_reader_init(&rd, &o->im, b);
		ASSERT_EQ(-E2BIG, pd_sframe_row(&rd, o->im.sframe, o->im.sframe_size, ip, &row))
			TH_LOG("budget %zu", b);
	}
	uw_reader_init(&rd, &o->im, used);
	ASSERT_EQ(0, pd_sframe_row(&rd, o->im.sframe, o->im.sframe_size, ip, &row));
}

/* ---- corruption ---- */

static u64 rng_state;

static u64 rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

struct corrupt_stats {
	long	calls, ok, einval, enoent, e2big;
};

/*
 * @seeds copies of the section @sec (@size bytes at @addr), each with a few
 * bytes changed, looked up at IPs in [@lo, @hi) and nearby.  The reader holds
 * the section alone: a read outside it would be -EFAULT.
 */
static void corrupt(struct __test_metadata *_metadata, const u8 *sec, size_t size,
		    unsigned long addr, unsigned long lo, unsigned long hi, int seeds,
		    struct corrupt_stats *cs)
{
	u8 *buf = malloc(size);
	int seed, k;

	ASSERT_NE(NULL, buf);
	memset(cs, 0, sizeof(*cs));
	for (seed = 0; seed < seeds; seed++) {
		int flips = 1 + seed % 8;

		rng_state = 0x9e3779b97f4a7c15ULL ^ ((u64)seed * 0x100000001b3ULL);
		memcpy(buf, sec, size);
		for (k = 0; k < flips; k++) {
			size_t at = rng() % size;

			/* the header's fields, the FDEs: flip more often early */
			if (k == 0 && seed % 3 == 0)
				at = rng() % (size < 96 ? size : 96);
			if (rng() & 1)
				buf[at] ^= (u8)(1u << (rng() % 8));
			else
				buf[at] = (u8)rng();
		}
		for (k = 0; k < 24; k++) {
			struct pd_uw_reader rd = { .img = buf, .base = addr, .size = size,
						   .budget = BIG_BUDGET };
			struct pd_uw_row row;
			unsigned long ip = lo + rng() % (hi - lo + 64);
			int ret;

			ret = pd_sframe_row(&rd, addr, size, ip, &row);
			cs->calls++;
			switch (ret) {
			case 0:
				cs->ok++;
				ASSERT_EQ(PD_UW_CFA_REG, row.cfa_how);
				ASSERT_TRUE(row.cfa_reg == PD_UW_SP || row.cfa_reg == PD_UW_FP);
				/* AArch64's RA may be in x30 still */
				ASSERT_TRUE(row.reg[PD_UW_RA].how == PD_UW_AT_CFA ||
					    row.reg[PD_UW_RA].how == PD_UW_UNDEF ||
					    row.reg[PD_UW_RA].how == PD_UW_RA_DEFAULT);
				break;
			case -EINVAL:
				cs->einval++;
				break;
			case -ENOENT:
				cs->enoent++;
				break;
			case -E2BIG:
				cs->e2big++;
				break;
			default:
				free(buf);
				ASSERT_EQ(0, ret) TH_LOG("seed %d ip %#lx: unexpected %d", seed, ip, ret);
			}
		}
	}
	free(buf);
}

static void corrupt_obj(struct __test_metadata *_metadata, const struct obj *o)
{
	struct corrupt_stats cs;
	unsigned long lo = o->d.fde[0].pc;
	const struct ofde *l = &o->d.fde[o->d.nfdes - 1];

	corrupt(_metadata, o->im.mem + (o->im.sframe - o->im.base), o->im.sframe_size,
		o->im.sframe, lo, l->pc + l->size, 2000, &cs);
	TH_LOG("corruption: %ld lookups: %ld rows, %ld -EINVAL, %ld -ENOENT, %ld -E2BIG",
	       cs.calls, cs.ok, cs.einval, cs.enoent, cs.e2big);
	EXPECT_EQ(2000 * 24, cs.calls);
	EXPECT_GT(cs.einval, 0);
	EXPECT_GT(cs.ok, 0);
}

/* ---- tables built by hand ---- */

struct hfre {
	u32	start;
	bool	fp_base;	/* CFA from the FP, else from the SP */
	u8	osz;		/* 0, 1, 2: 1, 2, 4 bytes */
	u8	n;		/* offsets */
	s32	off[4];
	u8	info_or;	/* bits to add to the info byte */
};

/*
 * An FRE's offsets for a CFA and an FP saved at @fp: on AArch64 with the
 * frame record's RA, above the FP (stp x29, x30); on x86-64 the RA is at
 * the fixed CFA-8.
 */
#ifdef PD_UW_ARM64
#define CFA_FP(cfa, fp)	.n = 3, .off = { (cfa), (fp) + 8, (fp) }
#else
#define CFA_FP(cfa, fp)	.n = 2, .off = { (cfa), (fp) }
#endif

struct hfde {
	u64		pc;
	u32		size;
	u8		fre_type;	/* 0, 1, 2: 1, 2, 4-byte starts */
	bool		mask;
	u8		rep;
	bool		signal;
	u8		info_or, info2;
	int		nfres;
	const struct hfre *fre;
	int		num_fres_adj;	/* added to the FDE's FRE count */
};

struct hsec {
	int		ver;
	u8		flags;
	s8		fixed_ra;
	u8		abi;
	s8		fixed_fp;
	u8		auxlen;
	u32		num_fdes_adj;
	s32		fre_len_adj;
	s32		num_fres_adj;	/* added to the header's FRE count */
	bool		pcrel;
};

struct hbuf {
	u8	*b;
	size_t	len, cap;
};

static void put(struct hbuf *h, u64 v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (h->len < h->cap)
			h->b[h->len] = (u8)(v >> (8 * i));
		h->len++;
	}
}

static void put_at(struct hbuf *h, size_t at, u64 v, int n)
{
	size_t save = h->len;

	h->len = at;
	put(h, v, n);
	h->len = save;
}

/* A table at SEC_ADDR; its length, or 0 when @cap is too small */
static size_t build(u8 *out, size_t cap, const struct hsec *hs, const struct hfde *fd, int n)
{
	static const int fdesz[] = { 0, 17, 20, 16 };
	struct hbuf h = { .b = out, .cap = cap };
	/* an unknown version: laid out as version 2 */
	int lv = hs->ver >= 1 && hs->ver <= 3 ? hs->ver : 2;
	size_t hdr = 28 + hs->auxlen, fres, total_fres = 0;
	u32 fre_off[64];
	int i, j, k;

	if (n > 64)
		return 0;
	memset(out, 0, cap);
	put(&h, 0xdee2, 2);
	put(&h, hs->ver, 1);
	put(&h, hs->flags, 1);
	put(&h, hs->abi, 1);
	put(&h, (u8)hs->fixed_fp, 1);
	put(&h, (u8)hs->fixed_ra, 1);
	put(&h, hs->auxlen, 1);
	put(&h, n + hs->num_fdes_adj, 4);
	put(&h, 0, 4);		/* num_fres, below */
	put(&h, 0, 4);		/* fre_len, below */
	put(&h, 0, 4);		/* fdeoff */
	put(&h, (u64)n * fdesz[lv], 4);
	put(&h, 0, hs->auxlen);

	/* the FREs first, after the FDEs */
	h.len = fres = hdr + (size_t)n * fdesz[lv];
	for (i = 0; i < n; i++) {
		const struct hfde *f = &fd[i];
		u8 info = f->fre_type | (f->mask ? 0x10 : 0) | (f->signal ? 0x80 : 0) | f->info_or;

		fre_off[i] = (u32)(h.len - fres);
		if (lv == 3) {
			put(&h, (u64)(f->nfres + f->num_fres_adj), 2);
			put(&h, info, 1);
			put(&h, f->info2, 1);
			put(&h, f->rep, 1);
		}
		for (j = 0; j < f->nfres; j++) {
			const struct hfre *r = &f->fre[j];

			put(&h, r->start, 1 << f->fre_type);
			put(&h, (r->fp_base ? 0 : 1) | r->n << 1 | r->osz << 5 | r->info_or, 1);
			for (k = 0; k < r->n; k++)
				put(&h, (u64)(s64)r->off[k], 1 << r->osz);
		}
		total_fres += f->nfres;
	}
	put_at(&h, 12, (u64)((s64)total_fres + hs->num_fres_adj), 4);
	put_at(&h, 16, (u64)((s64)(h.len - fres) + hs->fre_len_adj), 4);

	for (i = 0; i < n; i++) {
		const struct hfde *f = &fd[i];
		size_t at = hdr + (size_t)i * fdesz[lv];
		u64 start = f->pc - (SEC_ADDR + (hs->pcrel ? at : 0));
		u8 info = f->fre_type | (f->mask ? 0x10 : 0) | f->info_or;

		if (lv == 3) {
			put_at(&h, at, start, 8);
			put_at(&h, at + 8, f->size, 4);
			put_at(&h, at + 12, fre_off[i], 4);
			continue;
		}
		put_at(&h, at, start, 4);
		put_at(&h, at + 4, f->size, 4);
		put_at(&h, at + 8, fre_off[i], 4);
		put_at(&h, at + 12, (u64)(f->nfres + f->num_fres_adj), 4);
		put_at(&h, at + 16, info, 1);
		if (lv == 2)
			put_at(&h, at + 17, f->rep, 1);
	}
	return h.len <= cap ? h.len : 0;
}

static int hrow(const u8 *buf, size_t len, unsigned long ip, struct pd_uw_row *row)
{
	struct pd_uw_reader rd = { .img = buf, .base = SEC_ADDR, .size = len,
				   .budget = BIG_BUDGET };

	return pd_sframe_row(&rd, SEC_ADDR, len, ip, row);
}

/* The FDEs every version can have */
static const struct hfre fre_a[] = {
	{ .start = 0, .n = 1, .off = { 8 } },
	{ .start = 1, CFA_FP(16, -16) },
	{ .start = 4, .fp_base = true, CFA_FP(16, -16) },
	{ .start = 0x30, .n = 1, .off = { 8 } },
};

static const struct hfre fre_b[] = {
	{ .start = 0, .osz = 2, .n = 1, .off = { 8 } },
	{ .start = 0x10, .osz = 2, CFA_FP(70000, -16) },
	{ .start = 0x12345, .osz = 1, CFA_FP(4112, -24) },
};

static const struct hfre fre_c[] = {
	{ .start = 0, .n = 1, .off = { 8 } },
	{ .start = 0x100, .osz = 1, .n = 1, .off = { 300 } },
	{ .start = 0x1234, .osz = 1, CFA_FP(1000, -600) },
};

/* PLT-like, PC mask: rep 16, the push at 11 */
static const struct hfre fre_m[] = {
	{ .start = 0, .n = 1, .off = { 8 } },
	{ .start = 11, .n = 1, .off = { 16 } },
};

/* the outermost frame */
static const struct hfre fre_u[] = {
	{ .start = 0, .n = 1, .off = { 8 } },
	{ .start = 4, .n = 0 },
};

#define A_PC	0x401000UL
#define B_PC	0x401100UL
#define C_PC	0x430000UL
#define M_PC	0x440000UL
#define U_PC	0x440100UL

static int base_fdes(struct hfde *fd, int ver)
{
	int n = 0;

	fd[n++] = (struct hfde){ .pc = A_PC, .size = 0x40, .fre_type = 0, .nfres = 4,
				 .fre = fre_a };
	fd[n++] = (struct hfde){ .pc = B_PC, .size = 0x20000, .fre_type = 2, .nfres = 3,
				 .fre = fre_b };
	fd[n++] = (struct hfde){ .pc = C_PC, .size = 0x2000, .fre_type = 1, .nfres = 3,
				 .fre = fre_c };
	if (ver >= 2) {
		fd[n++] = (struct hfde){ .pc = M_PC, .size = 0x40, .fre_type = 0, .mask = true,
					 .rep = 16, .nfres = 2, .fre = fre_m };
		fd[n++] = (struct hfde){ .pc = U_PC, .size = 0x10, .fre_type = 0, .nfres = 2,
					 .fre = fre_u };
	}
	return n;
}

struct want {
	unsigned long	ip;
	int		ret;
	u8		cfa_reg;
	s64		cfa_off;
	s64		fp_off;		/* 0: same */
	bool		ra_undef;
};

static const struct want wants[] = {
	{ .ip = A_PC - 1, .ret = -ENOENT },
	{ .ip = A_PC, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = A_PC + 1, .cfa_reg = PD_UW_SP, .cfa_off = 16, .fp_off = -16 },
	{ .ip = A_PC + 3, .cfa_reg = PD_UW_SP, .cfa_off = 16, .fp_off = -16 },
	{ .ip = A_PC + 4, .cfa_reg = PD_UW_FP, .cfa_off = 16, .fp_off = -16 },
	{ .ip = A_PC + 0x2f, .cfa_reg = PD_UW_FP, .cfa_off = 16, .fp_off = -16 },
	{ .ip = A_PC + 0x30, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = A_PC + 0x3f, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = A_PC + 0x40, .ret = -ENOENT },
	{ .ip = B_PC - 1, .ret = -ENOENT },
	{ .ip = B_PC, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = B_PC + 0xf, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = B_PC + 0x10, .cfa_reg = PD_UW_SP, .cfa_off = 70000, .fp_off = -16 },
	{ .ip = B_PC + 0x12344, .cfa_reg = PD_UW_SP, .cfa_off = 70000, .fp_off = -16 },
	{ .ip = B_PC + 0x12345, .cfa_reg = PD_UW_SP, .cfa_off = 4112, .fp_off = -24 },
	{ .ip = B_PC + 0x1ffff, .cfa_reg = PD_UW_SP, .cfa_off = 4112, .fp_off = -24 },
	{ .ip = B_PC + 0x20000, .ret = -ENOENT },
	{ .ip = C_PC, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = C_PC + 0xff, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = C_PC + 0x100, .cfa_reg = PD_UW_SP, .cfa_off = 300, .fp_off = 0 },
	{ .ip = C_PC + 0x1233, .cfa_reg = PD_UW_SP, .cfa_off = 300, .fp_off = 0 },
	{ .ip = C_PC + 0x1234, .cfa_reg = PD_UW_SP, .cfa_off = 1000, .fp_off = -600 },
	{ .ip = C_PC + 0x1fff, .cfa_reg = PD_UW_SP, .cfa_off = 1000, .fp_off = -600 },
	{ .ip = C_PC + 0x2000, .ret = -ENOENT },
};

static const struct want wants_v2[] = {
	{ .ip = M_PC, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = M_PC + 10, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = M_PC + 11, .cfa_reg = PD_UW_SP, .cfa_off = 16, .fp_off = 0 },
	{ .ip = M_PC + 15, .cfa_reg = PD_UW_SP, .cfa_off = 16, .fp_off = 0 },
	{ .ip = M_PC + 16, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = M_PC + 0x20 + 10, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = M_PC + 0x30 + 11, .cfa_reg = PD_UW_SP, .cfa_off = 16, .fp_off = 0 },
	{ .ip = M_PC + 0x3f, .cfa_reg = PD_UW_SP, .cfa_off = 16, .fp_off = 0 },
	{ .ip = M_PC + 0x40, .ret = -ENOENT },
	{ .ip = U_PC, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = U_PC + 3, .cfa_reg = PD_UW_SP, .cfa_off = 8, .fp_off = 0 },
	{ .ip = U_PC + 4, .ra_undef = true },
	{ .ip = U_PC + 15, .ra_undef = true },
	{ .ip = U_PC + 16, .ret = -ENOENT },
};

static void check_wants(struct __test_metadata *_metadata, const u8 *buf, size_t len,
			const struct want *w, int n, bool signal)
{
	struct pd_uw_row row;
	int i, r;

	for (i = 0; i < n; i++) {
		int ret = hrow(buf, len, w[i].ip, &row);

		ASSERT_EQ(w[i].ret, ret) TH_LOG("ip %#lx", w[i].ip);
		if (ret)
			continue;
		if (w[i].ra_undef) {
			ASSERT_EQ(PD_UW_UNDEF, row.reg[PD_UW_RA].how);
			continue;
		}
		ASSERT_EQ(PD_UW_CFA_REG, row.cfa_how);
		ASSERT_EQ(w[i].cfa_reg, row.cfa_reg) TH_LOG("ip %#lx", w[i].ip);
		ASSERT_EQ(w[i].cfa_off, row.cfa_off) TH_LOG("ip %#lx", w[i].ip);
#ifdef PD_UW_ARM64
		/* saved with the FP (CFA_FP), else still in x30 */
		if (w[i].fp_off) {
			ASSERT_EQ(PD_UW_AT_CFA, row.reg[PD_UW_RA].how) TH_LOG("ip %#lx", w[i].ip);
			ASSERT_EQ(w[i].fp_off + 8, row.reg[PD_UW_RA].off);
		} else {
			ASSERT_EQ(PD_UW_SAME, row.reg[PD_UW_RA].how) TH_LOG("ip %#lx", w[i].ip);
		}
#else
		ASSERT_EQ(PD_UW_AT_CFA, row.reg[PD_UW_RA].how);
		ASSERT_EQ(-8, row.reg[PD_UW_RA].off);
#endif
		if (w[i].fp_off) {
			ASSERT_EQ(PD_UW_AT_CFA, row.reg[PD_UW_FP].how) TH_LOG("ip %#lx", w[i].ip);
			ASSERT_EQ(w[i].fp_off, row.reg[PD_UW_FP].off);
		} else {
			ASSERT_EQ(PD_UW_SAME, row.reg[PD_UW_FP].how) TH_LOG("ip %#lx", w[i].ip);
		}
		for (r = 0; r < PD_UW_NREGS; r++)
			if (r != PD_UW_RA && r != PD_UW_FP)
				ASSERT_EQ(PD_UW_SAME, row.reg[r].how);
		ASSERT_EQ(signal, row.signal);
	}
}

static const struct hsec good_v1 = { .ver = 1, .flags = 1, .fixed_ra = FIXED_RA, .abi = ABI };
static const struct hsec good_v2 = { .ver = 2, .flags = 1, .fixed_ra = FIXED_RA, .abi = ABI };
static const struct hsec good_v2r = { .ver = 2, .flags = 5, .fixed_ra = FIXED_RA, .abi = ABI,
				      .pcrel = true };
static const struct hsec good_v3 = { .ver = 3, .flags = 5, .fixed_ra = FIXED_RA, .abi = ABI,
				     .pcrel = true };

static u8 hb[1 << 16];

/* hb: section hs over the base FDEs of its version (*n of them, in fd); its length */
static size_t build_base(struct __test_metadata *_metadata, const struct hsec *hs,
			 struct hfde *fd, int *n)
{
	size_t len;

	*n = base_fdes(fd, hs->ver);
	len = build(hb, sizeof(hb), hs, fd, *n);
	ASSERT_GT(len, 0U);
	return len;
}

/* ---- the tests ---- */

/*
 * The program that binutils built in dir/name, of SFrame version ver:
 * every byte of every FDE against objdump (into *st, no mismatch), then,
 * after the caller's own checks of *st, the IPs no FDE covers and the
 * read budget.
 */
static void real_begin(struct __test_metadata *_metadata, struct obj *o, struct cmp_stats *st,
		       const char *dir, const char *name, int ver)
{
	ASSERT_EQ(0, load_obj(o, dir, name));
	ASSERT_NE(0UL, o->im.sframe) TH_LOG("no PT_GNU_SFRAME");
	ASSERT_EQ(ver, o->d.ver);
	ASSERT_GE(o->d.nfdes, 6);
	compare_obj(_metadata, o, st);
	TH_LOG("v%d: %d FDEs (%ld PC-mask), %ld IPs, %ld rows, %ld mismatches",
	       ver, o->d.nfdes, st->mask_fdes, st->ips, st->rows, st->mismatches);
	EXPECT_EQ(0, st->mismatches);
}

static void real_end(struct __test_metadata *_metadata, struct obj *o)
{
	long n;

	check_uncovered(_metadata, o, &n);
	TH_LOG("v%d: %ld uncovered IPs gave -ENOENT", o->d.ver, n);
	EXPECT_GT(n, 10);
	check_budget(_metadata, o);
	uw_image_free(&o->im);
}

#ifdef PD_UW_ARM64
/* The cross-built program: no PLT FDE; RAs in x30 and saved, FPs saved or not */
TEST(v1_cross_binutils)
{
	struct cmp_stats st;
	struct obj o;

	NEED_HOST_BUILT();
	real_begin(_metadata, &o, &st, tmpdir, "p1", 1);
	TH_LOG("v1: %ld rows with the RA in x30", st.ra_x30);
	EXPECT_EQ(o.d.nfdes, st.fdes_ok);
	EXPECT_EQ(st.ips, st.rows);
	EXPECT_GT(st.rows, 300);
	EXPECT_GT(st.ra_x30, 0);
	EXPECT_LT(st.ra_x30, st.rows);
	EXPECT_EQ(0, st.mangled);
	EXPECT_EQ(0, st.key_b);
	real_end(_metadata, &o);
}

/* The same with pac-ret+leaf+b-key: every FDE's key B, RAs signed */
TEST(v1_cross_pac)
{
	struct cmp_stats st;
	struct obj o;

	NEED_HOST_BUILT();
	real_begin(_metadata, &o, &st, tmpdir, "p1pac", 1);
	TH_LOG("v1: %ld rows with the RA in x30, %ld with a mangled RA, %ld B-key FDEs",
	       st.ra_x30, st.mangled, st.key_b);
	EXPECT_EQ(o.d.nfdes, st.fdes_ok);
	EXPECT_EQ(st.ips, st.rows);
	EXPECT_GT(st.mangled, 0);
	EXPECT_GT(st.ra_x30, 0);
	EXPECT_EQ(o.d.nfdes, st.key_b);
	real_end(_metadata, &o);
}
#else
TEST(v1_host_binutils)
{
	struct cmp_stats st;
	struct obj o;

	NEED_HOST_BUILT();
	real_begin(_metadata, &o, &st, tmpdir, "p1", 1);
	EXPECT_EQ(o.d.nfdes - st.mask_fdes, st.fdes_ok);
	EXPECT_GT(st.rows, 300);
	/* the PLT's FDE, in version 1, is refused at every byte */
	EXPECT_GE(st.mask_fdes, 1);
	EXPECT_GT(st.refused_mask, 0);
	real_end(_metadata, &o);
}

TEST(v2_chroot_binutils)
{
	struct cmp_stats st;
	struct obj o;

	if (!croot_built)
		SKIP(return, "%s", croot_why);
	real_begin(_metadata, &o, &st, croot_dir, "p2", 2);
	EXPECT_EQ(o.d.nfdes, st.fdes_ok);
	EXPECT_EQ(st.ips, st.rows);
	/* the PLT's FDE, which version 2 reads */
	EXPECT_GE(st.mask_fdes, 1);
	real_end(_metadata, &o);
}
#endif

/* The workload of tests/vm's table walks, static: only its own code has SFrame */
TEST(v1_wl_nofp_sframe)
{
	struct cmp_stats st;
	struct obj o;

	NEED_HOST_BUILT();
	if (access(PD_WL_CALLS, R_OK))
		SKIP(return, "no %s", PD_WL_CALLS);
	ASSERT_TRUE(wl_built) TH_LOG("see %s/wl.err", tmpdir);
	real_begin(_metadata, &o, &st, tmpdir, "wl", 1);
	EXPECT_EQ(o.d.nfdes - st.mask_fdes, st.fdes_ok);
	EXPECT_EQ(st.refused_mask + st.rows, st.ips);
	real_end(_metadata, &o);
}

TEST(offsets_of_every_size_in_real_code)
{
	struct obj o;
	int i, j, sizes = 0;

	NEED_HOST_BUILT();
	ASSERT_EQ(0, load_obj(&o, tmpdir, "p1"));
	/* big2: 2-byte offsets (sp+5000+), big4: 4-byte (sp+70000+) */
	for (i = 0; i < o.d.nfdes; i++) {
		for (j = 0; j < o.d.fde[i].nfres; j++) {
			s64 c = o.d.fde[i].fre[j].cfa_off;

			if (c > 5000 && c < 32768)
				sizes |= 2;
			if (c > 70000)
				sizes |= 4;
			if (!o.d.fde[i].fre[j].cfa_sp)
				sizes |= 8;
		}
	}
	EXPECT_EQ(2 | 4 | 8, sizes) TH_LOG("the program has lost a 2-byte, 4-byte or FP-based CFA");
	uw_image_free(&o.im);
}

TEST(corruption_v1_host)
{
	struct obj o;

	NEED_HOST_BUILT();
	ASSERT_EQ(0, load_obj(&o, tmpdir, "p1"));
	corrupt_obj(_metadata, &o);
	uw_image_free(&o.im);
#ifdef PD_UW_ARM64
	/* and with the mangled-RA and key bits set */
	ASSERT_EQ(0, load_obj(&o, tmpdir, "p1pac"));
	corrupt_obj(_metadata, &o);
	uw_image_free(&o.im);
#endif
}

#ifndef PD_UW_ARM64
TEST(corruption_v2_chroot)
{
	struct obj o;

	if (!croot_built)
		SKIP(return, "%s", croot_why);
	ASSERT_EQ(0, load_obj(&o, croot_dir, "p2"));
	corrupt_obj(_metadata, &o);
	uw_image_free(&o.im);
}
#endif

TEST(corruption_v3_built)
{
	struct corrupt_stats cs;
	struct hfde fd[8];
	int n;
	size_t len = build_base(_metadata, &good_v3, fd, &n);

	corrupt(_metadata, hb, len, SEC_ADDR, A_PC - 16, U_PC + 0x10, 2000, &cs);
	TH_LOG("v3 corruption: %ld lookups: %ld rows, %ld -EINVAL, %ld -ENOENT", cs.calls, cs.ok,
	       cs.einval, cs.enoent);
	EXPECT_GT(cs.einval, 0);
	EXPECT_GT(cs.ok, 0);
}

/* a table of hs and fd[n], built into hb: every row that wants and wants_v2 say */
static void check_built(struct __test_metadata *_metadata, const struct hsec *hs,
			const struct hfde *fd, int n)
{
	size_t len = build(hb, sizeof(hb), hs, fd, n);

	ASSERT_GT(len, 0U);
	check_wants(_metadata, hb, len, wants, ARRAY_SIZE(wants), false);
	check_wants(_metadata, hb, len, wants_v2, ARRAY_SIZE(wants_v2), false);
}

TEST(v3_built)
{
	struct hfde fd[8];
	size_t len;
	int n;

	n = base_fdes(fd, 3);
	check_built(_metadata, &good_v3, fd, n);
	/* section-relative starts are version 3's too */
	check_built(_metadata, &(struct hsec){ .ver = 3, .flags = 1, .fixed_ra = FIXED_RA,
					       .abi = ABI }, fd, n);

	/* a signal frame's FDE */
	fd[3].signal = true;
	len = build(hb, sizeof(hb), &good_v3, fd, n);
	check_wants(_metadata, hb, len, wants_v2, 9, true);
	check_wants(_metadata, hb, len, wants, ARRAY_SIZE(wants), false);
}

TEST(v2_built)
{
	struct hfde fd[8];
	int n;

	n = base_fdes(fd, 2);
	check_built(_metadata, &good_v2, fd, n);
	check_built(_metadata, &good_v2r, fd, n);
}

TEST(v1_built)
{
	struct pd_uw_row row;
	struct hfde fd[8];
	int n;
	size_t len = build_base(_metadata, &good_v1, fd, &n);

	check_wants(_metadata, hb, len, wants, ARRAY_SIZE(wants), false);

	/* no repeat size in version 1: a PC-mask FDE is refused */
	fd[n++] = (struct hfde){ .pc = M_PC, .size = 0x40, .mask = true, .nfres = 2,
				 .fre = fre_m };
	len = build(hb, sizeof(hb), &good_v1, fd, n);
	EXPECT_EQ(-EINVAL, hrow(hb, len, M_PC + 3, &row));
	EXPECT_EQ(0, hrow(hb, len, A_PC + 3, &row));
	/* nor is an FRE without offsets */
	fd[n - 1] = (struct hfde){ .pc = U_PC, .size = 0x10, .nfres = 2, .fre = fre_u };
	len = build(hb, sizeof(hb), &good_v1, fd, n);
	EXPECT_EQ(-EINVAL, hrow(hb, len, U_PC + 4, &row));
	EXPECT_EQ(0, hrow(hb, len, U_PC + 3, &row));
	/* nor a PC-relative start */
	len = build(hb, sizeof(hb), &(struct hsec){ .ver = 1, .flags = 5, .fixed_ra = FIXED_RA,
						    .abi = ABI, .pcrel = true }, fd, n);
	EXPECT_EQ(-EINVAL, hrow(hb, len, A_PC, &row));
}

#ifdef PD_UW_ARM64
/*
 * AArch64's FREs: one offset (the RA still in x30), two (CFA, RA), three
 * (CFA, RA, FP), of every size; a signed RA (the FRE's mangled-RA bit)
 * and the FDE's B key change nothing a row says.  In every version.
 */
static const struct hfre fre_arm64[] = {
	{ .start = 0, .n = 1, .off = { 0 } },
	{ .start = 4, .n = 1, .off = { 0 }, .info_or = 0x80 },
	{ .start = 8, .n = 2, .off = { 32, -32 }, .info_or = 0x80 },
	{ .start = 12, .osz = 1, .n = 3, .off = { 48, -40, -48 }, .info_or = 0x80 },
	{ .start = 16, .fp_base = true, .osz = 2, .n = 3, .off = { 48, -40, -48 } },
	{ .start = 20, .n = 2, .off = { 16, -8 } },
};

TEST(aarch64_fres)
{
	static const struct {
		unsigned int	at;
		u8		cfa_reg;
		s64		cfa_off, ra_off, fp_off;	/* 0: the same value */
	} w[] = {
		{ 0, PD_UW_SP, 0, 0, 0 },
		{ 3, PD_UW_SP, 0, 0, 0 },
		{ 4, PD_UW_SP, 0, 0, 0 },
		{ 8, PD_UW_SP, 32, -32, 0 },
		{ 11, PD_UW_SP, 32, -32, 0 },
		{ 12, PD_UW_SP, 48, -40, -48 },
		{ 16, PD_UW_FP, 48, -40, -48 },
		{ 20, PD_UW_SP, 16, -8, 0 },
		{ 0x3f, PD_UW_SP, 16, -8, 0 },
	};
	static const struct hsec *const hs[] = { &good_v1, &good_v2, &good_v2r, &good_v3 };
	struct pd_uw_row row;
	unsigned int i, k, key;
	struct hfde fd;
	size_t len;

	for (k = 0; k < ARRAY_SIZE(hs); k++) {
		for (key = 0; key < 2; key++) {
			fd = (struct hfde){ .pc = A_PC, .size = 0x40,
					    .nfres = ARRAY_SIZE(fre_arm64), .fre = fre_arm64,
					    .info_or = key ? 0x20 : 0 };
			len = build(hb, sizeof(hb), hs[k], &fd, 1);
			ASSERT_GT(len, 0U);
			for (i = 0; i < ARRAY_SIZE(w); i++) {
				ASSERT_EQ(0, hrow(hb, len, A_PC + w[i].at, &row))
					TH_LOG("v%d key %u +%u", hs[k]->ver, key, w[i].at);
				EXPECT_EQ(PD_UW_CFA_REG, row.cfa_how);
				EXPECT_EQ(w[i].cfa_reg, row.cfa_reg);
				EXPECT_EQ(w[i].cfa_off, row.cfa_off);
				if (w[i].ra_off) {
					EXPECT_EQ(PD_UW_AT_CFA, row.reg[PD_UW_RA].how);
					EXPECT_EQ(w[i].ra_off, row.reg[PD_UW_RA].off);
				} else {
					EXPECT_EQ(PD_UW_SAME, row.reg[PD_UW_RA].how);
				}
				if (w[i].fp_off) {
					EXPECT_EQ(PD_UW_AT_CFA, row.reg[PD_UW_FP].how);
					EXPECT_EQ(w[i].fp_off, row.reg[PD_UW_FP].off);
				} else {
					EXPECT_EQ(PD_UW_SAME, row.reg[PD_UW_FP].how);
				}
				EXPECT_FALSE(row.signal);
			}
			EXPECT_EQ(-ENOENT, hrow(hb, len, A_PC + 0x40, &row));
		}
	}
}
#endif

/* A table that differs from a good v2 one in one thing, looked up at @ip */
struct bad_case {
	const char	*what;
	int		ver;
	struct hsec	hs;
	int		fde;		/* which FDE to change, or -1 */
	struct hfde	f;		/* its replacement */
	unsigned long	ip;
};

static const struct hfre fre_bad_size[] = { { .start = 0, .osz = 3, .n = 1, .off = { 8 } } };
/* one more than the ABI has: x86-64's CFA, FP; AArch64's CFA, RA, FP */
static const struct hfre fre_bad_count[] = { { .start = 0, .n = MAX_OFFSETS + 1,
					       .off = { 32, -8, -16, -24 } } };
static const struct hfre fre_bad_cfa[] = { { .start = 0, .n = 1, .off = { MIN_CFA - 1 } } };
static const struct hfre fre_bad_cfa_neg[] = { { .start = 0, .fp_base = true, .n = 1,
						 .off = { -16 } } };
#ifdef PD_UW_ARM64
static const struct hfre fre_bad_ra0[] = { { .start = 0, .n = 2, .off = { 16, 0 } } };
static const struct hfre fre_bad_ra_pos[] = { { .start = 0, .n = 2, .off = { 16, 8 } } };
static const struct hfre fre_bad_fp0[] = { { .start = 0, .n = 3, .off = { 16, -8, 0 } } };
static const struct hfre fre_bad_fp_pos[] = { { .start = 0, .n = 3, .off = { 16, -8, 8 } } };
#else
static const struct hfre fre_bad_mangled[] = {
	{ .start = 0, .n = 1, .off = { 8 }, .info_or = 0x80 } };
static const struct hfre fre_bad_fp[] = { { .start = 0, .n = 2, .off = { 16, -8 } } };
static const struct hfre fre_bad_fp_pos[] = { { .start = 0, .n = 2, .off = { 16, 8 } } };
#endif
static const struct hfre fre_bad_order[] = {
	{ .start = 0, .n = 1, .off = { 8 } },
	{ .start = 8, .n = 1, .off = { 16 } },
	{ .start = 4, .n = 1, .off = { 8 } },
	{ .start = 12, .n = 1, .off = { 8 } },
};

#define HS(v, ...) { .ver = v, .flags = 1, .fixed_ra = FIXED_RA, .abi = ABI, __VA_ARGS__ }
#define FA(...) { .pc = A_PC, .size = 0x40, __VA_ARGS__ }

/* HS() gives defaults that a case overrides */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
static const struct bad_case bad_cases[] = {
	{ "version 4", 2, HS(4), -1, {}, A_PC },
	{ "version 0", 2, HS(0), -1, {}, A_PC },
	{ "not sorted", 2, HS(2, .flags = 0), -1, {}, A_PC },
	{ "unknown flag 8", 2, HS(2, .flags = 9), -1, {}, A_PC },
	{ "v3 FRAME_POINTER flag", 3, HS(3, .flags = 3), -1, {}, A_PC },
	/* the other architecture's: AArch64 on x86-64, AMD64 on AArch64 */
	{ "the other ABI", 2, HS(2, .abi = OTHER_ABI), -1, {}, A_PC },
	{ "v3, the other ABI", 3, HS(3, .abi = OTHER_ABI), -1, {}, A_PC },
	{ "aarch64 big-endian", 2, HS(2, .abi = 1), -1, {}, A_PC },
	{ "s390x", 2, HS(2, .abi = 4), -1, {}, A_PC },
#ifdef PD_UW_ARM64
	{ "RA fixed at CFA-8", 2, HS(2, .fixed_ra = -8), -1, {}, A_PC },
#else
	{ "RA not fixed", 2, HS(2, .fixed_ra = 0), -1, {}, A_PC },
#endif
	{ "RA at CFA-16", 2, HS(2, .fixed_ra = -16), -1, {}, A_PC },
	{ "fixed FP", 2, HS(2, .fixed_fp = -16), -1, {}, A_PC },
	{ "aux header", 2, HS(2, .auxlen = 4), -1, {}, A_PC },
	{ "FDEs past the end", 2, HS(2, .num_fdes_adj = 1000), -1, {}, A_PC },
	{ "FDE count wraps", 2, HS(2, .num_fdes_adj = 0xfffffff0u), -1, {}, A_PC },
	{ "FREs past the end", 2, HS(2, .fre_len_adj = 1000), -1, {}, A_PC },
	{ "FRE type 3", 2, HS(2), 0, FA(.fre_type = 3, .nfres = 4, .fre = fre_a), A_PC },
#ifndef PD_UW_ARM64
	{ "v2 pauth bit", 2, HS(2), 0, FA(.info_or = 0x20, .nfres = 4, .fre = fre_a), A_PC },
#endif
	{ "v2 bit 7", 2, HS(2), 0, FA(.info_or = 0x80, .nfres = 4, .fre = fre_a), A_PC },
	{ "v3 bit 6", 3, HS(3), 0, FA(.info_or = 0x40, .nfres = 4, .fre = fre_a), A_PC },
	{ "v3 flex FDE", 3, HS(3), 0, FA(.info2 = 1, .nfres = 4, .fre = fre_a), A_PC },
	{ "v3 info2 bit 5", 3, HS(3), 0, FA(.info2 = 0x20, .nfres = 4, .fre = fre_a), A_PC },
	{ "mask, rep 0", 2, HS(2), 0, FA(.mask = true, .nfres = 2, .fre = fre_m), A_PC },
	{ "v3 mask, rep 0", 3, HS(3), 0, FA(.mask = true, .nfres = 2, .fre = fre_m), A_PC },
	{ "more FREs than the header", 2, HS(2), 0,
	  FA(.nfres = 4, .fre = fre_a, .num_fres_adj = 100), A_PC + 0x3f },
	{ "header's FRE count too small", 2, HS(2, .num_fres_adj = -11), 0,
	  FA(.nfres = 4, .fre = fre_a), A_PC },
	{ "FREs past the sub-section", 2, HS(2), 4,
	  { .pc = U_PC, .size = 0x10, .nfres = 2, .fre = fre_u, .num_fres_adj = 1 }, U_PC + 15 },
	{ "offset size 3", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_size), A_PC },
	{ "an offset too many", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_count), A_PC },
	{ "v3, an offset too many", 3, HS(3), 0, FA(.nfres = 1, .fre = fre_bad_count), A_PC },
	{ "CFA too low", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_cfa), A_PC },
	{ "CFA below the FP", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_cfa_neg), A_PC },
#ifdef PD_UW_ARM64
	{ "RA at the CFA", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_ra0), A_PC },
	{ "RA above the CFA", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_ra_pos), A_PC },
	{ "v3, RA above the CFA", 3, HS(3), 0, FA(.nfres = 1, .fre = fre_bad_ra_pos), A_PC },
	{ "FP at the CFA", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_fp0), A_PC },
	{ "FP above the CFA", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_fp_pos), A_PC },
#else
	{ "mangled RA", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_mangled), A_PC },
	{ "FP in the RA's slot", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_fp), A_PC },
	{ "FP above the CFA", 2, HS(2), 0, FA(.nfres = 1, .fre = fre_bad_fp_pos), A_PC },
#endif
	{ "FREs out of order", 2, HS(2), 0, FA(.nfres = 4, .fre = fre_bad_order), A_PC + 13 },
};
#pragma GCC diagnostic pop

TEST(malformed_tables)
{
	struct pd_uw_row row;
	struct hfde fd[8];
	unsigned int i;
	size_t len;
	int n;

	for (i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct hsec hs = c->hs;

		hs.pcrel = c->hs.flags & 4;
		n = base_fdes(fd, c->ver);
		/* the good table first: the case's change is what breaks it */
		len = build(hb, sizeof(hb), c->ver == 3 ? &good_v3 : &good_v2, fd, n);
		ASSERT_GT(len, 0U);
		if (c->fde >= 0) {
			ASSERT_EQ(0, hrow(hb, len, c->ip, &row)) TH_LOG("%s: good table", c->what);
			fd[c->fde] = c->f;
		}
		len = build(hb, sizeof(hb), &hs, fd, n);
		ASSERT_GT(len, 0U);
		EXPECT_EQ(-EINVAL, hrow(hb, len, c->ip, &row)) TH_LOG("%s", c->what);
	}
}

TEST(bad_section_bounds)
{
	struct pd_uw_row row;
	struct hfde fd[8];
	struct pd_uw_reader rd;
	size_t len, cut;
	int n, ret;

	len = build_base(_metadata, &good_v2, fd, &n);
	ASSERT_EQ(0, hrow(hb, len, U_PC + 3, &row));
	/* any shorter section: refused, never read past its end */
	for (cut = 0; cut < len; cut++) {
		rd = (struct pd_uw_reader){ .img = hb, .base = SEC_ADDR, .size = cut,
					    .budget = BIG_BUDGET };
		ret = pd_sframe_row(&rd, SEC_ADDR, cut, U_PC + 3, &row);
		ASSERT_EQ(-EINVAL, ret) TH_LOG("cut at %zu", cut);
	}
	/* a section that would wrap the address space */
	EXPECT_EQ(-EINVAL, pd_sframe_row(&rd, ~0UL - 16, len, U_PC, &row));
	EXPECT_EQ(-EINVAL, pd_sframe_row(&rd, SEC_ADDR, 1UL << 33, U_PC, &row));
	/* unmapped: what the reader says */
	rd = (struct pd_uw_reader){ .img = hb, .base = SEC_ADDR, .size = len,
				    .budget = BIG_BUDGET };
	EXPECT_EQ(-EFAULT, pd_sframe_row(&rd, SEC_ADDR + 0x100000, len, U_PC, &row));
	/* a bad magic */
	hb[0] ^= 1;
	EXPECT_EQ(-EINVAL, hrow(hb, len, U_PC + 3, &row));
}

TEST(fre_cap)
{
	static struct hfre many[4100];
	struct pd_uw_row row;
	struct hfde fd[1];
	size_t len;
	int i;

	for (i = 0; i < 4100; i++)
		many[i] = (struct hfre){ .start = (u32)i, .osz = 2, .n = 1, .off = { 8 + 8 * i } };
	fd[0] = (struct hfde){ .pc = A_PC, .size = 0x10000, .fre_type = 1, .nfres = 4096,
			       .fre = many };
	len = build(hb, sizeof(hb), &good_v2, fd, 1);
	ASSERT_GT(len, 0U);
	ASSERT_EQ(0, hrow(hb, len, A_PC + 4095, &row));
	EXPECT_EQ(8 + 8 * 4095, row.cfa_off);
	ASSERT_EQ(0, hrow(hb, len, A_PC + 0x8000, &row));
	EXPECT_EQ(8 + 8 * 4095, row.cfa_off);
	ASSERT_EQ(0, hrow(hb, len, A_PC + 17, &row));
	EXPECT_EQ(8 + 8 * 17, row.cfa_off);

	/* one more: past the cap, refused rather than guessed */
	fd[0].nfres = 4097;
	len = build(hb, sizeof(hb), &good_v2, fd, 1);
	ASSERT_GT(len, 0U);
	EXPECT_EQ(0, hrow(hb, len, A_PC + 17, &row));
	EXPECT_EQ(-EINVAL, hrow(hb, len, A_PC + 4096, &row));
}

TEST(many_fdes_binary_search)
{
	static struct hfde fd[64];
	static const struct hfre one[] = { { .start = 0, .n = 1, .off = { 8 } },
					   { .start = 2, .n = 1, .off = { 24 } } };
	struct pd_uw_row row;
	size_t len;
	int i;

	/* 64 FDEs, every other 16 bytes, so that there are gaps */
	for (i = 0; i < 64; i++)
		fd[i] = (struct hfde){ .pc = A_PC + 32 * i, .size = 16, .nfres = 2, .fre = one };
	len = build(hb, sizeof(hb), &good_v2r, fd, 64);
	ASSERT_GT(len, 0U);
	for (i = 0; i < 64 * 32; i++) {
		int ret = hrow(hb, len, A_PC + i, &row);

		if (i % 32 >= 16) {
			ASSERT_EQ(-ENOENT, ret) TH_LOG("%d", i);
		} else {
			ASSERT_EQ(0, ret) TH_LOG("%d", i);
			ASSERT_EQ(i % 32 < 2 ? 8 : 24, row.cfa_off);
		}
	}
}

TEST_HARNESS_MAIN
