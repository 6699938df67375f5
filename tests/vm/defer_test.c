// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deferred user callchains through perf_defer.ko: records, cookies and
 * rings, sessions, the module's limits and lifetime, what records carry
 * and who may sample (the fixture: defer_fixture.h).  The chains
 * themselves, by each unwind method, are walk_test.c's.
 *
 *	defer_test [-l] [-t TEST]...	the tests (TAP), or only those named
 *	defer_test --sample PID MS	attach to a running task for MS ms
 *					(lifecycle.sh), print counts
 *	defer_test --hold		hold perf's task-event jump label on
 *					until killed (lifecycle.sh)
 */
#include "defer_fixture.h"

TEST_F_TIMEOUT(defer, dedup_one_record_per_entry, 120)
{
	struct perf_defer_stats delta;
	struct dl_stitch_stats st;
	size_t i, ksamples = 0, shallow = 0;
	struct dl_data *d = &self->d;
	struct key_s { uint32_t tid; uint64_t cookie; } *keys;
	size_t nkeys = 0, kentries = 0, j;

	LOAD_MODULE();
	load_syms(_metadata, self, "wl_syscall");
	RUN_CPU_CLOCK(64, &delta, 1000, "wl_syscall", "-t", "1500", "-c", "16384", "-d", "20", "-n",
		      "2");
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
	EXPECT_EQ(0, delta.pending);
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
	/* what the last unwinds wrote after the last drain, LOST records too */
	dl_session_drain(&self->s[0], &self->d);
	ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);
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
		/* an exec or an exit, where the kernel may give none */
		user += dl_has_user(&self->d.s[i]) || dl_on_way_out(&self->d.s[i]);
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
	struct perf_defer_stats delta;
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
		RUN_ATTACHED(&delta, 0);
		TH_LOG("variant %u: sample_type %#llx sample_id_all %d, sample_id %zu bytes", k,
		       (unsigned long long)v[k].type, v[k].all, dl_sid_size(v[k].type, v[k].all));
		/* the parser checked every record's size to the byte */
		check_stitched(_metadata, self, "layout", &st, &delta);
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
	struct perf_defer_stats delta;
	struct dl_stitch_stats st;
	size_t i, fallback = 0, bad = 0;

	LOAD_MODULE();
	ASSERT_EQ(0, dl_module_unload_wait(5000));
	ASSERT_EQ(0, dl_module_load("pool_size=16"));
	RUN_CPU_CLOCK(256, &delta, 1000, "wl_syscall", "-t", "1500", "-c", "4096", "-d", "6", "-n",
		      "24");
	dl_stats_log("delta", &delta);
	dl_stitch(&self->d, &st);
	dl_stitch_log("pool of 16", &st);
	for (i = 0; i < self->d.ns; i++) {
		const struct dl_sample *smp = &self->d.s[i];
		uint64_t cookie;

		if (dl_deferred(smp, &cookie))
			continue;
		fallback++;
		bad += !dl_has_user(smp) && !dl_on_way_out(smp);
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
	struct perf_defer_stats delta;
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
	RUN_ATTACHED(&delta, 1000);
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
/* read a non-blocking fd, *(int *)fdp, until it is empty */
static void drain_fd(void *fdp)
{
	static char buf[1 << 20];

	while (read(*(int *)fdp, buf, sizeof(buf)) > 0)
		;
}

TEST_F_TIMEOUT(defer, rmmod_refused_while_pending, 120)
{
	static const char fifo[] = "/tmp/pd_rmmod_fifo";
	struct perf_defer_stats st = { 0 };
	struct perf_event_attr attr;
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
		drain_fd(&rfd);
	}
	ASSERT_LT(0, st.pending) TH_LOG("never asleep with a request pending");
	TH_LOG("asleep with %llu pending after %d tries", (unsigned long long)st.pending, i + 1);
	dl_session_close(&self->s[0]);
	dl_perf_close(&self->p[0]);
	ret = dl_module_unload();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY) TH_LOG("rmmod: %d", ret);
	EXPECT_TRUE(dl_module_loaded());
	/*
	 * Let it run: its task_work runs on the way back to user space.  The
	 * write in progress can need more than one pipeful, so keep reading
	 * until the unload goes through.
	 */
	EXPECT_EQ(0, dl_module_unload_while(5000, drain_fd, &rfd));
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

/*
 * wakeup_bytes: POLLIN only once a ring holds that much.  Two sessions,
 * each with an event of the same workload, one with a mark above what it
 * records, one with a mark of 1 KiB: records in both, POLLIN in the
 * second only.  (The workload is timed: on guests that share their CPUs
 * it has left under 4 KiB in a ring.)
 */
TEST_F_TIMEOUT(defer, poll_waits_for_wakeup_bytes, 60)
{
	struct dl_collect_opts co = { .sess_drain_ms = -1 };
	const uint32_t pages = 64, high = pages * 4096 / 2, low = 1024;
	struct perf_event_attr attr;
	struct pollfd pfd;
	uint64_t used[2];
	int i;

	LOAD_MODULE();
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, dl_session_open(&self->s[i], i, pages));
		ASSERT_EQ(0, dl_ioc_set_ring_wakeup(self->s[i].fd, pages, i ? low : high));
		ASSERT_EQ(0, dl_session_map(&self->s[i]));
	}
	SPAWN(0, "wl_syscall", "-t", "300", "-c", "8192", "-d", "4");
	/* an event is attached to one session: one event each */
	EV_OPEN(0, &attr, self->c[0].pid);
	EV_OPEN(1, &attr, self->c[0].pid);
	ATTACH(0, 0);
	ATTACH(1, 1);
	EXPECT_EQ(0, dl_child_go(&self->c[0]));
	ASSERT_EQ(0, dl_collect(&self->c[0], self->p, MAX_PERF, NULL, 0, &self->d, &co));
	for (i = 0; i < 2; i++)
		used[i] = dl_session_max_used(&self->s[i]);
	TH_LOG("most bytes in a ring: %llu and %llu; marks %u and %u",
	       (unsigned long long)used[0], (unsigned long long)used[1], high, low);
	/* the test means something only with records below the high mark */
	ASSERT_LT(0, used[0]);
	ASSERT_GT(high, used[0]);
	ASSERT_LE(low, used[1]);
	pfd = (struct pollfd){ .fd = self->s[0].fd, .events = POLLIN };
	EXPECT_EQ(0, poll(&pfd, 1, 0)) TH_LOG("POLLIN below wakeup_bytes");
	pfd = (struct pollfd){ .fd = self->s[1].fd, .events = POLLIN };
	EXPECT_EQ(1, poll(&pfd, 1, 0)) TH_LOG("no POLLIN at wakeup_bytes");
}

/* ---- what records carry, and who may sample ----------------------- */

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
			x = x + k;
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

	LOAD_MODULE_WITH("dev_mode=0666");
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

/* ---- main ---------------------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--sample"))
		return sample_main(argc, argv);
	/*
	 * defer_test --hold: hold the jump label until killed (lifecycle.sh,
	 * scripts/vm); "held" on stdout says it is on
	 */
	if (argc > 1 && !strcmp(argv[1], "--hold")) {
		if (dl_hold_perf_sched_events() < 0)
			return 1;
		printf("held\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return defer_fixture_main(argc, argv,
				  "defer_test [-l] [-t TEST]... | --sample PID MS | --hold");
}
