/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_ORDERED_H
#define PERF_DEFER_ORDERED_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * Time ordering of records read round by round from many ring buffers, as
 * perf's ordered events do: at the end of round N, the records with a time
 * up to the newest time seen in round N - 1 are delivered in time order
 * (any record still to come is newer than that); the rest wait.
 */
typedef int (*pd_deliver_fn)(void *arg, const void *event, size_t size);

/*
 * Records of equal time keep their arrival order, but for those queued
 * "early", which go before the others: records from different rings have
 * no arrival order worth keeping (the recorder queues the module's
 * deferred callchains early, see rec_read_ring()).
 */

struct pd_ordered;

struct pd_ordered *pd_ordered__new(pd_deliver_fn deliver, void *arg);
int pd_ordered__queue(struct pd_ordered *q, __u64 time, const void *event, size_t size,
		      bool early);
int pd_ordered__round(struct pd_ordered *q);
int pd_ordered__flush(struct pd_ordered *q);
size_t pd_ordered__pending(const struct pd_ordered *q);
/* records delivered by the last round or flush */
size_t pd_ordered__delivered(const struct pd_ordered *q);
void pd_ordered__delete(struct pd_ordered *q);

#endif /* PERF_DEFER_ORDERED_H */
