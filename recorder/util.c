// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

const char *pd_cmd;

void pr_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("perf-defer: ", stderr);
	if (pd_cmd)
		fprintf(stderr, "%s: ", pd_cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static char pd_errbuf[512];

const char *pd_error(void)
{
	return pd_errbuf[0] ? pd_errbuf : "unknown error";
}

void pd_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pd_errbuf, sizeof(pd_errbuf), fmt, ap);
	va_end(ap);
}
