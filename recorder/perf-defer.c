// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-defer - deferred user callchains for kernels older than 6.19
 *
 * Dispatches to one builtin per subcommand, as perf.c does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/perf_defer.h>

#include "builtin.h"
#include "util.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd_struct commands[] = {
	{ "record", cmd_record, "Record samples with deferred user callchains" },
	{ "perf",   cmd_perf,   "Run the installed 'perf record', its fp callchains deferred" },
	{ "status", cmd_status, "Show which deferred-callchain path this kernel offers" },
	{ "stitch", cmd_stitch, "Merge deferred user callchains into their samples, for any perf" },
	{ "dump",   cmd_dump,   "Print every record of a perf.data file, as 'perf report -D' does" },
};

static void usage(FILE *f)
{
	fputs("usage: perf-defer [--version] [--help] <command> [<args>]\n\n"
	      "commands:\n", f);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].help);
	fputs("\nSee 'perf-defer <command> --help' for the options of a command.\n", f);
}

static int run_command(int argc, char **argv)
{
	static char prefix[64];
	const char *name = argv[0];

	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(name, "--version")) {
		printf("perf-defer version %s (ABI %d.%d)\n", PERF_DEFER_VERSION,
		       PERF_DEFER_ABI_MAJOR, PERF_DEFER_ABI_MINOR);
		return EXIT_OK;
	}
	if (name[0] == '-') {
		pr_err("unknown option '%s'. See 'perf-defer --help'.", name);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		pr_cmd = commands[i].name;
		snprintf(prefix, sizeof(prefix), "perf-defer: %s", pr_cmd);
		argv[0] = prefix;
		return commands[i].fn(argc, argv);
	}
	pr_err("'%s' is not a perf-defer command. See 'perf-defer --help'.", name);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	ret = run_command(argc - 1, argv + 1);
	/* A full disk must not pass for success. */
	if (fflush(stdout) || ferror(stdout)) {
		pr_err("cannot write to standard output: %s", strerror(errno));
		return EXIT_FAIL;
	}
	return ret;
}
