// SPDX-License-Identifier: GPL-2.0-only
/*
 * golden_gen - the input files of golden_test, in tests/host/golden/
 *
 *	make -C tests/host golden-update
 *
 * Each file is made record by record, the same on every run and every
 * machine: nothing comes from the host (no hostname, no pid, no /proc),
 * times and addresses are made up.  Between them they take dump and
 * stitch through their paths: deferred samples that match, that do not,
 * records of no sample, FINISHED_ROUND rounds with a late record, a file
 * sorted whole, records that the reader has to copy to align them,
 * USER_DUMP records, every sample field, attrs larger than ours, and
 * files that are corrupt or cut short.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>

#include "pd_test_util.h"
#include "util.h"

#define K(x)		(0xffffffff81000000ULL + (x))
#define U(x)		(0x0000000000401000ULL + (x))
#define L(x)		(0x00007f0000001000ULL + (x))
#define COOKIE(n)	(0x100000000ULL | (n))

/* ids of fp-defer.data: cpu-clock on CPUs 0 and 1, page-faults on 0 and 1 */
#define ID_C0	11
#define ID_C1	12
#define ID_F0	13
#define ID_F1	14

struct gen {
	struct perf_data_writer *w;
	struct tev e;
	int err;
};

static void put(struct gen *g)
{
	if (!g->err)
		g->err = perf_data_writer__write(g->w, g->e.w, tev__size(&g->e));
}

/* Write bytes that are no record of their own (a payload) as one. */
static void put_bytes(struct gen *g, const void *p, size_t size)
{
	if (!g->err)
		g->err = perf_data_writer__write(g->w, p, size);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("golden_gen: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void open_gen(struct gen *g, const char *path)
{
	memset(g, 0, sizeof(*g));
	g->w = perf_data_writer__open(path);
	if (!g->w)
		die("%s", error__msg());
}

static void close_gen(struct gen *g, const char *path, const struct perf_data_features *f)
{
	if (g->err) {
		perf_data_writer__abort(g->w);
		die("%s: %s", path, error__msg());
	}
	if (perf_data_writer__close(g->w, f))
		die("%s: %s", path, error__msg());
}

/* ---- records the test headers have no builder for ---------------------- */

/* PERF_RECORD_FORK { pid, ppid, tid, ptid, time } */
static void r_fork(struct gen *g, __u32 pid, __u32 ppid, __u32 tid, __u32 ptid, __u64 time,
		   __u64 id, __u32 cpu)
{
	tev__begin(&g->e, PERF_RECORD_FORK, 0);
	tev__u32x2(&g->e, pid, ppid);
	tev__u32x2(&g->e, tid, ptid);
	tev__u64(&g->e, time);
	tev__id(&g->e, pid, tid, time, id, cpu);
	tev__end(&g->e);
	put(g);
}

/* PERF_RECORD_THROTTLE { time, id, stream_id } */
static void r_throttle(struct gen *g, __u64 time, __u64 id, __u32 cpu)
{
	tev__begin(&g->e, PERF_RECORD_THROTTLE, 0);
	tev__u64(&g->e, time);
	tev__u64(&g->e, id);
	tev__u64(&g->e, id);
	tev__id(&g->e, (__u32)-1, (__u32)-1, time, id, cpu);
	tev__end(&g->e);
	put(g);
}

/* A record of only a header and payload words. */
static void r_words(struct gen *g, __u32 type, const __u64 *w, unsigned int n)
{
	tev__begin(&g->e, type, 0);
	for (unsigned int i = 0; i < n; i++)
		tev__u64(&g->e, w[i]);
	tev__end(&g->e);
	put(g);
}

/*
 * PERF_RECORD_HEADER_TRACING_DATA { size } and its 8 bytes of payload:
 * 12 + 8 bytes, so that every record after it sits 4 bytes off an 8-byte
 * boundary and the reader hands out aligned copies.
 */
static void r_tracing_data(struct gen *g)
{
	struct { struct perf_event_header h; __u32 size; } __attribute__((packed)) rec = {
		.h = { .type = PD_RECORD_HEADER_TRACING_DATA, .size = sizeof(rec) },
		.size = 8,
	};
	/* the payload, written as a record of 8 bytes: nothing reads it as one */
	struct perf_event_header payload = { .size = 8 };

	put_bytes(g, &rec, sizeof(rec));
	put_bytes(g, &payload, sizeof(payload));
}

/* ---- feature sections ---------------------------------------------------- */

struct raw_feats {
	struct feat_raw f[16];
	unsigned char buf[16][256];
	size_t nr;
};

static void feat_bytes(struct raw_feats *r, unsigned int feat, const void *p, size_t size)
{
	memcpy(r->buf[r->nr], p, size);
	r->f[r->nr] = (struct feat_raw){ .feat = feat, .data = r->buf[r->nr], .size = size };
	r->nr++;
}

/* perf's string: u32 length (a multiple of 64, NUL included), then the bytes */
static void feat_string(struct raw_feats *r, unsigned int feat, const char *s)
{
	unsigned char b[256] = { 0 };
	__u32 len = (strlen(s) + 1 + 63) / 64 * 64;

	memcpy(b, &len, 4);
	memcpy(b + 4, s, strlen(s));
	feat_bytes(r, feat, b, 4 + len);
}

/* What perf record writes about the machine, made up. */
static void feat_machine(struct raw_feats *r)
{
	const __u32 nrcpus[2] = { 2, 2 };
	const __u64 clock_res = 1, sample_time[2] = { 5, 95 };
	const __u32 no_caps = 0;

	feat_string(r, PD_FEAT_HOSTNAME, "golden");
	feat_string(r, PD_FEAT_OSRELEASE, "6.19.0-golden");
	feat_string(r, PD_FEAT_VERSION, "6.19.0");
	feat_string(r, PD_FEAT_ARCH, "x86_64");
	feat_bytes(r, PD_FEAT_NRCPUS, nrcpus, sizeof(nrcpus));
	feat_string(r, PD_FEAT_CPUDESC, "Golden CPU @ 1.00GHz");
	feat_bytes(r, PD_FEAT_CLOCKID, &clock_res, sizeof(clock_res));
	feat_bytes(r, PD_FEAT_SAMPLE_TIME, sample_time, sizeof(sample_time));
	/* a section that stitch does not copy */
	feat_bytes(r, PD_FEAT_CPU_PMU_CAPS, &no_caps, sizeof(no_caps));
}

/* ---- fp-defer.data: perf >= 6.19's deferred form, two CPU buffers -------- */

static void fp_defer_body(struct gen *g)
{
	const __u64 k[] = { K(0x1234), K(0x5678) };
	const __u64 u[] = { U(0x10), U(0x220), U(0x330) }, l[] = { L(0x40), U(0x120) };
	const __u64 idx[] = {
		4,
		ID_C0, 0, 0, (__u64)-1, ID_C1, 0, 1, (__u64)-1,
		ID_F0, 1, 0, (__u64)-1, ID_F1, 1, 1, (__u64)-1,
	};
	const __u64 type23[] = { 0x2323, 0, 64, ID_C0, 0 }, bpf_meta[] = { 0x8484 };

	/* what perf record synthesizes first, then FINISHED_INIT */
	t_kernel_mmap(&g->e, K(0), 0x1000000);
	put(g);
	t_comm(&g->e, 100, 100, "golden", 5, ID_C0, 0, true);
	put(g);
	t_mmap2(&g->e, 100, 100, U(0), 0x2000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		"/usr/bin/golden", 6, ID_C0, 0);
	put(g);
	t_mmap2(&g->e, 100, 100, L(0), 0x8000, 0x1000, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		"/usr/lib/libgolden.so.1", 7, ID_C0, 0);
	put(g);
	r_words(g, PD_RECORD_FINISHED_INIT, NULL, 0);
	r_words(g, PD_RECORD_ID_INDEX, idx, ARRAY_SIZE(idx));

	/* round 1: CPU 1's buffer, then CPU 0's */
	t_sample_deferred(&g->e, 100, 101, 25, ID_C1, 1, k, 2, COOKIE(2));
	put(g);
	t_sample(&g->e, 100, 101, 35, ID_F1, 1, U(0x20),
		 (const __u64[]){ T_USER_DEFERRED, COOKIE(2) }, 2);
	put(g);
	r_fork(g, 100, 100, 101, 100, 10, ID_C0, 0);
	t_sample_deferred(&g->e, 100, 100, 20, ID_C0, 0, NULL, 0, COOKIE(1));
	put(g);
	t_sample_deferred(&g->e, 100, 100, 30, ID_C0, 0, k, 1, COOKIE(1));
	put(g);
	t_deferred(&g->e, 100, 100, 40, ID_C0, 0, COOKIE(1), u, 3);
	put(g);
	t_round(&g->e);
	put(g);

	/* round 2 */
	t_sample(&g->e, 100, 101, 45, ID_C1, 1, k[0],
		 (const __u64[]){ PERF_CONTEXT_KERNEL, k[0], k[1] }, 3);
	put(g);
	/* another cookie: the two samples of cookie 2 go out unmatched */
	t_deferred(&g->e, 100, 101, 50, ID_C1, 1, COOKIE(3), l, 2);
	put(g);
	t_sample_deferred(&g->e, 100, 101, 70, ID_C1, 1, k, 2, COOKIE(5));
	put(g);
	t_lost(&g->e, ID_C0, 3, 55, ID_C0, 0);
	put(g);
	t_sample_deferred(&g->e, 100, 100, 60, ID_C0, 0, NULL, 0, COOKIE(4));
	put(g);
	r_throttle(g, 62, ID_C0, 0);
	r_tracing_data(g);
	r_words(g, 23, type23, ARRAY_SIZE(type23));
	t_round(&g->e);
	put(g);

	/* round 3: a COMM older than what round 2 has written already */
	t_comm(&g->e, 100, 101, "golden-wk", 38, ID_C1, 1, false);
	put(g);
	t_deferred(&g->e, 100, 100, 80, ID_C0, 0, COOKIE(4), u, 2);
	put(g);
	t_exit(&g->e, 100, 101, 85, ID_C0, 0);
	put(g);
	t_sample_deferred(&g->e, 100, 100, 90, ID_C0, 0, k, 2, COOKIE(6));
	put(g);
	t_sample(&g->e, 100, 100, 95, ID_F1, 1, u[0],
		 (const __u64[]){ PERF_CONTEXT_USER, u[0], u[1] }, 3);
	put(g);
	r_words(g, PD_RECORD_BPF_METADATA, bpf_meta, ARRAY_SIZE(bpf_meta));
	t_round(&g->e);
	put(g);
}

static void gen_fp_defer(const char *path)
{
	static const char *const argv[] = { "record", "--call-graph", "fp,defer", "--", "golden" };
	struct perf_event_attr a0 = t_attr(true, true), a1 = t_attr(true, false);
	const __u64 ids0[] = { ID_C0, ID_C1 }, ids1[] = { ID_F0, ID_F1 };
	struct build_id_entry bid[] = {
		{ .path = "/usr/bin/golden", .pid = -1, .size = 20,
		  .build_id = { 0x60, 0x1d, 0xe0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
				15, 16, 17 } },
		{ .path = "[kernel.kallsyms]", .pid = -1, .kernel = true, .size = 20,
		  .build_id = { 0x6e, 0x7e, 0x1, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8,
				0xf7, 0xf6, 0xf5, 0xf4, 0xf3, 0xf2, 0xf1, 0xf0, 0xef } },
	};
	struct raw_feats raw = { .nr = 0 };
	struct perf_data_features f = {
		.cmdline = "/usr/bin/perf", .argc = ARRAY_SIZE(argv), .argv = (const char **)argv,
		.build_ids = bid, .nr_build_ids = ARRAY_SIZE(bid), .no_host = true,
	};
	struct gen g;

	a1.config = PERF_COUNT_SW_PAGE_FAULTS;
	a1.sample_period = 1;
	feat_machine(&raw);
	f.raw = raw.f;
	f.nr_raw = raw.nr;
	open_gen(&g, path);
	/* the second attr unnamed: its name is made from type and config */
	g.err = perf_data_writer__add_attr(g.w, &a0, ids0, 2, "cpu-clock") ?:
		perf_data_writer__add_attr(g.w, &a1, ids1, 2, NULL);
	fp_defer_body(&g);
	close_gen(&g, path, &f);
}

/* ---- dwarf-defer.data: USER_DUMP records, no rounds (sorted whole) ------- */

#define D_REGS	0x1c0ULL	/* BP, SP, IP */
#define D_STACK	64

/* PERF_DEFER_RECORD_USER_DUMP { cookie, abi, regs, size, data, dyn_size, sample_id } */
static void r_user_dump(struct gen *g, __u32 tid, __u64 time, __u64 cookie, __u64 abi,
			__u64 size, __u64 dyn)
{
	tev__begin(&g->e, PERF_DEFER_RECORD_USER_DUMP, PERF_RECORD_MISC_USER);
	tev__u64(&g->e, cookie);
	tev__u64(&g->e, abi);
	for (int i = 0; abi && i < 3; i++)
		tev__u64(&g->e, 0x7ffd0000 + 0x100 * i + tid);
	tev__u64(&g->e, size);
	if (size) {
		for (__u64 i = 0; i < size / 8; i++)
			tev__u64(&g->e, 0x0101010101010101ULL * (i + 1) + tid);
		tev__u64(&g->e, dyn);
	}
	tev__id(&g->e, 200, tid, time, ID_C0, 0);
	tev__end(&g->e);
	put(g);
}

static void gen_dwarf_defer(const char *path)
{
	static const char *const argv[] = { "record", "--call-graph", "dwarf,defer,64" };
	struct perf_event_attr a = t_attr(true, true);
	const __u64 ids[] = { ID_C0 }, k[] = { K(0x1234) }, u[] = { U(0x10), U(0x220) };
	struct perf_data_features f = {
		.cmdline = "/usr/bin/perf-defer", .argc = ARRAY_SIZE(argv),
		.argv = (const char **)argv, .no_host = true,
	};
	struct gen g;

	a.sample_regs_user = D_REGS;
	a.sample_stack_user = D_STACK;
	open_gen(&g, path);
	g.err = perf_data_writer__add_attr(g.w, &a, ids, 1, "cpu-clock");
	t_kernel_mmap(&g.e, K(0), 0x1000000);
	put(&g);
	t_comm(&g.e, 200, 200, "golden-dw", 5, ID_C0, 0, true);
	put(&g);
	t_mmap2(&g.e, 200, 200, U(0), 0x2000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		"/usr/bin/golden-dw", 6, ID_C0, 0);
	put(&g);
	/* out of time order in the file: stitch sorts it whole */
	t_sample_deferred(&g.e, 200, 200, 22, ID_C0, 0, k, 1, COOKIE(1));
	put(&g);
	t_sample_deferred(&g.e, 200, 200, 20, ID_C0, 0, NULL, 0, COOKIE(1));
	put(&g);
	r_user_dump(&g, 200, 30, COOKIE(1), PERF_SAMPLE_REGS_ABI_64, D_STACK, 48);
	t_sample_deferred(&g.e, 200, 201, 40, ID_C0, 0, NULL, 0, COOKIE(2));
	put(&g);
	/* an in-NMI walk, kept: no registers, no stack */
	t_sample(&g.e, 200, 200, 35, ID_C0, 0, k[0],
		 (const __u64[]){ PERF_CONTEXT_KERNEL, k[0], PERF_CONTEXT_USER, u[0], u[1] }, 5);
	put(&g);
	/* a dump of nothing: abi NONE, no stack */
	r_user_dump(&g, 201, 45, COOKIE(2), 0, 0, 0);
	t_sample_deferred(&g.e, 200, 200, 50, ID_C0, 0, k, 1, COOKIE(3));
	put(&g);
	r_user_dump(&g, 200, 52, COOKIE(3), PERF_SAMPLE_REGS_ABI_64, 0, 0);
	/* a callchain record for a dump attr's sample: not of its kind */
	t_sample_deferred(&g.e, 200, 202, 60, ID_C0, 0, NULL, 0, COOKIE(4));
	put(&g);
	t_deferred(&g.e, 200, 202, 62, ID_C0, 0, COOKIE(4), u, 2);
	put(&g);
	t_exit(&g.e, 200, 202, 70, ID_C0, 0);
	put(&g);
	close_gen(&g, path, &f);
}

/* ---- plain.data: every sample field, the other record types -------------- */

#define P_ID	31
#define P_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
		 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | \
		 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | \
		 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | \
		 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP | \
		 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE)
#define P_READ	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST | \
		 PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

/* sample_id of P_TYPE: tid, time, id, stream_id, cpu, identifier */
static void p_id(struct tev *e, __u32 tid, __u64 time, __u32 cpu)
{
	tev__u32x2(e, 300, tid);
	tev__u64(e, time);
	tev__u64(e, P_ID);
	tev__u64(e, P_ID);
	tev__u32x2(e, cpu, 0);
	tev__u64(e, P_ID);
}

/* read_format P_READ: a group of two */
static void p_read(struct tev *e, __u64 v)
{
	tev__u64(e, 2);
	tev__u64(e, 1000 + v);			/* time_enabled */
	tev__u64(e, 900 + v);			/* time_running */
	for (__u64 i = 0; i < 2; i++) {
		tev__u64(e, v * 10 + i);	/* value */
		tev__u64(e, P_ID + i);		/* id */
		tev__u64(e, i);			/* lost */
	}
}

static void p_sample(struct gen *g, __u32 tid, __u64 time, __u32 cpu, bool user_regs)
{
	struct tev *e = &g->e;

	tev__begin(e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	tev__u64(e, P_ID);			/* identifier */
	tev__u64(e, U(0x10));			/* ip */
	tev__u32x2(e, 300, tid);
	tev__u64(e, time);
	tev__u64(e, 0xdead0000 + time);		/* addr */
	tev__u64(e, P_ID);
	tev__u64(e, P_ID);			/* stream_id */
	tev__u32x2(e, cpu, 0);
	tev__u64(e, 4000 + time);		/* period */
	p_read(e, time);
	tev__u64(e, 3);				/* callchain */
	tev__u64(e, PERF_CONTEXT_USER);
	tev__u64(e, U(0x10));
	tev__u64(e, U(0x220));
	tev__u32x2(e, 12, 0x72617721);		/* raw: size 12, "!war" ... */
	tev__u64(e, 0x6f6c6467);
	tev__u64(e, 1);				/* branch stack nr, hw_idx, entry */
	tev__u64(e, 7);
	tev__u64(e, U(0x10));
	tev__u64(e, U(0x220));
	tev__u64(e, 0x5);
	if (user_regs) {
		tev__u64(e, PERF_SAMPLE_REGS_ABI_64);
		tev__u64(e, 0x7ffd1000);
		tev__u64(e, 0x7ffd1008);
		tev__u64(e, U(0x10));
		tev__u64(e, 16);		/* stack: size, data, dyn_size */
		tev__u64(e, 0x1111111111111111ULL);
		tev__u64(e, 0x2222222222222222ULL);
		tev__u64(e, 8);
	} else {
		tev__u64(e, 0);			/* abi NONE */
		tev__u64(e, 0);			/* stack size 0 */
	}
	tev__u64(e, 77);			/* weight */
	tev__u64(e, 0x68100142);		/* data_src */
	tev__u64(e, 0x3);			/* transaction */
	tev__u64(e, PERF_SAMPLE_REGS_ABI_64);	/* intr regs */
	tev__u64(e, 0xa);
	tev__u64(e, 0xb);
	tev__u64(e, 0x1234000);			/* phys_addr */
	tev__u64(e, 42);			/* cgroup */
	tev__u64(e, 4096);			/* data_page_size */
	tev__u64(e, 2097152);			/* code_page_size */
	tev__end(e);
	put(g);
}

static void p_begin(struct gen *g, __u32 type, __u16 misc)
{
	tev__begin(&g->e, type, misc);
}

static void p_end(struct gen *g, __u32 tid, __u64 time, __u32 cpu)
{
	p_id(&g->e, tid, time, cpu);
	tev__end(&g->e);
	put(g);
}

static void plain_body(struct gen *g)
{
	struct tev *e = &g->e;

	/* the kernel's map as perf synthesizes it: zeroed sample_id */
	p_begin(g, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	tev__u32x2(e, (__u32)-1, 0);
	tev__u64(e, K(0));
	tev__u64(e, 0x1000000);
	tev__u64(e, K(0));
	tev__string(e, "[kernel.kallsyms]_text");
	for (int i = 0; i < 6; i++)
		tev__u64(e, 0);
	tev__end(e);
	put(g);
	p_begin(g, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	tev__u32x2(e, 300, 300);
	tev__string(e, "golden-plain");
	p_end(g, 300, 5, 0);
	/* MMAP2 with a build-id in place of device and inode */
	p_begin(g, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	tev__u32x2(e, 300, 300);
	tev__u64(e, U(0));
	tev__u64(e, 0x2000);
	tev__u64(e, 0);
	tev__u32x2(e, 20, 0x04030201);		/* size, reserved, build-id bytes... */
	tev__u64(e, 0x0c0b0a0908070605ULL);
	tev__u64(e, 0x14131211100f0e0dULL);
	tev__u32x2(e, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	tev__string(e, "/usr/bin/golden-plain");
	p_end(g, 300, 6, 0);
	/* a data mapping, old-style MMAP */
	p_begin(g, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA);
	tev__u32x2(e, 300, 300);
	tev__u64(e, 0x600000);
	tev__u64(e, 0x1000);
	tev__u64(e, 0x3000);
	tev__string(e, "/var/tmp/golden.dat");
	p_end(g, 300, 7, 0);
	/* records out of time order: no FINISHED_ROUND, so sorted whole */
	p_begin(g, PERF_RECORD_FORK, 0);
	tev__u32x2(e, 300, 300);
	tev__u32x2(e, 301, 300);
	tev__u64(e, 12);
	p_end(g, 301, 12, 1);
	p_sample(g, 300, 20, 0, true);
	p_sample(g, 301, 15, 1, false);
	p_begin(g, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	p_end(g, 300, 21, 0);
	p_begin(g, PERF_RECORD_SWITCH, 0);
	p_end(g, 300, 23, 0);
	p_begin(g, PERF_RECORD_SWITCH_CPU_WIDE,
		PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	tev__u32x2(e, 301, 301);
	p_end(g, 300, 22, 0);
	p_begin(g, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	tev__u32x2(e, 300, 300);
	p_end(g, 301, 22, 1);
	p_begin(g, PERF_RECORD_KSYMBOL, 0);
	tev__u64(e, K(0x800000));
	tev__u32x2(e, 0x200, 1);		/* len, type BPF, flags 0 */
	tev__string(e, "bpf_prog_golden");
	p_end(g, 0, 24, 1);
	p_begin(g, PERF_RECORD_THROTTLE, 0);
	tev__u64(e, 25);
	tev__u64(e, P_ID);
	tev__u64(e, P_ID);
	p_end(g, 300, 25, 0);
	p_begin(g, PERF_RECORD_UNTHROTTLE, 0);
	tev__u64(e, 26);
	tev__u64(e, P_ID);
	tev__u64(e, P_ID);
	p_end(g, 300, 26, 0);
	p_begin(g, PERF_RECORD_READ, 0);
	tev__u32x2(e, 300, 301);
	p_read(e, 27);
	p_end(g, 301, 27, 1);
	p_begin(g, PERF_RECORD_LOST_SAMPLES, 0);
	tev__u64(e, 4);
	p_end(g, 300, 28, 0);
	p_begin(g, PERF_RECORD_LOST, 0);
	tev__u64(e, P_ID);
	tev__u64(e, 5);
	p_end(g, 300, 29, 0);
	p_begin(g, PERF_RECORD_TEXT_POKE, PERF_RECORD_MISC_KERNEL);
	tev__u64(e, K(0x4000));
	tev__u32x2(e, 5 | 5 << 16, 0x90909090);	/* old_len, new_len, bytes */
	tev__u64(e, 0x90909090e8e8e8e8ULL);
	p_end(g, 0, 30, 0);
	p_begin(g, PERF_RECORD_CGROUP, 0);
	tev__u64(e, 42);
	tev__string(e, "/golden.slice");
	p_end(g, 300, 31, 0);
	p_sample(g, 300, 33, 0, true);
	p_begin(g, PERF_RECORD_EXIT, 0);
	tev__u32x2(e, 300, 300);
	tev__u32x2(e, 301, 300);
	tev__u64(e, 40);
	p_end(g, 301, 40, 1);
	/* a record type nobody knows, above perf's own */
	r_words(g, 99, (const __u64[]){ 0x9999 }, 1);
}

static void gen_plain(const char *path)
{
	static const char *const argv[] = { "record", "-e", "cycles" };
	struct perf_event_attr a = {
		.type = PERF_TYPE_HARDWARE, .size = sizeof(a),
		.config = PERF_COUNT_HW_CPU_CYCLES, .sample_period = 4000,
		.sample_type = P_TYPE, .read_format = P_READ,
		.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX,
		.sample_regs_user = 0x7, .sample_stack_user = 16, .sample_regs_intr = 0x3,
		.sample_id_all = 1, .mmap = 1, .comm = 1, .task = 1, .mmap2 = 1,
	};
	const __u64 ids[] = { P_ID };
	struct raw_feats raw = { .nr = 0 };
	struct perf_data_features f = {
		.cmdline = "/usr/bin/perf", .argc = ARRAY_SIZE(argv), .argv = (const char **)argv,
		.no_host = true,
	};
	struct gen g;

	feat_machine(&raw);
	f.raw = raw.f;
	f.nr_raw = raw.nr;
	open_gen(&g, path);
	g.err = perf_data_writer__add_attr(g.w, &a, ids, 1, NULL);
	plain_body(&g);
	close_gen(&g, path, &f);
}

/* ---- newattr.data: attrs of a newer perf, made without the writer -------- */

#define N_ATTR	160	/* bytes of attr in the file: more than any header has yet */

static void gen_newattr(const char *path)
{
	struct perf_event_attr a = t_attr(false, true);
	unsigned char file[4096] = { 0 };
	__u64 hdr[13] = { 0x32454c4946524550ULL, 104 }, ids[] = { 501 };
	size_t off = 104, data;
	struct tev e;
	FILE *f;

	a.size = N_ATTR;
	memcpy(file + off, ids, sizeof(ids));
	off += sizeof(ids);
	hdr[2] = N_ATTR + 16;			/* attr_size */
	hdr[3] = off;				/* attrs */
	hdr[4] = N_ATTR + 16;
	memcpy(file + off, &a, sizeof(a));
	file[off + 152] = 0x5a;			/* a field we do not have, set */
	memcpy(file + off + N_ATTR, (const __u64[]){ 104, sizeof(ids) }, 16);
	off += N_ATTR + 16;
	data = off;
#define N_PUT(size)	(memcpy(file + off, e.w, size), off += size)
	N_PUT(t_comm(&e, 500, 500, "golden-new", 5, 501, 0, true));
	N_PUT(t_sample(&e, 500, 500, 10, 501, 0, U(0x10),
		       (const __u64[]){ PERF_CONTEXT_USER, U(0x10), U(0x220) }, 3));
	N_PUT(t_round(&e));
	N_PUT(t_exit(&e, 500, 500, 20, 501, 0));
#undef N_PUT
	hdr[5] = data;
	hdr[6] = off - data;
	memcpy(file, hdr, sizeof(hdr));		/* no feature bits */
	f = fopen(path, "w");
	if (!f || fwrite(file, 1, off, f) != off || fclose(f))
		die("cannot write %s", path);
}

/* ---- corrupt.data: a sample whose callchain runs past its end ------------ */

static void gen_corrupt(const char *path)
{
	struct perf_event_attr a = t_attr(true, true);
	const __u64 ids[] = { ID_C0 }, k[] = { K(0x1234) };
	struct perf_data_features f = { .no_host = true };
	struct gen g;

	open_gen(&g, path);
	g.err = perf_data_writer__add_attr(g.w, &a, ids, 1, "cpu-clock");
	t_comm(&g.e, 400, 400, "golden-bad", 5, ID_C0, 0, true);
	put(&g);
	t_sample_deferred(&g.e, 400, 400, 10, ID_C0, 0, k, 1, COOKIE(1));
	put(&g);
	t_sample(&g.e, 400, 400, 20, ID_C0, 0, k[0], k, 1);
	g.e.w[7] = 1000;			/* callchain nr */
	put(&g);
	t_exit(&g.e, 400, 400, 30, ID_C0, 0);
	put(&g);
	close_gen(&g, path, &f);
}

/* ---- truncated.data: the first 1000 bytes of fp-defer.data --------------- */

static void gen_truncated(const char *path, const char *from)
{
	size_t size;
	void *buf = t_slurp(from, &size);

	if (!buf || size < 1000 || t_spew(path, buf, 1000))
		die("cannot write %s", path);
	free(buf);
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], from[PATH_MAX];
	const char *dir = argc > 1 ? argv[1] : ".";

#define P(name)	(snprintf(path, sizeof(path), "%s/%s", dir, name), path)
	gen_fp_defer(P("fp-defer.data"));
	gen_dwarf_defer(P("dwarf-defer.data"));
	gen_plain(P("plain.data"));
	gen_newattr(P("newattr.data"));
	gen_corrupt(P("corrupt.data"));
	snprintf(from, sizeof(from), "%s/fp-defer.data", dir);
	gen_truncated(P("truncated.data"), from);
#undef P
	return 0;
}
