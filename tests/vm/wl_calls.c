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
 * MODE vdso:   leaf is leaf_vdso, clock_gettime() in a loop: samples in
 *		the vDSO (or, where the clock has no vDSO path, in the
 *		kernel with the user IP in the vDSO).
 * MODE scribble: leaf is leaf_scribble, which writes random bytes over
 *		the program's own unwind tables (from .eh_frame_hdr to the end
 *		of its segment: .eh_frame, .sframe) and now and then puts them
 *		back, then does what leaf_user and leaf_kernel do: a table
 *		walk of this task meets tables broken in every way.  Not in
 *		the first SCRIBBLE_AFTER_MS: a row cache keeps each row as it
 *		was at its first read, and the callers' rows, read by the
 *		first samples, are then whole, so that some chains reach main
 *		(walk_test tables_scribbled_while_sampled); a first read
 *		after the scribbling began could keep a broken one for all.
 *
 * Built 64-bit (wl_calls) and 32-bit (wl_calls32), and 64-bit without
 * frame pointers but with unwind tables (wl_nofp): there a frame-pointer
 * walk stops at once, and only a DWARF unwind finds main.
 */
#define _GNU_SOURCE	/* dl_iterate_phdr() */
#include <fcntl.h>
#include <link.h>
#include <unistd.h>
#include <sys/mman.h>

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

NOINLINE void leaf_vdso(void)
{
	struct timespec ts;
	int i;

	WL_LEAF_FRAME();
	for (i = 0; i < 200; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

/* the tables to scribble on, and a copy to put back */
static unsigned char *tab, *tab_copy;
static size_t tab_len;
static unsigned long long rnd = 88172645463325252ull;
/* set by main() once SCRIBBLE_AFTER_MS have passed */
#define SCRIBBLE_AFTER_MS	200
static int scribbling;

static unsigned long long xorshift(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

NOINLINE void leaf_scribble(void)
{
	unsigned long long i, r = xorshift();

	WL_LEAF_FRAME();
	if (scribbling) {
		if (r % 8 == 0)
			memcpy(tab, tab_copy, tab_len);
		for (i = 0; i < 1 + r % 64; i++)
			tab[xorshift() % tab_len] = xorshift();
	}
	for (i = 0; i < 20000; i++)
		sink += i;
	sink += wl_sys3(SYS_read, zero_fd, (long)kbuf, 4096);
}

/* the executable's PT_GNU_EH_FRAME to the end of the PT_LOAD holding it */
static int find_tables(struct dl_phdr_info *info, size_t size, void *data)
{
	const ElfW(Phdr) *eh = NULL, *p;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[i];
	for (i = 0; eh && i < info->dlpi_phnum; i++) {
		p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && p->p_vaddr <= eh->p_vaddr &&
		    eh->p_vaddr < p->p_vaddr + p->p_filesz) {
			tab = (unsigned char *)(info->dlpi_addr + eh->p_vaddr);
			tab_len = p->p_vaddr + p->p_filesz - eh->p_vaddr;
		}
	}
	return 1;	/* the first object is the executable */
}

/* make the tables writable and keep a copy; 0 or -1 */
static int tables_writable(void)
{
	unsigned long pg = sysconf(_SC_PAGESIZE), start, end;

	dl_iterate_phdr(find_tables, NULL);
	if (!tab || !tab_len)
		return -1;
	start = (unsigned long)tab & ~(pg - 1);
	end = ((unsigned long)tab + tab_len + pg - 1) & ~(pg - 1);
	tab_copy = malloc(tab_len);
	if (!tab_copy || mprotect((void *)start, end - start, PROT_READ | PROT_WRITE))
		return -1;
	memcpy(tab_copy, tab, tab_len);
	return 0;
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
	unsigned long long start, now, end;

	if (argc < 2 || (strcmp(argv[1], "user") && strcmp(argv[1], "kernel") &&
			 strcmp(argv[1], "vdso") && strcmp(argv[1], "scribble"))) {
		fprintf(stderr, "usage: wl_calls user|kernel|vdso|scribble [MS]\n");
		return 2;
	}
	leaf = !strcmp(argv[1], "user") ? leaf_user :
	       !strcmp(argv[1], "kernel") ? leaf_kernel :
	       !strcmp(argv[1], "vdso") ? leaf_vdso : leaf_scribble;
	if (leaf == leaf_scribble && tables_writable()) {
		fprintf(stderr, "wl_calls: cannot make the unwind tables writable\n");
		return 1;
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	kbuf = malloc(KBUF);
	if (zero_fd < 0 || !kbuf) {
		perror("wl_calls");
		return 1;
	}
	memset(kbuf, 1, KBUF);
	start = wl_now_ms();
	end = start + wl_arg(argc, argv, 2, 1500);
	while ((now = wl_now_ms()) < end) {
		scribbling = now >= start + SCRIBBLE_AFTER_MS;
		alpha();
		delta();
	}
	return 0;
}
