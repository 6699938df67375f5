/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_EVLIST_H
#define PERF_DEFER_EVLIST_H

/*
 * An event list: the attrs of a file with their ids, and perf's rules to
 * find the attr of a record (evlist__event2evsel()): with one attr, that
 * one; otherwise by the id at the position that PERF_SAMPLE_IDENTIFIER or
 * PERF_SAMPLE_ID gives, which must be the same for every attr.
 */
#include "evsel.h"

struct evlist;

struct evlist *evlist__new(void);
void evlist__delete(struct evlist *el);
int evlist__add(struct evlist *el, const struct perf_event_attr *attr,
		const __u64 *ids, __u32 nr_ids, const char *name);
unsigned int evlist__nr(const struct evlist *el);
struct evsel *evlist__attr(const struct evlist *el, unsigned int idx);
/* 0, or -EINVAL when the attrs' id positions or sample_id_all disagree. */
int evlist__check(const struct evlist *el);
/*
 * The attr of a record, NULL (and an error__msg()) when the record is too
 * short for its id or the id is unknown.  Synthesized records (id 0) and
 * records of files without sample_id_all go to the first attr, as in perf.
 */
const struct evsel *evlist__find(const struct evlist *el, const void *event);

#endif /* PERF_DEFER_EVLIST_H */
