// SPDX-License-Identifier: GPL-2.0-only
/*
 * The features of a new recording that describe the machine: read where
 * perf record reads them (uname(), /proc, sysfs, the cpuid instruction)
 * and laid out as perf's tools/perf/util/header.c writes and reads them,
 * the same in perf 6.1 and 7.3.  Where perf record leaves a feature out
 * (it cannot read it, or the machine has nothing to describe: no NUMA
 * nodes, no "cpu" PMU, not hybrid), so does host_feature().
 *
 * These sections matter beyond 'perf report --header': a perf that finds
 * one missing asks the machine it runs on instead, which is not the one
 * that recorded, and perf 7.3 crashes doing so where /proc is not mounted.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "header-host.h"
#include "sysfs.h"
#include "perf-data.h"

#define SYS_NODE	"/sys/devices/system/node"
#define SYS_PMUS	"/sys/bus/event_source/devices"
#define CACHE_LEVELS	4	/* cache/index0..3 of each CPU, as perf reads */

/* ---- a list of distinct strings, in the order first seen -------------- */

struct strs {
	char **s;
	__u32 nr;
	bool oom;
};

/* takes s (may be NULL: nothing added) */
static void strs__add_unique(struct strs *l, char *s)
{
	char **p;

	if (!s)
		return;
	for (__u32 i = 0; i < l->nr; i++) {
		if (!strcmp(l->s[i], s)) {
			free(s);
			return;
		}
	}
	p = realloc(l->s, (l->nr + 1) * sizeof(*p));
	if (!p) {
		l->oom = true;
		free(s);
		return;
	}
	l->s = p;
	l->s[l->nr++] = s;
}

static void strs__put(struct buf *b, const struct strs *l)
{
	buf__u32(b, l->nr);
	for (__u32 i = 0; i < l->nr; i++)
		buf__string(b, l->s[i]);
}

static void strs__free(struct strs *l)
{
	for (__u32 i = 0; i < l->nr; i++)
		free(l->s[i]);
	free(l->s);
}

/* ---- uname, /proc ------------------------------------------------------- */

static bool feat_uname(struct buf *b, unsigned int feat)
{
	struct utsname uts;

	if (uname(&uts))
		return false;
	buf__string(b, feat == PD_FEAT_HOSTNAME ? uts.nodename :
		       feat == PD_FEAT_OSRELEASE ? uts.release : uts.machine);
	return true;
}

/* perf: the highest present CPU + 1 (nr_cpus_avail), then the online count */
static bool feat_nrcpus(struct buf *b)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int present = cpus__max("present");

	if (present <= 0 || online <= 0)
		return false;
	buf__u32(b, (__u32)present);
	buf__u32(b, (__u32)online);
	return true;
}

/* The "model name" line of /proc/cpuinfo, white space squashed as perf does. */
static bool feat_cpudesc(struct buf *b)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char *line = NULL, *val, *s, *d;
	size_t n = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && getline(&line, &n, f) > 0) {
		if (strncmp(line, "model name", 10))
			continue;
		val = strchr(line, ':');
		val = val && val[1] == ' ' && val[2] ? val + 2 : line;
		val[strcspn(val, "\n")] = '\0';
		/* each run of white space becomes one space */
		for (s = d = val; *s; s++) {
			bool space = isspace((unsigned char)*s);

			if (space && d > val && d[-1] == ' ')
				continue;
			*d++ = space ? ' ' : *s;
		}
		*d = '\0';
		buf__string(b, val);
		found = true;
	}
	free(line);
	fclose(f);
	return found;
}

static bool feat_total_mem(struct buf *b)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb;
	char line[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu", &kb) == 1) {
			buf__u64(b, kb);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* ---- CPUID -------------------------------------------------------------- */

/*
 * x86: "vendor,family,model,stepping" with the extended family and model
 * folded in, as perf's x86 get_cpuid() prints them.  arm64: the MIDR_EL1
 * of the first CPU whose sysfs file reads, as its first 18 characters
 * ("0x" and 16 hex digits), as perf's arm64 get_cpuid() takes it.  Other
 * architectures: the feature is left out.
 */
static bool feat_cpuid(struct buf *b)
{
#if defined(__aarch64__)
	char path[128], s[32];
	long n = sysconf(_SC_NPROCESSORS_CONF);
	FILE *f;

	for (long cpu = 0; cpu < n; cpu++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%ld/regs/identification/midr_el1", cpu);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(s, 19, f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		s[strcspn(s, "\n")] = '\0';
		buf__string(b, s);
		return true;
	}
	return false;
#elif defined(__x86_64__) || defined(__i386__)
	unsigned int max, eax, ebx, ecx, edx, family = 0, model = 0, stepping = 0;
	char vendor[13], s[64];

	if (!__get_cpuid(0, &max, &ebx, &ecx, &edx))
		return false;
	memcpy(vendor, &ebx, 4);
	memcpy(vendor + 4, &edx, 4);
	memcpy(vendor + 8, &ecx, 4);
	vendor[12] = '\0';
	if (max >= 1 && __get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
		family = eax >> 8 & 0xf;
		model = eax >> 4 & 0xf;
		stepping = eax & 0xf;
		if (family >= 6)
			model += (eax >> 16 & 0xf) << 4;
		if (family >= 0xf)
			family += eax >> 20 & 0xff;
	}
	snprintf(s, sizeof(s), "%s,%u,%u,%u", vendor, family, model, stepping);
	buf__string(b, s);
	return true;
#else
	(void)b;
	return false;
#endif
}

/* ---- CPU topology --------------------------------------------------------- */

/* perf 6.1 writes dies on x86_64 and s390x, when the kernel has them */
static bool has_dies(void)
{
	struct utsname uts;

	if (uname(&uts) || (strcmp(uts.machine, "x86_64") && strcmp(uts.machine, "s390x")))
		return false;
	return sysfs__exists(SYS_CPU "/cpu0/topology/die_cpus_list");
}

static char *topology_list(int cpu, const char *name, const char *old_name)
{
	char *s = sysfs__read_str(SYS_CPU "/cpu%d/topology/%s", cpu, name);

	return s || !old_name ? s : sysfs__read_str(SYS_CPU "/cpu%d/topology/%s", cpu, old_name);
}

static __u32 topology_id(int cpu, const char *name)
{
	long long v;

	return sysfs__read_num(&v, 10, SYS_CPU "/cpu%d/topology/%s", cpu, name) ? (__u32)v : (__u32)-1;
}

/*
 * The distinct package (socket) and core (thread sibling) CPU lists of the
 * online CPUs, then core and socket id of every present CPU, then the die
 * lists and ids when there are dies.
 */
static bool feat_cpu_topology(struct buf *b)
{
	struct strs pkg = { 0 }, core = { 0 }, die = { 0 };
	int avail = cpus__max("present");
	bool dies = has_dies(), ok = true;
	struct cpu_set online;

	if (avail <= 0 || !cpus__online(&online, avail))
		return false;
	for (int cpu = 0; cpu < avail && ok; cpu++) {
		char *s;

		if (!online.on[cpu])
			continue;
		strs__add_unique(&pkg, topology_list(cpu, "package_cpus_list", "core_siblings_list"));
		if (dies)
			strs__add_unique(&die, topology_list(cpu, "die_cpus_list", NULL));
		s = topology_list(cpu, "core_cpus_list", "thread_siblings_list");
		ok = s != NULL;		/* perf gives up on the whole feature */
		strs__add_unique(&core, s);
	}
	ok = ok && !pkg.oom && !core.oom && !die.oom;
	if (ok) {
		strs__put(b, &pkg);
		strs__put(b, &core);
		for (int cpu = 0; cpu < avail; cpu++) {
			buf__u32(b, topology_id(cpu, "core_id"));
			buf__u32(b, topology_id(cpu, "physical_package_id"));
		}
		if (die.nr) {
			strs__put(b, &die);
			for (int cpu = 0; cpu < avail; cpu++)
				buf__u32(b, topology_id(cpu, "die_id"));
		}
	}
	strs__free(&pkg);
	strs__free(&core);
	strs__free(&die);
	free(online.on);
	return ok;
}

/* ---- NUMA, memory ------------------------------------------------------- */

struct numa_ctx {
	struct buf *b;
	bool ok;
};

static void numa_node(int node, void *arg)
{
	struct numa_ctx *c = arg;
	unsigned long long total = 0, free_kb = 0, kb;
	char path[128], line[256], field[32], *cpus;
	FILE *f;

	if (!c->ok)
		return;
	snprintf(path, sizeof(path), SYS_NODE "/node%d/meminfo", node);
	f = fopen(path, "r");
	if (!f) {
		c->ok = false;
		return;
	}
	/* "Node 0 MemTotal:       12543816 kB" */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*d %31s %llu", field, &kb) != 2)
			continue;
		if (!strcmp(field, "MemTotal:"))
			total = kb;
		else if (!strcmp(field, "MemFree:"))
			free_kb = kb;
	}
	fclose(f);
	cpus = sysfs__read_str(SYS_NODE "/node%d/cpulist", node);
	if (!cpus) {
		c->ok = false;
		return;
	}
	buf__u32(c->b, (__u32)node);
	buf__u64(c->b, total);
	buf__u64(c->b, free_kb);
	buf__string(c->b, cpus);
	free(cpus);
}

static void count(int n, void *arg)
{
	(void)n;
	++*(__u32 *)arg;
}

/* The online nodes: number, MemTotal and MemFree in kB, CPU list. */
static bool feat_numa_topology(struct buf *b)
{
	char *list = sysfs__read_str(SYS_NODE "/online");
	struct numa_ctx c = { .b = b, .ok = list != NULL };
	__u32 nr = 0;

	if (c.ok) {
		cpu_list__each(list, count, &nr);
		buf__u32(b, nr);
		cpu_list__each(list, numa_node, &c);
	}
	free(list);
	return c.ok;
}

struct mem_node {
	__u64 node, bits;	/* bits: the highest memory block + 1 */
	__u64 *set;
};

static int mem_node__cmp(const void *a, const void *b)
{
	const struct mem_node *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
}

/* The memory blocks (memoryN entries) of a node, as a bitmap. */
static bool mem_node__read(struct mem_node *n, unsigned int node)
{
	char path[128];
	struct dirent *e;
	unsigned int blk, max = 0;
	DIR *d;

	snprintf(path, sizeof(path), SYS_NODE "/node%u", node);
	d = opendir(path);
	if (!d)
		return false;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "memory%u", &blk) == 1 && blk > max)
			max = blk;
	n->node = node;
	n->bits = (__u64)max + 1;
	n->set = calloc((n->bits + 63) / 64, 8);
	if (n->set) {
		rewinddir(d);
		while ((e = readdir(d)))
			if (sscanf(e->d_name, "memory%u", &blk) == 1)
				n->set[blk / 64] |= 1ULL << (blk % 64);
	}
	closedir(d);
	return n->set != NULL;
}

/*
 * Version 1, the memory block size, and for each node (in node order)
 * its number and the bitmap of its memory blocks.
 */
static bool feat_mem_topology(struct buf *b)
{
	struct mem_node *nodes = NULL, *p;
	long long bsize;
	size_t nr = 0;
	struct dirent *e;
	bool ok = true;
	DIR *d;

	if (!sysfs__read_num(&bsize, 16, "/sys/devices/system/memory/block_size_bytes"))
		return false;
	d = opendir(SYS_NODE);
	if (!d)
		return false;
	while (ok && (e = readdir(d))) {
		unsigned int node;
		char c;

		if (sscanf(e->d_name, "node%u%c", &node, &c) != 1)
			continue;
		p = realloc(nodes, (nr + 1) * sizeof(*nodes));
		ok = p != NULL;
		if (ok) {
			nodes = p;
			ok = mem_node__read(&nodes[nr], node);
			nr += ok;
		}
	}
	closedir(d);
	if (ok) {
		qsort(nodes, nr, sizeof(*nodes), mem_node__cmp);
		buf__u64(b, 1);
		buf__u64(b, (__u64)bsize);
		buf__u64(b, nr);
		for (size_t i = 0; i < nr; i++) {
			buf__u64(b, nodes[i].node);
			buf__u64(b, nodes[i].bits);
			buf__u64(b, nodes[i].bits);
			buf__put(b, nodes[i].set, (nodes[i].bits + 63) / 64 * 8);
		}
	}
	for (size_t i = 0; i < nr; i++)
		free(nodes[i].set);
	free(nodes);
	return ok;
}

/* ---- caches --------------------------------------------------------------- */

struct cache {
	__u32 level, line_size, sets, ways;
	char *type, *size, *map;
};

static void cache__free(struct cache *c)
{
	free(c->type);
	free(c->size);
	free(c->map);
}

/* 1: read, 0: no such cache, -1: unreadable (perf then leaves CACHE out) */
static int cache__read(struct cache *c, int cpu, int idx)
{
	static const char dir[] = SYS_CPU "/cpu%d/cache/index%d/%s";
	long long level, line, sets, ways;

	memset(c, 0, sizeof(*c));
	if (!sysfs__exists(SYS_CPU "/cpu%d/cache/index%d", cpu, idx))
		return 0;
	if (!sysfs__read_num(&level, 10, dir, cpu, idx, "level") ||
	    !sysfs__read_num(&line, 10, dir, cpu, idx, "coherency_line_size") ||
	    !sysfs__read_num(&sets, 10, dir, cpu, idx, "number_of_sets") ||
	    !sysfs__read_num(&ways, 10, dir, cpu, idx, "ways_of_associativity"))
		return -1;
	c->level = (__u32)level;
	c->line_size = (__u32)line;
	c->sets = (__u32)sets;
	c->ways = (__u32)ways;
	c->type = sysfs__read_str(dir, cpu, idx, "type");
	c->size = sysfs__read_str(dir, cpu, idx, "size");
	c->map = sysfs__read_str(dir, cpu, idx, "shared_cpu_list");
	if (!c->type || !c->size || !c->map) {
		cache__free(c);
		return -1;
	}
	return 1;
}

static bool cache__same(const struct cache *a, const struct cache *b)
{
	return a->level == b->level && a->line_size == b->line_size && a->sets == b->sets &&
	       a->ways == b->ways && !strcmp(a->type, b->type) && !strcmp(a->size, b->size) &&
	       !strcmp(a->map, b->map);
}

/*
 * Version 1 and the distinct caches of all possible CPUs, by level, in
 * the order first seen within a level.
 */
static bool feat_cache(struct buf *b)
{
	int nr_cpus = cpus__max("possible"), err = 0;
	struct cache *caches = NULL, c;
	__u32 nr = 0;

	for (int cpu = 0; cpu < nr_cpus && !err; cpu++) {
		for (int idx = 0; idx < CACHE_LEVELS; idx++) {
			struct cache *p;
			__u32 i;
			int ret = cache__read(&c, cpu, idx);

			if (ret <= 0) {
				err = ret;
				break;
			}
			for (i = 0; i < nr && !cache__same(&c, &caches[i]); i++)
				;
			if (i < nr) {
				cache__free(&c);
				continue;
			}
			p = realloc(caches, (nr + 1) * sizeof(*caches));
			if (!p) {
				cache__free(&c);
				err = -1;
				break;
			}
			caches = p;
			caches[nr++] = c;
		}
	}
	if (!err) {
		/* by level, keeping the order within a level (perf's qsort, stable in glibc 2.36) */
		for (__u32 i = 1; i < nr; i++) {
			struct cache t = caches[i];
			__u32 j = i;

			for (; j > 0 && caches[j - 1].level > t.level; j--)
				caches[j] = caches[j - 1];
			caches[j] = t;
		}
		buf__u32(b, 1);
		buf__u32(b, nr);
		for (__u32 i = 0; i < nr; i++) {
			buf__u32(b, caches[i].level);
			buf__u32(b, caches[i].line_size);
			buf__u32(b, caches[i].sets);
			buf__u32(b, caches[i].ways);
			buf__string(b, caches[i].type);
			buf__string(b, caches[i].size);
			buf__string(b, caches[i].map);
		}
	}
	for (__u32 i = 0; i < nr; i++)
		cache__free(&caches[i]);
	free(caches);
	return !err;
}

/* ---- PMUs ----------------------------------------------------------------- */

struct pmu {
	char *name;
	__u32 type;
};

/* The PMUs of sysfs with a type, in directory order (perf 6.1's order). */
static struct pmu *pmus_read(size_t *nr)
{
	struct pmu *pmus = NULL, *p;
	struct dirent *e;
	long long type;
	DIR *d = opendir(SYS_PMUS);

	*nr = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' ||
		    !sysfs__read_num(&type, 10, SYS_PMUS "/%s/type", e->d_name))
			continue;
		p = realloc(pmus, (*nr + 1) * sizeof(*pmus));
		if (!p)
			break;
		pmus = p;
		pmus[*nr].name = strdup(e->d_name);
		pmus[*nr].type = (__u32)type;
		if (!pmus[*nr].name)
			break;
		++*nr;
	}
	closedir(d);
	return pmus;
}

static void pmus_free(struct pmu *pmus, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(pmus[i].name);
	free(pmus);
}

/* The two-PMU halves of a hybrid CPU (cpu_core, cpu_atom), which have a cpus file. */
static bool pmu_hybrid(const char *name)
{
	return !strncmp(name, "cpu_", 4) && sysfs__exists(SYS_PMUS "/%s/cpus", name);
}

/* u32 number, then each PMU's type and name; always written, 0 when none. */
static bool feat_pmu_mappings(struct buf *b)
{
	size_t nr;
	struct pmu *pmus = pmus_read(&nr);

	buf__u32(b, (__u32)nr);
	for (size_t i = 0; i < nr; i++) {
		buf__u32(b, pmus[i].type);
		buf__string(b, pmus[i].name);
	}
	pmus_free(pmus, nr);
	return true;
}

/*
 * The capabilities of a PMU (files of its caps directory, in directory
 * order, value without its newline): u32 number, then name and value of
 * each, then the PMU's name when with_name.  Returns the number; nothing
 * is written when put is false.
 */
static __u32 pmu_caps(struct buf *b, const char *pmu, bool put, bool with_name)
{
	char path[512], value[128];
	struct dirent *e;
	struct buf tmp = { 0 };
	__u32 nr = 0;
	DIR *d;

	snprintf(path, sizeof(path), SYS_PMUS "/%s/caps", pmu);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		FILE *f;
		bool ok;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), SYS_PMUS "/%s/caps/%s", pmu, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		ok = fgets(value, sizeof(value), f) != NULL;
		fclose(f);
		if (!ok)
			continue;
		value[strcspn(value, "\n")] = '\0';
		buf__string(&tmp, e->d_name);
		buf__string(&tmp, value);
		nr++;
	}
	if (d)
		closedir(d);
	if (put) {
		buf__u32(b, nr);
		buf__put(b, tmp.p, tmp.len);
		if (with_name)
			buf__string(b, pmu);
		b->oom |= tmp.oom;
	}
	free(tmp.p);
	return nr;
}

/* The core PMU "cpu" (x86, not hybrid): its caps without its name. */
static bool feat_cpu_pmu_caps(struct buf *b)
{
	long long type;

	if (!sysfs__read_num(&type, 10, SYS_PMUS "/cpu/type"))
		return false;	/* perf leaves the feature out without a "cpu" PMU */
	pmu_caps(b, "cpu", true, false);
	return true;
}

/*
 * Every other PMU with capabilities, hybrid core PMUs first as perf writes
 * them for older readers: u32 number, then caps and name of each.
 */
static bool feat_pmu_caps(struct buf *b)
{
	size_t nr;
	struct pmu *pmus = pmus_read(&nr);
	__u32 with = 0;

	for (size_t i = 0; i < nr; i++)
		if (strcmp(pmus[i].name, "cpu") && pmu_caps(b, pmus[i].name, false, false))
			with++;
	buf__u32(b, with);
	for (int hybrid = 1; hybrid >= 0; hybrid--) {
		for (size_t i = 0; i < nr && with; i++) {
			const char *name = pmus[i].name;

			if (strcmp(name, "cpu") && pmu_hybrid(name) == hybrid &&
			    pmu_caps(b, name, false, false))
				pmu_caps(b, name, true, true);
		}
	}
	pmus_free(pmus, nr);
	return true;
}

/* On hybrid machines only: u32 number, then name and CPU list of each core PMU. */
static bool feat_hybrid_topology(struct buf *b)
{
	struct strs names = { 0 };
	size_t nr;
	struct pmu *pmus = pmus_read(&nr);
	bool ok = true;

	for (size_t i = 0; i < nr; i++)
		if (pmu_hybrid(pmus[i].name))
			strs__add_unique(&names, strdup(pmus[i].name));
	if (names.nr && !names.oom) {
		buf__u32(b, names.nr);
		for (__u32 i = 0; i < names.nr && ok; i++) {
			char *cpus = sysfs__read_str(SYS_PMUS "/%s/cpus", names.s[i]);

			ok = cpus != NULL;
			if (ok) {
				buf__string(b, names.s[i]);
				buf__string(b, cpus);
			}
			free(cpus);
		}
	}
	ok = ok && names.nr && !names.oom;
	strs__free(&names);
	pmus_free(pmus, nr);
	return ok;
}

bool host_feature(struct buf *b, unsigned int feat)
{
	bool ok;

	switch (feat) {
	case PD_FEAT_HOSTNAME:
	case PD_FEAT_OSRELEASE:
	case PD_FEAT_ARCH:
		ok = feat_uname(b, feat);
		break;
	case PD_FEAT_NRCPUS:
		ok = feat_nrcpus(b);
		break;
	case PD_FEAT_CPUDESC:
		ok = feat_cpudesc(b);
		break;
	case PD_FEAT_CPUID:
		ok = feat_cpuid(b);
		break;
	case PD_FEAT_TOTAL_MEM:
		ok = feat_total_mem(b);
		break;
	case PD_FEAT_CPU_TOPOLOGY:
		ok = feat_cpu_topology(b);
		break;
	case PD_FEAT_NUMA_TOPOLOGY:
		ok = feat_numa_topology(b);
		break;
	case PD_FEAT_PMU_MAPPINGS:
		ok = feat_pmu_mappings(b);
		break;
	case PD_FEAT_CACHE:
		ok = feat_cache(b);
		break;
	case PD_FEAT_MEM_TOPOLOGY:
		ok = feat_mem_topology(b);
		break;
	case PD_FEAT_CPU_PMU_CAPS:
		ok = feat_cpu_pmu_caps(b);
		break;
	case PD_FEAT_HYBRID_TOPOLOGY:
		ok = feat_hybrid_topology(b);
		break;
	case PD_FEAT_PMU_CAPS:
		ok = feat_pmu_caps(b);
		break;
	default:
		return false;
	}
	/* a feature perf would leave out leaves nothing behind */
	if (!ok)
		b->len = 0;
	return ok;
}
