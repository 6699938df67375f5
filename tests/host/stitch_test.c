// SPDX-License-Identifier: GPL-2.0-only
/*
 * stitch_test - the stitcher (recorder/stitch.c), in process
 *
 * Records go in as the recorder or perf >= 6.19 writes them; what comes
 * out is read back with the reader and compared with what perf >= 6.19
 * would show after merging the deferred callchains.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "kselftest_harness.h"

#include "pd_test_util.h"
#include "stitch.h"

#define ID0	101
#define ID1	102
#define K(x)	(0xffffffff81000000ULL + (x))
#define U(x)	(0x0000555555550000ULL + (x))
#define COOKIE(cpu, n)	(((__u64)(cpu) + 1) << 32 | (1 | (n) << 1))

struct out {
	int fd;
	struct perf_data_writer *w;
	struct stitch *s;
	struct perf_data_reader *r;
	void *buf;
	struct stitch_stats st;
};

/*
 * The stitcher takes a (the input's attr), the writer its stitched form:
 * defer bits cleared, and registers and stack for a dwarf,defer attr.
 */
static void out__begin_attr(struct __test_metadata *_metadata, struct out *o,
			    struct perf_event_attr a)
{
	__u64 ids[] = { ID0, ID1 };

	memset(o, 0, sizeof(*o));
	o->fd = memfd_create("stitched", MFD_CLOEXEC);
	ASSERT_LE(0, o->fd);
	o->w = perf_data_writer__open_fd(o->fd, "stitched");
	ASSERT_NE(NULL, o->w);
	o->s = stitch__new(o->w);
	ASSERT_NE(NULL, o->s);
	ASSERT_EQ(0, stitch__add_attr(o->s, &a, ids, 2));
	attr__clear_defer(&a);
	attr__stitch_user_dump(&a);
	ASSERT_EQ(0, perf_data_writer__add_attr(o->w, &a, ids, 2, "cpu-clock"));
}

static void out__begin(struct __test_metadata *_metadata, struct out *o)
{
	out__begin_attr(_metadata, o, t_attr(true, true));
}

static void out__event(struct __test_metadata *_metadata, struct out *o, struct tev *e)
{
	ASSERT_EQ(0, stitch__event(o->s, e->w, tev__size(e))) TH_LOG("%s", error__msg());
}

/* Finish, close, and open what was written. */
static void out__end(struct __test_metadata *_metadata, struct out *o)
{
	size_t size;

	ASSERT_EQ(0, stitch__finish(o->s, &o->st));
	stitch__delete(o->s);
	o->s = NULL;
	ASSERT_EQ(0, perf_data_writer__close(o->w, NULL)) TH_LOG("%s", error__msg());
	o->w = NULL;
	size = lseek(o->fd, 0, SEEK_END);
	o->buf = malloc(size);
	ASSERT_NE(NULL, o->buf);
	ASSERT_EQ((ssize_t)size, pread(o->fd, o->buf, size, 0));
	o->r = perf_data_reader__open_mem(o->buf, size, "stitched");
	ASSERT_NE(NULL, o->r) TH_LOG("%s", error__msg());
}

static void out__free(struct out *o)
{
	stitch__delete(o->s);
	if (o->w)
		perf_data_writer__abort(o->w);
	perf_data_reader__close(o->r);
	free(o->buf);
	if (o->fd > 0)
		close(o->fd);
}

/* The next record of the output, parsed; false at the end. */
static bool out__next(struct __test_metadata *_metadata, struct out *o,
		      const struct perf_event_header **ev, struct perf_sample *s)
{
	const struct evsel *a;
	int ret = perf_data_reader__next(o->r, ev);

	EXPECT_LE(0, ret) TH_LOG("%s", error__msg());
	if (ret <= 0)
		return false;
	a = evlist__find(perf_data_reader__evlist(o->r), *ev);
	EXPECT_NE(NULL, a);
	if (!a)
		return false;
	EXPECT_EQ(0, perf_sample__parse(&a->attr, *ev, s)) TH_LOG("%s", error__msg());
	return true;
}

/* The chain of s equals want[n]. */
#define ASSERT_CHAIN(s, ...)							\
	do {									\
		const __u64 want_[] = { __VA_ARGS__ };				\
		ASSERT_EQ(ARRAY_SIZE(want_), (s)->nr);				\
		for (size_t i_ = 0; i_ < ARRAY_SIZE(want_); i_++) {		\
			ASSERT_EQ(want_[i_], (s)->callchain[i_])		\
				TH_LOG("entry %zu", i_);			\
		}								\
	} while (0)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

FIXTURE(stitch) {
	struct out o;
	struct tev e;
};

FIXTURE_SETUP(stitch)
{
	out__begin(_metadata, &self->o);
}

FIXTURE_TEARDOWN(stitch)
{
	out__free(&self->o);
}

/* A kernel-mode sample and a user-mode one get the user chain of their record. */
TEST_F(stitch, basic)
{
	const __u64 k[] = { K(0x10), K(0x20) }, u[] = { U(1), U(2), U(3) };
	const struct perf_event_header *ev;
	struct perf_sample s;

	t_sample_deferred(&self->e, 10, 11, 1000, ID0, 0, k, 2, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_sample_deferred(&self->e, 20, 21, 1500, ID0, 1, NULL, 0, COOKIE(1, 1));
	out__event(_metadata, &self->o, &self->e);
	t_deferred(&self->e, 10, 11, 2000, ID0, 0, COOKIE(0, 1), u, 3);
	out__event(_metadata, &self->o, &self->e);
	t_deferred(&self->e, 20, 21, 2100, ID0, 1, COOKIE(1, 1), u + 1, 2);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);

	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(PERF_RECORD_SAMPLE, ev->type);
	ASSERT_EQ(1000, s.time);
	ASSERT_EQ(11, s.tid);
	ASSERT_EQ(K(0x10), s.ip);
	ASSERT_FALSE(s.deferred);
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x10), K(0x20), PERF_CONTEXT_USER, U(1), U(2), U(3));
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(1500, s.time);
	ASSERT_CHAIN(&s, PERF_CONTEXT_USER, U(2), U(3));
	/* the records themselves are not written */
	ASSERT_FALSE(out__next(_metadata, &self->o, &ev, &s));

	ASSERT_EQ(2, self->o.st.samples);
	ASSERT_EQ(2, self->o.st.deferred);
	ASSERT_EQ(2, self->o.st.stitched);
	ASSERT_EQ(0, self->o.st.unmatched);
	ASSERT_EQ(2, self->o.st.records);
	ASSERT_EQ(0, self->o.st.orphan_records);
}

/* Samples without deferral come out byte for byte. */
TEST_F(stitch, plain_samples_unchanged)
{
	const __u64 chain[] = { PERF_CONTEXT_KERNEL, K(1), PERF_CONTEXT_USER, U(1), U(2) };
	const struct perf_event_header *ev;
	struct perf_sample s;
	struct tev copy;

	t_sample(&self->e, 1, 1, 100, ID0, 0, K(1), chain, 5);
	copy = self->e;
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(tev__size(&copy), ev->size);
	ASSERT_EQ(0, memcmp(copy.w, ev, ev->size));
	ASSERT_EQ(1, self->o.st.samples);
	ASSERT_EQ(0, self->o.st.deferred);
}

/* Every sample of one kernel entry shares the cookie and gets the chain. */
TEST_F(stitch, one_record_many_samples)
{
	const __u64 k[] = { K(0x30) }, u[] = { U(7), U(8) };
	const struct perf_event_header *ev;
	struct perf_sample s;
	int n = 0;

	for (int i = 0; i < 5; i++) {
		t_sample_deferred(&self->e, 5, 5, 100 + i, ID0, 0, k, 1, COOKIE(0, 9));
		out__event(_metadata, &self->o, &self->e);
	}
	t_deferred(&self->e, 5, 5, 200, ID0, 0, COOKIE(0, 9), u, 2);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);
	while (out__next(_metadata, &self->o, &ev, &s)) {
		ASSERT_EQ(100 + n, s.time);
		ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x30), PERF_CONTEXT_USER, U(7), U(8));
		n++;
	}
	ASSERT_EQ(5, n);
	ASSERT_EQ(5, self->o.st.stitched);
	ASSERT_EQ(1, self->o.st.records);
}

/*
 * Samples of two CPUs, records on other CPUs than their samples: the
 * output keeps the input (time) order, and the records queued behind a
 * held sample wait for it.
 */
TEST_F(stitch, order_across_cpus)
{
	const __u64 k[] = { K(0x40) }, u0[] = { U(0x10) }, u1[] = { U(0x20) };
	const struct perf_event_header *ev;
	struct perf_sample s;
	__u64 last = 0;
	int types[16], n = 0;

	t_sample_deferred(&self->e, 1, 1, 10, ID0, 0, k, 1, COOKIE(0, 1));	/* held */
	out__event(_metadata, &self->o, &self->e);
	t_comm(&self->e, 3, 3, "other", 11, ID0, 1, false);			/* waits */
	out__event(_metadata, &self->o, &self->e);
	t_sample_deferred(&self->e, 2, 2, 12, ID1, 1, k, 1, COOKIE(1, 1));	/* held */
	out__event(_metadata, &self->o, &self->e);
	t_sample(&self->e, 3, 3, 13, ID1, 1, U(5), (const __u64[]){ PERF_CONTEXT_USER, U(5) }, 2);
	out__event(_metadata, &self->o, &self->e);
	/* tid 2's record first, on CPU 0 */
	t_deferred(&self->e, 2, 2, 14, ID0, 0, COOKIE(1, 1), u1, 1);
	out__event(_metadata, &self->o, &self->e);
	ASSERT_EQ(0, perf_data_writer__data_size(self->o.w)) TH_LOG("written behind a held sample");
	t_deferred(&self->e, 1, 1, 15, ID1, 1, COOKIE(0, 1), u0, 1);
	out__event(_metadata, &self->o, &self->e);
	t_comm(&self->e, 4, 4, "late", 16, ID0, 0, false);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);

	while (out__next(_metadata, &self->o, &ev, &s)) {
		ASSERT_LE(last, s.time);
		last = s.time;
		types[n++] = ev->type;
		if (s.tid == 1 && ev->type == PERF_RECORD_SAMPLE)
			ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x40), PERF_CONTEXT_USER, U(0x10));
		if (s.tid == 2 && ev->type == PERF_RECORD_SAMPLE)
			ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x40), PERF_CONTEXT_USER, U(0x20));
	}
	ASSERT_EQ(5, n);
	ASSERT_EQ(PERF_RECORD_SAMPLE, types[0]);
	ASSERT_EQ(PERF_RECORD_COMM, types[1]);
	ASSERT_EQ(PERF_RECORD_SAMPLE, types[2]);
	ASSERT_EQ(PERF_RECORD_SAMPLE, types[3]);
	ASSERT_EQ(PERF_RECORD_COMM, types[4]);
}

/*
 * The same tid, a new cookie: the record of the newer kernel entry
 * releases the sample of the older one, unmatched (kernel part only), as
 * perf >= 6.19 does.
 */
TEST_F(stitch, same_tid_new_cookie)
{
	const __u64 k[] = { K(0x50), K(0x51) }, u[] = { U(0x30), U(0x31) };
	const struct perf_event_header *ev;
	struct perf_sample s;

	t_sample_deferred(&self->e, 7, 7, 100, ID0, 0, k, 2, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	/* its record was lost; the task entered the kernel again */
	t_sample_deferred(&self->e, 7, 7, 200, ID0, 0, k + 1, 1, COOKIE(0, 2));
	out__event(_metadata, &self->o, &self->e);
	t_deferred(&self->e, 7, 7, 300, ID0, 0, COOKIE(0, 2), u, 2);
	out__event(_metadata, &self->o, &self->e);
	/* written as soon as that record came: nothing is held any more */
	ASSERT_LT(0, perf_data_writer__data_size(self->o.w));
	out__end(_metadata, &self->o);

	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(100, s.time);
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x50), K(0x51));
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(200, s.time);
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x51), PERF_CONTEXT_USER, U(0x30), U(0x31));
	ASSERT_FALSE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(1, self->o.st.stitched);
	ASSERT_EQ(1, self->o.st.unmatched);
}

/*
 * The clock stood still (an unstable sched_clock held within a tick):
 * the samples of three kernel entries of one tid share one time, and
 * their records, dated a nanosecond later, come after all of them.  Each
 * sample gets its own entry's chain; a sample older than the first
 * record's own (its record lost) is still left unmatched.
 */
static void stalled_input(struct __test_metadata *_metadata, struct out *o, struct tev *e)
{
	const __u64 k[] = { K(0x60) }, u[] = { U(1), U(2), U(3), U(4) };

	t_sample_deferred(e, 7, 7, 50, ID0, 0, k, 1, COOKIE(0, 1));
	out__event(_metadata, o, e);
	for (unsigned int i = 0; i < 3; i++) {
		t_sample_deferred(e, 7, 7, 100, ID0, 0, k, 1, COOKIE(0, 2 + i));
		out__event(_metadata, o, e);
	}
	for (unsigned int i = 0; i < 3; i++) {
		t_deferred(e, 7, 7, 101, ID0, 0, COOKIE(0, 2 + i), u + i, 1);
		out__event(_metadata, o, e);
	}
}

TEST_F(stitch, stalled_clock)
{
	const struct perf_event_header *ev;
	struct perf_sample s;

	stalled_input(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);

	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(50, s.time);
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x60));
	for (unsigned int i = 0; i < 3; i++) {
		ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
		ASSERT_EQ(100, s.time);
		ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x60), PERF_CONTEXT_USER, U(1 + i));
	}
	ASSERT_FALSE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(3, self->o.st.stitched);
	ASSERT_EQ(1, self->o.st.unmatched);
	ASSERT_EQ(0, self->o.st.orphan_records);
}

/*
 * The same in the deferred form: each record is written right after its
 * entry's sample, on the time of the next entry's where its own is later,
 * as a native file holds them; perf >= 6.19, which merges a record into
 * the held samples of its tid and keeps the order of equal times, then
 * merges each into its own sample.  The last comes where it came.
 */
TEST(keep_stalled_clock)
{
	struct perf_event_attr a = t_attr(true, true);
	const struct perf_event_header *ev;
	struct perf_sample s;
	struct out o;
	struct tev e;
	static const struct {
		__u32 type;
		__u64 time, cookie;
	} want[] = {
		{ PERF_RECORD_SAMPLE, 50, COOKIE(0, 1) },
		{ PERF_RECORD_SAMPLE, 100, COOKIE(0, 2) },
		{ PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, 100, COOKIE(0, 2) },
		{ PERF_RECORD_SAMPLE, 100, COOKIE(0, 3) },
		{ PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, 100, COOKIE(0, 3) },
		{ PERF_RECORD_SAMPLE, 100, COOKIE(0, 4) },
		{ PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, 101, COOKIE(0, 4) },
	};

	memset(&o, 0, sizeof(o));
	o.fd = memfd_create("kept", MFD_CLOEXEC);
	ASSERT_LE(0, o.fd);
	o.w = perf_data_writer__open_fd(o.fd, "kept");
	ASSERT_NE(NULL, o.w);
	o.s = stitch__new(o.w);
	ASSERT_NE(NULL, o.s);
	stitch__keep_deferred(o.s);
	ASSERT_EQ(0, stitch__add_attr(o.s, &a, (__u64[]){ ID0, ID1 }, 2));
	ASSERT_EQ(0, perf_data_writer__add_attr(o.w, &a, (__u64[]){ ID0, ID1 }, 2, "cpu-clock"));
	stalled_input(_metadata, &o, &e);
	out__end(_metadata, &o);

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		ASSERT_TRUE(out__next(_metadata, &o, &ev, &s)) TH_LOG("record %zu", i);
		ASSERT_EQ(want[i].type, ev->type) TH_LOG("record %zu", i);
		ASSERT_EQ(want[i].time, s.time) TH_LOG("record %zu", i);
		ASSERT_EQ(want[i].cookie, s.cookie) TH_LOG("record %zu", i);
	}
	ASSERT_FALSE(out__next(_metadata, &o, &ev, &s));
	ASSERT_EQ(4, o.st.samples);
	ASSERT_EQ(3, o.st.records);
	out__free(&o);
}

/* Two tids interleaved, each with its own cookies and records. */
TEST_F(stitch, two_tids_interleaved)
{
	const __u64 k[] = { K(0x60) };
	const struct perf_event_header *ev;
	struct perf_sample s;
	__u64 t = 1000;
	int stitched[2] = { 0 };

	for (int round = 0; round < 10; round++) {
		for (int tid = 1; tid <= 2; tid++) {
			t_sample_deferred(&self->e, tid, tid, t++, ID0, tid - 1, k, 1,
					  COOKIE(tid - 1, round));
			out__event(_metadata, &self->o, &self->e);
		}
		for (int tid = 2; tid >= 1; tid--) {
			__u64 u[] = { U(tid * 0x100 + round) };

			t_deferred(&self->e, tid, tid, t++, ID1, 2 - tid, COOKIE(tid - 1, round), u, 1);
			out__event(_metadata, &self->o, &self->e);
		}
	}
	out__end(_metadata, &self->o);
	while (out__next(_metadata, &self->o, &ev, &s)) {
		ASSERT_EQ(4, s.nr);
		ASSERT_EQ(PERF_CONTEXT_USER, s.callchain[2]);
		ASSERT_EQ(U(s.tid * 0x100 + stitched[s.tid - 1]), s.callchain[3]);
		stitched[s.tid - 1]++;
	}
	ASSERT_EQ(10, stitched[0]);
	ASSERT_EQ(10, stitched[1]);
	ASSERT_EQ(20, self->o.st.stitched);
	ASSERT_EQ(0, self->o.st.unmatched);
}

/* Samples still held at the end keep their kernel part, in order. */
TEST_F(stitch, unmatched_flush_at_end)
{
	const __u64 k[] = { K(0x70) };
	const struct perf_event_header *ev;
	struct perf_sample s;
	int n = 0;

	t_sample_deferred(&self->e, 1, 1, 10, ID0, 0, k, 1, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_comm(&self->e, 1, 1, "behind", 11, ID0, 0, false);
	out__event(_metadata, &self->o, &self->e);
	t_sample_deferred(&self->e, 2, 2, 12, ID0, 1, NULL, 0, COOKIE(1, 1));
	out__event(_metadata, &self->o, &self->e);
	ASSERT_EQ(0, perf_data_writer__data_size(self->o.w));
	out__end(_metadata, &self->o);

	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x70));
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(PERF_RECORD_COMM, ev->type);
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(0, s.nr);		/* user mode, nothing came */
	ASSERT_FALSE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(2, self->o.st.unmatched);
	(void)n;
}

/* PERF_RECORD_LOST passes through, in place, and is counted. */
TEST_F(stitch, lost_records)
{
	const __u64 k[] = { K(0x80) }, u[] = { U(0x80) };
	const struct perf_event_header *ev;
	struct perf_sample s;
	int types[8], n = 0;

	t_sample_deferred(&self->e, 1, 1, 10, ID0, 0, k, 1, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_lost(&self->e, ID1, 3, 11, ID1, 1);
	out__event(_metadata, &self->o, &self->e);
	t_lost(&self->e, ID0, 4, 12, ID0, 0);
	out__event(_metadata, &self->o, &self->e);
	t_deferred(&self->e, 1, 1, 13, ID0, 0, COOKIE(0, 1), u, 1);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);
	while (out__next(_metadata, &self->o, &ev, &s))
		types[n++] = ev->type;
	ASSERT_EQ(3, n);
	ASSERT_EQ(PERF_RECORD_SAMPLE, types[0]);
	ASSERT_EQ(PERF_RECORD_LOST, types[1]);
	ASSERT_EQ(PERF_RECORD_LOST, types[2]);
	ASSERT_EQ(7, self->o.st.lost_records);
	ASSERT_EQ(1, self->o.st.stitched);
}

/* A task that exits can have no more records: its samples go out. */
TEST_F(stitch, exit_releases)
{
	const __u64 k[] = { K(0x90) };

	t_sample_deferred(&self->e, 9, 9, 10, ID0, 0, k, 1, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_exit(&self->e, 9, 9, 20, ID0, 0);
	out__event(_metadata, &self->o, &self->e);
	ASSERT_LT(0, perf_data_writer__data_size(self->o.w));
	stitch__stats(self->o.s, &self->o.st);
	ASSERT_EQ(1, self->o.st.unmatched);
	out__end(_metadata, &self->o);
}

/* A record whose sample never came (or already went) is counted. */
TEST_F(stitch, orphan_record)
{
	const __u64 u[] = { U(1) };

	t_deferred(&self->e, 1, 1, 10, ID0, 0, COOKIE(0, 1), u, 1);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);
	ASSERT_EQ(1, self->o.st.records);
	ASSERT_EQ(1, self->o.st.orphan_records);
	ASSERT_EQ(0, perf_data_reader__data_size(self->o.r));
}

/* An empty record (a task that exited) matches and adds nothing. */
TEST_F(stitch, empty_record)
{
	const __u64 k[] = { K(0xa0) };
	const struct perf_event_header *ev;
	struct perf_sample s;

	t_sample_deferred(&self->e, 1, 1, 10, ID0, 0, k, 1, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_deferred(&self->e, 1, 1, 11, ID0, 0, COOKIE(0, 1), NULL, 0);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0xa0));
}

/* Past the pending budget the oldest held samples go out unmatched. */
TEST_F(stitch, budget_evicts_oldest)
{
	const __u64 k[] = { K(0xb0) }, u[] = { U(0xb0) };
	const struct perf_event_header *ev;
	struct perf_sample s;
	int n = 0, stitched = 0;

	stitch__set_max_pending(self->o.s, 4096);
	/* tid 1 is held forever: its record never comes */
	t_sample_deferred(&self->e, 1, 1, 1, ID0, 0, k, 1, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	for (int i = 0; i < 200; i++) {
		t_sample_deferred(&self->e, 2, 2, 10 + 2 * i, ID0, 1, k, 1, COOKIE(1, i));
		out__event(_metadata, &self->o, &self->e);
		t_deferred(&self->e, 2, 2, 11 + 2 * i, ID0, 1, COOKIE(1, i), u, 1);
		out__event(_metadata, &self->o, &self->e);
	}
	stitch__stats(self->o.s, &self->o.st);
	ASSERT_EQ(1, self->o.st.evicted);
	ASSERT_GE(4096 + 200, self->o.st.max_pending);
	out__end(_metadata, &self->o);
	while (out__next(_metadata, &self->o, &ev, &s)) {
		stitched += s.nr == 4;
		n++;
	}
	ASSERT_EQ(201, n);
	ASSERT_EQ(200, stitched);
}

/* Memory stays flat over a long stream when the records arrive. */
TEST_F(stitch, memory_flat)
{
	const __u64 k[] = { K(1), K(2), K(3) }, u[] = { U(1), U(2), U(3), U(4) };
	struct stitch_stats st;
	__u64 t = 0;

	for (int i = 0; i < 200000; i++) {
		int tid = 1 + i % 8;

		t_sample_deferred(&self->e, tid, tid, t++, ID0, tid % 2, k, 3, COOKIE(tid % 2, i));
		out__event(_metadata, &self->o, &self->e);
		t_comm(&self->e, tid, tid, "x", t++, ID1, 0, false);
		out__event(_metadata, &self->o, &self->e);
		if (i % 8 == 7) {
			for (int j = i - 7; j <= i; j++) {
				int tj = 1 + j % 8;

				t_deferred(&self->e, tj, tj, t++, ID0, 0, COOKIE(tj % 2, j), u, 4);
				out__event(_metadata, &self->o, &self->e);
			}
		}
	}
	stitch__stats(self->o.s, &st);
	ASSERT_EQ(200000, st.stitched);
	/* at most 8 samples and the 8 records behind them: a few KiB */
	ASSERT_GT(16 * 1024, st.max_pending) TH_LOG("max pending %llu", (unsigned long long)st.max_pending);
	out__end(_metadata, &self->o);
}

/* A stitched sample stays within header.size: the user chain is cut. */
TEST_F(stitch, huge_chain_truncated)
{
	static __u64 u[8184];	/* the biggest record 22 */
	const __u64 k[] = { K(1) };
	const struct perf_event_header *ev;
	struct perf_sample s;

	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		u[i] = U(i);
	t_sample_deferred(&self->e, 1, 1, 10, ID0, 0, k, 1, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_deferred(&self->e, 1, 1, 11, ID0, 0, COOKIE(0, 1), u, ARRAY_SIZE(u));
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_GE(PD_MAX_EVENT_SIZE, ev->size);
	ASSERT_EQ(PERF_CONTEXT_USER, s.callchain[2]);
	ASSERT_EQ(U(0), s.callchain[3]);
	ASSERT_EQ(1, self->o.st.truncated);
}

/* Records that do not parse are refused with a message. */
TEST_F(stitch, bad_records)
{
	struct tev *e = &self->e;
	struct perf_event_header h;

	t_sample(e, 1, 1, 10, ID0, 0, 1, NULL, 0);
	ASSERT_EQ(-EINVAL, stitch__event(self->o.s, e->w, tev__size(e) - 8));
	/* callchain nr past the end */
	e->w[7] = 1000;
	ASSERT_EQ(-EINVAL, stitch__event(self->o.s, e->w, tev__size(e)));
	ASSERT_NE(NULL, strstr(error__msg(), "callchain")) TH_LOG("%s", error__msg());
	/* a record 22 nr past the end */
	t_deferred(e, 1, 1, 11, ID0, 0, 5, (const __u64[]){ 1 }, 1);
	e->w[2] = 50;
	ASSERT_EQ(-EINVAL, stitch__event(self->o.s, e->w, tev__size(e)));
	memcpy(&h, e->w, sizeof(h));
	ASSERT_EQ(-EINVAL, stitch__event(self->o.s, e->w, 4));
	out__end(_metadata, &self->o);
}

/* A write error comes back from stitch__event(), and stays. */
TEST(write_error)
{
	struct perf_event_attr a = t_attr(false, true);
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	struct perf_data_writer *w;
	struct stitch *s;
	struct tev e;
	__u64 id = ID0;
	int err = 0;

	ASSERT_LE(0, fd);
	w = perf_data_writer__open_fd(fd, "/dev/full");
	ASSERT_NE(NULL, w);
	s = stitch__new(w);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, stitch__add_attr(s, &a, &id, 1));
	ASSERT_EQ(0, perf_data_writer__add_attr(w, &a, &id, 1, NULL));
	for (int i = 0; i < 100000 && !err; i++) {
		t_comm(&e, 1, 1, "full", i + 1, ID0, 0, false);
		err = stitch__event(s, e.w, tev__size(&e));
	}
	ASSERT_EQ(-ENOSPC, err);
	t_comm(&e, 1, 1, "again", 1, ID0, 0, false);
	ASSERT_EQ(-ENOSPC, stitch__event(s, e.w, tev__size(&e)));
	ASSERT_EQ(-ENOSPC, stitch__finish(s, NULL));
	stitch__delete(s);
	ASSERT_EQ(-ENOSPC, perf_data_writer__close(w, NULL));
	close(fd);
}

/*
 * stitch__reader() (perf-defer stitch): attrs lose defer_callchain and
 * defer_output, keep their ids and names; records are sorted per round.
 */
TEST(stitch_reader_attrs_and_rounds)
{
	struct perf_event_attr a0 = t_attr(true, true), a1 = t_attr(true, false);
	const __u64 k[] = { K(0xc0) }, u[] = { U(0xc0), U(0xc1) };
	__u64 ids0[] = { ID0 }, ids1[] = { ID1 };
	const struct perf_event_header *ev;
	struct stitch_stats st;
	struct perf_data_reader *in, *out;
	struct perf_data_writer *w;
	int fd_in = memfd_create("in", MFD_CLOEXEC), fd_out = memfd_create("out", MFD_CLOEXEC);
	void *bin, *bout;
	size_t nin, nout;
	__u64 last = 0;
	int n = 0;
	struct tev e;

	ASSERT_LE(0, fd_in);
	ASSERT_LE(0, fd_out);
	w = perf_data_writer__open_fd(fd_in, "in");
	ASSERT_NE(NULL, w);
	ASSERT_EQ(0, perf_data_writer__add_attr(w, &a0, ids0, 1, "cpu-clock"));
	ASSERT_EQ(0, perf_data_writer__add_attr(w, &a1, ids1, 1, "task-clock"));
	/* round 1: CPU 1's buffer, then CPU 0's (perf writes each buffer in turn) */
	t_sample_deferred(&e, 1, 1, 30, ID1, 1, k, 1, COOKIE(1, 1));
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	t_sample_deferred(&e, 2, 2, 10, ID0, 0, k, 1, COOKIE(0, 1));
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	t_round(&e);
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	/* round 2: the records (on the other CPUs), and a late sample of round 1's time */
	t_deferred(&e, 1, 1, 40, ID0, 0, COOKIE(1, 1), u, 2);
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	t_deferred(&e, 2, 2, 35, ID0, 1, COOKIE(0, 1), u + 1, 1);
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	t_sample(&e, 3, 3, 20, ID1, 1, U(9), (const __u64[]){ PERF_CONTEXT_USER, U(9) }, 2);
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	t_round(&e);
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	ASSERT_EQ(0, perf_data_writer__close(w, NULL));

	nin = lseek(fd_in, 0, SEEK_END);
	bin = malloc(nin);
	ASSERT_EQ((ssize_t)nin, pread(fd_in, bin, nin, 0));
	in = perf_data_reader__open_mem(bin, nin, "in");
	ASSERT_NE(NULL, in) TH_LOG("%s", error__msg());
	ASSERT_TRUE(attr__defer_callchain(&perf_data_reader__attr(in, 0)->attr));
	ASSERT_TRUE(attr__defer_output(&perf_data_reader__attr(in, 0)->attr));
	w = perf_data_writer__open_fd(fd_out, "out");
	ASSERT_NE(NULL, w);
	ASSERT_EQ(0, stitch__reader(in, w, &st, true)) TH_LOG("%s", error__msg());
	perf_data_reader__close(in);

	nout = lseek(fd_out, 0, SEEK_END);
	bout = malloc(nout);
	ASSERT_EQ((ssize_t)nout, pread(fd_out, bout, nout, 0));
	out = perf_data_reader__open_mem(bout, nout, "out");
	ASSERT_NE(NULL, out) TH_LOG("%s", error__msg());
	ASSERT_EQ(2, perf_data_reader__nr_attrs(out));
	for (unsigned int i = 0; i < 2; i++) {
		const struct evsel *a = perf_data_reader__attr(out, i);

		ASSERT_FALSE(attr__defer_callchain(&a->attr));
		ASSERT_FALSE(attr__defer_output(&a->attr));
		ASSERT_EQ(1, a->nr_ids);
		ASSERT_EQ(i ? ID1 : ID0, a->ids[0]);
		ASSERT_STREQ(i ? "task-clock" : "cpu-clock", a->name);
		ASSERT_EQ(T_SAMPLE_TYPE, a->attr.sample_type);
	}
	while (perf_data_reader__next(out, &ev) > 0) {
		const struct evsel *a = evlist__find(perf_data_reader__evlist(out), ev);
		struct perf_sample s;

		ASSERT_NE(PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, ev->type);
		if (ev->type != PERF_RECORD_SAMPLE)
			continue;
		ASSERT_EQ(0, perf_sample__parse(&a->attr, ev, &s));
		ASSERT_LE(last, s.time);
		last = s.time;
		ASSERT_FALSE(s.deferred);
		n++;
	}
	ASSERT_EQ(3, n);
	ASSERT_EQ(2, st.stitched);
	ASSERT_EQ(0, st.unmatched);
	perf_data_reader__close(out);
	free(bin);
	free(bout);
	close(fd_in);
	close(fd_out);
}

/* ---- dwarf,defer: USER_DUMP records ----------------------------------- */

/* registers BP, SP, IP (bits 6..8) and a small stack, in these tests */
#define D_REGS		0x1c0ULL
#define D_NREGS		3
#define D_STACK		64

static struct perf_event_attr d_attr(void)
{
	struct perf_event_attr a = t_attr(true, true);

	a.sample_regs_user = D_REGS;
	a.sample_stack_user = D_STACK;
	return a;
}

/*
 * PERF_DEFER_RECORD_USER_DUMP { cookie, abi, regs[D_NREGS] if abi, size,
 * data[size] (bytes seed, seed + 1, ...) and dyn_size if size, sample_id }
 */
static size_t t_dump(struct tev *e, __u32 pid, __u32 tid, __u64 time, __u64 cookie, __u64 abi,
		     __u64 size, __u64 dyn, unsigned char seed)
{
	tev__begin(e, PERF_DEFER_RECORD_USER_DUMP, PERF_RECORD_MISC_USER);
	tev__u64(e, cookie);
	tev__u64(e, abi);
	for (int i = 0; abi && i < D_NREGS; i++)
		tev__u64(e, U(0x100 * (i + 1)));
	tev__u64(e, size);
	if (size) {
		for (size_t i = 0; i < size; i++)
			((unsigned char *)&e->w[e->n])[i] = (unsigned char)(seed + i);
		e->n += size / 8;
		tev__u64(e, dyn);
	}
	tev__id(e, pid, tid, time, ID0, 0);
	return tev__end(e);
}

/* s has the registers of t_dump() and size bytes of its stack from seed */
static void d_check(struct __test_metadata *_metadata, const struct perf_event_header *ev,
		    const struct perf_sample *s, __u64 size, __u64 dyn, unsigned char seed)
{
	const unsigned char *p = (const unsigned char *)ev + s->regs_user_offset;

	ASSERT_EQ(PERF_SAMPLE_REGS_ABI_64, s->user_regs_abi);
	ASSERT_EQ(D_NREGS, s->nr_user_regs);
	for (int i = 0; i < D_NREGS; i++) {
		ASSERT_EQ(U(0x100 * (i + 1)), rd64(p + 8 + 8 * i));
	}
	ASSERT_EQ(size, s->user_stack_size);
	ASSERT_EQ(dyn, s->user_stack_dyn_size);
	p += 8 + 8 * D_NREGS + 8;
	for (size_t i = 0; i < size; i++) {
		ASSERT_EQ((unsigned char)(seed + i), p[i]) TH_LOG("stack byte %zu", i);
	}
}

FIXTURE(dwarf) {
	struct out o;
	struct tev e;
};

FIXTURE_SETUP(dwarf)
{
	out__begin_attr(_metadata, &self->o, d_attr());
}

FIXTURE_TEARDOWN(dwarf)
{
	out__free(&self->o);
}

TEST(dwarf_attr)
{
	struct perf_event_attr a = d_attr(), b = t_attr(false, false);

	ASSERT_TRUE(attr__user_dump(&a));
	ASSERT_FALSE(attr__user_dump(&b));
	attr__stitch_user_dump(&a);
	ASSERT_EQ(T_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, a.sample_type);
	ASSERT_EQ(1, (int)a.exclude_callchain_user);
	ASSERT_EQ(D_REGS, a.sample_regs_user);
	ASSERT_EQ(D_STACK, a.sample_stack_user);
	/* stitched once, it is no longer a deferred dump attr */
	ASSERT_FALSE(attr__user_dump(&a));
	attr__stitch_user_dump(&b);
	ASSERT_EQ(T_SAMPLE_TYPE, b.sample_type);
}

/*
 * A kernel-mode and a user-mode sample of one entry get its dump: the
 * USER_DEFERRED, cookie pair goes, registers and stack come in as perf
 * record --call-graph dwarf writes them.
 */
TEST_F(dwarf, basic)
{
	const __u64 k[] = { K(0x10), K(0x20) };
	const struct perf_event_header *ev;
	struct perf_sample s;

	t_sample_deferred(&self->e, 10, 11, 1000, ID0, 0, k, 2, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_sample_deferred(&self->e, 10, 11, 1100, ID0, 0, NULL, 0, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_dump(&self->e, 10, 11, 1200, COOKIE(0, 1), PERF_SAMPLE_REGS_ABI_64, D_STACK, 40, 7);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);

	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(PERF_RECORD_SAMPLE, ev->type);
	ASSERT_EQ(1000, s.time);
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x10), K(0x20));
	d_check(_metadata, ev, &s, D_STACK, 40, 7);
	ASSERT_EQ(s.end, ev->size);
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(1100, s.time);
	ASSERT_EQ(0, s.nr);
	d_check(_metadata, ev, &s, D_STACK, 40, 7);
	ASSERT_FALSE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(2, self->o.st.stitched);
	ASSERT_EQ(1, self->o.st.records);
	ASSERT_EQ(0, self->o.st.unmatched);
}

/*
 * Without a dump (none came, or the sample kept its in-NMI user walk)
 * a sample has abi 0 and stack size 0, as perf writes a sample without
 * user registers; its callchain keeps what it has besides the pair.
 */
TEST_F(dwarf, no_dump)
{
	const __u64 k[] = { K(0x10) };
	const __u64 nmi[] = { PERF_CONTEXT_KERNEL, K(0x30), PERF_CONTEXT_USER, U(5), U(6) };
	const struct perf_event_header *ev;
	struct perf_sample s;

	t_sample_deferred(&self->e, 10, 11, 1000, ID0, 0, k, 1, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_sample(&self->e, 10, 12, 1100, ID0, 0, K(0x30), nmi, ARRAY_SIZE(nmi));
	out__event(_metadata, &self->o, &self->e);
	/* another entry's dump: the held sample is released without one */
	t_dump(&self->e, 10, 11, 1200, COOKIE(0, 2), PERF_SAMPLE_REGS_ABI_64, D_STACK, 8, 0);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);

	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(1000, s.time);
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x10));
	ASSERT_EQ(0, s.user_regs_abi);
	ASSERT_EQ(0, s.user_stack_size);
	ASSERT_EQ(s.end, ev->size);
	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(1100, s.time);
	ASSERT_CHAIN(&s, PERF_CONTEXT_KERNEL, K(0x30), PERF_CONTEXT_USER, U(5), U(6));
	ASSERT_EQ(0, s.user_regs_abi);
	ASSERT_EQ(0, s.user_stack_size);
	ASSERT_FALSE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(1, self->o.st.unmatched);
	ASSERT_EQ(1, self->o.st.orphan_records);
}

/* A dump without registers (abi NONE, no stack) is given as it is. */
TEST_F(dwarf, dump_without_regs)
{
	const struct perf_event_header *ev;
	struct perf_sample s;

	t_sample_deferred(&self->e, 10, 11, 1000, ID0, 0, NULL, 0, COOKIE(1, 1));
	out__event(_metadata, &self->o, &self->e);
	t_dump(&self->e, 10, 11, 1200, COOKIE(1, 1), PERF_SAMPLE_REGS_ABI_NONE, 0, 0, 0);
	out__event(_metadata, &self->o, &self->e);
	out__end(_metadata, &self->o);

	ASSERT_TRUE(out__next(_metadata, &self->o, &ev, &s));
	ASSERT_EQ(0, s.nr);
	ASSERT_EQ(0, s.user_regs_abi);
	ASSERT_EQ(0, s.user_stack_size);
	ASSERT_EQ(s.end, ev->size);
	ASSERT_EQ(1, self->o.st.stitched);
}

/*
 * A dump that does not fit in the sample next to its kernel chain is cut
 * to what fits, a multiple of 8, as the kernel cuts sample_stack_user.
 */
TEST(dwarf_cut_to_fit)
{
	struct perf_event_attr a = d_attr();
	struct tev *e = calloc(1, sizeof(*e));
	const struct perf_event_header *ev;
	__u64 k[60], size = 65000 & ~7;
	struct perf_sample s;
	struct out o;

	ASSERT_NE(NULL, e);
	a.sample_stack_user = size;
	out__begin_attr(_metadata, &o, a);
	for (int i = 0; i < 60; i++)
		k[i] = K(i);
	t_sample_deferred(e, 10, 11, 1000, ID0, 0, k, 60, COOKIE(0, 1));
	ASSERT_EQ(0, stitch__event(o.s, e->w, tev__size(e)));
	t_dump(e, 10, 11, 1200, COOKIE(0, 1), PERF_SAMPLE_REGS_ABI_64, size, size, 3);
	ASSERT_EQ(0, stitch__event(o.s, e->w, tev__size(e))) TH_LOG("%s", error__msg());
	out__end(_metadata, &o);

	ASSERT_TRUE(out__next(_metadata, &o, &ev, &s));
	ASSERT_GE(PD_MAX_EVENT_SIZE, ev->size);
	ASSERT_LT(PD_MAX_EVENT_SIZE - 8, ev->size);
	ASSERT_EQ(61, s.nr);
	ASSERT_EQ(0, s.user_stack_size % 8);
	ASSERT_GT(size, s.user_stack_size);
	ASSERT_LT(size - 1024, s.user_stack_size);
	d_check(_metadata, ev, &s, s.user_stack_size, s.user_stack_size, 3);
	ASSERT_EQ(1, o.st.truncated);
	out__free(&o);
	free(e);
}

/* A USER_DUMP whose dyn_size exceeds its size does not parse. */
TEST_F(dwarf, bad_dump)
{
	t_sample_deferred(&self->e, 10, 11, 1000, ID0, 0, NULL, 0, COOKIE(0, 1));
	out__event(_metadata, &self->o, &self->e);
	t_dump(&self->e, 10, 11, 1200, COOKIE(0, 1), PERF_SAMPLE_REGS_ABI_64, D_STACK,
	       D_STACK + 8, 0);
	ASSERT_EQ(-EINVAL, stitch__event(self->o.s, self->e.w, tev__size(&self->e)));
	ASSERT_NE(NULL, strstr(error__msg(), "dyn_size")) TH_LOG("%s", error__msg());
}

TEST_HARNESS_MAIN
