// SPDX-License-Identifier: GPL-2.0-only
/*
 * gen_stream - a synthetic perf.data in the deferred form, for the
 * recorder benchmark (tests/bench/recorder.sh)
 *
 *   gen_stream -n N -o FILE [-t THREADS] [-r ROUND] [-s SEED]
 *	Write N records as 'perf-defer record --keep-deferred' would: one
 *	sampling attr with defer_callchain and defer_output, the kernel map,
 *	COMM and MMAP2 of each thread, then samples whose callchain is
 *	5..12 kernel frames + PERF_CONTEXT_USER_DEFERRED + cookie and, after
 *	each kernel entry's 1..4 samples, one CALLCHAIN_DEFERRED with a user
 *	chain of 20..30 frames (each one of 16 call paths, as a profile has
 *	a few hot paths; random frames would make perf report's call graph
 *	grow without bound); THREADS threads on two CPUs interleaved, in time
 *	order, a FINISHED_ROUND every ROUND records, an EXIT per thread at
 *	the end.  Every sample gets its user chain: nothing is unmatched.
 *	The records are built in batches in memory, then handed to the
 *	recorder's writer (recorder/perf-data-write.c); only the writer is timed,
 *	its close (with fsync) included.  Prints one line:
 *	  records=N bytes=B samples=S entries=E write_s=T write_rate=R
 *
 *   gen_stream --run CMD [ARG...]
 *	Run CMD, print "wall_s=T cpu_s=C maxrss_kib=K status=S" to stderr
 *	(wall time; getrusage of the child: user + system time, ru_maxrss)
 *	and exit with CMD's status.
 *
 * Built against the recorder's sources, as the host tests are.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pd_test_util.h"

#define K(x)		(0xffffffff81000000ULL + (x))
#define U_BASE		0x0000555555550000ULL
#define U_LEN		0x100000ULL
#define COOKIE(cpu, n)	(((__u64)(cpu) + 1) << 32 | (1 | (__u64)(n) << 1))
#define ID(cpu)		(1000 + (cpu))
#define NR_CPUS		2
#define BATCH_BYTES	(4UL << 20)
#define MAX_THREADS	1024
#define NR_PATHS	16	/* distinct kernel and user call paths */

struct thread {
	__u32 tid;
	int cpu;
	unsigned int left;	/* samples still to take in this entry */
	__u64 entry;		/* entries so far: the cookie counter */
	__u64 cookie;
	__u64 base;		/* of this thread's user frames */
};

static __u64 rng_state = 0x9e3779b97f4a7c15ULL;

static __u64 rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static unsigned int rnd_in(unsigned int lo, unsigned int hi)
{
	return lo + (unsigned int)(rnd() % (hi - lo + 1));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Records waiting for the writer: built here, timed apart. */
struct batch {
	unsigned char *buf;
	size_t len;
	struct perf_data_writer *w;
	double write_s;
	__u64 records, bytes;
};

static struct tev ev;

static void batch__flush(struct batch *b)
{
	double t0 = now();
	size_t off = 0;

	while (off < b->len) {
		__u16 size = ((struct perf_event_header *)(b->buf + off))->size;

		if (perf_data_writer__write(b->w, b->buf + off, size)) {
			fprintf(stderr, "gen_stream: %s\n", error__msg());
			exit(1);
		}
		off += size;
	}
	b->write_s += now() - t0;
	b->len = 0;
}

static void batch__add(struct batch *b, size_t size)
{
	if (b->len + size > BATCH_BYTES)
		batch__flush(b);
	memcpy(b->buf + b->len, ev.w, size);
	b->len += size;
	b->records++;
	b->bytes += size;
}

static int run(char **argv)
{
	struct rusage ru;
	double t0 = now();
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("gen_stream: fork");
		return 1;
	}
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "gen_stream: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("gen_stream: wait4");
		return 1;
	}
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(stderr, "wall_s=%.3f cpu_s=%.3f maxrss_kib=%ld status=%d\n", now() - t0,
		ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6, ru.ru_maxrss, status);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "run", no_argument, NULL, 'R' },
		{ }
	};
	unsigned int nr_threads = 8, round = 10000;
	struct thread th[MAX_THREADS];
	__u64 n = 0, time = 1000000000ULL, samples = 0, entries = 0, since_round = 0;
	__u64 ids[NR_CPUS], kips[16], uips[32];
	const char *out = NULL;
	struct perf_event_attr attr;
	struct batch b = { 0 };
	double t0;
	int c;

	while ((c = getopt_long(argc, argv, "+n:o:t:r:s:", options, NULL)) != -1) {
		switch (c) {
		case 'R':
			if (optind >= argc)
				goto usage;
			return run(argv + optind);
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 'o':
			out = optarg;
			break;
		case 't':
			nr_threads = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			round = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0) | 1;
			break;
		default:
			goto usage;
		}
	}
	if (!out || !nr_threads || nr_threads > MAX_THREADS || !round ||
	    n < 2 + 3ULL * nr_threads + 1)
		goto usage;

	b.buf = malloc(BATCH_BYTES);
	if (!b.buf)
		return 1;
	t0 = now();
	b.w = perf_data_writer__open(out);
	if (!b.w) {
		fprintf(stderr, "gen_stream: %s\n", error__msg());
		return 1;
	}
	attr = t_attr(true, true);
	for (int i = 0; i < NR_CPUS; i++)
		ids[i] = ID(i);
	if (perf_data_writer__add_attr(b.w, &attr, ids, NR_CPUS, "cpu-clock")) {
		fprintf(stderr, "gen_stream: %s\n", error__msg());
		return 1;
	}
	b.write_s += now() - t0;

	/* what record synthesizes first: the kernel map, each thread's comm and map */
	batch__add(&b, t_kernel_mmap(&ev, K(0), 0x2000000));
	for (unsigned int i = 0; i < nr_threads; i++) {
		th[i] = (struct thread){
			.tid = 4000 + i, .cpu = i % NR_CPUS,
			.base = U_BASE + 0x1000 * (i % 16),
		};
		batch__add(&b, t_comm(&ev, 4000, th[i].tid, "bench", 0, ID(th[i].cpu), th[i].cpu, i == 0));
	}
	batch__add(&b, t_mmap2(&ev, 4000, 4000, U_BASE, U_LEN, 0, 5, 2, "/usr/bin/bench",
			       time, ID(0), 0));

	/* the stream; the last records: a CALLCHAIN_DEFERRED and an EXIT per thread */
	while (b.records < n - 2 * nr_threads - 1) {
		struct thread *t = &th[rnd() % nr_threads];
		unsigned int nk, path;

		time += rnd_in(100, 20000);
		if (since_round >= round) {
			batch__add(&b, t_round(&ev));
			since_round = 0;
			continue;
		}
		since_round++;
		if (!t->left && t->cookie) {
			/* back to user: the entry's user chain, one of a few paths */
			unsigned int path = rnd() % NR_PATHS, nu = 20 + path % 11;

			for (unsigned int i = 0; i < nu; i++)
				uips[i] = t->base + 0x40 * (nu - i) + 8 * ((path + i) % 5);
			batch__add(&b, t_deferred(&ev, 4000, t->tid, time, ID(t->cpu), t->cpu,
						  t->cookie, uips, nu));
			t->cookie = 0;
			continue;
		}
		if (!t->cookie) {
			/* a new kernel entry */
			t->left = rnd_in(1, 4);
			t->cookie = COOKIE(t->cpu, ++t->entry);
			entries++;
		}
		path = rnd() % NR_PATHS;
		nk = 5 + path % 8;
		for (unsigned int i = 0; i < nk; i++)
			kips[i] = K(0x1000 * (i + 1) + 0x10 * ((path + i) % 7));
		batch__add(&b, t_sample_deferred(&ev, 4000, t->tid, time, ID(t->cpu), t->cpu,
						 kips, nk, t->cookie));
		t->left--;
		samples++;
	}
	for (unsigned int i = 0; i < nr_threads; i++) {
		struct thread *t = &th[i];

		time += 1000;
		if (t->cookie) {
			for (unsigned int k = 0; k < 20; k++)
				uips[k] = t->base + 0x40 * (20 - k);
			batch__add(&b, t_deferred(&ev, 4000, t->tid, time, ID(t->cpu), t->cpu,
						  t->cookie, uips, 20));
		}
		batch__add(&b, t_exit(&ev, 4000, t->tid, time + 1, ID(t->cpu), t->cpu));
	}
	while (b.records < n)
		batch__add(&b, t_round(&ev));
	batch__flush(&b);
	t0 = now();
	if (perf_data_writer__close(b.w, NULL)) {
		fprintf(stderr, "gen_stream: %s\n", error__msg());
		return 1;
	}
	b.write_s += now() - t0;
	printf("records=%" PRIu64 " bytes=%" PRIu64 " samples=%" PRIu64 " entries=%" PRIu64
	       " write_s=%.3f write_rate=%.0f\n", (uint64_t)b.records, (uint64_t)b.bytes,
	       (uint64_t)samples, (uint64_t)entries, b.write_s, b.records / b.write_s);
	free(b.buf);
	return 0;
usage:
	fprintf(stderr, "usage: gen_stream -n N -o FILE [-t THREADS] [-r ROUND] [-s SEED]\n"
			"       gen_stream --run CMD [ARG...]\n");
	return 2;
}
