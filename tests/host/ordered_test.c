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

/* as the recorder does: the module's deferred callchains early */
static int queue(struct pd_ordered *q, __u64 time, __u32 type, __u64 tag)
{
	struct rec r = {
		.h = { .type = type, .size = sizeof(r) },
		.tag = tag,
	};

	return pd_ordered__queue(q, time, &r, sizeof(r),
				 type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED);
}

TEST(time_order_then_arrival)
{
	struct got g = { 0 };
	struct pd_ordered *q = pd_ordered__new(collect, &g);

	ASSERT_NE(NULL, q);
	ASSERT_EQ(0, queue(q, 30, PERF_RECORD_SAMPLE, 1));
	ASSERT_EQ(0, queue(q, 10, PERF_RECORD_SAMPLE, 2));
	ASSERT_EQ(0, queue(q, 20, PERF_RECORD_SAMPLE, 3));
	ASSERT_EQ(0, queue(q, 20, PERF_RECORD_SAMPLE, 4));
	ASSERT_EQ(0, pd_ordered__flush(q));
	ASSERT_EQ(4, g.n);
	EXPECT_EQ(2, g.tags[0]);
	EXPECT_EQ(3, g.tags[1]);
	EXPECT_EQ(4, g.tags[2]);
	EXPECT_EQ(1, g.tags[3]);
	pd_ordered__delete(q);
}

/* one queued early goes before a sample of the same time */
TEST(deferred_first_at_equal_time)
{
	struct got g = { 0 };
	struct pd_ordered *q = pd_ordered__new(collect, &g);

	ASSERT_NE(NULL, q);
	ASSERT_EQ(0, queue(q, 10, PERF_RECORD_SAMPLE, 1));
	ASSERT_EQ(0, queue(q, 50, PERF_RECORD_SAMPLE, 2));
	ASSERT_EQ(0, queue(q, 50, PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, 3));
	ASSERT_EQ(0, queue(q, 50, PERF_RECORD_COMM, 4));
	ASSERT_EQ(0, queue(q, 60, PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, 5));
	ASSERT_EQ(0, pd_ordered__flush(q));
	ASSERT_EQ(5, g.n);
	EXPECT_EQ(1, g.tags[0]);
	EXPECT_EQ(3, g.tags[1]);
	EXPECT_EQ(2, g.tags[2]);
	EXPECT_EQ(4, g.tags[3]);
	EXPECT_EQ(5, g.tags[4]);
	pd_ordered__delete(q);
}

/* rounds deliver only what no later record can precede */
TEST(rounds)
{
	struct got g = { 0 };
	struct pd_ordered *q = pd_ordered__new(collect, &g);

	ASSERT_NE(NULL, q);
	ASSERT_EQ(0, queue(q, 10, PERF_RECORD_SAMPLE, 1));
	ASSERT_EQ(0, pd_ordered__round(q));
	EXPECT_EQ(0, g.n);
	ASSERT_EQ(0, queue(q, 20, PERF_RECORD_SAMPLE, 2));
	ASSERT_EQ(0, queue(q, 5, PERF_RECORD_SAMPLE, 3));
	ASSERT_EQ(0, pd_ordered__round(q));
	ASSERT_EQ(2, g.n);
	EXPECT_EQ(3, g.tags[0]);
	EXPECT_EQ(1, g.tags[1]);
	EXPECT_EQ(1, pd_ordered__pending(q));
	ASSERT_EQ(0, pd_ordered__flush(q));
	ASSERT_EQ(3, g.n);
	EXPECT_EQ(2, g.tags[2]);
	pd_ordered__delete(q);
}

TEST(short_event_refused)
{
	struct pd_ordered *q = pd_ordered__new(collect, NULL);
	char b[4] = { 0 };

	ASSERT_NE(NULL, q);
	EXPECT_EQ(-EINVAL, pd_ordered__queue(q, 1, b, sizeof(b), false));
	pd_ordered__delete(q);
}

TEST_HARNESS_MAIN
