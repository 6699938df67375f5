// SPDX-License-Identifier: GPL-2.0-only
/*
 * preload_test - libperf-defer-preload.so, the library that 'perf-defer
 * perf record' preloads into perf, without the module: which attrs it
 * attaches and how it opens them (recorder/preload/preload.h), and the
 * library loaded into a program that opens perf events through syscall()
 * as perf does (this test, run again as "preload_test --open N").  The
 * session fd is /dev/null there: each attach fails, and the library says
 * so once, while the events open; perf >= 6.19's defer bits, which this
 * kernel would refuse, are taken out.  The guest's tests/vm/perf_record.sh
 * runs the whole thing through perf.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "pd_test_util.h"
#include "preload/preload.h"

/* a cpu-clock event sampling fp callchains, as perf record -g opens it */
static void attr_fp(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 1000000;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CALLCHAIN;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->sample_id_all = 1;
}

static __u64 attr_flags(const void *a)
{
	__u64 w;

	memcpy(&w, (const char *)a + PERF_DEFER_ATTR_FLAGS_OFFSET, sizeof(w));
	return w;
}

static void attr_set_defer(struct perf_event_attr *a)
{
	__u64 w = attr_flags(a) | 1ULL << PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN |
		  1ULL << PERF_DEFER_ATTR_BIT_DEFER_OUTPUT;

	memcpy((char *)a + PERF_DEFER_ATTR_FLAGS_OFFSET, &w, sizeof(w));
}

TEST(wants_fp_sampling_with_user_callchains)
{
	struct perf_event_attr a;

	attr_fp(&a);
	EXPECT_TRUE(preload_wants(&a));
	a.sample_type &= ~PERF_SAMPLE_CALLCHAIN;
	EXPECT_FALSE(preload_wants(&a)) TH_LOG("no callchain");
	attr_fp(&a);
	a.sample_period = 0;
	EXPECT_FALSE(preload_wants(&a)) TH_LOG("a counting event");
	attr_fp(&a);
	a.exclude_user = 1;
	EXPECT_FALSE(preload_wants(&a)) TH_LOG("kernel only");
	attr_fp(&a);
	a.exclude_callchain_user = 1;
	EXPECT_FALSE(preload_wants(&a)) TH_LOG("no user callchain");
	attr_fp(&a);
	a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	EXPECT_FALSE(preload_wants(&a)) TH_LOG("--call-graph dwarf stays perf's");
	attr_fp(&a);
	/* perf record -g on arm64: LR sampled, for its leaf-caller guess */
	a.sample_type |= PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = 1ULL << 30;
	EXPECT_TRUE(preload_wants(&a)) TH_LOG("fp with the user LR (arm64's -g)");
	attr_fp(&a);
	a.freq = 1;
	a.sample_freq = 4000;
	EXPECT_TRUE(preload_wants(&a)) TH_LOG("-F");
}

TEST(strip_only_the_defer_bits)
{
	unsigned char copy[PRELOAD_ATTR_MAX], big[PRELOAD_ATTR_MAX + 8] = { 0 };
	struct perf_event_attr a;
	__u64 before;

	attr_fp(&a);
	a.inherit = 1;
	EXPECT_FALSE(preload_strip(&a, copy, sizeof(copy))) TH_LOG("no defer bit");
	before = attr_flags(&a);
	attr_set_defer(&a);
	ASSERT_TRUE(preload_strip(&a, copy, sizeof(copy)));
	EXPECT_EQ(before, attr_flags(copy));
	EXPECT_EQ(0, memcmp(copy, &a, PERF_DEFER_ATTR_FLAGS_OFFSET));
	EXPECT_EQ(0, memcmp(copy + PERF_DEFER_ATTR_FLAGS_OFFSET + 8,
			    (char *)&a + PERF_DEFER_ATTR_FLAGS_OFFSET + 8,
			    sizeof(a) - PERF_DEFER_ATTR_FLAGS_OFFSET - 8));
	/* an attr larger than the copy can hold goes as it is */
	memcpy(big, &a, sizeof(a));
	((struct perf_event_attr *)big)->size = sizeof(big);
	EXPECT_FALSE(preload_strip((struct perf_event_attr *)big, copy, sizeof(copy)));
	/* perf's size 0 means the first version's 64 bytes */
	a.size = 0;
	EXPECT_TRUE(preload_strip(&a, copy, sizeof(copy)));
}

/* this program, run under the library with env (NULL-ended); fd 3 is /dev/null */
static void run_preloaded(struct __test_metadata *_metadata, struct t_run *r,
			  const char *const *env, const char *nopen)
{
	char self[PATH_MAX], preload[PATH_MAX + 16], *argv[] = { self, "--open", (char *)nopen, NULL };
	char *envp[8] = { preload };
	posix_spawn_file_actions_t fa;
	int out = memfd_create("out", 0), err = memfd_create("err", 0), status, i;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	ASSERT_LT(0, n);
	self[n] = '\0';
	ASSERT_EQ(0, access(PD_PRELOAD_LIB, R_OK)) TH_LOG("no %s (make -C recorder)", PD_PRELOAD_LIB);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", PD_PRELOAD_LIB);
	for (i = 0; env[i] && i < 6; i++)
		envp[i + 1] = (char *)env[i];
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, err, STDERR_FILENO);
	posix_spawn_file_actions_addopen(&fa, 3, "/dev/null", O_RDWR, 0);
	ASSERT_EQ(0, posix_spawn(&pid, self, &fa, NULL, argv, envp));
	posix_spawn_file_actions_destroy(&fa);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->out = t_read_fd(out);
	r->err = t_read_fd(err);
}

TEST(library_opens_strips_and_attaches)
{
	static const char *const env[] = {
		PRELOAD_ENV_FD "=3", PRELOAD_ENV_LD_PRELOAD "=", NULL
	};
	struct t_run r;

	run_preloaded(_metadata, &r, env, "3");
	TH_LOG("out: %s", r.out);
	TH_LOG("err: %s", r.err);
	ASSERT_EQ(0, r.code);
	if (strstr(r.out, "open: Permission denied") || strstr(r.out, "open: No such file"))
		SKIP(return, "perf_event_open is not allowed here: %s", r.out);
	/* opened with the defer bits taken out: this kernel would refuse them */
	EXPECT_NE(NULL, strstr(r.out, "opened 3 of 3"));
	/* attach to /dev/null: refused, said once */
	ASSERT_NE(NULL, strstr(r.err, "cannot attach perf's event"));
	EXPECT_EQ(NULL, strstr(strstr(r.err, "cannot attach") + 1, "cannot attach"));
	/* gone from the environment, and the session is close-on-exec */
	EXPECT_NE(NULL, strstr(r.out, "LD_PRELOAD=- " PRELOAD_ENV_FD "=- fd3-cloexec=1"));
	t_run_free(&r);
}

TEST(library_without_a_session)
{
	static const char *const env[] = { PRELOAD_ENV_FD "=x", NULL };
	struct t_run r;

	run_preloaded(_metadata, &r, env, "1");
	ASSERT_EQ(0, r.code);
	EXPECT_NE(NULL, strstr(r.err, PRELOAD_ENV_FD "=x is no open fd: nothing deferred"))
		TH_LOG("%s", r.err);
	EXPECT_EQ(NULL, strstr(r.err, "cannot attach"));
	EXPECT_NE(NULL, strstr(r.out, "LD_PRELOAD=- " PRELOAD_ENV_FD "=-"));
	t_run_free(&r);
}

/* preload_test --open N: open N fp,defer events as perf would, say how it went */
static int open_events(int n)
{
	const char *ld = getenv("LD_PRELOAD"), *fd = getenv(PRELOAD_ENV_FD);
	struct perf_event_attr a;
	int i, ok = 0, flags = fcntl(3, F_GETFD);

	printf("LD_PRELOAD=%s %s=%s fd3-cloexec=%d\n", ld ? ld : "-", PRELOAD_ENV_FD,
	       fd ? fd : "-", flags >= 0 && (flags & FD_CLOEXEC));
	attr_fp(&a);
	attr_set_defer(&a);
	for (i = 0; i < n; i++) {
		long ret = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

		if (ret < 0) {
			printf("open: %s\n", strerror(errno));
			continue;
		}
		ok++;
	}
	printf("opened %d of %d\n", ok, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--open"))
		return open_events(atoi(argv[2]));
	return test_harness_run(argc, argv);
}
