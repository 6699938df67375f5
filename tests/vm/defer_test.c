// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deferred user callchains through perf_defer.ko, run as root in the QEMU
 * guest.  Each test loads the module from $PERF_DEFER_KO and unloads it.
 *
 * The workloads (wl_*) sit next to this program.  cpu-clock sampling
 * (TCG has no PMU) of a workload started with enable_on_exec; its samples
 * come from the perf ring, the CALLCHAIN_DEFERRED records from the
 * session's rings, and defer_lib stitches them by (session, tid, cookie).
 * Reference runs use the same event without a session: perf's own in-NMI
 * frame-pointer walk.
 *
 *	defer_test [-l] [-t TEST]...	the tests (TAP), or only those named
 *	defer_test --sample PID MS	attach to a running task for MS ms
 *					(lifecycle.sh), print counts
 *	defer_test --hold		hold perf's task-event jump label on
 *					until killed (lifecycle.sh)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "defer_lib.h"
#include "kselftest_harness.h"
#include "dl_harness.h"

#define PERIOD_NS	500000		/* cpu-clock every 0.5 ms */
#define MAX_CHILD	4
#define MAX_PERF	4
#define MAX_SESS	2

FIXTURE(defer) {
	bool loaded;
	struct dl_child c[MAX_CHILD];
	struct dl_perf p[MAX_PERF];
	struct dl_session s[MAX_SESS];
	struct dl_data d;
	struct dl_syms *syms;
	struct perf_defer_stats st0;
};

/* end the current run: children, events, sessions, parsed data */
static void run_reset(FIXTURE_DATA(defer) *self)
{
	DL_RUN_RESET(self);
}

FIXTURE_SETUP(defer)
{
	DL_RUN_INIT(self);
}

FIXTURE_TEARDOWN(defer)
{
	run_reset(self);
	dl_syms_free(self->syms);
	DL_UNLOAD(self);
}

#define SPAWN(i, ...)							\
	do {								\
		char *__argv[] = { __VA_ARGS__, NULL };			\
		ASSERT_EQ(0, dl_child_spawn(&self->c[i], __argv));	\
	} while (0)

/* per-CPU events on pid, as perf record opens them for a workload */
#define EV_OPEN(i, attr, pid)						\
	ASSERT_EQ(0, dl_perf_open(&self->p[i], i, attr, pid, DL_ALL_CPUS, 0))

#define SESS_OPEN(i, pages)						\
	do {								\
		ASSERT_EQ(0, dl_session_open(&self->s[i], i, pages));	\
		ASSERT_EQ(0, dl_session_map(&self->s[i]));		\
	} while (0)

#define ATTACH(si, pi)							\
	ASSERT_EQ(0, dl_session_attach(&self->s[si], &self->p[pi], &self->d))

#define STATS(st) ASSERT_EQ(0, dl_get_stats(self->s[0].fd, st))


/* start child i and collect until it exits; returns its wait status */
static int go_collect(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self, int i,
		      const struct dl_collect_opts *o)
{
	int status;

	EXPECT_EQ(0, dl_child_go(&self->c[i]));
	status = dl_collect(&self->c[i], self->p, MAX_PERF, self->s, MAX_SESS, &self->d, o);
	if (status == -1)
		TH_LOG("workload %d timed out", i);
	return status;
}

#define GO_COLLECT_OK(i, o)						\
	do {								\
		int __st = go_collect(_metadata, self, i, o);		\
		ASSERT_TRUE(WIFEXITED(__st) && WEXITSTATUS(__st) == 0)	\
			TH_LOG("workload %d: wait status %#x", i, __st); \
	} while (0)

/* wait until no request is pending (module-wide), up to ms */
static uint64_t wait_no_pending(int fd, int ms)
{
	struct perf_defer_stats st;
	int i;

	for (i = 0; i <= ms / 10; i++) {
		if (dl_get_stats(fd, &st))
			return ~0ull;
		if (!st.pending)
			return 0;
		usleep(10000);
	}
	return st.pending;
}

/* The newest record of @s's task no newer than @s, or NULL. */
static const struct dl_record *last_record(const struct dl_data *d, const struct dl_sample *s)
{
	const struct dl_record *best = NULL;
	size_t j;

	for (j = 0; j < d->nr; j++) {
		const struct dl_record *r = &d->r[j];

		if (r->sid.tid == s->tid && r->sid.time <= s->time &&
		    (!best || r->sid.time > best->sid.time))
			best = r;
	}
	return best;
}

/*
 * The in-NMI user chain of @s and the chain of the newest record of its
 * task before it agree: a kernel-mode sample of an entry whose user
 * registers are those the previous entry's unwind left (a fault retried on
 * the same instruction, the same read() with the same result sampled after
 * it ran), which the module takes for the same entry.  Either chain may be
 * the longer: the in-NMI walk stops at a page that is not present, and
 * perf's walk goes on past glibc's start routine where the deferred one
 * stops, as native's does.
 */
static bool same_as_last_record(const struct dl_data *d, const struct dl_sample *s)
{
	const struct dl_record *best = last_record(d, s);
	const uint64_t *ips;
	int n;

	n = dl_user_chain(d, s, &ips);
	if (n <= 0 || !best || !best->nr)
		return false;
	n = n < (int)best->nr ? n : (int)best->nr;
	return !memcmp(best->ips, ips, n * sizeof(*ips));
}

/* @s's in-NMI user chain beside the last record's */
static void log_against_last_record(const struct dl_data *d, const struct dl_syms *y,
				    const struct dl_sample *s)
{
	const struct dl_record *r = last_record(d, s);
	const uint64_t *ips;
	int n = dl_user_chain(d, s, &ips);

	if (!r) {
		dl_log("  no record of the task before it");
		return;
	}
	dl_log("  last record at %llu, cookie %#llx", (unsigned long long)r->sid.time,
	       (unsigned long long)r->cookie);
	dl_log_chains(y, 1, "the sample (in-NMI walk)", ips, n, "the last record", r->ips,
		      (int)r->nr);
}

/* @s's first user frame (the IP at kernel entry) is the last record's */
static bool same_ip_as_last_record(const struct dl_data *d, const struct dl_sample *s)
{
	const struct dl_record *best = last_record(d, s);
	const uint64_t *ips;

	return best && best->nr && dl_user_chain(d, s, &ips) > 0 && ips[0] == best->ips[0];
}

/*
 * Samples of attached events with an in-NMI user chain that are followed
 * by a deferred sample of the same task: not in its exit path, not on the
 * way back to user space after their entry's unwind, not in an exec, and
 * with another stack than the task's last unwind.  *@same_ip counts the
 * samples let through because they start where the last record does but
 * go on otherwise: a next entry with the very registers of the last
 * unwind (an interrupt taken right on the return to user space, on a slow
 * kernel) whose in-NMI frame-pointer walk differs from the record's table
 * walk; the module counts each of those in after_unwind.
 */
static size_t not_deferred_midlife(const struct dl_data *d, const struct dl_syms *y,
				   size_t *same_ip)
{
	size_t i, j, bad = 0;
	uint64_t cookie;

	*same_ip = 0;
	for (i = 0; i < d->ns; i++) {
		const struct dl_sample *s = &d->s[i];

		if (s->ev < 0 || d->ev_sess[s->ev] < 0 || dl_deferred(s, &cookie) ||
		    !dl_has_user(s) || !s->time || dl_on_way_out(s) ||
		    same_as_last_record(d, s))
			continue;
		if (same_ip_as_last_record(d, s)) {
			(*same_ip)++;
			continue;
		}
		for (j = 0; j < d->ns; j++) {
			const struct dl_sample *t = &d->s[j];

			if (t->tid == s->tid && t->ev == s->ev && t->time > s->time &&
			    dl_deferred(t, &cookie)) {
				if (!bad++) {
					dl_log("tid %u: sample not deferred at %llu, a deferred one "
					       "at %llu", s->tid, (unsigned long long)s->time,
					       (unsigned long long)t->time);
					dl_log_kernel_chain(s);
					log_against_last_record(d, y, s);
				}
				break;
			}
		}
	}
	return bad;
}

/*
 * What every run with attached events must show: well-formed records,
 * nothing lost, one record per entry, no record without a sample, every
 * deferred sample stitched (bar tasks that exited with a request
 * pending).  Also the per-record fields: misc, ring CPU, user-mode IPs.
 */
static void check_stitched(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
			   const char *what, struct dl_stitch_stats *st,
			   const struct perf_defer_stats *delta)
{
	struct dl_data *d = &self->d;
	size_t i, bad_misc = 0, bad_cpu = 0, bad_ip = 0, nouser_ip = 0, same_ip;
	int j;

	dl_stitch(d, st);
	dl_stitch_log(what, st);
	ASSERT_EQ(0, d->nerr) TH_LOG("%s: %s", what, d->err);
	EXPECT_EQ(0, d->perf_lost);
	for (j = 0; j < MAX_SESS; j++) {
		EXPECT_EQ(0, dl_session_lost(&self->s[j])) TH_LOG("session %d lost", j);
		if (self->s[j].nempty_wakeups)
			TH_LOG("session %d: %u poll wakeups without data", j,
			       self->s[j].nempty_wakeups);
	}
	EXPECT_EQ(0, d->nl) TH_LOG("PERF_RECORD_LOST in a session ring");
	ASSERT_LT(0, st->deferred) TH_LOG("%s: no deferred sample", what);
	EXPECT_EQ(0, st->bad_cookie);
	EXPECT_EQ(0, st->bad_shape);
	EXPECT_EQ(0, st->dups) TH_LOG("%s: more than one record for an entry", what);
	EXPECT_EQ(0, st->unused) TH_LOG("%s: records without a sample", what);
	EXPECT_EQ(0, st->time_order) TH_LOG("%s: record older than its sample", what);
	EXPECT_EQ(0, st->id_mismatch) TH_LOG("%s: record id/pid differ from the sample's", what);
	/*
	 * A task that exits with a request pending is counted once, however
	 * many sessions sampled that entry; any other entry gets a record.
	 */
	if (delta)
		EXPECT_GE(delta->exit_pending, st->tasks_unmatched)
			TH_LOG("%s: %zu entries of tasks (%zu of sessions, %zu samples) without record, exit_pending %llu",
			       what, st->tasks_unmatched, st->entries_unmatched, st->unmatched,
			       (unsigned long long)delta->exit_pending);
	/* an attached event keeps its in-NMI chain only in a task's exit path */
	EXPECT_EQ(0, not_deferred_midlife(d, self->syms, &same_ip))
		TH_LOG("%s: attached samples not deferred", what);
	EXPECT_LE(same_ip, delta ? delta->after_unwind : 0)
		TH_LOG("%s: %zu samples not deferred, with the last record's IP", what, same_ip);

	for (i = 0; i < d->nr; i++) {
		struct dl_record *r = &d->r[i];
		struct dl_session *s = &self->s[r->sess];

		bad_misc += r->misc != PERF_RECORD_MISC_USER;
		if (s->sample_id_all && (s->sample_type & PERF_SAMPLE_CPU))
			bad_cpu += r->sid.cpu != r->ring_cpu;
	}
	EXPECT_EQ(0, bad_misc) TH_LOG("%s: records with misc != PERF_RECORD_MISC_USER", what);
	EXPECT_EQ(0, bad_cpu) TH_LOG("%s: records whose sample_id cpu is not their ring's", what);

	/* a user-mode sample is unwound on the very next return to user */
	for (i = 0; i < d->ns; i++) {
		struct dl_sample *s = &d->s[i];
		struct dl_record *r;

		if (s->rec < 0 || dl_kernel_mode(s) ||
		    !(self->p[s->ev].attr.sample_type & PERF_SAMPLE_IP))
			continue;
		r = &d->r[s->rec];
		if (!r->nr) {
			nouser_ip++;
			continue;
		}
		if (r->ips[0] != s->ip) {
			if (!bad_ip++)
				TH_LOG("%s: user-mode sample ip %#llx, its record starts at %#llx",
				       what, (unsigned long long)s->ip,
				       (unsigned long long)r->ips[0]);
		}
	}
	EXPECT_EQ(0, bad_ip) TH_LOG("%s: user-mode samples unwound later than their tick", what);
	EXPECT_EQ(0, nouser_ip) TH_LOG("%s: user-mode samples with an empty record", what);
}

static bool ra_is(const struct dl_syms *y, uint64_t ra, const char *name)
{
	const char *s = dl_sym(y, ra - 1, NULL);

	return s && !strcmp(s, name);
}

/* the path (return addresses) begins with the functions named, in order */
static bool path_starts(const struct dl_syms *y, const struct dl_path *p, const char *const *fn)
{
	int i;

	for (i = 0; fn[i]; i++)
		if (i >= p->n || !ra_is(y, p->ips[i], fn[i]))
			return false;
	return true;
}

/*
 * glibc's start routine keeps no frame pointer, so what a walk finds past
 * its frame is stale stack: perf's in-NMI walk follows it while it can
 * read it, the deferred walk stops at the first frame that breaks
 * upstream's rules (fp >= sp, CFA moving up and word aligned).  Paths are
 * compared up to that frame; past it the deferred path must be a prefix
 * of perf's.
 */
static int cut_after_libc_start(const struct dl_syms *y, const uint64_t *path, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (ra_is(y, path[i], "__libc_start_call_main"))
			return i + 1;
	return n;
}

/*
 * The paths (user chain minus its IP) of the samples of event ev whose
 * first user frame is in function leaf, kernel-mode or user-mode ones:
 * cut after glibc's start routine into ps, whole into raw (may be NULL).
 */
static void leaf_paths(FIXTURE_DATA(defer) *self, int ev, const char *leaf, bool kernel,
		       struct dl_paths *ps, struct dl_paths *raw, size_t *no_chain)
{
	const uint64_t *ips;
	size_t i;
	int n;

	for (i = 0; i < self->d.ns; i++) {
		struct dl_sample *s = &self->d.s[i];

		if (s->ev != ev || dl_kernel_mode(s) != kernel)
			continue;
		n = dl_user_chain(&self->d, s, &ips);
		if (n <= 0) {
			(*no_chain)++;
			continue;
		}
		if (!ra_is(self->syms, ips[0] + 1, leaf))
			continue;
		dl_paths_add(ps, ips + 1, cut_after_libc_start(self->syms, ips + 1, n - 1));
		if (raw)
			dl_paths_add(raw, ips + 1, n - 1);
	}
	dl_paths_sort(ps);
	if (raw)
		dl_paths_sort(raw);
}

/* paths seen in at least 2% of the samples (and twice) */
#define MAJOR(ps) ((ps)->total / 50 > 2 ? (ps)->total / 50 : 2)

static const char *const path_a[] = { "gamma_", "beta", "alpha", "main", NULL };
static const char *const path_b[] = { "epsilon", "delta", "main", NULL };

/* the major paths of wl_calls: exactly path_a and path_b */
static void check_calls_paths(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
			      const char *what, const struct dl_paths *ps, size_t min)
{
	size_t i, major = 0, a = 0, b = 0;

	dl_paths_log(self->syms, what, ps, 6);
	ASSERT_LE(50, ps->total) TH_LOG("%s: too few samples", what);
	for (i = 0; i < ps->n; i++) {
		if (ps->p[i].count < min)
			continue;
		major++;
		if (path_starts(self->syms, &ps->p[i], path_a))
			a++;
		else if (path_starts(self->syms, &ps->p[i], path_b))
			b++;
		else
			dl_log_chain(self->syms, 0, "unexpected path", ps->p[i].ips, ps->p[i].n);
	}
	EXPECT_EQ(2, major) TH_LOG("%s: %zu major paths", what, major);
	EXPECT_EQ(1, a) TH_LOG("%s: main-alpha-beta-gamma_ paths: %zu", what, a);
	EXPECT_EQ(1, b) TH_LOG("%s: main-delta-epsilon paths: %zu", what, b);
}

/*
 * One run of wl_calls (bin) in MODE, deferred or with perf's own fp walk:
 * the paths of the samples in its leaf function.
 */
static void calls_run(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
		      const char *bin, const char *mode, bool deferred, struct dl_paths *ps,
		      struct dl_paths *raw)
{
	bool kernel = !strcmp(mode, "kernel");
	const char *leaf = kernel ? "leaf_kernel" : "leaf_user";
	struct perf_defer_stats st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	size_t no_chain = 0;
	char what[64];

	snprintf(what, sizeof(what), "%s %s %s", bin, mode, deferred ? "deferred" : "fp");
	load_syms(_metadata, self, bin);
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	run_reset(self);
	if (deferred)
		SESS_OPEN(0, 64);
	SPAWN(0, (char *)bin, (char *)mode, "1500");
	EV_OPEN(0, &attr, self->c[0].pid);
	if (deferred) {
		ATTACH(0, 0);
		STATS(&self->st0);
	}
	GO_COLLECT_OK(0, NULL);
	ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);
	EXPECT_EQ(0, self->d.perf_lost);
	if (deferred) {
		STATS(&st1);
		dl_stats_delta(&self->st0, &st1, &delta);
		check_stitched(_metadata, self, what, &st, &delta);
	}
	leaf_paths(self, 0, leaf, kernel, ps, raw, &no_chain);
	/* unmatched samples (a task's exit) may fall outside the leaf */
	EXPECT_GE(deferred ? st.unmatched : 0, no_chain)
		TH_LOG("%s: samples without user chain", what);
	check_calls_paths(_metadata, self, what, ps, MAJOR(ps));
}

/*
 * Deferred paths (def, raw_def) against perf's fp walk (fp, raw_fp): the
 * same major paths frame for frame up to glibc's start routine, and past
 * it the deferred path a prefix of perf's.
 */
static void compare_paths(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
			  const char *what, const struct dl_paths *def,
			  const struct dl_paths *raw_def, const struct dl_paths *fp,
			  const struct dl_paths *raw_fp)
{
	int miss;

	miss = dl_paths_missing(self->syms, "fp", fp, "deferred", def, MAJOR(def));
	EXPECT_EQ(0, miss) TH_LOG("%s: deferred paths that fp lacks: %d", what, miss);
	miss = dl_paths_missing(self->syms, "deferred", def, "fp", fp, MAJOR(fp));
	EXPECT_EQ(0, miss) TH_LOG("%s: fp paths that the deferred run lacks: %d", what, miss);
	miss = dl_paths_not_prefix(self->syms, "fp", raw_fp, "deferred", raw_def,
				   MAJOR(raw_def));
	EXPECT_EQ(0, miss) TH_LOG("%s: whole deferred paths not a prefix of fp's: %d", what,
				  miss);
	if (raw_def->n && raw_fp->n) {
		int pd = raw_def->p[0].n - cut_after_libc_start(self->syms, raw_def->p[0].ips,
								  raw_def->p[0].n);
		int pf = raw_fp->p[0].n - cut_after_libc_start(self->syms, raw_fp->p[0].ips,
								 raw_fp->p[0].n);

		if (pd != pf)
			TH_LOG("%s: note: past glibc's start routine the deferred walk has %d "
			       "frames, perf's %d", what, pd, pf);
	}
}

/* wl_calls (bin) in MODE deferred and with fp: the same paths, frame for frame */
static void calls_compare(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
			  const char *bin, const char *mode)
{
	struct dl_paths def = { 0 }, fp = { 0 }, raw_def = { 0 }, raw_fp = { 0 };
	char what[64];

	snprintf(what, sizeof(what), "%s %s", bin, mode);
	calls_run(_metadata, self, bin, mode, true, &def, &raw_def);
	calls_run(_metadata, self, bin, mode, false, &fp, &raw_fp);
	compare_paths(_metadata, self, what, &def, &raw_def, &fp, &raw_fp);
	dl_paths_free(&def);
	dl_paths_free(&fp);
	dl_paths_free(&raw_def);
	dl_paths_free(&raw_fp);
}

TEST_F_TIMEOUT(defer, chains_match_fp, 180)
{
	LOAD_MODULE();
	calls_compare(_metadata, self, "wl_calls", "user");
	calls_compare(_metadata, self, "wl_calls", "kernel");
}

/* the module's user_unwind parameter; 0 or -errno */
static int set_user_unwind(const char *order)
{
	int fd = open("/sys/module/" DL_MODNAME "/parameters/user_unwind", O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, order, strlen(order));
	close(fd);
	return n == (ssize_t)strlen(order) ? 0 : -EINVAL;
}

/*
 * One run of BIN (wl_nofp, wl_nofp_sframe) in MODE with the module's
 * user_unwind at ORDER, checked as every deferred run is: of the deferred
 * samples whose first user frame is in the leaf (in user mode for MODE
 * user, in the kernel for kernel, either for scribble), how many reach
 * main (*reached of *total).
 */
static void nofp_reach(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
		       const char *bin, const char *mode, const char *order, size_t *reached,
		       size_t *total, struct dl_paths *ps)
{
	bool kernel = !strcmp(mode, "kernel"), any = strcmp(mode, "user") && !kernel;
	bool dyn = !strcmp(bin, "wl_dyn");
	const char *leaf = dyn ? "cmp_slow" : any ? "leaf_scribble" :
			   kernel ? "leaf_kernel" : "leaf_user";
	const char *root = dyn && !strcmp(mode, "thread") ? "thread_main" : "main";
	struct perf_defer_stats st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	const uint64_t *ips;
	size_t i;
	int n, j;

	*reached = *total = 0;
	ASSERT_EQ(0, set_user_unwind(order));
	load_syms(_metadata, self, bin);
	run_reset(self);
	SESS_OPEN(0, 64);
	SPAWN(0, (char *)bin, (char *)mode, any ? "3000" : "1000");
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	STATS(&self->st0);
	GO_COLLECT_OK(0, NULL);
	ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	check_stitched(_metadata, self, order, &st, &delta);
	for (i = 0; i < self->d.ns; i++) {
		const struct dl_sample *s = &self->d.s[i];

		if (s->ev != 0 || s->rec < 0 || (!any && dl_kernel_mode(s) != kernel))
			continue;
		n = dl_user_chain(&self->d, s, &ips);
		if (n <= 0 || !ra_is(self->syms, ips[0] + 1, leaf))
			continue;
		(*total)++;
		if (ps)
			dl_paths_add(ps, ips + 1, cut_after_libc_start(self->syms, ips + 1, n - 1));
		for (j = 1; j < n; j++)
			if (ra_is(self->syms, ips[j], root)) {
				(*reached)++;
				break;
			}
	}
	TH_LOG("%s %s, user_unwind %s: %zu of %zu deferred %s samples reach %s", bin, mode,
	       order, *reached, *total, leaf, root);
}

/*
 * wl_nofp (wl_calls without frame pointers, with .eh_frame): the table
 * walk finds both call paths down to main, in user and kernel mode, where
 * the frame-pointer walk cannot.
 */
TEST_F_TIMEOUT(defer, eh_frame_walk_without_frame_pointers, 300)
{
	static const char *const modes[] = { "user", "kernel" };
	struct dl_paths ps = { 0 };
	size_t i, reached, total;

	LOAD_MODULE();
	ASSERT_EQ(-EINVAL, set_user_unwind("eh_frame,bogus"));
	ASSERT_EQ(-EINVAL, set_user_unwind("fp,fp"));
	for (i = 0; i < 2; i++) {
		/* exactly wl_calls' two paths, and main in (nearly) every one */
		nofp_reach(_metadata, self, "wl_nofp", modes[i], "eh_frame,fp", &reached, &total,
			   &ps);
		dl_paths_sort(&ps);
		check_calls_paths(_metadata, self, "eh_frame", &ps, MAJOR(&ps));
		dl_paths_free(&ps);
		EXPECT_LT(50, total);
		EXPECT_LE(total * 99, reached * 100);
		/* the control: the frame-pointer walk alone does not get there */
		nofp_reach(_metadata, self, "wl_nofp", modes[i], "fp", &reached, &total, NULL);
		EXPECT_LT(50, total);
		EXPECT_GT(total / 2, reached);
	}
}

/*
 * Sessions 0 and 1 open, workload 0 spawned: attach a cpu-clock event of
 * each session to it (periods 1 and 1.5 PERIOD_NS), run it, and check the
 * run; the module's counters of the run go to *(delta).
 */
#define TWO_SESSIONS_GO(what, delta)						\
	do {									\
		struct perf_defer_stats __st1;					\
		struct perf_event_attr __attr;					\
		struct dl_stitch_stats __st;					\
		dl_attr_cpu_clock(&__attr, PERIOD_NS);				\
		EV_OPEN(0, &__attr, self->c[0].pid);				\
		__attr.sample_period = PERIOD_NS * 3 / 2;			\
		EV_OPEN(1, &__attr, self->c[0].pid);				\
		ATTACH(0, 0);							\
		ATTACH(1, 1);							\
		STATS(&self->st0);						\
		GO_COLLECT_OK(0, NULL);						\
		STATS(&__st1);							\
		dl_stats_delta(&self->st0, &__st1, (delta));			\
		dl_stats_log("delta", (delta));					\
		check_stitched(_metadata, self, (what), &__st, (delta));	\
	} while (0)

/*
 * Two sessions on one wl_nofp task, one walking by .eh_frame and one by
 * frame pointers: an entry both sampled gets two walks, each session the
 * chain of its own methods; the counters name the methods that walked.
 */
TEST_F_TIMEOUT(defer, unwind_methods_per_session, 120)
{
	static const uint8_t eh[] = { PERF_DEFER_UNWIND_EH_FRAME, PERF_DEFER_UNWIND_FP };
	static const uint8_t fp[] = { PERF_DEFER_UNWIND_FP };
	size_t i, j, n[2] = { 0 }, main_in[2] = { 0 }, shared = 0;
	struct dl_data *d = &self->d;
	struct perf_defer_stats delta;

	LOAD_MODULE();
	load_syms(_metadata, self, "wl_nofp");
	SESS_OPEN(0, 64);
	SESS_OPEN(1, 64);
	ASSERT_EQ(0, dl_ioc_set_unwind(self->s[0].fd, eh, sizeof(eh)));
	ASSERT_EQ(0, dl_ioc_set_unwind(self->s[1].fd, fp, sizeof(fp)));
	SPAWN(0, "wl_nofp", "kernel", "1200");
	TWO_SESSIONS_GO("two orders", &delta);
	for (i = 0; i < d->nr; i++) {
		const struct dl_record *r = &d->r[i];

		/* the leaf's entries: not those of the start-up before main */
		if (!r->nr || !ra_is(self->syms, r->ips[0] + 1, "leaf_kernel"))
			continue;
		n[r->sess]++;
		for (j = 1; j < r->nr; j++)
			if (ra_is(self->syms, r->ips[j], "main")) {
				main_in[r->sess]++;
				break;
			}
		for (j = 0; j < i; j++)
			if (d->r[j].cookie == r->cookie && d->r[j].sid.tid == r->sid.tid &&
			    d->r[j].sess != r->sess)
				shared++;
	}
	TH_LOG("leaf records reaching main: eh_frame session %zu of %zu, fp session %zu of %zu; entries in both %zu",
	       main_in[0], n[0], main_in[1], n[1], shared);
	EXPECT_LT(0, shared);
	EXPECT_LE(n[0] * 99, main_in[0] * 100);
	EXPECT_GT(n[1] / 2, main_in[1]);
	/* one unwind per entry, each walking as many ways as its sessions ask */
	EXPECT_LT(0, delta.frames_eh_frame);
	EXPECT_LT(0, delta.table_objects);
	EXPECT_LT(0, delta.frames_fp);
	EXPECT_EQ(0, delta.frames_sframe);
	/* a busy task: its object's headers are read once, then cached */
	TH_LOG("objects read %llu, found in the cache %llu",
	       (unsigned long long)delta.table_objects,
	       (unsigned long long)delta.table_cache_hits);
	EXPECT_LT(delta.table_objects * 4, delta.table_cache_hits);
}

/*
 * wl_nofp in clock_gettime(): the first frame lies in the vDSO, which is
 * no file mapping but an ELF image with .eh_frame; by .eh_frame alone
 * (no frame-pointer fallback) the walk goes through it down to main.
 */
TEST_F_TIMEOUT(defer, eh_frame_walk_through_vdso, 120)
{
	size_t i, in_vdso = 0, reached = 0;
	struct perf_defer_stats st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	const uint64_t *ips;
	int n, j;

	LOAD_MODULE();
	ASSERT_EQ(0, set_user_unwind("eh_frame"));
	load_syms(_metadata, self, "wl_nofp");
	SESS_OPEN(0, 64);
	SPAWN(0, "wl_nofp", "vdso", "1500");
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	STATS(&self->st0);
	GO_COLLECT_OK(0, NULL);
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	check_stitched(_metadata, self, "vdso", &st, &delta);
	for (i = 0; i < self->d.ns; i++) {
		const struct dl_sample *s = &self->d.s[i];

		/* a static binary: a first frame outside it is the vDSO's */
		if (s->ev != 0 || s->rec < 0)
			continue;
		n = dl_user_chain(&self->d, s, &ips);
		if (n <= 0 || dl_sym(self->syms, ips[0], NULL))
			continue;
		in_vdso++;
		for (j = 1; j < n; j++)
			if (ra_is(self->syms, ips[j], "main")) {
				reached++;
				break;
			}
	}
	TH_LOG("deferred samples in the vDSO: %zu, %zu of them reach main", in_vdso, reached);
	EXPECT_LT(20, in_vdso);
	EXPECT_LE(in_vdso * 99, reached * 100);
}

/*
 * wl_dyn (dynamically linked, -O2 -fomit-frame-pointer): samples in a
 * qsort() comparator, called back from inside libc.so.6, in the main
 * thread and in a pthread: through libc's .eh_frame the chains reach
 * main (thread_main); frame pointers get lost in libc.
 */
TEST_F_TIMEOUT(defer, eh_frame_walk_through_libc, 300)
{
	static const char *const modes[] = { "main", "thread" };
	size_t i, reached, total;

	LOAD_MODULE();
	for (i = 0; i < 2; i++) {
		nofp_reach(_metadata, self, "wl_dyn", modes[i], "eh_frame,fp", &reached, &total,
			   NULL);
		EXPECT_LT(50, total);
		EXPECT_LE(total * 99, reached * 100);
		nofp_reach(_metadata, self, "wl_dyn", modes[i], "fp", &reached, &total, NULL);
		EXPECT_LT(50, total);
		EXPECT_GT(total / 2, reached);
	}
}

/*
 * wl_dyn dlswap: two objects of different layout, each dlopen()ed and
 * dlclose()d in turn, call cmp_slow back.  The layout cache never gives
 * one the other's tables, nor a mapping that is gone its old layout: the
 * chains still reach main.  An object mapped again where it was is the
 * same layout, and may come from the cache.
 */
TEST_F_TIMEOUT(defer, table_cache_objects_swapped, 300)
{
	struct perf_defer_stats st1, delta;
	size_t reached, total;

	LOAD_MODULE();
	nofp_reach(_metadata, self, "wl_dyn", "dlswap", "eh_frame,fp", &reached, &total, NULL);
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	TH_LOG("objects read %llu, found in the cache %llu",
	       (unsigned long long)delta.table_objects,
	       (unsigned long long)delta.table_cache_hits);
	EXPECT_LT(50, total);
	EXPECT_LE(total * 99, reached * 100);
	/* wl_dyn, libc and both libraries at least */
	EXPECT_LE(4, delta.table_objects);
}

/* The same with SFrame (version 1, as bookworm's binutils writes it) alone. */
TEST_F_TIMEOUT(defer, sframe_walk_without_frame_pointers, 300)
{
	static const char *const modes[] = { "user", "kernel" };
	struct dl_paths ps = { 0 };
	size_t i, reached, total;

	LOAD_MODULE();
	for (i = 0; i < 2; i++) {
		nofp_reach(_metadata, self, "wl_nofp_sframe", modes[i], "sframe,fp", &reached,
			   &total, &ps);
		dl_paths_sort(&ps);
		check_calls_paths(_metadata, self, "sframe", &ps, MAJOR(&ps));
		dl_paths_free(&ps);
		EXPECT_LT(50, total);
		EXPECT_LE(total * 99, reached * 100);
	}
}

/*
 * A task that writes random bytes over its own .eh_frame_hdr, .eh_frame
 * and .sframe while it is sampled, and puts them back now and then: the
 * table walk gives whole chains while they are intact and ends early on
 * what it cannot make sense of; the records stay well-formed, nothing is
 * lost, and the kernel reports nothing (the VM run scans its log).
 */
TEST_F_TIMEOUT(defer, tables_scribbled_while_sampled, 300)
{
	static const char *const orders[] = { "sframe,eh_frame,fp", "eh_frame,sframe" };
	size_t i, reached, total;

	LOAD_MODULE();
	for (i = 0; i < 2; i++) {
		nofp_reach(_metadata, self, "wl_nofp_sframe", "scribble", orders[i], &reached,
			   &total, NULL);
		EXPECT_LT(50, total);
		/* broken tables break chains, and intact ones give whole ones */
		EXPECT_LT(reached, total);
		EXPECT_LT(0, reached);
	}
}

TEST_F_TIMEOUT(defer, compat_m32, 180)
{
	LOAD_MODULE();
	calls_compare(_metadata, self, "wl_calls32", "user");
	calls_compare(_metadata, self, "wl_calls32", "kernel");
}

/* frames of a user chain in function fn */
static int count_frames(const struct dl_syms *y, const uint64_t *ips, int n, const char *fn)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += dl_frame_is(y, ips, n, i, fn);
	return k;
}

TEST_F_TIMEOUT(defer, dedup_one_record_per_entry, 120)
{
	struct perf_defer_stats st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	size_t i, ksamples = 0, shallow = 0;
	struct dl_data *d = &self->d;
	struct key_s { uint32_t tid; uint64_t cookie; } *keys;
	size_t nkeys = 0, kentries = 0, j;

	LOAD_MODULE();
	load_syms(_metadata, self, "wl_syscall");
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 64);
	SPAWN(0, "wl_syscall", "-t", "1500", "-c", "16384", "-d", "20", "-n", "2");
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	STATS(&self->st0);
	GO_COLLECT_OK(0, NULL);
	EXPECT_EQ(0, wait_no_pending(self->s[0].fd, 1000));
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	dl_stats_log("delta", &delta);
	check_stitched(_metadata, self, "wl_syscall", &st, &delta);

	/* one record per distinct (tid, cookie), and many samples per entry */
	EXPECT_EQ(st.entries - st.entries_unmatched, st.records - st.dups)
		TH_LOG("records != entries");
	EXPECT_LT(st.entries, st.deferred) TH_LOG("no sample joined an entry");
	keys = calloc(d->ns + 1, sizeof(*keys));
	ASSERT_NE(NULL, keys);
	for (i = 0; i < d->ns; i++) {
		const uint64_t *ips;
		int n;

		if (!dl_kernel_mode(&d->s[i]) || !dl_deferred(&d->s[i], &keys[nkeys].cookie))
			continue;
		keys[nkeys++].tid = d->s[i].tid;
		ksamples++;
		/* reader's read(); not, say, the end of the execve */
		n = dl_user_chain(d, &d->s[i], &ips);
		if (n > 0 && dl_frame_is(self->syms, ips, n, 0, "reader") &&
		    count_frames(self->syms, ips, n, "deep") < 21) {
			if (!shallow++)
				dl_log_chain(self->syms, 1, "shallow chain", ips, n);
		}
	}
	for (i = 0; i < nkeys; i++) {
		for (j = 0; j < i; j++)
			if (keys[j].tid == keys[i].tid && keys[j].cookie == keys[i].cookie)
				break;
		kentries += j == i;
	}
	free(keys);
	TH_LOG("kernel-mode samples %zu in %zu entries (%.1f per entry)", ksamples, kentries,
	       kentries ? (double)ksamples / kentries : 0.0);
	EXPECT_LT(kentries * 3 / 2, ksamples) TH_LOG("fewer than 1.5 samples per kernel entry");
	EXPECT_EQ(0, shallow) TH_LOG("chains without the 21 frames of deep()");

	/* the counters tell the same story */
	EXPECT_EQ(st.deferred, delta.requests);
	EXPECT_EQ(st.deferred - st.entries, delta.dedup);
	EXPECT_EQ(st.records, delta.records);
	EXPECT_EQ(st.records, delta.unwinds);
	EXPECT_EQ(0, delta.drops);
	EXPECT_EQ(0, delta.pool_empty);
	EXPECT_EQ(0, st1.pending);
}

struct zap_counts {
	size_t n;			/* kernel-mode samples in long_read */
	size_t complete;		/* bottom, rec x (depth + 1), zap_thread */
	int hist[4];			/* rec frames: 0, 1, 2, more */
	int max;
};

static void zap_run(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self, int depth,
		    bool deferred, struct zap_counts *zc)
{
	struct perf_defer_stats st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	bool shown = false;
	const uint64_t *ips;
	char dstr[16];
	size_t i;
	int n, k;

	memset(zc, 0, sizeof(*zc));
	load_syms(_metadata, self, "wl_zapstack");
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	snprintf(dstr, sizeof(dstr), "%d", depth);
	run_reset(self);
	if (deferred)
		SESS_OPEN(0, 64);
	SPAWN(0, "wl_zapstack", "-t", "1500", "-d", dstr);
	EV_OPEN(0, &attr, self->c[0].pid);
	if (deferred) {
		ATTACH(0, 0);
		STATS(&self->st0);
	}
	GO_COLLECT_OK(0, NULL);
	ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);
	if (deferred) {
		STATS(&st1);
		dl_stats_delta(&self->st0, &st1, &delta);
		check_stitched(_metadata, self, "wl_zapstack", &st, &delta);
	}
	for (i = 0; i < self->d.ns; i++) {
		struct dl_sample *s = &self->d.s[i];
		bool complete;

		if (!dl_kernel_mode(s))
			continue;
		n = dl_user_chain(&self->d, s, &ips);
		if (n <= 0 || !dl_frame_is(self->syms, ips, n, 0, "long_read"))
			continue;
		k = count_frames(self->syms, ips, n, "rec");
		/* long_read, bottom, rec x (depth + 1), zap_thread */
		complete = k == depth + 1 && dl_frame_is(self->syms, ips, n, 1, "bottom") &&
			   dl_frame_is(self->syms, ips, n, depth + 3, "zap_thread");
		zc->n++;
		zc->complete += complete;
		zc->hist[k < 3 ? k : 3]++;
		zc->max = k > zc->max ? k : zc->max;
		if (complete != deferred && !shown) {
			shown = true;
			dl_log_chain(self->syms, 1, deferred ? "incomplete deferred chain" :
					"complete fp chain", ips, n);
		}
	}
	TH_LOG("%s: %zu kernel-mode samples in long_read, %zu complete; rec frames: "
	       "0:%d 1:%d 2:%d more:%d (max %d of %d)", deferred ? "deferred" : "fp", zc->n,
	       zc->complete, zc->hist[0], zc->hist[1], zc->hist[2], zc->hist[3], zc->max,
	       depth + 1);
	ASSERT_LE(10, zc->n);
}

TEST_F_TIMEOUT(defer, zapped_stack_complete, 120)
{
	struct zap_counts ref, def;

	LOAD_MODULE();
	zap_run(_metadata, self, 40, false, &ref);
	EXPECT_EQ(0, ref.complete) TH_LOG("the in-NMI walk was not truncated");
	zap_run(_metadata, self, 40, true, &def);
	EXPECT_EQ(def.n, def.complete) TH_LOG("deferred chains not complete");
}

/*
 * No module: perf's own fp walk gives the known paths of the workloads
 * and truncated chains on the zapped stack.  Checks the workloads and
 * the parsing, on any kernel.
 */
TEST_F_TIMEOUT(defer, fp_reference, 180)
{
	struct dl_paths ps = { 0 };
	struct zap_counts zc;

	if (geteuid() != 0)
		SKIP(return, "needs root");
	calls_run(_metadata, self, "wl_calls", "user", false, &ps, NULL);
	dl_paths_free(&ps);
	calls_run(_metadata, self, "wl_calls", "kernel", false, &ps, NULL);
	dl_paths_free(&ps);
	calls_run(_metadata, self, "wl_calls32", "user", false, &ps, NULL);
	dl_paths_free(&ps);
	calls_run(_metadata, self, "wl_calls32", "kernel", false, &ps, NULL);
	dl_paths_free(&ps);
	zap_run(_metadata, self, 40, false, &zc);
	EXPECT_EQ(0, zc.complete) TH_LOG("the in-NMI walk was not truncated");
}

/* records per CPU ring, and PERF_RECORD_LOST sums per CPU */
static void per_cpu_counts(const struct dl_data *d, int sess, uint64_t *recs, uint64_t *lost,
			   int ncpu)
{
	size_t i;

	for (i = 0; i < d->nr; i++)
		if (d->r[i].sess == sess && (int)d->r[i].ring_cpu < ncpu)
			recs[d->r[i].ring_cpu]++;
	for (i = 0; i < d->nl; i++)
		if (d->l[i].sess == sess && (int)d->l[i].ring_cpu < ncpu)
			lost[d->l[i].ring_cpu] += d->l[i].lost;
}

TEST_F_TIMEOUT(defer, undersized_ring, 120)
{
	struct dl_collect_opts co = { .sess_drain_ms = -1, .sess_drain_once_ms = 700 };
	struct perf_defer_stats st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	uint64_t recs[256] = { 0 }, lostrec[256] = { 0 }, flush_recs[256] = { 0 };
	uint64_t ctrl_lost, ctrl[256] = { 0 }, sum_lostrec = 0, delivered, nrec_main;
	struct perf_defer_mmap_page *pg;
	int ncpu, cpu;
	size_t i;

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 1);
	ncpu = self->s[0].ncpu;
	ASSERT_GE(256, ncpu);
	SPAWN(0, "wl_syscall", "-t", "1500", "-c", "2048", "-d", "20", "-n", "2");
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	STATS(&self->st0);
	/* no draining but once, 0.7 s in: drops, then space for LOST records */
	GO_COLLECT_OK(0, &co);
	ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);
	dl_stitch(&self->d, &st);
	dl_stitch_log("undersized", &st);
	nrec_main = self->d.nr;
	per_cpu_counts(&self->d, 0, recs, lostrec, ncpu);

	/*
	 * A LOST record is written when the ring has room again: pin a short
	 * workload with few entries on each CPU, its records flush them.
	 */
	for (cpu = 0; cpu < ncpu && cpu < MAX_CHILD; cpu++) {
		struct dl_collect_opts fo = { 0 };
		cpu_set_t set;
		int pi = 1 + cpu % (MAX_PERF - 1);

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		dl_perf_close(&self->p[pi]);
		SPAWN(cpu, "wl_syscall", "-t", "150", "-c", "65536", "-d", "2");
		if (sched_setaffinity(self->c[cpu].pid, sizeof(set), &set)) {
			TH_LOG("CPU %d offline?", cpu);
			dl_child_kill(&self->c[cpu]);
			continue;
		}
		EV_OPEN(pi, &attr, self->c[cpu].pid);
		ATTACH(0, pi);
		EXPECT_EQ(0, dl_child_go(&self->c[cpu]));
		EXPECT_EQ(0, dl_collect(&self->c[cpu], self->p, MAX_PERF, self->s, 1, &self->d, &fo));
	}
	ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);
	EXPECT_EQ(0, wait_no_pending(self->s[0].fd, 1000));
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	dl_stats_log("delta", &delta);
	EXPECT_EQ(0, self->d.perf_lost);

	for (i = nrec_main; i < self->d.nr; i++)
		if ((int)self->d.r[i].ring_cpu < ncpu)
			flush_recs[self->d.r[i].ring_cpu]++;
	memset(recs, 0, sizeof(recs));
	memset(lostrec, 0, sizeof(lostrec));
	per_cpu_counts(&self->d, 0, recs, lostrec, ncpu);
	ctrl_lost = 0;
	for (cpu = 0; cpu < ncpu; cpu++) {
		pg = self->s[0].maps[cpu];
		ctrl[cpu] = pg->lost;
		ctrl_lost += ctrl[cpu];
		sum_lostrec += lostrec[cpu];
		TH_LOG("cpu %d: records %llu (flush %llu), control lost %llu, LOST records sum %llu",
		       cpu, (unsigned long long)recs[cpu], (unsigned long long)flush_recs[cpu],
		       (unsigned long long)ctrl[cpu], (unsigned long long)lostrec[cpu]);
		EXPECT_GE(ctrl[cpu], lostrec[cpu]);
		if (flush_recs[cpu])
			EXPECT_EQ(ctrl[cpu], lostrec[cpu])
				TH_LOG("cpu %d: drops not all reported by PERF_RECORD_LOST", cpu);
	}
	delivered = self->d.nr;
	TH_LOG("delivered %llu + lost %llu (LOST records %llu) vs records %llu + drops %llu",
	       (unsigned long long)delivered, (unsigned long long)ctrl_lost,
	       (unsigned long long)sum_lostrec, (unsigned long long)delta.records,
	       (unsigned long long)delta.drops);
	EXPECT_LT(0, ctrl_lost) TH_LOG("a one-page ring did not overflow");
	EXPECT_EQ(delta.records + delta.drops, delivered + ctrl_lost);
	EXPECT_EQ(delta.records, delivered);
	EXPECT_EQ(delta.drops, ctrl_lost);
	EXPECT_EQ(ctrl_lost, sum_lostrec);
	/* every entry of the main run made a record: delivered or lost */
	dl_stitch(&self->d, &st);
	EXPECT_EQ(0, st.dups);
	EXPECT_EQ(0, st.unused);
	EXPECT_LE(st.entries, delivered + ctrl_lost + delta.exit_pending);
	EXPECT_GE(st.entries, delivered + ctrl_lost);
	for (i = 0; i < self->d.nl; i++) {
		struct dl_lost *l = &self->d.l[i];
		int k, ok = 0;

		for (k = 0; k < MAX_PERF; k++)
			ok |= dl_perf_has_id(&self->p[k], l->id);
		EXPECT_TRUE(ok) TH_LOG("LOST record id %llu is none of the session's events",
				       (unsigned long long)l->id);
	}
}

TEST_F_TIMEOUT(defer, two_sessions, 120)
{
	struct perf_defer_stats st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	size_t i, n[2] = { 0 }, foreign = 0;
	pid_t pid[2];

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 64);
	SESS_OPEN(1, 64);
	SPAWN(0, "wl_syscall", "-t", "1200", "-c", "8192", "-d", "12");
	SPAWN(1, "wl_calls", "kernel", "1200");
	pid[0] = self->c[0].pid;
	pid[1] = self->c[1].pid;
	EV_OPEN(0, &attr, pid[0]);
	EV_OPEN(1, &attr, pid[1]);
	ATTACH(0, 0);
	ATTACH(1, 1);
	STATS(&self->st0);
	EXPECT_EQ(0, dl_child_go(&self->c[1]));
	GO_COLLECT_OK(0, NULL);
	{
		int status = dl_collect(&self->c[1], self->p, MAX_PERF, self->s, MAX_SESS,
					&self->d, NULL);

		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	check_stitched(_metadata, self, "two sessions", &st, &delta);
	for (i = 0; i < self->d.nr; i++) {
		struct dl_record *r = &self->d.r[i];

		n[r->sess]++;
		if (!dl_perf_has_id(&self->p[r->sess], r->sid.id) ||
		    r->sid.pid != (uint32_t)pid[r->sess]) {
			if (!foreign++)
				TH_LOG("session %d got a record of pid %u id %llu (own: pid %d id %llu..)",
				       r->sess, r->sid.pid, (unsigned long long)r->sid.id,
				       pid[r->sess], (unsigned long long)self->p[r->sess].id[0]);
		}
	}
	TH_LOG("records: session 0 %zu, session 1 %zu", n[0], n[1]);
	EXPECT_EQ(0, foreign);
	EXPECT_LT(0, n[0]);
	EXPECT_LT(0, n[1]);
}

TEST_F_TIMEOUT(defer, two_sessions_same_task, 120)
{
	struct perf_defer_stats delta;
	size_t i, j, n[2] = { 0 }, shared = 0, wrong = 0, distinct = 0;
	struct dl_data *d = &self->d;

	LOAD_MODULE();
	SESS_OPEN(0, 64);
	SESS_OPEN(1, 64);
	SPAWN(0, "wl_syscall", "-t", "1200", "-c", "16384", "-d", "8");
	TWO_SESSIONS_GO("same task", &delta);
	for (i = 0; i < d->nr; i++) {
		n[d->r[i].sess]++;
		wrong += !dl_perf_has_id(&self->p[d->r[i].sess], d->r[i].sid.id);
		for (j = 0; j < i; j++)
			if (d->r[j].cookie == d->r[i].cookie && d->r[j].sid.tid == d->r[i].sid.tid)
				break;
		if (j < i && d->r[j].sess != d->r[i].sess) {
			shared++;
			/* one unwind serves both sessions */
			if (d->r[j].nr != d->r[i].nr ||
			    memcmp(d->r[j].ips, d->r[i].ips, 8 * d->r[i].nr))
				wrong++;
		}
		distinct += j == i;
	}
	TH_LOG("records: session 0 %zu, session 1 %zu, entries in both %zu, distinct %zu",
	       n[0], n[1], shared, distinct);
	EXPECT_EQ(0, wrong) TH_LOG("records with a foreign id or differing chains");
	EXPECT_LT(0, shared) TH_LOG("no entry sampled by both events");
	EXPECT_EQ(distinct, delta.unwinds) TH_LOG("one unwind per entry, whatever the sessions");
	EXPECT_EQ(n[0] + n[1], delta.records);
}

TEST_F_TIMEOUT(defer, unattached_event_unchanged, 120)
{
	struct dl_paths def = { 0 }, ref = { 0 }, raw_def = { 0 }, raw_ref = { 0 };
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	size_t i, n1 = 0, deferred1 = 0, user1 = 0, nc = 0;

	LOAD_MODULE();
	load_syms(_metadata, self, "wl_calls");
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 64);
	SPAWN(0, "wl_calls", "kernel", "1500");
	EV_OPEN(0, &attr, self->c[0].pid);
	attr.sample_period = PERIOD_NS * 3 / 2;
	EV_OPEN(1, &attr, self->c[0].pid);
	ATTACH(0, 0);
	GO_COLLECT_OK(0, NULL);
	check_stitched(_metadata, self, "attached", &st, NULL);
	for (i = 0; i < self->d.ns; i++) {
		struct dl_sample *s = &self->d.s[i];
		uint64_t cookie;

		if (s->ev != 1)
			continue;
		n1++;
		deferred1 += dl_deferred(s, &cookie);
		user1 += dl_has_user(s);
	}
	TH_LOG("unattached event: %zu samples, %zu with user chains, %zu deferred", n1, user1,
	       deferred1);
	ASSERT_LE(50, n1);
	EXPECT_EQ(0, deferred1);
	EXPECT_EQ(n1, user1);
	/* and in the same run, its paths are the attached event's */
	leaf_paths(self, 0, "leaf_kernel", true, &def, &raw_def, &nc);
	leaf_paths(self, 1, "leaf_kernel", true, &ref, &raw_ref, &nc);
	check_calls_paths(_metadata, self, "attached", &def, MAJOR(&def));
	check_calls_paths(_metadata, self, "unattached", &ref, MAJOR(&ref));
	compare_paths(_metadata, self, "same run", &def, &raw_def, &ref, &raw_ref);
	dl_paths_free(&def);
	dl_paths_free(&ref);
	dl_paths_free(&raw_def);
	dl_paths_free(&raw_ref);
}

TEST_F_TIMEOUT(defer, detach_restores_fp_chains, 60)
{
	struct perf_event_attr attr;
	size_t i, deferred = 0, user = 0;

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 0);
	SPAWN(0, "wl_calls", "kernel", "500");
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	for (i = 0; i < (size_t)self->p[0].n; i++)
		ASSERT_EQ(0, dl_ioc_detach(self->s[0].fd, self->p[0].fd[i]));
	GO_COLLECT_OK(0, NULL);
	ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);
	for (i = 0; i < self->d.ns; i++) {
		uint64_t cookie;

		deferred += dl_deferred(&self->d.s[i], &cookie);
		user += dl_has_user(&self->d.s[i]);
	}
	TH_LOG("%zu samples, %zu deferred, %zu user chains, %zu records", self->d.ns, deferred,
	       user, self->d.nr);
	ASSERT_LT(0, self->d.ns);
	EXPECT_EQ(0, deferred);
	EXPECT_EQ(self->d.ns, user);
	EXPECT_EQ(0, self->d.nr);
}

TEST_F_TIMEOUT(defer, exit_with_pending, 180)
{
	struct perf_defer_stats st0, st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	uint64_t pending, exit_pending = 0, records = 0;
	int i, status, killed = 0, exited = 0;
	char after[16], what[32];

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS / 2);
	SESS_OPEN(0, 64);
	for (i = 0; i < 10; i++) {
		dl_perf_close(&self->p[0]);
		dl_data_free(&self->d);
		snprintf(after, sizeof(after), "%d", 80 + 37 * i);
		SPAWN(0, "wl_syscall", "-t", "0", "-c", "8192", "-d", "16", "-n", "3",
		      "-x", i % 2 ? "exit" : "kill", "-a", after);
		EV_OPEN(0, &attr, self->c[0].pid);
		ATTACH(0, 0);
		STATS(&st0);
		status = go_collect(_metadata, self, 0, NULL);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			killed++;
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
			exited++;
		else
			TH_LOG("run %d: wait status %#x", i, status);
		STATS(&st1);
		dl_stats_delta(&st0, &st1, &delta);
		snprintf(what, sizeof(what), "%s after %s ms", i % 2 ? "exit" : "kill", after);
		check_stitched(_metadata, self, what, &st, &delta);
		exit_pending += delta.exit_pending;
		records += self->d.nr;
	}
	EXPECT_EQ(5, killed);
	EXPECT_EQ(5, exited);
	pending = wait_no_pending(self->s[0].fd, 2000);
	EXPECT_EQ(0, pending) TH_LOG("requests still pending after the tasks exited");
	TH_LOG("%llu records, %llu exits with a request pending", (unsigned long long)records,
	       (unsigned long long)exit_pending);
}

/* the sample_id of a record follows the attached event's sample_type */
TEST_F_TIMEOUT(defer, record_sample_id_layout, 120)
{
	static const struct {
		uint64_t type;
		bool all;
	} v[] = {
		{ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		  PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		  PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN, true },
		{ PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, true },
		{ PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN, true },
		{ PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		  PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN, false },
	};
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	unsigned int k;
	size_t i;

	LOAD_MODULE();
	for (k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		size_t bad = 0, stream_child = 0, stream_parent = 0;

		run_reset(self);
		dl_attr_cpu_clock(&attr, PERIOD_NS);
		attr.sample_type = v[k].type;
		attr.sample_id_all = v[k].all;
		SESS_OPEN(0, 64);
		SPAWN(0, "wl_syscall", "-t", "400", "-c", "8192", "-d", "4", "-n", "2");
		EV_OPEN(0, &attr, self->c[0].pid);
		ATTACH(0, 0);
		GO_COLLECT_OK(0, NULL);
		TH_LOG("variant %u: sample_type %#llx sample_id_all %d, sample_id %zu bytes", k,
		       (unsigned long long)v[k].type, v[k].all, dl_sid_size(v[k].type, v[k].all));
		/* the parser checked every record's size to the byte */
		check_stitched(_metadata, self, "layout", &st, NULL);
		for (i = 0; i < self->d.nr; i++) {
			struct dl_record *r = &self->d.r[i];
			struct dl_sample *s = NULL;
			size_t j;

			for (j = 0; j < self->d.ns && !s; j++)
				if (self->d.s[j].rec == (int)i)
					s = &self->d.s[j];
			if (!s)
				continue;
			if (v[k].type & PERF_SAMPLE_IDENTIFIER && v[k].all)
				bad += !dl_perf_has_id(&self->p[0], r->sid.identifier);
			if (v[k].type & PERF_SAMPLE_ID && v[k].all) {
				/*
				 * the id of an event that sampled in the entry:
				 * the entry may have migrated, and its samples
				 * come from the per-CPU events in ring order
				 */
				for (j = 0; j < self->d.ns; j++)
					if (self->d.s[j].rec == (int)i &&
					    self->d.s[j].id == r->sid.id)
						break;
				bad += !dl_perf_has_id(&self->p[0], r->sid.id) ||
				       j == self->d.ns;
			}
			if (v[k].type & PERF_SAMPLE_TID && v[k].all)
				bad += r->sid.pid != s->pid || r->sid.tid != s->tid;
			if (v[k].type & PERF_SAMPLE_TIME && v[k].all)
				bad += r->sid.time < s->time;
			if (v[k].type & PERF_SAMPLE_STREAM_ID && v[k].all) {
				/*
				 * as perf: the id of an event that sampled in the
				 * entry (an inherited child's), not the attached one's
				 */
				for (j = 0; j < self->d.ns; j++)
					if (self->d.s[j].rec == (int)i &&
					    self->d.s[j].stream_id == r->sid.stream_id)
						break;
				if (j < self->d.ns)
					stream_child++;
				else
					stream_parent++;
			}
		}
		if (v[k].type & PERF_SAMPLE_STREAM_ID)
			TH_LOG("stream_id: a sampling event's in %zu records, another in %zu",
			       stream_child, stream_parent);
		EXPECT_EQ(0, bad) TH_LOG("variant %u: records whose sample_id disagrees", k);
		EXPECT_EQ(0, stream_parent) TH_LOG("records whose stream_id no sample has");
	}
}

/*
 * Samples not deferred after the last deferred one of their task, or on
 * the way back to user space after their entry's unwind
 */
static size_t midlife_tail(const struct dl_data *d)
{
	size_t i, j, tail = 0;
	uint64_t cookie;

	for (i = 0; i < d->ns; i++) {
		if (dl_deferred(&d->s[i], &cookie))
			continue;
		if (dl_on_way_out(&d->s[i])) {
			tail++;
			continue;
		}
		for (j = 0; j < d->ns; j++)
			if (d->s[j].tid == d->s[i].tid && d->s[j].time > d->s[i].time &&
			    dl_deferred(&d->s[j], &cookie))
				break;
		tail += j == d->ns;
	}
	return tail;
}

/*
 * An empty request pool: the sample keeps perf's own in-NMI user chain
 * (never a cookie that no record will match), and pool_empty counts it.
 * 16 requests for 24 threads that all sit in long reads.
 */
TEST_F_TIMEOUT(defer, pool_empty_falls_back, 120)
{
	struct perf_defer_stats st1, delta;
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	size_t i, fallback = 0, bad = 0;

	LOAD_MODULE();
	ASSERT_EQ(0, dl_module_unload_wait(5000));
	ASSERT_EQ(0, dl_module_load("pool_size=16"));
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 256);
	SPAWN(0, "wl_syscall", "-t", "1500", "-c", "4096", "-d", "6", "-n", "24");
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	STATS(&self->st0);
	GO_COLLECT_OK(0, NULL);
	EXPECT_EQ(0, wait_no_pending(self->s[0].fd, 1000));
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	dl_stats_log("delta", &delta);
	dl_stitch(&self->d, &st);
	dl_stitch_log("pool of 16", &st);
	for (i = 0; i < self->d.ns; i++) {
		const struct dl_sample *smp = &self->d.s[i];
		uint64_t cookie;

		if (dl_deferred(smp, &cookie))
			continue;
		fallback++;
		bad += !dl_has_user(smp);
	}
	TH_LOG("%zu samples kept an in-NMI chain, pool_empty %llu", fallback,
	       (unsigned long long)delta.pool_empty);
	EXPECT_LT(0, delta.pool_empty) TH_LOG("the pool never ran dry");
	/*
	 * the others kept it in a task's exit path, which is never deferred,
	 * or on the way out after their entry's unwind
	 */
	EXPECT_LE(delta.pool_empty, fallback);
	EXPECT_GE(delta.pool_empty, fallback - midlife_tail(&self->d));
	EXPECT_EQ(0, bad) TH_LOG("fallback samples without a user chain");
	EXPECT_LT(0, st.matched);
	EXPECT_EQ(0, st.bad_cookie);
	EXPECT_EQ(0, st.dups);
	EXPECT_EQ(0, st.time_order);
}

/* The depth limit: sample_max_stack of the attached event bounds records. */
TEST_F_TIMEOUT(defer, depth_limit, 120)
{
	struct perf_event_attr attr;
	struct perf_defer_stats st1, delta;
	struct dl_stitch_stats st;
	size_t i, over = 0, at = 0, depth[7] = { 0 }, nd, late;

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	attr.sample_max_stack = 5;
	SESS_OPEN(0, 64);
	/*
	 * Small reads: the workload's memset of its buffer (shallow frames)
	 * is over at once, even on a slow debug kernel.
	 */
	SPAWN(0, "wl_syscall", "-t", "800", "-c", "256", "-d", "20");
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	STATS(&self->st0);
	GO_COLLECT_OK(0, NULL);
	EXPECT_EQ(0, wait_no_pending(self->s[0].fd, 1000));
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	dl_stats_log("delta", &delta);
	dl_stitch(&self->d, &st);
	dl_stitch_log("max_stack 5", &st);
	ASSERT_LT(0, self->d.nr);
	for (i = 0; i < self->d.nr; i++) {
		over += self->d.r[i].nr > 5;
		at += self->d.r[i].nr == 5;
		depth[self->d.r[i].nr < 6 ? self->d.r[i].nr : 6]++;
	}
	TH_LOG("records by frames: 0:%zu 1:%zu 2:%zu 3:%zu 4:%zu 5:%zu more:%zu", depth[0],
	       depth[1], depth[2], depth[3], depth[4], depth[5], depth[6]);
	EXPECT_EQ(0, over) TH_LOG("records deeper than sample_max_stack");
	EXPECT_LT(0, at) TH_LOG("no record reached the limit (20 frames deep)");
	/*
	 * Kernel frames that fill sample_max_stack leave the cookie its room.
	 * A sample taken in (or after) its entry's unwind keeps perf's walk;
	 * its kernel chain, cut at 5 frames, cannot show where it was, but
	 * the module counts it (many on a slow debug kernel).
	 */
	nd = st.samples - st.deferred;
	late = nd < delta.after_unwind ? nd : delta.after_unwind;
	EXPECT_LE((nd - late) * 10, st.samples)
		TH_LOG("samples not deferred: %zu of %zu, %zu of them after their entry's unwind",
		       nd, st.samples, late);
}

/* the state letter of /proc/PID/stat, or 0 */
static char task_state(pid_t pid)
{
	char path[64], line[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * rmmod while a task has an unwind pending is refused, never frees the
 * code its queued task_work points to; once the work ran it works.  The
 * task sleeps in the middle of a system call with its work pending: it
 * writes 2 MiB at a time into a FIFO of 1 MiB that the test reads only
 * now and then.  (A stop signal or a ptrace stop would not do: both run
 * the task_work before they stop.)
 */
TEST_F_TIMEOUT(defer, rmmod_refused_while_pending, 120)
{
	static const char fifo[] = "/tmp/pd_rmmod_fifo";
	struct perf_defer_stats st = { 0 };
	struct perf_event_attr attr;
	static char buf[1 << 20];
	int ret, i, rfd;

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 64);
	unlink(fifo);
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, rfd);
	ASSERT_EQ(1 << 20, fcntl(rfd, F_SETPIPE_SZ, 1 << 20));
	SPAWN(0, "wl_syscall", "-t", "0", "-c", "2048", "-d", "4", "-w", (char *)fifo);
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	ASSERT_EQ(0, dl_child_go(&self->c[0]));
	for (i = 0; i < 100; i++) {
		usleep(30000);
		/* asleep in the write (not between two): its work stays pending */
		if (task_state(self->c[0].pid) == 'S') {
			STATS(&st);
			if (st.pending)
				break;
		}
		/* let the writer go on to its next sleep */
		while (read(rfd, buf, sizeof(buf)) > 0)
			;
	}
	ASSERT_LT(0, st.pending) TH_LOG("never asleep with a request pending");
	TH_LOG("asleep with %llu pending after %d tries", (unsigned long long)st.pending, i + 1);
	dl_session_close(&self->s[0]);
	dl_perf_close(&self->p[0]);
	ret = dl_module_unload();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY) TH_LOG("rmmod: %d", ret);
	EXPECT_TRUE(dl_module_loaded());
	/* let it run: its task_work runs on the way back to user space */
	while (read(rfd, buf, sizeof(buf)) > 0)
		;
	EXPECT_EQ(0, dl_module_unload_wait(5000));
	self->loaded = false;
	dl_child_kill(&self->c[0]);
	close(rfd);
	unlink(fifo);
}

TEST_F_TIMEOUT(defer, poll_reports_data, 60)
{
	struct dl_collect_opts co = { .sess_drain_ms = -1 };
	struct perf_event_attr attr;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct pollfd pfd;
	int ep;

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 64);
	pfd = (struct pollfd){ .fd = self->s[0].fd, .events = POLLIN };
	EXPECT_EQ(0, poll(&pfd, 1, 0)) TH_LOG("POLLIN on an empty session");
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->s[0].fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
	SPAWN(0, "wl_syscall", "-t", "300", "-c", "8192", "-d", "4");
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	/* the session rings are drained only after the workload is gone */
	EXPECT_EQ(0, dl_child_go(&self->c[0]));
	ASSERT_EQ(0, dl_collect(&self->c[0], self->p, MAX_PERF, NULL, 0, &self->d, &co));
	EXPECT_EQ(1, epoll_wait(ep, &out, 1, 1000)) TH_LOG("no EPOLLIN with records queued");
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	EXPECT_LT(0, dl_session_drain(&self->s[0], &self->d));
	EXPECT_EQ(0, poll(&pfd, 1, 0)) TH_LOG("POLLIN after everything was read");
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
	close(ep);
}

/* ---- attach and ring ioctls: one test per failure case ------------- */

/*
 * x86-64's kernel half.  A user chain may hold any value the user's own
 * stack held (a frame pointer walk stops only where the unwinder's rules
 * say, as perf's own walk does), so "not a kernel pointer" is the test.
 */
#define KERNEL_HALF	0xffff800000000000ULL

/* Records carry user stack contents and the cookie, never a kernel pointer. */
TEST_F_TIMEOUT(defer, no_kernel_pointer_in_records, 120)
{
	struct perf_event_attr attr;
	size_t i, k, bad = 0, words = 0;

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	SESS_OPEN(0, 64);
	SPAWN(0, "wl_calls", "kernel", "800");
	EV_OPEN(0, &attr, self->c[0].pid);
	ATTACH(0, 0);
	GO_COLLECT_OK(0, NULL);
	ASSERT_LT(0, self->d.nr);
	for (i = 0; i < self->d.nr; i++) {
		const struct dl_record *r = &self->d.r[i];

		for (k = 0; k < r->nr; k++, words++) {
			if (r->ips[k] >= KERNEL_HALF && !bad++)
				TH_LOG("record %zu, ip %zu: %#llx", i, k,
				       (unsigned long long)r->ips[k]);
		}
		if (!(r->cookie >> PERF_DEFER_COOKIE_CPU_SHIFT) ||
		    (r->cookie >> PERF_DEFER_COOKIE_CPU_SHIFT) > (uint64_t)dl_possible_cpus() ||
		    !(r->cookie & 1)) {
			if (!bad++)
				TH_LOG("record %zu: cookie %#llx", i, (unsigned long long)r->cookie);
		}
	}
	TH_LOG("%zu records, %zu addresses, %zu in the kernel half", self->d.nr, words, bad);
	EXPECT_EQ(0, bad);
}

/*
 * The module defers only samples of events the caller opened itself, so
 * it can never sample what perf_event_paranoid keeps from the caller.  As
 * nobody, with the device opened up (dev_mode=0666): at paranoid 2 an
 * event of its own with the kernel excluded opens, one with the kernel
 * does not, and the attached one's records hold only user addresses; at
 * Debian's paranoid 3 no event opens at all, so there is nothing to
 * attach.
 */
static int paranoid_child(int level)
{
	struct dl_session sess = { .fd = -1 };
	struct perf_event_attr attr;
	struct dl_data d;
	struct dl_perf p;
	size_t i, k;
	int ret, rc = 0;

	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 10;
	dl_data_init(&d);
	dl_perf_init(&p);
	dl_attr_cpu_clock(&attr, 100000);
	attr.disabled = 0;
	attr.enable_on_exec = 0;
	attr.inherit = 0;
	ret = dl_perf_open(&p, 0, &attr, 0, -1, 0);
	if (ret != -EACCES && ret != -EPERM)
		return ret ? 11 : 12;	/* the kernel included: refused */
	dl_perf_close(&p);
	dl_perf_init(&p);
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	ret = dl_perf_open(&p, 0, &attr, 0, -1, 0);
	if (level >= 3)
		return ret == -EACCES || ret == -EPERM ? 0 : 13;
	if (ret)
		return 14;
	if (dl_session_open(&sess, 0, 16) || dl_session_map(&sess))
		return 15;
	if (dl_session_attach(&sess, &p, &d))
		return 16;
	for (i = 0; i < 300; i++) {
		volatile unsigned long x = 0;

		for (k = 0; k < 50000; k++)
			x += k;
		getppid();
	}
	dl_session_drain(&sess, &d);
	if (!d.nr)
		rc = 17;
	for (i = 0; i < d.nr; i++)
		for (k = 0; k < d.r[i].nr; k++)
			if (d.r[i].ips[k] >= KERNEL_HALF)
				rc = 18;
	dl_session_close(&sess);
	dl_perf_close(&p);
	dl_data_free(&d);
	return rc;
}

TEST_F_TIMEOUT(defer, perf_event_paranoid_respected, 120)
{
	static const char sysctl_path[] = "/proc/sys/kernel/perf_event_paranoid";
	char old[16] = "";
	int level, fd, n, status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root");
	if (dl_module_loaded())
		ASSERT_EQ(0, dl_module_unload_wait(5000));
	ASSERT_EQ(0, dl_module_load("dev_mode=0666"));
	self->loaded = true;
	fd = open(sysctl_path, O_RDWR);
	ASSERT_LE(0, fd);
	n = read(fd, old, sizeof(old) - 1);
	ASSERT_LT(0, n);
	for (level = 3; level >= 2; level--) {
		char v[4];

		snprintf(v, sizeof(v), "%d", level);
		if (pwrite(fd, v, strlen(v), 0) < 0) {
			/* a kernel without Debian's level 3 */
			TH_LOG("paranoid %d: %s", level, strerror(errno));
			continue;
		}
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			_exit(paranoid_child(level));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("paranoid %d: child status %#x", level, status);
	}
	EXPECT_LT(0, pwrite(fd, old, n, 0));
	close(fd);
}

FIXTURE(sess) {
	bool loaded;
	int fd, fd2;
	int ev, ev2;
};

static int open_event(uint64_t sample_type, bool excl_user)
{
	struct perf_event_attr attr;

	dl_attr_cpu_clock(&attr, PERIOD_NS);
	attr.sample_type = sample_type;
	attr.exclude_callchain_user = excl_user;
	attr.enable_on_exec = 0;
	attr.inherit = 0;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

FIXTURE_SETUP(sess)
{
	self->fd = self->fd2 = self->ev = self->ev2 = -1;
	if (geteuid() != 0)
		SKIP(return, "needs root");
	if (access(dl_ko_path(), R_OK))
		SKIP(return, "no module at %s", dl_ko_path());
	if (dl_module_loaded())
		ASSERT_EQ(0, dl_module_unload_wait(5000));
	ASSERT_EQ(0, dl_module_load(""));
	self->loaded = true;
	self->fd = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->fd2 = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd2);
	self->ev = open_event(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN, false);
	ASSERT_LE(0, self->ev);
	self->ev2 = open_event(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN, false);
	ASSERT_LE(0, self->ev2);
}

FIXTURE_TEARDOWN(sess)
{
	int ret;

	if (self->ev >= 0)
		close(self->ev);
	if (self->ev2 >= 0)
		close(self->ev2);
	if (self->fd >= 0)
		close(self->fd);
	if (self->fd2 >= 0)
		close(self->fd2);
	if (self->loaded) {
		ret = dl_module_unload_wait(5000);
		EXPECT_EQ(0, ret) TH_LOG("unload: %s", strerror(-ret));
	}
}

#define SESS_SKIPPED() do { if (_metadata->skip) return; } while (0)

TEST_F(sess, attach_ok_detach_ok)
{
	SESS_SKIPPED();
	EXPECT_EQ(0, dl_ioc_attach(self->fd, self->ev));
	EXPECT_EQ(0, dl_ioc_detach(self->fd, self->ev));
	/* and again */
	EXPECT_EQ(0, dl_ioc_attach(self->fd, self->ev));
	EXPECT_EQ(0, dl_ioc_attach(self->fd, self->ev2));
}

TEST_F(sess, attach_closed_fd)
{
	int fd;

	SESS_SKIPPED();
	fd = dup(self->ev);
	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(-EBADF, dl_ioc_attach(self->fd, fd));
	EXPECT_EQ(-EBADF, dl_ioc_attach(self->fd, -1));
	EXPECT_EQ(-EBADF, dl_ioc_attach(self->fd, 1 << 30));
}

TEST_F(sess, attach_pipe)
{
	int p[2];

	SESS_SKIPPED();
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, p[0]));
	EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, p[1]));
	close(p[0]);
	close(p[1]);
}

TEST_F(sess, attach_dev_null)
{
	int fd;

	SESS_SKIPPED();
	fd = open("/dev/null", O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, fd));
	close(fd);
}

TEST_F(sess, attach_session_fd)
{
	SESS_SKIPPED();
	EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, self->fd));
	EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, self->fd2));
}

TEST_F(sess, attach_no_callchain)
{
	int ev;

	SESS_SKIPPED();
	ev = open_event(PERF_SAMPLE_IP | PERF_SAMPLE_TID, false);
	ASSERT_LE(0, ev);
	EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, ev));
	close(ev);
}

TEST_F(sess, attach_exclude_callchain_user)
{
	int ev;

	SESS_SKIPPED();
	ev = open_event(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, true);
	ASSERT_LE(0, ev);
	EXPECT_EQ(-EINVAL, dl_ioc_attach(self->fd, ev));
	close(ev);
}

TEST_F(sess, attach_twice)
{
	int dupfd;

	SESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_attach(self->fd, self->ev));
	EXPECT_EQ(-EEXIST, dl_ioc_attach(self->fd, self->ev));
	/* the event, not the fd number, is what counts */
	dupfd = dup(self->ev);
	ASSERT_LE(0, dupfd);
	EXPECT_EQ(-EEXIST, dl_ioc_attach(self->fd, dupfd));
	close(dupfd);
}

TEST_F(sess, attach_in_two_sessions)
{
	SESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_attach(self->fd, self->ev));
	EXPECT_EQ(-EEXIST, dl_ioc_attach(self->fd2, self->ev));
	/* free again once the first session closes */
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, dl_ioc_attach(self->fd2, self->ev));
}

TEST_F(sess, detach_not_attached)
{
	SESS_SKIPPED();
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->fd, self->ev));
	ASSERT_EQ(0, dl_ioc_attach(self->fd, self->ev));
	/* attached, but by the other session */
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->fd2, self->ev));
	EXPECT_EQ(0, dl_ioc_detach(self->fd, self->ev));
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->fd, self->ev));
}

TEST_F(sess, detach_bad_fd)
{
	int p[2];

	SESS_SKIPPED();
	EXPECT_EQ(-EBADF, dl_ioc_detach(self->fd, -1));
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(-EINVAL, dl_ioc_detach(self->fd, p[0]));
	close(p[0]);
	close(p[1]);
}

TEST_F(sess, attach_bad_size)
{
	static const __u32 sizes[] = { 0, 4, 8, 12, 15, 17, 24, 4096 };
	struct {
		struct perf_defer_attach a;
		char pad[16];
	} big;
	unsigned int i;

	SESS_SKIPPED();
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&big, 0, sizeof(big));
		big.a.size = sizes[i];
		big.a.perf_fd = self->ev;
		EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_ATTACH, &big)) TH_LOG("size %u", sizes[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("size %u", sizes[i]);
	}
	/* nothing got attached */
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->fd, self->ev));
}

TEST_F(sess, attach_reserved_nonzero)
{
	struct perf_defer_attach a = { .size = sizeof(a), .perf_fd = self->ev, .__reserved = 1 };

	SESS_SKIPPED();
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_ATTACH, &a));
	EXPECT_EQ(EINVAL, errno);
	a.__reserved = 1ull << 63;
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_DETACH, &a));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->fd, self->ev));
}

TEST_F(sess, attach_bad_pointer)
{
	SESS_SKIPPED();
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_ATTACH, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_DETACH, (void *)1));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(sess, set_ring_bad_pages)
{
	static const __u32 pages[] = { 0, 3, 6, 12, 1023, 1025, 2048, 1u << 31, 0xffffffffu };
	unsigned int i;

	SESS_SKIPPED();
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		EXPECT_EQ(-EINVAL, dl_ioc_set_ring(self->fd, pages[i])) TH_LOG("%u pages", pages[i]);
	EXPECT_EQ(0, dl_ioc_set_ring(self->fd, 1));
	EXPECT_EQ(0, dl_ioc_set_ring(self->fd2, PERF_DEFER_RING_MAX_PAGES));
}

TEST_F(sess, set_ring_bad_struct)
{
	struct perf_defer_ring r = { .size = sizeof(r), .data_pages = 4, .__reserved = 1 };

	SESS_SKIPPED();
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_SET_RING, &r));
	EXPECT_EQ(EINVAL, errno);
	r.__reserved = 0;
	r.size = sizeof(r) - 1;
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_SET_RING, &r));
	EXPECT_EQ(EINVAL, errno);
	r.size = sizeof(r) + 8;
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_SET_RING, &r));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(sess, set_unwind_checks_its_list)
{
	static const uint8_t ok[] = { PERF_DEFER_UNWIND_EH_FRAME, PERF_DEFER_UNWIND_FP };
	static const uint8_t twice[] = { PERF_DEFER_UNWIND_FP, PERF_DEFER_UNWIND_FP };
	static const uint8_t unknown[] = { 4 };
	static const uint8_t gap[] = { PERF_DEFER_UNWIND_FP, 0, PERF_DEFER_UNWIND_SFRAME };
	struct perf_defer_unwind u = { .size = sizeof(u) - 1 };

	SESS_SKIPPED();
	EXPECT_EQ(-EINVAL, dl_ioc_set_unwind(self->fd, twice, sizeof(twice)));
	EXPECT_EQ(-EINVAL, dl_ioc_set_unwind(self->fd, unknown, sizeof(unknown)));
	EXPECT_EQ(-EINVAL, dl_ioc_set_unwind(self->fd, gap, sizeof(gap)));
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_SET_UNWIND, &u));
	EXPECT_EQ(EINVAL, errno);
	u.size = sizeof(u);
	u.__reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_SET_UNWIND, &u));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, dl_ioc_set_unwind(self->fd, ok, sizeof(ok)));
	/* all 0: back to the module's parameter */
	EXPECT_EQ(0, dl_ioc_set_unwind(self->fd, NULL, 0));
	ASSERT_EQ(0, dl_ioc_attach(self->fd, self->ev));
	EXPECT_EQ(-EBUSY, dl_ioc_set_unwind(self->fd, ok, sizeof(ok)));
}

TEST_F(sess, set_ring_after_attach)
{
	SESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_attach(self->fd, self->ev));
	EXPECT_EQ(-EBUSY, dl_ioc_set_ring(self->fd, 4));
}

TEST_F(sess, set_ring_after_mmap)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m;

	SESS_SKIPPED();
	m = mmap(NULL, (1 + PERF_DEFER_RING_DEF_PAGES) * page, PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(-EBUSY, dl_ioc_set_ring(self->fd, 4));
	munmap(m, (1 + PERF_DEFER_RING_DEF_PAGES) * page);
}

/* A ring is never executable: not at mmap(), nor later by mprotect(). */
TEST_F(sess, ring_never_executable)
{
	size_t len = (1 + PERF_DEFER_RING_DEF_PAGES) * sysconf(_SC_PAGESIZE);
	void *m;

	SESS_SKIPPED();
	m = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EPERM, errno);
	if (m != MAP_FAILED)
		munmap(m, len);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(-1, mprotect(m, len, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, mprotect(m, len, PROT_READ));
	munmap(m, len);
}

TEST_F(sess, ring_layout)
{
	struct dl_session s = { .fd = -1 };
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	SESS_SKIPPED();
	ret = dl_session_open(&s, 0, 8);
	ASSERT_EQ(0, ret);
	/* checks version, cpu, data_offset, data_size of every CPU's ring */
	EXPECT_EQ(0, dl_session_map(&s));
	if (s.maps && s.maps[0]) {
		struct perf_defer_mmap_page *pg = s.maps[0];

		EXPECT_EQ(0, pg->data_head);
		EXPECT_EQ(0, pg->data_tail);
		EXPECT_EQ(0, pg->lost);
		EXPECT_EQ(8 * page, pg->data_size);
	}
	dl_session_close(&s);
}

TEST_F(sess, get_stats_bad_struct)
{
	struct perf_defer_stats st = { .size = sizeof(st) - 8 };

	SESS_SKIPPED();
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_GET_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	st.size = sizeof(st);
	st.__reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_GET_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	st.__reserved = 0;
	EXPECT_EQ(0, ioctl(self->fd, PERF_DEFER_IOC_GET_STATS, &st));
	EXPECT_EQ(0, st.pending);
	EXPECT_EQ(sizeof(st), st.size);
}

/*
 * A recorder of an older ABI asks with its shorter struct (1.0/1.1: up to
 * pending; 1.2: up to after_unwind; 1.3: up to table_stopped): it gets
 * that, and nothing past it.
 */
TEST_F(sess, get_stats_older_structs)
{
	static const unsigned int sizes[] = {
		PERF_DEFER_STATS_SIZE_VER0, offsetof(struct perf_defer_stats, frames_fp),
		offsetof(struct perf_defer_stats, table_cache_hits),
	};
	struct perf_defer_stats st;
	unsigned long cmd;
	size_t i;

	SESS_SKIPPED();
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cmd = _IOC(_IOC_READ | _IOC_WRITE, PERF_DEFER_MAGIC,
			   _IOC_NR(PERF_DEFER_IOC_GET_STATS), sizes[i]);
		ASSERT_NE(PERF_DEFER_IOC_GET_STATS, cmd);
		memset(&st, 0xa5, sizeof(st));
		st.size = sizes[i];
		st.__reserved = 0;
		ASSERT_EQ(0, ioctl(self->fd, cmd, &st)) TH_LOG("%u: %s", sizes[i], strerror(errno));
		EXPECT_EQ(sizes[i], st.size);
		EXPECT_EQ(0, st.pending);
		/* nothing past the older struct is written */
		EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, st.table_cache_hits);
		if (sizes[i] < offsetof(struct perf_defer_stats, table_cache_hits))
			EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, st.table_stopped);
		if (sizes[i] == PERF_DEFER_STATS_SIZE_VER0)
			EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, st.after_unwind);
		/* an older number with the new size, and the other way round */
		st.size = sizeof(st);
		EXPECT_EQ(-1, ioctl(self->fd, cmd, &st));
		EXPECT_EQ(EINVAL, errno);
		st.size = sizes[i];
		EXPECT_EQ(-1, ioctl(self->fd, PERF_DEFER_IOC_GET_STATS, &st));
		EXPECT_EQ(EINVAL, errno);
	}
	/* sizes that no ABI had */
	cmd = _IOC(_IOC_READ | _IOC_WRITE, PERF_DEFER_MAGIC, _IOC_NR(PERF_DEFER_IOC_GET_STATS),
		   PERF_DEFER_STATS_SIZE_VER0 - 8);
	EXPECT_EQ(-1, ioctl(self->fd, cmd, &st));
	EXPECT_EQ(ENOTTY, errno);
	cmd = _IOC(_IOC_READ | _IOC_WRITE, PERF_DEFER_MAGIC, _IOC_NR(PERF_DEFER_IOC_GET_STATS),
		   PERF_DEFER_STATS_SIZE_VER0 + 4);
	EXPECT_EQ(-1, ioctl(self->fd, cmd, &st));
	EXPECT_EQ(ENOTTY, errno);
}

/* ---- defer_test --sample PID MS (lifecycle.sh) ---------------------- */

static int sample_main(int argc, char **argv)
{
	struct perf_defer_stats stats = { 0 };
	struct perf_event_attr attr;
	struct dl_stitch_stats st;
	struct dl_session s;
	struct dl_perf p;
	struct dl_data d;
	struct pollfd pfd;
	uint64_t end;
	struct timespec ts;
	pid_t pid;
	int ms, i;

	if (argc != 4)
		return 2;
	pid = atoi(argv[2]);
	ms = atoi(argv[3]);
	dl_data_init(&d);
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	attr.disabled = 0;
	attr.enable_on_exec = 0;
	attr.inherit = 0;
	if (dl_session_open(&s, 0, 0) || dl_session_map(&s))
		return 1;
	if (dl_perf_open(&p, 0, &attr, pid, -1, 64))
		return 1;
	if (dl_session_attach(&s, &p, &d))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec * 1000ull + ts.tv_nsec / 1000000 + ms;
	for (;;) {
		pfd = (struct pollfd){ .fd = s.fd, .events = POLLIN };
		poll(&pfd, 1, 10);
		dl_perf_drain(&p, &d);
		dl_session_drain(&s, &d);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec * 1000ull + ts.tv_nsec / 1000000 >= end)
			break;
	}
	/*
	 * Close the session while the event still samples, and, if the task
	 * gets one within 200 ms, while it has a request pending: the module
	 * must then refuse rmmod until the unwind ran.
	 */
	dl_session_drain(&s, &d);
	for (i = 0; i < 200; i++) {
		if (dl_get_stats(s.fd, &stats))
			return 1;
		if (stats.pending)
			break;
		usleep(1000);
	}
	dl_session_close(&s);
	dl_perf_drain(&p, &d);
	dl_perf_close(&p);
	dl_stitch(&d, &st);
	printf("samples %zu deferred %zu records %zu matched %zu nerr %d pending %llu\n", d.ns,
	       st.deferred, d.nr, st.matched, d.nerr, (unsigned long long)stats.pending);
	return d.nerr ? 3 : 0;
}

/*
 * Keep perf's task-event jump label (perf_sched_events, patched into
 * __schedule) switched on for as long as we run, with one dummy per-task
 * event: every task event counts, enabled or not.  Debian's 6.12 under
 * QEMU TCG sometimes dies with "Oops: int3" in __schedule when that label
 * flips while other CPUs schedule, module or no module (perf record -p in
 * a loop does it too); the tests open and close task events hundreds of
 * times.  Harmless elsewhere.  Returns the fd, or -1.
 */
static int hold_perf_sched_events(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* ---- main: -l lists the tests, -t NAME runs only those named -------- */

int main(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t, *next, *keep[256];
	const char *only[64];
	int nonly = 0, i, n, opt;
	bool list = false;

	if (argc > 1 && !strcmp(argv[1], "--sample"))
		return sample_main(argc, argv);
	/* defer_test --hold: hold the jump label until killed (lifecycle.sh) */
	if (argc > 1 && !strcmp(argv[1], "--hold")) {
		if (hold_perf_sched_events() < 0)
			return 1;
		for (;;)
			pause();
	}
	while ((opt = getopt(argc, argv, "lt:")) != -1) {
		if (opt == 'l')
			list = true;
		else if (opt == 't' && nonly < 64)
			only[nonly++] = optarg;
		else {
			fprintf(stderr, "usage: defer_test [-l] [-t TEST]... | --sample PID MS | --hold\n");
			return 2;
		}
	}
	for (f = __fixture_list; f; f = f->next) {
		n = 0;
		for (t = f->tests; t; t = next) {
			char full[256];
			bool want = !nonly;

			next = t->next;
			snprintf(full, sizeof(full), "%s.%s", f->name, t->name);
			for (i = 0; i < nonly; i++)
				want |= !strcmp(only[i], t->name) || !strcmp(only[i], full);
			if (list)
				printf("%s\n", full);
			if (want && n < 256)
				keep[n++] = t;
		}
		f->tests = n ? keep[0] : NULL;
		for (i = 0; i < n; i++) {
			keep[i]->prev = i ? keep[i - 1] : keep[n - 1];
			keep[i]->next = i + 1 < n ? keep[i + 1] : NULL;
		}
	}
	if (list)
		return 0;
	hold_perf_sched_events();
	return test_harness_run(argc, argv);
}
