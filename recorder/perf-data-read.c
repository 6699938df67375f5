// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf.data reader, in the layout perf_session__read_header() and the
 * feature process_*() functions of perf's tools/perf/util/header.c read.
 * See perf-data.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf-data.h"

#define READ_KEEP		(8UL << 20)	/* mapped bytes kept behind the read position */

/* a + b <= limit, without overflow */
static bool in_bounds(__u64 a, __u64 b, __u64 limit)
{
	return a <= limit && b <= limit - a;
}

struct perf_data_reader {
	char *name;
	const unsigned char *map;
	size_t size;
	void *mapping;		/* munmap() it */
	void *copy;		/* free() it */
	struct evlist *el;
	__u64 data_offset, data_size, data_end;
	__u64 pos, last;
	__u64 dropped;		/* mapped pages below this were given back */
	__u64 features[PD_FEAT_BITS / 64];
	__u64 feat_off[PD_FEAT_BITS], feat_size[PD_FEAT_BITS];
	char *feat_str[PD_FEAT_BITS];
	__u64 abuf[PD_MAX_EVENT_SIZE / 8 + 1];	/* misaligned records go here */
};

static int reader__fail(struct perf_data_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int reader__fail(struct perf_data_reader *r, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error__set("%s: %s", r->name, msg);
	return -EINVAL;
}

/* Names of the events, from HEADER_EVENT_DESC; ignored when malformed, as in perf. */
static void reader__event_desc(struct perf_data_reader *r)
{
	const unsigned char *p;
	size_t size, off = 8;
	__u32 nre, sz;

	if (!perf_data_reader__feat(r, PD_FEAT_EVENT_DESC, (const void **)&p, &size) || size < 8)
		return;
	nre = rd32(p);
	sz = rd32(p + 4);
	if (sz < PERF_ATTR_SIZE_VER0)
		return;
	for (__u32 i = 0; i < nre && i < evlist__nr(r->el); i++) {
		struct evsel *a;
		__u32 nri, len;
		char *name;

		if (size - off < (size_t)sz + 8)
			return;
		off += sz;
		nri = rd32(p + off);
		len = rd32(p + off + 4);
		off += 8;
		if (len > size - off)
			return;
		name = strndup((const char *)p + off, len);
		if (!name)
			return;
		a = evlist__attr(r->el, i);
		free(a->name);
		a->name = name;
		off += len;
		if (nri > (size - off) / 8)
			return;
		off += (size_t)nri * 8;
	}
}

static int reader__init(struct perf_data_reader *r)
{
	__u64 magic, hsize, attr_size, attrs_off, attrs_size, nr_attrs, feat_offset;
	const unsigned char *m = r->map;
	unsigned int nr_feat = 0, k = 0;

	if (r->size < 16)
		return reader__fail(r, "not a perf.data file: only %zu bytes", r->size);
	magic = rd64(m);
	hsize = rd64(m + 8);
	if (magic == PD_MAGIC_SWAPPED)
		return reader__fail(r, "big-endian perf.data files are not supported");
	if (magic == PD_MAGIC_LEGACY)
		return reader__fail(r, "legacy PERFFILE files are not supported");
	if (magic != PD_MAGIC)
		return reader__fail(r, "not a perf.data file (bad magic %#" PRIx64 ")", (uint64_t)magic);
	if (hsize == PD_PIPE_HEADER_SIZE)
		return reader__fail(r, "pipe-mode perf.data is not supported: convert it with 'perf inject -i %s -o FILE'",
				    r->name);
	if (hsize != PD_FILE_HEADER_SIZE && hsize != PD_FILE_HEADER_NO_FEAT)
		return reader__fail(r, "unknown file header size %" PRIu64, (uint64_t)hsize);
	if (r->size < hsize)
		return reader__fail(r, "truncated: the file header needs %" PRIu64 " bytes, the file has %zu",
				    (uint64_t)hsize, r->size);
	attr_size = rd64(m + 16);
	attrs_off = rd64(m + 24);
	attrs_size = rd64(m + 32);
	r->data_offset = rd64(m + 40);
	r->data_size = rd64(m + 48);
	if (hsize == PD_FILE_HEADER_SIZE)
		memcpy(r->features, m + PD_FILE_HEADER_NO_FEAT, sizeof(r->features));

	if (attr_size < PERF_ATTR_SIZE_VER0 + PD_FILE_SECTION_SIZE ||
	    attr_size > PD_MAX_FILE_ATTR_SIZE + PD_FILE_SECTION_SIZE)
		return reader__fail(r, "bad attr size %" PRIu64, (uint64_t)attr_size);
	if (!in_bounds(attrs_off, attrs_size, r->size))
		return reader__fail(r, "truncated: the attr section [%#" PRIx64 ", +%#" PRIx64 ") ends past the end of the file (%#zx)",
				    (uint64_t)attrs_off, (uint64_t)attrs_size, r->size);
	if (attrs_size % attr_size)
		return reader__fail(r, "attr section size %" PRIu64 " is not a multiple of the attr size %" PRIu64,
				    (uint64_t)attrs_size, (uint64_t)attr_size);
	nr_attrs = attrs_size / attr_size;
	if (!nr_attrs)
		return reader__fail(r, "no event attrs");
	if (!in_bounds(r->data_offset, r->data_size, r->size))
		return reader__fail(r, "truncated: the data section [%#" PRIx64 ", +%#" PRIx64 ") ends past the end of the file (%#zx)",
				    (uint64_t)r->data_offset, (uint64_t)r->data_size, r->size);
	r->data_end = r->data_offset + r->data_size;
	r->pos = r->data_offset;

	for (__u64 i = 0; i < nr_attrs; i++) {
		const unsigned char *fa = m + attrs_off + i * attr_size;
		__u32 sz = rd32(fa + 4) ? rd32(fa + 4) : PERF_ATTR_SIZE_VER0;
		__u64 ids_off = rd64(fa + attr_size - 16), ids_size = rd64(fa + attr_size - 8);
		struct perf_event_attr attr;
		struct evsel *a;
		__u64 *ids;
		int err;

		if ((__u64)sz + PD_FILE_SECTION_SIZE != attr_size)
			return reader__fail(r, "attr %" PRIu64 ": size %u does not match the attr section's %" PRIu64,
					    (uint64_t)i, sz, (uint64_t)(attr_size - PD_FILE_SECTION_SIZE));
		if (!in_bounds(ids_off, ids_size, r->size) || ids_size % 8)
			return reader__fail(r, "attr %" PRIu64 ": ids [%#" PRIx64 ", +%#" PRIx64 ") are not within the file",
					    (uint64_t)i, (uint64_t)ids_off, (uint64_t)ids_size);
		if (ids_size / 8 > UINT32_MAX)
			return reader__fail(r, "attr %" PRIu64 ": too many ids", (uint64_t)i);
		memset(&attr, 0, sizeof(attr));
		memcpy(&attr, fa, sz < PD_ATTR_SIZE ? sz : PD_ATTR_SIZE);
		ids = NULL;
		if (ids_size) {
			/* copied: the file's ids need not be aligned */
			ids = malloc(ids_size);
			if (!ids)
				return reader__fail(r, "%s", strerror(ENOMEM));
			memcpy(ids, m + ids_off, ids_size);
		}
		err = evlist__add(r->el, &attr, ids, (__u32)(ids_size / 8), NULL);
		free(ids);
		if (err)
			return reader__fail(r, "%s", strerror(-err));
		a = evlist__attr(r->el, evlist__nr(r->el) - 1);
		for (__u32 b = PD_ATTR_SIZE; b < sz; b++)
			if (fa[b])
				a->cut = true;
		a->file_size = rd32(fa + 4);
	}
	if (evlist__check(r->el)) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", error__msg());
		return reader__fail(r, "%s", msg);
	}

	/* features: a table of sections right after the data */
	for (unsigned int i = 0; i < PD_FEAT_BITS / 64; i++)
		nr_feat += __builtin_popcountll(r->features[i]);
	if (!nr_feat)
		goto names;
	if (!r->data_size) {
		/* an interrupted perf record: the features were never written */
		memset(r->features, 0, sizeof(r->features));
		goto names;
	}
	feat_offset = r->data_end;
	if (!in_bounds(feat_offset, (__u64)nr_feat * PD_FILE_SECTION_SIZE, r->size))
		return reader__fail(r, "truncated: the feature section table at %#" PRIx64 " (%u entries) ends past the end of the file (%#zx)",
				    (uint64_t)feat_offset, nr_feat, r->size);
	for (unsigned int feat = 0; feat < PD_FEAT_BITS; feat++) {
		const unsigned char *sec;

		if (!(r->features[feat / 64] >> (feat % 64) & 1))
			continue;
		sec = m + feat_offset + (size_t)k++ * PD_FILE_SECTION_SIZE;
		r->feat_off[feat] = rd64(sec);
		r->feat_size[feat] = rd64(sec + 8);
		if (!in_bounds(r->feat_off[feat], r->feat_size[feat], r->size))
			return reader__fail(r, "truncated: feature %u [%#" PRIx64 ", +%#" PRIx64 ") ends past the end of the file (%#zx)",
					    feat, (uint64_t)r->feat_off[feat],
					    (uint64_t)r->feat_size[feat], r->size);
	}
names:
	reader__event_desc(r);
	return 0;
}

static struct perf_data_reader *reader__new(const char *name)
{
	struct perf_data_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->name = strdup(name);
	r->el = evlist__new();
	if (!r->name || !r->el) {
		free(r->name);
		evlist__delete(r->el);
		free(r);
		return NULL;
	}
	return r;
}

struct perf_data_reader *perf_data_reader__open(const char *path)
{
	struct perf_data_reader *r;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		error__set("cannot open %s: %s", path, strerror(err));
		errno = err;
		return NULL;
	}
	r = reader__new(path);
	if (!r) {
		close(fd);
		error__set("%s: %s", path, strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	if (fstat(fd, &st)) {
		err = errno;
		reader__fail(r, "%s", strerror(err));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EINVAL;
		reader__fail(r, "not a regular file (pipe-mode input is not supported)");
		goto fail;
	}
	if (st.st_size == 0) {
		err = EINVAL;
		reader__fail(r, "the file is empty");
		goto fail;
	}
	r->size = st.st_size;
	r->mapping = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (r->mapping == MAP_FAILED) {
		err = errno;
		r->mapping = NULL;
		reader__fail(r, "cannot map: %s", strerror(err));
		goto fail;
	}
	r->map = r->mapping;
	close(fd);
	fd = -1;
	if (reader__init(r)) {
		err = EINVAL;
		goto fail;
	}
	return r;
fail:
	if (fd >= 0)
		close(fd);
	perf_data_reader__close(r);
	errno = err;
	return NULL;
}

struct perf_data_reader *perf_data_reader__open_mem(const void *buf, size_t size, const char *name)
{
	struct perf_data_reader *r = reader__new(name ? name : "perf.data");

	if (!r) {
		error__set("%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	r->copy = malloc(size ? size : 1);
	if (!r->copy) {
		perf_data_reader__close(r);
		error__set("%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	memcpy(r->copy, buf, size);
	r->map = r->copy;
	r->size = size;
	if (reader__init(r)) {
		perf_data_reader__close(r);
		errno = EINVAL;
		return NULL;
	}
	return r;
}

void perf_data_reader__close(struct perf_data_reader *r)
{
	if (!r)
		return;
	if (r->mapping)
		munmap(r->mapping, r->size);
	for (unsigned int i = 0; i < PD_FEAT_BITS; i++)
		free(r->feat_str[i]);
	free(r->copy);
	evlist__delete(r->el);
	free(r->name);
	free(r);
}

const char *perf_data_reader__name(const struct perf_data_reader *r)
{
	return r->name;
}

const struct evlist *perf_data_reader__evlist(const struct perf_data_reader *r)
{
	return r->el;
}

unsigned int perf_data_reader__nr_attrs(const struct perf_data_reader *r)
{
	return evlist__nr(r->el);
}

const struct evsel *perf_data_reader__attr(const struct perf_data_reader *r, unsigned int idx)
{
	return evlist__attr(r->el, idx);
}

__u64 perf_data_reader__data_offset(const struct perf_data_reader *r)
{
	return r->data_offset;
}

__u64 perf_data_reader__data_size(const struct perf_data_reader *r)
{
	return r->data_size;
}

/* Fixed part of each kernel record, header included. */
static const __u16 min_size[] = {
	[PERF_RECORD_MMAP]		= 40,
	[PERF_RECORD_LOST]		= 24,
	[PERF_RECORD_COMM]		= 16,
	[PERF_RECORD_EXIT]		= 32,
	[PERF_RECORD_THROTTLE]		= 32,
	[PERF_RECORD_UNTHROTTLE]	= 32,
	[PERF_RECORD_FORK]		= 32,
	[PERF_RECORD_READ]		= 24,
	[PERF_RECORD_SAMPLE]		= 8,
	[PERF_RECORD_MMAP2]		= 72,
	[PERF_RECORD_AUX]		= 32,
	[PERF_RECORD_ITRACE_START]	= 16,
	[PERF_RECORD_LOST_SAMPLES]	= 16,
	[PERF_RECORD_SWITCH]		= 8,
	[PERF_RECORD_SWITCH_CPU_WIDE]	= 16,
	[PERF_RECORD_NAMESPACES]	= 24,
	[PERF_RECORD_KSYMBOL]		= 24,
	[PERF_RECORD_BPF_EVENT]		= 24,
	[PERF_RECORD_CGROUP]		= 16,
	[PERF_RECORD_TEXT_POKE]		= 20,
	[PERF_RECORD_AUX_OUTPUT_HW_ID]	= 16,
	[PERF_DEFER_RECORD_CALLCHAIN_DEFERRED] = 24,
	[PD_RECORD_HEADER_TRACING_DATA]	= 12,
	[PD_RECORD_HEADER_BUILD_ID]	= PD_BUILD_ID_RECORD_SIZE,
	[PD_RECORD_ID_INDEX]		= 16,
	[PD_RECORD_AUXTRACE]		= 48,
	[PD_RECORD_THREAD_MAP]		= 16,
	[PD_RECORD_CPU_MAP]		= 10,
	[PD_RECORD_EVENT_UPDATE]	= 24,
	[PD_RECORD_TIME_CONV]		= 32,
};

/*
 * Give back the pages of the mapping well behind the read position, so
 * that reading a file of any length takes the same memory.  The mapping
 * is private and never written: a page read again (a record still queued
 * by the caller) comes back from the file as it was.
 */
static void reader__drop_behind(struct perf_data_reader *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	__u64 from = r->dropped / page * page, to = (r->pos - READ_KEEP) / page * page;

	/* a failure only costs memory */
	if (to > from)
		madvise((unsigned char *)r->mapping + from, to - from, MADV_DONTNEED);
	r->dropped = to;
}

int perf_data_reader__next(struct perf_data_reader *r, const struct perf_event_header **event)
{
	struct perf_event_header h;
	const unsigned char *p;
	__u64 left, extra = 0;

	if (r->pos >= r->data_end)
		return 0;
	left = r->data_end - r->pos;
	if (left < sizeof(h))
		return reader__fail(r, "record at %#" PRIx64 ": truncated header (%" PRIu64 " bytes left in the data section)",
				    (uint64_t)r->pos, (uint64_t)left);
	p = r->map + r->pos;
	h = rdhdr(p);
	if (h.size < sizeof(h))
		return reader__fail(r, "record at %#" PRIx64 ": size %u is smaller than a record header",
				    (uint64_t)r->pos, h.size);
	if (h.size > left)
		return reader__fail(r, "record at %#" PRIx64 " (%s): size %#x runs past the end of the data section at %#" PRIx64,
				    (uint64_t)r->pos, perf_event__name(h.type), h.size,
				    (uint64_t)r->data_end);
	if ((h.type < PD_RECORD_USER_TYPE_START || h.type >= PD_RECORD_HEADER_MAX_KNOWN) &&
	    h.size % 8)
		return reader__fail(r, "record at %#" PRIx64 " (%s): size %#x is not a multiple of 8",
				    (uint64_t)r->pos, perf_event__name(h.type), h.size);
	if (h.type < sizeof(min_size) / sizeof(min_size[0]) && h.size < min_size[h.type])
		return reader__fail(r, "record at %#" PRIx64 " (%s): size %#x is smaller than the record's fixed part (%#x)",
				    (uint64_t)r->pos, perf_event__name(h.type), h.size,
				    min_size[h.type]);
	if (h.type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED && rd64(p + 16) > (h.size - 24u) / 8)
		return reader__fail(r, "record at %#" PRIx64 " (CALLCHAIN_DEFERRED): nr %" PRIu64 " runs past the end of the record (size %#x)",
				    (uint64_t)r->pos, (uint64_t)rd64(p + 16), h.size);
	/* these two carry a payload after the record */
	if (h.type == PD_RECORD_AUXTRACE)
		extra = rd64(p + 8);
	else if (h.type == PD_RECORD_HEADER_TRACING_DATA)
		extra = ALIGN_UP((__u64)rd32(p + 8), 8);
	if (extra > left - h.size)
		return reader__fail(r, "record at %#" PRIx64 " (%s): its %" PRIu64 "-byte payload runs past the end of the data section",
				    (uint64_t)r->pos, perf_event__name(h.type), (uint64_t)extra);
	if ((uintptr_t)p % 8) {
		memcpy(r->abuf, p, h.size);
		p = (const unsigned char *)r->abuf;
	}
	if (r->mapping && r->pos > r->dropped + 2 * READ_KEEP)
		reader__drop_behind(r);
	r->last = r->pos;
	r->pos += h.size + extra;
	*event = (const struct perf_event_header *)p;
	return 1;
}

bool perf_data_reader__event_stable(const struct perf_data_reader *r, const void *event)
{
	const unsigned char *p = event;

	return p >= r->map && p < r->map + r->size;
}

__u64 perf_data_reader__offset(const struct perf_data_reader *r)
{
	return r->last;
}

void perf_data_reader__rewind(struct perf_data_reader *r)
{
	r->pos = r->data_offset;
	r->dropped = 0;
}

bool perf_data_reader__has_feat(const struct perf_data_reader *r, unsigned int feat)
{
	return feat < PD_FEAT_BITS && (r->features[feat / 64] >> (feat % 64) & 1);
}

bool perf_data_reader__feat(const struct perf_data_reader *r, unsigned int feat,
			    const void **data, size_t *size)
{
	if (!perf_data_reader__has_feat(r, feat))
		return false;
	*data = r->map + r->feat_off[feat];
	*size = r->feat_size[feat];
	return true;
}

const char *perf_data_reader__feat_string(const struct perf_data_reader *r, unsigned int feat)
{
	struct perf_data_reader *rw = (struct perf_data_reader *)r;
	const unsigned char *p;
	size_t size;
	__u32 len;

	if (feat >= PD_FEAT_BITS)
		return NULL;
	if (r->feat_str[feat])
		return r->feat_str[feat];
	if (!perf_data_reader__feat(r, feat, (const void **)&p, &size) || size < 4)
		return NULL;
	len = rd32(p);
	if (len > size - 4)
		return NULL;
	rw->feat_str[feat] = strndup((const char *)p + 4, len);
	return r->feat_str[feat];
}
