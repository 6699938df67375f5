// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "ordered.h"

struct pd_ordered_entry {
	__u64	time;
	int	rank;	/* at equal times: 0 (early) first */
	__u64	seq;	/* arrival: keeps records of equal time in order */
	size_t	off;	/* in the arena */
	size_t	size;
};

struct pd_ordered {
	pd_deliver_fn		deliver;
	void			*arg;
	struct pd_ordered_entry	*ents;
	size_t			nr, cap;
	char			*arena;
	size_t			used, arena_cap;
	__u64			seq, round_max, prev_max;
	size_t			delivered;
};

struct pd_ordered *pd_ordered__new(pd_deliver_fn deliver, void *arg)
{
	struct pd_ordered *q = calloc(1, sizeof(*q));

	if (q) {
		q->deliver = deliver;
		q->arg = arg;
	}
	return q;
}

int pd_ordered__queue(struct pd_ordered *q, __u64 time, const void *event, size_t size,
		      bool early)
{
	const struct perf_event_header *h = event;
	struct pd_ordered_entry *e;

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
	if (q->used + size > q->arena_cap) {
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
	memcpy(q->arena + q->used, event, size);
	e = &q->ents[q->nr++];
	e->time = time;
	e->rank = !early;
	e->seq = q->seq++;
	e->off = q->used;
	e->size = size;
	q->used += size;
	if (time > q->round_max)
		q->round_max = time;
	return 0;
}

static int pd_ordered_cmp(const void *a, const void *b)
{
	const struct pd_ordered_entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Deliver, in time order, every record with time <= limit. */
static int pd_ordered_deliver(struct pd_ordered *q, __u64 limit)
{
	size_t i, n, keep_bytes = 0;
	int ret = 0;

	qsort(q->ents, q->nr, sizeof(*q->ents), pd_ordered_cmp);
	for (n = 0; n < q->nr && q->ents[n].time <= limit; n++) {
		ret = q->deliver(q->arg, q->arena + q->ents[n].off, q->ents[n].size);
		if (ret) {
			n++;
			break;
		}
	}
	/* what waits moves to a fresh arena (sorted order is not arena order) */
	if (n < q->nr) {
		char *arena = malloc(q->arena_cap);

		if (!arena)
			return -ENOMEM;
		for (i = n; i < q->nr; i++) {
			struct pd_ordered_entry *e = &q->ents[i - n];

			*e = q->ents[i];
			memcpy(arena + keep_bytes, q->arena + e->off, e->size);
			e->off = keep_bytes;
			keep_bytes += e->size;
		}
		free(q->arena);
		q->arena = arena;
	}
	q->nr -= n;
	q->used = keep_bytes;
	q->delivered = n;
	return ret;
}

int pd_ordered__round(struct pd_ordered *q)
{
	__u64 limit = q->prev_max;

	q->prev_max = q->round_max;
	return pd_ordered_deliver(q, limit);
}

int pd_ordered__flush(struct pd_ordered *q)
{
	return pd_ordered_deliver(q, ~0ULL);
}

size_t pd_ordered__delivered(const struct pd_ordered *q)
{
	return q->delivered;
}

size_t pd_ordered__pending(const struct pd_ordered *q)
{
	return q->nr;
}

void pd_ordered__delete(struct pd_ordered *q)
{
	if (!q)
		return;
	free(q->ents);
	free(q->arena);
	free(q);
}
