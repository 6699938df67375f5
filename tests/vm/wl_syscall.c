// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl_syscall [-t MS] [-c KIB] [-d DEPTH] [-n THREADS] [-m] [-x kill|exit] [-a MS] [-w PATH]
 *
 * Syscall-heavy with a deep user stack: each of THREADS threads (default
 * 1) recurses DEPTH levels (default 20) through deep() and then reads KIB
 * KiB (default 16384) from /dev/zero per call, for MS milliseconds
 * (default 1500; 0 = until killed).  A read that large spans several
 * cpu-clock ticks, so many samples fall into one kernel entry.
 *
 * -x kill|exit -a MS: after MS milliseconds a helper thread ends the
 * whole process with kill(getpid(), SIGKILL) or _exit(3), while the
 * readers are in the middle of their reads.
 *
 * -w PATH: write KIB KiB per call to PATH (a FIFO, say) instead of reading
 * /dev/zero; a writer to a full pipe sleeps in the middle of its call.
 *
 * -m: with MS > 0, the main thread is the first reader, on the process's
 * own stack (near the top of the address space when ASLR is off), and a
 * thread of its own stops all after MS; without it, a thread reads and
 * the main thread sleeps.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "wl_common.h"

static volatile unsigned long sink;
static volatile int stop;
static int zero_fd;
static const char *write_path;
static long chunk = 16384L << 10;
static int depth = 20;
static const char *exit_how;
static long exit_after_ms;
static long run_ms;

NOINLINE void reader(char *buf)
{
	WL_LEAF_FRAME();
	while (!stop)
		sink += wl_sys3(write_path ? SYS_write : SYS_read, zero_fd, (long)buf, chunk);
}

NOINLINE void deep(int n, char *buf)
{
	if (n > 0)
		deep(n - 1, buf);
	else
		reader(buf);
	sink++;
}

NOINLINE void *thread_main(void *arg)
{
	char *buf = malloc(chunk);

	if (!buf)
		abort();
	memset(buf, 1, chunk);
	deep(depth, buf);
	free(buf);
	return NULL;
}

static void *stopper(void *arg)
{
	struct timespec ts = { run_ms / 1000, (run_ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
	stop = 1;
	return NULL;
}

NOINLINE void *exiter(void *arg)
{
	usleep(exit_after_ms * 1000);
	if (!strcmp(exit_how, "kill"))
		kill(getpid(), SIGKILL);
	_exit(3);
}

int main(int argc, char **argv)
{
	long ms = 1500, threads = 1, i;
	pthread_t tid[64], ex;
	int opt, main_reads = 0;

	while ((opt = getopt(argc, argv, "t:c:d:n:mx:a:w:")) != -1) {
		switch (opt) {
		case 't':
			ms = strtol(optarg, NULL, 0);
			break;
		case 'c':
			chunk = strtol(optarg, NULL, 0) << 10;
			break;
		case 'd':
			depth = strtol(optarg, NULL, 0);
			break;
		case 'n':
			threads = strtol(optarg, NULL, 0);
			break;
		case 'x':
			exit_how = optarg;
			break;
		case 'a':
			exit_after_ms = strtol(optarg, NULL, 0);
			break;
		case 'w':
			write_path = optarg;
			break;
		case 'm':
			main_reads = 1;
			break;
		default:
			fprintf(stderr, "usage: wl_syscall [-t MS] [-c KIB] [-d DEPTH] [-n THREADS] [-m] [-x kill|exit] [-a MS] [-w PATH]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || chunk <= 0 || depth < 0)
		return 2;
	zero_fd = write_path ? open(write_path, O_WRONLY) : open("/dev/zero", O_RDONLY);
	if (zero_fd < 0)
		return 1;
	if (exit_how && pthread_create(&ex, NULL, exiter, NULL))
		return 1;
	for (i = 1; i < threads; i++)
		if (pthread_create(&tid[i], NULL, thread_main, NULL))
			return 1;
	if (ms > 0 && main_reads) {
		run_ms = ms;
		if (pthread_create(&tid[0], NULL, stopper, NULL))
			return 1;
		thread_main(NULL);
		pthread_join(tid[0], NULL);
	} else if (ms > 0) {
		/* a reader thread; the main thread stops all after MS */
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

		if (pthread_create(&tid[0], NULL, thread_main, NULL))
			return 1;
		while (nanosleep(&ts, &ts))
			;
		stop = 1;
		pthread_join(tid[0], NULL);
	} else {
		thread_main(NULL);
	}
	for (i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	return 0;
}
