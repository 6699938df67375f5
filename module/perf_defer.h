/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internal interfaces between the parts of perf_defer.ko.  Each part
 * exposes an x_init()/x_exit() pair, called by main.c in ladder order.
 */
#ifndef _PERF_DEFER_H
#define _PERF_DEFER_H

#include <linux/types.h>
#include <linux/perf_defer.h>

/* main.c: module parameters */
extern umode_t pd_dev_mode;
extern bool pd_verbose;

#define pd_dbg(fmt, ...)					\
	do {							\
		if (pd_verbose)					\
			pr_info(fmt, ##__VA_ARGS__);		\
	} while (0)

/* session.c: the /dev/perf_defer misc device */
int pd_session_init(void);
void pd_session_exit(void);

#endif /* _PERF_DEFER_H */
