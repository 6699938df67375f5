// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl_dyn MODE [MS]: a dynamically linked program built as distributions
 * build theirs (-O2 -fomit-frame-pointer), whose hot code is called back
 * from inside glibc, for MS milliseconds (default 1500):
 *
 *	main -> sort_once -> qsort (libc.so.6: msort ...) -> cmp_slow
 *
 * MODE main:   in the main thread.
 * MODE thread: in a thread of pthread_create(), whose stack ends in
 *		libc's start_thread and clone3, not in main: the chains
 *		must reach thread_main.
 * MODE bsearch: main -> search_once -> bsearch (libc's, not the inline
 *		one of <stdlib.h>) -> cmp_slow.
 * MODE stdio:	main -> print_once -> fprintf, unbuffered to /dev/null:
 *		every call ends in write() from deep inside libc's stdio,
 *		so kernel entries unwind through it.
 * MODE vdso:	main -> clock_once -> clock_gettime (libc.so.6, then the vDSO's
 *		__vdso_clock_gettime, which falls back to the system call
 *		where the clocksource has no vDSO mode, as under TCG) in a
 *		loop: samples in the vDSO, the kernel entries below it.
 * MODE dlswap: main -> swap_once -> pd_spin (libpd_swap0.so, then
 *		libpd_swap1.so, then 0 again..., each dlopen()ed next to
 *		this program and dlclose()d after) -> cmp_slow: the two
 *		objects differ in layout, and follow each other at what is
 *		likely the same address.
 *
 * glibc keeps no frame pointers, so a frame-pointer walk from cmp_slow
 * is lost inside qsort; its .eh_frame (through the object's
 * PT_GNU_EH_FRAME) gets through.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))
#define NELEM	2048

static volatile unsigned long sink;
static unsigned long long end_ms;

static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* the comparator, made slow so that samples land in it */
NOINLINE int cmp_slow(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;
	int i;

	for (i = 0; i < 64; i++)
		sink += i ^ x;
	return x < y ? -1 : x > y;
}

NOINLINE void sort_once(unsigned int *v, unsigned int seed)
{
	int i;

	for (i = 0; i < NELEM; i++) {
		seed = seed * 1103515245 + 12345;
		v[i] = seed;
	}
	qsort(v, NELEM, sizeof(*v), cmp_slow);
	sink += v[0];
}

/* through a pointer: libc's own bsearch, not <stdlib.h>'s inline one */
static void *(*volatile libc_bsearch)(const void *, const void *, size_t, size_t,
				      int (*)(const void *, const void *)) = bsearch;

NOINLINE void search_once(const unsigned int *v, unsigned int seed)
{
	unsigned int key = v[seed % NELEM];

	sink += libc_bsearch(&key, v, NELEM, sizeof(*v), cmp_slow) != NULL;
}

static FILE *devnull;

NOINLINE void print_once(unsigned int seed)
{
	fprintf(devnull, "%u %s %08x %5.2f\n", seed, "sample", seed * 7, seed / 3.0);
}

NOINLINE void clock_once(unsigned int seed)
{
	struct timespec ts;
	int i;

	for (i = 0; i < 16; i++) {
		clock_gettime(i & 1 ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec ^ seed;
	}
}

static char swap_path[2][4096];

NOINLINE void swap_once(unsigned int *v, unsigned int seed)
{
	unsigned long (*spin)(int (*)(const void *, const void *), const unsigned int *,
			      unsigned long, unsigned long);
	void *h = dlopen(swap_path[seed & 1], RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "wl_dyn: %s\n", dlerror());
		exit(1);
	}
	*(void **)&spin = dlsym(h, "pd_spin");
	if (!spin) {
		fprintf(stderr, "wl_dyn: %s\n", dlerror());
		exit(1);
	}
	sink += spin(cmp_slow, v, NELEM, 20000);
	dlclose(h);
}

static void (*work)(unsigned int *v, unsigned int seed);

static void work_sort(unsigned int *v, unsigned int seed)
{
	sort_once(v, seed);
}

static void work_search(unsigned int *v, unsigned int seed)
{
	search_once(v, seed);
}

static void work_swap(unsigned int *v, unsigned int seed)
{
	swap_once(v, seed);
}

static void work_clock(unsigned int *v __attribute__((unused)), unsigned int seed)
{
	clock_once(seed);
}

static void work_print(unsigned int *v __attribute__((unused)), unsigned int seed)
{
	print_once(seed);
}

NOINLINE void *thread_main(void *arg)
{
	unsigned int *v = malloc(NELEM * sizeof(*v)), seed = 1;
	int i;

	if (!v)
		return NULL;
	for (i = 0; i < NELEM; i++)
		v[i] = i * 3;	/* sorted, for bsearch */
	while (now_ms() < end_ms)
		work(v, seed++);
	free(v);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2 || (strcmp(argv[1], "main") && strcmp(argv[1], "thread") &&
			 strcmp(argv[1], "bsearch") && strcmp(argv[1], "stdio") &&
			 strcmp(argv[1], "dlswap") && strcmp(argv[1], "vdso"))) {
		fprintf(stderr, "usage: wl_dyn main|thread|bsearch|stdio|vdso|dlswap [MS]\n");
		return 2;
	}
	work = !strcmp(argv[1], "bsearch") ? work_search :
	       !strcmp(argv[1], "stdio") ? work_print :
	       !strcmp(argv[1], "dlswap") ? work_swap :
	       !strcmp(argv[1], "vdso") ? work_clock : work_sort;
	for (int i = 0; i < 2; i++)
		snprintf(swap_path[i], sizeof(swap_path[i]), "%s/libpd_swap%d.so",
			 dirname(strdup(argv[0])), i);
	devnull = fopen("/dev/null", "w");
	if (!devnull || setvbuf(devnull, NULL, _IONBF, 0)) {
		perror("wl_dyn: /dev/null");
		return 1;
	}
	end_ms = now_ms() + (argc > 2 ? strtoull(argv[2], NULL, 0) : 1500);
	if (strcmp(argv[1], "thread"))
		return thread_main(argv) ? 0 : 1;
	if (pthread_create(&t, NULL, thread_main, argv) || pthread_join(t, NULL)) {
		perror("wl_dyn");
		return 1;
	}
	return 0;
}
