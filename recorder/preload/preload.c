// SPDX-License-Identifier: GPL-2.0-only
/*
 * libperf-defer-preload.so: what 'perf-defer perf record' loads into perf
 * (LD_PRELOAD).  perf opens its events through glibc's syscall(); this
 * syscall() passes every call on, and attaches each event that perf opens
 * to sample user callchains to the perf_defer session that perf-defer
 * opened and perf inherited, right after perf_event_open() returns and so
 * before perf enables it.  perf >= 6.19's fp,defer bits are taken out of
 * the attr on the way: the module defers instead of the kernel.
 *
 * At load it takes its variables out of the environment (restoring the
 * caller's LD_PRELOAD) and marks the session close-on-exec: the workload
 * perf starts inherits neither.  A failed attach leaves perf's event as
 * it is (perf's own walk), and says so once.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "preload.h"

typedef long (*syscall_fn)(long nr, ...);

static syscall_fn real_syscall;
static int session_fd = -1;
static bool warned;

static syscall_fn next_syscall(void)
{
	if (!real_syscall)
		real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	if (!real_syscall) {
		fprintf(stderr, "perf-defer: preload: no syscall() after this library: %s\n",
			dlerror());
		abort();
	}
	return real_syscall;
}

__attribute__((constructor)) static void preload_init(void)
{
	const char *v = getenv(PRELOAD_ENV_FD), *ld = getenv(PRELOAD_ENV_LD_PRELOAD);
	char *end;
	long fd;

	next_syscall();
	if (v) {
		errno = 0;
		fd = strtol(v, &end, 10);
		if (!errno && end != v && !*end && fd >= 0 && fd < 1 << 20 &&
		    !fcntl((int)fd, F_SETFD, FD_CLOEXEC))
			session_fd = (int)fd;
		else
			fprintf(stderr, "perf-defer: preload: %s=%s is no open fd: nothing deferred\n",
				PRELOAD_ENV_FD, v);
	}
	unsetenv(PRELOAD_ENV_FD);
	if (ld && *ld)
		setenv("LD_PRELOAD", ld, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv(PRELOAD_ENV_LD_PRELOAD);
}

static void attach(int perf_fd)
{
	struct perf_defer_attach a = { .size = sizeof(a), .perf_fd = perf_fd };

	if (!ioctl(session_fd, PERF_DEFER_IOC_ATTACH, &a) || warned)
		return;
	warned = true;
	fprintf(stderr, "perf-defer: cannot attach perf's event (fd %d) to the perf_defer session: %s; its samples keep perf's own user callchains\n",
		perf_fd, strerror(errno));
}

long syscall(long nr, ...)
{
	unsigned char copy[PRELOAD_ATTR_MAX];
	struct perf_event_attr *attr;
	va_list ap;
	long a[6], ret;
	int i, saved;

	/* as glibc's: six register-sized arguments, whatever the call takes */
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	attr = (struct perf_event_attr *)a[0];
	if (nr != SYS_perf_event_open || session_fd < 0 || !attr)
		return next_syscall()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (preload_strip(attr, copy, sizeof(copy)))
		a[0] = (long)copy;
	ret = next_syscall()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (ret < 0 || !preload_wants(attr))
		return ret;
	saved = errno;
	attach((int)ret);
	errno = saved;
	return ret;
}
