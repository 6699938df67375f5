// SPDX-License-Identifier: GPL-2.0-only
/* A session of the perf_defer module, for record.  See session.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "session.h"
#include "util.h"

int session__open(struct session *s, unsigned int data_pages, __u32 dump_size,
		  const __u8 *unwind)
{
	struct perf_defer_version v = { .size = sizeof(v) };
	struct perf_defer_ring ring = { .size = sizeof(ring) };
	int fd;

	fd = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_DEFER_IOC_GET_VERSION, &v) || v.major != PERF_DEFER_ABI_MAJOR) {
		pr_err("module ABI %u.%u is not supported by this recorder (needs major %d); rebuild/reinstall the module",
		       v.major, v.minor, PERF_DEFER_ABI_MAJOR);
		close(fd);
		return -EPROTO;
	}
	ring.data_pages = data_pages > PERF_DEFER_RING_MAX_PAGES ?
			  PERF_DEFER_RING_MAX_PAGES : data_pages;
	/*
	 * Dumps are big: room for 256 of them per CPU between two reads
	 * (every 100 ms at least), within the module's limit.
	 */
	while (dump_size && ring.data_pages < PERF_DEFER_RING_MAX_PAGES &&
	       (size_t)ring.data_pages * getpagesize() < 256 * (dump_size + 512))
		ring.data_pages *= 2;
	/*
	 * Woken when a ring is a quarter full, as perf's own rings wake us
	 * (ABI 1.5): at high rates the 100 ms between two reads would
	 * overflow them.  Never for every record: that wake-up costs the
	 * sampled task, in its task_work.
	 */
	if (v.minor >= 5)
		ring.wakeup_bytes = ring.data_pages * getpagesize() / 4;
	if (ioctl(fd, PERF_DEFER_IOC_SET_RING, &ring)) {
		pr_err("PERF_DEFER_IOC_SET_RING: %s", strerror(errno));
		close(fd);
		return -EPROTO;
	}
	if (dump_size) {
		struct perf_defer_dump d = {
			.size = sizeof(d), .flags = PERF_DEFER_DUMP_REGS_STACK,
			.stack_size = dump_size,
		};

		if (v.minor < 1) {
			pr_warn("module ABI %u.%u has no dumps for dwarf,defer (needs 1.1); recording with --call-graph dwarf",
			       v.major, v.minor);
			close(fd);
			return -ENOSYS;
		}
		if (ioctl(fd, PERF_DEFER_IOC_SET_DUMP, &d)) {
			pr_err("PERF_DEFER_IOC_SET_DUMP of %u bytes: %s%s", d.stack_size,
			       strerror(errno), errno == EINVAL ?
			       " (a dump must fit in the ring: raise --mmap-pages)" : "");
			close(fd);
			return -EPROTO;
		}
	}
	if (unwind[0]) {
		struct perf_defer_unwind u = { .size = sizeof(u) };

		memcpy(u.methods, unwind, sizeof(u.methods));
		if (v.minor < 3) {
			pr_err("module ABI %u.%u has no --user-unwind (needs 1.3); rebuild/reinstall the module",
			       v.major, v.minor);
			close(fd);
			return -EPROTO;
		}
		if (ioctl(fd, PERF_DEFER_IOC_SET_UNWIND, &u)) {
			pr_err("PERF_DEFER_IOC_SET_UNWIND: %s", strerror(errno));
			close(fd);
			return -EPROTO;
		}
	}
	s->ring_len = (size_t)(1 + ring.data_pages) * getpagesize();
	s->wakeup = ring.wakeup_bytes != 0;
	s->fd = fd;
	return 0;
}

/* after EPERM from the call that makes the module's rings */
#define SESSION_MEMLOCK_HINT						\
	" (its rings count as locked memory, as perf's own do: raise 'ulimit -l',"	\
	" use a smaller --mmap-pages, or as root raise"			\
	" /sys/module/perf_defer/parameters/mlock_kb)"

int session__attach(struct session *s, int perf_fd)
{
	struct perf_defer_attach a = { .size = sizeof(a), .perf_fd = perf_fd };

	if (ioctl(s->fd, PERF_DEFER_IOC_ATTACH, &a)) {
		int err = errno;

		pr_err("cannot attach event fd %d to %s: %s%s", a.perf_fd,
		       PERF_DEFER_DEVICE_PATH, strerror(err), err == EPERM ? SESSION_MEMLOCK_HINT : "");
		return -1;
	}
	return 0;
}

int session__map_rings(struct session *s)
{
	int ncpu = sysconf(_SC_NPROCESSORS_CONF), cpu;

	if (ncpu > SESSION_MAX_CPUS)
		ncpu = SESSION_MAX_CPUS;
	for (cpu = 0; cpu < ncpu; cpu++) {
		void *p = mmap(NULL, s->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       s->fd, (off_t)cpu * s->ring_len);

		if (p == MAP_FAILED) {
			int err = errno;

			pr_err("cannot map the module ring of cpu %d: %s%s", cpu, strerror(err),
			       err == EPERM ? SESSION_MEMLOCK_HINT : "");
			return -1;
		}
		s->rings[s->nr_rings++] = p;
	}
	return 0;
}

void session__close(struct session *s)
{
	for (unsigned int i = 0; i < s->nr_rings; i++)
		munmap(s->rings[i], s->ring_len);
	s->nr_rings = 0;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* --user-unwind LIST: "sframe,eh_frame,fp", each method once */
int session__parse_unwind(const char *arg, __u8 unwind[8])
{
	static const char *const names[] = {
		[PERF_DEFER_UNWIND_FP] = "fp",
		[PERF_DEFER_UNWIND_SFRAME] = "sframe",
		[PERF_DEFER_UNWIND_EH_FRAME] = "eh_frame",
	};
	char *list = strdup(arg), *p = list, *name;
	unsigned int n = 0, m, seen = 0;

	if (!list)
		return -1;
	memset(unwind, 0, 8);
	while ((name = strsep(&p, ",")) != NULL) {
		for (m = 1; m < sizeof(names) / sizeof(names[0]); m++)
			if (!strcmp(name, names[m]))
				break;
		if (m == sizeof(names) / sizeof(names[0]) || (seen & (1U << m))) {
			pr_err("--user-unwind: '%s' is not a list of sframe, eh_frame and fp, each at most once",
			       arg);
			free(list);
			return -1;
		}
		seen |= 1U << m;
		unwind[n++] = m;
	}
	free(list);
	return 0;
}
