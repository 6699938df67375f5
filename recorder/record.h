/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_RECORD_H
#define PERF_DEFER_RECORD_H

/*
 * perf-defer record's work.  The path is chosen at start: the kernel's
 * own defer_callchain (Linux >= 6.19), else the perf_defer module, else
 * plain fp callchains with one warning.  Events go through perf's own
 * ring buffers; with the module, CALLCHAIN_DEFERRED records come from the
 * session's rings.  Everything is merged in time order, round by round as
 * perf's ordered events do, and written either stitched (the default:
 * every perf reads it) or in the upstream deferred form (keep_deferred).
 *
 * The caller (cmd-record.c) sets the options of a zeroed struct record,
 * calls record__run() and prints what it counted.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "build-id.h"
#include "session.h"
#include "stitch.h"

#define REC_MAX_EVENTS	8
#define REC_MAX_CPUS	1024

enum record_path { RECORD_PATH_NATIVE, RECORD_PATH_MODULE, RECORD_PATH_FP };

struct record_event_def {
	const char	*name;
	__u32		type;
	__u64		config;
};

struct record_evsel {
	const struct record_event_def	*def;
	struct perf_event_attr		attr;
	__u64				*ids;
	unsigned int			nr_ids;
};

struct record_fd;
struct ordered;

struct record {
	/* options */
	const char		*output;
	struct record_evsel	evsel[REC_MAX_EVENTS];
	unsigned int		nr_evsel;
	__u64			freq, period;
	bool			system_wide, defer, dwarf, keep_deferred, quiet, stats;
	bool			no_buildid_cache;	/* -N */
	__u32			dump_size;	/* dwarf: bytes of user stack */
	__u8			unwind[8];	/* --user-unwind: PERF_DEFER_UNWIND_*, 0-ended */
	int			verbose;
	unsigned int		mmap_pages;
	bool			mmap_set;	/* -m given */
	char			*cpu_list, *pid_list, *tid_list;
	char			**argv;		/* the workload, argc words */
	int			argc, orig_argc;
	char			**orig_argv;	/* the command line, for HEADER_CMDLINE */

	/* state */
	enum record_path		path;
	struct record_fd		*fds;
	unsigned int		nr_fds;
	struct session		sess;
	int			epfd;
	pid_t			child;
	struct perf_data_writer	*w;
	struct stitch	*stitch;
	struct ordered	*oq;

	struct dsos		dsos;

	/* counts, and the outcome */
	__u64			wakeups, samples, deferred, records, lost, lost_records;
	struct stitch_stats	st;		/* when stitched */
	__u64			bytes;		/* of records written */
	int			status;		/* of the workload, as waitpid() says */
};

/* Record, write the file.  0, or -1 with a message said. */
int record__run(struct record *rec);

#endif /* PERF_DEFER_RECORD_H */
