/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_HEADER_HOST_H
#define PERF_DEFER_HEADER_HOST_H

/*
 * The feature sections of a new recording that describe the machine it
 * was made on (header-host.c), and the growable buffer every feature
 * section is built in (perf-data-write.c).
 */
#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

struct buf {
	unsigned char *p;
	size_t len, alloc;
	bool oom;
};

/* data NULL: n zero bytes */
void buf__put(struct buf *b, const void *data, size_t n);
void buf__u32(struct buf *b, __u32 v);
void buf__u64(struct buf *b, __u64 v);
/* perf's string: u32 length (a multiple of 64, with the NUL), the bytes, zeros. */
void buf__string(struct buf *b, const char *s);

/*
 * Write the section of feature feat (enum header_feature) as perf record
 * would on this machine: true when written, false when perf record would
 * leave the feature out here too (no NUMA nodes in sysfs, no "cpu" PMU,
 * not a hybrid machine, not an x86 CPU for CPUID...), or when feat is not
 * a feature of the machine.  b->len may be 0 on true: an empty section.
 */
bool host_feature(struct buf *b, unsigned int feat);

#endif /* PERF_DEFER_HEADER_HOST_H */
