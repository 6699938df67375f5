// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf.data writer, reader and sample parser.  See perf-data.h.
 *
 * The on-disk formats follow perf's tools/perf/util/header.c (what
 * perf_session__read_header() and the feature process_*() functions
 * read) and tools/perf/util/evsel.c (evsel__parse_sample()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perf-data.h"

#ifndef PERF_DEFER_VERSION
#define PERF_DEFER_VERSION "unknown"
#endif

#define PERF_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_MAGIC_SWAPPED	0x50455246494c4532ULL
#define PERF_MAGIC_LEGACY	0x454c494646524550ULL	/* "PERFFILE" */
#define FILE_HEADER_NO_FEAT	72	/* offsetof(struct perf_file_header, adds_features) */
#define PIPE_HEADER_SIZE	16
#define FILE_SECTION_SIZE	16
#define ATTR_SIZE		((__u32)sizeof(struct perf_event_attr))
#define MAX_FILE_ATTR_SIZE	4096	/* bigger than any perf_event_attr yet */
/* perf's PERF_RECORD_MISC_BUILD_ID_SIZE: the size byte of a build-id entry is valid */
#define MISC_BUILD_ID_SIZE	(1 << 15)
#define BUILD_ID_RECORD_SIZE	36	/* sizeof(struct perf_record_header_build_id) */
#define WRITE_BUFFER_SIZE	(256 * 1024)
#define READ_KEEP		(8UL << 20)	/* mapped bytes kept behind the read position */

#define ALIGN_UP(x, a)		(((x) + (a) - 1) / (a) * (a))

/* ---- errors ---------------------------------------------------------- */

static char pd_errbuf[512];

const char *pd_error(void)
{
	return pd_errbuf[0] ? pd_errbuf : "unknown error";
}

void pd_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pd_errbuf, sizeof(pd_errbuf), fmt, ap);
	va_end(ap);
}

/* ---- little helpers -------------------------------------------------- */


static struct perf_event_header rdhdr(const void *p)
{
	struct perf_event_header h;

	memcpy(&h, p, sizeof(h));
	return h;
}

/* a + b <= limit, without overflow */
static bool in_bounds(__u64 a, __u64 b, __u64 limit)
{
	return a <= limit && b <= limit - a;
}

static const char *const event_names[PD_RECORD_HEADER_MAX_KNOWN] = {
	[0]				= "TOTAL",
	[PERF_RECORD_MMAP]		= "MMAP",
	[PERF_RECORD_LOST]		= "LOST",
	[PERF_RECORD_COMM]		= "COMM",
	[PERF_RECORD_EXIT]		= "EXIT",
	[PERF_RECORD_THROTTLE]		= "THROTTLE",
	[PERF_RECORD_UNTHROTTLE]	= "UNTHROTTLE",
	[PERF_RECORD_FORK]		= "FORK",
	[PERF_RECORD_READ]		= "READ",
	[PERF_RECORD_SAMPLE]		= "SAMPLE",
	[PERF_RECORD_MMAP2]		= "MMAP2",
	[PERF_RECORD_AUX]		= "AUX",
	[PERF_RECORD_ITRACE_START]	= "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES]	= "LOST_SAMPLES",
	[PERF_RECORD_SWITCH]		= "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE]	= "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES]	= "NAMESPACES",
	[PERF_RECORD_KSYMBOL]		= "KSYMBOL",
	[PERF_RECORD_BPF_EVENT]		= "BPF_EVENT",
	[PERF_RECORD_CGROUP]		= "CGROUP",
	[PERF_RECORD_TEXT_POKE]		= "TEXT_POKE",
	[PERF_RECORD_AUX_OUTPUT_HW_ID]	= "AUX_OUTPUT_HW_ID",
	[PERF_DEFER_RECORD_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
	[PD_RECORD_HEADER_ATTR]		= "ATTR",
	[PD_RECORD_HEADER_EVENT_TYPE]	= "EVENT_TYPE",
	[PD_RECORD_HEADER_TRACING_DATA]	= "TRACING_DATA",
	[PD_RECORD_HEADER_BUILD_ID]	= "BUILD_ID",
	[PD_RECORD_FINISHED_ROUND]	= "FINISHED_ROUND",
	[PD_RECORD_ID_INDEX]		= "ID_INDEX",
	[PD_RECORD_AUXTRACE_INFO]	= "AUXTRACE_INFO",
	[PD_RECORD_AUXTRACE]		= "AUXTRACE",
	[PD_RECORD_AUXTRACE_ERROR]	= "AUXTRACE_ERROR",
	[PD_RECORD_THREAD_MAP]		= "THREAD_MAP",
	[PD_RECORD_CPU_MAP]		= "CPU_MAP",
	[PD_RECORD_STAT_CONFIG]		= "STAT_CONFIG",
	[PD_RECORD_STAT]		= "STAT",
	[PD_RECORD_STAT_ROUND]		= "STAT_ROUND",
	[PD_RECORD_EVENT_UPDATE]	= "EVENT_UPDATE",
	[PD_RECORD_TIME_CONV]		= "TIME_CONV",
	[PD_RECORD_HEADER_FEATURE]	= "FEATURE",
	[PD_RECORD_COMPRESSED]		= "COMPRESSED",
	[PD_RECORD_FINISHED_INIT]	= "FINISHED_INIT",
	[PD_RECORD_COMPRESSED2]		= "COMPRESSED2",
	[PD_RECORD_BPF_METADATA]	= "BPF_METADATA",
};

const char *pd_event__name(__u32 type)
{
	if (type == PERF_DEFER_RECORD_USER_DUMP)
		return "USER_DUMP";
	if (type >= PD_RECORD_HEADER_MAX_KNOWN || !event_names[type])
		return "UNKNOWN";
	return event_names[type];
}

/* ---- event list ------------------------------------------------------ */

struct id_slot {
	__u64 id;		/* 0: empty */
	unsigned int idx;
};

struct pd_evlist {
	struct pd_attr *attrs;
	unsigned int nr, alloc;
	struct id_slot *slots;	/* open addressing, power-of-two size */
	size_t nr_slots, nr_used;
};

/* Position of the id in a sample, counted in u64 from after the header. */
static int sample_id_pos(__u64 sample_type)
{
	int idx = 0;

	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(sample_type & PERF_SAMPLE_ID))
		return -1;
	if (sample_type & PERF_SAMPLE_IP)
		idx++;
	if (sample_type & PERF_SAMPLE_TID)
		idx++;
	if (sample_type & PERF_SAMPLE_TIME)
		idx++;
	if (sample_type & PERF_SAMPLE_ADDR)
		idx++;
	return idx;
}

/* Position of the id in a sample_id, counted in u64 back from the end. */
static int sample_is_pos(__u64 sample_type)
{
	int idx = 1;

	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(sample_type & PERF_SAMPLE_ID))
		return -1;
	if (sample_type & PERF_SAMPLE_CPU)
		idx++;
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		idx++;
	return idx;
}

struct pd_evlist *pd_evlist__new(void)
{
	return calloc(1, sizeof(struct pd_evlist));
}

void pd_evlist__delete(struct pd_evlist *el)
{
	if (!el)
		return;
	for (unsigned int i = 0; i < el->nr; i++) {
		free(el->attrs[i].ids);
		free(el->attrs[i].name);
	}
	free(el->attrs);
	free(el->slots);
	free(el);
}

static size_t id_hash(__u64 id, size_t mask)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
}

static int evlist__grow_slots(struct pd_evlist *el, size_t want)
{
	struct id_slot *old = el->slots;
	size_t old_nr = el->nr_slots, n = 16;

	while (n < want * 2)
		n *= 2;
	if (n <= el->nr_slots)
		return 0;
	el->slots = calloc(n, sizeof(*el->slots));
	if (!el->slots) {
		el->slots = old;
		return -ENOMEM;
	}
	el->nr_slots = n;
	for (size_t i = 0; i < old_nr; i++) {
		size_t h;

		if (!old[i].id)
			continue;
		for (h = id_hash(old[i].id, n - 1); el->slots[h].id; h = (h + 1) & (n - 1))
			;
		el->slots[h] = old[i];
	}
	free(old);
	return 0;
}

static const struct id_slot *evlist__lookup(const struct pd_evlist *el, __u64 id)
{
	if (!el->nr_slots)
		return NULL;
	for (size_t h = id_hash(id, el->nr_slots - 1); el->slots[h].id;
	     h = (h + 1) & (el->nr_slots - 1)) {
		if (el->slots[h].id == id)
			return &el->slots[h];
	}
	return NULL;
}

int pd_evlist__add(struct pd_evlist *el, const struct perf_event_attr *attr,
		   const __u64 *ids, __u32 nr_ids, const char *name)
{
	struct pd_attr *a;

	if (el->nr == el->alloc) {
		unsigned int n = el->alloc ? el->alloc * 2 : 4;
		struct pd_attr *p = realloc(el->attrs, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		el->attrs = p;
		el->alloc = n;
	}
	if (evlist__grow_slots(el, el->nr_used + nr_ids))
		return -ENOMEM;
	a = &el->attrs[el->nr];
	memset(a, 0, sizeof(*a));
	a->attr = *attr;
	a->file_size = attr->size;
	a->idx = el->nr;
	if (nr_ids) {
		a->ids = malloc(nr_ids * sizeof(__u64));
		if (!a->ids)
			return -ENOMEM;
		memcpy(a->ids, ids, nr_ids * sizeof(__u64));
		a->nr_ids = nr_ids;
	}
	if (name) {
		a->name = strdup(name);
		if (!a->name) {
			free(a->ids);
			return -ENOMEM;
		}
	}
	for (__u32 i = 0; i < nr_ids; i++) {
		size_t h, mask = el->nr_slots - 1;

		if (!ids[i] || evlist__lookup(el, ids[i]))
			continue;	/* id 0 means "first"; first owner wins */
		for (h = id_hash(ids[i], mask); el->slots[h].id; h = (h + 1) & mask)
			;
		el->slots[h].id = ids[i];
		el->slots[h].idx = el->nr;
		el->nr_used++;
	}
	el->nr++;
	return 0;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend",
	"stalled-cycles-backend", "ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

const char *pd_attr__name(const struct pd_attr *a, char *buf, size_t size)
{
	__u64 config = a->attr.config;

	if (a->name)
		return a->name;
	if (a->attr.type == PERF_TYPE_HARDWARE && config < sizeof(hw_names) / sizeof(hw_names[0]))
		return hw_names[config];
	if (a->attr.type == PERF_TYPE_SOFTWARE && config < sizeof(sw_names) / sizeof(sw_names[0]))
		return sw_names[config];
	snprintf(buf, size, "%u:%#llx", a->attr.type, (unsigned long long)config);
	return buf;
}

unsigned int pd_evlist__nr(const struct pd_evlist *el)
{
	return el->nr;
}

struct pd_attr *pd_evlist__attr(const struct pd_evlist *el, unsigned int idx)
{
	return idx < el->nr ? &el->attrs[idx] : NULL;
}

int pd_evlist__check(const struct pd_evlist *el)
{
	const struct perf_event_attr *first;

	if (el->nr <= 1)
		return 0;
	first = &el->attrs[0].attr;
	for (unsigned int i = 0; i < el->nr; i++) {
		const struct perf_event_attr *a = &el->attrs[i].attr;

		if (sample_id_pos(a->sample_type) < 0 || sample_is_pos(a->sample_type) < 0) {
			pd_set_error("attr %u: several events but no PERF_SAMPLE_ID or IDENTIFIER in sample_type %#llx",
				     i, (unsigned long long)a->sample_type);
			return -EINVAL;
		}
		if (sample_id_pos(a->sample_type) != sample_id_pos(first->sample_type) ||
		    sample_is_pos(a->sample_type) != sample_is_pos(first->sample_type)) {
			pd_set_error("attr %u: non matching sample_type %#llx (attr 0 has %#llx)",
				     i, (unsigned long long)a->sample_type,
				     (unsigned long long)first->sample_type);
			return -EINVAL;
		}
		if (a->sample_id_all != first->sample_id_all) {
			pd_set_error("attr %u: non matching sample_id_all", i);
			return -EINVAL;
		}
	}
	return 0;
}

const struct pd_attr *pd_evlist__find(const struct pd_evlist *el, const void *event)
{
	struct perf_event_header h = rdhdr(event);
	const struct perf_event_attr *first;
	const struct id_slot *slot;
	const char *words = (const char *)event + sizeof(h);
	size_t n;
	__u64 id;
	int pos;

	if (!el->nr) {
		pd_set_error("no attrs");
		return NULL;
	}
	first = &el->attrs[0].attr;
	if (el->nr == 1)
		return &el->attrs[0];
	if (!first->sample_id_all && h.type != PERF_RECORD_SAMPLE)
		return &el->attrs[0];
	n = h.size < sizeof(h) ? 0 : (h.size - sizeof(h)) / 8;
	if (h.type == PERF_RECORD_SAMPLE) {
		pos = sample_id_pos(first->sample_type);
		if (pos < 0)
			return &el->attrs[0];
		if ((size_t)pos >= n)
			goto short_record;
		id = rd64(words + pos * 8);
	} else {
		pos = sample_is_pos(first->sample_type);
		if (pos < 0)
			return &el->attrs[0];
		if ((size_t)pos > n)
			goto short_record;
		id = rd64(words + (n - pos) * 8);
	}
	if (!id)
		return &el->attrs[0];
	slot = evlist__lookup(el, id);
	if (!slot) {
		pd_set_error("PERF_RECORD_%s: unknown event id %" PRIu64, pd_event__name(h.type),
			     (uint64_t)id);
		return NULL;
	}
	return &el->attrs[slot->idx];
short_record:
	pd_set_error("PERF_RECORD_%s: size %#x too small to hold the event id",
		     pd_event__name(h.type), h.size);
	return NULL;
}

/* ---- sample parsing -------------------------------------------------- */

struct cursor {
	const unsigned char *p;
	size_t off, size;
	__u32 type;
};

static int cursor__fail(const struct cursor *c, const char *field)
{
	pd_set_error("PERF_RECORD_%s: %s runs past the end of the record (size %#zx)",
		     pd_event__name(c->type), field, c->size);
	return -EFAULT;
}

static int take64(struct cursor *c, __u64 *v, const char *field)
{
	if (c->size - c->off < 8)
		return cursor__fail(c, field);
	*v = rd64(c->p + c->off);
	c->off += 8;
	return 0;
}

/* Skip n items of isize bytes. */
static int skip(struct cursor *c, __u64 n, size_t isize, const char *field)
{
	if (n > (c->size - c->off) / isize)
		return cursor__fail(c, field);
	c->off += n * isize;
	return 0;
}

static int parse_id_sample(const struct perf_event_attr *attr, struct cursor *c,
			   size_t body, struct pd_sample *s)
{
	__u64 type = attr->sample_type, v;
	size_t id_size = 0;

	if (type & PERF_SAMPLE_TID)
		id_size += 8;
	if (type & PERF_SAMPLE_TIME)
		id_size += 8;
	if (type & PERF_SAMPLE_ID)
		id_size += 8;
	if (type & PERF_SAMPLE_STREAM_ID)
		id_size += 8;
	if (type & PERF_SAMPLE_CPU)
		id_size += 8;
	if (type & PERF_SAMPLE_IDENTIFIER)
		id_size += 8;
	if (c->size < body || c->size - body < id_size) {
		pd_set_error("PERF_RECORD_%s: size %#zx too small for its sample_id (%zu bytes after %zu)",
			     pd_event__name(c->type), c->size, id_size, body);
		return -EFAULT;
	}
	c->off = c->size - id_size;
	if (type & PERF_SAMPLE_TID) {
		take64(c, &v, "tid");
		s->pid = (__u32)v;
		s->tid = (__u32)(v >> 32);
	}
	if (type & PERF_SAMPLE_TIME)
		take64(c, &s->time, "time");
	if (type & PERF_SAMPLE_ID)
		take64(c, &s->id, "id");
	if (type & PERF_SAMPLE_STREAM_ID)
		take64(c, &s->stream_id, "stream_id");
	if (type & PERF_SAMPLE_CPU) {
		take64(c, &v, "cpu");
		s->cpu = (__u32)v;
	}
	if (type & PERF_SAMPLE_IDENTIFIER)
		take64(c, &s->id, "identifier");
	s->end = c->size;
	return 0;
}

static int parse_read(const struct perf_event_attr *attr, struct cursor *c, struct pd_sample *s)
{
	__u64 fmt = attr->read_format, per;

	if (fmt & PERF_FORMAT_GROUP) {
		if (take64(c, &s->read_nr, "read nr"))
			return -EFAULT;
	} else if (take64(c, &s->read_value, "read value")) {
		return -EFAULT;
	}
	if ((fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
	    take64(c, &s->time_enabled, "read time_enabled"))
		return -EFAULT;
	if ((fmt & PERF_FORMAT_TOTAL_TIME_RUNNING) &&
	    take64(c, &s->time_running, "read time_running"))
		return -EFAULT;
	if (fmt & PERF_FORMAT_GROUP) {
		/* nr * { value; [id]; [lost] } */
		per = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
		s->read_values_offset = c->off;
		if (s->read_nr > (c->size - c->off) / 8 / per)
			return cursor__fail(c, "read group values");
		c->off += s->read_nr * per * 8;
		return 0;
	}
	if ((fmt & PERF_FORMAT_ID) && take64(c, &s->read_id, "read id"))
		return -EFAULT;
	if ((fmt & PERF_FORMAT_LOST) && take64(c, &s->read_lost, "read lost"))
		return -EFAULT;
	return 0;
}

static int parse_regs(struct cursor *c, __u64 mask, __u64 *abi, __u32 *nr, const char *what)
{
	if (take64(c, abi, what))
		return -EFAULT;
	if (!*abi)
		return 0;
	*nr = __builtin_popcountll(mask);
	return skip(c, *nr, 8, what);
}

/* PERF_SAMPLE_STACK_USER: size, data[size], dyn_size (when size != 0) */
static int parse_ustack(struct cursor *c, struct pd_sample *s)
{
	if (take64(c, &s->user_stack_size, "user stack size"))
		return -EFAULT;
	if (!s->user_stack_size)
		return 0;
	if (s->user_stack_size % 8)
		return cursor__fail(c, "user stack (size not a multiple of 8)");
	if (skip(c, s->user_stack_size, 1, "user stack") ||
	    take64(c, &s->user_stack_dyn_size, "user stack dyn_size"))
		return -EFAULT;
	if (s->user_stack_dyn_size > s->user_stack_size) {
		pd_set_error("%s: user stack dyn_size %" PRIu64 " > size %" PRIu64,
			     pd_event__name(c->type), (uint64_t)s->user_stack_dyn_size,
			     (uint64_t)s->user_stack_size);
		return -EFAULT;
	}
	return 0;
}

int pd_sample__parse(const struct perf_event_attr *attr, const void *event,
		     struct pd_sample *s)
{
	struct perf_event_header h = rdhdr(event);
	struct cursor c = { .p = event, .off = sizeof(h), .size = h.size, .type = h.type };
	__u64 type = attr->sample_type, v;

	memset(s, 0, sizeof(*s));
	s->pid = s->tid = s->cpu = (__u32)-1;
	s->time = s->id = s->stream_id = (__u64)-1;
	s->period = attr->sample_period;
	if (h.size < sizeof(h)) {
		pd_set_error("record size %u is smaller than its header", h.size);
		return -EFAULT;
	}

	if (h.type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED) {
		if (take64(&c, &s->cookie, "cookie") || take64(&c, &s->nr, "nr"))
			return -EFAULT;
		s->callchain_offset = 16;
		if (skip(&c, s->nr, 8, "ips"))
			return -EFAULT;
		s->callchain = (const __u64 *)((const char *)event + 24);
		s->deferred = true;
		s->end = c.off;
		if (attr->sample_id_all)
			return parse_id_sample(attr, &c, c.off, s);
		return 0;
	}
	if (h.type == PERF_DEFER_RECORD_USER_DUMP) {
		/* cookie, then perf's REGS_USER and STACK_USER fields */
		if (take64(&c, &s->cookie, "cookie"))
			return -EFAULT;
		s->regs_user_offset = c.off;
		if (parse_regs(&c, attr->sample_regs_user, &s->user_regs_abi, &s->nr_user_regs,
			       "user regs") ||
		    parse_ustack(&c, s))
			return -EFAULT;
		s->regs_stack_size = c.off - s->regs_user_offset;
		s->deferred = true;
		s->end = c.off;
		if (attr->sample_id_all)
			return parse_id_sample(attr, &c, c.off, s);
		return 0;
	}
	if (h.type != PERF_RECORD_SAMPLE) {
		s->end = sizeof(h);
		if (attr->sample_id_all)
			return parse_id_sample(attr, &c, sizeof(h), s);
		return 0;
	}

	if ((type & PERF_SAMPLE_IDENTIFIER) && take64(&c, &s->id, "identifier"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_IP) && take64(&c, &s->ip, "ip"))
		return -EFAULT;
	if (type & PERF_SAMPLE_TID) {
		if (take64(&c, &v, "tid"))
			return -EFAULT;
		s->pid = (__u32)v;
		s->tid = (__u32)(v >> 32);
	}
	if ((type & PERF_SAMPLE_TIME) && take64(&c, &s->time, "time"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_ADDR) && take64(&c, &s->addr, "addr"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_ID) && take64(&c, &s->id, "id"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_STREAM_ID) && take64(&c, &s->stream_id, "stream_id"))
		return -EFAULT;
	if (type & PERF_SAMPLE_CPU) {
		if (take64(&c, &v, "cpu"))
			return -EFAULT;
		s->cpu = (__u32)v;
	}
	if ((type & PERF_SAMPLE_PERIOD) && take64(&c, &s->period, "period"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_READ) && parse_read(attr, &c, s))
		return -EFAULT;
	if (type & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_offset = c.off;
		if (take64(&c, &s->nr, "callchain nr"))
			return -EFAULT;
		s->callchain = (const __u64 *)((const char *)event + c.off);
		if (skip(&c, s->nr, 8, "callchain"))
			return -EFAULT;
		if (s->nr >= 2 &&
		    rd64(&s->callchain[s->nr - 2]) == PERF_DEFER_CONTEXT_USER_DEFERRED) {
			s->deferred = true;
			s->cookie = rd64(&s->callchain[s->nr - 1]);
		}
	}
	if (type & PERF_SAMPLE_RAW) {
		if (c.size - c.off < 4)
			return cursor__fail(&c, "raw size");
		s->raw_size = rd32(c.p + c.off);
		c.off += 4;
		s->raw = c.p + c.off;
		if (skip(&c, s->raw_size, 1, "raw data"))
			return -EFAULT;
	}
	if (type & PERF_SAMPLE_BRANCH_STACK) {
		if (take64(&c, &s->branch_nr, "branch stack nr"))
			return -EFAULT;
		if ((attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) &&
		    take64(&c, &v, "branch stack hw_idx"))
			return -EFAULT;
		if (skip(&c, s->branch_nr, 24, "branch stack entries"))
			return -EFAULT;
		if ((attr->branch_sample_type & PD_SAMPLE_BRANCH_COUNTERS) &&
		    skip(&c, s->branch_nr, 8, "branch stack counters"))
			return -EFAULT;
	}
	s->regs_user_offset = c.off;
	if ((type & PERF_SAMPLE_REGS_USER) &&
	    parse_regs(&c, attr->sample_regs_user, &s->user_regs_abi, &s->nr_user_regs, "user regs"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_STACK_USER) && parse_ustack(&c, s))
		return -EFAULT;
	s->regs_stack_size = c.off - s->regs_user_offset;
	if ((type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) &&
	    take64(&c, &s->weight, "weight"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_DATA_SRC) && take64(&c, &s->data_src, "data_src"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_TRANSACTION) && take64(&c, &s->transaction, "transaction"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_REGS_INTR) &&
	    parse_regs(&c, attr->sample_regs_intr, &s->intr_regs_abi, &s->nr_intr_regs, "intr regs"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_PHYS_ADDR) && take64(&c, &s->phys_addr, "phys_addr"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_CGROUP) && take64(&c, &s->cgroup, "cgroup"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_DATA_PAGE_SIZE) && take64(&c, &s->data_page_size, "data_page_size"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_CODE_PAGE_SIZE) && take64(&c, &s->code_page_size, "code_page_size"))
		return -EFAULT;
	if (type & PERF_SAMPLE_AUX) {
		if (take64(&c, &s->aux_size, "aux size") || skip(&c, s->aux_size, 1, "aux data"))
			return -EFAULT;
	}
	s->end = c.off;
	return 0;
}

/* ---- growable buffer for feature sections ----------------------------- */

struct buf {
	unsigned char *p;
	size_t len, alloc;
	bool oom;
};

static void buf__put(struct buf *b, const void *data, size_t n)
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

static void buf__u32(struct buf *b, __u32 v)
{
	buf__put(b, &v, sizeof(v));
}

static void buf__u64(struct buf *b, __u64 v)
{
	buf__put(b, &v, sizeof(v));
}

/* perf's do_write_string(): u32 len (a multiple of 64, with the NUL), bytes. */
static void buf__string(struct buf *b, const char *s)
{
	size_t olen = strlen(s) + 1, len = ALIGN_UP(olen, PD_NAME_ALIGN);

	buf__u32(b, (__u32)len);
	buf__put(b, s, olen);
	buf__put(b, NULL, len - olen);
}

/* ---- writer ---------------------------------------------------------- */

struct pd_writer {
	int fd;
	bool own_fd;		/* opened by path: close it, unlink it on failure */
	bool regular;		/* fsync it */
	char *path;
	unsigned char *buf;
	size_t len;
	__u64 flushed;		/* bytes written to fd */
	struct pd_evlist *el;
	bool started;
	__u64 attrs_offset, data_offset;
	int err;		/* first error, sticky */
};

static struct pd_writer *writer__new(int fd, const char *name)
{
	struct pd_writer *w = calloc(1, sizeof(*w));
	struct stat st;

	if (!w)
		return NULL;
	w->fd = fd;
	w->path = strdup(name ? name : "perf.data");
	w->buf = malloc(WRITE_BUFFER_SIZE);
	w->el = pd_evlist__new();
	if (!w->path || !w->buf || !w->el) {
		free(w->path);
		free(w->buf);
		pd_evlist__delete(w->el);
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->regular = !fstat(fd, &st) && S_ISREG(st.st_mode);
	return w;
}

struct pd_writer *pd_writer__open(const char *path)
{
	struct pd_writer *w;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		pd_set_error("cannot create %s: %s", path, strerror(err));
		errno = err;
		return NULL;
	}
	w = writer__new(fd, path);
	if (!w) {
		err = errno;
		close(fd);
		unlink(path);
		errno = err;
		pd_set_error("%s: %s", path, strerror(err));
		return NULL;
	}
	w->own_fd = true;
	return w;
}

struct pd_writer *pd_writer__open_fd(int fd, const char *name)
{
	struct pd_writer *w = writer__new(fd, name);

	if (!w) {
		pd_set_error("%s: %s", name ? name : "perf.data", strerror(ENOMEM));
		errno = ENOMEM;
	}
	return w;
}

static int writer__fail(struct pd_writer *w, int err, const char *what)
{
	if (!w->err) {
		w->err = err;
		pd_set_error("%s %s: %s", what, w->path, strerror(-err));
	}
	return w->err;
}

static int writer__flush(struct pd_writer *w)
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

static int writer__put(struct pd_writer *w, const void *data, size_t n)
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

static __u64 writer__pos(const struct pd_writer *w)
{
	return w->flushed + w->len;
}

int pd_writer__add_attr(struct pd_writer *w, const struct perf_event_attr *attr,
			const __u64 *ids, __u32 nr_ids, const char *name)
{
	struct perf_event_attr a = *attr;
	int err;

	if (w->started) {
		pd_set_error("%s: attrs must be added before the first record", w->path);
		return -EBUSY;
	}
	a.size = ATTR_SIZE;
	err = pd_evlist__add(w->el, &a, ids, nr_ids, name);
	if (err)
		pd_set_error("%s: %s", w->path, strerror(-err));
	return err;
}

static void file_header(const struct pd_writer *w, unsigned char *hdr, __u64 data_size,
			const __u64 *features)
{
	__u64 v[9] = {
		PERF_MAGIC, PD_FILE_HEADER_SIZE, ATTR_SIZE + FILE_SECTION_SIZE,
		w->attrs_offset, (__u64)w->el->nr * (ATTR_SIZE + FILE_SECTION_SIZE),
		w->data_offset, data_size,
		0, 0,		/* event_types: unused */
	};

	memcpy(hdr, v, sizeof(v));
	memcpy(hdr + sizeof(v), features, PD_FEAT_BITS / 8);
}

/*
 * Header, ids and attrs.  The header says "data size 0" until
 * pd_writer__close() rewrites it, as perf record's first header does.
 */
static int writer__start(struct pd_writer *w)
{
	unsigned char hdr[PD_FILE_HEADER_SIZE];
	__u64 no_features[PD_FEAT_BITS / 64] = { 0 };
	__u64 ids_offset = PD_FILE_HEADER_SIZE;

	if (w->started)
		return w->err;
	w->started = true;
	if (!w->el->nr) {
		pd_set_error("%s: no attrs: add them before the first record", w->path);
		return w->err = -EINVAL;
	}
	w->attrs_offset = PD_FILE_HEADER_SIZE;
	for (unsigned int i = 0; i < w->el->nr; i++)
		w->attrs_offset += (__u64)w->el->attrs[i].nr_ids * 8;
	w->data_offset = w->attrs_offset + (__u64)w->el->nr * (ATTR_SIZE + FILE_SECTION_SIZE);

	file_header(w, hdr, 0, no_features);
	writer__put(w, hdr, sizeof(hdr));
	for (unsigned int i = 0; i < w->el->nr; i++)
		writer__put(w, w->el->attrs[i].ids, (size_t)w->el->attrs[i].nr_ids * 8);
	for (unsigned int i = 0; i < w->el->nr; i++) {
		const struct pd_attr *a = &w->el->attrs[i];
		__u64 sec[2] = { ids_offset, (__u64)a->nr_ids * 8 };

		writer__put(w, &a->attr, ATTR_SIZE);
		writer__put(w, sec, sizeof(sec));
		ids_offset += (__u64)a->nr_ids * 8;
	}
	return w->err;
}

int pd_writer__write(struct pd_writer *w, const void *event, size_t size)
{
	struct perf_event_header h;

	if (!w->started && writer__start(w))
		return w->err;
	if (size < sizeof(h) || (h = rdhdr(event)).size != size) {
		pd_set_error("%s: record of %zu bytes with header.size %u", w->path, size,
			     size < sizeof(h) ? 0 : rdhdr(event).size);
		return -EINVAL;
	}
	return writer__put(w, event, size);
}

__u64 pd_writer__data_size(const struct pd_writer *w)
{
	return w->started ? writer__pos(w) - w->data_offset : 0;
}

static void writer__free(struct pd_writer *w, bool unlink_file)
{
	if (w->own_fd) {
		close(w->fd);
		if (unlink_file && w->regular)
			unlink(w->path);
	}
	pd_evlist__delete(w->el);
	free(w->buf);
	free(w->path);
	free(w);
}

void pd_writer__abort(struct pd_writer *w)
{
	if (w)
		writer__free(w, true);
}

/* Host facts, for the features perf record writes. */

static void feat_uname(struct buf *b, int feat)
{
	struct utsname uts;

	if (uname(&uts))
		return;
	switch (feat) {
	case PD_FEAT_HOSTNAME:
		buf__string(b, uts.nodename);
		break;
	case PD_FEAT_OSRELEASE:
		buf__string(b, uts.release);
		break;
	case PD_FEAT_ARCH:
		buf__string(b, uts.machine);
		break;
	}
}

/* Highest CPU in a list such as "0-3,5", or -1. */
static long cpu_list_max(const char *s)
{
	long max = -1;

	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		if (v > max)
			max = v;
		s = end;
		if (*s == '-' || *s == ',')
			s++;
		else
			break;
	}
	return max;
}

static void feat_nrcpus(struct buf *b)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN), present = -1;
	char line[4096];
	FILE *f = fopen("/sys/devices/system/cpu/present", "r");

	if (f) {
		if (fgets(line, sizeof(line), f))
			present = cpu_list_max(line) + 1;
		fclose(f);
	}
	if (present <= 0)
		present = sysconf(_SC_NPROCESSORS_CONF);
	if (present <= 0 || online <= 0)
		return;
	/* perf: nr_cpus_avail (max present + 1), then nr_cpus_online */
	buf__u32(b, (__u32)present);
	buf__u32(b, (__u32)online);
}

/* The "model name" line of /proc/cpuinfo, white space squashed as perf does. */
static void feat_cpudesc(struct buf *b)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char *line = NULL, *val, *s, *d;
	size_t n = 0;

	if (!f)
		return;
	while (getline(&line, &n, f) > 0) {
		if (strncmp(line, "model name", 10))
			continue;
		val = strchr(line, ':');
		val = val && val[1] == ' ' && val[2] ? val + 2 : line;
		val[strcspn(val, "\n")] = '\0';
		/* each run of white space becomes one space */
		for (s = d = val; *s; s++) {
			bool space = *s == ' ' || *s == '\t';

			if (space && d > val && d[-1] == ' ')
				continue;
			*d++ = space ? ' ' : *s;
		}
		*d = '\0';
		buf__string(b, val);
		break;
	}
	free(line);
	fclose(f);
}

static void feat_total_mem(struct buf *b)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb;
	char line[256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu", &kb) == 1) {
			buf__u64(b, kb);
			break;
		}
	}
	fclose(f);
}

static void feat_cmdline(struct buf *b, const struct pd_features *f)
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

static void feat_event_desc(struct buf *b, const struct pd_evlist *el)
{
	buf__u32(b, el->nr);
	buf__u32(b, ATTR_SIZE);
	for (unsigned int i = 0; i < el->nr; i++) {
		const struct pd_attr *a = &el->attrs[i];
		char name[64];

		buf__put(b, &a->attr, ATTR_SIZE);
		buf__u32(b, a->nr_ids);
		buf__string(b, pd_attr__name(a, name, sizeof(name)));
		buf__put(b, a->ids, (size_t)a->nr_ids * 8);
	}
}

static void feat_clock(struct buf *b, int feat, const struct pd_features *f)
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
static void feat_build_id(struct buf *b, const struct pd_features *f)
{
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct pd_build_id_entry *e = &f->build_ids[i];
		size_t name_len = strlen(e->path) + 1, len = ALIGN_UP(name_len, PD_NAME_ALIGN);
		unsigned char rec[BUILD_ID_RECORD_SIZE] = { 0 };
		struct perf_event_header h = {
			.type = 0,
			.misc = (e->kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER) |
				MISC_BUILD_ID_SIZE,
			.size = (__u16)(BUILD_ID_RECORD_SIZE + len),
		};
		__s32 pid = e->pid;
		__u8 size = e->size > PD_BUILD_ID_SIZE ? PD_BUILD_ID_SIZE : e->size;

		if (BUILD_ID_RECORD_SIZE + len > 0xffff)
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

static const struct pd_feat_raw *raw_feat(const struct pd_features *f, unsigned int feat)
{
	for (size_t i = 0; f && i < f->nr_raw; i++)
		if (f->raw[i].feat == feat)
			return &f->raw[i];
	return NULL;
}

/* Returns true when the section is there, even empty (HEADER_BRANCH_STACK is). */
static bool make_feature(struct buf *b, unsigned int feat, const struct pd_writer *w,
			 const struct pd_features *f)
{
	const struct pd_feat_raw *raw = raw_feat(f, feat);
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
	case PD_FEAT_HOSTNAME:
	case PD_FEAT_OSRELEASE:
	case PD_FEAT_ARCH:
		if (host)
			feat_uname(b, feat);
		break;
	case PD_FEAT_VERSION:
		if (host)
			buf__string(b, "perf-defer " PERF_DEFER_VERSION);
		break;
	case PD_FEAT_NRCPUS:
		if (host)
			feat_nrcpus(b);
		break;
	case PD_FEAT_CPUDESC:
		if (host)
			feat_cpudesc(b);
		break;
	case PD_FEAT_TOTAL_MEM:
		if (host)
			feat_total_mem(b);
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
	}
	return b->len != 0;
}

int pd_writer__close(struct pd_writer *w, const struct pd_features *f)
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
		present[feat] = make_feature(&secs[feat], feat, w, f);
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
	off = feat_offset + (__u64)nr * FILE_SECTION_SIZE;
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
	file_header(w, hdr, data_size, features);
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

/* ---- build-ids ------------------------------------------------------- */

static int note_build_id(const unsigned char *p, size_t size, __u8 *out, size_t *len)
{
	size_t off = 0;

	/* Elf32_Nhdr and Elf64_Nhdr are the same: three 32-bit words */
	while (size - off >= 12) {
		__u32 namesz = rd32(p + off), descsz = rd32(p + off + 4), type = rd32(p + off + 8);
		size_t name = off + 12, desc, next;

		if (namesz > size - name)
			break;
		desc = name + ALIGN_UP((size_t)namesz, 4);
		if (desc > size || descsz > size - desc)
			break;
		next = desc + ALIGN_UP((size_t)descsz, 4);
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name, "GNU", 4)) {
			size_t n = descsz < *len ? descsz : *len;

			if (n > PD_BUILD_ID_SIZE)
				n = PD_BUILD_ID_SIZE;
			memcpy(out, p + desc, n);
			*len = n;
			return 0;
		}
		if (next <= off)
			break;
		off = next;
	}
	return -ENODATA;
}

int pd_build_id(const char *path, __u8 *out, size_t *len)
{
	int fd, err = -ENODATA;
	Elf_Scn *scn = NULL;
	size_t nphdr;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	while (err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_rawdata(scn, NULL);
		if (d && d->d_buf)
			err = note_build_id(d->d_buf, d->d_size, out, len);
	}
	/* no section headers (stripped hard): the PT_NOTE segments */
	if (err && !elf_getphdrnum(e, &nphdr)) {
		for (size_t i = 0; err && i < nphdr; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
			if (d && d->d_buf)
				err = note_build_id(d->d_buf, d->d_size, out, len);
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

int pd_build_id_notes(const char *path, __u8 *out, size_t *len)
{
	unsigned char buf[65536];
	size_t size = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (size < sizeof(buf) && (n = read(fd, buf + size, sizeof(buf) - size)) > 0)
		size += n;
	close(fd);
	return note_build_id(buf, size, out, len);
}

char *pd_build_id__sprintf(const __u8 *id, size_t len, char *buf)
{
	for (size_t i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * len] = '\0';
	return buf;
}

/* ---- reader ---------------------------------------------------------- */

struct pd_reader {
	char *name;
	const unsigned char *map;
	size_t size;
	void *mapping;		/* munmap() it */
	void *copy;		/* free() it */
	struct pd_evlist *el;
	__u64 data_offset, data_size, data_end;
	__u64 pos, last;
	__u64 dropped;		/* mapped pages below this were given back */
	__u64 features[PD_FEAT_BITS / 64];
	__u64 feat_off[PD_FEAT_BITS], feat_size[PD_FEAT_BITS];
	char *feat_str[PD_FEAT_BITS];
	__u64 abuf[PD_MAX_EVENT_SIZE / 8 + 1];	/* misaligned records go here */
};

static int reader__fail(struct pd_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int reader__fail(struct pd_reader *r, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pd_set_error("%s: %s", r->name, msg);
	return -EINVAL;
}

/* Names of the events, from HEADER_EVENT_DESC; ignored when malformed, as in perf. */
static void reader__event_desc(struct pd_reader *r)
{
	const unsigned char *p;
	size_t size, off = 8;
	__u32 nre, sz;

	if (!pd_reader__feat(r, PD_FEAT_EVENT_DESC, (const void **)&p, &size) || size < 8)
		return;
	nre = rd32(p);
	sz = rd32(p + 4);
	if (sz < PERF_ATTR_SIZE_VER0)
		return;
	for (__u32 i = 0; i < nre && i < r->el->nr; i++) {
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
		free(r->el->attrs[i].name);
		r->el->attrs[i].name = name;
		off += len;
		if (nri > (size - off) / 8)
			return;
		off += (size_t)nri * 8;
	}
}

static int reader__init(struct pd_reader *r)
{
	__u64 magic, hsize, attr_size, attrs_off, attrs_size, nr_attrs, feat_offset;
	const unsigned char *m = r->map;
	unsigned int nr_feat = 0, k = 0;

	if (r->size < 16)
		return reader__fail(r, "not a perf.data file: only %zu bytes", r->size);
	magic = rd64(m);
	hsize = rd64(m + 8);
	if (magic == PERF_MAGIC_SWAPPED)
		return reader__fail(r, "big-endian perf.data files are not supported");
	if (magic == PERF_MAGIC_LEGACY)
		return reader__fail(r, "legacy PERFFILE files are not supported");
	if (magic != PERF_MAGIC)
		return reader__fail(r, "not a perf.data file (bad magic %#" PRIx64 ")", (uint64_t)magic);
	if (hsize == PIPE_HEADER_SIZE)
		return reader__fail(r, "pipe-mode perf.data is not supported: convert it with 'perf inject -i %s -o FILE'",
				    r->name);
	if (hsize != PD_FILE_HEADER_SIZE && hsize != FILE_HEADER_NO_FEAT)
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
		memcpy(r->features, m + FILE_HEADER_NO_FEAT, sizeof(r->features));

	if (attr_size < PERF_ATTR_SIZE_VER0 + FILE_SECTION_SIZE ||
	    attr_size > MAX_FILE_ATTR_SIZE + FILE_SECTION_SIZE)
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
		__u64 *ids;
		int err;

		if ((__u64)sz + FILE_SECTION_SIZE != attr_size)
			return reader__fail(r, "attr %" PRIu64 ": size %u does not match the attr section's %" PRIu64,
					    (uint64_t)i, sz, (uint64_t)(attr_size - FILE_SECTION_SIZE));
		if (!in_bounds(ids_off, ids_size, r->size) || ids_size % 8)
			return reader__fail(r, "attr %" PRIu64 ": ids [%#" PRIx64 ", +%#" PRIx64 ") are not within the file",
					    (uint64_t)i, (uint64_t)ids_off, (uint64_t)ids_size);
		if (ids_size / 8 > UINT32_MAX)
			return reader__fail(r, "attr %" PRIu64 ": too many ids", (uint64_t)i);
		memset(&attr, 0, sizeof(attr));
		memcpy(&attr, fa, sz < ATTR_SIZE ? sz : ATTR_SIZE);
		ids = NULL;
		if (ids_size) {
			/* copied: the file's ids need not be aligned */
			ids = malloc(ids_size);
			if (!ids)
				return reader__fail(r, "%s", strerror(ENOMEM));
			memcpy(ids, m + ids_off, ids_size);
		}
		err = pd_evlist__add(r->el, &attr, ids, (__u32)(ids_size / 8), NULL);
		free(ids);
		if (err)
			return reader__fail(r, "%s", strerror(-err));
		for (__u32 b = ATTR_SIZE; b < sz; b++)
			if (fa[b])
				r->el->attrs[r->el->nr - 1].cut = true;
		r->el->attrs[r->el->nr - 1].file_size = rd32(fa + 4);
	}
	if (pd_evlist__check(r->el)) {
		char msg[sizeof(pd_errbuf)];

		snprintf(msg, sizeof(msg), "%s", pd_error());
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
	if (!in_bounds(feat_offset, (__u64)nr_feat * FILE_SECTION_SIZE, r->size))
		return reader__fail(r, "truncated: the feature section table at %#" PRIx64 " (%u entries) ends past the end of the file (%#zx)",
				    (uint64_t)feat_offset, nr_feat, r->size);
	for (unsigned int feat = 0; feat < PD_FEAT_BITS; feat++) {
		const unsigned char *sec;

		if (!(r->features[feat / 64] >> (feat % 64) & 1))
			continue;
		sec = m + feat_offset + (size_t)k++ * FILE_SECTION_SIZE;
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

static struct pd_reader *reader__new(const char *name)
{
	struct pd_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->name = strdup(name);
	r->el = pd_evlist__new();
	if (!r->name || !r->el) {
		free(r->name);
		pd_evlist__delete(r->el);
		free(r);
		return NULL;
	}
	return r;
}

struct pd_reader *pd_reader__open(const char *path)
{
	struct pd_reader *r;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		pd_set_error("cannot open %s: %s", path, strerror(err));
		errno = err;
		return NULL;
	}
	r = reader__new(path);
	if (!r) {
		close(fd);
		pd_set_error("%s: %s", path, strerror(ENOMEM));
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
	pd_reader__close(r);
	errno = err;
	return NULL;
}

struct pd_reader *pd_reader__open_mem(const void *buf, size_t size, const char *name)
{
	struct pd_reader *r = reader__new(name ? name : "perf.data");

	if (!r) {
		pd_set_error("%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	r->copy = malloc(size ? size : 1);
	if (!r->copy) {
		pd_reader__close(r);
		pd_set_error("%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	memcpy(r->copy, buf, size);
	r->map = r->copy;
	r->size = size;
	if (reader__init(r)) {
		pd_reader__close(r);
		errno = EINVAL;
		return NULL;
	}
	return r;
}

void pd_reader__close(struct pd_reader *r)
{
	if (!r)
		return;
	if (r->mapping)
		munmap(r->mapping, r->size);
	for (unsigned int i = 0; i < PD_FEAT_BITS; i++)
		free(r->feat_str[i]);
	free(r->copy);
	pd_evlist__delete(r->el);
	free(r->name);
	free(r);
}

const char *pd_reader__name(const struct pd_reader *r)
{
	return r->name;
}

const struct pd_evlist *pd_reader__evlist(const struct pd_reader *r)
{
	return r->el;
}

unsigned int pd_reader__nr_attrs(const struct pd_reader *r)
{
	return r->el->nr;
}

const struct pd_attr *pd_reader__attr(const struct pd_reader *r, unsigned int idx)
{
	return pd_evlist__attr(r->el, idx);
}

__u64 pd_reader__data_offset(const struct pd_reader *r)
{
	return r->data_offset;
}

__u64 pd_reader__data_size(const struct pd_reader *r)
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
	[PD_RECORD_HEADER_BUILD_ID]	= BUILD_ID_RECORD_SIZE,
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
static void reader__drop_behind(struct pd_reader *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	__u64 from = r->dropped / page * page, to = (r->pos - READ_KEEP) / page * page;

	/* a failure only costs memory */
	if (to > from)
		madvise((unsigned char *)r->mapping + from, to - from, MADV_DONTNEED);
	r->dropped = to;
}

int pd_reader__next(struct pd_reader *r, const struct perf_event_header **event)
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
				    (uint64_t)r->pos, pd_event__name(h.type), h.size,
				    (uint64_t)r->data_end);
	if ((h.type < PD_RECORD_USER_TYPE_START || h.type >= PD_RECORD_HEADER_MAX_KNOWN) &&
	    h.size % 8)
		return reader__fail(r, "record at %#" PRIx64 " (%s): size %#x is not a multiple of 8",
				    (uint64_t)r->pos, pd_event__name(h.type), h.size);
	if (h.type < sizeof(min_size) / sizeof(min_size[0]) && h.size < min_size[h.type])
		return reader__fail(r, "record at %#" PRIx64 " (%s): size %#x is smaller than the record's fixed part (%#x)",
				    (uint64_t)r->pos, pd_event__name(h.type), h.size,
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
				    (uint64_t)r->pos, pd_event__name(h.type), (uint64_t)extra);
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

bool pd_reader__event_stable(const struct pd_reader *r, const void *event)
{
	const unsigned char *p = event;

	return p >= r->map && p < r->map + r->size;
}

__u64 pd_reader__offset(const struct pd_reader *r)
{
	return r->last;
}

void pd_reader__rewind(struct pd_reader *r)
{
	r->pos = r->data_offset;
	r->dropped = 0;
}

bool pd_reader__has_feat(const struct pd_reader *r, unsigned int feat)
{
	return feat < PD_FEAT_BITS && (r->features[feat / 64] >> (feat % 64) & 1);
}

bool pd_reader__feat(const struct pd_reader *r, unsigned int feat, const void **data, size_t *size)
{
	if (!pd_reader__has_feat(r, feat))
		return false;
	*data = r->map + r->feat_off[feat];
	*size = r->feat_size[feat];
	return true;
}

const char *pd_reader__feat_string(const struct pd_reader *r, unsigned int feat)
{
	struct pd_reader *rw = (struct pd_reader *)r;
	const unsigned char *p;
	size_t size;
	__u32 len;

	if (feat >= PD_FEAT_BITS)
		return NULL;
	if (r->feat_str[feat])
		return r->feat_str[feat];
	if (!pd_reader__feat(r, feat, (const void **)&p, &size) || size < 4)
		return NULL;
	len = rd32(p);
	if (len > size - 4)
		return NULL;
	rw->feat_str[feat] = strndup((const char *)p + 4, len);
	return r->feat_str[feat];
}
