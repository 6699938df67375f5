// SPDX-License-Identifier: GPL-2.0-only
/* Events: their names, and opening them.  See evsel.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "evsel.h"

/*
 * A disabled cpu-clock sampling event on this task, taking a sample every
 * @period ns of its user time (exclude_kernel keeps it allowed under
 * perf_event_paranoid 2): its fd, or -errno.
 */
static int probe__open(bool defer_callchain, __u64 period)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_CPU_CLOCK,
		.sample_period	= period,
		.sample_type	= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.disabled	= 1,
		.exclude_kernel	= 1,
	};
	int fd;

	attr__set_defer(&attr, defer_callchain, false);
	fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int evsel__probe(bool defer_callchain)
{
	int fd = probe__open(defer_callchain, 100000);

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

/*
 * The first sample in @ring (IP|TID|CALLCHAIN): 0 if its chain has the
 * deferred marker, EOPNOTSUPP if it has user frames inline, -1 if no
 * sample is there (yet).
 */
static int probe__first_sample(const struct perf_event_mmap_page *meta, const __u64 *data,
			       size_t size)
{
	__u64 head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), off = 0, nr, i;

	while (off + sizeof(struct perf_event_header) <= head && off < size) {
		const struct perf_event_header *h = (const void *)((const char *)data + off);
		const __u64 *w = (const void *)h;

		if (!h->size || off + h->size > size)
			break;
		if (h->type == PERF_RECORD_SAMPLE && h->size >= 4 * sizeof(__u64)) {
			/* header, ip, pid/tid, nr, ips[nr] */
			nr = w[3];
			for (i = 0; i < nr && 4 + i < h->size / sizeof(__u64); i++) {
				if (w[4 + i] == PERF_DEFER_CONTEXT_USER_DEFERRED)
					return 0;
			}
			return EOPNOTSUPP;
		}
		off += h->size;
	}
	return -1;
}

int evsel__probe_native(void)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned long spin = 0;
	struct timespec t0, t;
	int fd, ret = -1;
	void *ring;

	/* 50 kHz */
	fd = probe__open(true, 20000);
	if (fd < 0)
		return -fd;
	ring = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		close(fd);
		return 0;	/* no ring to look into: trust the bit */
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	/* spin up to 200 ms, looking every 10000 iterations */
	do {
		for (int i = 0; i < 10000; i++)
			spin++;
		ret = probe__first_sample(ring, (const __u64 *)((char *)ring + page), page);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (ret < 0 && (t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 200000000L);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap(ring, 2 * page);
	close(fd);
	return ret < 0 ? 0 : ret;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend",
	"stalled-cycles-backend", "ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

const char *evsel__name(const struct evsel *a, char *buf, size_t size)
{
	__u64 config = a->attr.config;

	if (a->name)
		return a->name;
	if (a->attr.type == PERF_TYPE_HARDWARE && config < sizeof(hw_names) / sizeof(hw_names[0]))
		return hw_names[config];
	if (a->attr.type == PERF_TYPE_SOFTWARE && config < sizeof(sw_names) / sizeof(sw_names[0]))
		return sw_names[config];
	snprintf(buf, size, "%u:%#llx", a->attr.type, (unsigned long long)config);
	return buf;
}

