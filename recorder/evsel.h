/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_EVSEL_H
#define PERF_DEFER_EVSEL_H

/*
 * Events: an attr with its ids and name, as a file holds it; the bits of
 * perf_event_attr that an older <linux/perf_event.h> lacks; and opening
 * events.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

struct evsel {
	struct perf_event_attr attr;	/* as in the file, cut to this size */
	__u32 file_size;		/* attr.size in the file (0 means 64) */
	__u32 nr_ids;
	__u64 *ids;
	char *name;			/* NULL when unnamed */
	int idx;
	bool cut;			/* the file's attr had non-zero bytes past ours */
};

/* name, else one made from type and config ("cpu-clock", "cycles", ...) */
const char *evsel__name(const struct evsel *a, char *buf, size_t size);

/*
 * The flag word of perf_event_attr (disabled, inherit, ... sigtrap,
 * defer_callchain, defer_output), through which the bits that an older
 * <linux/perf_event.h> lacks are set and tested.
 */
static inline __u64 attr__flags(const struct perf_event_attr *attr)
{
	__u64 word;

	memcpy(&word, (const char *)attr + PERF_DEFER_ATTR_FLAGS_OFFSET, sizeof(word));
	return word;
}

static inline void attr__set_flags(struct perf_event_attr *attr, __u64 word)
{
	memcpy((char *)attr + PERF_DEFER_ATTR_FLAGS_OFFSET, &word, sizeof(word));
}

static inline bool attr__defer_callchain(const struct perf_event_attr *attr)
{
	return attr__flags(attr) >> PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN & 1;
}

static inline bool attr__defer_output(const struct perf_event_attr *attr)
{
	return attr__flags(attr) >> PERF_DEFER_ATTR_BIT_DEFER_OUTPUT & 1;
}

static inline void attr__set_defer(struct perf_event_attr *attr, bool callchain, bool output)
{
	__u64 word = attr__flags(attr);

	word &= ~(1ULL << PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN |
		  1ULL << PERF_DEFER_ATTR_BIT_DEFER_OUTPUT);
	word |= (__u64)callchain << PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN;
	word |= (__u64)output << PERF_DEFER_ATTR_BIT_DEFER_OUTPUT;
	attr__set_flags(attr, word);
}

/*
 * perf record --call-graph dwarf's register mask, its arch's
 * PERF_REGS_MASK (x86-64: AX..SS, R8..R15, not DS, ES, FS, GS; arm64:
 * X0..X28, X29, LR, SP, PC): the very registers a module dump gives, and
 * its default stack dump size.
 */
#define PD_DWARF_REGS_MASK	PERF_DEFER_DUMP_REGS_VALID
#define PD_DWARF_STACK_SIZE	8192

/*
 * An attr whose samples get their user registers and stack from
 * PERF_DEFER_RECORD_USER_DUMP records (record --call-graph dwarf,defer):
 * sample_regs_user and sample_stack_user say what the dumps hold, while
 * sample_type has neither PERF_SAMPLE_REGS_USER nor PERF_SAMPLE_STACK_USER.
 */
static inline bool attr__user_dump(const struct perf_event_attr *attr)
{
	return (attr->sample_type & PERF_SAMPLE_CALLCHAIN) && attr->sample_regs_user &&
	       attr->sample_stack_user &&
	       !(attr->sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER));
}

/*
 * The attr of such samples once stitched: as perf record --call-graph
 * dwarf opens its events, registers and stack in every sample and no user
 * part in the callchain.  Other attrs are left as they are.
 */
static inline void attr__stitch_user_dump(struct perf_event_attr *attr)
{
	if (!attr__user_dump(attr))
		return;
	attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr->exclude_callchain_user = 1;
}

/* Clear defer_callchain and defer_output: attrs of a stitched file. */
static inline void attr__clear_defer(struct perf_event_attr *attr)
{
	attr__set_defer(attr, false, false);
}

static inline int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				      int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/*
 * Open and close a disabled cpu-clock sampling event on this task, with or
 * without defer_callchain, as perf >= 6.19 probes the feature.  Returns 0
 * or an errno.
 */
int evsel__probe(bool defer_callchain);

/*
 * Does this kernel defer user callchains natively?  Taking the bit is not
 * enough: a kernel built without CONFIG_UNWIND_USER (sid's arm64 7.2)
 * takes it and walks the user stack in the interrupt all the same.  This
 * samples a moment of user time on this task with defer_callchain set and
 * reads the first sample's chain.  Returns 0 when it is deferred (or when
 * no sample came, and the bit is trusted), EOPNOTSUPP when the bit is
 * taken but the user frames are inline, else evsel__probe(true)'s errno.
 */
int evsel__probe_native(void);

#endif /* PERF_DEFER_EVSEL_H */
