/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared bits of the test workloads (wl_*.c).  They are built with frame
 * pointers everywhere, no inlining and no sibling calls, static and
 * non-PIE, so that every call path is a known chain of return addresses
 * at addresses the test can read from the binary's symbol table.
 *
 * System calls that the tests want to catch in kernel mode are made with
 * inline assembly in the calling function itself, so the user IP at
 * kernel entry lies in that function and its frame is the first one the
 * frame-pointer walk sees (a libc wrapper has no frame of its own).
 */
#ifndef WL_COMMON_H
#define WL_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>

#ifdef __clang__
/* clang clones no function (arm64's workloads are built by clang) */
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

/*
 * gcc sets up no frame at all in a leaf function that needs no stack,
 * -mno-omit-leaf-frame-pointer notwithstanding; a volatile local on the
 * stack makes it push %rbp/%ebp (a frame record on arm64) like every
 * other function.
 */
#define WL_LEAF_FRAME()	volatile long wl_frame_ = 0; (void)wl_frame_

static inline __attribute__((always_inline)) long
wl_sys3(long nr, long a, long b, long c)
{
	long ret;

#if defined(__x86_64__)
	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a), "S"(b), "d"(c)
		     : "rcx", "r11", "memory");
#elif defined(__i386__)
	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "a"(nr), "b"(a), "c"(b), "d"(c)
		     : "memory");
#elif defined(__aarch64__)
	register long x8 asm("x8") = nr;
	register long x0 asm("x0") = a;
	register long x1 asm("x1") = b;
	register long x2 asm("x2") = c;

	asm volatile("svc #0"
		     : "+r"(x0)
		     : "r"(x8), "r"(x1), "r"(x2)
		     : "memory");
	ret = x0;
#elif defined(__arm__)
	/* EABI: the number in r7, which -mapcs-frame leaves free in A32 */
	register long r7 asm("r7") = nr;
	register long r0 asm("r0") = a;
	register long r1 asm("r1") = b;
	register long r2 asm("r2") = c;

	asm volatile("svc #0"
		     : "+r"(r0)
		     : "r"(r7), "r"(r1), "r"(r2)
		     : "memory");
	ret = r0;
#else
#error "wl_sys3: unsupported architecture"
#endif
	return ret;
}

static inline unsigned long long wl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static inline long wl_arg(int argc, char **argv, int i, long def)
{
	return i < argc ? strtol(argv[i], NULL, 0) : def;
}

#endif /* WL_COMMON_H */
