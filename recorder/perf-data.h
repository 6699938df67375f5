/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_PERF_DATA_H
#define PERF_DEFER_PERF_DATA_H

/*
 * perf.data files: a writer, a reader and a sample parser.
 *
 * Only the file mode ("PERFILE2", little-endian, not pipe mode) is handled,
 * in the layout perf's tools/perf/util/header.c writes and reads:
 *
 *	struct perf_file_header		at 0 (104 bytes)
 *	__u64 ids[]			of every attr, in attr order
 *	struct perf_file_attr[]		{ attr, { ids offset, ids size } }
 *	data				the records
 *	struct perf_file_section[]	one per feature bit set, in bit order
 *	feature sections
 *
 * Functions that fail return NULL or a negative errno and leave a
 * message for people in pd_error().
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

/* perf's own record types (tools/lib/perf/include/perf/event.h). */
enum pd_user_event_type {
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

/* Feature bits of the file header (tools/perf/util/header.h). */
enum pd_feature {
	PD_FEAT_TRACING_DATA	= 1,
	PD_FEAT_BUILD_ID	= 2,
	PD_FEAT_HOSTNAME	= 3,
	PD_FEAT_OSRELEASE	= 4,
	PD_FEAT_VERSION		= 5,
	PD_FEAT_ARCH		= 6,
	PD_FEAT_NRCPUS		= 7,
	PD_FEAT_CPUDESC		= 8,
	PD_FEAT_CPUID		= 9,
	PD_FEAT_TOTAL_MEM	= 10,
	PD_FEAT_CMDLINE		= 11,
	PD_FEAT_EVENT_DESC	= 12,
	PD_FEAT_CPU_TOPOLOGY	= 13,
	PD_FEAT_NUMA_TOPOLOGY	= 14,
	PD_FEAT_BRANCH_STACK	= 15,
	PD_FEAT_PMU_MAPPINGS	= 16,
	PD_FEAT_GROUP_DESC	= 17,
	PD_FEAT_AUXTRACE	= 18,
	PD_FEAT_STAT		= 19,
	PD_FEAT_CACHE		= 20,
	PD_FEAT_SAMPLE_TIME	= 21,
	PD_FEAT_MEM_TOPOLOGY	= 22,
	PD_FEAT_CLOCKID		= 23,
	PD_FEAT_DIR_FORMAT	= 24,
	PD_FEAT_BPF_PROG_INFO	= 25,
	PD_FEAT_BPF_BTF		= 26,
	PD_FEAT_COMPRESSED	= 27,
	PD_FEAT_CPU_PMU_CAPS	= 28,
	PD_FEAT_CLOCK_DATA	= 29,
	PD_FEAT_HYBRID_TOPOLOGY	= 30,
	PD_FEAT_PMU_CAPS	= 31,
	PD_FEAT_BITS		= 256,
};

#define PD_FILE_HEADER_SIZE	104	/* sizeof(struct perf_file_header) */
#define PD_BUILD_ID_SIZE	20	/* perf's BUILD_ID_SIZE */
#define PD_NAME_ALIGN		64	/* strings in feature sections */
#define PD_MAX_EVENT_SIZE	0xfff8	/* largest 8-byte multiple in header.size */

/* PERF_SAMPLE_BRANCH_COUNTERS (Linux 6.8), not in every <linux/perf_event.h>. */
#define PD_SAMPLE_BRANCH_COUNTERS	(1ULL << 19)

/* The last error message of this library, for people. */
const char *pd_error(void);
/* Set it (for the users of this library: stitch, the subcommands). */
void pd_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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

/*
 * The flag word of perf_event_attr (disabled, inherit, ... sigtrap,
 * defer_callchain, defer_output), through which the bits that an older
 * <linux/perf_event.h> lacks are set and tested.
 */
static inline __u64 pd_attr__flags(const struct perf_event_attr *attr)
{
	__u64 word;

	memcpy(&word, (const char *)attr + PERF_DEFER_ATTR_FLAGS_OFFSET, sizeof(word));
	return word;
}

static inline void pd_attr__set_flags(struct perf_event_attr *attr, __u64 word)
{
	memcpy((char *)attr + PERF_DEFER_ATTR_FLAGS_OFFSET, &word, sizeof(word));
}

static inline bool pd_attr__defer_callchain(const struct perf_event_attr *attr)
{
	return pd_attr__flags(attr) >> PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN & 1;
}

static inline bool pd_attr__defer_output(const struct perf_event_attr *attr)
{
	return pd_attr__flags(attr) >> PERF_DEFER_ATTR_BIT_DEFER_OUTPUT & 1;
}

static inline void pd_attr__set_defer(struct perf_event_attr *attr, bool callchain, bool output)
{
	__u64 word = pd_attr__flags(attr);

	word &= ~(1ULL << PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN |
		  1ULL << PERF_DEFER_ATTR_BIT_DEFER_OUTPUT);
	word |= (__u64)callchain << PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN;
	word |= (__u64)output << PERF_DEFER_ATTR_BIT_DEFER_OUTPUT;
	pd_attr__set_flags(attr, word);
}

/*
 * perf record --call-graph dwarf's x86-64 register mask (AX..SS, R8..R15;
 * not DS, ES, FS, GS) and its default stack dump size.
 */
#define PD_DWARF_REGS_MASK	0xff0fffULL
#define PD_DWARF_STACK_SIZE	8192

/*
 * An attr whose samples get their user registers and stack from
 * PERF_DEFER_RECORD_USER_DUMP records (record --call-graph dwarf,defer):
 * sample_regs_user and sample_stack_user say what the dumps hold, while
 * sample_type has neither PERF_SAMPLE_REGS_USER nor PERF_SAMPLE_STACK_USER.
 */
static inline bool pd_attr__user_dump(const struct perf_event_attr *attr)
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
static inline void pd_attr__stitch_user_dump(struct perf_event_attr *attr)
{
	if (!pd_attr__user_dump(attr))
		return;
	attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr->exclude_callchain_user = 1;
}

/* Clear defer_callchain and defer_output: attrs of a stitched file. */
static inline void pd_attr__clear_defer(struct perf_event_attr *attr)
{
	pd_attr__set_defer(attr, false, false);
}

/*
 * An event list: the attrs of a file with their ids, and perf's rules to
 * find the attr of a record (evlist__event2evsel()): with one attr, that
 * one; otherwise by the id at the position that PERF_SAMPLE_IDENTIFIER or
 * PERF_SAMPLE_ID gives, which must be the same for every attr.
 */
struct pd_attr {
	struct perf_event_attr attr;	/* as in the file, cut to this size */
	__u32 file_size;		/* attr.size in the file (0 means 64) */
	__u32 nr_ids;
	__u64 *ids;
	char *name;			/* NULL when unnamed */
	int idx;
	bool cut;			/* the file's attr had non-zero bytes past ours */
};

struct pd_evlist;

struct pd_evlist *pd_evlist__new(void);
void pd_evlist__delete(struct pd_evlist *el);
int pd_evlist__add(struct pd_evlist *el, const struct perf_event_attr *attr,
		   const __u64 *ids, __u32 nr_ids, const char *name);
unsigned int pd_evlist__nr(const struct pd_evlist *el);
struct pd_attr *pd_evlist__attr(const struct pd_evlist *el, unsigned int idx);
/* name, else one made from type and config ("cpu-clock", "cycles", ...) */
const char *pd_attr__name(const struct pd_attr *a, char *buf, size_t size);
/* 0, or -EINVAL when the attrs' id positions or sample_id_all disagree. */
int pd_evlist__check(const struct pd_evlist *el);
/*
 * The attr of a record, NULL (and a pd_error()) when the record is too
 * short for its id or the id is unknown.  Synthesized records (id 0) and
 * records of files without sample_id_all go to the first attr, as in perf.
 */
const struct pd_attr *pd_evlist__find(const struct pd_evlist *el, const void *event);

/*
 * Writer.  Records are buffered and every write, fsync and close error is
 * returned, so that a full disk is an error and never a short file.
 */

struct pd_build_id_entry {
	const char *path;		/* "[kernel.kallsyms]" for the kernel */
	pid_t pid;			/* -1 for host DSOs, as perf writes */
	bool kernel;			/* PERF_RECORD_MISC_KERNEL, else USER */
	__u8 size;			/* bytes of build_id used, <= 20 */
	__u8 build_id[PD_BUILD_ID_SIZE];
};

/* A feature section copied as is (from another file, by 'stitch'); may be empty. */
struct pd_feat_raw {
	unsigned int feat;		/* enum pd_feature */
	const void *data;
	size_t size;
};

struct pd_features {
	/*
	 * HEADER_CMDLINE: the program (NULL: /proc/self/exe), then argv[0..argc).
	 * perf writes its own path, then its argv without argv[0].
	 */
	const char *cmdline;
	int argc;
	const char **argv;
	/* HEADER_CLOCKID and HEADER_CLOCK_DATA, when use_clockid (perf -k). */
	int clockid;
	bool use_clockid;
	/* HEADER_BUILD_ID */
	const struct pd_build_id_entry *build_ids;
	size_t nr_build_ids;
	/*
	 * Sections copied as they are.  A raw section replaces the one the
	 * writer would make, except EVENT_DESC, which always comes from the
	 * attrs added to the writer.
	 */
	const struct pd_feat_raw *raw;
	size_t nr_raw;
	/*
	 * Do not describe this host (hostname, osrelease, version, arch,
	 * nrcpus, cpudesc, total_mem): the file was made from another one.
	 */
	bool no_host;
};

struct pd_writer;

/* NULL + errno on error.  The file is created 0600 and truncated. */
struct pd_writer *pd_writer__open(const char *path);
/* Write to an open fd (not closed by the writer, never unlinked). */
struct pd_writer *pd_writer__open_fd(int fd, const char *name);
/*
 * Before the first record.  attr->size is written as
 * sizeof(struct perf_event_attr); name (may be NULL) goes into
 * HEADER_EVENT_DESC, which is what perf shows.  0 or -errno.
 */
int pd_writer__add_attr(struct pd_writer *w, const struct perf_event_attr *attr,
			const __u64 *ids, __u32 nr_ids, const char *name);
/* One record, header first; size must equal header.size.  0 or -errno. */
int pd_writer__write(struct pd_writer *w, const void *event, size_t size);
/* Bytes of records written so far. */
__u64 pd_writer__data_size(const struct pd_writer *w);
/*
 * Write the features (f may be NULL: host features and EVENT_DESC only)
 * and the final header, fsync and close.  0 or -errno.  Always frees w.
 * On error a file opened by path is removed: never a short file.
 */
int pd_writer__close(struct pd_writer *w, const struct pd_features *f);
/* On a fatal error elsewhere: remove a file opened by path, free w. */
void pd_writer__abort(struct pd_writer *w);

/*
 * Build-ids.  *len is the size of out on entry (at least 20) and the
 * build-id size on return.  0, or -errno (-ENODATA: no GNU build-id note).
 */
int pd_build_id(const char *path, __u8 *out, size_t *len);
/* From a file of raw ELF notes: /sys/kernel/notes, /sys/module/M/notes/... */
int pd_build_id_notes(const char *path, __u8 *out, size_t *len);
/* "%02x" each byte into buf (2 * len + 1 bytes). */
char *pd_build_id__sprintf(const __u8 *id, size_t len, char *buf);

/*
 * Reader.  The file is mapped; every offset and size is checked against
 * the file size before use, so corrupt or truncated input gives an error
 * and never a crash.  Records are handed out 8-byte aligned.  Pages well
 * behind the read position are given back as it goes, so memory does not
 * grow with the file; a record read before stays valid (read again).
 */
struct pd_reader;

struct pd_reader *pd_reader__open(const char *path);
/* Read from memory (copied); name is used in messages. */
struct pd_reader *pd_reader__open_mem(const void *buf, size_t size, const char *name);
void pd_reader__close(struct pd_reader *r);

const char *pd_reader__name(const struct pd_reader *r);
const struct pd_evlist *pd_reader__evlist(const struct pd_reader *r);
unsigned int pd_reader__nr_attrs(const struct pd_reader *r);
const struct pd_attr *pd_reader__attr(const struct pd_reader *r, unsigned int idx);
__u64 pd_reader__data_offset(const struct pd_reader *r);
__u64 pd_reader__data_size(const struct pd_reader *r);

/*
 * The next record: 1 and *event (valid until the next call), 0 at the
 * end of the data section, -EINVAL on a corrupt record (see pd_error()).
 * Checks: header.size >= 8 and within the data section, a multiple of 8
 * for kernel records, the fixed part of every kernel record type, nr of
 * CALLCHAIN_DEFERRED, and the payload of AUXTRACE and TRACING_DATA
 * (skipped: it follows the record).
 */
int pd_reader__next(struct pd_reader *r, const struct perf_event_header **event);
/* true when event points into the file's mapping: it lasts until close */
bool pd_reader__event_stable(const struct pd_reader *r, const void *event);
/* File offset of the record the last pd_reader__next() gave. */
__u64 pd_reader__offset(const struct pd_reader *r);
/* Go back to the first record. */
void pd_reader__rewind(struct pd_reader *r);

/* Feature sections: true and the bytes when the bit is set and in bounds. */
bool pd_reader__has_feat(const struct pd_reader *r, unsigned int feat);
bool pd_reader__feat(const struct pd_reader *r, unsigned int feat,
		     const void **data, size_t *size);
/* A string feature (hostname, ...) or NULL; NUL-terminated within bounds. */
const char *pd_reader__feat_string(const struct pd_reader *r, unsigned int feat);

/*
 * Samples.  Fields missing from sample_type are -1 (pid, tid, cpu, time,
 * id, stream_id) or 0, as perf's evsel__parse_sample() leaves them.
 */
struct pd_sample {
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
 * pd_error().
 */
int pd_sample__parse(const struct perf_event_attr *attr, const void *event,
		     struct pd_sample *sample);

/* "SAMPLE", "CALLCHAIN_DEFERRED", "FINISHED_ROUND", ... or "UNKNOWN". */
const char *pd_event__name(__u32 type);

#endif /* PERF_DEFER_PERF_DATA_H */
