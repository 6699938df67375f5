// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session API of /dev/perf_defer, run as root in the QEMU guest: what
 * each ioctl accepts and refuses, and the ring's mapping.  Each test loads
 * the module from $PERF_DEFER_KO, opens two sessions and two cpu-clock
 * events on itself (with a callchain), and unloads the module.
 *
 * The refusals are tables: one fixture per ioctl and one variant per bad
 * input (FIXTURE_VARIANT), each case a test of its own.
 *
 *	sess_test	the tests (TAP)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "defer_lib.h"
#include "kselftest_harness.h"
#include "dl_harness.h"

#define PERIOD_NS	500000		/* cpu-clock every 0.5 ms */

/* what every fixture here starts with */
struct sess {
	bool loaded;
	int fd, fd2;			/* two sessions */
	int ev, ev2;			/* two events on this task, with a callchain */
};

static int open_event(uint64_t sample_type, bool excl_user)
{
	struct perf_event_attr attr;

	dl_attr_cpu_clock(&attr, PERIOD_NS);
	attr.sample_type = sample_type;
	attr.exclude_callchain_user = excl_user;
	attr.enable_on_exec = 0;
	attr.inherit = 0;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void sess_begin(struct __test_metadata *_metadata, struct sess *self)
{
	self->fd = self->fd2 = self->ev = self->ev2 = -1;
	LOAD_MODULE();
	self->fd = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->fd2 = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd2);
	self->ev = open_event(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN, false);
	ASSERT_LE(0, self->ev);
	self->ev2 = open_event(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN, false);
	ASSERT_LE(0, self->ev2);
}

static void sess_end(struct __test_metadata *_metadata, struct sess *self)
{
	if (self->ev >= 0)
		close(self->ev);
	if (self->ev2 >= 0)
		close(self->ev2);
	if (self->fd >= 0)
		close(self->fd);
	if (self->fd2 >= 0)
		close(self->fd2);
	DL_UNLOAD(self);
}

/* fixture NAME: a struct sess s, set up and torn down as above */
#define SESS_FIXTURE(name)						\
	FIXTURE(name) {							\
		struct sess s;						\
	};								\
	FIXTURE_SETUP(name) { sess_begin(_metadata, &self->s); }	\
	FIXTURE_TEARDOWN(name) { sess_end(_metadata, &self->s); }

/* a SKIP in the setup does not stop the test: the test stops */
#define SESS_SKIPPED() do { if (_metadata->skip) return; } while (0)

/* ---- attach and detach ---------------------------------------------- */

SESS_FIXTURE(sess)

TEST_F(sess, attach_ok_detach_ok)
{
	SESS_SKIPPED();
	EXPECT_EQ(0, dl_ioc_attach(self->s.fd, self->s.ev));
	EXPECT_EQ(0, dl_ioc_detach(self->s.fd, self->s.ev));
	/* and again */
	EXPECT_EQ(0, dl_ioc_attach(self->s.fd, self->s.ev));
	EXPECT_EQ(0, dl_ioc_attach(self->s.fd, self->s.ev2));
}

TEST_F(sess, attach_twice)
{
	int dupfd;

	SESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_attach(self->s.fd, self->s.ev));
	EXPECT_EQ(-EEXIST, dl_ioc_attach(self->s.fd, self->s.ev));
	/* the event, not the fd number, is what counts */
	dupfd = dup(self->s.ev);
	ASSERT_LE(0, dupfd);
	EXPECT_EQ(-EEXIST, dl_ioc_attach(self->s.fd, dupfd));
	close(dupfd);
}

TEST_F(sess, attach_in_two_sessions)
{
	SESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_attach(self->s.fd, self->s.ev));
	EXPECT_EQ(-EEXIST, dl_ioc_attach(self->s.fd2, self->s.ev));
	/* free again once the first session closes */
	close(self->s.fd);
	self->s.fd = -1;
	EXPECT_EQ(0, dl_ioc_attach(self->s.fd2, self->s.ev));
}

TEST_F(sess, detach_not_attached)
{
	SESS_SKIPPED();
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->s.fd, self->s.ev));
	ASSERT_EQ(0, dl_ioc_attach(self->s.fd, self->s.ev));
	/* attached, but by the other session */
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->s.fd2, self->s.ev));
	EXPECT_EQ(0, dl_ioc_detach(self->s.fd, self->s.ev));
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->s.fd, self->s.ev));
}

/* The fd that ATTACH (or DETACH) is given is no event it may take. */
enum bad_fd {
	FD_CLOSED,			/* a dup() of an event, closed */
	FD_MINUS_1,
	FD_NOT_OPEN,			/* 1 << 30 */
	FD_PIPE_READ,
	FD_PIPE_WRITE,
	FD_DEV_NULL,
	FD_SESSION,			/* the session's own fd */
	FD_OTHER_SESSION,
	FD_NO_CALLCHAIN,		/* an event without PERF_SAMPLE_CALLCHAIN */
	FD_EXCLUDE_CALLCHAIN_USER,	/* an event with exclude_callchain_user */
};

SESS_FIXTURE(attach_fd)

FIXTURE_VARIANT(attach_fd) {
	enum bad_fd fd;
	bool detach;			/* DETACH rather than ATTACH */
	int err;
};

FIXTURE_VARIANT_ADD(attach_fd, closed) { .fd = FD_CLOSED, .err = EBADF };
FIXTURE_VARIANT_ADD(attach_fd, minus_1) { .fd = FD_MINUS_1, .err = EBADF };
FIXTURE_VARIANT_ADD(attach_fd, not_open) { .fd = FD_NOT_OPEN, .err = EBADF };
FIXTURE_VARIANT_ADD(attach_fd, pipe_read) { .fd = FD_PIPE_READ, .err = EINVAL };
FIXTURE_VARIANT_ADD(attach_fd, pipe_write) { .fd = FD_PIPE_WRITE, .err = EINVAL };
FIXTURE_VARIANT_ADD(attach_fd, dev_null) { .fd = FD_DEV_NULL, .err = EINVAL };
FIXTURE_VARIANT_ADD(attach_fd, session) { .fd = FD_SESSION, .err = EINVAL };
FIXTURE_VARIANT_ADD(attach_fd, other_session) { .fd = FD_OTHER_SESSION, .err = EINVAL };
FIXTURE_VARIANT_ADD(attach_fd, no_callchain) { .fd = FD_NO_CALLCHAIN, .err = EINVAL };
FIXTURE_VARIANT_ADD(attach_fd, exclude_callchain_user) {
	.fd = FD_EXCLUDE_CALLCHAIN_USER, .err = EINVAL,
};
FIXTURE_VARIANT_ADD(attach_fd, detach_minus_1) { .fd = FD_MINUS_1, .detach = true, .err = EBADF };
FIXTURE_VARIANT_ADD(attach_fd, detach_pipe) { .fd = FD_PIPE_READ, .detach = true, .err = EINVAL };

TEST_F(attach_fd, refused)
{
	int p[2] = { -1, -1 }, fd = -1, own = -1, ret;

	SESS_SKIPPED();
	switch (variant->fd) {
	case FD_CLOSED:
		fd = dup(self->s.ev);
		ASSERT_LE(0, fd);
		close(fd);
		break;
	case FD_MINUS_1:
		fd = -1;
		break;
	case FD_NOT_OPEN:
		fd = 1 << 30;
		break;
	case FD_PIPE_READ:
	case FD_PIPE_WRITE:
		ASSERT_EQ(0, pipe(p));
		fd = p[variant->fd == FD_PIPE_WRITE];
		break;
	case FD_DEV_NULL:
		fd = own = open("/dev/null", O_RDONLY);
		ASSERT_LE(0, fd);
		break;
	case FD_SESSION:
		fd = self->s.fd;
		break;
	case FD_OTHER_SESSION:
		fd = self->s.fd2;
		break;
	case FD_NO_CALLCHAIN:
		fd = own = open_event(PERF_SAMPLE_IP | PERF_SAMPLE_TID, false);
		ASSERT_LE(0, fd);
		break;
	case FD_EXCLUDE_CALLCHAIN_USER:
		fd = own = open_event(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, true);
		ASSERT_LE(0, fd);
		break;
	}
	ret = variant->detach ? dl_ioc_detach(self->s.fd, fd) : dl_ioc_attach(self->s.fd, fd);
	EXPECT_EQ(-variant->err, ret) TH_LOG("fd %d: %s", fd, strerror(-ret));
	if (own >= 0)
		close(own);
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
}

/* struct perf_defer_attach itself is bad: nothing gets attached. */
SESS_FIXTURE(attach_struct)

FIXTURE_VARIANT(attach_struct) {
	unsigned long cmd;
	__u32 size;
	__u64 reserved;
	bool raw;			/* pass addr, not the struct */
	unsigned long addr;
	int err;
};

#define ATTACH_SIZE(n)							\
	FIXTURE_VARIANT_ADD(attach_struct, size_##n) {			\
		.cmd = PERF_DEFER_IOC_ATTACH, .size = n, .err = EINVAL,	\
	}
ATTACH_SIZE(0);
ATTACH_SIZE(4);
ATTACH_SIZE(8);
ATTACH_SIZE(12);
ATTACH_SIZE(15);
ATTACH_SIZE(17);
ATTACH_SIZE(24);
ATTACH_SIZE(4096);
FIXTURE_VARIANT_ADD(attach_struct, reserved_nonzero) {
	.cmd = PERF_DEFER_IOC_ATTACH, .size = sizeof(struct perf_defer_attach), .reserved = 1,
	.err = EINVAL,
};
FIXTURE_VARIANT_ADD(attach_struct, detach_reserved_nonzero) {
	.cmd = PERF_DEFER_IOC_DETACH, .size = sizeof(struct perf_defer_attach),
	.reserved = 1ull << 63, .err = EINVAL,
};
FIXTURE_VARIANT_ADD(attach_struct, null_pointer) {
	.cmd = PERF_DEFER_IOC_ATTACH, .raw = true, .addr = 0, .err = EFAULT,
};
FIXTURE_VARIANT_ADD(attach_struct, detach_bad_pointer) {
	.cmd = PERF_DEFER_IOC_DETACH, .raw = true, .addr = 1, .err = EFAULT,
};

TEST_F(attach_struct, refused)
{
	struct {
		struct perf_defer_attach a;
		char pad[16];
	} big;

	SESS_SKIPPED();
	memset(&big, 0, sizeof(big));
	big.a.size = variant->size;
	big.a.perf_fd = self->s.ev;
	big.a.__reserved = variant->reserved;
	EXPECT_EQ(-1, ioctl(self->s.fd, variant->cmd, variant->raw ? (void *)variant->addr : &big))
		TH_LOG("size %u", variant->size);
	EXPECT_EQ(variant->err, errno);
	/* nothing got attached */
	EXPECT_EQ(-ENOENT, dl_ioc_detach(self->s.fd, self->s.ev));
}

/* ---- the ring and the unwind methods -------------------------------- */

TEST_F(sess, set_ring_bounds)
{
	SESS_SKIPPED();
	EXPECT_EQ(0, dl_ioc_set_ring(self->s.fd, 1));
	EXPECT_EQ(0, dl_ioc_set_ring(self->s.fd2, PERF_DEFER_RING_MAX_PAGES));
	/* a poll mark up to the last byte of the ring (ABI 1.5) */
	EXPECT_EQ(0, dl_ioc_set_ring_wakeup(self->s.fd, 1, 4095));
	EXPECT_EQ(0, dl_ioc_set_ring_wakeup(self->s.fd2, 2, 1));
}

/* SET_RING with a bad size of the ring or of its struct */
SESS_FIXTURE(set_ring)

FIXTURE_VARIANT(set_ring) {
	__u32 pages;
	int size_delta;			/* from sizeof(struct perf_defer_ring) */
	__u32 reserved;
	__u32 wakeup_bytes;
};

#define RING_PAGES(name, n)						\
	FIXTURE_VARIANT_ADD(set_ring, pages_##name) { .pages = n }
RING_PAGES(0, 0);
RING_PAGES(3, 3);
RING_PAGES(6, 6);
RING_PAGES(12, 12);
RING_PAGES(1023, 1023);
RING_PAGES(1025, 1025);
RING_PAGES(2048, 2048);
RING_PAGES(2g, 1u << 31);
RING_PAGES(4g_minus_1, 0xffffffffu);
FIXTURE_VARIANT_ADD(set_ring, reserved_nonzero) { .pages = 4, .reserved = 1 };
FIXTURE_VARIANT_ADD(set_ring, size_short) { .pages = 4, .size_delta = -1 };
FIXTURE_VARIANT_ADD(set_ring, size_long) { .pages = 4, .size_delta = 8 };
/* a poll mark the ring cannot reach */
FIXTURE_VARIANT_ADD(set_ring, wakeup_ring_size) { .pages = 4, .wakeup_bytes = 4 * 4096 };
FIXTURE_VARIANT_ADD(set_ring, wakeup_4g_minus_1) { .pages = 4, .wakeup_bytes = 0xffffffffu };

TEST_F(set_ring, refused)
{
	struct perf_defer_ring r = {
		.size = sizeof(r) + variant->size_delta,
		.data_pages = variant->pages,
		.wakeup_bytes = variant->wakeup_bytes,
		.__reserved = variant->reserved,
	};

	SESS_SKIPPED();
	EXPECT_EQ(-1, ioctl(self->s.fd, PERF_DEFER_IOC_SET_RING, &r)) TH_LOG("%u pages", r.data_pages);
	EXPECT_EQ(EINVAL, errno);
}

/* SET_UNWIND with a bad list of methods or a bad struct */
SESS_FIXTURE(set_unwind)

FIXTURE_VARIANT(set_unwind) {
	uint8_t methods[4];
	int size_delta;			/* from sizeof(struct perf_defer_unwind) */
	__u32 reserved;
};

FIXTURE_VARIANT_ADD(set_unwind, twice) {
	.methods = { PERF_DEFER_UNWIND_FP, PERF_DEFER_UNWIND_FP },
};
FIXTURE_VARIANT_ADD(set_unwind, unknown) { .methods = { 4 } };
FIXTURE_VARIANT_ADD(set_unwind, gap) {
	.methods = { PERF_DEFER_UNWIND_FP, 0, PERF_DEFER_UNWIND_SFRAME },
};
FIXTURE_VARIANT_ADD(set_unwind, size_short) { .size_delta = -1 };
FIXTURE_VARIANT_ADD(set_unwind, reserved_nonzero) { .reserved = 1 };

TEST_F(set_unwind, refused)
{
	struct perf_defer_unwind u = {
		.size = sizeof(u) + variant->size_delta,
		.__reserved = variant->reserved,
	};

	SESS_SKIPPED();
	memcpy(u.methods, variant->methods, sizeof(variant->methods));
	EXPECT_EQ(-1, ioctl(self->s.fd, PERF_DEFER_IOC_SET_UNWIND, &u));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(sess, set_unwind_ok_until_attached)
{
	static const uint8_t ok[] = { PERF_DEFER_UNWIND_EH_FRAME, PERF_DEFER_UNWIND_FP };

	SESS_SKIPPED();
	EXPECT_EQ(0, dl_ioc_set_unwind(self->s.fd, ok, sizeof(ok)));
	/* all 0: back to the module's parameter */
	EXPECT_EQ(0, dl_ioc_set_unwind(self->s.fd, NULL, 0));
	ASSERT_EQ(0, dl_ioc_attach(self->s.fd, self->s.ev));
	EXPECT_EQ(-EBUSY, dl_ioc_set_unwind(self->s.fd, ok, sizeof(ok)));
}

TEST_F(sess, set_ring_after_attach)
{
	SESS_SKIPPED();
	ASSERT_EQ(0, dl_ioc_attach(self->s.fd, self->s.ev));
	EXPECT_EQ(-EBUSY, dl_ioc_set_ring(self->s.fd, 4));
}

TEST_F(sess, set_ring_after_mmap)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m;

	SESS_SKIPPED();
	m = mmap(NULL, (1 + PERF_DEFER_RING_DEF_PAGES) * page, PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->s.fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(-EBUSY, dl_ioc_set_ring(self->s.fd, 4));
	munmap(m, (1 + PERF_DEFER_RING_DEF_PAGES) * page);
}

/* A ring is never executable: not at mmap(), nor later by mprotect(). */
TEST_F(sess, ring_never_executable)
{
	size_t len = (1 + PERF_DEFER_RING_DEF_PAGES) * sysconf(_SC_PAGESIZE);
	void *m;

	SESS_SKIPPED();
	m = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED, self->s.fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EPERM, errno);
	if (m != MAP_FAILED)
		munmap(m, len);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->s.fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(-1, mprotect(m, len, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, mprotect(m, len, PROT_READ));
	munmap(m, len);
}

TEST_F(sess, ring_layout)
{
	struct dl_session s = { .fd = -1 };
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	SESS_SKIPPED();
	ret = dl_session_open(&s, 0, 8);
	ASSERT_EQ(0, ret);
	/* checks version, cpu, data_offset, data_size of every CPU's ring */
	EXPECT_EQ(0, dl_session_map(&s));
	if (s.maps && s.maps[0]) {
		struct perf_defer_mmap_page *pg = s.maps[0];

		EXPECT_EQ(0, pg->data_head);
		EXPECT_EQ(0, pg->data_tail);
		EXPECT_EQ(0, pg->lost);
		EXPECT_EQ(8 * page, pg->data_size);
	}
	dl_session_close(&s);
}

/* ---- GET_STATS ------------------------------------------------------- */

TEST_F(sess, get_stats_ok)
{
	struct perf_defer_stats st = { .size = sizeof(st) };

	SESS_SKIPPED();
	EXPECT_EQ(0, ioctl(self->s.fd, PERF_DEFER_IOC_GET_STATS, &st));
	EXPECT_EQ(0, st.pending);
	EXPECT_EQ(sizeof(st), st.size);
}

/* GET_STATS with a bad struct, or with a size in the number that no ABI had */
SESS_FIXTURE(get_stats)

FIXTURE_VARIANT(get_stats) {
	unsigned int cmd_size;		/* 0: sizeof(struct perf_defer_stats) */
	int size_delta;			/* from sizeof(struct perf_defer_stats) */
	__u32 reserved;
	int err;
};

FIXTURE_VARIANT_ADD(get_stats, size_short) { .size_delta = -8, .err = EINVAL };
FIXTURE_VARIANT_ADD(get_stats, reserved_nonzero) { .reserved = 1, .err = EINVAL };
FIXTURE_VARIANT_ADD(get_stats, number_size_ver0_minus_8) {
	.cmd_size = PERF_DEFER_STATS_SIZE_VER0 - 8, .err = ENOTTY,
};
FIXTURE_VARIANT_ADD(get_stats, number_size_ver0_plus_4) {
	.cmd_size = PERF_DEFER_STATS_SIZE_VER0 + 4, .err = ENOTTY,
};

TEST_F(get_stats, refused)
{
	struct perf_defer_stats st = {
		.size = sizeof(st) + variant->size_delta,
		.__reserved = variant->reserved,
	};
	unsigned long cmd = PERF_DEFER_IOC_GET_STATS;

	SESS_SKIPPED();
	if (variant->cmd_size)
		cmd = _IOC(_IOC_READ | _IOC_WRITE, PERF_DEFER_MAGIC,
			   _IOC_NR(PERF_DEFER_IOC_GET_STATS), variant->cmd_size);
	EXPECT_EQ(-1, ioctl(self->s.fd, cmd, &st));
	EXPECT_EQ(variant->err, errno);
}

/*
 * A recorder of an older ABI asks with its shorter struct (1.0/1.1: up to
 * pending; 1.2: up to after_unwind; 1.3: up to table_stopped; 1.4 and 1.5:
 * up to table_cache_hits): it gets that, and nothing past it.
 */
SESS_FIXTURE(get_stats_older)

FIXTURE_VARIANT(get_stats_older) {
	unsigned int size;
};

FIXTURE_VARIANT_ADD(get_stats_older, abi_1_0) { .size = PERF_DEFER_STATS_SIZE_VER0 };
FIXTURE_VARIANT_ADD(get_stats_older, abi_1_2) {
	.size = offsetof(struct perf_defer_stats, frames_fp),
};
FIXTURE_VARIANT_ADD(get_stats_older, abi_1_3) {
	.size = offsetof(struct perf_defer_stats, table_cache_hits),
};
FIXTURE_VARIANT_ADD(get_stats_older, abi_1_5) {
	.size = offsetof(struct perf_defer_stats, in_exec),
};

TEST_F(get_stats_older, answered)
{
	unsigned int size = variant->size;
	struct perf_defer_stats st;
	unsigned long cmd;

	SESS_SKIPPED();
	cmd = _IOC(_IOC_READ | _IOC_WRITE, PERF_DEFER_MAGIC, _IOC_NR(PERF_DEFER_IOC_GET_STATS), size);
	ASSERT_NE(PERF_DEFER_IOC_GET_STATS, cmd);
	memset(&st, 0xa5, sizeof(st));
	st.size = size;
	st.__reserved = 0;
	ASSERT_EQ(0, ioctl(self->s.fd, cmd, &st)) TH_LOG("%u: %s", size, strerror(errno));
	EXPECT_EQ(size, st.size);
	EXPECT_EQ(0, st.pending);
	/* nothing past the older struct is written */
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, st.in_exec);
	if (size < offsetof(struct perf_defer_stats, in_exec))
		EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, st.table_cache_hits);
	if (size < offsetof(struct perf_defer_stats, table_cache_hits))
		EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, st.table_stopped);
	if (size == PERF_DEFER_STATS_SIZE_VER0)
		EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, st.after_unwind);
	/* an older number with the new size, and the other way round */
	st.size = sizeof(st);
	EXPECT_EQ(-1, ioctl(self->s.fd, cmd, &st));
	EXPECT_EQ(EINVAL, errno);
	st.size = size;
	EXPECT_EQ(-1, ioctl(self->s.fd, PERF_DEFER_IOC_GET_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
}

int main(int argc, char **argv)
{
	/* as defer_test: perf's task-event jump label stays on (see there) */
	dl_hold_perf_sched_events();
	return test_harness_run(argc, argv);
}
