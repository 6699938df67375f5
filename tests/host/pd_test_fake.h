/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pd_test_fake.h - a perf.data file of a fake process that perf can read
 *
 * The fake process is the test itself: its pid, its executable mapping
 * (from /proc/self/maps) and three of its functions as the user stack,
 * so that perf script resolves real symbols.  The file comes in two
 * forms: stitched (PERF_CONTEXT_USER chains, what any perf reads) and
 * deferred (USER_DEFERRED, cookie and CALLCHAIN_DEFERRED records, written
 * per CPU buffer with FINISHED_ROUND the way perf >= 6.19 does).
 */
#ifndef PD_TEST_FAKE_H
#define PD_TEST_FAKE_H

#include <limits.h>
#include <sys/mman.h>

#include "pd_test_util.h"

#define FAKE_ID0	201
#define FAKE_ID1	202
#define FAKE_SAMPLES	8
#define FAKE_K(x)	(0xffffffff81000000ULL + (x))

/* Three functions that ICF cannot merge. */
__attribute__((noinline, noclone, used, unused)) static int pd_target_alpha(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, noclone, used, unused)) static int pd_target_beta(int x)
{
	return pd_target_alpha(x) * 5 + 2;
}

__attribute__((noinline, noclone, used, unused)) static int pd_target_gamma(int x)
{
	return pd_target_beta(x) * 7 + 3;
}

struct fake_proc {
	char exe[PATH_MAX];
	__u64 start, len, pgoff;
	__u64 ips[3];		/* alpha, beta, gamma: innermost first */
	__u8 bid[PD_BUILD_ID_SIZE];
	size_t bid_len;
	pid_t pid;
	/* the kernel: _text.._etext and two functions, from /proc/kallsyms */
	__u64 ktext, klen, kips[2];
	bool kallsyms;		/* real addresses: perf can resolve them */
	__u8 kbid[PD_BUILD_ID_SIZE];
	size_t kbid_len;
};

/* Kernel addresses from /proc/kallsyms; made-up ones when it hides them. */
__attribute__((unused)) static void fake_proc__kernel(struct fake_proc *fp)
{
	unsigned long long addr, text = 0, etext = 0, sched = 0, sys = 0;
	char line[512], type, name[256];
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || strchr(line, '['))
			continue;
		if (!strcmp(name, "_text"))
			text = addr;
		else if (!strcmp(name, "_etext"))
			etext = addr;
		else if (!strcmp(name, "schedule"))
			sched = addr;
		else if (!strcmp(name, "do_syscall_64"))
			sys = addr;
	}
	if (f)
		fclose(f);
	fp->kallsyms = text && etext > text && sched > text && sched < etext &&
		       sys > text && sys < etext;
	fp->ktext = fp->kallsyms ? text : FAKE_K(0);
	fp->klen = fp->kallsyms ? etext - text : 0x1000000;
	fp->kips[0] = fp->kallsyms ? sched + 1 : FAKE_K(0x1234);
	fp->kips[1] = fp->kallsyms ? sys + 1 : FAKE_K(0x5678);
	fp->kbid_len = sizeof(fp->kbid);
	if (sysfs__read_build_id("/sys/kernel/notes", fp->kbid, &fp->kbid_len))
		fp->kbid_len = 0;
}

/* The mapping of our executable that holds the target functions. */
__attribute__((unused)) static int fake_proc__init(struct fake_proc *fp)
{
	unsigned long long lo, hi, off;
	uintptr_t a = (uintptr_t)pd_target_alpha;
	char line[PATH_MAX + 128], perms[8];
	ssize_t n;
	FILE *f;
	int ret = -1;

	memset(fp, 0, sizeof(*fp));
	fp->pid = getpid();
	n = readlink("/proc/self/exe", fp->exe, sizeof(fp->exe) - 1);
	if (n <= 0)
		return -1;
	fp->exe[n] = '\0';
	fp->ips[0] = (uintptr_t)pd_target_alpha + 1;
	fp->ips[1] = (uintptr_t)pd_target_beta + 1;
	fp->ips[2] = (uintptr_t)pd_target_gamma + 1;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s %llx", &lo, &hi, perms, &off) != 4)
			continue;
		if (a >= lo && a < hi && perms[2] == 'x') {
			fp->start = lo;
			fp->len = hi - lo;
			fp->pgoff = off;
			ret = 0;
			break;
		}
	}
	fclose(f);
	fp->bid_len = sizeof(fp->bid);
	if (!ret && filename__read_build_id(fp->exe, fp->bid, &fp->bid_len))
		fp->bid_len = 0;
	fake_proc__kernel(fp);
	return ret;
}

/*
 * Write the fake process's recording to w (attrs added here): COMM,
 * MMAP2, FAKE_SAMPLES samples alternating CPUs and user/kernel mode,
 * EXIT.  Returns 0 or -errno.
 */
__attribute__((unused)) static int fake_proc__write(const struct fake_proc *fp,
						    struct perf_data_writer *w, bool deferred)
{
	struct perf_event_attr a = t_attr(deferred, true);
	__u64 ids[] = { FAKE_ID0, FAKE_ID1 };
	const __u64 *k = fp->kips;
	struct tev *e = malloc(sizeof(*e)), *later[2][FAKE_SAMPLES];
	int nl[2] = { 0 }, err;

	if (!e)
		return -ENOMEM;
	err = perf_data_writer__add_attr(w, &a, ids, 2, "cpu-clock");
	if (err)
		goto out;
	t_kernel_mmap(e, fp->ktext, fp->klen);
	err = perf_data_writer__write(w, e->w, tev__size(e));
	t_comm(e, fp->pid, fp->pid, "pd-fake", 1000, FAKE_ID0, 0, true);
	err = err ?: perf_data_writer__write(w, e->w, tev__size(e));
	t_mmap2(e, fp->pid, fp->pid, fp->start, fp->len, fp->pgoff, PROT_READ | PROT_EXEC,
		MAP_PRIVATE, fp->exe, 1001, FAKE_ID0, 0);
	err = err ?: perf_data_writer__write(w, e->w, tev__size(e));
	for (int i = 0; i < FAKE_SAMPLES && !err; i++) {
		__u64 time = 2000 + 100 * i, cookie = ((__u64)(i % 2) + 1) << 32 | (2 * i + 1);
		__u32 cpu = i % 2;
		bool kernel = i % 4 >= 2;
		struct tev *s = malloc(sizeof(*s)), *d = malloc(sizeof(*d));
		unsigned int n = 0;
		__u64 chain[8];

		if (!s || !d) {
			free(s);
			free(d);
			err = -ENOMEM;
			break;
		}
		if (kernel) {
			chain[n++] = PERF_CONTEXT_KERNEL;
			chain[n++] = k[0];
			chain[n++] = k[1];
		}
		if (deferred) {
			chain[n++] = T_USER_DEFERRED;
			chain[n++] = cookie;
			t_sample(s, fp->pid, fp->pid, time, cpu ? FAKE_ID1 : FAKE_ID0, cpu,
				 kernel ? k[0] : fp->ips[0], chain, n);
			/* returned to user space on the other CPU, 50 ns later */
			t_deferred(d, fp->pid, fp->pid, time + 50, cpu ? FAKE_ID0 : FAKE_ID1,
				   !cpu, cookie, fp->ips, 3);
		} else {
			chain[n++] = PERF_CONTEXT_USER;
			for (int j = 0; j < 3; j++)
				chain[n++] = fp->ips[j];
			t_sample(s, fp->pid, fp->pid, time, cpu ? FAKE_ID1 : FAKE_ID0, cpu,
				 kernel ? k[0] : fp->ips[0], chain, n);
			free(d);
			d = NULL;
		}
		/* perf writes one CPU buffer after the other: CPU 1's first */
		later[cpu][nl[cpu]++] = s;
		if (d)
			later[!cpu][nl[!cpu]++] = d;
		if (i % 4 == 3 || i == FAKE_SAMPLES - 1) {
			for (int c = 1; c >= 0; c--) {
				for (int j = 0; j < nl[c]; j++) {
					struct tev *t = later[c][j];

					err = err ?: perf_data_writer__write(w, t->w, tev__size(t));
					free(t);
				}
				nl[c] = 0;
			}
			if (deferred) {
				t_round(e);
				err = err ?: perf_data_writer__write(w, e->w, tev__size(e));
			}
		}
	}
	for (int c = 0; c < 2; c++)
		for (int j = 0; j < nl[c]; j++)
			free(later[c][j]);
	t_exit(e, fp->pid, fp->pid, 9000, FAKE_ID0, 0);
	err = err ?: perf_data_writer__write(w, e->w, tev__size(e));
out:
	free(e);
	return err;
}

/* Write it to path, with the build-id of the executable and a cmdline. */
__attribute__((unused)) static int fake_proc__file(const struct fake_proc *fp, const char *path,
						   bool deferred, const struct feat_raw *raw,
						   size_t nr_raw)
{
	static const char *const argv[] = { "record", "-g", "--", "pd-fake" };
	struct build_id_entry bid[2] = {
		{ .path = fp->exe, .pid = -1, .size = fp->bid_len },
		{ .path = "[kernel.kallsyms]", .pid = -1, .kernel = true, .size = fp->kbid_len },
	};
	struct perf_data_features f = {
		.cmdline = "/usr/bin/perf-defer", .argc = 4, .argv = (const char **)argv,
		.build_ids = bid, .nr_build_ids = fp->kbid_len ? 2 : 1,
		.raw = raw, .nr_raw = nr_raw,
	};
	struct perf_data_writer *w = perf_data_writer__open(path);
	int err;

	if (!w)
		return -errno;
	memcpy(bid[0].build_id, fp->bid, fp->bid_len);
	memcpy(bid[1].build_id, fp->kbid, fp->kbid_len);
	err = fake_proc__write(fp, w, deferred);
	if (err) {
		perf_data_writer__abort(w);
		return err;
	}
	return perf_data_writer__close(w, &f);
}

#endif /* PD_TEST_FAKE_H */
