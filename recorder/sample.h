/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_SAMPLE_H
#define PERF_DEFER_SAMPLE_H

/* The fields of a sample, and the sample_id of the other records. */
#include <stdbool.h>
#include <stddef.h>

#include <linux/perf_event.h>

/* PERF_SAMPLE_BRANCH_COUNTERS (Linux 6.8), not in every <linux/perf_event.h>. */
#define PD_SAMPLE_BRANCH_COUNTERS	(1ULL << 19)

/*
 * Samples.  Fields missing from sample_type are -1 (pid, tid, cpu, time,
 * id, stream_id) or 0, as perf's evsel__parse_sample() leaves them.
 */
struct perf_sample {
	__u64 ip;
	__u32 pid, tid;
	__u64 time;
	__u64 addr;
	__u64 id;
	__u64 stream_id;
	__u32 cpu;
	__u64 period;
	/* PERF_SAMPLE_READ */
	__u64 read_value, time_enabled, time_running, read_id, read_lost;
	__u64 read_nr;			/* group: number of values */
	size_t read_values_offset;	/* group: bytes into the record */
	/* PERF_SAMPLE_CALLCHAIN, or the ips of CALLCHAIN_DEFERRED */
	const __u64 *callchain;		/* NULL when absent */
	__u64 nr;
	size_t callchain_offset;	/* of the nr field, bytes into the record */
	/* callchain ends with PERF_CONTEXT_USER_DEFERRED, cookie; or record 22 or USER_DUMP */
	bool deferred;
	__u64 cookie;
	/* PERF_SAMPLE_RAW */
	const void *raw;
	__u32 raw_size;
	/* PERF_SAMPLE_BRANCH_STACK (entries skipped) */
	__u64 branch_nr;
	/*
	 * PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER (skipped).  In a
	 * sample, regs_user_offset is where they are or would go; in a
	 * USER_DUMP record, [regs_user_offset, + regs_stack_size) holds
	 * them as a sample would (abi, regs, size, data, dyn_size).
	 */
	size_t regs_user_offset, regs_stack_size;
	__u64 user_regs_abi;
	__u32 nr_user_regs;
	__u64 user_stack_size, user_stack_dyn_size;
	__u64 weight, data_src, transaction;
	__u64 intr_regs_abi;
	__u32 nr_intr_regs;
	__u64 phys_addr, cgroup, data_page_size, code_page_size;
	__u64 aux_size;
	/* bytes of the record parsed */
	size_t end;
};

/*
 * Parse a PERF_RECORD_SAMPLE by attr's sample_type, the sample_id of any
 * other record when attr has sample_id_all, and the body of
 * CALLCHAIN_DEFERRED and USER_DUMP (its registers by attr's
 * sample_regs_user).  Every length is checked.  0, or -EFAULT with a
 * error__msg().
 */
int perf_sample__parse(const struct perf_event_attr *attr, const void *event,
		       struct perf_sample *sample);

#endif /* PERF_DEFER_SAMPLE_H */
