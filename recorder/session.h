/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_SESSION_H
#define PERF_DEFER_SESSION_H

/*
 * A session of the perf_defer module (/dev/perf_defer), as record uses
 * it: the ring size, dumps and unwind methods set, perf's events
 * attached, and the per-CPU rings of CALLCHAIN_DEFERRED and USER_DUMP
 * records mapped.
 */
#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>
#include <linux/perf_defer.h>

#define SESSION_MAX_CPUS	1024

struct session {
	int				fd;		/* -1 when closed */
	size_t				ring_len;	/* bytes of each ring's mapping */
	bool				wakeup;		/* poll fd: a ring a quarter full */
	struct perf_defer_mmap_page	*rings[SESSION_MAX_CPUS];
	unsigned int			nr_rings;
};

/*
 * Open the device and set it up: rings of data_pages pages (more for
 * dumps), dumps of dump_size bytes of user stack unless dump_size is 0,
 * the unwind methods unwind[8] unless unwind[0] is 0.  0, or the -errno
 * of open() (nothing said), or -EPROTO (an error, said) or -ENOSYS (no
 * dumps in this module, a warning said).
 */
int session__open(struct session *s, unsigned int data_pages, __u32 dump_size,
		  const __u8 *unwind);
/*
 * --user-unwind LIST ("sframe,eh_frame,fp", each method once) into
 * unwind[8], 0-ended.  0, or -1 with a message said.
 */
int session__parse_unwind(const char *arg, __u8 unwind[8]);
/* Attach a perf event fd.  0, or -1 with a message said. */
int session__attach(struct session *s, int perf_fd);
/* Map the ring of every CPU.  0, or -1 with a message said. */
int session__map_rings(struct session *s);
/* Unmap the rings, close the device.  A closed session is fine. */
void session__close(struct session *s);

#endif /* PERF_DEFER_SESSION_H */
