// SPDX-License-Identifier: GPL-2.0-only
/*
 * defer_lib - helpers of the deferred-callchain tests; see defer_lib.h.
 * Here: the module, and the workload children.  dl_rings.c reads the
 * perf and session rings into a struct dl_data; dl_chains.c stitches
 * and compares the chains in it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "defer_lib.h"
#include "dl_private.h"

/* one TAP diagnostic line, written whole (threads log too) */
void dl_log(const char *fmt, ...)
{
	char buf[1024] = "# ";
	const int room = sizeof(buf) - 4;	/* "# ", the newline, the NUL */
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf + 2, room + 1, fmt, ap);
	va_end(ap);
	len = len < 0 ? 0 : len > room ? room : len;
	buf[2 + len] = '\n';
	fwrite(buf, 1, 2 + len + 1, stderr);
}

void *dl_xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		dl_log("out of memory");
		abort();
	}
	return p;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* ---- module --------------------------------------------------------- */

const char *dl_ko_path(void)
{
	const char *p = getenv("PERF_DEFER_KO");

	return p ? p : "/lib/perf-defer/perf_defer.ko";
}

int dl_module_load(const char *params)
{
	int fd, ret;

	fd = open(dl_ko_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params ? params : "", 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

int dl_module_unload(void)
{
	return syscall(SYS_delete_module, DL_MODNAME, O_NONBLOCK) ? -errno : 0;
}

int dl_module_unload_while(int ms, void (*between)(void *), void *arg)
{
	uint64_t end = now_ms() + ms;
	int ret;

	for (;;) {
		if (between)
			between(arg);
		ret = dl_module_unload();
		if (ret != -EBUSY && ret != -EAGAIN)
			return ret;
		if (now_ms() >= end)
			return ret;
		usleep(10000);
	}
}

int dl_module_unload_wait(int ms)
{
	return dl_module_unload_while(ms, NULL, NULL);
}

bool dl_module_loaded(void)
{
	return access("/sys/module/" DL_MODNAME, F_OK) == 0;
}

int dl_get_stats(int devfd, struct perf_defer_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(devfd, PERF_DEFER_IOC_GET_STATS, st) ? -errno : 0;
}

/* the counters after the size header: every field but one (pending) */
#define DL_STATS_FIRST offsetof(struct perf_defer_stats, requests)
_Static_assert((sizeof(struct perf_defer_stats) - DL_STATS_FIRST) % sizeof(__u64) == 0,
	       "perf_defer_stats: __u64 fields after the header");

void dl_stats_delta(const struct perf_defer_stats *a, const struct perf_defer_stats *b,
		    struct perf_defer_stats *d)
{
	size_t off;

	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	for (off = DL_STATS_FIRST; off < sizeof(*d); off += sizeof(__u64)) {
		__u64 x, y, z;

		memcpy(&x, (const char *)a + off, sizeof(x));
		memcpy(&y, (const char *)b + off, sizeof(y));
		z = y - x;
		memcpy((char *)d + off, &z, sizeof(z));
	}
	d->pending = b->pending;	/* a level, not a counter */
}

void dl_stats_log(const char *what, const struct perf_defer_stats *st)
{
	dl_log("%s: requests %llu dedup %llu unwinds %llu records %llu drops %llu "
	       "pool_empty %llu exit_pending %llu pending %llu after_unwind %llu frames fp %llu "
	       "sframe %llu eh_frame %llu table_objects %llu table_stopped %llu "
	       "table_cache_hits %llu in_exec %llu table_rows %llu table_row_hits %llu "
	       "walk_ns %llu", what,
	       (unsigned long long)st->requests, (unsigned long long)st->dedup,
	       (unsigned long long)st->unwinds, (unsigned long long)st->records,
	       (unsigned long long)st->drops, (unsigned long long)st->pool_empty,
	       (unsigned long long)st->exit_pending, (unsigned long long)st->pending,
	       (unsigned long long)st->after_unwind, (unsigned long long)st->frames_fp,
	       (unsigned long long)st->frames_sframe, (unsigned long long)st->frames_eh_frame,
	       (unsigned long long)st->table_objects, (unsigned long long)st->table_stopped,
	       (unsigned long long)st->table_cache_hits, (unsigned long long)st->in_exec,
	       (unsigned long long)st->table_rows, (unsigned long long)st->table_row_hits,
	       (unsigned long long)st->walk_ns);
}

/* ---- workload children ---------------------------------------------- */

const char *dl_self_dir(void)
{
	static char dir[PATH_MAX];
	char *slash;
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		strcpy(dir, ".");
		return dir;
	}
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	return dir;
}

int dl_child_spawn(struct dl_child *c, char *const argv[])
{
	char path[PATH_MAX];
	pid_t parent = getpid();
	int p[2], ret;
	char b;

	c->pid = 0;
	c->go = -1;
	if (strchr(argv[0], '/'))
		snprintf(path, sizeof(path), "%s", argv[0]);
	else
		snprintf(path, sizeof(path), "%s/%s", dl_self_dir(), argv[0]);
	if (access(path, X_OK)) {
		ret = -errno;
		dl_log("workload %s: %s", path, strerror(errno));
		return ret;
	}
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0) {
		ret = -errno;
		close(p[0]);
		close(p[1]);
		return ret;
	}
	if (c->pid == 0) {
		close(p[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(126);
		if (read(p[0], &b, 1) != 1)
			_exit(125);
		execv(path, argv);
		_exit(127);
	}
	close(p[0]);
	c->go = p[1];
	return 0;
}

int dl_child_go(struct dl_child *c)
{
	int ret = 0;

	if (c->go < 0)
		return -EINVAL;
	if (write(c->go, "g", 1) != 1)
		ret = -errno;
	close(c->go);
	c->go = -1;
	return ret;
}

void dl_child_kill(struct dl_child *c)
{
	if (c->go >= 0)
		close(c->go);
	c->go = -1;
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	c->pid = 0;
}

int dl_collect(struct dl_child *c, struct dl_perf *pf, int np, struct dl_session *ss, int ns,
	       struct dl_data *d, const struct dl_collect_opts *o)
{
	struct dl_collect_opts def = { 0 };
	struct pollfd pfd[DL_MAX_SESSIONS];
	uint64_t start = now_ms(), last = start;
	int timeout = 60000, status = 0, i, n, got;
	bool once = false, timed_out = false;

	if (!o)
		o = &def;
	if (o->timeout_ms > 0)
		timeout = o->timeout_ms;
	for (;;) {
		n = 0;
		if (o->sess_drain_ms == 0)
			for (i = 0; i < ns && i < DL_MAX_SESSIONS; i++, n++)
				pfd[n] = (struct pollfd){ .fd = ss[i].fd, .events = POLLIN };
		if (poll(pfd, n, 10) < 0 && errno != EINTR)
			break;
		for (i = 0; i < np; i++)
			dl_perf_drain(&pf[i], d);
		for (i = 0; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			got = dl_session_drain(&ss[i], d);
			if (!got)
				ss[i].nempty_wakeups++;
		}
		if (o->sess_drain_ms > 0 && now_ms() - last >= (uint64_t)o->sess_drain_ms) {
			for (i = 0; i < ns; i++)
				dl_session_drain(&ss[i], d);
			last = now_ms();
		}
		if (o->sess_drain_once_ms > 0 && !once &&
		    now_ms() - start >= (uint64_t)o->sess_drain_once_ms) {
			for (i = 0; i < ns; i++)
				dl_session_drain(&ss[i], d);
			once = true;
		}
		if (waitpid(c->pid, &status, WNOHANG) == c->pid)
			break;
		if (!timed_out && now_ms() - start > (uint64_t)timeout) {
			dl_log("workload %d still running after %d ms: killed", c->pid, timeout);
			kill(c->pid, SIGKILL);
			timed_out = true;
		}
	}
	c->pid = 0;
	for (i = 0; i < np; i++)
		dl_perf_drain(&pf[i], d);
	for (i = 0; i < ns; i++)
		dl_session_drain(&ss[i], d);
	return timed_out ? -1 : status;
}
