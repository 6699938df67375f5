/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_STITCH_H
#define PERF_DEFER_STITCH_H

/*
 * The stitcher: turns the deferred form of a recording (samples whose
 * callchain ends with PERF_CONTEXT_USER_DEFERRED, cookie, and
 * PERF_RECORD_CALLCHAIN_DEFERRED records) into the stitched form that
 * every perf reads, the way perf >= 6.19 merges them:
 *
 *  - a deferred sample is held;
 *  - a CALLCHAIN_DEFERRED record of the same tid (from its sample_id, -1
 *    without PERF_SAMPLE_TID) and cookie replaces the USER_DEFERRED,
 *    cookie pair of each held sample with PERF_CONTEXT_USER, ips...;
 *    held samples of that tid with another cookie are released
 *    unmatched: their pair is removed, the kernel part stays;
 *  - PERF_RECORD_EXIT of the tid, pd_stitch__finish() and a full pending
 *    budget (see pd_stitch__set_max_pending()) release the samples still
 *    held, unmatched.
 *
 * Output keeps the input order: the records behind a held sample wait
 * for it.  Input must be in time order (sort each round first).
 * CALLCHAIN_DEFERRED records are not written; everything else is,
 * PERF_RECORD_LOST included.  The deferral is recognized by the
 * PERF_CONTEXT_USER_DEFERRED marker, whatever the attr says.
 *
 * Memory: the held samples and the records queued behind the oldest of
 * them, and a hash of the tids with held samples.  It does not grow with
 * the length of the stream as long as the records arrive.
 *
 * The stitcher writes records only.  The caller adds the attrs to the
 * writer, with pd_attr__clear_defer() applied, and to the stitcher.
 */
#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

#include "perf-data.h"

struct pd_stitch_stats {
	__u64 samples;		/* PERF_RECORD_SAMPLE seen */
	__u64 deferred;		/* of those, with a USER_DEFERRED, cookie pair */
	__u64 stitched;		/* deferred samples that got their user chain */
	__u64 unmatched;	/* deferred samples written with the kernel part only */
	__u64 records;		/* CALLCHAIN_DEFERRED records seen */
	__u64 lost_records;	/* sum of 'lost' of the PERF_RECORD_LOST seen */
	__u64 orphan_records;	/* CALLCHAIN_DEFERRED records that matched no sample */
	__u64 evicted;		/* of unmatched: released early, pending budget full */
	__u64 truncated;	/* stitched samples cut to fit 64 KiB */
	__u64 max_pending;	/* most bytes ever held (samples + queued records) */
};

struct pd_stitch;

/* NULL + errno (ENOMEM).  out receives the stitched records. */
struct pd_stitch *pd_stitch__new(struct pd_writer *out);
/* The attrs of the input, for the id -> sample_type map.  0 or -errno. */
int pd_stitch__add_attr(struct pd_stitch *s, const struct perf_event_attr *attr,
			const __u64 *ids, __u32 nr_ids);
/*
 * Bytes held at most (default 256 MiB); past that the oldest held
 * samples are released unmatched (counted in 'evicted').
 */
void pd_stitch__set_max_pending(struct pd_stitch *s, size_t bytes);
/*
 * One record, in time order.  0, or -errno: -EINVAL for a record that
 * does not parse (pd_error() says why), or the writer's error.
 */
int pd_stitch__event(struct pd_stitch *s, const void *event, size_t size);
/* Release everything held (unmatched) and write it.  0 or -errno. */
int pd_stitch__finish(struct pd_stitch *s, struct pd_stitch_stats *st);
/* The counters so far. */
void pd_stitch__stats(const struct pd_stitch *s, struct pd_stitch_stats *st);
/* Free (does not close the writer).  NULL is fine. */
void pd_stitch__delete(struct pd_stitch *s);

/*
 * A whole file, as 'perf-defer stitch' does it: the records of r, sorted
 * round by round as perf's ordered events do (a file without
 * FINISHED_ROUND whole), stitched into w with r's attrs (defer bits
 * cleared) and the features that describe the machine and the recording;
 * record types that perf 6.1 does not know are left out.  Closes w
 * (removed on error).  Warnings go to stderr unless quiet.  0, or -errno
 * with pd_error().
 */
int stitch__reader(struct pd_reader *r, struct pd_writer *w, struct pd_stitch_stats *st,
		   bool quiet);

#endif /* PERF_DEFER_STITCH_H */
