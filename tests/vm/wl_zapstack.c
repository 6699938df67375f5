// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl_zapstack [-t MS] [-d DEPTH] [-c KIB]
 *
 * A thread whose stack is a MAP_SHARED memfd mapping (given with
 * pthread_attr_setstack) recurses DEPTH levels (default 40) through rec(),
 * each frame about a page, so its stack spans many pages.  At the bottom
 * it repeats, for MS milliseconds (default 1500):
 *
 *	zap_outer():	madvise(MADV_DONTNEED) on every stack page above the
 *			current one: the page-table entries of all the older
 *			frames go, their data stays in the memfd;
 *	long_read():	read() of KIB KiB (default 8192) from /dev/zero.
 *
 * A frame-pointer walk with page faults disabled (perf's in-NMI walk)
 * stops at the first zapped page; a walk that may fault (the deferred
 * unwind, in task context) brings the pages back and reaches zap_thread.
 * Both system calls are made from their functions with inline assembly.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>

#include "wl_common.h"

#define STACK_SIZE	(2 << 20)
#define FRAME		4000

static volatile unsigned long sink;
static int zero_fd;
static long chunk = 8192L << 10;
static int depth = 40;
static long run_ms = 1500;
static char *kbuf;
static uintptr_t stack_hi;
static long page;

NOINLINE void zap_outer(uintptr_t start)
{
	WL_LEAF_FRAME();
	sink += wl_sys3(SYS_madvise, start, stack_hi - start, MADV_DONTNEED);
}

NOINLINE void long_read(void)
{
	WL_LEAF_FRAME();
	sink += wl_sys3(SYS_read, zero_fd, (long)kbuf, chunk);
}

NOINLINE void bottom(void)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	/* keep the page of this frame and the one above it */
	uintptr_t start = (fp & ~(page - 1)) + 2 * page;
	unsigned long long end = wl_now_ms() + run_ms;

	while (wl_now_ms() < end) {
		zap_outer(start);
		long_read();
	}
}

NOINLINE void rec(int n)
{
	volatile char pad[FRAME];

	pad[0] = n;
	pad[FRAME - 1] = n;
	/* the whole array escapes: clang would keep only the two bytes used */
	asm volatile("" : : "r"(pad) : "memory");
	if (n > 0)
		rec(n - 1);
	else
		bottom();
	sink += pad[0] + pad[FRAME - 1];
}

NOINLINE void *zap_thread(void *arg)
{
	rec(depth);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	void *stack;
	int opt, mfd;

	while ((opt = getopt(argc, argv, "t:d:c:")) != -1) {
		switch (opt) {
		case 't':
			run_ms = strtol(optarg, NULL, 0);
			break;
		case 'd':
			depth = strtol(optarg, NULL, 0);
			break;
		case 'c':
			chunk = strtol(optarg, NULL, 0) << 10;
			break;
		default:
			fprintf(stderr, "usage: wl_zapstack [-t MS] [-d DEPTH] [-c KIB]\n");
			return 2;
		}
	}
	if (depth < 1 || (depth + 8L) * (FRAME + 256) > STACK_SIZE / 2 || chunk <= 0)
		return 2;
	page = sysconf(_SC_PAGESIZE);
	zero_fd = open("/dev/zero", O_RDONLY);
	kbuf = malloc(chunk);
	mfd = memfd_create("wl_zapstack", MFD_CLOEXEC);
	if (zero_fd < 0 || !kbuf || mfd < 0 || ftruncate(mfd, STACK_SIZE)) {
		perror("wl_zapstack");
		return 1;
	}
	memset(kbuf, 1, chunk);
	stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (stack == MAP_FAILED) {
		perror("wl_zapstack: mmap");
		return 1;
	}
	stack_hi = (uintptr_t)stack + STACK_SIZE;
	if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, stack, STACK_SIZE) ||
	    pthread_create(&t, &attr, zap_thread, NULL)) {
		fprintf(stderr, "wl_zapstack: cannot start the thread\n");
		return 1;
	}
	pthread_join(t, NULL);
	return 0;
}
