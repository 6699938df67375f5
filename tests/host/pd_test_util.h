/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pd_test_util.h - records and files for the perf.data host tests
 *
 * The records are built word by word as the kernel lays them out, for
 * one sample_type used throughout (T_SAMPLE_TYPE, sample_id_all), so
 * that each test states only what it is about.
 */
#ifndef PD_TEST_UTIL_H
#define PD_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "perf-data.h"
#include "sample.h"

#define T_SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			 PERF_SAMPLE_CALLCHAIN)
#define T_USER_DEFERRED	PERF_DEFER_CONTEXT_USER_DEFERRED
#define T_MAX_WORDS	8192

/* A record under construction: w[0] is the header. */
struct tev {
	__u64 w[T_MAX_WORDS];
	size_t n;		/* words */
};

static inline void tev__begin(struct tev *e, __u32 type, __u16 misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	memset(e->w, 0, sizeof(e->w[0]) * 2);
	memcpy(&e->w[0], &h, sizeof(h));
	e->n = 1;
}

static inline void tev__u64(struct tev *e, __u64 v)
{
	e->w[e->n++] = v;
}

static inline void tev__u32x2(struct tev *e, __u32 lo, __u32 hi)
{
	e->w[e->n++] = (__u64)hi << 32 | lo;
}

/* Bytes padded to 8 with NULs (at least one NUL). */
static inline void tev__string(struct tev *e, const char *s)
{
	size_t len = strlen(s) + 1, words = (len + 7) / 8;

	memset(&e->w[e->n], 0, words * 8);
	memcpy(&e->w[e->n], s, len);
	e->n += words;
}

/* sample_id of T_SAMPLE_TYPE: TID, TIME, ID, CPU */
static inline void tev__id(struct tev *e, __u32 pid, __u32 tid, __u64 time, __u64 id, __u32 cpu)
{
	tev__u32x2(e, pid, tid);
	tev__u64(e, time);
	tev__u64(e, id);
	tev__u32x2(e, cpu, 0);
}

/* Finish: set header.size; returns the size in bytes. */
static inline size_t tev__end(struct tev *e)
{
	struct perf_event_header h;

	memcpy(&h, &e->w[0], sizeof(h));
	h.size = (__u16)(e->n * 8);
	memcpy(&e->w[0], &h, sizeof(h));
	return e->n * 8;
}

static inline size_t tev__size(const struct tev *e)
{
	return e->n * 8;
}

/* PERF_RECORD_SAMPLE of T_SAMPLE_TYPE with chain[nr] */
static inline size_t t_sample(struct tev *e, __u32 pid, __u32 tid, __u64 time, __u64 id,
			      __u32 cpu, __u64 ip, const __u64 *chain, unsigned int nr)
{
	tev__begin(e, PERF_RECORD_SAMPLE,
		   ip >= 0xffff800000000000ULL ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	tev__u64(e, ip);
	tev__u32x2(e, pid, tid);
	tev__u64(e, time);
	tev__u64(e, id);
	tev__u32x2(e, cpu, 0);
	tev__u64(e, 1000000);	/* period */
	tev__u64(e, nr);
	for (unsigned int i = 0; i < nr; i++)
		tev__u64(e, chain[i]);
	return tev__end(e);
}

/* A sample taken in the kernel, user part deferred: KERNEL, k..., USER_DEFERRED, cookie */
static inline size_t t_sample_deferred(struct tev *e, __u32 pid, __u32 tid, __u64 time, __u64 id,
				       __u32 cpu, const __u64 *kips, unsigned int nk, __u64 cookie)
{
	__u64 chain[64];
	unsigned int n = 0;

	if (nk) {
		chain[n++] = PERF_CONTEXT_KERNEL;
		for (unsigned int i = 0; i < nk; i++)
			chain[n++] = kips[i];
	}
	chain[n++] = T_USER_DEFERRED;
	chain[n++] = cookie;
	return t_sample(e, pid, tid, time, id, cpu, nk ? kips[0] : 0x400000, chain, n);
}

/* PERF_RECORD_CALLCHAIN_DEFERRED { cookie, nr, ips[nr], sample_id } */
static inline size_t t_deferred(struct tev *e, __u32 pid, __u32 tid, __u64 time, __u64 id,
				__u32 cpu, __u64 cookie, const __u64 *ips, unsigned int nr)
{
	tev__begin(e, PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, PERF_RECORD_MISC_USER);
	tev__u64(e, cookie);
	tev__u64(e, nr);
	for (unsigned int i = 0; i < nr; i++)
		tev__u64(e, ips[i]);
	tev__id(e, pid, tid, time, id, cpu);
	return tev__end(e);
}

static inline size_t t_comm(struct tev *e, __u32 pid, __u32 tid, const char *comm, __u64 time,
			    __u64 id, __u32 cpu, bool exec)
{
	tev__begin(e, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	tev__u32x2(e, pid, tid);
	tev__string(e, comm);
	tev__id(e, pid, tid, time, id, cpu);
	return tev__end(e);
}

/* The kernel's map, as perf record synthesizes it (sample_id of id 0). */
static inline size_t t_kernel_mmap(struct tev *e, __u64 start, __u64 len)
{
	tev__begin(e, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	tev__u32x2(e, (__u32)-1, 0);
	tev__u64(e, start);
	tev__u64(e, len);
	tev__u64(e, start);		/* pgoff */
	tev__string(e, "[kernel.kallsyms]_text");
	tev__id(e, 0, 0, 0, 0, 0);
	return tev__end(e);
}

static inline size_t t_mmap2(struct tev *e, __u32 pid, __u32 tid, __u64 start, __u64 len,
			     __u64 pgoff, __u32 prot, __u32 flags, const char *file,
			     __u64 time, __u64 id, __u32 cpu)
{
	tev__begin(e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	tev__u32x2(e, pid, tid);
	tev__u64(e, start);
	tev__u64(e, len);
	tev__u64(e, pgoff);
	tev__u32x2(e, 0xfe, 1);		/* maj, min */
	tev__u64(e, 4242);		/* ino */
	tev__u64(e, 0);			/* ino_generation */
	tev__u32x2(e, prot, flags);
	tev__string(e, file);
	tev__id(e, pid, tid, time, id, cpu);
	return tev__end(e);
}

static inline size_t t_lost(struct tev *e, __u64 lost_id, __u64 lost, __u64 time, __u64 id,
			    __u32 cpu)
{
	tev__begin(e, PERF_RECORD_LOST, 0);
	tev__u64(e, lost_id);
	tev__u64(e, lost);
	tev__id(e, (__u32)-1, (__u32)-1, time, id, cpu);
	return tev__end(e);
}

static inline size_t t_exit(struct tev *e, __u32 pid, __u32 tid, __u64 time, __u64 id, __u32 cpu)
{
	tev__begin(e, PERF_RECORD_EXIT, 0);
	tev__u32x2(e, pid, 1);		/* pid, ppid */
	tev__u32x2(e, tid, 1);		/* tid, ptid */
	tev__u64(e, time);
	tev__id(e, pid, tid, time, id, cpu);
	return tev__end(e);
}

static inline size_t t_round(struct tev *e)
{
	tev__begin(e, 68 /* PERF_RECORD_FINISHED_ROUND */, 0);
	return tev__end(e);
}

/* The sampling attr of the tests; output: it tracks mmap, comm, task. */
static inline struct perf_event_attr t_attr(bool defer, bool output)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000,
		.sample_type = T_SAMPLE_TYPE,
		.read_format = PERF_FORMAT_ID,
		.disabled = 1,
		.mmap = output,
		.comm = output,
		.task = output,
		.mmap2 = output,
		.comm_exec = output,
		.sample_id_all = 1,
		.exclude_guest = 1,
	};

	/* defer_output goes on the tracking event of a deferred recording */
	attr__set_defer(&a, defer, defer && output);
	return a;
}

/* The contents of a file (malloc'd), or NULL. */
static inline void *t_slurp(const char *path, size_t *size)
{
	struct stat st;
	void *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && (buf = malloc(st.st_size ? st.st_size : 1)) &&
	    read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	*size = buf ? st.st_size : 0;
	close(fd);
	return buf;
}

static inline int t_spew(const char *path, const void *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && write(fd, buf, size) == (ssize_t)size;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* The output of a command (stdout and stderr apart), its exit status. */
struct t_run {
	int code;		/* exit code; 128 + signal when killed */
	char *out, *err;
};

static inline char *t_read_fd(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf = malloc(size > 0 ? size + 1 : 1);

	if (!buf)
		return NULL;
	if (size > 0 && pread(fd, buf, size, 0) != size)
		size = 0;
	buf[size > 0 ? size : 0] = '\0';
	close(fd);
	return buf;
}

/*
 * Run argv (argv[0] is the program) with stdout to a file, or to out_path
 * when given; a sanitizer report makes the code 99 or 98.  posix_spawn:
 * fork() of a process under ASan is slow.
 */
static inline int t_run(struct t_run *r, const char *out_path, char *const argv[])
{
	static char *const extra[] = {
		"ASAN_OPTIONS=exitcode=99:abort_on_error=0:detect_leaks=1",
		"UBSAN_OPTIONS=halt_on_error=1:exitcode=98:print_stacktrace=1",
		"PAGER=cat",
	};
	extern char **environ;
	int out = out_path ? open(out_path, O_WRONLY | O_CLOEXEC)
			   : memfd_create("stdout", MFD_CLOEXEC);
	int err = memfd_create("stderr", MFD_CLOEXEC);
	posix_spawn_file_actions_t fa;
	size_t n = 0, k = 0;
	char **envp;
	int status, ret;
	pid_t pid;

	if (out < 0 || err < 0)
		return -errno;
	while (environ[n])
		n++;
	envp = calloc(n + 4, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "ASAN_OPTIONS=", 13) &&
		    strncmp(environ[i], "UBSAN_OPTIONS=", 14) && strncmp(environ[i], "PAGER=", 6))
			envp[k++] = environ[i];
	for (size_t i = 0; i < 3; i++)
		envp[k++] = extra[i];
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, err, STDERR_FILENO);
	fflush(NULL);
	ret = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	if (ret)
		return -ret;
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->out = out_path ? (close(out), strdup("")) : t_read_fd(out);
	r->err = t_read_fd(err);
	return 0;
}

static inline void t_run_free(struct t_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static inline bool t_have(const char *path)
{
	return !access(path, X_OK);
}

/* The recorder built with ASan and UBSan: $PERF_DEFER_SAN, or the Makefile's. */
#ifdef PD_SAN_BIN
static inline char *t_san_bin(void)
{
	const char *env = getenv("PERF_DEFER_SAN");

	return (char *)(env && *env ? env : PD_SAN_BIN);
}
#endif

/*
 * With T_TMPDIR defined before this header: a directory /tmp/pd-test-*
 * for the files of the test program, made before the tests fork and
 * removed, with what it holds, when the harness returns.
 */
#ifdef T_TMPDIR
static char t_tmpdir[] = "/tmp/pd-test-XXXXXX";
static bool t_have_tmpdir;

static void __attribute__((constructor)) t_tmpdir_make(void)
{
	t_have_tmpdir = mkdtemp(t_tmpdir) != NULL;
}

static void __attribute__((destructor)) t_tmpdir_remove(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t_tmpdir);
	if (t_have_tmpdir && system(cmd))
		fprintf(stderr, "cannot remove %s\n", t_tmpdir);
}

/* name in the directory (the last 8 stay valid), or NULL without one */
static inline char *t_tmp_path(const char *name)
{
	static char paths[8][PATH_MAX];
	static int i;
	char *p = paths[i++ % 8];

	if (!t_have_tmpdir)
		return NULL;
	snprintf(p, PATH_MAX, "%s/%s", t_tmpdir, name);
	return p;
}
#endif

#endif /* PD_TEST_UTIL_H */
