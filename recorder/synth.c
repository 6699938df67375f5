// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#include "synth.h"
#include "util.h"

#define SYNTH_MAX	(sizeof(struct perf_event_header) + 64 + PATH_MAX + 64)

struct synth_buf {
	__u64	words[SYNTH_MAX / 8];
	size_t	len;
};

static void synth_put(struct synth_buf *b, const void *src, size_t len)
{
	memcpy((char *)b->words + b->len, src, len);
	b->len += len;
}

/* A NUL-terminated string padded to 8 bytes, then the sample_id zeros. */
static int synth_finish(struct synth_buf *b, const char *str, unsigned int id_words,
			__u32 type, __u16 misc, event_fn emit, void *arg)
{
	struct perf_event_header *h = (void *)b->words;
	size_t slen = strnlen(str, PATH_MAX - 1) + 1;

	synth_put(b, str, slen - 1);
	memset((char *)b->words + b->len, 0, 8 + id_words * 8);
	b->len = (b->len + 1 + 7) / 8 * 8 + id_words * 8;
	h->type = type;
	h->misc = misc;
	h->size = b->len;
	return emit(arg, b->words, b->len);
}

/*
 * The kernel's map, named after its reference symbol as perf record names
 * it: _text, or _stext where kallsyms has no _text (arm64 lists only what
 * lies from _stext on, without CONFIG_KALLSYMS_ALL).
 */
int synth__kernel_mmap(event_fn emit, void *arg, unsigned int id_words)
{
	static const char *const refs[] = { "_text", "_stext" };
	struct synth_buf b = { .len = sizeof(struct perf_event_header) };
	unsigned long long addr[2] = { 0, 0 }, a;
	char line[512], type, name[256], map[64];
	__u32 ids[2] = { (__u32)-1, 0 };	/* the host kernel's pid, tid */
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned int i, r;
	__u64 m[3];

	if (!f)
		return 0;	/* no kernel symbols; perf report copes */
	while (fgets(line, sizeof(line), f) && !addr[0]) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		for (i = 0; i < 2; i++)
			if (!addr[i] && !strcmp(name, refs[i]))
				addr[i] = a;
	}
	fclose(f);
	r = addr[0] ? 0 : 1;
	if (!addr[r])
		return 0;	/* kptr_restrict hides it */
	m[0] = addr[r];
	m[1] = ~0ULL - addr[r];
	m[2] = addr[r];		/* pgoff: the address of the reference symbol */
	synth_put(&b, ids, sizeof(ids));
	synth_put(&b, m, sizeof(m));
	snprintf(map, sizeof(map), "[kernel.kallsyms]%s", refs[r]);
	return synth_finish(&b, map, id_words, PERF_RECORD_MMAP,
			    PERF_RECORD_MISC_KERNEL, emit, arg);
}

static int synth_comm(event_fn emit, void *arg, unsigned int id_words,
		      pid_t pid, pid_t tid)
{
	struct synth_buf b = { .len = sizeof(struct perf_event_header) };
	__u32 ids[2] = { pid, tid };
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return 0;	/* gone already */
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	synth_put(&b, ids, sizeof(ids));
	return synth_finish(&b, comm, id_words, PERF_RECORD_COMM, 0, emit, arg);
}

static int synth_maps(event_fn emit, void *arg, unsigned int id_words, pid_t pid,
		      bool data)
{
	char path[64], line[PATH_MAX + 128], perms[8], file[PATH_MAX];
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	int ret = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!ret && fgets(line, sizeof(line), f)) {
		struct synth_buf b = { .len = sizeof(struct perf_event_header) };
		__u32 ids[2] = { pid, pid }, devs[2], pf[2];
		__u64 m[3], inos[2];

		file[0] = 0;
		n = sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]", &start, &end,
			   perms, &pgoff, &maj, &min, &ino, file);
		/* perf report needs the executable maps; DWARF unwinding the rest */
		if (n < 7 || (perms[2] != 'x' && !data))
			continue;
		if (n == 7 || !file[0])
			strcpy(file, "//anon");
		m[0] = start;
		m[1] = end - start;
		m[2] = pgoff;
		devs[0] = maj;
		devs[1] = min;
		inos[0] = ino;
		inos[1] = 0;
		pf[0] = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			(perms[2] == 'x' ? PROT_EXEC : 0);
		pf[1] = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		synth_put(&b, ids, sizeof(ids));
		synth_put(&b, m, sizeof(m));
		synth_put(&b, devs, sizeof(devs));
		synth_put(&b, inos, sizeof(inos));
		synth_put(&b, pf, sizeof(pf));
		ret = synth_finish(&b, file, id_words, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER |
				   (perms[2] == 'x' ? 0 : PERF_RECORD_MISC_MMAP_DATA), emit, arg);
	}
	fclose(f);
	return ret;
}

int synth__for_each_tid(pid_t pid, int (*fn)(void *arg, pid_t tid), void *arg)
{
	char path[64];
	struct dirent *d;
	int ret = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!ret && (d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);

		if (tid > 0)
			ret = fn(arg, tid);
	}
	closedir(dir);
	return ret;
}

struct synth_comm_arg {
	event_fn	emit;
	void		*arg;
	unsigned int	id_words;
	pid_t		pid, only_tid;
};

static int synth_comm_tid(void *arg, pid_t tid)
{
	struct synth_comm_arg *a = arg;

	if (a->only_tid && tid != a->only_tid)
		return 0;
	return synth_comm(a->emit, a->arg, a->id_words, a->pid, tid);
}

int synth__process(event_fn emit, void *arg, unsigned int id_words, pid_t pid,
		   pid_t only_tid, bool data)
{
	struct synth_comm_arg a = { emit, arg, id_words, pid, only_tid };
	int ret = synth__for_each_tid(pid, synth_comm_tid, &a);

	if (ret < 0)
		return 0;	/* gone already */
	return ret ?: synth_maps(emit, arg, id_words, pid, data);
}

int synth__all(event_fn emit, void *arg, unsigned int id_words, bool data)
{
	struct dirent *d;
	int ret = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -errno;
	while (!ret && (d = readdir(dir))) {
		pid_t pid = atoi(d->d_name);

		if (pid > 0)
			ret = synth__process(emit, arg, id_words, pid, 0, data);
	}
	closedir(dir);
	return ret;
}
