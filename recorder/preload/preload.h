/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_PRELOAD_H
#define PERF_DEFER_PRELOAD_H
/*
 * What 'perf-defer perf record' (cmd-perf.c) and the library it preloads
 * into perf (preload.c) agree on: the environment, and which of perf's
 * events get deferred user callchains.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/perf_event.h>
#include <linux/perf_defer.h>

/* the session fd perf inherits */
#define PRELOAD_ENV_FD		"PERF_DEFER_SESSION_FD"
/* LD_PRELOAD as it was before perf-defer put the library in front */
#define PRELOAD_ENV_LD_PRELOAD	"PERF_DEFER_LD_PRELOAD"
/* the library's file name, installed in $(PREFIX)/lib/perf-defer */
#define PRELOAD_LIB		"libperf-defer-preload.so"
/* the largest attr preload_strip() copies; a bigger one goes as it is */
#define PRELOAD_ATTR_MAX	512

/*
 * Does perf's event attr sample user callchains by frame pointers (fp,
 * or perf >= 6.19's fp,defer): a sampling event with PERF_SAMPLE_CALLCHAIN
 * that keeps user space, and no user stack of its own (dwarf stays
 * perf's)?  Then it is to be attached.  User registers alone are fp's
 * too: perf record -g samples the LR on arm64, from which perf report
 * guesses the caller of a leaf that has not stored its frame record.
 */
static inline bool preload_wants(const struct perf_event_attr *attr)
{
	return (attr->sample_type & PERF_SAMPLE_CALLCHAIN) && attr->sample_period &&
	       !attr->exclude_user && !attr->exclude_callchain_user &&
	       !(attr->sample_type & PERF_SAMPLE_STACK_USER);
}

/*
 * perf >= 6.19's defer_callchain and defer_output bits, which a kernel
 * before 6.19 refuses: when attr has one, copy (cap bytes) is attr
 * without them, to be opened instead, and true is returned.
 */
static inline bool preload_strip(const struct perf_event_attr *attr, void *copy, size_t cap)
{
	const __u64 bits = 1ULL << PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN |
			   1ULL << PERF_DEFER_ATTR_BIT_DEFER_OUTPUT;
	size_t size = attr->size ? attr->size : PERF_ATTR_SIZE_VER0;
	__u64 flags;

	if (size > cap || size < PERF_DEFER_ATTR_FLAGS_OFFSET + sizeof(flags))
		return false;
	memcpy(&flags, (const char *)attr + PERF_DEFER_ATTR_FLAGS_OFFSET, sizeof(flags));
	if (!(flags & bits))
		return false;
	memcpy(copy, attr, size);
	flags &= ~bits;
	memcpy((char *)copy + PERF_DEFER_ATTR_FLAGS_OFFSET, &flags, sizeof(flags));
	return true;
}

#endif /* PERF_DEFER_PRELOAD_H */
