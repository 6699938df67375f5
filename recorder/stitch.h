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
 *    unmatched: their pair is removed, the kernel part stays.  But those
 *    not older than the record's newest sample, of later kernel entries
 *    met first because the clock stood still, stay held for their own
 *    record (natively they would have come after this one);
 *  - PERF_RECORD_EXIT of the tid, stitch__finish() and a full pending
 *    budget (see stitch__set_max_pending()) release the samples still
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
 * writer, with attr__clear_defer() applied, and to the stitcher.
 */
#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

#include "perf-data.h"

struct stitch_stats {
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

struct stitch;

/* NULL + errno (ENOMEM).  out receives the stitched records. */
struct stitch *stitch__new(struct perf_data_writer *out);
/* The attrs of the input, for the id -> sample_type map.  0 or -errno. */
int stitch__add_attr(struct stitch *s, const struct perf_event_attr *attr,
		     const __u64 *ids, __u32 nr_ids);
/*
 * Bytes held at most (default 256 MiB); past that the oldest held
 * samples are released unmatched (counted in 'evicted').
 */
void stitch__set_max_pending(struct stitch *s, size_t bytes);
/*
 * One record, in time order.  0, or -errno: -EINVAL for a record that
 * does not parse (error__msg() says why), or the writer's error.
 */
int stitch__event(struct stitch *s, const void *event, size_t size);
/* Release everything held (unmatched) and write it.  0 or -errno. */
int stitch__finish(struct stitch *s, struct stitch_stats *st);
/* The counters so far. */
void stitch__stats(const struct stitch *s, struct stitch_stats *st);
/*
 * The deferred form: samples and records written as they are, counted,
 * each record after its held samples and before those of later entries
 * (on their time, where the clock stood still), so that perf >= 6.19
 * merges them as the stitcher does.
 */
void stitch__keep_deferred(struct stitch *s);
/* Free (does not close the writer).  NULL is fine. */
void stitch__delete(struct stitch *s);

/*
 * A whole file, as 'perf-defer stitch' does it: the records of r, sorted
 * round by round as perf's ordered events do (a file without
 * FINISHED_ROUND whole), stitched into w with r's attrs (defer bits
 * cleared) and the features that describe the machine and the recording;
 * record types that perf 6.1 does not know are left out.  Closes w
 * (removed on error).  Warnings go to stderr unless quiet.  0, or -errno
 * with error__msg().
 */
int stitch__reader(struct perf_data_reader *r, struct perf_data_writer *w, struct stitch_stats *st,
		   bool quiet);
/*
 * The same, with the records of extra (extra_len bytes, back to back,
 * 8-byte aligned; they stay valid until it returns) merged into r's in
 * time order, each into the round of its time: the CALLCHAIN_DEFERRED
 * records of the module's rings for a file that perf record wrote
 * ('perf-defer perf record').  Each must carry the time of an event of r
 * in its sample_id.
 */
int stitch__reader_extra(struct perf_data_reader *r, const void *extra, size_t extra_len,
			 struct perf_data_writer *w, struct stitch_stats *st, unsigned int flags);
/* flags of stitch__reader_extra() */
#define STITCH_QUIET		(1U << 0)	/* no warnings */
/*
 * Merge only: the upstream deferred form, the records kept and the events
 * that the module defers (preload_wants()) marked defer_callchain; the
 * counters say samples, records and lost records.
 */
#define STITCH_KEEP_DEFERRED	(1U << 1)

#endif /* PERF_DEFER_STITCH_H */
