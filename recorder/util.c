// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

const char *pr_cmd;

void pr_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("perf-defer: ", stderr);
	if (pr_cmd)
		fprintf(stderr, "%s: ", pr_cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
