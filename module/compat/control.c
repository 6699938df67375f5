// SPDX-License-Identifier: GPL-2.0-only
/* The control probe: what every kernel the module supports has. */
#include <linux/module.h>
#include <linux/perf_event.h>

int pd_probe(struct perf_event *event);
int pd_probe(struct perf_event *event)
{
	return event->attr.sample_type & PERF_SAMPLE_CALLCHAIN;
}
