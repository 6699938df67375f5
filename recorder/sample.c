// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sample parsing, as perf's evsel__parse_sample() reads the fields that
 * sample_type and read_format select.  See sample.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "event.h"
#include "sample.h"
#include "util.h"

struct cursor {
	const unsigned char *p;
	size_t off, size;
	__u32 type;
};

static int cursor__fail(const struct cursor *c, const char *field)
{
	error__set("PERF_RECORD_%s: %s runs past the end of the record (size %#zx)",
		   perf_event__name(c->type), field, c->size);
	return -EFAULT;
}

static int cursor__take64(struct cursor *c, __u64 *v, const char *field)
{
	if (c->size - c->off < 8)
		return cursor__fail(c, field);
	*v = rd64(c->p + c->off);
	c->off += 8;
	return 0;
}

/* Skip n items of isize bytes. */
static int cursor__skip(struct cursor *c, __u64 n, size_t isize, const char *field)
{
	if (n > (c->size - c->off) / isize)
		return cursor__fail(c, field);
	c->off += n * isize;
	return 0;
}

static int perf_sample__parse_id(const struct perf_event_attr *attr, struct cursor *c,
				 size_t body, struct perf_sample *s)
{
	__u64 type = attr->sample_type, v = 0;
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
		error__set("PERF_RECORD_%s: size %#zx too small for its sample_id (%zu bytes after %zu)",
			   perf_event__name(c->type), c->size, id_size, body);
		return -EFAULT;
	}
	c->off = c->size - id_size;
	if (type & PERF_SAMPLE_TID) {
		cursor__take64(c, &v, "tid");
		s->pid = (__u32)v;
		s->tid = (__u32)(v >> 32);
	}
	if (type & PERF_SAMPLE_TIME)
		cursor__take64(c, &s->time, "time");
	if (type & PERF_SAMPLE_ID)
		cursor__take64(c, &s->id, "id");
	if (type & PERF_SAMPLE_STREAM_ID)
		cursor__take64(c, &s->stream_id, "stream_id");
	if (type & PERF_SAMPLE_CPU) {
		cursor__take64(c, &v, "cpu");
		s->cpu = (__u32)v;
	}
	if (type & PERF_SAMPLE_IDENTIFIER)
		cursor__take64(c, &s->id, "identifier");
	s->end = c->size;
	return 0;
}

static int perf_sample__parse_read(const struct perf_event_attr *attr, struct cursor *c,
				   struct perf_sample *s)
{
	__u64 fmt = attr->read_format, per;

	if (fmt & PERF_FORMAT_GROUP) {
		if (cursor__take64(c, &s->read_nr, "read nr"))
			return -EFAULT;
	} else if (cursor__take64(c, &s->read_value, "read value")) {
		return -EFAULT;
	}
	if ((fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
	    cursor__take64(c, &s->time_enabled, "read time_enabled"))
		return -EFAULT;
	if ((fmt & PERF_FORMAT_TOTAL_TIME_RUNNING) &&
	    cursor__take64(c, &s->time_running, "read time_running"))
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
	if ((fmt & PERF_FORMAT_ID) && cursor__take64(c, &s->read_id, "read id"))
		return -EFAULT;
	if ((fmt & PERF_FORMAT_LOST) && cursor__take64(c, &s->read_lost, "read lost"))
		return -EFAULT;
	return 0;
}

static int perf_sample__parse_regs(struct cursor *c, __u64 mask, __u64 *abi, __u32 *nr,
				   const char *what)
{
	if (cursor__take64(c, abi, what))
		return -EFAULT;
	if (!*abi)
		return 0;
	*nr = __builtin_popcountll(mask);
	return cursor__skip(c, *nr, 8, what);
}

/* PERF_SAMPLE_STACK_USER: size, data[size], dyn_size (when size != 0) */
static int perf_sample__parse_ustack(struct cursor *c, struct perf_sample *s)
{
	if (cursor__take64(c, &s->user_stack_size, "user stack size"))
		return -EFAULT;
	if (!s->user_stack_size)
		return 0;
	if (s->user_stack_size % 8)
		return cursor__fail(c, "user stack (size not a multiple of 8)");
	if (cursor__skip(c, s->user_stack_size, 1, "user stack") ||
	    cursor__take64(c, &s->user_stack_dyn_size, "user stack dyn_size"))
		return -EFAULT;
	if (s->user_stack_dyn_size > s->user_stack_size) {
		error__set("%s: user stack dyn_size %" PRIu64 " > size %" PRIu64,
			   perf_event__name(c->type), (uint64_t)s->user_stack_dyn_size,
			   (uint64_t)s->user_stack_size);
		return -EFAULT;
	}
	return 0;
}

int perf_sample__parse(const struct perf_event_attr *attr, const void *event,
		       struct perf_sample *s)
{
	struct perf_event_header h = rdhdr(event);
	struct cursor c = { .p = event, .off = sizeof(h), .size = h.size, .type = h.type };
	__u64 type = attr->sample_type, v;

	memset(s, 0, sizeof(*s));
	s->pid = s->tid = s->cpu = (__u32)-1;
	s->time = s->id = s->stream_id = (__u64)-1;
	s->period = attr->sample_period;
	if (h.size < sizeof(h)) {
		error__set("record size %u is smaller than its header", h.size);
		return -EFAULT;
	}

	if (h.type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED) {
		if (cursor__take64(&c, &s->cookie, "cookie") || cursor__take64(&c, &s->nr, "nr"))
			return -EFAULT;
		s->callchain_offset = 16;
		if (cursor__skip(&c, s->nr, 8, "ips"))
			return -EFAULT;
		s->callchain = (const __u64 *)((const char *)event + 24);
		s->deferred = true;
		s->end = c.off;
		if (attr->sample_id_all)
			return perf_sample__parse_id(attr, &c, c.off, s);
		return 0;
	}
	if (h.type == PERF_DEFER_RECORD_USER_DUMP) {
		/* cookie, then perf's REGS_USER and STACK_USER fields */
		if (cursor__take64(&c, &s->cookie, "cookie"))
			return -EFAULT;
		s->regs_user_offset = c.off;
		if (perf_sample__parse_regs(&c, attr->sample_regs_user, &s->user_regs_abi,
					    &s->nr_user_regs, "user regs") ||
		    perf_sample__parse_ustack(&c, s))
			return -EFAULT;
		s->regs_stack_size = c.off - s->regs_user_offset;
		s->deferred = true;
		s->end = c.off;
		if (attr->sample_id_all)
			return perf_sample__parse_id(attr, &c, c.off, s);
		return 0;
	}
	if (h.type != PERF_RECORD_SAMPLE) {
		s->end = sizeof(h);
		if (attr->sample_id_all)
			return perf_sample__parse_id(attr, &c, sizeof(h), s);
		return 0;
	}

	if ((type & PERF_SAMPLE_IDENTIFIER) && cursor__take64(&c, &s->id, "identifier"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_IP) && cursor__take64(&c, &s->ip, "ip"))
		return -EFAULT;
	if (type & PERF_SAMPLE_TID) {
		if (cursor__take64(&c, &v, "tid"))
			return -EFAULT;
		s->pid = (__u32)v;
		s->tid = (__u32)(v >> 32);
	}
	if ((type & PERF_SAMPLE_TIME) && cursor__take64(&c, &s->time, "time"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_ADDR) && cursor__take64(&c, &s->addr, "addr"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_ID) && cursor__take64(&c, &s->id, "id"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_STREAM_ID) && cursor__take64(&c, &s->stream_id, "stream_id"))
		return -EFAULT;
	if (type & PERF_SAMPLE_CPU) {
		if (cursor__take64(&c, &v, "cpu"))
			return -EFAULT;
		s->cpu = (__u32)v;
	}
	if ((type & PERF_SAMPLE_PERIOD) && cursor__take64(&c, &s->period, "period"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_READ) && perf_sample__parse_read(attr, &c, s))
		return -EFAULT;
	if (type & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_offset = c.off;
		if (cursor__take64(&c, &s->nr, "callchain nr"))
			return -EFAULT;
		s->callchain = (const __u64 *)((const char *)event + c.off);
		if (cursor__skip(&c, s->nr, 8, "callchain"))
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
		if (cursor__skip(&c, s->raw_size, 1, "raw data"))
			return -EFAULT;
	}
	if (type & PERF_SAMPLE_BRANCH_STACK) {
		if (cursor__take64(&c, &s->branch_nr, "branch stack nr"))
			return -EFAULT;
		if ((attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) &&
		    cursor__take64(&c, &v, "branch stack hw_idx"))
			return -EFAULT;
		if (cursor__skip(&c, s->branch_nr, 24, "branch stack entries"))
			return -EFAULT;
		if ((attr->branch_sample_type & PD_SAMPLE_BRANCH_COUNTERS) &&
		    cursor__skip(&c, s->branch_nr, 8, "branch stack counters"))
			return -EFAULT;
	}
	s->regs_user_offset = c.off;
	if ((type & PERF_SAMPLE_REGS_USER) &&
	    perf_sample__parse_regs(&c, attr->sample_regs_user, &s->user_regs_abi,
				    &s->nr_user_regs, "user regs"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_STACK_USER) && perf_sample__parse_ustack(&c, s))
		return -EFAULT;
	s->regs_stack_size = c.off - s->regs_user_offset;
	if ((type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) &&
	    cursor__take64(&c, &s->weight, "weight"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_DATA_SRC) && cursor__take64(&c, &s->data_src, "data_src"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_TRANSACTION) && cursor__take64(&c, &s->transaction, "transaction"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_REGS_INTR) &&
	    perf_sample__parse_regs(&c, attr->sample_regs_intr, &s->intr_regs_abi,
				    &s->nr_intr_regs, "intr regs"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_PHYS_ADDR) && cursor__take64(&c, &s->phys_addr, "phys_addr"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_CGROUP) && cursor__take64(&c, &s->cgroup, "cgroup"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_DATA_PAGE_SIZE) &&
	    cursor__take64(&c, &s->data_page_size, "data_page_size"))
		return -EFAULT;
	if ((type & PERF_SAMPLE_CODE_PAGE_SIZE) &&
	    cursor__take64(&c, &s->code_page_size, "code_page_size"))
		return -EFAULT;
	if (type & PERF_SAMPLE_AUX) {
		if (cursor__take64(&c, &s->aux_size, "aux size") ||
		    cursor__skip(&c, s->aux_size, 1, "aux data"))
			return -EFAULT;
	}
	s->end = c.off;
	return 0;
}
