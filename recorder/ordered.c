// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "ordered.h"

struct ordered_entry {
	__u64		time;
	int		rank;	/* at equal times: 0 (early) first */
	__u64		seq;	/* arrival: keeps records of equal time in order */
	const void	*ext;	/* NOCOPY: the record itself; else NULL */
	size_t		off;	/* else: in the arena */
	size_t		size;
};

struct ordered {
	event_fn		deliver;
	void			*arg;
	struct ordered_entry	*ents;
	size_t			nr, cap;
	char			*arena;
	size_t			used, arena_cap;
	__u64			seq, round_max, prev_max;
	__u64			limit;		/* of the last round */
	__u64			out_of_order;
	size_t			delivered;
};

struct ordered *ordered__new(event_fn deliver, void *arg)
{
	struct ordered *q = calloc(1, sizeof(*q));

	if (q) {
		q->deliver = deliver;
		q->arg = arg;
	}
	return q;
}

int ordered__push(struct ordered *q, __u64 time, const void *event, size_t size,
		  unsigned int flags)
{
	const struct perf_event_header *h = event;
	struct ordered_entry *e;

	if (size < sizeof(*h))
		return -EINVAL;
	if (q->nr == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 1024;

		e = realloc(q->ents, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		q->ents = e;
		q->cap = cap;
	}
	if (!(flags & ORDERED_NOCOPY) && q->used + size > q->arena_cap) {
		size_t cap = q->arena_cap ? 2 * q->arena_cap : 1 << 20;
		char *a;

		while (cap < q->used + size)
			cap *= 2;
		a = realloc(q->arena, cap);
		if (!a)
			return -ENOMEM;
		q->arena = a;
		q->arena_cap = cap;
	}
	e = &q->ents[q->nr++];
	e->time = time;
	e->rank = !(flags & ORDERED_EARLY);
	e->seq = q->seq++;
	e->size = size;
	if (flags & ORDERED_NOCOPY) {
		e->ext = event;
		e->off = 0;
	} else {
		memcpy(q->arena + q->used, event, size);
		e->ext = NULL;
		e->off = q->used;
		q->used += size;
	}
	if (time > q->round_max)
		q->round_max = time;
	if (time < q->limit)
		q->out_of_order++;
	return 0;
}

static int ordered__cmp(const void *a, const void *b)
{
	const struct ordered_entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const void *ordered__event(const struct ordered *q, const struct ordered_entry *e)
{
	return e->ext ? e->ext : q->arena + e->off;
}

/* Deliver, in time order, every record with time <= limit. */
static int ordered__deliver(struct ordered *q, __u64 limit)
{
	size_t i, n, keep_bytes = 0;
	int ret = 0;

	q->limit = limit;
	if (q->nr > 1)
		qsort(q->ents, q->nr, sizeof(*q->ents), ordered__cmp);
	for (n = 0; n < q->nr && q->ents[n].time <= limit; n++) {
		ret = q->deliver(q->arg, ordered__event(q, &q->ents[n]), q->ents[n].size);
		if (ret) {
			n++;
			break;
		}
	}
	/* what waits moves to a fresh arena (sorted order is not arena order) */
	if (n < q->nr) {
		char *arena = q->used ? malloc(q->arena_cap) : NULL;

		if (q->used && !arena)
			return -ENOMEM;
		for (i = n; i < q->nr; i++) {
			struct ordered_entry *e = &q->ents[i - n];

			*e = q->ents[i];
			if (e->ext)
				continue;
			memcpy(arena + keep_bytes, q->arena + e->off, e->size);
			e->off = keep_bytes;
			keep_bytes += e->size;
		}
		if (q->used) {
			free(q->arena);
			q->arena = arena;
		}
	}
	q->nr -= n;
	q->used = keep_bytes;
	q->delivered = n;
	return ret;
}

int ordered__round(struct ordered *q)
{
	__u64 limit = q->prev_max;

	q->prev_max = q->round_max;
	return ordered__deliver(q, limit);
}

int ordered__flush(struct ordered *q)
{
	return ordered__deliver(q, ~0ULL);
}

size_t ordered__delivered(const struct ordered *q)
{
	return q->delivered;
}

__u64 ordered__out_of_order(const struct ordered *q)
{
	return q->out_of_order;
}

__u64 ordered__written_until(const struct ordered *q)
{
	return q->limit;
}

size_t ordered__pending(const struct ordered *q)
{
	return q->nr;
}

void ordered__delete(struct ordered *q)
{
	if (!q)
		return;
	free(q->ents);
	free(q->arena);
	free(q);
}
