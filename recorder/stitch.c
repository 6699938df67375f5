// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stitcher: deferred user callchains merged back into their samples,
 * streaming.  See stitch.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "stitch.h"
#include "util.h"

#define DEFAULT_MAX_PENDING	(256UL << 20)
#define NODE_OVERHEAD		64	/* bytes counted per queued record besides itself */

/* A record waiting in the FIFO: a held sample, or one queued behind it. */
struct node {
	struct node *next;	/* FIFO order */
	struct node *tnext;	/* next held sample of the same tid */
	__u64 *ev;
	size_t size;
	bool held;
	__u32 tid;
	__u64 cookie;
	__u64 time;		/* held: the sample's time, when timed */
	bool timed;
	size_t cc_off;		/* held: offset of the callchain nr */
	__u64 cc_nr;
	bool dump;		/* its attr takes USER_DUMP records */
	size_t ru_off;		/* dump: where REGS_USER goes */
};

/* What a CALLCHAIN_DEFERRED or USER_DUMP record gives its samples. */
struct payload {
	const unsigned char *ips;	/* CALLCHAIN_DEFERRED: nr ips */
	__u64 nr;
	const unsigned char *dump;	/* USER_DUMP: abi ... dyn_size, len bytes */
	size_t len;
	size_t stack_off;		/* offset of the stack size in dump */
	__u64 time;			/* the record's, when timed */
	bool timed;
};

/* The held samples of one tid, oldest first. */
struct tidq {
	struct tidq *hnext;
	__u32 tid;
	struct node *first, *last;
};

struct stitch {
	struct perf_data_writer *out;
	struct evlist *el;
	struct node *head, *tail;
	size_t pending, max_pending;
	struct tidq **buckets;
	size_t nr_buckets, nr_tids;
	struct stitch_stats st;
	bool keep;		/* stitch__keep_deferred(): hold, match, rewrite nothing */
	int err;
};

static void wr64(void *p, __u64 v)
{
	memcpy(p, &v, sizeof(v));
}

static __u32 rdhdr_type(const void *event)
{
	struct perf_event_header h;

	memcpy(&h, event, sizeof(h));
	return h.type;
}

struct stitch *stitch__new(struct perf_data_writer *out)
{
	struct stitch *s = calloc(1, sizeof(*s));

	if (!s)
		goto fail;
	s->out = out;
	s->max_pending = DEFAULT_MAX_PENDING;
	s->nr_buckets = 64;
	s->buckets = calloc(s->nr_buckets, sizeof(*s->buckets));
	s->el = evlist__new();
	if (!s->buckets || !s->el)
		goto fail;
	return s;
fail:
	stitch__delete(s);
	errno = ENOMEM;
	return NULL;
}

void stitch__delete(struct stitch *s)
{
	if (!s)
		return;
	while (s->head) {
		struct node *n = s->head;

		s->head = n->next;
		free(n->ev);
		free(n);
	}
	for (size_t i = 0; s->buckets && i < s->nr_buckets; i++) {
		while (s->buckets[i]) {
			struct tidq *q = s->buckets[i];

			s->buckets[i] = q->hnext;
			free(q);
		}
	}
	free(s->buckets);
	evlist__delete(s->el);
	free(s);
}

int stitch__add_attr(struct stitch *s, const struct perf_event_attr *attr,
		     const __u64 *ids, __u32 nr_ids)
{
	int err = evlist__add(s->el, attr, ids, nr_ids, NULL);

	if (err)
		return err;
	if (evlist__check(s->el))
		return -EINVAL;
	return 0;
}

void stitch__set_max_pending(struct stitch *s, size_t bytes)
{
	s->max_pending = bytes;
}

void stitch__stats(const struct stitch *s, struct stitch_stats *st)
{
	*st = s->st;
}

/* ---- tid table ------------------------------------------------------- */

static size_t tid_hash(__u32 tid, size_t nr)
{
	return (size_t)(tid * 0x9e3779b1u) & (nr - 1);
}

static struct tidq **tidq__slot(struct stitch *s, __u32 tid)
{
	struct tidq **pp = &s->buckets[tid_hash(tid, s->nr_buckets)];

	while (*pp && (*pp)->tid != tid)
		pp = &(*pp)->hnext;
	return pp;
}

static void tidq__rehash(struct stitch *s)
{
	size_t nr = s->nr_buckets * 4;
	struct tidq **b = calloc(nr, sizeof(*b));

	if (!b)
		return;		/* longer chains, still correct */
	for (size_t i = 0; i < s->nr_buckets; i++) {
		while (s->buckets[i]) {
			struct tidq *q = s->buckets[i];
			size_t h = tid_hash(q->tid, nr);

			s->buckets[i] = q->hnext;
			q->hnext = b[h];
			b[h] = q;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->nr_buckets = nr;
}

static int tidq__hold(struct stitch *s, struct node *n)
{
	struct tidq **pp = tidq__slot(s, n->tid), *q = *pp;

	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return -ENOMEM;
		q->tid = n->tid;
		*pp = q;
		if (++s->nr_tids > 2 * s->nr_buckets)
			tidq__rehash(s);
	}
	if (q->last)
		q->last->tnext = n;
	else
		q->first = n;
	q->last = n;
	return 0;
}

/* ---- output ---------------------------------------------------------- */

static int stitch__write(struct stitch *s, const void *ev, size_t size)
{
	int err = perf_data_writer__write(s->out, ev, size);

	if (err && !s->err)
		s->err = err;
	return s->err;
}

/* Write the records at the head of the FIFO that wait for nothing. */
static int stitch__drain(struct stitch *s)
{
	while (s->head && !s->head->held && !s->err) {
		struct node *n = s->head;

		stitch__write(s, n->ev, n->size);
		s->head = n->next;
		if (!s->head)
			s->tail = NULL;
		s->pending -= n->size + NODE_OVERHEAD;
		free(n->ev);
		free(n);
	}
	return s->err;
}

static void fifo__append(struct stitch *s, struct node *n)
{
	if (s->tail)
		s->tail->next = n;
	else
		s->head = n;
	s->tail = n;
	s->pending += n->size + NODE_OVERHEAD;
	if (s->pending > s->st.max_pending)
		s->st.max_pending = s->pending;
}

/* Queue n just before next, a node of the FIFO. */
static void fifo__insert_before(struct stitch *s, struct node *n, struct node *next)
{
	struct node **pp = &s->head;

	while (*pp != next)
		pp = &(*pp)->next;
	n->next = next;
	*pp = n;
	s->pending += n->size + NODE_OVERHEAD;
	if (s->pending > s->st.max_pending)
		s->st.max_pending = s->pending;
}

static struct node *node__new(const void *event, size_t size)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->ev = malloc(size);
	if (!n->ev) {
		free(n);
		return NULL;
	}
	memcpy(n->ev, event, size);
	n->size = size;
	return n;
}

/* A record that waits for nothing of its own. */
static int stitch__pass(struct stitch *s, const void *event, size_t size)
{
	struct node *n;

	if (!s->head)
		return stitch__write(s, event, size);
	n = node__new(event, size);
	if (!n)
		return s->err = -ENOMEM;
	fifo__append(s, n);
	return 0;
}

/*
 * A sample of a USER_DUMP attr, stitched: the callchain without its
 * USER_DEFERRED, cookie pair (when @pair), and at @ru_off the registers
 * and stack of @p (abi 0 and stack size 0 without a dump), its stack cut
 * to what fits in a record, as the kernel cuts sample_stack_user.
 * Returns the new record (malloc'ed) and its size, or NULL.
 */
static unsigned char *dump__rewrite(struct stitch *s, const unsigned char *ev, size_t size,
				    size_t cc_off, __u64 cc_nr, bool pair, size_t ru_off,
				    const struct payload *p, size_t *out_size)
{
	static const __u64 none[2];	/* abi NONE, stack size 0 */
	size_t cut = pair ? 16 : 0, tail_off = cc_off + 8 + cc_nr * 8, len = sizeof(none);
	const unsigned char *dump = (const unsigned char *)none;
	__u64 stack = 0, dyn = 0, keep;
	struct perf_event_header h;
	unsigned char *out, *o;

	if (p && p->dump) {
		dump = p->dump;
		len = p->len;
		stack = rd64(dump + p->stack_off);
		if (stack)
			dyn = rd64(dump + p->stack_off + 8 + stack);
	}
	keep = stack;
	if (size - cut + len > PD_MAX_EVENT_SIZE) {
		__u64 over = size - cut + len - PD_MAX_EVENT_SIZE;

		if (!stack || over > stack + 8) {
			error__set("stitch: a sample of %zu bytes has no room for its user registers",
				   size);
			s->err = -EINVAL;
			return NULL;
		}
		keep = over < stack ? (stack - over) & ~7ULL : 0;
		len = p->stack_off + 8 + (keep ? keep + 8 : 0);
		s->st.truncated++;
	}
	*out_size = size - cut + len;
	out = o = malloc(*out_size);
	if (!out)
		return NULL;
	memcpy(o, ev, cc_off);
	o += cc_off;
	wr64(o, cc_nr - cut / 8);
	o += 8;
	memcpy(o, ev + cc_off + 8, (cc_nr - cut / 8) * 8);
	o += (cc_nr - cut / 8) * 8;
	memcpy(o, ev + tail_off, ru_off - tail_off);
	o += ru_off - tail_off;
	if (keep == stack) {
		memcpy(o, dump, len);
		o += len;
	} else {
		memcpy(o, dump, p->stack_off);
		o += p->stack_off;
		wr64(o, keep);
		o += 8;
		if (keep) {
			memcpy(o, dump + p->stack_off + 8, keep);
			o += keep;
			wr64(o, dyn < keep ? dyn : keep);
			o += 8;
		}
	}
	memcpy(o, ev + ru_off, size - ru_off);
	memcpy(&h, out, sizeof(h));
	h.size = (__u16)*out_size;
	memcpy(out, &h, sizeof(h));
	return out;
}

/*
 * Rewrite a held sample: the USER_DEFERRED, cookie pair becomes
 * PERF_CONTEXT_USER, ips[0..nr) (nothing when ips is NULL or nr is 0).
 */
static int node__rewrite(struct stitch *s, struct node *n, const struct payload *pl)
{
	const unsigned char *ips = pl ? pl->ips : NULL;
	__u64 nr = pl ? pl->nr : 0;
	size_t base = n->size - 16, tail_off = n->cc_off + 8 + n->cc_nr * 8, size;
	__u64 kern = n->cc_nr - 2, add = ips && nr ? nr + 1 : 0;
	unsigned char *p, *ev = (unsigned char *)n->ev;
	struct perf_event_header h;

	if (n->dump) {
		p = dump__rewrite(s, ev, n->size, n->cc_off, n->cc_nr, true, n->ru_off, pl, &size);
		if (!p)
			return s->err ? s->err : (s->err = -ENOMEM);
		goto done;
	}
	if (add && base + add * 8 > PD_MAX_EVENT_SIZE) {
		__u64 room = (PD_MAX_EVENT_SIZE - base) / 8;

		add = room >= 2 ? room : 0;
		s->st.truncated++;
	}
	size = base + add * 8;
	p = malloc(size);
	if (!p)
		return s->err = -ENOMEM;
	memcpy(p, ev, n->cc_off);
	wr64(p + n->cc_off, kern + add);
	memcpy(p + n->cc_off + 8, ev + n->cc_off + 8, kern * 8);
	if (add) {
		wr64(p + n->cc_off + 8 + kern * 8, PERF_CONTEXT_USER);
		memcpy(p + n->cc_off + 16 + kern * 8, ips, (add - 1) * 8);
	}
	memcpy(p + n->cc_off + 8 + (kern + add) * 8, ev + tail_off, n->size - tail_off);
	memcpy(&h, p, sizeof(h));
	h.size = (__u16)size;
	memcpy(p, &h, sizeof(h));
done:
	s->pending = s->pending - n->size + size;
	free(n->ev);
	n->ev = (__u64 *)p;
	n->size = size;
	return 0;
}

/* Whether held sample n is one of record p's own: its cookie, its kind. */
static bool node__of(const struct node *n, const struct payload *p, __u64 cookie)
{
	return n->cookie == cookie && n->dump == !!p->dump;
}

/*
 * Whether held sample n is of a kernel entry after that of record p, so
 * that it waits for its own record: not of p's cookie, and not older than
 * the newest of p's own samples (newest; without any, p's time less the
 * nanosecond by which the module dates a record after its samples).  The
 * records come in the order of their entries, so an older sample's will
 * not come; a later one's sorts before p only where the clock stood still
 * (docs/architecture.md, Unwind), every sample of several entries and p
 * on one time, and natively p would be right after its own samples.
 */
static bool node__later(const struct node *n, const struct payload *p, __u64 cookie,
			bool found, __u64 newest)
{
	if (!p || !p->timed || !n->timed || node__of(n, p, cookie))
		return false;
	return n->time >= (found ? newest : p->time - 1);
}

/*
 * Release the held samples of tid: those with cookie get what p gives
 * (when p is not NULL and of their kind: ips for a callchain, a dump for
 * a USER_DUMP attr); those of later entries (node__later()) stay held,
 * the first of them in *later; the others are unmatched.  In the deferred
 * form (s->keep) nothing is rewritten.  Returns how many matched.
 */
static __u64 stitch__release(struct stitch *s, __u32 tid, __u64 cookie,
			     const struct payload *p, bool evict, struct node **later)
{
	struct tidq **pp = tidq__slot(s, tid), *q = *pp;
	struct node *n, **np;
	const struct payload *order = p;	/* NULL: keep none held */
	__u64 matched = 0, newest = 0;
	bool found = false;

	if (later)
		*later = NULL;
	if (!q)
		return 0;
	for (n = q->first; p && n; n = n->tnext) {
		if (!node__of(n, p, cookie))
			continue;
		if (!n->timed)
			order = NULL;	/* no time: perf's rule alone */
		found = true;
		if (n->time > newest)
			newest = n->time;
	}
	for (np = &q->first, q->last = NULL; (n = *np); ) {
		if (node__later(n, order, cookie, found, newest)) {
			if (later && !*later)
				*later = n;
			q->last = n;
			np = &n->tnext;
			continue;
		}
		if (p && node__of(n, p, cookie)) {
			if (!s->keep)
				node__rewrite(s, n, p);
			s->st.stitched++;
			matched++;
		} else {
			if (!s->keep)
				node__rewrite(s, n, NULL);
			s->st.unmatched++;
			if (evict)
				s->st.evicted++;
		}
		n->held = false;
		*np = n->tnext;
	}
	if (!q->first) {
		*pp = q->hnext;
		free(q);
		s->nr_tids--;
	}
	return matched;
}

/* Over budget: release the oldest held samples, unmatched. */
static void stitch__evict(struct stitch *s)
{
	while (s->pending > s->max_pending && s->head && !s->err) {
		if (s->head->held)
			stitch__release(s, s->head->tid, 0, NULL, true, NULL);
		stitch__drain(s);
	}
}

static int stitch__sample(struct stitch *s, const void *event, size_t size)
{
	const struct evsel *a = evlist__find(s->el, event);
	struct perf_sample smp;
	struct node *n;

	s->st.samples++;
	if (!a || perf_sample__parse(&a->attr, event, &smp))
		return -EINVAL;
	if (!smp.deferred && attr__user_dump(&a->attr) && !s->keep) {
		/* not deferred (an in-NMI walk, kept): no registers, no stack */
		unsigned char *p = dump__rewrite(s, event, size, smp.callchain_offset, smp.nr,
						 false, smp.regs_user_offset, NULL, &size);
		int err;

		if (!p)
			return s->err ? s->err : (s->err = -ENOMEM);
		err = stitch__pass(s, p, size);
		free(p);
		return err;
	}
	if (!smp.deferred)
		return stitch__pass(s, event, size);
	s->st.deferred++;
	n = node__new(event, size);
	if (!n)
		return s->err = -ENOMEM;
	n->held = true;
	n->tid = smp.tid;
	n->cookie = smp.cookie;
	n->time = smp.time;
	n->timed = a->attr.sample_type & PERF_SAMPLE_TIME;
	n->cc_off = smp.callchain_offset;
	n->cc_nr = smp.nr;
	n->dump = attr__user_dump(&a->attr);
	n->ru_off = smp.regs_user_offset;
	if (tidq__hold(s, n)) {
		free(n->ev);
		free(n);
		return s->err = -ENOMEM;
	}
	fifo__append(s, n);
	stitch__evict(s);
	return s->err;
}

/* Where the time of a non-sample record's sample_id is, or 0. */
static size_t id_time_offset(const struct perf_event_attr *attr, size_t size)
{
	__u64 after = PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		      PERF_SAMPLE_IDENTIFIER;

	if (!attr->sample_id_all || !(attr->sample_type & PERF_SAMPLE_TIME))
		return 0;
	return size - 8 * (1 + __builtin_popcountll(attr->sample_type & after));
}

/*
 * A CALLCHAIN_DEFERRED or USER_DUMP record: its samples get it.  In the
 * deferred form it is written after them, and before the held samples of
 * later entries, on the time of the first of those if its own is later:
 * perf, which sorts by time and keeps the order of equal times, then
 * meets it where a native file has it.
 */
static int stitch__deferred(struct stitch *s, const void *event, size_t size)
{
	const struct evsel *a = evlist__find(s->el, event);
	struct payload p = { };
	struct perf_sample smp;
	struct node *later, *n;
	size_t off;

	s->st.records++;
	if (!a || perf_sample__parse(&a->attr, event, &smp))
		return -EINVAL;
	off = id_time_offset(&a->attr, size);
	p.timed = off != 0;
	p.time = smp.time;
	if (rdhdr_type(event) == PERF_DEFER_RECORD_USER_DUMP) {
		p.dump = (const unsigned char *)event + smp.regs_user_offset;
		p.len = smp.regs_stack_size;
		p.stack_off = 8 + (smp.user_regs_abi ? smp.nr_user_regs * 8 : 0);
	} else {
		p.ips = (const unsigned char *)event + 24;
		p.nr = smp.nr;
	}
	if (!stitch__release(s, smp.tid, smp.cookie, &p, false, &later))
		s->st.orphan_records++;
	if (!s->keep || !later)
		return (s->keep ? stitch__pass(s, event, size) : 0) ?: stitch__drain(s);
	n = node__new(event, size);
	if (!n)
		return s->err = -ENOMEM;
	if (off && later->time < p.time && rd64((const char *)event + off) == p.time)
		wr64((char *)n->ev + off, later->time);
	fifo__insert_before(s, n, later);
	return stitch__drain(s);
}

int stitch__event(struct stitch *s, const void *event, size_t size)
{
	struct perf_event_header h;

	if (s->err)
		return s->err;
	if (size < sizeof(h)) {
		error__set("stitch: record of %zu bytes", size);
		return -EINVAL;
	}
	memcpy(&h, event, sizeof(h));
	if (h.size != size) {
		error__set("stitch: record of %zu bytes with header.size %u", size, h.size);
		return -EINVAL;
	}
	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		return stitch__sample(s, event, size);
	case PERF_DEFER_RECORD_CALLCHAIN_DEFERRED:
	case PERF_DEFER_RECORD_USER_DUMP:
		return stitch__deferred(s, event, size);
	case PERF_RECORD_EXIT:
		/* { pid, ppid, tid, ptid, time }: no record can come after exit */
		if (size >= 32)
			stitch__release(s, (__u32)rd64((const char *)event + 16), 0, NULL, false,
					NULL);
		stitch__drain(s);
		break;
	case PERF_RECORD_LOST:
		/* { id, lost } */
		if (size >= 24)
			s->st.lost_records += rd64((const char *)event + 16);
		break;
	}
	if (s->err)
		return s->err;
	return stitch__pass(s, event, size);
}

void stitch__keep_deferred(struct stitch *s)
{
	s->keep = true;
}

int stitch__finish(struct stitch *s, struct stitch_stats *st)
{
	for (size_t i = 0; i < s->nr_buckets && !s->err; i++) {
		while (s->buckets[i])
			stitch__release(s, s->buckets[i]->tid, 0, NULL, false, NULL);
	}
	stitch__drain(s);
	if (st)
		*st = s->st;
	return s->err;
}
