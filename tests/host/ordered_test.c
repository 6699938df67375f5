// SPDX-License-Identifier: GPL-2.0-only
/*
 * ordered_test - the recorder's time ordering of records (recorder/ordered.c)
 */
#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "kselftest_harness.h"

#include "ordered.h"

struct rec {
	struct perf_event_header h;
	__u64 tag;
};

struct got {
	__u64 tags[16];
	int n;
};

static int collect(void *arg, const void *event, size_t size)
{
	struct got *g = arg;
	const struct rec *r = event;

	if (size != sizeof(*r) || g->n == 16)
		return -1;
	g->tags[g->n++] = r->tag;
	return 0;
}

FIXTURE(ordered) {
	struct got g;
	struct ordered *q;
};

FIXTURE_SETUP(ordered)
{
	self->q = ordered__new(collect, &self->g);
	ASSERT_NE(NULL, self->q);
}

FIXTURE_TEARDOWN(ordered)
{
	ordered__delete(self->q);
}

/* The tags delivered so far, in a TEST_F(ordered, ...). */
#define EXPECT_TAGS(...)							\
	do {									\
		const __u64 want_[] = { __VA_ARGS__ };				\
		ASSERT_EQ(ARRAY_SIZE(want_), (size_t)self->g.n);		\
		for (size_t i_ = 0; i_ < ARRAY_SIZE(want_); i_++) {		\
			EXPECT_EQ(want_[i_], self->g.tags[i_]);			\
		}								\
	} while (0)

/* as the recorder does: the module's deferred callchains early */
static int queue(struct ordered *q, __u64 time, __u32 type, __u64 tag)
{
	struct rec r = {
		.h = { .type = type, .size = sizeof(r) },
		.tag = tag,
	};

	return ordered__push(q, time, &r, sizeof(r),
			     type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED ? ORDERED_EARLY : 0);
}

struct qrec {
	__u64 time;
	__u32 type;
	__u64 tag;
};

/* Queue the records { time, type, tag } in this order, in a TEST_F(ordered, ...). */
#define QUEUE(...)								\
	do {									\
		const struct qrec qr_[] = { __VA_ARGS__ };			\
		for (size_t i_ = 0; i_ < ARRAY_SIZE(qr_); i_++)			\
			ASSERT_EQ(0, queue(self->q, qr_[i_].time, qr_[i_].type,	\
					   qr_[i_].tag));			\
	} while (0)

#define SAMPLE		PERF_RECORD_SAMPLE
#define DEFERRED	PERF_DEFER_RECORD_CALLCHAIN_DEFERRED

TEST_F(ordered, time_order_then_arrival)
{
	QUEUE({ 30, SAMPLE, 1 }, { 10, SAMPLE, 2 }, { 20, SAMPLE, 3 }, { 20, SAMPLE, 4 });
	ASSERT_EQ(0, ordered__flush(self->q));
	EXPECT_TAGS(2, 3, 4, 1);
}

/* one queued early goes before a sample of the same time */
TEST_F(ordered, deferred_first_at_equal_time)
{
	QUEUE({ 10, SAMPLE, 1 }, { 50, SAMPLE, 2 }, { 50, DEFERRED, 3 },
	      { 50, PERF_RECORD_COMM, 4 }, { 60, DEFERRED, 5 });
	ASSERT_EQ(0, ordered__flush(self->q));
	EXPECT_TAGS(1, 3, 2, 4, 5);
}

/* rounds deliver only what no later record can precede */
TEST_F(ordered, rounds)
{
	struct ordered *q = self->q;

	ASSERT_EQ(0, queue(q, 10, PERF_RECORD_SAMPLE, 1));
	ASSERT_EQ(0, ordered__round(q));
	EXPECT_EQ(0, self->g.n);
	ASSERT_EQ(0, queue(q, 20, PERF_RECORD_SAMPLE, 2));
	ASSERT_EQ(0, queue(q, 5, PERF_RECORD_SAMPLE, 3));
	ASSERT_EQ(0, ordered__round(q));
	EXPECT_TAGS(3, 1);
	EXPECT_EQ(1, ordered__pending(q));
	ASSERT_EQ(0, ordered__flush(q));
	EXPECT_TAGS(3, 1, 2);
}

/* NOCOPY: the queue keeps the caller's record, copies the others */
TEST_F(ordered, nocopy)
{
	struct rec kept[2] = {
		{ .h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(kept[0]) }, .tag = 1 },
		{ .h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(kept[0]) }, .tag = 2 },
	};
	struct ordered *q = self->q;

	ASSERT_EQ(0, ordered__push(q, 20, &kept[0], sizeof(kept[0]), ORDERED_NOCOPY));
	ASSERT_EQ(0, queue(q, 10, PERF_RECORD_SAMPLE, 3));
	ASSERT_EQ(0, ordered__push(q, 40, &kept[1], sizeof(kept[1]), ORDERED_NOCOPY));
	ASSERT_EQ(0, queue(q, 30, PERF_RECORD_SAMPLE, 4));
	ASSERT_EQ(0, ordered__round(q));
	ASSERT_EQ(0, ordered__round(q));
	/* up to 40 went: the copies and the kept record of 20 and 40 */
	EXPECT_TAGS(3, 1, 4, 2);
	ASSERT_EQ(0, queue(q, 60, PERF_RECORD_SAMPLE, 5));
	ASSERT_EQ(0, ordered__push(q, 50, &kept[0], sizeof(kept[0]), ORDERED_NOCOPY));
	/* not copied: what the record holds when it goes out is what counts */
	kept[0].tag = 6;
	ASSERT_EQ(0, ordered__round(q));
	ASSERT_EQ(4, self->g.n);
	EXPECT_EQ(2, ordered__pending(q));
	ASSERT_EQ(0, ordered__flush(q));
	EXPECT_TAGS(3, 1, 4, 2, 6, 5);
}

/* a record older than what a round delivered is counted, and goes next */
TEST_F(ordered, out_of_order)
{
	struct ordered *q = self->q;

	ASSERT_EQ(0, queue(q, 10, PERF_RECORD_SAMPLE, 1));
	ASSERT_EQ(0, ordered__round(q));
	ASSERT_EQ(0, queue(q, 20, PERF_RECORD_SAMPLE, 2));
	ASSERT_EQ(0, ordered__round(q));
	ASSERT_EQ(1, self->g.n);
	EXPECT_EQ(10, ordered__written_until(q));
	/* 10 is out: 5 is late, 10 and 15 are not */
	QUEUE({ 5, SAMPLE, 3 }, { 10, SAMPLE, 4 }, { 15, SAMPLE, 5 });
	EXPECT_EQ(1, ordered__out_of_order(q));
	ASSERT_EQ(0, ordered__round(q));
	EXPECT_TAGS(1, 3, 4, 5, 2);
	/* after a flush everything is late */
	ASSERT_EQ(0, ordered__flush(q));
	ASSERT_EQ(0, queue(q, 100, PERF_RECORD_SAMPLE, 6));
	EXPECT_EQ(2, ordered__out_of_order(q));
}

TEST_F(ordered, short_event_refused)
{
	char b[4] = { 0 };

	EXPECT_EQ(-EINVAL, ordered__push(self->q, 1, b, sizeof(b), 0));
	EXPECT_EQ(0, ordered__pending(self->q));
}

TEST_HARNESS_MAIN
