// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf.data writer: header, attrs, records and the feature sections, in
 * the layout perf's tools/perf/util/header.c reads.  See perf-data.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "header-host.h"
#include "perf-data.h"

#ifndef PERF_DEFER_VERSION
#define PERF_DEFER_VERSION "unknown"
#endif

#define WRITE_BUFFER_SIZE	(256 * 1024)

/* ---- growable buffer for feature sections (header-host.h) ------------ */

void buf__put(struct buf *b, const void *data, size_t n)
{
	if (b->oom || !n)
		return;
	if (b->len + n > b->alloc) {
		size_t a = b->alloc ? b->alloc : 256;
		unsigned char *p;

		while (a < b->len + n)
			a *= 2;
		p = realloc(b->p, a);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->alloc = a;
	}
	if (data)
		memcpy(b->p + b->len, data, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

void buf__u32(struct buf *b, __u32 v)
{
	buf__put(b, &v, sizeof(v));
}

void buf__u64(struct buf *b, __u64 v)
{
	buf__put(b, &v, sizeof(v));
}

void buf__string(struct buf *b, const char *s)
{
	size_t olen = strlen(s) + 1, len = ALIGN_UP(olen, PD_NAME_ALIGN);

	buf__u32(b, (__u32)len);
	buf__put(b, s, olen);
	buf__put(b, NULL, len - olen);
}

/* ---- writer ---------------------------------------------------------- */

struct perf_data_writer {
	int fd;
	bool own_fd;		/* opened by path: close it, unlink it on failure */
	bool regular;		/* fsync it */
	char *path;
	unsigned char *buf;
	size_t len;
	__u64 flushed;		/* bytes written to fd */
	struct evlist *el;
	bool started;
	__u64 attrs_offset, data_offset;
	__u64 first_time, last_time;	/* of the samples: HEADER_SAMPLE_TIME */
	int err;		/* first error, sticky */
};

static struct perf_data_writer *writer__new(int fd, const char *name)
{
	struct perf_data_writer *w = calloc(1, sizeof(*w));
	struct stat st;

	if (!w)
		return NULL;
	w->fd = fd;
	w->path = strdup(name ? name : "perf.data");
	w->buf = malloc(WRITE_BUFFER_SIZE);
	w->el = evlist__new();
	if (!w->path || !w->buf || !w->el) {
		free(w->path);
		free(w->buf);
		evlist__delete(w->el);
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->regular = !fstat(fd, &st) && S_ISREG(st.st_mode);
	return w;
}

struct perf_data_writer *perf_data_writer__open(const char *path)
{
	struct perf_data_writer *w;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		error__set("cannot create %s: %s", path, strerror(err));
		errno = err;
		return NULL;
	}
	w = writer__new(fd, path);
	if (!w) {
		err = errno;
		close(fd);
		unlink(path);
		errno = err;
		error__set("%s: %s", path, strerror(err));
		return NULL;
	}
	w->own_fd = true;
	return w;
}

struct perf_data_writer *perf_data_writer__open_fd(int fd, const char *name)
{
	struct perf_data_writer *w = writer__new(fd, name);

	if (!w) {
		error__set("%s: %s", name ? name : "perf.data", strerror(ENOMEM));
		errno = ENOMEM;
	}
	return w;
}

static int writer__fail(struct perf_data_writer *w, int err, const char *what)
{
	if (!w->err) {
		w->err = err;
		error__set("%s %s: %s", what, w->path, strerror(-err));
	}
	return w->err;
}

static int writer__flush(struct perf_data_writer *w)
{
	size_t done = 0;

	while (!w->err && done < w->len) {
		ssize_t n = write(w->fd, w->buf + done, w->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return writer__fail(w, n < 0 ? -errno : -EIO, "cannot write");
		done += n;
		w->flushed += n;
	}
	w->len = 0;
	return w->err;
}

static int writer__put(struct perf_data_writer *w, const void *data, size_t n)
{
	const unsigned char *p = data;

	while (!w->err && n) {
		size_t room = WRITE_BUFFER_SIZE - w->len, k = n < room ? n : room;

		if (p)
			memcpy(w->buf + w->len, p, k);
		else
			memset(w->buf + w->len, 0, k);
		w->len += k;
		n -= k;
		if (p)
			p += k;
		if (w->len == WRITE_BUFFER_SIZE)
			writer__flush(w);
	}
	return w->err;
}

static __u64 writer__pos(const struct perf_data_writer *w)
{
	return w->flushed + w->len;
}

int perf_data_writer__add_attr(struct perf_data_writer *w, const struct perf_event_attr *attr,
			       const __u64 *ids, __u32 nr_ids, const char *name)
{
	struct perf_event_attr a = *attr;
	int err;

	if (w->started) {
		error__set("%s: attrs must be added before the first record", w->path);
		return -EBUSY;
	}
	a.size = PD_ATTR_SIZE;
	err = evlist__add(w->el, &a, ids, nr_ids, name);
	if (err)
		error__set("%s: %s", w->path, strerror(-err));
	return err;
}

static void perf_data__write_header(const struct perf_data_writer *w, unsigned char *hdr,
				    __u64 data_size, const __u64 *features)
{
	__u64 v[9] = {
		PD_MAGIC, PD_FILE_HEADER_SIZE, PD_ATTR_SIZE + PD_FILE_SECTION_SIZE,
		w->attrs_offset, (__u64)evlist__nr(w->el) * (PD_ATTR_SIZE + PD_FILE_SECTION_SIZE),
		w->data_offset, data_size,
		0, 0,		/* event_types: unused */
	};

	memcpy(hdr, v, sizeof(v));
	memcpy(hdr + sizeof(v), features, PD_FEAT_BITS / 8);
}

/*
 * Header, ids and attrs.  The header says "data size 0" until
 * perf_data_writer__close() rewrites it, as perf record's first header does.
 */
static int writer__start(struct perf_data_writer *w)
{
	unsigned char hdr[PD_FILE_HEADER_SIZE];
	__u64 no_features[PD_FEAT_BITS / 64] = { 0 };
	__u64 ids_offset = PD_FILE_HEADER_SIZE;

	if (w->started)
		return w->err;
	w->started = true;
	if (!evlist__nr(w->el)) {
		error__set("%s: no attrs: add them before the first record", w->path);
		return w->err = -EINVAL;
	}
	w->attrs_offset = PD_FILE_HEADER_SIZE;
	for (unsigned int i = 0; i < evlist__nr(w->el); i++)
		w->attrs_offset += (__u64)evlist__attr(w->el, i)->nr_ids * 8;
	w->data_offset = w->attrs_offset +
			 (__u64)evlist__nr(w->el) * (PD_ATTR_SIZE + PD_FILE_SECTION_SIZE);

	perf_data__write_header(w, hdr, 0, no_features);
	writer__put(w, hdr, sizeof(hdr));
	for (unsigned int i = 0; i < evlist__nr(w->el); i++) {
		const struct evsel *a = evlist__attr(w->el, i);

		writer__put(w, a->ids, (size_t)a->nr_ids * 8);
	}
	for (unsigned int i = 0; i < evlist__nr(w->el); i++) {
		const struct evsel *a = evlist__attr(w->el, i);
		__u64 sec[2] = { ids_offset, (__u64)a->nr_ids * 8 };

		writer__put(w, &a->attr, PD_ATTR_SIZE);
		writer__put(w, sec, sizeof(sec));
		ids_offset += (__u64)a->nr_ids * 8;
	}
	return w->err;
}

/*
 * The earliest and latest sample times, for HEADER_SAMPLE_TIME (perf
 * record takes them from the samples it reads back for build-ids).
 * The time follows the identifier, ip and pid/tid words.
 */
static void writer__sample_time(struct perf_data_writer *w, const void *event, size_t size)
{
	const struct evsel *a = evlist__find(w->el, event);
	size_t off = sizeof(struct perf_event_header);
	__u64 type, t;

	if (!a || !((type = a->attr.sample_type) & PERF_SAMPLE_TIME))
		return;
	off += 8 * (!!(type & PERF_SAMPLE_IDENTIFIER) + !!(type & PERF_SAMPLE_IP) +
		    !!(type & PERF_SAMPLE_TID));
	if (off + 8 > size)
		return;
	memcpy(&t, (const char *)event + off, 8);
	if (!w->first_time || t < w->first_time)
		w->first_time = t;
	if (t > w->last_time)
		w->last_time = t;
}

int perf_data_writer__write(struct perf_data_writer *w, const void *event, size_t size)
{
	struct perf_event_header h;

	if (!w->started && writer__start(w))
		return w->err;
	if (size < sizeof(h) || (h = rdhdr(event)).size != size) {
		error__set("%s: record of %zu bytes with header.size %u", w->path, size,
			   size < sizeof(h) ? 0 : rdhdr(event).size);
		return -EINVAL;
	}
	if (h.type == PERF_RECORD_SAMPLE)
		writer__sample_time(w, event, size);
	return writer__put(w, event, size);
}

__u64 perf_data_writer__data_size(const struct perf_data_writer *w)
{
	return w->started ? writer__pos(w) - w->data_offset : 0;
}

static void writer__free(struct perf_data_writer *w, bool unlink_file)
{
	if (w->own_fd) {
		close(w->fd);
		if (unlink_file && w->regular)
			unlink(w->path);
	}
	evlist__delete(w->el);
	free(w->buf);
	free(w->path);
	free(w);
}

void perf_data_writer__abort(struct perf_data_writer *w)
{
	if (w)
		writer__free(w, true);
}

static void feat_cmdline(struct buf *b, const struct perf_data_features *f)
{
	char exe[PATH_MAX];
	const char *prog = f ? f->cmdline : NULL;
	int argc = f && f->argv ? f->argc : 0;

	if (!prog) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		prog = exe;
	}
	buf__u32(b, (__u32)argc + 1);
	buf__string(b, prog);
	for (int i = 0; i < argc; i++)
		buf__string(b, f->argv[i] ? f->argv[i] : "");
}

/*
 * The attrs here go without defer_callchain and defer_output, which stay in
 * the attrs section: perf < 6.19 refuses the whole list over a bit it does
 * not know ("Reserved bits are set unexpectedly"), and the list serves only
 * the names and 'report --header'.  perf >= 6.19 takes the bits from the
 * attrs section ('perf evlist -v' shows them).
 */
static void feat_event_desc(struct buf *b, const struct evlist *el)
{
	buf__u32(b, evlist__nr(el));
	buf__u32(b, PD_ATTR_SIZE);
	for (unsigned int i = 0; i < evlist__nr(el); i++) {
		const struct evsel *a = evlist__attr(el, i);
		struct perf_event_attr attr = a->attr;
		char name[64];

		attr__clear_defer(&attr);
		buf__put(b, &attr, PD_ATTR_SIZE);
		buf__u32(b, a->nr_ids);
		buf__string(b, evsel__name(a, name, sizeof(name)));
		buf__put(b, a->ids, (size_t)a->nr_ids * 8);
	}
}

static void feat_clock(struct buf *b, int feat, const struct perf_data_features *f)
{
	struct timespec res, tod, clk;

	if (feat == PD_FEAT_CLOCKID) {
		/* the resolution of the clock, in ns */
		if (clock_getres(f->clockid, &res))
			return;
		buf__u64(b, (__u64)res.tv_sec * 1000000000ULL + res.tv_nsec);
		return;
	}
	/* HEADER_CLOCK_DATA: version 1, clockid, TOD and clockid reference times */
	if (clock_gettime(CLOCK_REALTIME, &tod) || clock_gettime(f->clockid, &clk))
		return;
	buf__u32(b, 1);
	buf__u32(b, (__u32)f->clockid);
	buf__u64(b, (__u64)tod.tv_sec * 1000000000ULL + tod.tv_nsec);
	buf__u64(b, (__u64)clk.tv_sec * 1000000000ULL + clk.tv_nsec);
}

/* perf_record_header_build_id entries, filenames padded to 64 bytes. */
static void feat_build_id(struct buf *b, const struct perf_data_features *f)
{
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct build_id_entry *e = &f->build_ids[i];
		size_t name_len = strlen(e->path) + 1, len = ALIGN_UP(name_len, PD_NAME_ALIGN);
		unsigned char rec[PD_BUILD_ID_RECORD_SIZE] = { 0 };
		struct perf_event_header h = {
			.type = 0,
			.misc = (e->kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER) |
				PD_MISC_BUILD_ID_SIZE,
			.size = (__u16)(PD_BUILD_ID_RECORD_SIZE + len),
		};
		__s32 pid = e->pid;
		__u8 size = e->size > PD_BUILD_ID_SIZE ? PD_BUILD_ID_SIZE : e->size;

		if (PD_BUILD_ID_RECORD_SIZE + len > 0xffff)
			continue;	/* a path this long cannot be described */
		memcpy(rec, &h, sizeof(h));
		memcpy(rec + 8, &pid, 4);
		memcpy(rec + 12, e->build_id, size);
		rec[12 + PD_BUILD_ID_SIZE] = size;
		buf__put(b, rec, sizeof(rec));
		buf__put(b, e->path, name_len);
		buf__put(b, NULL, len - name_len);
	}
}

static const struct feat_raw *features__raw(const struct perf_data_features *f, unsigned int feat)
{
	for (size_t i = 0; f && i < f->nr_raw; i++)
		if (f->raw[i].feat == feat)
			return &f->raw[i];
	return NULL;
}

/*
 * Returns true when the section is there, even empty (HEADER_BRANCH_STACK
 * is).  A new recording (not f->no_host) gets the features perf record
 * writes for the same recording, but for:
 * - TRACING_DATA, BRANCH_STACK, AUXTRACE, COMPRESSED, DIR_FORMAT: this
 *   recorder takes no tracepoints, branch stacks, AUX area, -z or
 *   --threads, which perf writes them for;
 * - GROUP_DESC: no event groups, where perf leaves it out too;
 * - CLOCKID, CLOCK_DATA: only with use_clockid, as perf only with -k;
 * - STAT: perf stat's;
 * - CPU_PMU_CAPS, HYBRID_TOPOLOGY, CPUID and the topologies when the
 *   machine has nothing to describe, as perf (header-host.c).
 * BPF_PROG_INFO and BPF_BTF list the BPF programs whose PERF_RECORD_KSYMBOL
 * and BPF_EVENT records perf synthesizes; this recorder synthesizes none,
 * so both say "none", as perf record --no-bpf-event writes them.
 */
static bool perf_data_writer__feature(struct buf *b, unsigned int feat,
				      const struct perf_data_writer *w,
				      const struct perf_data_features *f)
{
	const struct feat_raw *raw = features__raw(f, feat);
	bool host = !(f && f->no_host);

	if (feat == PD_FEAT_EVENT_DESC) {
		feat_event_desc(b, w->el);
		return true;
	}
	if (raw) {
		buf__put(b, raw->size ? raw->data : NULL, raw->size);
		return true;
	}
	switch (feat) {
	case PD_FEAT_BUILD_ID:
		if (f && f->nr_build_ids)
			feat_build_id(b, f);
		break;
	case PD_FEAT_VERSION:
		if (host)
			buf__string(b, "perf-defer " PERF_DEFER_VERSION);
		break;
	case PD_FEAT_CMDLINE:
		if (host || (f && (f->cmdline || f->argc)))
			feat_cmdline(b, f);
		break;
	case PD_FEAT_CLOCKID:
	case PD_FEAT_CLOCK_DATA:
		if (f && f->use_clockid)
			feat_clock(b, feat, f);
		break;
	case PD_FEAT_SAMPLE_TIME:
		if (!host)
			break;
		buf__u64(b, w->first_time);
		buf__u64(b, w->last_time);
		return true;
	case PD_FEAT_BPF_PROG_INFO:
	case PD_FEAT_BPF_BTF:
		if (!host)
			break;
		buf__u32(b, 0);
		return true;
	default:
		return host && host_feature(b, feat);
	}
	return b->len != 0;
}

int perf_data_writer__close(struct perf_data_writer *w, const struct perf_data_features *f)
{
	unsigned char hdr[PD_FILE_HEADER_SIZE];
	__u64 features[PD_FEAT_BITS / 64] = { 0 };
	struct buf secs[PD_FEAT_BITS];
	bool present[PD_FEAT_BITS] = { false };
	__u64 data_size, feat_offset, off;
	unsigned int nr = 0;
	size_t done = 0;
	int err;

	if (!w->started)
		writer__start(w);
	if (w->err)
		goto out;
	data_size = writer__pos(w) - w->data_offset;
	feat_offset = writer__pos(w);

	memset(secs, 0, sizeof(secs));
	for (unsigned int feat = 1; feat < PD_FEAT_BITS; feat++) {
		present[feat] = perf_data_writer__feature(&secs[feat], feat, w, f);
		if (secs[feat].oom) {
			writer__fail(w, -ENOMEM, "cannot make the features of");
			break;
		}
		if (present[feat]) {
			features[feat / 64] |= 1ULL << (feat % 64);
			nr++;
		}
	}
	/* the section table, then the sections */
	off = feat_offset + (__u64)nr * PD_FILE_SECTION_SIZE;
	for (unsigned int feat = 1; feat < PD_FEAT_BITS && !w->err; feat++) {
		__u64 sec[2] = { off, secs[feat].len };

		if (!present[feat])
			continue;
		writer__put(w, sec, sizeof(sec));
		off += secs[feat].len;
	}
	for (unsigned int feat = 1; feat < PD_FEAT_BITS; feat++) {
		if (secs[feat].len)
			writer__put(w, secs[feat].p, secs[feat].len);
		free(secs[feat].p);
	}
	if (writer__flush(w))
		goto out;

	/* the final header, last: until here the file says "data size 0" */
	perf_data__write_header(w, hdr, data_size, features);
	while (done < sizeof(hdr)) {
		ssize_t n = pwrite(w->fd, hdr + done, sizeof(hdr) - done, done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			writer__fail(w, n < 0 ? -errno : -EIO, "cannot write the header of");
			goto out;
		}
		done += n;
	}
	if (w->regular && fsync(w->fd))
		writer__fail(w, -errno, "cannot sync");
	if (w->own_fd) {
		int fd = w->fd;

		w->own_fd = false;	/* closed here: writer__free() must not close it again */
		if (close(fd) && !w->err)
			writer__fail(w, -errno, "cannot close");
		if (w->err && w->regular)
			unlink(w->path);
	}
out:
	err = w->err;
	writer__free(w, err != 0);
	return err;
}
