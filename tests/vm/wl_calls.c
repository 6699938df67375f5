// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl_calls MODE [MS]: two known call paths, taken in turn for MS
 * milliseconds (default 1500):
 *
 *	main -> alpha -> beta -> gamma_ -> leaf
 *	main -> delta -> epsilon -> leaf
 *
 * MODE user:   leaf is leaf_user, a CPU-bound loop (user-mode samples).
 * MODE kernel: leaf is leaf_kernel, a read() of 256 KiB from /dev/zero
 *		made from leaf_kernel itself (kernel-mode samples whose user
 *		IP at kernel entry is in leaf_kernel).
 *
 * Built 64-bit (wl_calls) and 32-bit (wl_calls32), and 64-bit without
 * frame pointers but with unwind tables (wl_nofp): there a frame-pointer
 * walk stops at once, and only a DWARF unwind finds main.
 */
#include <fcntl.h>
#include <unistd.h>

#include "wl_common.h"

#define KBUF	(256 << 10)

static volatile unsigned long sink;
static int zero_fd;
static char *kbuf;
static void (*leaf)(void);

NOINLINE void leaf_user(void)
{
	unsigned long i;

	WL_LEAF_FRAME();

	for (i = 0; i < 20000; i++)
		sink += i;
}

NOINLINE void leaf_kernel(void)
{
	WL_LEAF_FRAME();
	sink += wl_sys3(SYS_read, zero_fd, (long)kbuf, KBUF);
}

NOINLINE void gamma_(void)
{
	leaf();
	sink++;
}

NOINLINE void beta(void)
{
	gamma_();
	sink++;
}

NOINLINE void alpha(void)
{
	beta();
	sink++;
}

NOINLINE void epsilon(void)
{
	leaf();
	sink++;
}

NOINLINE void delta(void)
{
	epsilon();
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long long end;

	if (argc < 2 || (strcmp(argv[1], "user") && strcmp(argv[1], "kernel"))) {
		fprintf(stderr, "usage: wl_calls user|kernel [MS]\n");
		return 2;
	}
	leaf = strcmp(argv[1], "user") ? leaf_kernel : leaf_user;
	zero_fd = open("/dev/zero", O_RDONLY);
	kbuf = malloc(KBUF);
	if (zero_fd < 0 || !kbuf) {
		perror("wl_calls");
		return 1;
	}
	memset(kbuf, 1, KBUF);
	end = wl_now_ms() + wl_arg(argc, argv, 2, 1500);
	while (wl_now_ms() < end) {
		alpha();
		delta();
	}
	return 0;
}
