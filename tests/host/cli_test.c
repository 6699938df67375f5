// SPDX-License-Identifier: GPL-2.0-only
/*
 * cli_test - the perf-defer command line: dispatch, usage errors, status
 *
 * Runs the built recorder ($PERF_DEFER, else ../../recorder/perf-defer
 * from this test's directory) and checks exit codes and output.  Cases the
 * host cannot offer (native support, a present or broken module) are made
 * in the child before exec: seccomp answers perf_event_open, and a private
 * mount namespace puts tmpfs over /sys/module and /dev.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include <linux/filter.h>
#include <linux/perf_defer.h>
#include <linux/seccomp.h>

#include "kselftest_harness.h"

#define STR_(x)		#x
#define STR(x)		STR_(x)
#define ABI_STRING	STR(PERF_DEFER_ABI_MAJOR) "." STR(PERF_DEFER_ABI_MINOR)

/* Exit code of a child whose setup failed; the reason is on its stderr. */
#define SETUP_FAILED	125

struct run {
	int code;		/* exit code, -1 when killed by a signal */
	char out[8192];
	char err[8192];
};

static const char *perf_defer_path(void)
{
	static char path[PATH_MAX + 32];
	const char *env = getenv("PERF_DEFER");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return "perf-defer";
	self[n] = '\0';
	snprintf(path, sizeof(path), "%s/../../recorder/perf-defer", dirname(self));
	return path;
}

static void read_back(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void setup_failed(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	_exit(SETUP_FAILED);
}

/*
 * Run perf-defer with args (NULL-terminated), capturing stdout and stderr.
 * setup, when given, runs in the child just before exec.  Returns 0 or an
 * errno.
 */
static int run(struct run *r, void (*setup)(void), const char *const *args)
{
	const char *prog = perf_defer_path();
	const char *argv[16] = { "perf-defer" };
	int out, err, status;
	pid_t pid;

	if (access(prog, X_OK))
		return errno;
	for (int i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	out = memfd_create("stdout", MFD_CLOEXEC);
	err = memfd_create("stderr", MFD_CLOEXEC);
	if (out < 0 || err < 0)
		return errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		if (setup)
			setup();
		execv(prog, (char **)argv);
		setup_failed(prog);
	}
	if (waitpid(pid, &status, 0) < 0)
		return errno;
	r->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	read_back(out, r->out, sizeof(r->out));
	read_back(err, r->err, sizeof(r->err));
	return 0;
}

#define RUN(r, setup, ...)							\
	do {									\
		const char *const args_[] = { __VA_ARGS__ };			\
		int ret_ = run(r, setup, args_);				\
										\
		ASSERT_EQ(0, ret_) TH_LOG("cannot run %s: %s (build it: make -C recorder)", \
					  perf_defer_path(), strerror(ret_));	\
		ASSERT_NE(SETUP_FAILED, (r)->code) TH_LOG("setup: %s", (r)->err); \
	} while (0)

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The value of the "key: value" line for key, or NULL. */
static const char *value_of(const char *out, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);
	const char *l = out;

	while (l && *l) {
		const char *end = strchrnul(l, '\n');

		if (!strncmp(l, key, klen) && !strncmp(l + klen, ": ", 2)) {
			snprintf(buf, size, "%.*s", (int)(end - l - klen - 2), l + klen + 2);
			return buf;
		}
		l = *end ? end + 1 : NULL;
	}
	return NULL;
}

static bool module_present(void)
{
	return !access("/sys/module/perf_defer", F_OK) || !access(PERF_DEFER_DEVICE_PATH, F_OK);
}

/* Linux 6.19 brought deferred callchains: older releases cannot have them. */
static bool kernel_before_6_19(const char *release)
{
	unsigned int major, minor;

	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		return false;
	return major < 6 || (major == 6 && minor < 19);
}

/*
 * What holds for every 'perf-defer status' run: only "key: value" lines,
 * the kernel release, a native verdict, a module line, and a path that
 * follows from them and agrees with the exit code.
 */
static void check_status(struct __test_metadata *_metadata, const struct run *r)
{
	char native[256], module[256], path[64], kernel[256];
	const char *expect;
	struct utsname uts;

	for (const char *l = r->out; *l; l = strchrnul(l, '\n') + 1) {
		size_t key = strspn(l, "abcdefghijklmnopqrstuvwxyz_-");

		ASSERT_TRUE(key > 0 && !strncmp(l + key, ": ", 2) && l[key + 2] != '\n')
			TH_LOG("not a 'key: value' line: %.*s", (int)(strchrnul(l, '\n') - l), l);
		ASSERT_EQ('\n', *strchrnul(l, '\n')) TH_LOG("unterminated last line");
	}
	ASSERT_EQ(0, uname(&uts));
	ASSERT_NE(NULL, value_of(r->out, "kernel", kernel, sizeof(kernel)));
	ASSERT_STREQ(uts.release, kernel);

	ASSERT_NE(NULL, value_of(r->out, "native", native, sizeof(native)));
	ASSERT_TRUE(!strcmp(native, "yes") || !strcmp(native, "no") ||
		    starts_with(native, "unknown (perf_event_open: "))
		TH_LOG("native: %s", native);

	ASSERT_NE(NULL, value_of(r->out, "module", module, sizeof(module)));
	ASSERT_TRUE(!strcmp(module, "not loaded") || starts_with(module, "loaded, "))
		TH_LOG("module: %s", module);

	ASSERT_NE(NULL, value_of(r->out, "path", path, sizeof(path)));
	if (!strcmp(native, "yes"))
		expect = "native";
	else if (starts_with(module, "loaded, ABI " STR(PERF_DEFER_ABI_MAJOR) "."))
		expect = "module";
	else
		expect = "none";
	ASSERT_STREQ(expect, path);
	if (!strcmp(path, "none")) {
		ASSERT_EQ(1, r->code);
		ASSERT_NE(NULL, strstr(r->err, "'modprobe perf_defer'"));
	} else {
		ASSERT_EQ(0, r->code);
	}
}

/* Command-line cases: exit code, and what stdout and stderr contain. */
FIXTURE(cli) {};
FIXTURE_SETUP(cli) {}
FIXTURE_TEARDOWN(cli) {}

FIXTURE_VARIANT(cli) {
	const char *args[4];
	int code;
	const char *out;	/* expected in stdout; NULL: stdout is empty */
	const char *err;	/* expected in stderr; NULL: stderr is empty */
};

FIXTURE_VARIANT_ADD(cli, help) {
	.args = { "--help" }, .code = 0, .out = "\n   status ",
};
FIXTURE_VARIANT_ADD(cli, help_short) {
	.args = { "-h" }, .code = 0, .out = "\n   status ",
};
FIXTURE_VARIANT_ADD(cli, help_command) {
	.args = { "help" }, .code = 0, .out = "\n   status ",
};
FIXTURE_VARIANT_ADD(cli, version) {
	.args = { "--version" }, .code = 0, .out = " (ABI " ABI_STRING ")\n",
};
FIXTURE_VARIANT_ADD(cli, no_args) {
	.args = { }, .code = 2, .err = "usage: perf-defer ",
};
FIXTURE_VARIANT_ADD(cli, unknown_command) {
	.args = { "foo" }, .code = 2,
	.err = "perf-defer: 'foo' is not a perf-defer command. See 'perf-defer --help'.\n",
};
FIXTURE_VARIANT_ADD(cli, unknown_option) {
	.args = { "--bogus" }, .code = 2, .err = "perf-defer: unknown option '--bogus'",
};
FIXTURE_VARIANT_ADD(cli, status_help) {
	.args = { "status", "--help" }, .code = 0, .out = "usage: perf-defer status",
};
FIXTURE_VARIANT_ADD(cli, status_help_short) {
	.args = { "status", "-h" }, .code = 0, .out = "usage: perf-defer status",
};
/* getopt words its own messages; only the prefix and the culprit are ours. */
FIXTURE_VARIANT_ADD(cli, status_unknown_option) {
	.args = { "status", "--bogus" }, .code = 2, .err = "--bogus",
};
FIXTURE_VARIANT_ADD(cli, status_unknown_short_option) {
	.args = { "status", "-x" }, .code = 2, .err = "'x'",
};
FIXTURE_VARIANT_ADD(cli, status_option_with_argument) {
	.args = { "status", "--verbose=1" }, .code = 2, .err = "'--verbose'",
};
FIXTURE_VARIANT_ADD(cli, status_extra_argument) {
	.args = { "status", "extra" }, .code = 2, .err = "unexpected argument 'extra'",
};
FIXTURE_VARIANT_ADD(cli, record_user_unwind_unknown) {
	.args = { "record", "--user-unwind", "bogus", "true" }, .code = 2,
	.err = "--user-unwind: 'bogus' is not a list of sframe, eh_frame and fp",
};
FIXTURE_VARIANT_ADD(cli, record_user_unwind_twice) {
	.args = { "record", "--user-unwind", "eh_frame,fp,eh_frame", "true" }, .code = 2,
	.err = "each at most once",
};
FIXTURE_VARIANT_ADD(cli, record_user_unwind_with_dwarf) {
	.args = { "record", "--call-graph=dwarf,defer", "--user-unwind=fp", "true" }, .code = 2,
	.err = "--user-unwind needs --call-graph fp,defer",
};

TEST_F(cli, run)
{
	const char *const *a = variant->args;
	struct run r;

	RUN(&r, NULL, a[0], a[1], a[2], a[3], NULL);
	ASSERT_EQ(variant->code, r.code) TH_LOG("stderr: %s", r.err);
	/* ASSERT_*() is two statements: keep it inside braces. */
	if (variant->out) {
		ASSERT_NE(NULL, strstr(r.out, variant->out)) TH_LOG("stdout: %s", r.out);
	} else {
		ASSERT_STREQ("", r.out);
	}
	if (variant->err) {
		ASSERT_NE(NULL, strstr(r.err, variant->err)) TH_LOG("stderr: %s", r.err);
	} else {
		ASSERT_STREQ("", r.err);
	}
	/* Usage errors of a subcommand name it and show its usage. */
	if (variant->code == 2 && a[0] && !strcmp(a[0], "status")) {
		ASSERT_TRUE(starts_with(r.err, "perf-defer: status: ")) TH_LOG("stderr: %s", r.err);
		ASSERT_NE(NULL, strstr(r.err, "usage: perf-defer status"));
	}
}

TEST(version_format)
{
	const char *nl;
	struct run r;

	RUN(&r, NULL, "--version", NULL);
	ASSERT_EQ(0, r.code);
	ASSERT_TRUE(starts_with(r.out, "perf-defer version ")) TH_LOG("stdout: %s", r.out);
	nl = strchr(r.out, '\n');
	ASSERT_NE(NULL, nl);
	ASSERT_STREQ("", nl + 1) TH_LOG("more than one line: %s", r.out);
}

static void stdout_to_dev_full(void)
{
	int fd = open("/dev/full", O_WRONLY);

	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		setup_failed("/dev/full");
}

TEST(write_error_fails)
{
	struct run r;

	RUN(&r, stdout_to_dev_full, "--version", NULL);
	ASSERT_EQ(1, r.code);
	ASSERT_NE(NULL, strstr(r.err, "perf-defer: cannot write to standard output: "))
		TH_LOG("stderr: %s", r.err);
}

TEST(status)
{
	struct utsname uts;
	char buf[256];
	struct run r;

	RUN(&r, NULL, "status", NULL);
	check_status(_metadata, &r);
	ASSERT_EQ(NULL, value_of(r.out, "recorder", buf, sizeof(buf)))
		TH_LOG("verbose lines without -v");
	ASSERT_EQ(0, uname(&uts));
	if (kernel_before_6_19(uts.release))
		ASSERT_STRNE("yes", value_of(r.out, "native", buf, sizeof(buf)));
	if (module_present())
		SKIP(return, "perf_defer module present: 'module: not loaded' not checked");
	ASSERT_STREQ("not loaded", value_of(r.out, "module", buf, sizeof(buf)));
}

TEST(status_verbose)
{
	char buf[256];
	struct run r;

	RUN(&r, NULL, "status", "-v", NULL);
	check_status(_metadata, &r);
	ASSERT_NE(NULL, value_of(r.out, "recorder", buf, sizeof(buf)));
	ASSERT_NE(NULL, strstr(buf, ", ABI " ABI_STRING)) TH_LOG("recorder: %s", buf);
	ASSERT_NE(NULL, value_of(r.out, "perf_event_paranoid", buf, sizeof(buf)));
	ASSERT_NE(NULL, value_of(r.out, "native-probe", buf, sizeof(buf)));
	ASSERT_TRUE(starts_with(buf, "cpu-clock sampling event")) TH_LOG("native-probe: %s", buf);
}

/* Make every perf_event_open return -errno_or_zero; 0 fakes fd 0. */
static void perf_event_open_returns(unsigned int errno_or_zero)
{
	/* The recorder makes native syscalls only: no arch check needed. */
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | errno_or_zero),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(insns), .filter = insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		setup_failed("seccomp");
}

static void perf_event_open_eacces(void) { perf_event_open_returns(EACCES); }
static void perf_event_open_enosys(void) { perf_event_open_returns(ENOSYS); }
static void perf_event_open_succeeds(void) { perf_event_open_returns(0); }

/* status, with perf_event_open() answering as setup makes it: native is want */
static void status_native(struct __test_metadata *_metadata, struct run *r, void (*setup)(void),
			  const char *want)
{
	char native[256];

	RUN(r, setup, "status", NULL);
	check_status(_metadata, r);
	ASSERT_STREQ(want, value_of(r->out, "native", native, sizeof(native)));
}

TEST(status_native_denied)
{
	struct run r;

	status_native(_metadata, &r, perf_event_open_eacces,
		      "unknown (perf_event_open: Permission denied; check kernel.perf_event_paranoid)");
}

TEST(status_native_no_syscall)
{
	struct run r;

	status_native(_metadata, &r, perf_event_open_enosys,
		      "unknown (perf_event_open: Function not implemented)");
}

TEST(status_native_wins)
{
	char buf[256];
	struct run r;

	status_native(_metadata, &r, perf_event_open_succeeds, "yes");
	ASSERT_STREQ("native", value_of(r.out, "path", buf, sizeof(buf)));
	ASSERT_EQ(0, r.code);
}

/*
 * A private view of /sys/module and /dev: perf_defer "loaded" with no
 * device, or with a root-only regular file standing in for the device.
 */
static void private_mounts(void)
{
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/sys/module", "tmpfs", 0, NULL) ||
	    mkdir("/sys/module/perf_defer", 0755) ||
	    mount("tmpfs", "/dev", "tmpfs", 0, NULL))
		setup_failed("private /sys/module and /dev");
}

static void module_without_device(void)
{
	private_mounts();
}

static void module_with_fake_device(void)
{
	int fd;

	private_mounts();
	fd = open(PERF_DEFER_DEVICE_PATH, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		setup_failed(PERF_DEFER_DEVICE_PATH);
	close(fd);
}

static void module_with_fake_device_as_nobody(void)
{
	module_with_fake_device();
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		setup_failed("become nobody");
}

FIXTURE(fake_module) {};
FIXTURE_SETUP(fake_module) {}
FIXTURE_TEARDOWN(fake_module) {}

FIXTURE_VARIANT(fake_module) {
	void (*setup)(void);
	const char *module;	/* the "module:" value */
	const char *err;	/* expected in stderr */
};

FIXTURE_VARIANT_ADD(fake_module, no_device) {
	.setup = module_without_device,
	.module = "loaded, unusable (" PERF_DEFER_DEVICE_PATH ": No such file or directory)",
	.err = "perf-defer: status: module perf_defer is loaded but " PERF_DEFER_DEVICE_PATH
	       " does not exist",
};
FIXTURE_VARIANT_ADD(fake_module, root_only) {
	.setup = module_with_fake_device_as_nobody,
	.module = "loaded, unusable (" PERF_DEFER_DEVICE_PATH ": Permission denied)",
	.err = "(the device is root-only, mode 0600: run as root)",
};
FIXTURE_VARIANT_ADD(fake_module, no_ioctl) {
	.setup = module_with_fake_device,
	.module = "loaded, unusable (GET_VERSION: Inappropriate ioctl for device)",
	.err = "perf-defer: status: PERF_DEFER_IOC_GET_VERSION failed: ",
};

TEST_F(fake_module, status)
{
	char module[256];
	struct run r;

	/* Not in FIXTURE_SETUP: the 6.1 harness runs the test after a SKIP there. */
	if (geteuid())
		SKIP(return, "needs root for a private mount namespace");
	RUN(&r, variant->setup, "status", NULL);
	check_status(_metadata, &r);
	ASSERT_STREQ(variant->module, value_of(r.out, "module", module, sizeof(module)));
	ASSERT_NE(NULL, strstr(r.err, variant->err)) TH_LOG("stderr: %s", r.err);
}

TEST_HARNESS_MAIN
