// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the machine's description from sysfs, as perf record does: a
 * file's first line or number, CPU lists ("0-3,8") and the online CPUs.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

/* fopen(the path fmt and ap make, "r") */
static FILE *sysfs__vopen(const char *fmt, va_list ap)
{
	char path[512];

	vsnprintf(path, sizeof(path), fmt, ap);
	return fopen(path, "r");
}

/* The first line of a file, white space trimmed at both ends; NULL if none. */
char *sysfs__read_str(const char *fmt, ...)
{
	char *line = NULL, *s, *e;
	size_t n = 0;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	f = sysfs__vopen(fmt, ap);
	va_end(ap);
	if (!f)
		return NULL;
	if (getline(&line, &n, f) < 0) {
		free(line);
		line = NULL;
	}
	fclose(f);
	if (!line)
		return NULL;
	for (s = line; isspace((unsigned char)*s); s++)
		;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	memmove(line, s, strlen(s) + 1);
	return line;
}

/* A number in a file (base 10, or 16 for base 16); false if unreadable. */
bool sysfs__read_num(long long *v, int base, const char *fmt, ...)
{
	char line[64];
	va_list ap;
	FILE *f;
	bool ok;

	va_start(ap, fmt);
	f = sysfs__vopen(fmt, ap);
	va_end(ap);
	if (!f)
		return false;
	ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (ok)
		*v = strtoll(line, NULL, base);
	return ok;
}

bool sysfs__exists(const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return !access(path, F_OK);
}

/*
 * A CPU list such as "0-3,8,10-11": calls fn(n, arg) for each number in
 * order; returns the highest number + 1, or 0 when there is none.
 */
int cpu_list__each(const char *s, void (*fn)(int n, void *arg), void *arg)
{
	int end = 0;

	while (s && *s) {
		char *p;
		long lo = strtol(s, &p, 10), hi = lo;

		if (p == s || lo < 0)
			break;
		if (*p == '-') {
			s = p + 1;
			hi = strtol(s, &p, 10);
			if (p == s || hi < lo)
				break;
		}
		for (long n = lo; n <= hi && n < 1 << 20; n++)
			if (fn)
				fn((int)n, arg);
		end = (int)hi + 1;
		s = *p == ',' ? p + 1 : "";
	}
	return end;
}

/* The highest CPU of SYS_CPU/name ("present", "possible") + 1, else sysconf's count. */
int cpus__max(const char *name)
{
	char *list = sysfs__read_str(SYS_CPU "/%s", name);
	int n = cpu_list__each(list, NULL, NULL);

	free(list);
	if (n <= 0)
		n = (int)sysconf(_SC_NPROCESSORS_CONF);
	return n;
}

static void cpu_set__add(int n, void *arg)
{
	struct cpu_set *set = arg;

	if (n < set->nr)
		set->on[n] = true;
}

/* online[0..nr): the online CPUs among the first nr; false on ENOMEM. */
bool cpus__online(struct cpu_set *set, int nr)
{
	char *list = sysfs__read_str(SYS_CPU "/online");

	set->nr = nr;
	set->on = calloc(nr > 0 ? nr : 1, sizeof(*set->on));
	if (set->on && list) {
		cpu_list__each(list, cpu_set__add, set);
	} else if (set->on) {
		for (int i = 0; i < nr; i++)
			set->on[i] = true;
	}
	free(list);
	return set->on != NULL;
}
