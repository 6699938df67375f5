// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl_bench MODE UNITS: the benchmark workloads (scripts/bench).  Each does a
 * fixed amount of work, UNITS units of it, and prints the time it took as
 * "elapsed_ns N", so that a profiler's cost is the slowdown of the same
 * work, then "cpu_ns N", the CPU time its threads had meanwhile (what ran
 * in its context, interrupts and task_works included; the rest of the
 * elapsed time it waited).  Frame pointers everywhere, as the other
 * workloads.
 *
 * recurse:  CPU-bound: a 40-deep recursion with a short loop at the bottom;
 *           nearly every sample hits user mode.
 * syscall:  a 24-deep user stack, then one 64 MiB read() of /dev/zero per
 *           unit (about 10 ms of kernel time under TCG): many samples, even
 *           at 1 kHz, fall in one kernel entry.
 * fault:    a 12-deep user stack, then 1 MiB of fresh anonymous memory
 *           touched page by page and unmapped: page-fault heavy.
 * threads:  16 threads share the units, each a 24-deep recursion with a
 *           short loop and a getppid() system call.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wl_common.h"

#define DEPTH_RECURSE	40
#define DEPTH_SYSCALL	24
#define DEPTH_FAULT	12
#define DEPTH_THREADS	24
#define NR_THREADS	16
#define CHUNK		(1 << 20)
#define READ_CHUNK	(64 << 20)

static volatile unsigned long sink;
static int zero_fd;
static char *buf;
static long units_left;
static pthread_mutex_t units_lock = PTHREAD_MUTEX_INITIALIZER;

NOINLINE void spin(unsigned long n)
{
	unsigned long i;

	WL_LEAF_FRAME();
	for (i = 0; i < n; i++)
		sink += i;
}

NOINLINE void recurse(int n)
{
	if (n > 0)
		recurse(n - 1);
	else
		spin(2000);
	sink++;
}

NOINLINE void reader(void)
{
	WL_LEAF_FRAME();
	if (wl_sys3(SYS_read, zero_fd, (long)buf, READ_CHUNK) != READ_CHUNK)
		exit(1);
}

NOINLINE void read_deep(int n)
{
	if (n > 0)
		read_deep(n - 1);
	else
		reader();
	sink++;
}

NOINLINE void toucher(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;
	long i;

	p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	for (i = 0; i < CHUNK; i += page)
		p[i] = 1;
	munmap(p, CHUNK);
}

NOINLINE void fault_deep(int n)
{
	if (n > 0)
		fault_deep(n - 1);
	else
		toucher();
	sink++;
}

NOINLINE void thread_unit(int n)
{
	if (n > 0) {
		thread_unit(n - 1);
	} else {
		spin(500);
		wl_sys3(SYS_getppid, 0, 0, 0);
	}
	sink++;
}

NOINLINE void *thread_main(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&units_lock);
		if (units_left <= 0) {
			pthread_mutex_unlock(&units_lock);
			return NULL;
		}
		units_left--;
		pthread_mutex_unlock(&units_lock);
		thread_unit(DEPTH_THREADS);
	}
}

static long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	pthread_t tids[NR_THREADS];
	long units, i, t0, c0;
	const char *mode;

	if (argc != 3 || (units = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: wl_bench recurse|syscall|fault|threads UNITS\n");
		return 2;
	}
	mode = argv[1];
	zero_fd = open("/dev/zero", O_RDONLY);
	/*
	 * The read buffer, populated before the clock starts, in one system
	 * call: touched page by page, its faults (one sample per kernel
	 * entry, and how many depends on the kernel's THP policy) would be
	 * most of (b)'s kernel entries.
	 */
	buf = mmap(NULL, strcmp(mode, "syscall") ? 4096 : READ_CHUNK, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (zero_fd < 0 || buf == MAP_FAILED)
		return 1;

	t0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (!strcmp(mode, "recurse")) {
		for (i = 0; i < units; i++)
			recurse(DEPTH_RECURSE);
	} else if (!strcmp(mode, "syscall")) {
		for (i = 0; i < units; i++)
			read_deep(DEPTH_SYSCALL);
	} else if (!strcmp(mode, "fault")) {
		for (i = 0; i < units; i++)
			fault_deep(DEPTH_FAULT);
	} else if (!strcmp(mode, "threads")) {
		units_left = units;
		for (i = 0; i < NR_THREADS; i++)
			if (pthread_create(&tids[i], NULL, thread_main, NULL))
				return 1;
		for (i = 0; i < NR_THREADS; i++)
			pthread_join(tids[i], NULL);
	} else {
		fprintf(stderr, "wl_bench: unknown mode '%s'\n", mode);
		return 2;
	}
	printf("elapsed_ns %ld\n", clock_ns(CLOCK_MONOTONIC) - t0);
	printf("cpu_ns %ld\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0);
	return 0;
}
