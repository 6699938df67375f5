/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * perf_defer.h - user ABI of /dev/perf_defer
 *
 * The perf-defer module gives kernels older than 6.19 the deferred user
 * callchains that Linux 6.19 added to perf.  This header is shared by the
 * module and by the perf-defer recorder.
 *
 * Rules of this ABI (Documentation/process/botching-up-ioctls.rst):
 *  - every ioctl argument starts with a __u32 size that must equal the
 *    size of the structure the caller was built against;
 *  - every __reserved field must be zero, otherwise -EINVAL;
 *  - unknown ioctl numbers get -ENOTTY;
 *  - retired ioctl numbers stay listed below and are never reused;
 *  - the ABI version is independent of the package version; a recorder
 *    refuses a module whose major version differs from its own.
 */
#ifndef _UAPI_LINUX_PERF_DEFER_H
#define _UAPI_LINUX_PERF_DEFER_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PERF_DEFER_DEVICE_NAME		"perf_defer"
#define PERF_DEFER_DEVICE_PATH		"/dev/perf_defer"

#define PERF_DEFER_ABI_MAJOR		1
#define PERF_DEFER_ABI_MINOR		0

/* 0xDF is unassigned in Documentation/userspace-api/ioctl/ioctl-number.rst */
#define PERF_DEFER_MAGIC		0xDF

/*
 * Upstream perf ABI of Linux >= 6.19, under our own prefix so that this
 * header can be included together with any <linux/perf_event.h>, old or
 * new (upstream spells them as enumerators, which #ifndef cannot see).
 *
 * PERF_RECORD_CALLCHAIN_DEFERRED:
 *	struct {
 *		struct perf_event_header	header;	 misc = PERF_RECORD_MISC_USER
 *		__u64				cookie;
 *		__u64				nr;
 *		__u64				ips[nr];	 user IPs only
 *		struct sample_id		sample_id;
 *	};
 *
 * In a PERF_RECORD_SAMPLE callchain the user part becomes
 * PERF_CONTEXT_USER_DEFERRED followed by exactly one entry, the cookie.
 */
#define PERF_DEFER_RECORD_CALLCHAIN_DEFERRED	22
#define PERF_DEFER_CONTEXT_USER_DEFERRED	((__u64)-640)

/*
 * perf_event_attr flag bits: bit numbers within the __u64 bit-field word
 * that starts with 'disabled' (right after read_format, byte offset 40).
 */
#define PERF_DEFER_ATTR_FLAGS_OFFSET		40
#define PERF_DEFER_ATTR_BIT_SIGTRAP		37
#define PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN	38
#define PERF_DEFER_ATTR_BIT_DEFER_OUTPUT	39

/* Cookie layout, as upstream: (cpu + 1) << 32 | (1 | per-CPU counter). */
#define PERF_DEFER_COOKIE_CPU_SHIFT		32

/**
 * struct perf_defer_version - PERF_DEFER_IOC_GET_VERSION
 * @size:	in: sizeof(struct perf_defer_version)
 * @major:	out: PERF_DEFER_ABI_MAJOR of the module
 * @minor:	out: PERF_DEFER_ABI_MINOR of the module
 * @__reserved:	in: must be zero
 */
struct perf_defer_version {
	__u32	size;
	__u32	major;
	__u32	minor;
	__u32	__reserved;
};

/**
 * struct perf_defer_attach - PERF_DEFER_IOC_ATTACH / PERF_DEFER_IOC_DETACH
 * @size:	sizeof(struct perf_defer_attach)
 * @perf_fd:	a perf_event fd of the caller: a sampling event with
 *		PERF_SAMPLE_CALLCHAIN and user callchains
 * @__reserved:	must be zero
 *
 * Samples of an attached event (and of its inherited children) get their
 * user callchain deferred.  Errors: -EBADF (not an open fd), -EINVAL (not
 * a perf_event fd, or no user callchain), -EEXIST (already attached, by
 * any session), -ENOENT (detach of an event not attached here), -ENOSPC
 * (too many events attached).  The session holds a reference on the event
 * until detach or close.
 */
struct perf_defer_attach {
	__u32	size;
	__s32	perf_fd;
	__u64	__reserved;
};

/**
 * struct perf_defer_ring - PERF_DEFER_IOC_SET_RING
 * @size:	sizeof(struct perf_defer_ring)
 * @data_pages:	data pages per CPU: a power of two, 1 ..
 *		PERF_DEFER_RING_MAX_PAGES; default PERF_DEFER_RING_DEF_PAGES
 * @__reserved:	must be zero
 *
 * Only before the first mmap or attach (-EBUSY after).
 */
struct perf_defer_ring {
	__u32	size;
	__u32	data_pages;
	__u64	__reserved;
};

#define PERF_DEFER_RING_DEF_PAGES	16
#define PERF_DEFER_RING_MAX_PAGES	1024

/**
 * struct perf_defer_stats - PERF_DEFER_IOC_GET_STATS (module-wide counters)
 * @size:		sizeof(struct perf_defer_stats)
 * @__reserved:		must be zero
 * @requests:		samples whose user callchain was deferred
 * @dedup:		of those, samples that joined a pending request of
 *			the same kernel entry (no new cookie, no new unwind)
 * @unwinds:		user stacks walked in task_work
 * @records:		CALLCHAIN_DEFERRED records written to sessions
 * @drops:		records lost because a session ring was full
 * @pool_empty:		samples that kept the in-NMI user walk because the
 *			request pool was empty
 * @exit_pending:	tasks that exited with a request pending
 * @pending:		requests pending now
 */
struct perf_defer_stats {
	__u32	size;
	__u32	__reserved;
	__u64	requests;
	__u64	dedup;
	__u64	unwinds;
	__u64	records;
	__u64	drops;
	__u64	pool_empty;
	__u64	exit_pending;
	__u64	pending;
};

/*
 * Ring buffer: one per session and CPU.  mmap() with offset
 * cpu * (1 + data_pages) * page_size and length (1 + data_pages) *
 * page_size maps the control page followed by the data pages.  Records
 * are perf records (struct perf_event_header first, 8-byte aligned):
 * PERF_RECORD_CALLCHAIN_DEFERRED, and PERF_RECORD_LOST { header, id,
 * lost, sample_id } after drops.  The reader consumes [data_tail,
 * data_head) and stores data_tail; poll() reports POLLIN when any CPU's
 * ring holds data.
 */
struct perf_defer_mmap_page {
	__u32	version;	/* PERF_DEFER_ABI_MAJOR */
	__u32	cpu;
	__u64	data_offset;	/* offset of the data pages in this mapping */
	__u64	data_size;	/* bytes of data, a power of two */
	__u64	lost;		/* records dropped on this ring so far */
	__u8	__pad[1024 - 32];
	__u64	data_head;	/* written by the kernel; read with acquire */
	__u64	data_tail;	/* written by the reader; store with release */
};

/*
 * ioctl numbers.  Retired numbers stay here as comments, never reused.
 *	0x00	never used
 */
#define PERF_DEFER_IOC_GET_VERSION	_IOWR(PERF_DEFER_MAGIC, 0x01, struct perf_defer_version)
#define PERF_DEFER_IOC_ATTACH		_IOWR(PERF_DEFER_MAGIC, 0x02, struct perf_defer_attach)
#define PERF_DEFER_IOC_DETACH		_IOWR(PERF_DEFER_MAGIC, 0x03, struct perf_defer_attach)
#define PERF_DEFER_IOC_SET_RING		_IOWR(PERF_DEFER_MAGIC, 0x04, struct perf_defer_ring)
#define PERF_DEFER_IOC_GET_STATS	_IOWR(PERF_DEFER_MAGIC, 0x05, struct perf_defer_stats)

#endif /* _UAPI_LINUX_PERF_DEFER_H */
