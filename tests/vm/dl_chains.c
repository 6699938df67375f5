// SPDX-License-Identifier: GPL-2.0-only
/*
 * defer_lib: the chains of a struct dl_data: samples stitched to their
 * records, ELF and kernel symbols, and call-path sets to compare them.
 * See defer_lib.h.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "defer_lib.h"
#include "dl_private.h"

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
 * The kernel's way back to user space, from the unwind's task_work on, an
 * execve() (bprm_execve() and below, where the image changes), and a
 * task's exit (5.10's do_exit() calls perf_event_exit_task() only after
 * exit_mm(): its samples in between have no user chain): the functions
 * (kallsyms names) a sample taken there passes through.
 */
static const char *const way_out_fns[] = {
	"pd_task_work", "task_work_run", "exit_to_user_mode_loop",
	"exit_to_user_mode_prepare", "syscall_exit_to_user_mode",
	"syscall_exit_to_user_mode_work", "irqentry_exit_to_user_mode",
	"irqentry_exit", "begin_new_exec", "setup_new_exec", "load_elf_binary",
	"bprm_execve", "do_execveat_common", "do_exit",
	/* arm64 before generic entry: its exit-to-user work loop */
	"do_notify_resume",
	/*
	 * and what it calls after task_work_run(): a sample at one of these
	 * at its first instruction has no do_notify_resume in its chain
	 * (arm64's kernel walk takes the PC, then frame records: the caller
	 * in x30 is not one yet)
	 */
	"blkcg_maybe_throttle_current", "mem_cgroup_handle_over_high",
	"__rseq_handle_notify_resume",
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
	struct key *rk = dl_xrealloc(NULL, (d->nr + 1) * sizeof(*rk));
	struct key *sk = dl_xrealloc(NULL, (d->ns + 1) * sizeof(*sk));
	struct key *uk = dl_xrealloc(NULL, (d->ns + 1) * sizeof(*uk));
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
	uint64_t lo, hi;	/* the file's PT_LOAD segments, at their link addresses */
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
#define LOAD_RANGE(Ehdr, Phdr)							\
	do {									\
		Ehdr *eh = (Ehdr *)img;						\
		Phdr *ph = (Phdr *)(img + eh->e_phoff);				\
		y->lo = UINT64_MAX;						\
		for (i = 0; i < eh->e_phnum; i++) {				\
			if (ph[i].p_type != PT_LOAD)				\
				continue;					\
			if (ph[i].p_vaddr < y->lo)				\
				y->lo = ph[i].p_vaddr;				\
			if (ph[i].p_vaddr + ph[i].p_memsz > y->hi)		\
				y->hi = ph[i].p_vaddr + ph[i].p_memsz;		\
		}								\
	} while (0)
	if (img[EI_CLASS] == ELFCLASS64) {
		LOAD_SYMS(Elf64_Ehdr, Elf64_Shdr, Elf64_Sym, ELF64_ST_TYPE);
		LOAD_RANGE(Elf64_Ehdr, Elf64_Phdr);
	} else {
		LOAD_SYMS(Elf32_Ehdr, Elf32_Shdr, Elf32_Sym, ELF32_ST_TYPE);
		LOAD_RANGE(Elf32_Ehdr, Elf32_Phdr);
	}
#undef LOAD_RANGE
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

bool dl_in_image(const struct dl_syms *y, uint64_t addr)
{
	return y && addr >= y->lo && addr < y->hi;
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
	p->ips = dl_xrealloc(NULL, (n + 1) * 8);
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
