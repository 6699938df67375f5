// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-defer dump - print every record of a perf.data file
 *
 * The options; dump.c prints.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "builtin.h"
#include "dump.h"
#include "perf-data.h"
#include "util.h"

static const char dump_usage[] =
	"usage: perf-defer dump [-i FILE] [--stats] [--by-mode]\n"
	"\n"
	"Print every record of a perf.data file in the manner of 'perf report -D',\n"
	"PERF_RECORD_CALLCHAIN_DEFERRED and perf-defer's USER_DUMP included, then the number\n"
	"of records of each type.\n"
	"\n"
	"    -i, --input FILE    input file name (default: perf.data)\n"
	"        --stats         only the number of records of each type\n"
	"        --by-mode       and each event's samples by where they were taken\n"
	"                        (user, kernel, ...: the CPU mode of the sample)\n"
	"    -h, --help          show this help\n";

int cmd_dump(int argc, char **argv)
{
	static const struct option options[] = {
		{ "input",	required_argument,	NULL, 'i' },
		{ "stats",	no_argument,		NULL, 's' },
		{ "by-mode",	no_argument,		NULL, 'm' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	const char *input = "perf.data";
	unsigned int flags = 0;
	struct perf_data_reader *r;
	int c, ret;

	while ((c = getopt_long(argc, argv, "+i:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 's':
			flags |= DUMP_STATS_ONLY;
			break;
		case 'm':
			flags |= DUMP_BY_MODE;
			break;
		case 'h':
			fputs(dump_usage, stdout);
			return EXIT_OK;
		default:	/* getopt has said what is wrong */
			fputs(dump_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'", argv[optind]);
		fputs(dump_usage, stderr);
		return EXIT_USAGE;
	}
	r = perf_data_reader__open(input);
	if (!r) {
		pr_err("%s", error__msg());
		return EXIT_FAIL;
	}
	ret = dump__reader(r, stdout, flags);
	if (ret)
		pr_err("%s", error__msg());
	perf_data_reader__close(r);
	return ret ? EXIT_FAIL : EXIT_OK;
}
