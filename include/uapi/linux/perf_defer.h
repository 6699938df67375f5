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

/*
 * ioctl numbers.  Retired numbers stay here as comments, never reused.
 *	0x00	never used
 */
#define PERF_DEFER_IOC_GET_VERSION	_IOWR(PERF_DEFER_MAGIC, 0x01, struct perf_defer_version)

#endif /* _UAPI_LINUX_PERF_DEFER_H */
