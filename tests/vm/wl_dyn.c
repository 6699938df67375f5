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
 *
 * glibc keeps no frame pointers, so a frame-pointer walk from cmp_slow
 * is lost inside qsort; its .eh_frame (through the object's
 * PT_GNU_EH_FRAME) gets through.
 */
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

NOINLINE void *thread_main(void *arg)
{
	unsigned int *v = malloc(NELEM * sizeof(*v)), seed = 1;

	if (!v)
		return NULL;
	while (now_ms() < end_ms)
		sort_once(v, seed++);
	free(v);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2 || (strcmp(argv[1], "main") && strcmp(argv[1], "thread"))) {
		fprintf(stderr, "usage: wl_dyn main|thread [MS]\n");
		return 2;
	}
	end_ms = now_ms() + (argc > 2 ? strtoull(argv[2], NULL, 0) : 1500);
	if (!strcmp(argv[1], "main"))
		return thread_main(argv) ? 0 : 1;
	if (pthread_create(&t, NULL, thread_main, argv) || pthread_join(t, NULL)) {
		perror("wl_dyn");
		return 1;
	}
	return 0;
}
