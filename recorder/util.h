/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_UTIL_H
#define PERF_DEFER_UTIL_H

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Exit codes of perf-defer and of every subcommand. */
enum {
	EXIT_OK		= 0,
	EXIT_FAIL	= 1,
	EXIT_USAGE	= 2,
};

/* Name of the running subcommand, for messages; NULL before dispatch. */
extern const char *pd_cmd;

/*
 * "perf-defer: <cmd>: <message>\n" on stderr, after flushing stdout so
 * that both keep their order when they go to the same file.
 */
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PERF_DEFER_UTIL_H */
