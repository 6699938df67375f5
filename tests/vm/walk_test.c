// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user chains of deferred samples, by each unwind method, against
 * perf's own frame-pointer walk: the call paths of the wl_calls
 * workloads (64- and 32-bit), frame pointers, .eh_frame and SFrame on
 * code without frame pointers, through the vDSO and glibc, the table
 * cache, tables scribbled on while sampled, the zapped stack, and an
 * unattached event beside an attached one (the fixture: defer_fixture.h).
 *
 *	walk_test [-l] [-t TEST]...	the tests (TAP), or only those named
 */
#include "defer_fixture.h"

/*
 * A run of workload 0 (the arguments) sampled by event attr: through
 * session 0 when deferred (the module's counters from self->st0 on), else
 * by perf's own walk
 */
#define RUN_SAMPLED(deferred, attr, ...)					\
	do {								\
		run_reset(self);					\
		if (deferred)						\
			SESS_OPEN(0, 64);				\
		SPAWN(0, __VA_ARGS__);					\
		EV_OPEN(0, attr, self->c[0].pid);			\
		if (deferred) {						\
			ATTACH(0, 0);					\
			STATS(&self->st0);				\
		}							\
		GO_COLLECT_OK(0, NULL);					\
		ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);	\
	} while (0)

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
 * Where the event's samples were deferred, raw holds only the deferred
 * ones: the others (taken after the entry's unwind) carry perf's own
 * walk.
 */
static void leaf_paths(FIXTURE_DATA(defer) *self, int ev, const char *leaf, bool kernel,
		       struct dl_paths *ps, struct dl_paths *raw, size_t *no_chain)
{
	bool deferred_run = false;
	const uint64_t *ips;
	uint64_t cookie;
	size_t i;
	int n;

	for (i = 0; i < self->d.ns && !deferred_run; i++)
		deferred_run = self->d.s[i].ev == ev && dl_deferred(&self->d.s[i], &cookie);
	for (i = 0; i < self->d.ns; i++) {
		struct dl_sample *s = &self->d.s[i];

		if (s->ev != ev || dl_kernel_mode(s) != kernel)
			continue;
		n = dl_user_chain(&self->d, s, &ips);
		/* an exec or an exit, where the kernel may give none */
		if (n <= 0 && dl_on_way_out(s))
			continue;
		if (n <= 0) {
			/* the first one's kernel stack says where it was taken */
			if (!(*no_chain)++) {
				dl_log("tid %u: a sample without user chain at %llu", s->tid,
				       (unsigned long long)s->time);
				dl_log_kernel_chain(s);
			}
			continue;
		}
		if (!ra_is(self->syms, ips[0] + 1, leaf))
			continue;
		dl_paths_add(ps, ips + 1, cut_after_libc_start(self->syms, ips + 1, n - 1));
		if (raw && (!deferred_run || dl_deferred(s, &cookie)))
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
	RUN_SAMPLED(deferred, &attr, (char *)bin, (char *)mode, "1500");
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

#define USER_UNWIND_PARAM "/sys/module/" DL_MODNAME "/parameters/user_unwind"

/* the module's user_unwind parameter, as sysfs reads it, into buf; or NULL */
static const char *get_user_unwind(char *buf, size_t n)
{
	FILE *f = fopen(USER_UNWIND_PARAM, "r");
	const char *ret = f ? fgets(buf, n, f) : NULL;

	if (f)
		fclose(f);
	return ret;
}

/*
 * The module walks BIN's user stacks by unwind tables first: its
 * user_unwind parameter does not start with fp, and BIN is no 32-bit
 * program (those always get the frame-pointer walk).
 */
static bool walks_tables(const char *bin)
{
	char buf[64];

	return strncmp(get_user_unwind(buf, sizeof(buf)) ?: "", "fp", 2) && !strstr(bin, "32");
}

/*
 * The major paths of raw (whole deferred paths) whose part past glibc's
 * start routine is not __libc_start_main's frame and then _start's, where
 * the walk ends: what .eh_frame says of a static program's outermost
 * frames (_start's return address is undefined).
 */
static int not_ended_at_start(const struct dl_syms *y, const char *what,
			      const struct dl_paths *raw)
{
	static const char *const tail[] = { "__libc_start_main", "_start" };
	int bad = 0, k, c;
	size_t i;

	for (i = 0; i < raw->n; i++) {
		const struct dl_path *p = &raw->p[i];

		if (p->count < MAJOR(raw))
			continue;
		c = cut_after_libc_start(y, p->ips, p->n);
		for (k = 0; k < 2 && c + k < p->n && ra_is(y, p->ips[c + k], tail[k]); k++)
			;
		if (k == 2 && c + k == p->n)
			continue;
		if (++bad <= 3)
			dl_log_chain(y, 0, what, p->ips, p->n);
	}
	return bad;
}

/*
 * Deferred paths (def, raw_def) against perf's fp walk (fp, raw_fp): the
 * same major paths frame for frame up to glibc's start routine.  Past it,
 * where the module walks frame pointers first, the deferred path is a
 * prefix of perf's; where it walks the unwind tables first (the default),
 * it ends in _start, where perf's walk goes on through whatever glibc's
 * frame left in rbp.
 */
static void compare_paths(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
			  const char *bin, const char *what, const struct dl_paths *def,
			  const struct dl_paths *raw_def, const struct dl_paths *fp,
			  const struct dl_paths *raw_fp)
{
	int miss;

	miss = dl_paths_missing(self->syms, "fp", fp, "deferred", def, MAJOR(def));
	EXPECT_EQ(0, miss) TH_LOG("%s: deferred paths that fp lacks: %d", what, miss);
	miss = dl_paths_missing(self->syms, "deferred", def, "fp", fp, MAJOR(fp));
	EXPECT_EQ(0, miss) TH_LOG("%s: fp paths that the deferred run lacks: %d", what, miss);
	if (!walks_tables(bin)) {
		miss = dl_paths_not_prefix(self->syms, "fp", raw_fp, "deferred", raw_def,
					   MAJOR(raw_def));
		EXPECT_EQ(0, miss) TH_LOG("%s: whole deferred paths not a prefix of fp's: %d",
					  what, miss);
	} else {
		miss = not_ended_at_start(self->syms, "deferred", raw_def);
		EXPECT_EQ(0, miss) TH_LOG("%s: whole deferred paths not ended at _start: %d",
					  what, miss);
	}
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
	compare_paths(_metadata, self, bin, what, &def, &raw_def, &fp, &raw_fp);
	dl_paths_free(&def);
	dl_paths_free(&fp);
	dl_paths_free(&raw_def);
	dl_paths_free(&raw_fp);
}


/*
 * Of more than 50 samples, (nearly) all reach their root: at least 99%;
 * or few do: under half (a control that shows the check can fail).
 */
#define EXPECT_NEARLY_ALL(reached, total)				\
	do {								\
		EXPECT_LT(50, total);					\
		EXPECT_LE((total) * 99, (reached) * 100);		\
	} while (0)
#define EXPECT_FEW(reached, total)					\
	do {								\
		EXPECT_LT(50, total);					\
		EXPECT_GT((total) / 2, reached);			\
	} while (0)

/* the module's parameter NAME set to VAL; 0 or -errno */
static int set_param(const char *name, const char *val)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", DL_MODNAME, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EINVAL;
}

/* the module's user_unwind parameter; 0 or -errno */
static int set_user_unwind(const char *order)
{
	return set_param("user_unwind", order);
}

/*
 * wl_calls, deferred and perf's fp walk: the same paths, frame for frame,
 * with the module's default order and with its frame-pointer walk alone.
 */
TEST_F_TIMEOUT(defer, chains_match_fp, 240)
{
	LOAD_MODULE();
	calls_compare(_metadata, self, "wl_calls", "user");
	calls_compare(_metadata, self, "wl_calls", "kernel");
	ASSERT_EQ(0, set_user_unwind("fp"));
	calls_compare(_metadata, self, "wl_calls", "kernel");
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
	struct perf_defer_stats delta;
	struct dl_stitch_stats st;
	const uint64_t *ips;
	size_t i;
	int n, j;

	*reached = *total = 0;
	ASSERT_EQ(0, set_user_unwind(order));
	load_syms(_metadata, self, bin);
	run_reset(self);
	RUN_CPU_CLOCK(64, &delta, 0, (char *)bin, (char *)mode, any ? "3000" : "1000");
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
		EXPECT_NEARLY_ALL(reached, total);
		/* the control: the frame-pointer walk alone does not get there */
		nofp_reach(_metadata, self, "wl_nofp", modes[i], "fp", &reached, &total, NULL);
		EXPECT_FEW(reached, total);
	}
}

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
	/* and the rows at its few PCs are taken from the tables once, then cached */
	TH_LOG("rows from the tables %llu, found in the row cache %llu",
	       (unsigned long long)delta.table_rows, (unsigned long long)delta.table_row_hits);
	EXPECT_LT(0, delta.table_rows);
	EXPECT_LT(delta.table_rows * 4, delta.table_row_hits);
	/* the walks' time is counted: both walks of each unwind */
	TH_LOG("unwinds %llu, walking %llu ns", (unsigned long long)delta.unwinds,
	       (unsigned long long)delta.walk_ns);
	EXPECT_LT(0, delta.unwinds);
	EXPECT_LE(delta.unwinds, delta.walk_ns);
}

/*
 * The default order (sframe,eh_frame,fp) on code built with frame
 * pointers (wl_calls): per kernel entry, against a session that walks
 * frame pointers only, the same chain up to glibc's start routine; past
 * it the table walk ends in _start, where the frame-pointer walk goes on
 * through whatever glibc left in rbp.  The one other difference allowed
 * is the table walk's due: an IP in a prologue, before the frame pointer
 * is pushed, where the frame-pointer walk skips the caller (a few
 * entries: at most 1 in 20).
 */
TEST_F_TIMEOUT(defer, default_order_on_fp_code, 120)
{
	static const uint8_t fp[] = { PERF_DEFER_UNWIND_FP };
	size_t i, j, shared = 0, same = 0, caller_kept = 0, at_start = 0;
	struct dl_data *d = &self->d;
	struct perf_defer_stats delta;
	char order[64];

	LOAD_MODULE();
	ASSERT_NE(NULL, get_user_unwind(order, sizeof(order)));
	ASSERT_STREQ("sframe,eh_frame,fp\n", order);
	load_syms(_metadata, self, "wl_calls");
	SESS_OPEN(0, 64);
	SESS_OPEN(1, 64);
	ASSERT_EQ(0, dl_ioc_set_unwind(self->s[1].fd, fp, sizeof(fp)));
	SPAWN(0, "wl_calls", "kernel", "1200");
	TWO_SESSIONS_GO("default and fp", &delta);
	for (i = 0; i < d->nr; i++) {
		const struct dl_record *a = &d->r[i], *b = NULL;
		int ca, cb;

		if (a->sess != 0 || !a->nr || !ra_is(self->syms, a->ips[0] + 1, "leaf_kernel"))
			continue;
		for (j = 0; j < d->nr && !b; j++)
			if (d->r[j].sess == 1 && d->r[j].cookie == a->cookie &&
			    d->r[j].sid.tid == a->sid.tid)
				b = &d->r[j];
		if (!b)
			continue;
		shared++;
		ca = cut_after_libc_start(self->syms, a->ips, a->nr);
		cb = cut_after_libc_start(self->syms, b->ips, b->nr);
		if (ca == cb && !memcmp(a->ips, b->ips, ca * sizeof(*a->ips)))
			same++;
		else if (ca == cb + 1 && a->ips[0] == b->ips[0] &&
			 !memcmp(a->ips + 2, b->ips + 1, (cb - 1) * sizeof(*a->ips)))
			caller_kept++;
		else if (shared - same - caller_kept <= 3)
			dl_log_chains(self->syms, 1, "default", a->ips, a->nr, "fp", b->ips, b->nr);
		if (ca + 2 == (int)a->nr && ra_is(self->syms, a->ips[ca], "__libc_start_main") &&
		    ra_is(self->syms, a->ips[ca + 1], "_start"))
			at_start++;
	}
	TH_LOG("entries in both sessions %zu: the same chain up to the start routine %zu, the same but for the caller fp skips %zu; the default's ended at _start %zu",
	       shared, same, caller_kept, at_start);
	EXPECT_LE(50, shared);
	EXPECT_EQ(shared, same + caller_kept);
	EXPECT_GE(shared / 20, caller_kept);
	EXPECT_EQ(shared, at_start);
	/* the default walked by .eh_frame (wl_calls has no SFrame), the other by fp */
	EXPECT_LT(0, delta.frames_eh_frame);
	EXPECT_EQ(0, delta.frames_sframe);
	EXPECT_LT(0, delta.frames_fp);
}

/*
 * wl_nofp in clock_gettime(): the first frame lies in the vDSO, which is
 * no file mapping but an ELF image with .eh_frame; by .eh_frame alone
 * (no frame-pointer fallback) the walk goes through it down to main.
 * arm64's vDSO has no unwind tables: there the fp method's rule for a
 * first frame in it (a leaf, its return address in x30) takes the walk
 * out, and .eh_frame on from there.
 */
TEST_F_TIMEOUT(defer, eh_frame_walk_through_vdso, 120)
{
#ifdef __aarch64__
	static const char order[] = "eh_frame,fp";
#else
	static const char order[] = "eh_frame";
#endif
	size_t i, in_vdso = 0, reached = 0, in_plt = 0;
	struct perf_defer_stats delta;
	struct dl_stitch_stats st;
	const uint64_t *ips;
	int n, j;

	LOAD_MODULE();
	ASSERT_EQ(0, set_user_unwind(order));
	load_syms(_metadata, self, "wl_nofp");
	RUN_CPU_CLOCK(64, &delta, 0, "wl_nofp", "vdso", "1500");
	check_stitched(_metadata, self, "vdso", &st, &delta);
	for (i = 0; i < self->d.ns; i++) {
		const struct dl_sample *s = &self->d.s[i];

		/*
		 * A static binary, not PIE: a first frame outside its
		 * segments is the vDSO's.  One inside them without a symbol
		 * is no vDSO frame but a PLT stub's (a static binary calls
		 * its IFUNCs through them, at start-up before main too).
		 */
		if (s->ev != 0 || s->rec < 0)
			continue;
		n = dl_user_chain(&self->d, s, &ips);
		if (n <= 0)
			continue;
		if (dl_in_image(self->syms, ips[0])) {
			in_plt += !dl_sym(self->syms, ips[0], NULL);
			continue;
		}
		in_vdso++;
		for (j = 1; j < n; j++)
			if (ra_is(self->syms, ips[j], "main")) {
				reached++;
				break;
			}
	}
	TH_LOG("deferred samples in the vDSO: %zu, %zu of them reach main; in the binary without a symbol (not counted): %zu",
	       in_vdso, reached, in_plt);
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
		EXPECT_NEARLY_ALL(reached, total);
		nofp_reach(_metadata, self, "wl_dyn", modes[i], "fp", &reached, &total, NULL);
		EXPECT_FEW(reached, total);
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
	EXPECT_NEARLY_ALL(reached, total);
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
		EXPECT_NEARLY_ALL(reached, total);
	}
}

/*
 * A task that writes random bytes over its own .eh_frame_hdr, .eh_frame
 * and .sframe while it is sampled, and puts them back now and then.  With
 * the row cache off, the table walk reads the tables for every frame: it
 * gives whole chains while they are intact and ends early on what it
 * cannot make sense of.  With the cache on (the default), it reads them
 * for the PCs it has no row for, broken or not, and keeps what it read:
 * the task leaves its tables whole for its first 200 ms, so that the
 * callers' rows, which the first samples read, are whole and some chains
 * reach main (a broken caller's row kept would end every chain, as it
 * once did on a slow arm64 guest: 0 of 3410).  Either way the records
 * stay well-formed, nothing is lost, and the kernel reports nothing (the
 * VM run scans its log).
 */
TEST_F_TIMEOUT(defer, tables_scribbled_while_sampled, 300)
{
	static const char *const orders[] = { "sframe,eh_frame,fp", "eh_frame,sframe" };
	struct perf_defer_stats st1, delta;
	size_t i, reached, total;

	LOAD_MODULE();
	ASSERT_EQ(0, set_param("row_cache", "N"));
	for (i = 0; i < 2; i++) {
		nofp_reach(_metadata, self, "wl_nofp_sframe", "scribble", orders[i], &reached,
			   &total, NULL);
		EXPECT_LT(50, total);
		/* broken tables break chains, and intact ones give whole ones */
		EXPECT_LT(reached, total);
		EXPECT_LT(0, reached);
	}
	STATS(&st1);
	dl_stats_delta(&self->st0, &st1, &delta);
	EXPECT_LT(0, delta.table_rows);
	EXPECT_EQ(0, delta.table_row_hits);
	ASSERT_EQ(0, set_param("row_cache", "Y"));
	nofp_reach(_metadata, self, "wl_nofp_sframe", "scribble", orders[0], &reached, &total,
		   NULL);
	EXPECT_LT(50, total);
	EXPECT_LT(0, reached);
}

TEST_F_TIMEOUT(defer, compat_m32, 180)
{
	LOAD_MODULE();
	calls_compare(_metadata, self, "wl_calls32", "user");
	calls_compare(_metadata, self, "wl_calls32", "kernel");
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
	RUN_SAMPLED(deferred, &attr, "wl_zapstack", "-t", "1500", "-d", dstr);
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

TEST_F_TIMEOUT(defer, unattached_event_unchanged, 120)
{
	struct dl_paths def = { 0 }, ref = { 0 }, raw_def = { 0 }, raw_ref = { 0 };
	struct perf_defer_stats delta;
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
	RUN_ATTACHED(&delta, 0);
	check_stitched(_metadata, self, "attached", &st, &delta);
	for (i = 0; i < self->d.ns; i++) {
		struct dl_sample *s = &self->d.s[i];
		uint64_t cookie;

		if (s->ev != 1)
			continue;
		n1++;
		deferred1 += dl_deferred(s, &cookie);
		user1 += dl_has_user(s) || dl_on_way_out(s);
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
	compare_paths(_metadata, self, "wl_calls", "same run", &def, &raw_def, &ref, &raw_ref);
	dl_paths_free(&def);
	dl_paths_free(&ref);
	dl_paths_free(&raw_def);
	dl_paths_free(&raw_ref);
}

int main(int argc, char **argv)
{
	return defer_fixture_main(argc, argv, "walk_test [-l] [-t TEST]...");
}
