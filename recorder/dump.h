/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_DUMP_H
#define PERF_DEFER_DUMP_H

/* 'perf-defer dump': every record of a file, as 'perf report -D' prints them. */
#include <stdio.h>

struct perf_data_reader;

#define DUMP_STATS_ONLY	0x1	/* only the counts */
#define DUMP_BY_MODE	0x2	/* and each event's samples by CPU mode */

/*
 * Print every record of r to out, then the number of records of each
 * type; flags DUMP_*.  0, or -errno with error__msg().
 */
int dump__reader(struct perf_data_reader *r, FILE *out, unsigned int flags);

#endif /* PERF_DEFER_DUMP_H */
