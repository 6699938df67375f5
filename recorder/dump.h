/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_DUMP_H
#define PERF_DEFER_DUMP_H

/* 'perf-defer dump': every record of a file, as 'perf report -D' prints them. */
#include <stdbool.h>
#include <stdio.h>

struct perf_data_reader;

/*
 * Print every record of r to out, then the number of records of each
 * type; with stats_only, only those.  0, or -errno with error__msg().
 */
int dump__reader(struct perf_data_reader *r, FILE *out, bool stats_only);

#endif /* PERF_DEFER_DUMP_H */
