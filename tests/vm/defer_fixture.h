/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The "defer" fixture of defer_test.c and walk_test.c, run as root in the
 * QEMU guest: each test loads the module from $PERF_DEFER_KO and unloads
 * it.
 *
 * The workloads (wl_*) sit next to the test programs.  cpu-clock sampling
 * (TCG has no PMU) of a workload started with enable_on_exec; its samples
 * come from the perf ring, the CALLCHAIN_DEFERRED records from the
 * session's rings, and defer_lib stitches them by (session, tid, cookie).
 * Reference runs use the same event without a session: perf's own in-NMI
 * frame-pointer walk.
 *
 * Here: the fixture, the run macros, what every stitched run must show
 * (check_stitched), and the main loop with -l and -t.  Include once, in
 * the program's only source file.
 */
#ifndef DEFER_FIXTURE_H
#define DEFER_FIXTURE_H

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
	DL_RUN_FIELDS(MAX_CHILD, MAX_PERF, MAX_SESS);
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

/*
 * Attach event 0 to session 0, run workload 0 to its end, and put what the
 * module counted meanwhile in *delta; with wait_ms, after waiting up to
 * that long for the last unwinds.
 */
#define RUN_ATTACHED(delta, wait_ms)					\
	do {								\
		struct perf_defer_stats __st1;				\
		ATTACH(0, 0);						\
		STATS(&self->st0);					\
		GO_COLLECT_OK(0, NULL);					\
		ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);	\
		if (wait_ms)						\
			EXPECT_EQ(0, wait_no_pending(self->s[0].fd, wait_ms)); \
		STATS(&__st1);						\
		dl_stats_delta(&self->st0, &__st1, (delta));		\
	} while (0)

/*
 * Session 0 (pages of ring per CPU), workload 0 (the arguments) and a
 * cpu-clock event on it, then RUN_ATTACHED(delta, wait_ms)
 */
#define RUN_CPU_CLOCK(pages, delta, wait_ms, ...)			\
	do {								\
		struct perf_event_attr __attr;				\
		SESS_OPEN(0, pages);					\
		SPAWN(0, __VA_ARGS__);					\
		dl_attr_cpu_clock(&__attr, PERIOD_NS);			\
		EV_OPEN(0, &__attr, self->c[0].pid);			\
		RUN_ATTACHED(delta, wait_ms);				\
	} while (0)

/* Does @r's sample_id say which task it is of, and when? */
static bool record_has_tid_time(const struct dl_data *d, const struct dl_record *r)
{
	return r->sess >= 0 && r->sess < DL_MAX_SESSIONS && d->sess_tid[r->sess] && r->sid.time;
}

/*
 * The newest record of @s's task no newer than @s, or NULL.  A record whose
 * sample_id has no tid or time (sample_id_all off, or a sample_type
 * without them) is placed by the samples stitched to it: the task's newest
 * deferred sample no newer than @s names it.
 */
static const struct dl_record *last_record(const struct dl_data *d, const struct dl_sample *s)
{
	const struct dl_record *best = NULL;
	uint64_t best_time = 0;
	size_t j;

	for (j = 0; j < d->nr; j++) {
		const struct dl_record *r = &d->r[j];

		if (!record_has_tid_time(d, r))
			continue;
		if (r->sid.tid == s->tid && r->sid.time <= s->time &&
		    (!best || r->sid.time > best_time)) {
			best = r;
			best_time = r->sid.time;
		}
	}
	for (j = 0; j < d->ns; j++) {
		const struct dl_sample *t = &d->s[j];
		const struct dl_record *r = t->rec >= 0 ? &d->r[t->rec] : NULL;

		if (!r || record_has_tid_time(d, r))
			continue;
		if (t->tid == s->tid && t->time && t->time <= s->time &&
		    (!best || t->time > best_time)) {
			best = r;
			best_time = t->time;
		}
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
	if (r->sid.time)
		dl_log("  last record at %llu, cookie %#llx", (unsigned long long)r->sid.time,
		       (unsigned long long)r->cookie);
	else
		dl_log("  last record (no time in its sample_id), cookie %#llx",
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
 * walk; the module counts each of those in after_unwind.  *@first counts
 * those let through because no record of the task comes before them: the
 * first samples of a task whose events were enabled on exec, taken inside
 * the execve() whose kernel chain names no exec function (the kernel's
 * walk stops at an assembler routine without unwind data, as in
 * blake2s_compress's get_random_bytes() for the new stack); the module
 * counts each sample inside an execve() in in_exec.
 */
static size_t not_deferred_midlife(const struct dl_data *d, const struct dl_syms *y,
				   size_t *same_ip, size_t *first)
{
	size_t i, j, bad = 0;
	uint64_t cookie;

	*same_ip = *first = 0;
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
		if (!last_record(d, s)) {
			(*first)++;
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
 * pending), and no sample left undeferred but those the module counted
 * in *delta, its counters over the run.  Also the per-record fields:
 * misc, ring CPU, user-mode IPs.
 */
static void check_stitched(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
			   const char *what, struct dl_stitch_stats *st,
			   const struct perf_defer_stats *delta)
{
	struct dl_data *d = &self->d;
	size_t i, bad_misc = 0, bad_cpu = 0, bad_ip = 0, nouser_ip = 0, same_ip, first;
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
	EXPECT_GE(delta->exit_pending, st->tasks_unmatched)
		TH_LOG("%s: %zu entries of tasks (%zu of sessions, %zu samples) without record, exit_pending %llu",
		       what, st->tasks_unmatched, st->entries_unmatched, st->unmatched,
		       (unsigned long long)delta->exit_pending);
	/* an attached event keeps its in-NMI chain only in a task's exit path */
	EXPECT_EQ(0, not_deferred_midlife(d, self->syms, &same_ip, &first))
		TH_LOG("%s: attached samples not deferred", what);
	EXPECT_LE(same_ip, delta->after_unwind)
		TH_LOG("%s: %zu samples not deferred, with the last record's IP", what, same_ip);
	EXPECT_LE(first, delta->in_exec)
		TH_LOG("%s: %zu samples not deferred before the task's first record", what, first);

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

/* frames of a user chain in function fn */
static int count_frames(const struct dl_syms *y, const uint64_t *ips, int n, const char *fn)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += dl_frame_is(y, ips, n, i, fn);
	return k;
}

/*
 * The tests of this program, or with -t only those named (NAME or
 * FIXTURE.NAME); -l lists them all.  usage: the program's usage line.
 */
static int defer_fixture_main(int argc, char **argv, const char *usage)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t, *next, *keep[256];
	const char *only[64];
	int nonly = 0, i, n, opt;
	bool list = false;

	while ((opt = getopt(argc, argv, "lt:")) != -1) {
		if (opt == 'l')
			list = true;
		else if (opt == 't' && nonly < 64)
			only[nonly++] = optarg;
		else {
			fprintf(stderr, "usage: %s\n", usage);
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
	dl_hold_perf_sched_events();
	return test_harness_run(argc, argv);
}

#endif /* DEFER_FIXTURE_H */
