// SPDX-License-Identifier: GPL-2.0-only
/* Events: their names, and opening them.  See evsel.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "evsel.h"

int evsel__probe(bool defer_callchain)
{
	/* exclude_kernel keeps it allowed under perf_event_paranoid 2 */
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_CPU_CLOCK,
		.sample_period	= 100000,
		.sample_type	= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.disabled	= 1,
		.exclude_kernel	= 1,
	};
	int fd;

	attr__set_defer(&attr, defer_callchain, false);
	fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend",
	"stalled-cycles-backend", "ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

const char *evsel__name(const struct evsel *a, char *buf, size_t size)
{
	__u64 config = a->attr.config;

	if (a->name)
		return a->name;
	if (a->attr.type == PERF_TYPE_HARDWARE && config < sizeof(hw_names) / sizeof(hw_names[0]))
		return hw_names[config];
	if (a->attr.type == PERF_TYPE_SOFTWARE && config < sizeof(sw_names) / sizeof(sw_names[0]))
		return sw_names[config];
	snprintf(buf, size, "%u:%#llx", a->attr.type, (unsigned long long)config);
	return buf;
}

