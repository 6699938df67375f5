// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NMI path, for real: tests/kmod/pd_test_nmi.ko sends this CPU
 * self-NMIs whose handler calls perf_callchain() for our attached event,
 * as a PMU overflow would, while we are inside one write() syscall.
 * All NMIs of that kernel entry must get one cookie, and one
 * CALLCHAIN_DEFERRED record with that cookie must reach our ring when the
 * write returns to user space.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "kselftest_harness.h"

#define NMI_KO		"/lib/perf-defer/pd_test_nmi.ko"
#define TRIGGER		"/sys/kernel/debug/pd_test_nmi/trigger"
#define ROUNDS		5
#define NMIS		20

static int load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret == -EEXIST ? 0 : ret;
}

static void unload(const char *name)
{
	syscall(SYS_delete_module, name, O_NONBLOCK);
}

/*
 * On a KASAN kernel the module never defers a sample taken in NMI
 * (task_work_add() records an aux stack there, which allocates): the
 * sample keeps its in-NMI user chain and counts as pool_empty.
 */
static bool kasan_kernel(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %255s", sym) == 1 && !strcmp(sym, "kasan_report");
	fclose(f);
	return found;
}

struct rec {
	uint64_t cookie, nr, ip0;
	uint32_t pid, tid;
};

FIXTURE(nmi) {
	int dev, ev, ncpu;
	long page;
	struct perf_defer_mmap_page *ring[256];
	struct rec recs[64];
	int nrecs;
	bool kasan;
};

FIXTURE_SETUP(nmi)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000ull,	/* the NMIs are the samples */
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ID,
		.sample_id_all = 1,
	};
	struct perf_defer_attach at = { .size = sizeof(at) };
	const char *ko = getenv("PERF_DEFER_KO");
	int cpu;

	self->dev = self->ev = -1;
	if (geteuid())
		SKIP(return, "needs root");
	if (!ko || access(ko, R_OK) || access(NMI_KO, R_OK))
		SKIP(return, "needs $PERF_DEFER_KO and " NMI_KO);
	ASSERT_EQ(0, load(ko));
	ASSERT_EQ(0, load(NMI_KO));
	self->kasan = kasan_kernel();

	self->page = sysconf(_SC_PAGESIZE);
	self->ncpu = sysconf(_SC_NPROCESSORS_CONF);
	ASSERT_GE(256, self->ncpu);
	self->dev = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	self->ev = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, self->ev) TH_LOG("perf_event_open: %s", strerror(errno));
	at.perf_fd = self->ev;
	ASSERT_EQ(0, ioctl(self->dev, PERF_DEFER_IOC_ATTACH, &at));
	for (cpu = 0; cpu < self->ncpu; cpu++) {
		size_t len = (1 + PERF_DEFER_RING_DEF_PAGES) * self->page;

		self->ring[cpu] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				       self->dev, (off_t)cpu * len);
		ASSERT_NE(MAP_FAILED, self->ring[cpu]);
	}
}

FIXTURE_TEARDOWN(nmi)
{
	if (self->ev >= 0)
		close(self->ev);
	if (self->dev >= 0) {
		int cpu;

		for (cpu = 0; cpu < self->ncpu; cpu++)
			munmap(self->ring[cpu], (1 + PERF_DEFER_RING_DEF_PAGES) * self->page);
		close(self->dev);
	}
	unload("pd_test_nmi");
	unload("perf_defer");
}

/* Collect the CALLCHAIN_DEFERRED records of all CPUs' rings. */
static void drain(FIXTURE_DATA(nmi) *self)
{
	int cpu;

	for (cpu = 0; cpu < self->ncpu; cpu++) {
		struct perf_defer_mmap_page *pg = self->ring[cpu];
		uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = pg->data_tail;
		char *data = (char *)pg + pg->data_offset;

		while (tail < head) {
			struct perf_event_header *h = (void *)(data + (tail & (pg->data_size - 1)));
			uint64_t *w = (uint64_t *)(h + 1);

			/* records stay whole here: the ring is far from wrapping */
			if (h->type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED &&
			    self->nrecs < 64) {
				struct rec *r = &self->recs[self->nrecs++];

				r->cookie = w[0];
				r->nr = w[1];
				r->ip0 = w[1] ? w[2] : 0;
				r->pid = w[2 + w[1]];
				r->tid = w[2 + w[1]] >> 32;
			}
			tail += h->size;
		}
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	}
}

static void stats(int dev, struct perf_defer_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	ioctl(dev, PERF_DEFER_IOC_GET_STATS, st);
}

/*
 * Write cmd to the test module's trigger, wait us microseconds, and read
 * its answer into out (size bytes, NUL-ended).
 */
static void trigger(struct __test_metadata *_metadata, const char *cmd, unsigned int us,
		    char *out, size_t size)
{
	int fd, n = strlen(cmd);

	fd = open(TRIGGER, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(n, write(fd, cmd, n)) TH_LOG("trigger: %s", strerror(errno));
	if (us)
		usleep(us);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, out, size - 1);
	close(fd);
	ASSERT_LT(0, n);
	out[n] = 0;
}

TEST_F(nmi, one_cookie_and_record_per_entry)
{
	struct perf_defer_stats before, after;
	uint64_t cookies[ROUNDS];
	char cmd[32], out[4096];
	int round, i, n;

	stats(self->dev, &before);
	for (round = 0; round < ROUNDS; round++) {
		unsigned int nmis = 0, deferred = 0, off = 0;
		uint64_t c;

		snprintf(cmd, sizeof(cmd), "%d %d", self->ev, NMIS);
		/* one kernel entry: every NMI in it shares the request */
		trigger(_metadata, cmd, 0, out, sizeof(out));
		ASSERT_EQ(2, sscanf(out, "nmis %u deferred %u missed %*u cookies%n", &nmis,
				    &deferred, &n))
			TH_LOG("%s", out);
		EXPECT_EQ(NMIS, nmis);
		if (self->kasan) {
			EXPECT_EQ(0, deferred) TH_LOG("KASAN kernel: %s", out);
			continue;
		}
		ASSERT_EQ(NMIS, deferred) TH_LOG("%s", out);
		cookies[round] = 0;
		for (i = 0, off = n; i < NMIS; i++) {
			ASSERT_EQ(1, sscanf(out + off, " %" SCNx64 "%n", &c, &n));
			off += n;
			if (!i)
				cookies[round] = c;
			EXPECT_EQ(cookies[round], c) TH_LOG("NMI %d of round %d", i, round);
		}
		EXPECT_NE(0, cookies[round]);
		for (i = 0; i < round; i++)
			EXPECT_NE(cookies[i], cookies[round]);
	}

	drain(self);
	stats(self->dev, &after);
	if (self->kasan) {
		TH_LOG("KASAN kernel: every NMI sample keeps its in-NMI chain (pool_empty)");
		EXPECT_EQ(0, self->nrecs);
		EXPECT_EQ(ROUNDS * NMIS, after.pool_empty - before.pool_empty);
		EXPECT_EQ(0, after.requests - before.requests);
		EXPECT_EQ(0, after.pending);
		return;
	}
	ASSERT_EQ(ROUNDS, self->nrecs);
	for (i = 0; i < ROUNDS; i++) {
		struct rec *r = NULL;

		/* rings are per CPU: find the round's record by its cookie */
		for (n = 0; n < self->nrecs; n++)
			if (self->recs[n].cookie == cookies[i])
				r = &self->recs[n];
		ASSERT_NE(NULL, r) TH_LOG("no record for cookie %" PRIx64, cookies[i]);
		EXPECT_EQ(getpid(), r->pid);
		EXPECT_EQ(gettid(), r->tid);
		/* at least the write() wrapper and its caller */
		EXPECT_LE(2, r->nr);
		EXPECT_GT(0x800000000000ull, r->ip0);
	}
	EXPECT_EQ(ROUNDS * NMIS, after.requests - before.requests);
	EXPECT_EQ(ROUNDS * (NMIS - 1), after.dedup - before.dedup);
	EXPECT_EQ(ROUNDS, after.unwinds - before.unwinds);
	EXPECT_EQ(ROUNDS, after.records - before.records);
	EXPECT_EQ(0, after.pending);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * NMIs sent from CPU 0 to a child that spins through 256 nops on CPU 1,
 * each calling perf_callchain() @samples times, in rounds until 10 of
 * them found the child in user mode.  Each such NMI's record must start
 * at the IP it interrupted: the unwind runs on the very next return to
 * user (the module raises a self-IPI).  Its @samples samples are of one
 * kernel entry, the NMI: one cookie.
 */
static void user_mode_nmis(struct __test_metadata *_metadata, FIXTURE_DATA(nmi) *self,
			   unsigned int samples)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000ull,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ID,
		.sample_id_all = 1,
	};
	struct perf_defer_attach at = { .size = sizeof(at) };
	unsigned int user = 0, same = 0, kernel = 0, split = 0, round;
	int ev;
	pid_t child;

	if (self->ncpu < 2)
		SKIP(return, "needs 2 CPUs");
	if (self->kasan)
		SKIP(return, "KASAN kernel: NMI samples are not deferred "
		     "(one_cookie_and_record_per_entry checks that)");
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		/* a failed assertion must not leave it spinning */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pin(1);
		for (;;)
			__asm__ volatile(".rept 256\n\tnop\n.endr");
	}
	pin(0);
	ev = syscall(SYS_perf_event_open, &attr, child, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, ev);
	at.perf_fd = ev;
	ASSERT_EQ(0, ioctl(self->dev, PERF_DEFER_IOC_ATTACH, &at));
	usleep(100000);

	for (round = 0; round < 10 && user < 10; round++) {
		unsigned int deferred = 0, missed = 0, nmis = 0, off, i, j;
		uint64_t cookies[64], ips[64];
		char cmd[64], out[8192], *p;
		int n;

		snprintf(cmd, sizeof(cmd), "%d %d 1 %d %u", ev, NMIS, child, samples);
		trigger(_metadata, cmd, 50000, out, sizeof(out));
		ASSERT_EQ(3, sscanf(out, "nmis %u deferred %u missed %u cookies%n", &nmis,
				    &deferred, &missed, &n)) TH_LOG("%s", out);
		if (deferred > 64)
			deferred = 64;
		for (i = 0, off = n; i < deferred; i++) {
			ASSERT_EQ(1, sscanf(out + off, " %" SCNx64 "%n", &cookies[i], &n));
			off += n;
		}
		p = strstr(out, "ips");
		ASSERT_NE(NULL, p);
		for (i = 0, off = 3; i < deferred; i++) {
			ASSERT_EQ(1, sscanf(p + off, " %" SCNx64 "%n", &ips[i], &n));
			off += n;
		}
		self->nrecs = 0;
		drain(self);
		for (i = 0; i < deferred; i++) {
			for (j = 0; j < (unsigned int)self->nrecs; j++)
				if (self->recs[j].cookie == cookies[i])
					break;
			EXPECT_GT(self->nrecs, (int)j)
				TH_LOG("no record for cookie %" PRIx64, cookies[i]);
			/* an NMI that found the child in the kernel: not checked */
			if (j == (unsigned int)self->nrecs || ips[i] >= 0x800000000000ull) {
				kernel++;
				continue;
			}
			/* the NMI's later samples: the first's cookie */
			if (i % samples) {
				split += cookies[i] != cookies[i - i % samples];
				continue;
			}
			user++;
			same += self->recs[j].ip0 == ips[i];
			EXPECT_EQ(ips[i], self->recs[j].ip0) TH_LOG("NMI at %" PRIx64
				", record starts at %" PRIx64, ips[i], self->recs[j].ip0);
		}
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(ev);
	TH_LOG("%u rounds: %u NMIs in user mode, %u records start at the IP they "
	       "interrupted; %u samples found it in the kernel; %u samples of an NMI "
	       "with a cookie of their own", round, user, same, kernel, split);
	EXPECT_LE(10, user);
	EXPECT_EQ(0, split) TH_LOG("one NMI's samples in more than one request");
}

TEST_F(nmi, from_user_mode_unwinds_at_once)
{
	user_mode_nmis(_metadata, self, 1);
}

/*
 * Two samples in one NMI that interrupted user mode (two events that
 * overflowed together): the second joins the first's request.
 */
TEST_F(nmi, from_user_mode_two_samples_one_request)
{
	user_mode_nmis(_metadata, self, 2);
}

TEST_HARNESS_MAIN
