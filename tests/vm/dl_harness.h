/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Test-body helpers shared by the kselftest_harness.h programs that use
 * defer_lib (defer_test, walk_test, sess_test, dump_test, safety_test),
 * for fixtures that begin with DL_RUN_FIELDS (LOAD_MODULE: with a 'bool
 * loaded').  Include after kselftest_harness.h.
 */
#ifndef DL_HARNESS_H
#define DL_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "defer_lib.h"

/*
 * Load the module with its parameters (a string) or with none; its SKIPs
 * return.  In the test body: a SKIP in a fixture setup would not stop the
 * test.
 */
#define LOAD_MODULE_WITH(params)					\
	do {								\
		int __ret;						\
		if (geteuid() != 0)					\
			SKIP(return, "needs root");			\
		if (access(dl_ko_path(), R_OK))				\
			SKIP(return, "no module at %s", dl_ko_path());	\
		if (dl_module_loaded())					\
			ASSERT_EQ(0, dl_module_unload_wait(5000));	\
		__ret = dl_module_load(params);				\
		ASSERT_EQ(0, __ret) TH_LOG("load: %s", strerror(-__ret)); \
		self->loaded = true;					\
	} while (0)
#define LOAD_MODULE()	LOAD_MODULE_WITH("")

/* the symbols of workload bin, next to the test program, into *y */
static inline void dl_test_syms(struct __test_metadata *_metadata, struct dl_syms **y,
				const char *bin)
{
	char path[4096];

	dl_syms_free(*y);
	snprintf(path, sizeof(path), "%s/%s", dl_self_dir(), bin);
	*y = dl_syms_load(path);
	ASSERT_NE(NULL, *y);
}

#define load_syms(_metadata, self, bin)	dl_test_syms(_metadata, &(self)->syms, bin)

/*
 * What a fixture of one of these programs holds first: whether the test
 * loaded the module, a run's children, events, sessions and parsed data,
 * and the workload's symbols (load_syms).
 */
#define DL_RUN_FIELDS(nchild, nperf, nsess)				\
	bool loaded;							\
	struct dl_child c[nchild];					\
	struct dl_perf p[nperf];					\
	struct dl_session s[nsess];					\
	struct dl_data d;						\
	struct dl_syms *syms

/* A run's children, events, sessions and parsed data: all closed, or all ended. */
#define DL_RUN_INIT(self)						\
	do {								\
		size_t __i;						\
		for (__i = 0; __i < ARRAY_SIZE((self)->c); __i++)	\
			(self)->c[__i] = (struct dl_child){ .pid = 0, .go = -1 }; \
		for (__i = 0; __i < ARRAY_SIZE((self)->p); __i++)	\
			dl_perf_init(&(self)->p[__i]);			\
		for (__i = 0; __i < ARRAY_SIZE((self)->s); __i++)	\
			(self)->s[__i].fd = -1;				\
		dl_data_init(&(self)->d);				\
	} while (0)

#define DL_RUN_RESET(self)						\
	do {								\
		size_t __i;						\
		for (__i = 0; __i < ARRAY_SIZE((self)->c); __i++)	\
			dl_child_kill(&(self)->c[__i]);			\
		for (__i = 0; __i < ARRAY_SIZE((self)->p); __i++)	\
			dl_perf_close(&(self)->p[__i]);			\
		for (__i = 0; __i < ARRAY_SIZE((self)->s); __i++)	\
			dl_session_close(&(self)->s[__i]);		\
		dl_data_free(&(self)->d);				\
	} while (0)

/* in a teardown: unload the module a test loaded */
#define DL_UNLOAD(self)							\
	do {								\
		if ((self)->loaded) {					\
			int __ret = dl_module_unload_wait(5000);	\
			EXPECT_EQ(0, __ret) TH_LOG("unload: %s", strerror(-__ret)); \
		}							\
	} while (0)

#endif /* DL_HARNESS_H */
