/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_EVSEL_H
#define PERF_DEFER_EVSEL_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>

int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags);

/*
 * Open and close a disabled cpu-clock sampling event on this task, with or
 * without defer_callchain, as perf >= 6.19 probes the feature.  Returns 0
 * or an errno.
 */
int event__probe(bool defer_callchain);

#endif /* PERF_DEFER_EVSEL_H */
