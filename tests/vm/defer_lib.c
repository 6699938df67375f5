// SPDX-License-Identifier: GPL-2.0-only
/*
 * defer_lib - helpers of the deferred-callchain tests; see defer_lib.h.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "defer_lib.h"

void dl_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# %s\n", buf);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		dl_log("out of memory");
		abort();
	}
	return p;
}

#define GROW(arr, n, cap)						\
	do {								\
		if ((n) == (cap)) {					\
			(cap) = (cap) ? 2 * (cap) : 256;		\
			(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));\
		}							\
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* ---- module --------------------------------------------------------- */

const char *dl_ko_path(void)
{
	const char *p = getenv("PERF_DEFER_KO");

	return p ? p : "/lib/perf-defer/perf_defer.ko";
}

int dl_module_load(const char *params)
{
	int fd, ret;

	fd = open(dl_ko_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params ? params : "", 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

int dl_module_unload(void)
{
	return syscall(SYS_delete_module, DL_MODNAME, O_NONBLOCK) ? -errno : 0;
}

int dl_module_unload_wait(int ms)
{
	uint64_t end = now_ms() + ms;
	int ret;

	for (;;) {
		ret = dl_module_unload();
		if (ret != -EBUSY && ret != -EAGAIN)
			return ret;
		if (now_ms() >= end)
			return ret;
		usleep(10000);
	}
}

bool dl_module_loaded(void)
{
	return access("/sys/module/" DL_MODNAME, F_OK) == 0;
}

int dl_get_stats(int devfd, struct perf_defer_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(devfd, PERF_DEFER_IOC_GET_STATS, st) ? -errno : 0;
}

void dl_stats_delta(const struct perf_defer_stats *a, const struct perf_defer_stats *b,
		    struct perf_defer_stats *d)
{
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->requests = b->requests - a->requests;
	d->dedup = b->dedup - a->dedup;
	d->unwinds = b->unwinds - a->unwinds;
	d->records = b->records - a->records;
	d->drops = b->drops - a->drops;
	d->pool_empty = b->pool_empty - a->pool_empty;
	d->exit_pending = b->exit_pending - a->exit_pending;
	d->pending = b->pending;	/* a level, not a counter */
	d->after_unwind = b->after_unwind - a->after_unwind;
	d->frames_fp = b->frames_fp - a->frames_fp;
	d->frames_sframe = b->frames_sframe - a->frames_sframe;
	d->frames_eh_frame = b->frames_eh_frame - a->frames_eh_frame;
	d->table_objects = b->table_objects - a->table_objects;
	d->table_stopped = b->table_stopped - a->table_stopped;
	d->table_cache_hits = b->table_cache_hits - a->table_cache_hits;
}

void dl_stats_log(const char *what, const struct perf_defer_stats *st)
{
	dl_log("%s: requests %llu dedup %llu unwinds %llu records %llu drops %llu "
	       "pool_empty %llu exit_pending %llu pending %llu after_unwind %llu frames fp %llu "
	       "sframe %llu eh_frame %llu table_objects %llu table_stopped %llu "
	       "table_cache_hits %llu", what,
	       (unsigned long long)st->requests, (unsigned long long)st->dedup,
	       (unsigned long long)st->unwinds, (unsigned long long)st->records,
	       (unsigned long long)st->drops, (unsigned long long)st->pool_empty,
	       (unsigned long long)st->exit_pending, (unsigned long long)st->pending,
	       (unsigned long long)st->after_unwind, (unsigned long long)st->frames_fp,
	       (unsigned long long)st->frames_sframe, (unsigned long long)st->frames_eh_frame,
	       (unsigned long long)st->table_objects, (unsigned long long)st->table_stopped,
	       (unsigned long long)st->table_cache_hits);
}

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
		s.chain = xrealloc(NULL, (s.nr + 1) * 8);
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

int dl_ioc_set_ring(int devfd, uint32_t data_pages)
{
	struct perf_defer_ring r = { .size = sizeof(r), .data_pages = data_pages };

	return ioctl(devfd, PERF_DEFER_IOC_SET_RING, &r) ? -errno : 0;
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
		if (u->nregs > 24 || size < off + 8 * u->nregs)
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
		u->stack = xrealloc(NULL, u->stack_size);
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
		r.ips = xrealloc(NULL, (r.nr + 1) * 8);
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

/* ---- workload children ---------------------------------------------- */

const char *dl_self_dir(void)
{
	static char dir[PATH_MAX];
	char *slash;
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		strcpy(dir, ".");
		return dir;
	}
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	return dir;
}

int dl_child_spawn(struct dl_child *c, char *const argv[])
{
	char path[PATH_MAX];
	pid_t parent = getpid();
	int p[2], ret;
	char b;

	c->pid = 0;
	c->go = -1;
	if (strchr(argv[0], '/'))
		snprintf(path, sizeof(path), "%s", argv[0]);
	else
		snprintf(path, sizeof(path), "%s/%s", dl_self_dir(), argv[0]);
	if (access(path, X_OK)) {
		ret = -errno;
		dl_log("workload %s: %s", path, strerror(errno));
		return ret;
	}
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0) {
		ret = -errno;
		close(p[0]);
		close(p[1]);
		return ret;
	}
	if (c->pid == 0) {
		close(p[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(126);
		if (read(p[0], &b, 1) != 1)
			_exit(125);
		execv(path, argv);
		_exit(127);
	}
	close(p[0]);
	c->go = p[1];
	return 0;
}

int dl_child_go(struct dl_child *c)
{
	int ret = 0;

	if (c->go < 0)
		return -EINVAL;
	if (write(c->go, "g", 1) != 1)
		ret = -errno;
	close(c->go);
	c->go = -1;
	return ret;
}

void dl_child_kill(struct dl_child *c)
{
	if (c->go >= 0)
		close(c->go);
	c->go = -1;
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	c->pid = 0;
}

int dl_collect(struct dl_child *c, struct dl_perf *pf, int np, struct dl_session *ss, int ns,
	       struct dl_data *d, const struct dl_collect_opts *o)
{
	struct dl_collect_opts def = { 0 };
	struct pollfd pfd[DL_MAX_SESSIONS];
	uint64_t start = now_ms(), last = start;
	int timeout = 60000, status = 0, i, n, got;
	bool once = false, timed_out = false;

	if (!o)
		o = &def;
	if (o->timeout_ms > 0)
		timeout = o->timeout_ms;
	for (;;) {
		n = 0;
		if (o->sess_drain_ms == 0)
			for (i = 0; i < ns && i < DL_MAX_SESSIONS; i++, n++)
				pfd[n] = (struct pollfd){ .fd = ss[i].fd, .events = POLLIN };
		if (poll(pfd, n, 10) < 0 && errno != EINTR)
			break;
		for (i = 0; i < np; i++)
			dl_perf_drain(&pf[i], d);
		for (i = 0; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			got = dl_session_drain(&ss[i], d);
			if (!got)
				ss[i].nempty_wakeups++;
		}
		if (o->sess_drain_ms > 0 && now_ms() - last >= (uint64_t)o->sess_drain_ms) {
			for (i = 0; i < ns; i++)
				dl_session_drain(&ss[i], d);
			last = now_ms();
		}
		if (o->sess_drain_once_ms > 0 && !once &&
		    now_ms() - start >= (uint64_t)o->sess_drain_once_ms) {
			for (i = 0; i < ns; i++)
				dl_session_drain(&ss[i], d);
			once = true;
		}
		if (waitpid(c->pid, &status, WNOHANG) == c->pid)
			break;
		if (!timed_out && now_ms() - start > (uint64_t)timeout) {
			dl_log("workload %d still running after %d ms: killed", c->pid, timeout);
			kill(c->pid, SIGKILL);
			timed_out = true;
		}
	}
	c->pid = 0;
	for (i = 0; i < np; i++)
		dl_perf_drain(&pf[i], d);
	for (i = 0; i < ns; i++)
		dl_session_drain(&ss[i], d);
	return timed_out ? -1 : status;
}

/* ---- chains and stitching ------------------------------------------- */

bool dl_deferred(const struct dl_sample *s, uint64_t *cookie)
{
	uint32_t i;

	for (i = 0; i < s->nr; i++) {
		if (s->chain[i] == DL_CTX_DEFERRED) {
			*cookie = i + 1 < s->nr ? s->chain[i + 1] : 0;
			return true;
		}
	}
	return false;
}

bool dl_has_user(const struct dl_sample *s)
{
	uint32_t i;

	for (i = 0; i < s->nr; i++)
		if (s->chain[i] == PERF_CONTEXT_USER)
			return true;
	return false;
}

/*
 * The kernel's way back to user space, from the unwind's task_work on, and
 * an execve() (bprm_execve() and below, where the image changes): the
 * functions (kallsyms names) a sample taken there passes through.
 */
static const char *const way_out_fns[] = {
	"pd_task_work", "task_work_run", "exit_to_user_mode_loop",
	"exit_to_user_mode_prepare", "syscall_exit_to_user_mode",
	"syscall_exit_to_user_mode_work", "irqentry_exit_to_user_mode",
	"irqentry_exit", "begin_new_exec", "setup_new_exec", "load_elf_binary",
	"bprm_execve", "do_execveat_common",
};

struct ksym {
	uint64_t addr;
	bool way_out;
	char *name;
};

static struct ksym *ksyms;
static size_t nksyms;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* /proc/kallsyms' text symbols, sorted, each marked way_out or not */
static void ksyms_load(void)
{
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = 0, i;
	FILE *f;

	if (ksyms)
		return;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr ||
		    (type != 't' && type != 'T'))
			continue;
		if (nksyms == cap) {
			struct ksym *n = realloc(ksyms, (cap = cap ? 2 * cap : 65536) * sizeof(*n));

			if (!n)
				break;
			ksyms = n;
		}
		ksyms[nksyms] = (struct ksym){ .addr = addr, .name = strdup(name) };
		/* "name" or a clone of it, "name.isra.0" */
		for (i = 0; i < sizeof(way_out_fns) / sizeof(way_out_fns[0]); i++) {
			size_t n = strlen(way_out_fns[i]);

			ksyms[nksyms].way_out |= !strncmp(name, way_out_fns[i], n) &&
						 (!name[n] || name[n] == '.');
		}
		nksyms++;
	}
	fclose(f);
	if (ksyms)
		qsort(ksyms, nksyms, sizeof(*ksyms), ksym_cmp);
}

/* the kernel text symbol holding @ip, or NULL */
static const struct ksym *ksym_of(uint64_t ip)
{
	size_t lo = 0, hi = nksyms;

	ksyms_load();
	if (!nksyms || ip < ksyms[0].addr)
		return NULL;
	/* the last symbol at or below the IP */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	return &ksyms[lo];
}

bool dl_on_way_out(const struct dl_sample *s)
{
	const struct ksym *k;
	uint32_t i;

	if (!dl_kernel_mode(s))
		return false;
	for (i = 1; i < s->nr && s->chain[i] < PERF_CONTEXT_MAX; i++) {
		k = ksym_of(s->chain[i]);
		if (k && k->way_out)
			return true;
	}
	return false;
}

void dl_log_kernel_chain(const struct dl_sample *s)
{
	const struct ksym *k;
	uint32_t i;

	if (!dl_kernel_mode(s)) {
		dl_log("  (a user-mode sample)");
		return;
	}
	for (i = 1; i < s->nr && s->chain[i] < PERF_CONTEXT_MAX; i++) {
		k = ksym_of(s->chain[i]);
		dl_log("  %s+%#llx", k ? k->name : "?",
		       (unsigned long long)(k ? s->chain[i] - k->addr : s->chain[i]));
	}
}

struct key {
	int sess;
	uint32_t tid;
	uint64_t cookie;
	size_t idx;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->sess != y->sess)
		return x->sess < y->sess ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int key_cmp_noidx(const void *a, const void *b)
{
	struct key x = *(const struct key *)a, y = *(const struct key *)b;

	x.idx = y.idx = 0;
	return key_cmp(&x, &y);
}

void dl_stitch(struct dl_data *d, struct dl_stitch_stats *st)
{
	struct key *rk = xrealloc(NULL, (d->nr + 1) * sizeof(*rk));
	struct key *sk = xrealloc(NULL, (d->ns + 1) * sizeof(*sk));
	struct key *uk = xrealloc(NULL, (d->ns + 1) * sizeof(*uk));
	int ncpu = dl_possible_cpus();
	size_t i, nsk = 0, nuk = 0;

	memset(st, 0, sizeof(*st));
	/* without a tid in the records, the cookie alone names the entry */
	for (i = 0; i < d->nr; i++) {
		int rs = d->r[i].sess;
		bool tid = rs >= 0 && rs < DL_MAX_SESSIONS && d->sess_tid[rs];

		rk[i] = (struct key){ rs, tid ? d->r[i].sid.tid : 0, d->r[i].cookie, i };
		d->r[i].nsamples = 0;
		d->r[i].dup = false;
	}
	qsort(rk, d->nr, sizeof(*rk), key_cmp);
	for (i = 1; i < d->nr; i++) {
		if (!key_cmp_noidx(&rk[i - 1], &rk[i])) {
			d->r[rk[i].idx].dup = true;
			st->dups++;
		}
	}
	st->records = d->nr;
	for (i = 0; i < d->ns; i++) {
		struct dl_sample *s = &d->s[i];
		int sess = s->ev >= 0 && s->ev < DL_MAX_EVENTS ? d->ev_sess[s->ev] : -1;
		struct key k, *hit;
		struct dl_record *r;
		uint64_t cookie, cpu1;

		s->rec = -1;
		if (sess < 0)
			continue;
		st->samples++;
		if (!dl_deferred(s, &cookie)) {
			if (dl_has_user(s))
				st->not_deferred++;
			continue;
		}
		st->deferred++;
		if (s->nr < 2 || s->chain[s->nr - 2] != DL_CTX_DEFERRED)
			st->bad_shape++;
		cpu1 = cookie >> PERF_DEFER_COOKIE_CPU_SHIFT;
		if (!(cookie & 1) || cpu1 < 1 || cpu1 > (uint64_t)ncpu)
			st->bad_cookie++;
		k = (struct key){ sess, sess < DL_MAX_SESSIONS && d->sess_tid[sess] ? s->tid : 0,
				  cookie, 0 };
		sk[nsk++] = k;
		hit = bsearch(&k, rk, d->nr, sizeof(*rk), key_cmp_noidx);
		if (!hit) {
			st->unmatched++;
			uk[nuk++] = (struct key){ 0, s->tid, cookie, 0 };
			continue;
		}
		while (hit > rk && !key_cmp_noidx(hit - 1, &k))
			hit--;
		st->matched++;
		s->rec = hit->idx;
		r = &d->r[hit->idx];
		r->nsamples++;
		if (r->sid.time && s->time && r->sid.time < s->time)
			st->time_order++;
		if ((r->sid.id && r->sid.id != s->id &&
		     !dl_perf_has_id(d->ev_perf[s->ev], r->sid.id)) ||
		    (r->sid.pid && r->sid.pid != s->pid))
			st->id_mismatch++;
	}
	qsort(sk, nsk, sizeof(*sk), key_cmp_noidx);
	for (i = 0; i < nsk; i++)
		if (!i || key_cmp_noidx(&sk[i - 1], &sk[i]))
			st->entries++;
	st->entries_unmatched = st->entries;
	for (i = 0; i < d->nr; i++) {
		if (!d->r[i].dup && !d->r[i].nsamples)
			st->unused++;
		if (!d->r[i].dup && d->r[i].nsamples)
			st->entries_unmatched--;
	}
	qsort(uk, nuk, sizeof(*uk), key_cmp_noidx);
	for (i = 0; i < nuk; i++)
		if (!i || key_cmp_noidx(&uk[i - 1], &uk[i]))
			st->tasks_unmatched++;
	free(rk);
	free(sk);
	free(uk);
}

void dl_stitch_log(const char *what, const struct dl_stitch_stats *st)
{
	dl_log("%s: samples %zu deferred %zu matched %zu unmatched %zu not_deferred %zu "
	       "entries %zu (%zu without record) records %zu unused %zu dups %zu bad_cookie %zu "
	       "bad_shape %zu time_order %zu id_mismatch %zu", what, st->samples, st->deferred,
	       st->matched, st->unmatched, st->not_deferred, st->entries, st->entries_unmatched,
	       st->records, st->unused, st->dups, st->bad_cookie, st->bad_shape,
	       st->time_order, st->id_mismatch);
}

int dl_user_chain(const struct dl_data *d, const struct dl_sample *s, const uint64_t **ips)
{
	uint64_t cookie;
	uint32_t i, j;

	if (s->rec >= 0) {
		*ips = d->r[s->rec].ips;
		return d->r[s->rec].nr;
	}
	if (dl_deferred(s, &cookie))
		return -1;
	for (i = 0; i < s->nr; i++) {
		if (s->chain[i] != PERF_CONTEXT_USER)
			continue;
		for (j = i + 1; j < s->nr && s->chain[j] < PERF_CONTEXT_MAX; j++)
			;
		*ips = &s->chain[i + 1];
		return j - i - 1;
	}
	*ips = NULL;
	return 0;
}

/* ---- symbols -------------------------------------------------------- */

struct dl_symbol {
	uint64_t start, size;
	char *name;
};

struct dl_syms {
	struct dl_symbol *s;
	size_t n;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct dl_symbol *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void syms_add(struct dl_syms *y, size_t *cap, uint64_t start, uint64_t size,
		     const char *name)
{
	GROW(y->s, y->n, *cap);
	y->s[y->n++] = (struct dl_symbol){ start, size, strdup(name) };
}

struct dl_syms *dl_syms_load(const char *path)
{
	struct dl_syms *y = NULL;
	unsigned char *img = NULL;
	size_t cap = 0, i, j;
	struct stat stb;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &stb))
		goto out;
	img = mmap(NULL, stb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (img == MAP_FAILED) {
		img = NULL;
		goto out;
	}
	if (stb.st_size < EI_NIDENT || memcmp(img, ELFMAG, SELFMAG))
		goto out;
	y = calloc(1, sizeof(*y));
	if (!y)
		goto out;
#define LOAD_SYMS(Ehdr, Shdr, Sym, ST_TYPE)					\
	do {									\
		Ehdr *eh = (Ehdr *)img;						\
		Shdr *sh = (Shdr *)(img + eh->e_shoff);				\
		for (i = 0; i < eh->e_shnum; i++) {				\
			Sym *sym;						\
			const char *str;					\
			if (sh[i].sh_type != SHT_SYMTAB)			\
				continue;					\
			sym = (Sym *)(img + sh[i].sh_offset);			\
			str = (const char *)img + sh[sh[i].sh_link].sh_offset;	\
			for (j = 0; j < sh[i].sh_size / sizeof(Sym); j++) {	\
				if (ST_TYPE(sym[j].st_info) != STT_FUNC ||	\
				    !sym[j].st_value)				\
					continue;				\
				syms_add(y, &cap, sym[j].st_value,		\
					 sym[j].st_size, str + sym[j].st_name);	\
			}							\
		}								\
	} while (0)
	if (img[EI_CLASS] == ELFCLASS64)
		LOAD_SYMS(Elf64_Ehdr, Elf64_Shdr, Elf64_Sym, ELF64_ST_TYPE);
	else
		LOAD_SYMS(Elf32_Ehdr, Elf32_Shdr, Elf32_Sym, ELF32_ST_TYPE);
#undef LOAD_SYMS
	qsort(y->s, y->n, sizeof(*y->s), sym_cmp);
out:
	if (!y)
		dl_log("cannot read the symbols of %s", path);
	if (img)
		munmap(img, stb.st_size);
	if (fd >= 0)
		close(fd);
	return y;
}

void dl_syms_free(struct dl_syms *y)
{
	size_t i;

	if (!y)
		return;
	for (i = 0; i < y->n; i++)
		free(y->s[i].name);
	free(y->s);
	free(y);
}

const char *dl_sym(const struct dl_syms *y, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi;
	const struct dl_symbol *s;

	if (!y || !y->n)
		return NULL;
	hi = y->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (y->s[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &y->s[lo];
	if (addr < s->start || addr >= s->start + (s->size ? s->size : 1))
		return NULL;
	if (off)
		*off = addr - s->start;
	return s->name;
}

const char *dl_frame_sym(const struct dl_syms *y, const uint64_t *ips, int i)
{
	return dl_sym(y, ips[i] - (i > 0), NULL);
}

bool dl_frame_is(const struct dl_syms *y, const uint64_t *ips, int n, int i, const char *name)
{
	const char *s;

	if (i < 0 || i >= n)
		return false;
	s = dl_frame_sym(y, ips, i);
	return s && !strcmp(s, name);
}

static const char *fmt_addr(const struct dl_syms *y, uint64_t addr, bool ra, char *buf,
			    size_t len)
{
	uint64_t off;
	const char *s = dl_sym(y, addr - ra, &off);

	if (s)
		snprintf(buf, len, "%s+%#llx", s, (unsigned long long)(off + ra));
	else
		snprintf(buf, len, "%#llx", (unsigned long long)addr);
	return buf;
}

const char *dl_fmt_frame(const struct dl_syms *y, const uint64_t *ips, int i, char *buf,
			 size_t len)
{
	return fmt_addr(y, ips[i], i > 0, buf, len);
}

void dl_log_chains(const struct dl_syms *y, int first_ra, const char *ta, const uint64_t *a,
		   int na, const char *tb, const uint64_t *b, int nb)
{
	char fa[128], fb[128];
	int i;

	dl_log("   %-44s %s", ta, tb);
	for (i = 0; i < na || i < nb; i++) {
		fa[0] = fb[0] = 0;
		if (i < na)
			fmt_addr(y, a[i], i >= first_ra, fa, sizeof(fa));
		if (i < nb)
			fmt_addr(y, b[i], i >= first_ra, fb, sizeof(fb));
		dl_log("%c%2d %-44s %s", i < na && i < nb && a[i] == b[i] ? ' ' : '!', i, fa, fb);
	}
}

void dl_log_chain(const struct dl_syms *y, int first_ra, const char *t, const uint64_t *a,
		  int na)
{
	char fa[128];
	int i;

	dl_log("   %s (%d frames)", t, na);
	for (i = 0; i < na; i++)
		dl_log(" %2d %#18llx %s", i, (unsigned long long)a[i],
		       fmt_addr(y, a[i], i >= first_ra, fa, sizeof(fa)));
}

/* ---- call-path sets ------------------------------------------------- */

static struct dl_path *paths_find(const struct dl_paths *ps, const uint64_t *ips, int n)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].n == n && !memcmp(ps->p[i].ips, ips, n * 8))
			return &ps->p[i];
	return NULL;
}

void dl_paths_add(struct dl_paths *ps, const uint64_t *ips, int n)
{
	struct dl_path *p = paths_find(ps, ips, n);

	ps->total++;
	if (p) {
		p->count++;
		return;
	}
	GROW(ps->p, ps->n, ps->cap);
	p = &ps->p[ps->n++];
	p->ips = xrealloc(NULL, (n + 1) * 8);
	memcpy(p->ips, ips, n * 8);
	p->n = n;
	p->count = 1;
}

void dl_paths_free(struct dl_paths *ps)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		free(ps->p[i].ips);
	free(ps->p);
	memset(ps, 0, sizeof(*ps));
}

static int path_cmp(const void *a, const void *b)
{
	const struct dl_path *x = a, *y = b;

	return x->count > y->count ? -1 : x->count < y->count;
}

void dl_paths_sort(struct dl_paths *ps)
{
	qsort(ps->p, ps->n, sizeof(*ps->p), path_cmp);
}

static bool paths_has_prefix(const struct dl_paths *ps, const uint64_t *ips, int n)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].n >= n && !memcmp(ps->p[i].ips, ips, n * 8))
			return true;
	return false;
}

static int paths_missing(const struct dl_syms *y, const char *ta, const struct dl_paths *a,
			 const char *tb, const struct dl_paths *b, size_t min, bool prefix)
{
	char ha[128], hb[128];
	int missing = 0;
	size_t i, j;

	for (i = 0; i < b->n; i++) {
		const struct dl_path *p = &b->p[i], *best = NULL;
		int best_len = -1;

		if (p->count < min || paths_find(a, p->ips, p->n) ||
		    (prefix && paths_has_prefix(a, p->ips, p->n)))
			continue;
		missing++;
		for (j = 0; j < a->n; j++) {
			int k = 0;

			while (k < a->p[j].n && k < p->n && a->p[j].ips[k] == p->ips[k])
				k++;
			if (k > best_len) {
				best_len = k;
				best = &a->p[j];
			}
		}
		if (missing > 3)
			continue;
		snprintf(hb, sizeof(hb), "%s: path x%zu", tb, p->count);
		if (best) {
			snprintf(ha, sizeof(ha), "%s: closest, x%zu", ta, best->count);
			dl_log_chains(y, 0, hb, p->ips, p->n, ha, best->ips, best->n);
		} else {
			dl_log_chain(y, 0, hb, p->ips, p->n);
		}
	}
	return missing;
}

int dl_paths_missing(const struct dl_syms *y, const char *ta, const struct dl_paths *a,
		     const char *tb, const struct dl_paths *b, size_t min)
{
	return paths_missing(y, ta, a, tb, b, min, false);
}

int dl_paths_not_prefix(const struct dl_syms *y, const char *ta, const struct dl_paths *a,
			const char *tb, const struct dl_paths *b, size_t min)
{
	return paths_missing(y, ta, a, tb, b, min, true);
}

void dl_paths_log(const struct dl_syms *y, const char *t, const struct dl_paths *ps, int max)
{
	char buf[128], line[1024];
	size_t i, len;
	int k;

	dl_log("%s: %zu samples, %zu paths", t, ps->total, ps->n);
	for (i = 0; i < ps->n && (int)i < max; i++) {
		len = snprintf(line, sizeof(line), "  x%-5zu", ps->p[i].count);
		for (k = 0; k < ps->p[i].n && len < sizeof(line) - 1; k++)
			len += snprintf(line + len, sizeof(line) - len, " %s",
					fmt_addr(y, ps->p[i].ips[k], true, buf, sizeof(buf)));
		dl_log("%s", line);
	}
}
