// SPDX-License-Identifier: GPL-2.0-only
/* Messages for people, and the library's last error.  See util.h. */
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

const char *pr_cmd;

static void pr_vmsg(const char *level, const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("perf-defer: ", stderr);
	if (pr_cmd)
		fprintf(stderr, "%s: ", pr_cmd);
	fputs(level, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pr_vmsg("", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pr_vmsg("warning: ", fmt, ap);
	va_end(ap);
}

static char error_buf[512];

const char *error__msg(void)
{
	return error_buf[0] ? error_buf : "unknown error";
}

void error__set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(error_buf, sizeof(error_buf), fmt, ap);
	va_end(ap);
}
