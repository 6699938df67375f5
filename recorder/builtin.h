/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_BUILTIN_H
#define PERF_DEFER_BUILTIN_H

#include <stdbool.h>
#include <stdio.h>

/*
 * One function per subcommand, one file each (cmd-<name>.c).  argv[0] is
 * "perf-defer: <name>", the prefix getopt puts on its own messages; the
 * return value is the exit code.
 */
int cmd_record(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stitch(int argc, char **argv);

/* The work of 'dump' on an open file, for tests and fuzzing. */
struct pd_reader;

/* Print every record to out.  0, or -errno with pd_error(). */
int dump__reader(struct pd_reader *r, FILE *out, bool stats_only);

#endif /* PERF_DEFER_BUILTIN_H */
