// SPDX-License-Identifier: GPL-2.0-only
/*
 * defer_lib: the records of perf's rings and of the sessions' rings,
 * parsed into a struct dl_data; perf events and sessions, opened, mapped
 * and drained.  See defer_lib.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "defer_lib.h"
#include "dl_private.h"

/* ---- parsed data ---------------------------------------------------- */

void dl_data_init(struct dl_data *d)
{
	int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < DL_MAX_EVENTS; i++)
		d->ev_sess[i] = -1;
}

void dl_data_free(struct dl_data *d)
{
	size_t i;

	for (i = 0; i < d->ns; i++)
		free(d->s[i].chain);
	for (i = 0; i < d->nr; i++)
		free(d->r[i].ips);
	for (i = 0; i < d->nu; i++)
		free(d->u[i].stack);
	free(d->u);
	free(d->s);
	free(d->r);
	free(d->l);
	dl_data_init(d);
}

static void data_err(struct dl_data *d, const char *fmt, ...)
{
	va_list ap;

	if (!d->nerr++) {
		va_start(ap, fmt);
		vsnprintf(d->err, sizeof(d->err), fmt, ap);
		va_end(ap);
		dl_log("parse error: %s", d->err);
	}
}

size_t dl_sid_size(uint64_t st, bool all)
{
	size_t n = 0;

	if (!all)
		return 0;
	n += !!(st & PERF_SAMPLE_TID);
	n += !!(st & PERF_SAMPLE_TIME);
	n += !!(st & PERF_SAMPLE_ID);
	n += !!(st & PERF_SAMPLE_STREAM_ID);
	n += !!(st & PERF_SAMPLE_CPU);
	n += !!(st & PERF_SAMPLE_IDENTIFIER);
	return 8 * n;
}

/* the sample_id at the end of a record of size bytes; body = bytes before it */
static int parse_sid(uint64_t st, bool all, const char *rec, size_t size, size_t body,
		     struct dl_sid *sid)
{
	size_t n = dl_sid_size(st, all);
	const uint64_t *v;
	uint32_t u[2];

	memset(sid, 0, sizeof(*sid));
	if (body + n != size)
		return -1;
	v = (const uint64_t *)(rec + body);
	if (st & PERF_SAMPLE_TID && all) {
		memcpy(u, v++, 8);
		sid->pid = u[0];
		sid->tid = u[1];
	}
	if (st & PERF_SAMPLE_TIME && all)
		sid->time = *v++;
	if (st & PERF_SAMPLE_ID && all)
		sid->id = *v++;
	if (st & PERF_SAMPLE_STREAM_ID && all)
		sid->stream_id = *v++;
	if (st & PERF_SAMPLE_CPU && all) {
		memcpy(u, v++, 8);
		sid->cpu = u[0];
	}
	if (st & PERF_SAMPLE_IDENTIFIER && all)
		sid->identifier = *v++;
	return 0;
}

static void parse_sample(struct dl_perf *p, const char *rec, size_t size, struct dl_data *d)
{
	const struct perf_event_header *h = (const void *)rec;
	const uint64_t *v = (const uint64_t *)(rec + sizeof(*h));
	const uint64_t *end = (const uint64_t *)(rec + size);
	uint64_t st = p->attr.sample_type;
	struct dl_sample s = { .ev = p->ev, .misc = h->misc, .rec = -1 };
	uint32_t u[2];

#define NEED(n)	do { if (v + (n) > end) goto bad; } while (0)
	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(1);
		s.identifier = *v++;
	}
	if (st & PERF_SAMPLE_IP) {
		NEED(1);
		s.ip = *v++;
	}
	if (st & PERF_SAMPLE_TID) {
		NEED(1);
		memcpy(u, v++, 8);
		s.pid = u[0];
		s.tid = u[1];
	}
	if (st & PERF_SAMPLE_TIME) {
		NEED(1);
		s.time = *v++;
	}
	if (st & PERF_SAMPLE_ADDR) {
		NEED(1);
		v++;
	}
	if (st & PERF_SAMPLE_ID) {
		NEED(1);
		s.id = *v++;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		NEED(1);
		s.stream_id = *v++;
	}
	if (st & PERF_SAMPLE_CPU) {
		NEED(1);
		memcpy(u, v++, 8);
		s.cpu = u[0];
	}
	if (st & PERF_SAMPLE_PERIOD) {
		NEED(1);
		s.period = *v++;
	}
	if (st & PERF_SAMPLE_READ) {
		data_err(d, "PERF_SAMPLE_READ is not supported by the parser");
		return;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		NEED(1);
		s.nr = *v++;
		if (s.nr > (size_t)(end - v))
			goto bad;
		s.chain = dl_xrealloc(NULL, (s.nr + 1) * 8);
		memcpy(s.chain, v, s.nr * 8);
	}
#undef NEED
	GROW(d->s, d->ns, d->cs);
	d->s[d->ns++] = s;
	return;
bad:
	data_err(d, "sample of %zu bytes too short for its fields (ev %d)", size, p->ev);
}

/* copy len bytes at ring position pos out of a power-of-2 ring */
static void ring_copy(void *dst, const char *data, uint64_t size, uint64_t pos, size_t len)
{
	uint64_t off = pos & (size - 1);
	size_t first = len;

	if (off + len > size)
		first = size - off;
	memcpy(dst, data + off, first);
	if (first < len)
		memcpy((char *)dst + first, data, len - first);
}

/*
 * Consume [tail, head) of a ring: handle(rec, size) for each record.
 * Returns the number of records, or -1 on a corrupt header (the ring is
 * then consumed up to head so that a test does not loop on it).
 */
static int ring_consume(__u64 *headp, __u64 *tailp, const char *data, uint64_t size,
			struct dl_data *d, const char *what,
			void (*handle)(void *ctx, const char *rec, size_t len), void *ctx)
{
	static uint64_t buf[65536 / 8];
	uint64_t head = __atomic_load_n(headp, __ATOMIC_ACQUIRE);
	uint64_t tail = *tailp;
	struct perf_event_header h;
	int n = 0;

	if (head - tail > size) {
		data_err(d, "%s: head %llu - tail %llu exceeds the ring size %llu", what,
			 (unsigned long long)head, (unsigned long long)tail,
			 (unsigned long long)size);
		n = -1;
		tail = head;
	}
	while (tail < head) {
		if (head - tail < sizeof(h)) {
			data_err(d, "%s: %llu bytes left, less than a header", what,
				 (unsigned long long)(head - tail));
			n = -1;
			break;
		}
		ring_copy(&h, data, size, tail, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail || h.size % 8) {
			data_err(d, "%s: bad record header type %u size %u at %llu (head %llu)",
				 what, h.type, h.size, (unsigned long long)tail,
				 (unsigned long long)head);
			n = -1;
			break;
		}
		ring_copy(buf, data, size, tail, h.size);
		handle(ctx, (const char *)buf, h.size);
		tail += h.size;
		n++;
	}
	if (n < 0)
		tail = head;
	__atomic_store_n(tailp, tail, __ATOMIC_RELEASE);
	return n;
}

/* ---- perf events ---------------------------------------------------- */

void dl_attr_cpu_clock(struct perf_event_attr *attr, uint64_t period_ns)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = period_ns;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			    PERF_SAMPLE_CALLCHAIN;
	attr->sample_id_all = 1;
	attr->disabled = 1;
	attr->enable_on_exec = 1;
	attr->inherit = 1;
}

struct perf_ctx {
	struct dl_perf *p;
	struct dl_data *d;
};

static void perf_handle(void *ctx, const char *rec, size_t size)
{
	struct perf_ctx *c = ctx;
	const struct perf_event_header *h = (const void *)rec;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		parse_sample(c->p, rec, size, c->d);
		break;
	case PERF_RECORD_LOST:
		if (size >= 24)
			c->d->perf_lost += ((const uint64_t *)rec)[2];
		break;
	case PERF_RECORD_THROTTLE:
		c->d->throttle++;
		break;
	default:
		c->d->perf_other++;
		break;
	}
}

void dl_perf_init(struct dl_perf *p)
{
	memset(p, 0, sizeof(*p));
	p->ev = -1;
}

bool dl_perf_has_id(const struct dl_perf *p, uint64_t id)
{
	int i;

	for (i = 0; p && i < p->n; i++)
		if (p->id[i] == id)
			return true;
	return false;
}

static int perf_open_one(struct dl_perf *p, pid_t pid, int cpu)
{
	int i = p->n, fd, ret;

	fd = syscall(SYS_perf_event_open, &p->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		dl_log("perf_event_open(pid %d, cpu %d): %s", pid, cpu, strerror(-ret));
		return ret;
	}
	p->fd[i] = fd;
	p->n++;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &p->id[i]))
		return -errno;
	p->base[i] = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p->base[i] == MAP_FAILED) {
		ret = -errno;
		p->base[i] = NULL;
		dl_log("mmap of the perf ring (cpu %d): %s", cpu, strerror(-ret));
		return ret;
	}
	return 0;
}

int dl_perf_open(struct dl_perf *p, int ev, const struct perf_event_attr *attr, pid_t pid,
		 int cpu, unsigned int data_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	int c, ncpu, ret = 0;

	dl_perf_init(p);
	p->ev = ev;
	p->attr = *attr;
	p->len = (1 + (data_pages ? data_pages : 128)) * page;
	if (cpu != DL_ALL_CPUS) {
		ret = perf_open_one(p, pid, cpu);
	} else {
		ncpu = dl_possible_cpus();
		for (c = 0; c < ncpu && c < DL_MAX_CPUS && !ret; c++)
			ret = perf_open_one(p, pid, c);
	}
	if (ret)
		dl_perf_close(p);
	return ret;
}

int dl_perf_drain(struct dl_perf *p, struct dl_data *d)
{
	struct perf_event_mmap_page *pg;
	struct perf_ctx c = { p, d };
	long page = sysconf(_SC_PAGESIZE);
	uint64_t off, size;
	int i, n, total = 0;

	for (i = 0; i < p->n; i++) {
		pg = p->base[i];
		if (!pg)
			continue;
		off = pg->data_offset ? pg->data_offset : page;
		size = pg->data_size ? pg->data_size : p->len - page;
		n = ring_consume(&pg->data_head, &pg->data_tail, (const char *)pg + off, size,
				 d, "perf ring", perf_handle, &c);
		if (n > 0)
			total += n;
	}
	return total;
}

void dl_perf_close(struct dl_perf *p)
{
	int i;

	for (i = 0; i < p->n; i++) {
		if (p->base[i])
			munmap(p->base[i], p->len);
		if (p->fd[i] >= 0)
			close(p->fd[i]);
		p->base[i] = NULL;
		p->fd[i] = -1;
	}
	p->n = 0;
}

int dl_hold_perf_sched_events(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* ---- sessions ------------------------------------------------------- */

int dl_possible_cpus(void)
{
	char buf[256] = "";
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY);
	int max = -1, a, b, n;
	char *p = buf;

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
	}
	while (*p) {
		if (sscanf(p, "%d-%d", &a, &b) == 2)
			max = b > max ? b : max;
		else if (sscanf(p, "%d", &a) == 1)
			max = a > max ? a : max;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return max >= 0 ? max + 1 : (int)sysconf(_SC_NPROCESSORS_CONF);
}

int dl_ioc_set_ring_wakeup(int devfd, uint32_t data_pages, uint32_t wakeup_bytes)
{
	struct perf_defer_ring r = {
		.size = sizeof(r), .data_pages = data_pages, .wakeup_bytes = wakeup_bytes,
	};

	return ioctl(devfd, PERF_DEFER_IOC_SET_RING, &r) ? -errno : 0;
}

int dl_ioc_set_ring(int devfd, uint32_t data_pages)
{
	return dl_ioc_set_ring_wakeup(devfd, data_pages, 0);
}

uint64_t dl_session_max_used(const struct dl_session *s)
{
	uint64_t max = 0, used;
	int cpu;

	for (cpu = 0; cpu < s->ncpu && s->maps; cpu++) {
		const struct perf_defer_mmap_page *pg = s->maps[cpu];

		used = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) - pg->data_tail;
		if (used > max)
			max = used;
	}
	return max;
}

int dl_ioc_set_dump(int devfd, uint32_t flags, uint32_t stack_size)
{
	struct perf_defer_dump u = { .size = sizeof(u), .flags = flags, .stack_size = stack_size };

	return ioctl(devfd, PERF_DEFER_IOC_SET_DUMP, &u) ? -errno : 0;
}

/* @methods: PERF_DEFER_UNWIND_*, 0-ended (up to 8) */
int dl_ioc_set_unwind(int devfd, const uint8_t *methods, size_t n)
{
	struct perf_defer_unwind u = { .size = sizeof(u) };

	memcpy(u.methods, methods, n < sizeof(u.methods) ? n : sizeof(u.methods));
	return ioctl(devfd, PERF_DEFER_IOC_SET_UNWIND, &u) ? -errno : 0;
}

int dl_ioc_attach(int devfd, int perf_fd)
{
	struct perf_defer_attach a = { .size = sizeof(a), .perf_fd = perf_fd };

	return ioctl(devfd, PERF_DEFER_IOC_ATTACH, &a) ? -errno : 0;
}

int dl_ioc_detach(int devfd, int perf_fd)
{
	struct perf_defer_attach a = { .size = sizeof(a), .perf_fd = perf_fd };

	return ioctl(devfd, PERF_DEFER_IOC_DETACH, &a) ? -errno : 0;
}

int dl_session_open(struct dl_session *s, int idx, unsigned int data_pages)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->idx = idx;
	s->ncpu = dl_possible_cpus();
	s->data_pages = data_pages ? data_pages : PERF_DEFER_RING_DEF_PAGES;
	s->fd = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (s->fd < 0) {
		ret = -errno;
		dl_log("open %s: %s", PERF_DEFER_DEVICE_PATH, strerror(-ret));
		return ret;
	}
	if (data_pages) {
		ret = dl_ioc_set_ring(s->fd, data_pages);
		if (ret) {
			dl_log("SET_RING %u: %s", data_pages, strerror(-ret));
			close(s->fd);
			s->fd = -1;
			return ret;
		}
	}
	return 0;
}

int dl_session_attach(struct dl_session *s, struct dl_perf *p, struct dl_data *d)
{
	int i, ret;

	for (i = 0; i < p->n; i++) {
		ret = dl_ioc_attach(s->fd, p->fd[i]);
		if (ret) {
			dl_log("ATTACH of event %d (fd %d of %d) to session %d: %s", p->ev, i,
			       p->n, s->idx, strerror(-ret));
			return ret;
		}
	}
	if (!s->have_attr) {
		s->sample_type = p->attr.sample_type;
		s->sample_id_all = p->attr.sample_id_all;
		s->regs_mask = p->attr.sample_regs_user;
		s->have_attr = true;
	}
	if (d && p->ev >= 0 && p->ev < DL_MAX_EVENTS) {
		d->ev_sess[p->ev] = s->idx;
		d->ev_perf[p->ev] = p;
	}
	if (d && s->idx >= 0 && s->idx < DL_MAX_SESSIONS)
		d->sess_tid[s->idx] = s->sample_id_all && (s->sample_type & PERF_SAMPLE_TID);
	return 0;
}

int dl_session_map(struct dl_session *s)
{
	long page = sysconf(_SC_PAGESIZE);
	struct perf_defer_mmap_page *pg;
	int cpu, ret;

	s->map_len = (1 + s->data_pages) * page;
	s->maps = calloc(s->ncpu, sizeof(*s->maps));
	if (!s->maps)
		return -ENOMEM;
	for (cpu = 0; cpu < s->ncpu; cpu++) {
		pg = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
			  (off_t)cpu * s->map_len);
		if (pg == MAP_FAILED) {
			ret = -errno;
			dl_log("mmap of the session ring of CPU %d: %s", cpu, strerror(-ret));
			return ret;
		}
		s->maps[cpu] = pg;
		if (pg->version != PERF_DEFER_ABI_MAJOR || pg->cpu != (uint32_t)cpu ||
		    pg->data_offset < sizeof(*pg) ||
		    pg->data_size != (uint64_t)s->data_pages * page ||
		    pg->data_offset + pg->data_size > s->map_len) {
			dl_log("session ring %d: version %u cpu %u data_offset %llu data_size %llu "
			       "(expected %u, %d, >= %zu, %llu)", cpu, pg->version, pg->cpu,
			       (unsigned long long)pg->data_offset,
			       (unsigned long long)pg->data_size, PERF_DEFER_ABI_MAJOR, cpu,
			       sizeof(*pg), (unsigned long long)s->data_pages * page);
			return -EPROTO;
		}
	}
	return 0;
}

/*
 * A USER_DUMP record: header, cookie, abi, regs[weight(mask)] if abi,
 * size, data[size] and dyn_size if size, sample_id.  0 or -1.
 */
static int parse_dump(const struct dl_session *s, const char *rec, size_t size,
		      struct dl_dump *u)
{
	const struct perf_event_header *h = (const void *)rec;
	size_t off = sizeof(*h);

	memset(u, 0, sizeof(*u));
	u->sess = s->idx;
	u->misc = h->misc;
	u->size = h->size;
	if (size < off + 16)
		return -1;
	memcpy(&u->cookie, rec + off, 8);
	memcpy(&u->abi, rec + off + 8, 8);
	off += 16;
	if (u->abi) {
		u->nregs = __builtin_popcountll(s->regs_mask);
		if (u->nregs > sizeof(u->regs) / sizeof(u->regs[0]) || size < off + 8 * u->nregs)
			return -1;
		memcpy(u->regs, rec + off, 8 * u->nregs);
		off += 8 * u->nregs;
	}
	if (size < off + 8)
		return -1;
	memcpy(&u->stack_size, rec + off, 8);
	off += 8;
	if (u->stack_size) {
		if (u->stack_size % 8 || size < off + u->stack_size + 8)
			return -1;
		u->stack = dl_xrealloc(NULL, u->stack_size);
		memcpy(u->stack, rec + off, u->stack_size);
		off += u->stack_size;
		memcpy(&u->dyn_size, rec + off, 8);
		off += 8;
		if (u->dyn_size > u->stack_size)
			goto bad;
	}
	if (parse_sid(s->sample_type, s->sample_id_all, rec, size, off, &u->sid))
		goto bad;
	return 0;
bad:
	free(u->stack);
	u->stack = NULL;
	return -1;
}

struct sess_ctx {
	struct dl_session *s;
	struct dl_data *d;
	uint32_t cpu;
};

static void sess_handle(void *ctx, const char *rec, size_t size)
{
	struct sess_ctx *c = ctx;
	struct dl_data *d = c->d;
	const struct perf_event_header *h = (const void *)rec;
	const uint64_t *v = (const uint64_t *)(rec + sizeof(*h));
	struct dl_record r = { .sess = c->s->idx, .ring_cpu = c->cpu };
	struct dl_lost l = { .sess = c->s->idx, .ring_cpu = c->cpu };
	struct dl_dump u;
	uint64_t st = c->s->sample_type;
	bool all = c->s->sample_id_all;

	switch (h->type) {
	case DL_RECORD_DEFERRED:
		if (size < sizeof(*h) + 16) {
			data_err(d, "CALLCHAIN_DEFERRED of %zu bytes", size);
			return;
		}
		r.misc = h->misc;
		r.size = h->size;
		r.cookie = v[0];
		if (v[1] > (size - sizeof(*h) - 16) / 8) {
			data_err(d, "CALLCHAIN_DEFERRED nr %llu in %zu bytes (cpu %u)",
				 (unsigned long long)v[1], size, c->cpu);
			return;
		}
		r.nr = v[1];
		if (parse_sid(st, all, rec, size, sizeof(*h) + 16 + 8 * r.nr, &r.sid)) {
			data_err(d, "CALLCHAIN_DEFERRED size %zu != 8 + 16 + 8 * nr %u + "
				 "sample_id %zu (cpu %u)", size, r.nr, dl_sid_size(st, all), c->cpu);
			return;
		}
		r.ips = dl_xrealloc(NULL, (r.nr + 1) * 8);
		memcpy(r.ips, v + 2, r.nr * 8);
		d->rec_bytes += size;
		GROW(d->r, d->nr, d->cr);
		d->r[d->nr++] = r;
		break;
	case PERF_RECORD_LOST:
		if (size < sizeof(*h) + 16 ||
		    parse_sid(st, all, rec, size, sizeof(*h) + 16, &l.sid)) {
			data_err(d, "PERF_RECORD_LOST of %zu bytes (sample_id %zu)", size,
				 dl_sid_size(st, all));
			return;
		}
		l.id = v[0];
		l.lost = v[1];
		GROW(d->l, d->nl, d->cl);
		d->l[d->nl++] = l;
		break;
	case PERF_DEFER_RECORD_USER_DUMP:
		if (parse_dump(c->s, rec, size, &u)) {
			data_err(d, "USER_DUMP of %zu bytes does not parse (cpu %u)", size, c->cpu);
			return;
		}
		u.ring_cpu = c->cpu;
		d->rec_bytes += size;
		GROW(d->u, d->nu, d->cu);
		d->u[d->nu++] = u;
		break;
	default:
		data_err(d, "record type %u (size %zu, misc %#x) in a session ring", h->type,
			 size, h->misc);
		break;
	}
}

int dl_session_drain(struct dl_session *s, struct dl_data *d)
{
	struct perf_defer_mmap_page *pg;
	struct sess_ctx c = { s, d, 0 };
	int cpu, n, total = 0;

	if (!s->maps)
		return 0;
	for (cpu = 0; cpu < s->ncpu; cpu++) {
		pg = s->maps[cpu];
		if (!pg)
			continue;
		c.cpu = cpu;
		n = ring_consume(&pg->data_head, &pg->data_tail,
				 (const char *)pg + pg->data_offset, pg->data_size, d,
				 "session ring", sess_handle, &c);
		if (n > 0)
			total += n;
	}
	return total;
}

uint64_t dl_session_lost(const struct dl_session *s)
{
	const struct perf_defer_mmap_page *pg;
	uint64_t lost = 0;
	int cpu;

	for (cpu = 0; s->maps && cpu < s->ncpu; cpu++) {
		pg = s->maps[cpu];
		if (pg)
			lost += __atomic_load_n(&pg->lost, __ATOMIC_RELAXED);
	}
	return lost;
}

void dl_session_close(struct dl_session *s)
{
	int cpu;

	for (cpu = 0; s->maps && cpu < s->ncpu; cpu++)
		if (s->maps[cpu])
			munmap(s->maps[cpu], s->map_len);
	free(s->maps);
	s->maps = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
