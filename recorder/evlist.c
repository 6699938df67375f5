// SPDX-License-Identifier: GPL-2.0-only
/*
 * The event list of a file: its attrs, and the attr of each record.  See
 * evlist.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "evlist.h"
#include "util.h"

struct id_slot {
	__u64 id;		/* 0: empty */
	unsigned int idx;
};

struct evlist {
	struct evsel *attrs;
	unsigned int nr, alloc;
	struct id_slot *slots;	/* open addressing, power-of-two size */
	size_t nr_slots, nr_used;
};

/* Position of the id in a sample, counted in u64 from after the header. */
static int sample_type__id_pos(__u64 sample_type)
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
static int sample_type__is_pos(__u64 sample_type)
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

struct evlist *evlist__new(void)
{
	return calloc(1, sizeof(struct evlist));
}

void evlist__delete(struct evlist *el)
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

static size_t evlist__id_hash(__u64 id, size_t mask)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
}

static int evlist__grow_slots(struct evlist *el, size_t want)
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
		for (h = evlist__id_hash(old[i].id, n - 1); el->slots[h].id; h = (h + 1) & (n - 1))
			;
		el->slots[h] = old[i];
	}
	free(old);
	return 0;
}

static const struct id_slot *evlist__lookup(const struct evlist *el, __u64 id)
{
	if (!el->nr_slots)
		return NULL;
	for (size_t h = evlist__id_hash(id, el->nr_slots - 1); el->slots[h].id;
	     h = (h + 1) & (el->nr_slots - 1)) {
		if (el->slots[h].id == id)
			return &el->slots[h];
	}
	return NULL;
}

int evlist__add(struct evlist *el, const struct perf_event_attr *attr,
		const __u64 *ids, __u32 nr_ids, const char *name)
{
	struct evsel *a;

	if (el->nr == el->alloc) {
		unsigned int n = el->alloc ? el->alloc * 2 : 4;
		struct evsel *p = realloc(el->attrs, n * sizeof(*p));

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
		for (h = evlist__id_hash(ids[i], mask); el->slots[h].id; h = (h + 1) & mask)
			;
		el->slots[h].id = ids[i];
		el->slots[h].idx = el->nr;
		el->nr_used++;
	}
	el->nr++;
	return 0;
}

unsigned int evlist__nr(const struct evlist *el)
{
	return el->nr;
}

struct evsel *evlist__attr(const struct evlist *el, unsigned int idx)
{
	return idx < el->nr ? &el->attrs[idx] : NULL;
}

int evlist__check(const struct evlist *el)
{
	const struct perf_event_attr *first;

	if (el->nr <= 1)
		return 0;
	first = &el->attrs[0].attr;
	for (unsigned int i = 0; i < el->nr; i++) {
		const struct perf_event_attr *a = &el->attrs[i].attr;
		int id_pos = sample_type__id_pos(a->sample_type);
		int is_pos = sample_type__is_pos(a->sample_type);

		if (id_pos < 0 || is_pos < 0) {
			error__set("attr %u: several events but no PERF_SAMPLE_ID or IDENTIFIER in sample_type %#llx",
				   i, (unsigned long long)a->sample_type);
			return -EINVAL;
		}
		if (id_pos != sample_type__id_pos(first->sample_type) ||
		    is_pos != sample_type__is_pos(first->sample_type)) {
			error__set("attr %u: non matching sample_type %#llx (attr 0 has %#llx)",
				   i, (unsigned long long)a->sample_type,
				   (unsigned long long)first->sample_type);
			return -EINVAL;
		}
		if (a->sample_id_all != first->sample_id_all) {
			error__set("attr %u: non matching sample_id_all", i);
			return -EINVAL;
		}
	}
	return 0;
}

const struct evsel *evlist__find(const struct evlist *el, const void *event)
{
	struct perf_event_header h = rdhdr(event);
	const struct perf_event_attr *first;
	const struct id_slot *slot;
	const char *words = (const char *)event + sizeof(h);
	size_t n;
	__u64 id;
	int pos;

	if (!el->nr) {
		error__set("no attrs");
		return NULL;
	}
	first = &el->attrs[0].attr;
	if (el->nr == 1)
		return &el->attrs[0];
	if (!first->sample_id_all && h.type != PERF_RECORD_SAMPLE)
		return &el->attrs[0];
	n = h.size < sizeof(h) ? 0 : (h.size - sizeof(h)) / 8;
	if (h.type == PERF_RECORD_SAMPLE) {
		pos = sample_type__id_pos(first->sample_type);
		if (pos < 0)
			return &el->attrs[0];
		if ((size_t)pos >= n)
			goto short_record;
		id = rd64(words + pos * 8);
	} else {
		pos = sample_type__is_pos(first->sample_type);
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
		error__set("PERF_RECORD_%s: unknown event id %" PRIu64, perf_event__name(h.type),
			   (uint64_t)id);
		return NULL;
	}
	return &el->attrs[slot->idx];
short_record:
	error__set("PERF_RECORD_%s: size %#x too small to hold the event id",
		   perf_event__name(h.type), h.size);
	return NULL;
}
