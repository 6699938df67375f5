/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_EVENT_H
#define PERF_DEFER_EVENT_H

/*
 * Records: the types perf adds to the kernel's, their names, and loads
 * of their little-endian fields.
 */
#include <stddef.h>
#include <string.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

/* perf's own record types (tools/lib/perf/include/perf/event.h). */
enum perf_user_event_type {
	PD_RECORD_USER_TYPE_START	= 64,
	PD_RECORD_HEADER_ATTR		= 64,
	PD_RECORD_HEADER_EVENT_TYPE	= 65,
	PD_RECORD_HEADER_TRACING_DATA	= 66,
	PD_RECORD_HEADER_BUILD_ID	= 67,
	PD_RECORD_FINISHED_ROUND	= 68,
	PD_RECORD_ID_INDEX		= 69,
	PD_RECORD_AUXTRACE_INFO		= 70,
	PD_RECORD_AUXTRACE		= 71,
	PD_RECORD_AUXTRACE_ERROR	= 72,
	PD_RECORD_THREAD_MAP		= 73,
	PD_RECORD_CPU_MAP		= 74,
	PD_RECORD_STAT_CONFIG		= 75,
	PD_RECORD_STAT			= 76,
	PD_RECORD_STAT_ROUND		= 77,
	PD_RECORD_EVENT_UPDATE		= 78,
	PD_RECORD_TIME_CONV		= 79,
	PD_RECORD_HEADER_FEATURE	= 80,
	PD_RECORD_COMPRESSED		= 81,
	PD_RECORD_FINISHED_INIT		= 82,
	PD_RECORD_COMPRESSED2		= 83,
	PD_RECORD_BPF_METADATA		= 84,
	PD_RECORD_HEADER_MAX_KNOWN	= 85,	/* one past the last name we know */
	PD_RECORD_HEADER_MAX_6_1	= 83,	/* perf 6.1 knows up to FINISHED_INIT */
};

#define PD_MAX_EVENT_SIZE	0xfff8	/* largest 8-byte multiple in header.size */

/* Where records go, one at a time: 0, or a -errno that stops the caller. */
typedef int (*event_fn)(void *arg, const void *event, size_t size);

/* "SAMPLE", "CALLCHAIN_DEFERRED", "FINISHED_ROUND", ... or "UNKNOWN". */
const char *perf_event__name(__u32 type);

/* Unaligned little-endian loads from a record. */
static inline __u64 rd64(const void *p)
{
	__u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline __u32 rd32(const void *p)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline struct perf_event_header rdhdr(const void *p)
{
	struct perf_event_header h;

	memcpy(&h, p, sizeof(h));
	return h;
}

#endif /* PERF_DEFER_EVENT_H */
