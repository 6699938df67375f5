// SPDX-License-Identifier: GPL-2.0-only
/*
 * A file, stitched: its records to the stitcher in time order, with the
 * records from elsewhere (perf-defer perf record's) merged in.  See
 * stitch.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ordered.h"
#include "preload/preload.h"
#include "sample.h"
#include "stitch.h"
#include "util.h"

/*
 * The records of a file go to the stitcher in time order: perf writes each
 * CPU's buffer as it comes, unsorted across CPUs, with a FINISHED_ROUND
 * after each pass over the buffers, so they are sorted the way perf's
 * ordered events do (ordered.c) before they reach it.  A file without
 * FINISHED_ROUND is sorted whole.
 */

/*
 * Feature sections are copied to the output as they are, those this
 * recorder does not know included, but for what stitching changes:
 * EVENT_DESC is written from the stitched attrs, AUXTRACE indexes
 * PERF_RECORD_AUXTRACE records by file offset (they are dropped),
 * DIR_FORMAT and COMPRESSED describe a layout the output does not have.
 */
static bool feature_copied(unsigned int feat)
{
	return feat != PD_FEAT_EVENT_DESC && feat != PD_FEAT_AUXTRACE &&
	       feat != PD_FEAT_DIR_FORMAT && feat != PD_FEAT_COMPRESSED;
}

struct stitch_reader {
	struct stitch	*st;
	struct ordered	*oq;
	__u64			dropped[256];	/* records of each type left out */
	__u64			max_time;	/* the newest record queued */
	/* the first of the file's records to come after its round (-a: clocks per CPU) */
	struct {
		unsigned int	type;
		int		cpu;		/* -1: the record has none */
		__u64		behind;		/* ns before what was written */
	}			late;
	/* the records from elsewhere, in time order, and how many are queued */
	struct extra_rec	*x;
	size_t			nx, xi;
};

/* one of the records from elsewhere (stitch__reader_extra()) */
struct extra_rec {
	__u64				time;
	size_t				seq;
	const struct perf_event_header	*ev;
};

static int extra_rec__cmp(const void *a, const void *b)
{
	const struct extra_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The time of a kernel record, or -1 (and 0) when it has none; and its
 * CPU, or -1.
 */
static int stitch_reader__time(const struct perf_data_reader *r,
			       const struct perf_event_header *ev, __u64 *time, int *cpu)
{
	const struct evsel *a = evlist__find(perf_data_reader__evlist(r), ev);
	struct perf_sample s;

	if (!a || perf_sample__parse(&a->attr, ev, &s))
		return -EINVAL;
	*time = s.time;
	if (cpu)
		*cpu = a->attr.sample_type & PERF_SAMPLE_CPU &&
		       (ev->type == PERF_RECORD_SAMPLE || a->attr.sample_id_all) ? (int)s.cpu : -1;
	return 0;
}

/*
 * Queue the records from elsewhere up to time until (all of them for -1).
 * Queued early: the module dates a deferred callchain after the newest
 * sample of its kernel entry, so one of the same time as a sample is
 * from an earlier entry (see record__read_ring()).
 */
static int stitch_reader__push_extra(struct stitch_reader *sr, __u64 until)
{
	for (; sr->xi < sr->nx && sr->x[sr->xi].time <= until; sr->xi++) {
		const struct perf_event_header *ev = sr->x[sr->xi].ev;
		int err = ordered__push(sr->oq, sr->x[sr->xi].time, ev, ev->size,
					ORDERED_NOCOPY | ORDERED_EARLY);

		if (err) {
			error__set("%s", strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * The records of buf (len bytes, back to back, 8-byte aligned) into
 * sr->x, in time order: CALLCHAIN_DEFERRED and LOST records of the
 * module's rings, with the sample_id of one of r's events.
 */
static int stitch_reader__index_extra(struct stitch_reader *sr, const struct perf_data_reader *r,
				      const void *buf, size_t len)
{
	size_t off, n = 0, cap = 0;

	for (off = 0; off < len; ) {
		const struct perf_event_header *ev = (const void *)((const char *)buf + off);
		struct extra_rec *x;
		__u64 time;

		if (len - off < sizeof(*ev) || ev->size < sizeof(*ev) || ev->size % 8 ||
		    ev->size > len - off) {
			error__set("deferred records: a record at %#zx does not parse", off);
			return -EINVAL;
		}
		if (stitch_reader__time(r, ev, &time, NULL) || !time || time == (__u64)-1) {
			error__set("deferred records: the record at %#zx (type %u) has no time of an event of %s",
				   off, ev->type, perf_data_reader__name(r));
			return -EINVAL;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			x = realloc(sr->x, cap * sizeof(*x));
			if (!x) {
				error__set("%s", strerror(ENOMEM));
				return -ENOMEM;
			}
			sr->x = x;
		}
		sr->x[n] = (struct extra_rec){ .time = time, .seq = n, .ev = ev };
		n++;
		off += ev->size;
	}
	if (n)
		qsort(sr->x, n, sizeof(*sr->x), extra_rec__cmp);
	sr->nx = n;
	return 0;
}

/* One record of the file: dropped, written at once, or queued for its round. */
static int stitch_reader__event(struct stitch_reader *sr, const struct perf_data_reader *r,
				const struct perf_event_header *ev, bool stable)
{
	__u64 time, nr_late;
	int err, cpu;

	if (ev->type == PD_RECORD_COMPRESSED || ev->type == PD_RECORD_COMPRESSED2) {
		error__set("compressed records (perf record -z) are not supported: decompress first with 'perf inject -i IN -o OUT'");
		return -EINVAL;
	}
	if (ev->type == PD_RECORD_FINISHED_ROUND) {
		/*
		 * perf's OE_FLUSH__ROUND: what came before the previous round
		 * is complete.  The records from elsewhere up to the newest
		 * one of the file so far join this round.
		 */
		err = stitch_reader__push_extra(sr, sr->max_time) ?: ordered__round(sr->oq);
		return err ? err : stitch__event(sr->st, ev, ev->size);
	}
	if (ev->type == PERF_DEFER_RECORD_USER_DUMP)
		goto queue;	/* the stitcher takes it, in time order */
	if ((ev->type > PERF_DEFER_RECORD_CALLCHAIN_DEFERRED && ev->type < PD_RECORD_USER_TYPE_START) ||
	    ev->type >= PD_RECORD_HEADER_MAX_6_1 || ev->type == PD_RECORD_AUXTRACE ||
	    ev->type == PD_RECORD_AUXTRACE_INFO || ev->type == PD_RECORD_AUXTRACE_ERROR ||
	    ev->type == PD_RECORD_HEADER_TRACING_DATA) {
		/* unknown to perf 6.1, or with a payload we do not carry */
		sr->dropped[ev->type & 0xff]++;
		return 0;
	}
	if (ev->type >= PD_RECORD_USER_TYPE_START)
		return stitch__event(sr->st, ev, ev->size);	/* perf: right away */
queue:
	if (stitch_reader__time(r, ev, &time, &cpu))
		return -EINVAL;
	/* perf delivers records without a time right away */
	if (!time || time == (__u64)-1)
		return stitch__event(sr->st, ev, ev->size);
	nr_late = ordered__out_of_order(sr->oq);
	/* the reader's pointer lasts unless it had to align a copy */
	err = ordered__push(sr->oq, time, ev, ev->size, stable ? ORDERED_NOCOPY : 0);
	if (!err && !nr_late && ordered__out_of_order(sr->oq)) {
		sr->late.type = ev->type;
		sr->late.cpu = cpu;
		sr->late.behind = ordered__written_until(sr->oq) - time;
	}
	if (time > sr->max_time)
		sr->max_time = time;
	if (err)
		error__set("%s", strerror(-err));
	return err;
}

static int stitch_reader__deliver(void *arg, const void *event, size_t size)
{
	struct stitch_reader *sr = arg;

	return stitch__event(sr->st, event, size);
}

int stitch__reader(struct perf_data_reader *r, struct perf_data_writer *w, struct stitch_stats *st,
		   bool quiet)
{
	return stitch__reader_extra(r, NULL, 0, w, st, quiet ? STITCH_QUIET : 0);
}

int stitch__reader_extra(struct perf_data_reader *r, const void *extra, size_t extra_len,
			 struct perf_data_writer *w, struct stitch_stats *st, unsigned int flags)
{
	bool quiet = flags & STITCH_QUIET, keep = flags & STITCH_KEEP_DEFERRED;
	struct feat_raw raw[PD_FEAT_BITS];
	struct perf_data_features feat = { .no_host = true, .raw = raw };
	struct stitch_reader sr = { .st = stitch__new(w) };
	const struct perf_event_header *ev;
	__u64 out_of_order;
	int err = 0, ret;

	sr.oq = ordered__new(stitch_reader__deliver, &sr);
	if (!sr.st || !sr.oq) {
		stitch__delete(sr.st);
		ordered__delete(sr.oq);
		perf_data_writer__abort(w);
		error__set("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (keep)
		stitch__keep_deferred(sr.st);
	for (unsigned int i = 0; i < perf_data_reader__nr_attrs(r) && !err; i++) {
		const struct evsel *a = perf_data_reader__attr(r, i);
		struct perf_event_attr attr = a->attr;

		/* the deferred form: the events the module deferred say so, as natively */
		if (keep)
			attr__set_defer(&attr, preload_wants(&attr), false);
		else
			attr__clear_defer(&attr);
		if (a->cut && !quiet)
			pr_warn("attr %u (%s): fields newer than this perf-defer were dropped",
				i, a->name ? a->name : "unnamed");
		err = stitch__add_attr(sr.st, &attr, a->ids, a->nr_ids);
		/* dwarf,defer: registers and stack in every stitched sample */
		if (!keep)
			attr__stitch_user_dump(&attr);
		if (!err)
			err = perf_data_writer__add_attr(w, &attr, a->ids, a->nr_ids, a->name);
	}

	if (!err && extra_len)
		err = stitch_reader__index_extra(&sr, r, extra, extra_len);
	while (!err && (ret = perf_data_reader__next(r, &ev)) > 0) {
		err = stitch_reader__event(&sr, r, ev, perf_data_reader__event_stable(r, ev));
		if (err == -EINVAL) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%s", error__msg());
			error__set("%s: record at %#" PRIx64 ": %s", perf_data_reader__name(r),
				   (uint64_t)perf_data_reader__offset(r), msg);
		}
	}
	if (!err && ret < 0)
		err = ret;
	if (!err)
		err = stitch_reader__push_extra(&sr, (__u64)-1) ?: ordered__flush(sr.oq);
	if (!err)
		err = stitch__finish(sr.st, st);
	free(sr.x);
	out_of_order = ordered__out_of_order(sr.oq);
	ordered__delete(sr.oq);
	stitch__delete(sr.st);
	if (err) {
		perf_data_writer__abort(w);
		return err;
	}

	for (unsigned int i = 1; i < PD_FEAT_BITS; i++) {
		struct feat_raw *f = &raw[feat.nr_raw];

		if (feature_copied(i) && perf_data_reader__feat(r, i, &f->data, &f->size)) {
			f->feat = i;
			feat.nr_raw++;
		}
	}
	err = perf_data_writer__close(w, &feat);
	if (quiet)
		return err;
	for (unsigned int t = 0; t < 256; t++)
		if (sr.dropped[t])
			pr_warn("dropped %" PRIu64 " PERF_RECORD_%s (type %u) records that perf 6.1 cannot read",
				(uint64_t)sr.dropped[t], perf_event__name(t), t);
	if (out_of_order) {
		char cpu[32] = "";

		if (sr.late.cpu >= 0)
			snprintf(cpu, sizeof(cpu), " of CPU %d", sr.late.cpu);
		pr_warn("%" PRIu64 " records came after a round that was already written; the output is not fully in time order (the first: a PERF_RECORD_%s%s, %" PRIu64 " ns older than the round)",
			(uint64_t)out_of_order, perf_event__name(sr.late.type), cpu,
			(uint64_t)sr.late.behind);
	}
	return err;
}
