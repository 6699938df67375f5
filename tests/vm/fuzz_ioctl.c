// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_ioctl [-n OPS] [-t THREADS] [-s SEED]: random use of /dev/perf_defer
 * from several threads at once, while perf events sample those threads:
 * opens and closes of the device and of perf events, every ioctl (the
 * real ones and made-up ones) with random sizes, reserved fields and fds,
 * attach and detach of any fd to any session, ring sizes, mmap()s of any
 * offset, length and protection, munmap() and bogus data_tail values while
 * records are being written, poll(), read() and write().  The file table
 * is shared, so a close races every other call on the same fd.
 *
 * It passes when OPS operations ran (default 100000), the module still
 * works afterwards (a fresh session gets records), and it unloads; the
 * harness (scripts/vm) fails the run on any oops or WARN in the kernel log.
 * TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <linux/perf_defer.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "defer_lib.h"

#define NR_DEV		8
#define NR_PERF		8
#define NR_MAPS		8

static _Atomic int dev_fds[NR_DEV];
static _Atomic int perf_fds[NR_PERF];
static atomic_long ops_done;
/* how many calls got through: a fuzzer stuck on EBADF tests nothing */
static atomic_long n_ioctl_ok, n_attach_ok, n_mmap_ok, n_perf_ok, n_dev_ok;
static long ops_target = 100000;
static long page;

struct map {
	void *addr;
	size_t len;
};

/* xorshift64*: each thread its own, from the seed */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static int pick_fd(uint64_t *s)
{
	switch (rnd(s) % 6) {
	case 0:
		return perf_fds[rnd(s) % NR_PERF];
	case 1:
		return dev_fds[rnd(s) % NR_DEV];
	case 2:
		return -1;
	case 3:
		return (int)(rnd(s) % 64);
	case 4:
		return (int)rnd(s);
	default:
		return perf_fds[rnd(s) % NR_PERF];
	}
}

static int open_perf(uint64_t *s)
{
	struct perf_event_attr attr;
	int fd;

	dl_attr_cpu_clock(&attr, 20000 + rnd(s) % 200000);
	attr.disabled = 0;
	attr.enable_on_exec = 0;
	attr.exclude_kernel = rnd(s) % 2;
	attr.inherit = rnd(s) % 2;
	if (rnd(s) % 8 == 0)
		attr.sample_type &= ~(__u64)PERF_SAMPLE_CALLCHAIN;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		n_perf_ok++;
	return fd;
}

static void swap_fd(_Atomic int *slot, int fd)
{
	int old = atomic_exchange(slot, fd);

	if (old >= 0)
		close(old);
}

static void do_ioctl(uint64_t *s, int fd)
{
	static const unsigned long cmds[] = {
		PERF_DEFER_IOC_GET_VERSION, PERF_DEFER_IOC_ATTACH, PERF_DEFER_IOC_DETACH,
		PERF_DEFER_IOC_SET_RING, PERF_DEFER_IOC_GET_STATS, PERF_DEFER_IOC_SET_DUMP,
		PERF_DEFER_IOC_SET_UNWIND,
	};
	const unsigned int ncmds = sizeof(cmds) / sizeof(cmds[0]);
	/*
	 * What a command may write: its struct, at the size the fuzzer says
	 * (up to 8 bytes past it), or a size of our magic's up to 127 bytes
	 */
	uint64_t buf[64];
	unsigned long cmd;
	unsigned int i;
	uint32_t w;

	_Static_assert(sizeof(buf) >= sizeof(struct perf_defer_stats) + 8 && sizeof(buf) >= 128,
		       "fuzz_ioctl: the buffer holds what GET_STATS writes");
	for (i = 0; i < sizeof(buf) / sizeof(buf[0]); i++)
		buf[i] = rnd(s) % 4 ? 0 : rnd(s);
	switch (rnd(s) % 4) {
	case 0:	/* a real command, random contents */
		cmd = cmds[rnd(s) % ncmds];
		break;
	case 1:	/* a real command, a plausible argument */
		cmd = cmds[rnd(s) % ncmds];
		memset(buf, 0, sizeof(buf));
		w = _IOC_SIZE(cmd) + (rnd(s) % 4 ? 0 : (int)(rnd(s) % 17) - 8);
		memcpy(buf, &w, sizeof(w));	/* size */
		if (cmd == PERF_DEFER_IOC_ATTACH || cmd == PERF_DEFER_IOC_DETACH)
			w = pick_fd(s);
		else if (cmd == PERF_DEFER_IOC_SET_RING)
			w = 1u << (rnd(s) % 12);
		else
			w = 0;
		memcpy((char *)buf + 4, &w, sizeof(w));	/* perf_fd, data_pages */
		if (cmd == PERF_DEFER_IOC_SET_UNWIND)	/* methods: mostly valid ones */
			for (i = 8; i < 16; i++)
				((unsigned char *)buf)[i] = rnd(s) % 5;
		break;
	case 2:	/* our magic, any number, direction and size */
		cmd = _IOC(rnd(s) % 4, PERF_DEFER_MAGIC, rnd(s) % 16, rnd(s) % 128);
		break;
	default:	/* anything at all */
		cmd = (unsigned long)rnd(s);
		break;
	}
	/* sometimes a bad pointer instead of the buffer */
	if (!ioctl(fd, cmd, rnd(s) % 16 ? (void *)buf : (void *)(uintptr_t)(rnd(s) % 4096)))
		n_ioctl_ok++;
}

static void do_mmap(uint64_t *s, struct map *maps, int fd)
{
	struct map *m = &maps[rnd(s) % NR_MAPS];
	size_t len = (1 + (rnd(s) % 4 ? PERF_DEFER_RING_DEF_PAGES : rnd(s) % 40)) * page;
	off_t off = (off_t)(rnd(s) % 3 ? 0 : rnd(s) % 8) * (1 + PERF_DEFER_RING_DEF_PAGES) * page;
	int prot = rnd(s) % 4 ? PROT_READ | PROT_WRITE : (int)(rnd(s) % 8);
	void *p;

	if (rnd(s) % 8 == 0)
		off += page * (rnd(s) % 3);
	p = mmap(NULL, len, prot, rnd(s) % 8 ? MAP_SHARED : MAP_PRIVATE, fd, off);
	if (p == MAP_FAILED)
		return;
	n_mmap_ok++;
	if (m->addr)
		munmap(m->addr, m->len);
	m->addr = p;
	m->len = len;
	if ((prot & (PROT_READ | PROT_WRITE)) == (PROT_READ | PROT_WRITE) && len >= 2 * page) {
		struct perf_defer_mmap_page *pg = p;
		uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);

		/* consume, or claim something absurd */
		__atomic_store_n(&pg->data_tail, rnd(s) % 4 ? head : rnd(s), __ATOMIC_RELEASE);
	}
}

static void busy(uint64_t *s)
{
	volatile unsigned long x = 0;
	unsigned long i, n = rnd(s) % 20000;

	for (i = 0; i < n; i++)
		x = x + i;
	if (rnd(s) % 4 == 0)
		getppid();
}

static void *fuzz_thread(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ULL | 1;
	struct map maps[NR_MAPS] = { };
	struct pollfd pfd;
	char b[64];
	int fd, i;

	while (atomic_fetch_add(&ops_done, 1) < ops_target) {
		switch (rnd(&s) % 16) {
		case 0:
			fd = open("/dev/perf_defer", rnd(&s) % 8 ? O_RDWR : O_RDONLY);
			if (fd >= 0)
				n_dev_ok++;
			swap_fd(&dev_fds[rnd(&s) % NR_DEV], fd);
			break;
		case 1:
			swap_fd(&dev_fds[rnd(&s) % NR_DEV], -1);
			break;
		case 2:
			swap_fd(&perf_fds[rnd(&s) % NR_PERF], open_perf(&s));
			break;
		case 3:
			swap_fd(&perf_fds[rnd(&s) % NR_PERF], -1);
			break;
		case 4:
		case 5:
		case 6:
			do_ioctl(&s, rnd(&s) % 8 ? dev_fds[rnd(&s) % NR_DEV] : pick_fd(&s));
			break;
		case 7:
		case 8:
			fd = dev_fds[rnd(&s) % NR_DEV];
			if (!dl_ioc_attach(fd, pick_fd(&s)))
				n_attach_ok++;
			break;
		case 9:
			fd = dev_fds[rnd(&s) % NR_DEV];
			dl_ioc_detach(fd, pick_fd(&s));
			break;
		case 10:
			do_mmap(&s, maps, dev_fds[rnd(&s) % NR_DEV]);
			break;
		case 11:
			i = rnd(&s) % NR_MAPS;
			if (maps[i].addr) {
				munmap(maps[i].addr, maps[i].len);
				maps[i].addr = NULL;
			}
			break;
		case 12:
			pfd.fd = dev_fds[rnd(&s) % NR_DEV];
			pfd.events = POLLIN;
			poll(&pfd, 1, rnd(&s) % 4 ? 0 : 1);
			break;
		case 13:
			fd = dev_fds[rnd(&s) % NR_DEV];
			if (rnd(&s) % 2)
				(void)!read(fd, b, sizeof(b));
			else
				(void)!write(fd, b, rnd(&s) % sizeof(b));
			lseek(fd, (off_t)rnd(&s), SEEK_SET);
			break;
		default:
			busy(&s);
			break;
		}
	}
	for (i = 0; i < NR_MAPS; i++)
		if (maps[i].addr)
			munmap(maps[i].addr, maps[i].len);
	return NULL;
}

/* A fresh session still gets records: attach, make samples, drain. */
static int still_works(void)
{
	struct dl_session sess = { .fd = -1 };
	struct perf_event_attr attr;
	struct dl_data d;
	struct dl_perf p;
	int ret, n = 0, i;

	dl_data_init(&d);
	dl_perf_init(&p);
	if (dl_session_open(&sess, 0, PERF_DEFER_RING_DEF_PAGES) || dl_session_map(&sess))
		goto out;
	dl_attr_cpu_clock(&attr, 100000);
	attr.disabled = 0;
	attr.enable_on_exec = 0;
	attr.inherit = 0;	/* a per-task inherited event cannot be mapped */
	if (dl_perf_open(&p, 0, &attr, 0, -1, 0))
		goto out;
	if (dl_session_attach(&sess, &p, &d))
		goto out;
	for (i = 0; i < 200; i++) {
		volatile unsigned long x = 0;
		unsigned long j;

		for (j = 0; j < 100000; j++)
			x = x + j;
		getppid();
	}
	ret = dl_session_drain(&sess, &d);
	n = ret < 0 ? 0 : (int)d.nr;
out:
	dl_perf_close(&p);
	dl_session_close(&sess);
	dl_data_free(&d);
	return n;
}

int main(int argc, char **argv)
{
	int nthreads = 4, opt, i, n;
	pthread_t tids[16];
	uint64_t seed = 1;

	while ((opt = getopt(argc, argv, "n:t:s:")) != -1) {
		switch (opt) {
		case 'n':
			ops_target = atol(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: fuzz_ioctl [-n OPS] [-t THREADS] [-s SEED]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 16 || ops_target < 1) {
		fprintf(stderr, "fuzz_ioctl: 1..16 threads, at least 1 op\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	for (i = 0; i < NR_DEV; i++)
		dev_fds[i] = -1;
	for (i = 0; i < NR_PERF; i++)
		perf_fds[i] = -1;

	printf("TAP version 13\n1..4\n");
	printf("# %ld operations, %d threads, seed %llu\n", ops_target, nthreads,
	       (unsigned long long)seed);
	fflush(stdout);
	if (dl_module_load(NULL)) {
		printf("Bail out! cannot load the module\n");
		return 1;
	}
	for (i = 0; i < nthreads; i++)
		pthread_create(&tids[i], NULL, fuzz_thread, (void *)(uintptr_t)(seed + i));
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	for (i = 0; i < NR_DEV; i++)
		swap_fd(&dev_fds[i], -1);
	for (i = 0; i < NR_PERF; i++)
		swap_fd(&perf_fds[i], -1);
	printf("# succeeded: %ld device opens, %ld perf events, %ld ioctls, %ld attaches, %ld mmaps\n",
	       (long)n_dev_ok, (long)n_perf_ok, (long)n_ioctl_ok, (long)n_attach_ok,
	       (long)n_mmap_ok);
	printf("%sok 1 %ld random operations, each kind of call succeeding at times\n",
	       n_dev_ok && n_perf_ok && n_ioctl_ok && n_attach_ok && n_mmap_ok ? "" : "not ",
	       (long)atomic_load(&ops_done) - nthreads);

	n = still_works();
	printf("%sok 2 a fresh session still gets records (%d)\n", n > 0 ? "" : "not ", n);
	printf("%sok 3 nothing left pending\n", dl_module_unload_wait(10000) ? "not " : "");
	printf("%sok 4 the module is gone\n", dl_module_loaded() ? "not " : "");
	return n > 0 && !dl_module_loaded() && n_dev_ok && n_perf_ok && n_ioctl_ok &&
	       n_attach_ok && n_mmap_ok ? 0 : 1;
}
