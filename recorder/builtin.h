/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_BUILTIN_H
#define PERF_DEFER_BUILTIN_H

/*
 * One function per subcommand, one file each (cmd-<name>.c).  argv[0] is
 * "perf-defer: <name>", the prefix getopt puts on its own messages; the
 * return value is the exit code.
 */
int cmd_record(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stitch(int argc, char **argv);
int cmd_perf(int argc, char **argv);

#endif /* PERF_DEFER_BUILTIN_H */
