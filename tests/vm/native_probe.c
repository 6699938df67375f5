// SPDX-License-Identifier: GPL-2.0-only
/*
 * native_probe - does this kernel defer user callchains natively?
 *
 * Opens a sampling event on itself with defer_callchain and defer_output set
 * (Linux >= 6.19 accepts the bits), runs a loop of system calls, and counts what the ring
 * holds: samples, samples whose user part is the PERF_CONTEXT_USER_DEFERRED
 * marker, samples whose user frames are inline, and CALLCHAIN_DEFERRED
 * records.  A kernel that takes the bit but cannot unwind in task context
 * (no CONFIG_UNWIND_USER) falls back to the in-interrupt walk: inline
 * frames and no deferred record.
 *
 *	native_probe [cpu-clock|cycles] [--no-defer]
 *
 * (--no-defer: the same without the bit, the control of a refusal)
 * prints one line, "EVENT open=ok|ERRNO samples=N deferred_marks=N
 * inline_user=N deferred_records=N", and exits 0 unless the event could
 * not be used at all.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <linux/perf_defer.h>

#define DATA_PAGES 16

static int open_event(const char *name, int defer)
{
	struct perf_event_attr attr;
	uint64_t word;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	if (!strcmp(name, "cycles")) {
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.sample_period = 200000;
	} else {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		attr.sample_period = 100000;	/* ns: 10 kHz */
	}
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	attr.disabled = 1;
	memcpy(&word, (char *)&attr + PERF_DEFER_ATTR_FLAGS_OFFSET, sizeof(word));
	/* defer_output: this event also carries the CALLCHAIN_DEFERRED records */
	if (defer)
		word |= 1ULL << PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN |
			1ULL << PERF_DEFER_ATTR_BIT_DEFER_OUTPUT;
	memcpy((char *)&attr + PERF_DEFER_ATTR_FLAGS_OFFSET, &word, sizeof(word));
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "cpu-clock";
	unsigned long samples = 0, marks = 0, inl = 0, records = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *meta;
	uint64_t head, tail;
	unsigned char *data;
	double end;
	void *ring;
	int fd;

	fd = open_event(name, !(argc > 2 && !strcmp(argv[2], "--no-defer")));
	if (fd < 0) {
		printf("%s open=%s samples=0 deferred_marks=0 inline_user=0 deferred_records=0\n",
		       name, errno == EINVAL ? "EINVAL" : strerror(errno));
		return 0;
	}
	ring = mmap(NULL, (1 + DATA_PAGES) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		perror("native_probe: mmap");
		return 1;
	}
	meta = ring;
	data = (unsigned char *)ring + page;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (end = now() + 0.5; now() < end;)
		syscall(SYS_getppid);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	for (tail = meta->data_tail; tail < head;) {
		uint64_t off = tail % (DATA_PAGES * page), rec[512], nr, i;
		struct perf_event_header h;
		size_t n, first;

		memcpy(&h, data + off, sizeof(h));	/* headers never wrap: 8-aligned */
		n = h.size < sizeof(rec) ? h.size : sizeof(rec);
		first = DATA_PAGES * page - off < n ? DATA_PAGES * page - off : n;
		memcpy(rec, data + off, first);
		memcpy((char *)rec + first, data, n - first);
		if (h.type == PERF_RECORD_SAMPLE) {
			int user = 0;

			samples++;
			/* header, ip, pid/tid, nr, ips[nr] */
			nr = rec[3];
			for (i = 0; i < nr && 4 + i < n / 8; i++) {
				if (rec[4 + i] == PERF_DEFER_CONTEXT_USER_DEFERRED)
					marks++;
				else if (rec[4 + i] == PERF_CONTEXT_USER)
					user = 1;
				else if (user && rec[4 + i] < PERF_CONTEXT_MAX) {
					inl++;
					break;
				}
			}
		} else if (h.type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED) {
			records++;
		}
		if (!h.size)
			break;
		tail += h.size;
	}
	printf("%s open=ok samples=%lu deferred_marks=%lu inline_user=%lu deferred_records=%lu\n",
	       name, samples, marks, inl, records);
	return 0;
}
