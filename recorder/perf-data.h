/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_PERF_DATA_H
#define PERF_DEFER_PERF_DATA_H

/*
 * perf.data files: a writer (perf-data-write.c) and a reader
 * (perf-data-read.c).
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
 * message for people in error__msg().
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "build-id.h"
#include "event.h"
#include "evlist.h"
#include "util.h"

/* Feature bits of the file header (tools/perf/util/header.h). */
enum header_feature {
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
#define PD_NAME_ALIGN		64	/* strings in feature sections */

/* The layout, for the writer and the reader. */
#define PD_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PD_MAGIC_SWAPPED	0x50455246494c4532ULL
#define PD_MAGIC_LEGACY		0x454c494646524550ULL	/* "PERFFILE" */
#define PD_FILE_HEADER_NO_FEAT	72	/* offsetof(struct perf_file_header, adds_features) */
#define PD_PIPE_HEADER_SIZE	16
#define PD_FILE_SECTION_SIZE	16
#define PD_ATTR_SIZE		((__u32)sizeof(struct perf_event_attr))
#define PD_MAX_FILE_ATTR_SIZE	4096	/* bigger than any perf_event_attr yet */
/* perf's PERF_RECORD_MISC_BUILD_ID_SIZE: the size byte of a build-id entry is valid */
#define PD_MISC_BUILD_ID_SIZE	(1 << 15)
#define PD_BUILD_ID_RECORD_SIZE	36	/* sizeof(struct perf_record_header_build_id) */

/*
 * Writer.  Records are buffered and every write, fsync and close error is
 * returned, so that a full disk is an error and never a short file.
 */

/* A feature section copied as is (from another file, by 'stitch'); may be empty. */
struct feat_raw {
	unsigned int feat;		/* enum header_feature */
	const void *data;
	size_t size;
};

struct perf_data_features {
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
	const struct build_id_entry *build_ids;
	size_t nr_build_ids;
	/*
	 * Sections copied as they are.  A raw section replaces the one the
	 * writer would make, except EVENT_DESC, which always comes from the
	 * attrs added to the writer.
	 */
	const struct feat_raw *raw;
	size_t nr_raw;
	/*
	 * Do not describe this host (hostname, osrelease, version, arch,
	 * nrcpus, cpudesc, total_mem): the file was made from another one.
	 */
	bool no_host;
};

struct perf_data_writer;

/* NULL + errno on error.  The file is created 0600 and truncated. */
struct perf_data_writer *perf_data_writer__open(const char *path);
/* Write to an open fd (not closed by the writer, never unlinked). */
struct perf_data_writer *perf_data_writer__open_fd(int fd, const char *name);
/*
 * Before the first record.  attr->size is written as
 * sizeof(struct perf_event_attr); name (may be NULL) goes into
 * HEADER_EVENT_DESC, which is what perf shows.  0 or -errno.
 */
int perf_data_writer__add_attr(struct perf_data_writer *w, const struct perf_event_attr *attr,
			       const __u64 *ids, __u32 nr_ids, const char *name);
/* One record, header first; size must equal header.size.  0 or -errno. */
int perf_data_writer__write(struct perf_data_writer *w, const void *event, size_t size);
/* Bytes of records written so far. */
__u64 perf_data_writer__data_size(const struct perf_data_writer *w);
/*
 * Write the features (f may be NULL: host features and EVENT_DESC only)
 * and the final header, fsync and close.  0 or -errno.  Always frees w.
 * On error a file opened by path is removed: never a short file.
 */
int perf_data_writer__close(struct perf_data_writer *w, const struct perf_data_features *f);
/* On a fatal error elsewhere: remove a file opened by path, free w. */
void perf_data_writer__abort(struct perf_data_writer *w);

/*
 * Reader.  The file is mapped; every offset and size is checked against
 * the file size before use, so corrupt or truncated input gives an error
 * and never a crash.  Records are handed out 8-byte aligned.  Pages well
 * behind the read position are given back as it goes, so memory does not
 * grow with the file; a record read before stays valid (read again).
 */
struct perf_data_reader;

struct perf_data_reader *perf_data_reader__open(const char *path);
/* Read from memory (copied); name is used in messages. */
struct perf_data_reader *perf_data_reader__open_mem(const void *buf, size_t size, const char *name);
void perf_data_reader__close(struct perf_data_reader *r);

const char *perf_data_reader__name(const struct perf_data_reader *r);
const struct evlist *perf_data_reader__evlist(const struct perf_data_reader *r);
unsigned int perf_data_reader__nr_attrs(const struct perf_data_reader *r);
const struct evsel *perf_data_reader__attr(const struct perf_data_reader *r, unsigned int idx);
__u64 perf_data_reader__data_offset(const struct perf_data_reader *r);
__u64 perf_data_reader__data_size(const struct perf_data_reader *r);

/*
 * The next record: 1 and *event (valid until the next call), 0 at the
 * end of the data section, -EINVAL on a corrupt record (see error__msg()).
 * Checks: header.size >= 8 and within the data section, a multiple of 8
 * for kernel records, the fixed part of every kernel record type, nr of
 * CALLCHAIN_DEFERRED, and the payload of AUXTRACE and TRACING_DATA
 * (skipped: it follows the record).
 */
int perf_data_reader__next(struct perf_data_reader *r, const struct perf_event_header **event);
/* true when event points into the file's mapping: it lasts until close */
bool perf_data_reader__event_stable(const struct perf_data_reader *r, const void *event);
/* File offset of the record the last perf_data_reader__next() gave. */
__u64 perf_data_reader__offset(const struct perf_data_reader *r);
/* Go back to the first record. */
void perf_data_reader__rewind(struct perf_data_reader *r);

/* Feature sections: true and the bytes when the bit is set and in bounds. */
bool perf_data_reader__has_feat(const struct perf_data_reader *r, unsigned int feat);
bool perf_data_reader__feat(const struct perf_data_reader *r, unsigned int feat,
			    const void **data, size_t *size);
/* A string feature (hostname, ...) or NULL; NUL-terminated within bounds. */
const char *perf_data_reader__feat_string(const struct perf_data_reader *r, unsigned int feat);

#endif /* PERF_DEFER_PERF_DATA_H */
