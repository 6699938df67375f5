/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_ORDERED_H
#define PERF_DEFER_ORDERED_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "event.h"

/*
 * Time ordering of records read round by round from many ring buffers, or
 * from a file that perf wrote so, as perf's ordered events do: at the end
 * of round N, the records with a time up to the newest time seen in round
 * N - 1 are delivered in time order (any record still to come is newer
 * than that); the rest wait, and go to deliver (an event_fn) later.
 * record orders its rings' records with it, stitch the records of a file
 * between its FINISHED_ROUNDs.
 */

/*
 * Flags of ordered__push().
 *
 * EARLY: records of equal time keep their arrival order, but for those
 * queued early, which go before the others: records from different rings
 * have no arrival order worth keeping (the recorder queues the module's
 * deferred callchains early, see record__read_ring()).
 *
 * NOCOPY: the record stays where it is, valid, until it is delivered (a
 * record of the reader's mapping): the queue keeps the pointer.  Without
 * it the queue keeps a copy.
 */
#define ORDERED_EARLY	(1U << 0)
#define ORDERED_NOCOPY	(1U << 1)

struct ordered;

struct ordered *ordered__new(event_fn deliver, void *arg);
/* 0, -EINVAL for a record shorter than its header, -ENOMEM. */
int ordered__push(struct ordered *q, __u64 time, const void *event, size_t size,
		  unsigned int flags);
int ordered__round(struct ordered *q);
int ordered__flush(struct ordered *q);
size_t ordered__pending(const struct ordered *q);
/* records delivered by the last round or flush */
size_t ordered__delivered(const struct ordered *q);
/*
 * Records queued with a time before what a round had delivered already:
 * they go out in the next round, after newer ones.
 */
__u64 ordered__out_of_order(const struct ordered *q);
/* the time up to which the last round delivered */
__u64 ordered__written_until(const struct ordered *q);
void ordered__delete(struct ordered *q);

#endif /* PERF_DEFER_ORDERED_H */
