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
/*
 * 1: PERF_DEFER_IOC_SET_DUMP, 2: after_unwind, 3: PERF_DEFER_IOC_SET_UNWIND,
 * 4: the unwind counters of struct perf_defer_stats,
 * 5: perf_defer_ring.wakeup_bytes, 6: in_exec, 7: table_rows, table_row_hits
 * and walk_ns
 */
#define PERF_DEFER_ABI_MINOR		7

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

/*
 * PERF_DEFER_RECORD_USER_DUMP (our own, not upstream's; far above every
 * record type perf uses, kernel or user): the user registers and the top
 * of the user stack of one kernel entry, taken once in the task_work for
 * every sample of that entry, for a session with PERF_DEFER_IOC_SET_DUMP.
 * Fields as perf's PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER:
 *
 *	struct {
 *		struct perf_event_header	header;	 misc = PERF_RECORD_MISC_USER
 *		__u64				cookie;	 as in the samples' callchain
 *		__u64				abi;	 PERF_SAMPLE_REGS_ABI_{NONE,32,64}
 *		__u64				regs[weight(mask)];	 if abi != NONE
 *		__u64				size;	 of data[]: the session's stack_size
 *		char				data[size];	 from the user SP up
 *		__u64				dyn_size;	 if size != 0: bytes copied
 *		struct sample_id		sample_id;
 *	};
 *
 * mask is the attached event's attr.sample_regs_user, in the order of
 * <asm/perf_regs.h> (x86-64: AX, BX, CX, DX, SI, DI, BP, SP, IP, FLAGS,
 * CS, SS, DS, ES, FS, GS, R8..R15 are bits 0..23; DS..GS are refused, as
 * perf refuses them; arm64: X0..X28, X29, LR, SP, PC are bits 0..32, and
 * for an AArch32 task SP, LR and bit 15 are its r13, r14 and PC, as perf
 * gives them).  abi is PERF_SAMPLE_REGS_ABI_32 for a compat task.
 * The stack is copied with page faults allowed: pages not present are
 * brought in; dyn_size < size only where the stack mapping ends or a page
 * cannot be read, and data[dyn_size..size) is zero.
 */
#define PERF_DEFER_RECORD_USER_DUMP		0x7d00

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
 * @wakeup_bytes: (ABI 1.5) poll() reports POLLIN, and a sleeping poller
 *		is woken, only once a CPU's ring holds at least this many
 *		bytes, as perf's wakeup_watermark; less than the ring's
 *		data_pages * page size.  0 (the default, and before 1.5):
 *		as soon as a ring holds any record, and a poller is woken
 *		by every record.
 * @__reserved:	must be zero
 *
 * Only before the first mmap or attach (-EBUSY after).
 */
struct perf_defer_ring {
	__u32	size;
	__u32	data_pages;
	__u32	wakeup_bytes;
	__u32	__reserved;
};

#define PERF_DEFER_RING_DEF_PAGES	16
#define PERF_DEFER_RING_MAX_PAGES	1024

/**
 * struct perf_defer_dump - PERF_DEFER_IOC_SET_DUMP (ABI 1.1)
 * @size:	sizeof(struct perf_defer_dump)
 * @flags:	PERF_DEFER_DUMP_REGS_STACK: this session's events get a
 *		PERF_DEFER_RECORD_USER_DUMP per kernel entry instead of a
 *		CALLCHAIN_DEFERRED (no frame-pointer walk for them); 0: off
 * @stack_size:	bytes of user stack per dump; 0 means
 *		PERF_DEFER_DUMP_DEF_STACK; rounded up to a multiple of 8, as
 *		perf rounds sample_stack_user; at most
 *		PERF_DEFER_DUMP_MAX_STACK
 * @__reserved:	must be zero
 *
 * Only while no event is attached (-EBUSY otherwise).  The registers are those
 * of each attached event's attr.sample_regs_user; with a dump set,
 * attaching an event whose mask is 0 or names registers this ABI cannot
 * give is -EINVAL.  A record that would not fit in the session's ring
 * (PERF_DEFER_IOC_SET_RING) is refused with -EINVAL here and at attach,
 * never truncated; PERF_DEFER_IOC_SET_RING after this ioctl refuses a
 * ring too small for it in the same way.
 */
struct perf_defer_dump {
	__u32	size;
	__u32	flags;
	__u32	stack_size;
	__u32	__reserved;
};

#define PERF_DEFER_DUMP_REGS_STACK	(1U << 0)
#define PERF_DEFER_DUMP_DEF_STACK	8192
/*
 * The largest record, every register and a full sample_id, fits in a
 * perf_event_header's __u16 size (0xfff8 as the largest 8-byte multiple):
 * header, cookie, abi, the registers, size, dyn_size and 6 sample_id
 * words are 280 bytes with x86-64's 24 registers, 352 with arm64's 33.
 */
#if defined(__aarch64__)
#define PERF_DEFER_DUMP_MAX_STACK	(0xfff8 - 352)
#else
#define PERF_DEFER_DUMP_MAX_STACK	(0xfff8 - 280)
#endif

/**
 * struct perf_defer_unwind - PERF_DEFER_IOC_SET_UNWIND (ABI 1.3)
 * @size:	sizeof(struct perf_defer_unwind)
 * @__reserved:	must be zero
 * @methods:	how this session's user stacks are walked: methods tried
 *		in this order for each frame, ended by 0 or the end of the
 *		array, each at most once; all 0: the module's user_unwind
 *		parameter at the time of each unwind
 *
 * Only while no event is attached (-EBUSY otherwise).  PERF_DEFER_UNWIND_FP
 * is the frame-pointer walk; PERF_DEFER_UNWIND_SFRAME and _EH_FRAME read
 * the unwind tables of the object at each IP (64-bit tasks; 32-bit tasks
 * keep the frame-pointer walk).  Sessions with a dump
 * (PERF_DEFER_IOC_SET_DUMP) walk nothing.
 */
struct perf_defer_unwind {
	__u32	size;
	__u32	__reserved;
	__u8	methods[8];
};

#define PERF_DEFER_UNWIND_FP		1
#define PERF_DEFER_UNWIND_SFRAME	2
#define PERF_DEFER_UNWIND_EH_FRAME	3
/*
 * sample_regs_user bits that a dump can give: x86-64's perf_regs but DS,
 * ES, FS and GS; arm64's X0..X28, X29, LR, SP, PC (not VG)
 */
#if defined(__aarch64__)
#define PERF_DEFER_DUMP_REGS_VALID	0x1ffffffffULL
#else
#define PERF_DEFER_DUMP_REGS_VALID	0xff0fffULL
#endif

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
 * @after_unwind:	(ABI 1.2) samples that kept the in-NMI user walk
 *			because their kernel entry's user stack had been
 *			unwound already: taken in the unwind's task_work
 *			itself, or later on that entry's way out
 * @frames_fp:		(ABI 1.3) caller frames found by the frame-pointer
 *			rule, in either walk
 * @frames_sframe:	(ABI 1.3) caller frames found from SFrame
 * @frames_eh_frame:	(ABI 1.3) caller frames found from .eh_frame
 * @table_objects:	(ABI 1.3) objects the table walk looked up (ELF
 *			and program headers read)
 * @table_stopped:	(ABI 1.3) table walks ended by data that could not
 *			be read or made sense of (not by the outermost frame
 *			or an IP no method covers)
 * @table_cache_hits:	(ABI 1.4) objects the table walk found in its cache
 *			of object layouts, headers not read again; with
 *			@table_objects, the cache's hit rate
 * @in_exec:		(ABI 1.6) samples taken inside an execve() that kept
 *			the in-NMI user walk: the task_work would run after
 *			the exec, on a stack the sample never saw (events
 *			enabled on exec take their first samples there)
 * @table_rows:		(ABI 1.7) rows the table walk took from an object's
 *			SFrame or .eh_frame section: its table lookups
 * @table_row_hits:	(ABI 1.7) rows the table walk found in its cache of
 *			rows by object and PC, no table read again
 * @walk_ns:		(ABI 1.7) nanoseconds (local_clock()) spent walking
 *			user stacks in task_work, by any method; over
 *			@unwinds, the cost of one
 *
 * The struct grows at its end only.  A module answers every size from
 * PERF_DEFER_STATS_SIZE_VER0 (ABI 1.0 and 1.1: up to @pending) to its
 * own, in 8-byte steps, given in @size and in the ioctl number alike:
 * older recorders keep working, and get the fields they know.
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
	__u64	after_unwind;
	__u64	frames_fp;
	__u64	frames_sframe;
	__u64	frames_eh_frame;
	__u64	table_objects;
	__u64	table_stopped;
	__u64	table_cache_hits;
	__u64	in_exec;
	__u64	table_rows;
	__u64	table_row_hits;
	__u64	walk_ns;
};

#define PERF_DEFER_STATS_SIZE_VER0	72

/*
 * Ring buffer: one per session and CPU.  mmap() with offset
 * cpu * (1 + data_pages) * page_size and length (1 + data_pages) *
 * page_size maps the control page followed by the data pages.  Records
 * are perf records (struct perf_event_header first, 8-byte aligned):
 * PERF_RECORD_CALLCHAIN_DEFERRED, and PERF_RECORD_LOST { header, id,
 * lost, sample_id } after drops.  The reader consumes [data_tail,
 * data_head) and stores data_tail; poll() reports POLLIN when any CPU's
 * ring holds data (from ABI 1.5, with wakeup_bytes set: that many bytes).
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
#define PERF_DEFER_IOC_SET_DUMP		_IOWR(PERF_DEFER_MAGIC, 0x06, struct perf_defer_dump)
#define PERF_DEFER_IOC_SET_UNWIND	_IOWR(PERF_DEFER_MAGIC, 0x07, struct perf_defer_unwind)

#endif /* _UAPI_LINUX_PERF_DEFER_H */
