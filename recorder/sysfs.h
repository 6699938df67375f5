/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_SYSFS_H
#define PERF_DEFER_SYSFS_H

/* Reading sysfs as perf record does (sysfs.c). */
#include <stdbool.h>

#define SYS_CPU		"/sys/devices/system/cpu"

/* The first line of a file, white space trimmed at both ends; NULL if none. */
char *sysfs__read_str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A number in a file (base 10, or 16 for base 16); false if unreadable. */
bool sysfs__read_num(long long *v, int base, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool sysfs__exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A CPU list such as "0-3,8,10-11": calls fn(n, arg) for each number in
 * order (fn may be NULL); returns the highest number + 1, or 0 when there
 * is none.
 */
int cpu_list__each(const char *s, void (*fn)(int n, void *arg), void *arg);
/* The highest CPU of SYS_CPU/name ("present", "possible") + 1, else sysconf's count. */
int cpus__max(const char *name);

struct cpu_set {
	bool *on;
	int nr;
};

/* set->on[0..nr): the online CPUs among the first nr; false on ENOMEM. */
bool cpus__online(struct cpu_set *set, int nr);

#endif /* PERF_DEFER_SYSFS_H */
