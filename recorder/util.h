/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_UTIL_H
#define PERF_DEFER_UTIL_H

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define ALIGN_UP(x, a)	(((x) + (a) - 1) / (a) * (a))

/* Exit codes of perf-defer and of every subcommand. */
enum {
	EXIT_OK		= 0,
	EXIT_FAIL	= 1,
	EXIT_USAGE	= 2,
};

/* Name of the running subcommand, for messages; NULL before dispatch. */
extern const char *pr_cmd;

/*
 * "perf-defer: <cmd>: <message>\n" on stderr, after flushing stdout so
 * that both keep their order when they go to the same file.  pr_warn()
 * says "warning: " before the message; every warning goes through it.
 */
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The last error message of the library, for people. */
const char *error__msg(void);
/* Set it (for the users of the library: stitch, the subcommands). */
void error__set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PERF_DEFER_UTIL_H */
