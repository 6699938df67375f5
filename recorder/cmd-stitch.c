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
 * sorted whole.  stitch__reader() in stitch.c does it, with ordered.c.
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

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
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
	struct stitch_stats st = { 0 };
	struct perf_data_reader *r;
	struct perf_data_writer *w;
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
	r = perf_data_reader__open(input);
	if (!r) {
		pr_err("%s", error__msg());
		return EXIT_FAIL;
	}
	w = perf_data_writer__open(output);
	if (!w) {
		pr_err("%s", error__msg());
		perf_data_reader__close(r);
		return EXIT_FAIL;
	}
	err = stitch__reader(r, w, &st, quiet);
	perf_data_reader__close(r);
	if (err) {
		pr_err("%s", error__msg());
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
		pr_warn("%" PRIu64 " of %" PRIu64 " deferred samples got no user callchain and keep their kernel part",
			(uint64_t)st.unmatched, (uint64_t)st.deferred);
	return EXIT_OK;
}
