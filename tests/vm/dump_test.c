// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deferred user register and stack dumps (PERF_DEFER_IOC_SET_DUMP,
 * PERF_DEFER_RECORD_USER_DUMP) through perf_defer.ko, run as root in the
 * QEMU guest; the module comes from $PERF_DEFER_KO.
 *
 * The workloads keep frame pointers, so a dump can be checked without a
 * DWARF unwinder: the saved return address at BP + word in the dumped
 * stack must lie in the caller the workload's call path names.
 *
 *	dump_test [-l] [-t TEST]...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "defer_lib.h"
#include "kselftest_harness.h"
#include "dl_harness.h"

#define PERIOD_NS	500000		/* cpu-clock every 0.5 ms */
#define MAX_CHILD	1
#define MAX_PERF	2
#define MAX_SESS	2

#if defined(__aarch64__)
/* perf record --call-graph dwarf's arm64 mask: X0..X28, X29, LR, SP, PC */
#define DWARF_REGS	0x1ffffffffULL
#define NR_DWARF_REGS	33
/* index of a register in a dump of DWARF_REGS: X0, the frame pointer... */
#define R_AX		0
#define R_BP		29
#define R_SP		31
#define R_IP		32
/*
 * An AArch32 task's: r11 is its frame pointer; its SP and PC come at
 * arm64's places.  Its APCS frame (gcc -mapcs-frame, as perf's compat
 * walk reads it) saves the return address just below r11's target.
 */
#define R_BP32		11
#define RA_OFF32	(-4)
/*
 * masks perf takes but a dump cannot give: VG (bit 46, with SVE; perf
 * refuses anything else past PC itself)
 */
#define BAD_MASKS	{ 1ULL << 46, DWARF_REGS | 1ULL << 46 }
#else
/* perf record --call-graph dwarf's x86-64 mask: AX..SS, R8..R15 */
#define DWARF_REGS	0xff0fffULL
#define NR_DWARF_REGS	20
/* index of a register in a dump of DWARF_REGS (bits 0..11 come first) */
#define R_AX		0
#define R_BP		6
#define R_SP		7
#define R_IP		8
/* an -m32 task's EBP and its return address right above it */
#define R_BP32		R_BP
#define RA_OFF32	4
/* DS (bit 12) is not saved on x86-64; bit 24 is past R15 */
#define BAD_MASKS	{ DWARF_REGS | 1ULL << 12, DWARF_REGS | 1ULL << 24, 1ULL << 31 }
#endif

FIXTURE(dump) {
	DL_RUN_FIELDS(MAX_CHILD, MAX_PERF, MAX_SESS);
	pid_t pid;			/* of the workload */
	struct perf_defer_stats delta;	/* module counters over run() */
	uint64_t lost;			/* counted in the rings' control pages */
};

FIXTURE_SETUP(dump)
{
	DL_RUN_INIT(self);
}

FIXTURE_TEARDOWN(dump)
{
	DL_RUN_RESET(self);
	dl_syms_free(self->syms);
	DL_UNLOAD(self);
}

/* a session of @pages ring pages; @stack >= 0: dumps of that size (0: default) */
#define SESS_OPEN(i, pages, stack)					\
	do {								\
		ASSERT_EQ(0, dl_session_open(&self->s[i], i, pages));	\
		if ((stack) >= 0)					\
			ASSERT_EQ(0, dl_ioc_set_dump(self->s[i].fd,	\
				PERF_DEFER_DUMP_REGS_STACK, stack));	\
		ASSERT_EQ(0, dl_session_map(&self->s[i]));		\
	} while (0)


/* sample @argv with event i (DWARF_REGS in sample_regs_user) until it exits */
static void run(struct __test_metadata *_metadata, FIXTURE_DATA(dump) *self,
		char *const argv[], int nev)
{
	struct perf_defer_stats st0, st1;
	struct perf_event_attr attr;
	int i, st;

	ASSERT_EQ(0, dl_get_stats(self->s[0].fd, &st0));
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	/* not in sample_type: the kernel neither checks nor uses it then */
	attr.sample_regs_user = DWARF_REGS;
	ASSERT_EQ(0, dl_child_spawn(&self->c[0], argv));
	self->pid = self->c[0].pid;
	for (i = 0; i < nev; i++) {
		ASSERT_EQ(0, dl_perf_open(&self->p[i], i, &attr, self->c[0].pid, DL_ALL_CPUS, 0));
		ASSERT_EQ(0, dl_session_attach(&self->s[i], &self->p[i], &self->d));
	}
	EXPECT_EQ(0, dl_child_go(&self->c[0]));
	st = dl_collect(&self->c[0], self->p, MAX_PERF, self->s, MAX_SESS, &self->d, NULL);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("wait status %#x", st);
	ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);
	ASSERT_EQ(0, dl_get_stats(self->s[0].fd, &st1));
	dl_stats_delta(&st0, &st1, &self->delta);
	dl_stats_log("module counters", &self->delta);
	/* a full ring drops records, but says so */
	for (i = 0; i < MAX_SESS; i++)
		self->lost += dl_session_lost(&self->s[i]);
	EXPECT_EQ(self->delta.drops, self->lost);
}

/*
 * Every deferred sample of an event attached to dump session @sess finds
 * exactly one dump of its session, tid and cookie, except in the kernel
 * entry a task exits in (no return to user: counted as exit_pending);
 * every dump serves at least one sample.  Returns the number of deferred
 * samples.
 */
static size_t match_dumps(struct __test_metadata *_metadata, FIXTURE_DATA(dump) *self,
			  int sess)
{
	struct dl_data *d = &self->d;
	size_t i, j, deferred = 0, unmatched = 0, entries = 0, unused = 0, dups = 0;
	struct { uint64_t cookie; uint32_t tid; } *seen;
	uint64_t cookie;
	int found;

	seen = calloc(d->ns ?: 1, sizeof(*seen));
	ASSERT_NE(NULL, seen);

	for (i = 0; i < d->ns; i++) {
		const struct dl_sample *s = &d->s[i];

		if (s->ev < 0 || d->ev_sess[s->ev] != sess || !dl_deferred(s, &cookie))
			continue;
		deferred++;
		found = 0;
		for (j = 0; j < d->nu; j++) {
			struct dl_dump *u = &d->u[j];

			if (u->sess == sess && u->cookie == cookie && u->sid.tid == s->tid) {
				found++;
				u->nsamples++;
			}
		}
		dups += found > 1;
		if (found)
			continue;
		unmatched++;
		/*
		 * An entry is a task's cookie.  Its samples need not follow
		 * each other here: the task can move to another CPU in the
		 * entry, and each CPU's ring is read in turn.
		 */
		for (j = 0; j < entries; j++)
			if (seen[j].cookie == cookie && seen[j].tid == s->tid)
				break;
		if (j == entries) {
			seen[entries].cookie = cookie;
			seen[entries++].tid = s->tid;
		}
	}
	free(seen);
	for (j = 0; j < d->nu; j++)
		unused += d->u[j].sess == sess && !d->u[j].nsamples;
	TH_LOG("session %d: %zu deferred samples, %zu dumps; %zu samples (%zu entries) "
	       "without dump, exit_pending %llu, drops %llu; %zu unused dumps, %zu duplicates", sess,
	       deferred, d->nu, unmatched, entries,
	       (unsigned long long)self->delta.exit_pending,
	       (unsigned long long)self->delta.drops, unused, dups);
	EXPECT_GE(self->delta.exit_pending + self->delta.drops, entries);
	EXPECT_EQ(0, unused);
	EXPECT_EQ(0, dups);
	return deferred;
}

/* the word at @addr of the dumped stack, if it was copied */
static bool stack_word(const struct dl_dump *u, uint64_t addr, unsigned int ws, uint64_t *val)
{
	uint64_t sp = u->regs[R_SP], off;
	uint32_t v32;

	if (addr < sp)
		return false;
	off = addr - sp;
	if (off > u->dyn_size || u->dyn_size - off < ws)
		return false;
	if (ws == 4) {
		memcpy(&v32, u->stack + off, 4);
		*val = v32;
	} else {
		memcpy(val, u->stack + off, 8);
	}
	return true;
}

/*
 * wl_calls kernel: the entries by read() (AX holds its 256 KiB result, the
 * IP is where read() returns; other entries, an interrupt or a page fault,
 * may come in a prologue or an epilogue, without the frame) have their IP
 * in leaf_kernel, and the
 * return address its frame saved, read from the dumped stack at BP +
 * word, in gamma_ or epsilon.
 */
static void check_calls(struct __test_metadata *_metadata, FIXTURE_DATA(dump) *self,
			uint64_t abi, unsigned int ws, uint64_t stack_size)
{
	size_t j, k, leaf = 0, good = 0, bad = 0, most = 0;
	const char *ip_sym, *ra_sym;
	uint64_t off, ra, ret_ip = 0;

	/*
	 * The entries by read() all come back at one IP, right after the
	 * system call instruction: the commonest IP in leaf_kernel with AX
	 * the read's result.  An interrupt in leaf_kernel's epilogue, after
	 * its frame is popped (one instruction on x86-64, two on arm64), has
	 * that AX too, but another IP and the caller's frame at BP.
	 */
	for (j = 0; j < self->d.nu; j++) {
		const struct dl_dump *u = &self->d.u[j];
		size_t n = 0;

		ip_sym = u->nregs == NR_DWARF_REGS ? dl_sym(self->syms, u->regs[R_IP], &off) : NULL;
		if (!ip_sym || strcmp(ip_sym, "leaf_kernel") || u->regs[R_AX] != 256 << 10)
			continue;
		for (k = 0; k < self->d.nu; k++)
			n += self->d.u[k].nregs == NR_DWARF_REGS &&
			     self->d.u[k].regs[R_IP] == u->regs[R_IP] &&
			     self->d.u[k].regs[R_AX] == 256 << 10;
		if (n > most) {
			most = n;
			ret_ip = u->regs[R_IP];
		}
	}
	for (j = 0; j < self->d.nu; j++) {
		const struct dl_dump *u = &self->d.u[j];

		if (u->misc != PERF_RECORD_MISC_USER || u->abi != abi ||
		    u->nregs != NR_DWARF_REGS || u->stack_size != stack_size || !u->dyn_size ||
		    u->sid.pid != (uint32_t)self->pid) {
			if (!bad++)
				TH_LOG("dump: misc %#x abi %llu nregs %u size %llu dyn %llu pid %u",
				       u->misc, (unsigned long long)u->abi, u->nregs,
				       (unsigned long long)u->stack_size,
				       (unsigned long long)u->dyn_size, u->sid.pid);
			continue;
		}
		if (ws == 4 && (u->regs[R_IP] >> 32 || u->regs[R_SP] >> 32 || u->regs[R_BP32] >> 32)) {
			if (!bad++)
				TH_LOG("compat dump with 64-bit registers");
			continue;
		}
		ip_sym = dl_sym(self->syms, u->regs[R_IP], &off);
		if (u->regs[R_AX] != 256 << 10 || !ip_sym || strcmp(ip_sym, "leaf_kernel") ||
		    u->regs[R_IP] != ret_ip)
			continue;
		leaf++;
		ra_sym = NULL;
		if (stack_word(u, ws == 4 ? u->regs[R_BP32] + RA_OFF32 : u->regs[R_BP] + ws, ws, &ra))
			ra_sym = dl_sym(self->syms, ra, &off);
		if (ra_sym && (!strcmp(ra_sym, "gamma_") || !strcmp(ra_sym, "epsilon")))
			good++;
		else if (!bad++)
			TH_LOG("leaf_kernel dump: sp %#llx bp %#llx dyn %llu: return address %s",
			       (unsigned long long)u->regs[R_SP],
			       (unsigned long long)u->regs[ws == 4 ? R_BP32 : R_BP],
			       (unsigned long long)u->dyn_size, ra_sym ?: "not in the dump");
	}
	TH_LOG("%zu dumps, %zu in read() from leaf_kernel, %zu with its caller at BP %+d, %zu bad",
	       self->d.nu, leaf, good, ws == 4 ? RA_OFF32 : (int)ws, bad);
	EXPECT_EQ(0, bad);
	EXPECT_LE(10, leaf);
	EXPECT_EQ(leaf, good);
}

TEST_F_TIMEOUT(dump, wl_calls_regs_and_stack, 120)
{
	char *argv[] = { "wl_calls", "kernel", "1200", NULL };

	LOAD_MODULE();
	load_syms(_metadata, self, "wl_calls");
	/* 1001 is rounded up to 1008, as perf rounds sample_stack_user */
	SESS_OPEN(0, 256, 1001);
	run(_metadata, self, argv, 1);
	EXPECT_EQ(0, self->d.nr) TH_LOG("CALLCHAIN_DEFERRED records in a dump session");
	EXPECT_LE(20, match_dumps(_metadata, self, 0));
	check_calls(_metadata, self, PERF_SAMPLE_REGS_ABI_64, 8, 1008);
	/* one dump per kernel entry, shared by its samples */
	EXPECT_EQ(self->delta.records, self->d.nu);
	EXPECT_EQ(self->delta.unwinds, self->delta.records + self->delta.drops);
}

TEST_F_TIMEOUT(dump, compat_abi_32, 120)
{
	char *argv[] = { "wl_calls32", "kernel", "1200", NULL };
	char path[PATH_MAX];

	/* arm64: built in a chroot with Debian's gcc for armhf */
	snprintf(path, sizeof(path), "%s/wl_calls32", dl_self_dir());
	if (access(path, X_OK))
		SKIP(return, "no wl_calls32 beside dump_test (for arm64: scripts/deps cross-gcc armhf)");
	LOAD_MODULE();
	load_syms(_metadata, self, "wl_calls32");
	SESS_OPEN(0, 256, 0);	/* default: 8 KiB */
	run(_metadata, self, argv, 1);
	EXPECT_LE(20, match_dumps(_metadata, self, 0));
	check_calls(_metadata, self, PERF_SAMPLE_REGS_ABI_32, 4, PERF_DEFER_DUMP_DEF_STACK);
}

/* one task, one fp session and one dump session: each gets its own kind */
TEST_F_TIMEOUT(dump, fp_and_dump_sessions, 120)
{
	char *argv[] = { "wl_calls", "kernel", "1200", NULL };
	struct dl_stitch_stats st;

	LOAD_MODULE();
	load_syms(_metadata, self, "wl_calls");
	SESS_OPEN(0, 256, -1);
	SESS_OPEN(1, 256, 4096);
	run(_metadata, self, argv, 2);
	/* CALLCHAIN_DEFERRED for session 0 only, dumps for session 1 only */
	dl_stitch(&self->d, &st);
	dl_stitch_log("fp session", &st);
	EXPECT_LT(0, self->d.nr);
	EXPECT_EQ(0, st.unused);
	EXPECT_EQ(0, st.dups);
	for (size_t j = 0; j < self->d.nr; j++)
		EXPECT_EQ(0, self->d.r[j].sess);
	for (size_t j = 0; j < self->d.nu; j++)
		EXPECT_EQ(1, self->d.u[j].sess);
	EXPECT_LE(20, match_dumps(_metadata, self, 1));
	check_calls(_metadata, self, PERF_SAMPLE_REGS_ABI_64, 8, 4096);
}

/*
 * wl_zapstack: the stack pages above the reading frame are not present
 * when the task enters read().  The dump faults them back in: it comes
 * out whole (dyn_size == size), and the frame pointers inside it lead
 * through the recursion.
 */
TEST_F_TIMEOUT(dump, zapped_stack_whole, 120)
{
	char *argv[] = { "wl_zapstack", "-t", "1500", "-d", "24", NULL };
	size_t j, n = 0, whole = 0, deep = 0;
	uint64_t off, bp, ra;
	const char *sym;
	int recs, min_recs = 1 << 30;

	LOAD_MODULE();
	load_syms(_metadata, self, "wl_zapstack");
	SESS_OPEN(0, 1024, PERF_DEFER_DUMP_MAX_STACK);
	run(_metadata, self, argv, 1);
	match_dumps(_metadata, self, 0);
	for (j = 0; j < self->d.nu; j++) {
		const struct dl_dump *u = &self->d.u[j];

		sym = u->abi ? dl_sym(self->syms, u->regs[R_IP], &off) : NULL;
		if (!sym || strcmp(sym, "long_read"))
			continue;
		n++;
		whole += u->stack_size == PERF_DEFER_DUMP_MAX_STACK &&
			 u->dyn_size == u->stack_size;
		/* frames in the dump: long_read, bottom, rec, rec, ... */
		recs = 0;
		bp = u->regs[R_BP];
		while (stack_word(u, bp + 8, 8, &ra) && stack_word(u, bp, 8, &bp)) {
			sym = dl_sym(self->syms, ra, &off);
			if (!sym || (strcmp(sym, "rec") && strcmp(sym, "bottom")))
				break;
			recs += !strcmp(sym, "rec");
		}
		deep += recs >= 12;
		if (recs < min_recs)
			min_recs = recs;
	}
	TH_LOG("%zu dumps in long_read: %zu whole (%u bytes), %zu with >= 12 rec frames (min %d)",
	       n, whole, PERF_DEFER_DUMP_MAX_STACK, deep, min_recs);
	EXPECT_LE(10, n);
	EXPECT_EQ(n, whole);
	EXPECT_EQ(n, deep);
}

/* ---- PERF_DEFER_IOC_SET_DUMP and attach: every invalid input ---------- */

FIXTURE(dsess) {
	bool loaded;
	int fd, ev;
};

static int open_event(uint64_t regs_mask)
{
	struct perf_event_attr attr;

	dl_attr_cpu_clock(&attr, PERIOD_NS);
	attr.sample_regs_user = regs_mask;
	attr.enable_on_exec = 0;
	attr.inherit = 0;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

FIXTURE_SETUP(dsess)
{
	self->fd = self->ev = -1;
	LOAD_MODULE();
	self->fd = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->ev = open_event(DWARF_REGS);
	ASSERT_LE(0, self->ev);
}

FIXTURE_TEARDOWN(dsess)
{
	if (self->ev >= 0)
		close(self->ev);
	if (self->fd >= 0)
		close(self->fd);
	DL_UNLOAD(self);
}

#define DSESS_SKIPPED() do { if (_metadata->skip) return; } while (0)

TEST_F(dsess, set_dump_ok)
{
	DSESS_SKIPPED();
	EXPECT_EQ(0, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, 0));
	EXPECT_EQ(0, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, 8));
	EXPECT_EQ(0, dl_ioc_set_dump(self->fd, 0, 0));	/* off again */
	EXPECT_EQ(0, dl_ioc_attach(self->fd, self->ev));
}

TEST_F(dsess, set_dump_bad_size)
{
	struct perf_defer_dump u = { .size = sizeof(u) - 4, .flags = PERF_DEFER_DUMP_REGS_STACK };
	struct perf_defer_dump big[2] = { { .size = sizeof(big) } };

	DSESS_SKIPPED();
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_SET_DUMP, &u));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_SET_DUMP, big));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dsess, set_dump_reserved_nonzero)
{
	struct perf_defer_dump u = {
		.size = sizeof(u), .flags = PERF_DEFER_DUMP_REGS_STACK, .__reserved = 1,
	};

	DSESS_SKIPPED();
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_SET_DUMP, &u));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dsess, set_dump_unknown_flag)
{
	DSESS_SKIPPED();
	EXPECT_EQ(-EINVAL, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK | 2, 0));
	EXPECT_EQ(-EINVAL, dl_ioc_set_dump(self->fd, 1U << 31, 0));
}

TEST_F(dsess, set_dump_stack_too_big)
{
	DSESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_set_ring(self->fd, 64));
	EXPECT_EQ(0, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK,
				     PERF_DEFER_DUMP_MAX_STACK));
	EXPECT_EQ(-EINVAL, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK,
					   PERF_DEFER_DUMP_MAX_STACK + 1));
	EXPECT_EQ(-EINVAL, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, 65536));
	EXPECT_EQ(-EINVAL, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, ~0U));
}

/* records larger than the ring are refused, never cut */
TEST_F(dsess, set_dump_larger_than_ring)
{
	long page = sysconf(_SC_PAGESIZE);

	DSESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_set_ring(self->fd, 2));
	EXPECT_EQ(-EINVAL, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, 2 * page));
	EXPECT_EQ(0, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, page));
}

TEST_F(dsess, set_ring_smaller_than_dump)
{
	DSESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_set_ring(self->fd, 32));
	ASSERT_EQ(0, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK,
				     PERF_DEFER_DUMP_MAX_STACK));
	/* 16 pages (64 KiB) cannot hold a 64 KiB dump and its headers */
	EXPECT_EQ(-EINVAL, dl_ioc_set_ring(self->fd, 16));
	EXPECT_EQ(0, dl_ioc_set_ring(self->fd, 32));
}

TEST_F(dsess, set_dump_after_attach)
{
	DSESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_attach(self->fd, self->ev));
	EXPECT_EQ(-EBUSY, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, 0));
}

TEST_F(dsess, attach_without_regs_mask)
{
	int ev = open_event(0);

	DSESS_SKIPPED();
	ASSERT_LE(0, ev);
	ASSERT_EQ(0, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, 0));
	EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, ev));
	close(ev);
}

TEST_F(dsess, attach_regs_not_given)
{
	uint64_t masks[] = BAD_MASKS;
	size_t i;
	int ev;

	DSESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_set_dump(self->fd, PERF_DEFER_DUMP_REGS_STACK, 0));
	for (i = 0; i < ARRAY_SIZE(masks); i++) {
		ev = open_event(masks[i]);
#if defined(__aarch64__)
		/* VG only where perf takes it (an SVE CPU) */
		if (ev < 0)
			SKIP(return, "perf refuses VG here (%s): no mask to try", strerror(errno));
#endif
		ASSERT_LE(0, ev) TH_LOG("open with mask %#llx", (unsigned long long)masks[i]);
		EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, ev))
			TH_LOG("mask %#llx", (unsigned long long)masks[i]);
		close(ev);
	}
}

TEST_HARNESS_MAIN
