// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-defer stitch - turn a deferred-form perf.data into a stitched one
 *
 * The input is a file of perf-defer record --keep-deferred (fp,defer or
 * dwarf,defer), or one that perf >= 6.19 wrote with --call-graph fp,defer
 * on a native kernel.  perf
 * writes each CPU's buffer as it comes, unsorted across CPUs, and a
 * FINISHED_ROUND after each pass over the buffers; the records are sorted
 * the way perf's ordered_events does (at each FINISHED_ROUND, the records
 * up to the newest time of the previous round go out, in time order)
 * before they reach the stitcher.  A file without FINISHED_ROUND is
 * sorted whole.
 *
 * The output is what perf 6.1 reads: attrs without defer_callchain and
 * defer_output, no CALLCHAIN_DEFERRED or USER_DUMP records (a dwarf,defer
 * file's samples get the registers and stack of their dump, as perf
 * record --call-graph dwarf writes them), no record types it does not
 * know, and the input's feature sections that describe the machine
 * and the recording.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "perf-data.h"
#include "sample.h"
#include "stitch.h"
#include "util.h"

static const char stitch_usage[] =
	"usage: perf-defer stitch [-i IN] -o OUT [--stats] [-q]\n"
	"\n"
	"Turn a deferred-form perf.data (perf-defer record --keep-deferred, or perf >= 6.19\n"
	"record --call-graph fp,defer) into a stitched one that any perf reads: each sample\n"
	"gets its deferred user callchain as an ordinary PERF_CONTEXT_USER part, or, from\n"
	"a dwarf,defer recording, the user registers and stack of its kernel entry's dump\n"
	"(as perf record --call-graph dwarf).  Samples whose user part never came keep\n"
	"their kernel part.\n"
	"\n"
	"    -i, --input FILE    input file name (default: perf.data)\n"
	"    -o, --output FILE   output file name\n"
	"        --stats         print the counters (samples, deferred, stitched, ...)\n"
	"    -q, --quiet         no warnings\n"
	"    -h, --help          show this help\n";

/* Feature sections copied to the output as they are. */
static const unsigned int copied_features[] = {
	PD_FEAT_BUILD_ID, PD_FEAT_HOSTNAME, PD_FEAT_OSRELEASE, PD_FEAT_VERSION,
	PD_FEAT_ARCH, PD_FEAT_NRCPUS, PD_FEAT_CPUDESC, PD_FEAT_CPUID,
	PD_FEAT_TOTAL_MEM, PD_FEAT_CMDLINE, PD_FEAT_CPU_TOPOLOGY,
	PD_FEAT_NUMA_TOPOLOGY, PD_FEAT_BRANCH_STACK, PD_FEAT_PMU_MAPPINGS,
	PD_FEAT_GROUP_DESC, PD_FEAT_CACHE, PD_FEAT_SAMPLE_TIME,
	PD_FEAT_MEM_TOPOLOGY, PD_FEAT_CLOCKID, PD_FEAT_CLOCK_DATA,
};

struct qent {
	__u64 time, seq;
	const struct perf_event_header *ev;
	void *copy;		/* the record, when the reader's pointer would not last */
};

struct sorter {
	struct pd_stitch *st;
	struct qent *q;
	size_t nr, alloc;
	__u64 seq, max_time, next_flush, last_flush;
	__u64 out_of_order, dropped[256];
	bool have_round;
	bool unsorted;		/* a record was queued behind a newer one */
};

static int qent__cmp(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort the queue; stitch the records up to limit, keep the others. */
static int sorter__flush(struct sorter *so, __u64 limit)
{
	size_t i, k = 0;
	int err = 0;

	/* records mostly come in order: then the queue is sorted already */
	if (so->unsorted)
		qsort(so->q, so->nr, sizeof(*so->q), qent__cmp);
	so->unsorted = false;
	for (i = 0; i < so->nr && so->q[i].time <= limit; i++) {
		if (!err)
			err = pd_stitch__event(so->st, so->q[i].ev, so->q[i].ev->size);
		free(so->q[i].copy);
	}
	for (; i < so->nr; i++)
		so->q[k++] = so->q[i];
	so->nr = k;
	so->last_flush = limit;
	return err;
}

static int sorter__queue(struct sorter *so, const struct perf_event_header *ev, __u64 time,
			 bool stable)
{
	struct qent *e;

	if (so->nr == so->alloc) {
		size_t n = so->alloc ? so->alloc * 2 : 4096;
		struct qent *q = realloc(so->q, n * sizeof(*q));

		if (!q)
			return -ENOMEM;
		so->q = q;
		so->alloc = n;
	}
	if (so->nr && time < so->q[so->nr - 1].time)
		so->unsorted = true;
	e = &so->q[so->nr];
	e->time = time;
	e->seq = so->seq++;
	e->ev = ev;
	e->copy = NULL;
	if (!stable) {
		e->copy = malloc(ev->size);
		if (!e->copy)
			return -ENOMEM;
		memcpy(e->copy, ev, ev->size);
		e->ev = e->copy;
	}
	so->nr++;
	if (time < so->last_flush)
		so->out_of_order++;
	if (time > so->max_time)
		so->max_time = time;
	return 0;
}

/* The time of a kernel record, or -1 (and 0) when it has none. */
static int record__time(const struct pd_reader *r, const struct perf_event_header *ev, __u64 *time)
{
	const struct pd_attr *a = pd_evlist__find(pd_reader__evlist(r), ev);
	struct pd_sample s;

	if (!a || pd_sample__parse(&a->attr, ev, &s))
		return -EINVAL;
	*time = s.time;
	return 0;
}

static int sorter__event(struct sorter *so, const struct pd_reader *r,
			 const struct perf_event_header *ev, bool stable)
{
	__u64 time;
	int err;

	if (ev->type == PD_RECORD_COMPRESSED || ev->type == PD_RECORD_COMPRESSED2) {
		pd_set_error("compressed records (perf record -z) are not supported: decompress first with 'perf inject -i IN -o OUT'");
		return -EINVAL;
	}
	if (ev->type == PD_RECORD_FINISHED_ROUND) {
		/* perf's OE_FLUSH__ROUND: what came before the previous round is complete */
		so->have_round = true;
		err = sorter__flush(so, so->next_flush);
		so->next_flush = so->max_time;
		return err ? err : pd_stitch__event(so->st, ev, ev->size);
	}
	if (ev->type == PERF_DEFER_RECORD_USER_DUMP)
		goto queue;	/* the stitcher takes it, in time order */
	if ((ev->type > PERF_DEFER_RECORD_CALLCHAIN_DEFERRED && ev->type < PD_RECORD_USER_TYPE_START) ||
	    ev->type >= PD_RECORD_HEADER_MAX_6_1 || ev->type == PD_RECORD_AUXTRACE ||
	    ev->type == PD_RECORD_AUXTRACE_INFO || ev->type == PD_RECORD_AUXTRACE_ERROR ||
	    ev->type == PD_RECORD_HEADER_TRACING_DATA) {
		/* unknown to perf 6.1, or with a payload we do not carry */
		so->dropped[ev->type & 0xff]++;
		return 0;
	}
	if (ev->type >= PD_RECORD_USER_TYPE_START)
		return pd_stitch__event(so->st, ev, ev->size);	/* perf: right away */
queue:
	if (record__time(r, ev, &time))
		return -EINVAL;
	/* perf delivers records without a time right away */
	if (!time || time == (__u64)-1)
		return pd_stitch__event(so->st, ev, ev->size);
	err = sorter__queue(so, ev, time, stable);
	if (err)
		pd_set_error("%s", strerror(-err));
	return err;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * Stitch what r holds into w: the attrs (defer bits cleared), the records
 * and the features.  Closes w.  0, or -errno with pd_error().
 */
int stitch__reader(struct pd_reader *r, struct pd_writer *w, struct pd_stitch_stats *st,
		   bool quiet)
{
	struct pd_feat_raw raw[sizeof(copied_features) / sizeof(copied_features[0])];
	struct pd_features feat = { .no_host = true, .raw = raw };
	const struct perf_event_header *ev;
	struct sorter so = { 0 };
	int err = 0, ret;

	so.st = pd_stitch__new(w);
	if (!so.st) {
		pd_writer__abort(w);
		pd_set_error("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < pd_reader__nr_attrs(r) && !err; i++) {
		const struct pd_attr *a = pd_reader__attr(r, i);
		struct perf_event_attr attr = a->attr;

		pd_attr__clear_defer(&attr);
		if (a->cut && !quiet)
			fprintf(stderr, "perf-defer: %s: warning: attr %u (%s): fields newer than this perf-defer were dropped\n",
				pd_cmd ? pd_cmd : "stitch", i, a->name ? a->name : "unnamed");
		err = pd_stitch__add_attr(so.st, &attr, a->ids, a->nr_ids);
		/* dwarf,defer: registers and stack in every stitched sample */
		pd_attr__stitch_user_dump(&attr);
		if (!err)
			err = pd_writer__add_attr(w, &attr, a->ids, a->nr_ids, a->name);
	}

	while (!err && (ret = pd_reader__next(r, &ev)) > 0) {
		/* the reader's pointer lasts unless it had to align a copy */
		bool stable = pd_reader__event_stable(r, ev);

		err = sorter__event(&so, r, ev, stable);
		if (err == -EINVAL) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%s", pd_error());
			pd_set_error("%s: record at %#" PRIx64 ": %s", pd_reader__name(r),
				     (uint64_t)pd_reader__offset(r), msg);
		}
	}
	if (!err && ret < 0)
		err = ret;
	if (!err)
		err = sorter__flush(&so, (__u64)-1);
	if (!err)
		err = pd_stitch__finish(so.st, st);
	for (size_t i = 0; i < so.nr; i++)
		free(so.q[i].copy);
	free(so.q);
	pd_stitch__delete(so.st);
	if (err) {
		pd_writer__abort(w);
		return err;
	}

	for (size_t i = 0; i < sizeof(copied_features) / sizeof(copied_features[0]); i++) {
		struct pd_feat_raw *f = &raw[feat.nr_raw];

		if (pd_reader__feat(r, copied_features[i], &f->data, &f->size)) {
			f->feat = copied_features[i];
			feat.nr_raw++;
		}
	}
	err = pd_writer__close(w, &feat);
	if (quiet)
		return err;
	for (unsigned int t = 0; t < 256; t++)
		if (so.dropped[t])
			fprintf(stderr, "perf-defer: %s: warning: dropped %" PRIu64 " PERF_RECORD_%s (type %u) records that perf 6.1 cannot read\n",
				pd_cmd ? pd_cmd : "stitch", (uint64_t)so.dropped[t],
				pd_event__name(t), t);
	if (so.out_of_order)
		fprintf(stderr, "perf-defer: %s: warning: %" PRIu64 " records came after a round that was already written; the output is not fully in time order\n",
			pd_cmd ? pd_cmd : "stitch", (uint64_t)so.out_of_order);
	return err;
}

int cmd_stitch(int argc, char **argv)
{
	enum { OPT_STATS = 256 };
	static const struct option options[] = {
		{ "input",	required_argument,	NULL, 'i' },
		{ "output",	required_argument,	NULL, 'o' },
		{ "stats",	no_argument,		NULL, OPT_STATS },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	const char *input = "perf.data", *output = NULL;
	bool stats = false, quiet = false;
	struct pd_stitch_stats st = { 0 };
	struct pd_reader *r;
	struct pd_writer *w;
	int c, err;

	while ((c = getopt_long(argc, argv, "+i:o:qh", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_STATS:
			stats = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(stitch_usage, stdout);
			return EXIT_OK;
		default:	/* getopt has said what is wrong */
			fputs(stitch_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'", argv[optind]);
		fputs(stitch_usage, stderr);
		return EXIT_USAGE;
	}
	if (!output || !*output) {
		pr_err("no output file: give one with -o");
		fputs(stitch_usage, stderr);
		return EXIT_USAGE;
	}
	if (same_file(input, output)) {
		pr_err("%s and %s are the same file", input, output);
		return EXIT_FAIL;
	}
	r = pd_reader__open(input);
	if (!r) {
		pr_err("%s", pd_error());
		return EXIT_FAIL;
	}
	w = pd_writer__open(output);
	if (!w) {
		pr_err("%s", pd_error());
		pd_reader__close(r);
		return EXIT_FAIL;
	}
	err = stitch__reader(r, w, &st, quiet);
	pd_reader__close(r);
	if (err) {
		pr_err("%s", pd_error());
		return EXIT_FAIL;
	}
	if (stats)
		printf("samples: %" PRIu64 "\n"
		       "deferred: %" PRIu64 "\n"
		       "stitched: %" PRIu64 "\n"
		       "unmatched: %" PRIu64 "\n"
		       "deferred-records: %" PRIu64 "\n"
		       "orphan-records: %" PRIu64 "\n"
		       "lost: %" PRIu64 "\n",
		       (uint64_t)st.samples, (uint64_t)st.deferred, (uint64_t)st.stitched,
		       (uint64_t)st.unmatched, (uint64_t)st.records,
		       (uint64_t)st.orphan_records, (uint64_t)st.lost_records);
	if (st.unmatched && !quiet)
		fprintf(stderr, "perf-defer: stitch: warning: %" PRIu64 " of %" PRIu64 " deferred samples got no user callchain and keep their kernel part\n",
			(uint64_t)st.unmatched, (uint64_t)st.deferred);
	return EXIT_OK;
}
