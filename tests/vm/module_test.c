// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module tests, run as root in the QEMU guest: load/unload, the misc
 * device, the version ioctl and every bad-input case of every ioctl.
 *
 * The module under test is $PERF_DEFER_KO (the guest's init sets it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <linux/perf_defer.h>

#include "kselftest_harness.h"

#define MODNAME "perf_defer"

static const char *ko_path(void)
{
	const char *p = getenv("PERF_DEFER_KO");

	return p ? p : "/lib/perf-defer/perf_defer.ko";
}

static int module_load(const char *params)
{
	int fd, ret;

	fd = open(ko_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

static int module_unload(void)
{
	return syscall(SYS_delete_module, MODNAME, O_NONBLOCK) ? -errno : 0;
}

static int module_loaded(void)
{
	return access("/sys/module/" MODNAME, F_OK) == 0;
}

/* Skip unless we are root and the module file exists; start unloaded. */
#define REQUIRE_MODULE(_metadata)					\
	do {								\
		if (geteuid() != 0)					\
			SKIP(return, "needs root");			\
		if (access(ko_path(), R_OK))				\
			SKIP(return, "no module at %s", ko_path());	\
		if (module_loaded())					\
			ASSERT_EQ(0, module_unload());			\
	} while (0)

TEST(load_unload_20_times)
{
	struct stat st;
	int i;

	REQUIRE_MODULE(_metadata);
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, module_load("")) TH_LOG("load %d", i);
		ASSERT_EQ(0, stat(PERF_DEFER_DEVICE_PATH, &st));
		ASSERT_TRUE(S_ISCHR(st.st_mode));
		ASSERT_EQ(0600, st.st_mode & 07777);
		ASSERT_EQ(0, st.st_uid);
		ASSERT_EQ(0, module_unload()) TH_LOG("unload %d", i);
		ASSERT_FALSE(module_loaded());
		ASSERT_NE(0, access(PERF_DEFER_DEVICE_PATH, F_OK));
	}
}

TEST(dev_mode_parameter)
{
	struct stat st;

	REQUIRE_MODULE(_metadata);
	ASSERT_EQ(0, module_load("dev_mode=0640"));
	ASSERT_EQ(0, stat(PERF_DEFER_DEVICE_PATH, &st));
	EXPECT_EQ(0640, st.st_mode & 07777);
	ASSERT_EQ(0, module_unload());

	/* execute, setuid and non-octal modes are refused at load */
	EXPECT_EQ(-EINVAL, module_load("dev_mode=0755"));
	EXPECT_EQ(-EINVAL, module_load("dev_mode=4600"));
	EXPECT_EQ(-EINVAL, module_load("dev_mode=rw"));
	EXPECT_FALSE(module_loaded());
}

TEST(unload_refused_while_session_open)
{
	int fd, ret;

	REQUIRE_MODULE(_metadata);
	ASSERT_EQ(0, module_load(""));
	fd = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ret = module_unload();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY) TH_LOG("unload: %d", ret);
	EXPECT_TRUE(module_loaded());
	close(fd);
	EXPECT_EQ(0, module_unload());
}

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = -1;
	REQUIRE_MODULE(_metadata);
	ASSERT_EQ(0, module_load(""));
	self->fd = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0) {
		close(self->fd);
		module_unload();
	}
}

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

TEST_F(dev, get_version)
{
	struct perf_defer_version v = { .size = sizeof(v) };

	ASSERT_EQ(0, ioc(self->fd, PERF_DEFER_IOC_GET_VERSION, &v));
	EXPECT_EQ(PERF_DEFER_ABI_MAJOR, v.major);
	EXPECT_EQ(PERF_DEFER_ABI_MINOR, v.minor);
	EXPECT_EQ(sizeof(v), v.size);
	EXPECT_EQ(0, v.__reserved);
}

TEST_F(dev, dev_mode_reads_back)
{
	char buf[16] = "";
	int fd = open("/sys/module/" MODNAME "/parameters/dev_mode", O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(fd, buf, sizeof(buf) - 1));
	close(fd);
	EXPECT_STREQ("0600\n", buf);
}

TEST_F(dev, not_seekable)
{
	EXPECT_EQ(-1, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
}

TEST_F(dev, get_version_bad_size)
{
	static const __u32 sizes[] = { 0, 1, 4, 12, 15, 17, 24, 4096, 0xffffffffu };
	struct {
		struct perf_defer_version v;
		char pad[16];
	} big;
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&big, 0, sizeof(big));
		big.v.size = sizes[i];
		EXPECT_EQ(-EINVAL, ioc(self->fd, PERF_DEFER_IOC_GET_VERSION, &big))
			TH_LOG("size %u", sizes[i]);
		EXPECT_EQ(0, big.v.major) TH_LOG("output written for size %u", sizes[i]);
	}
}

TEST_F(dev, get_version_reserved_nonzero)
{
	struct perf_defer_version v = { .size = sizeof(v), .__reserved = 1 };

	EXPECT_EQ(-EINVAL, ioc(self->fd, PERF_DEFER_IOC_GET_VERSION, &v));
	v.__reserved = 0x80000000u;
	EXPECT_EQ(-EINVAL, ioc(self->fd, PERF_DEFER_IOC_GET_VERSION, &v));
	EXPECT_EQ(0, v.major);
}

TEST_F(dev, get_version_bad_pointer)
{
	EXPECT_EQ(-EFAULT, ioc(self->fd, PERF_DEFER_IOC_GET_VERSION, NULL));
	EXPECT_EQ(-EFAULT, ioc(self->fd, PERF_DEFER_IOC_GET_VERSION, (void *)1));
	EXPECT_EQ(-EFAULT, ioc(self->fd, PERF_DEFER_IOC_GET_VERSION,
			       (void *)0xffff800000000000ul));
}

TEST_F(dev, unknown_ioctls)
{
	struct perf_defer_version v = { .size = sizeof(v) };
	char buf[256] = { 0 };

	/* right number, wrong direction or encoded size */
	EXPECT_EQ(-ENOTTY, ioc(self->fd, _IOR(PERF_DEFER_MAGIC, 0x01, struct perf_defer_version), &v));
	EXPECT_EQ(-ENOTTY, ioc(self->fd, _IOW(PERF_DEFER_MAGIC, 0x01, struct perf_defer_version), &v));
	EXPECT_EQ(-ENOTTY, ioc(self->fd, _IOWR(PERF_DEFER_MAGIC, 0x01, __u64), &v));
	EXPECT_EQ(-ENOTTY, ioc(self->fd, _IO(PERF_DEFER_MAGIC, 0x01), NULL));
	/* never-used and unassigned numbers, other magics */
	EXPECT_EQ(-ENOTTY, ioc(self->fd, _IOWR(PERF_DEFER_MAGIC, 0x00, struct perf_defer_version), &v));
	EXPECT_EQ(-ENOTTY, ioc(self->fd, _IOWR(PERF_DEFER_MAGIC, 0xff, struct perf_defer_version), buf));
	EXPECT_EQ(-ENOTTY, ioc(self->fd, _IOWR('T', 0x01, struct perf_defer_version), &v));
	EXPECT_EQ(-ENOTTY, ioc(self->fd, 0, NULL));
	EXPECT_EQ(-ENOTTY, ioc(self->fd, ~0ul, NULL));
}

TEST(non_root_is_refused)
{
	pid_t pid;
	int status;

	REQUIRE_MODULE(_metadata);
	ASSERT_EQ(0, module_load(""));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		if (open(PERF_DEFER_DEVICE_PATH, O_RDONLY) >= 0)
			_exit(11);
		if (errno != EACCES)
			_exit(12);
		if (open(PERF_DEFER_DEVICE_PATH, O_RDWR) >= 0)
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, module_unload());
}

TEST_HARNESS_MAIN
