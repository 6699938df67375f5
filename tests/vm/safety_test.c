// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a real machine could do to the module that the other tests never
 * try, run as root in the QEMU guest:
 *
 *  - exec: a sample taken before an execve() never gets the new image's
 *    stack, nor, across a set-user-ID exec, its registers and stack;
 *  - livelock: events that fire inside the module's own task_work
 *    (kmem:kfree, sched:sched_waking, page faults) do not queue it again,
 *    so the task still dies on SIGKILL and unwinds stay within entries;
 *  - dumps of a stack that ends at the top of the address space (ASLR
 *    off) are whole;
 *  - one user cannot take every session, nor lock more ring memory than
 *    perf would let them lock for its own rings.
 *
 *	safety_test [-l] [-t TEST]...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "defer_lib.h"
#include "kselftest_harness.h"
#include "dl_harness.h"

#define PERIOD_NS	500000		/* cpu-clock every 0.5 ms */
#define MAX_CHILD	1
#define MAX_PERF	4
#define MAX_SESS	3
#if defined(__aarch64__)
#define DUMP_REGS	0x1ffffffffULL	/* perf's arm64 DWARF registers */
#define DUMP_REG_SP	31		/* their index in a dump of DUMP_REGS */
#define DUMP_REG_IP	32
#define USER_TOP	0x1000000000000ULL	/* stack top without ASLR (48-bit VA) */
#else
#define DUMP_REGS	0xff0fffULL	/* perf's x86-64 DWARF registers */
#define DUMP_REG_SP	7		/* their index in a dump of DUMP_REGS */
#define DUMP_REG_IP	8
#define USER_TOP	0x7ffffffff000ULL	/* stack top without ASLR */
#endif
#define SUID_TARGET	"/tmp/pd_suid_target"

FIXTURE(safe) {
	DL_RUN_FIELDS(MAX_CHILD, MAX_PERF, MAX_SESS);
};

FIXTURE_SETUP(safe)
{
	DL_RUN_INIT(self);
}

FIXTURE_TEARDOWN(safe)
{
	DL_RUN_RESET(self);
	dl_syms_free(self->syms);
	unlink(SUID_TARGET);
	DL_UNLOAD(self);
}

#define SPAWN(...)							\
	do {								\
		char *__argv[] = { __VA_ARGS__, NULL };			\
		ASSERT_EQ(0, dl_child_spawn(&self->c[0], __argv));	\
	} while (0)

#define EV_OPEN(i, attr)						\
	ASSERT_EQ(0, dl_perf_open(&self->p[i], i, attr, self->c[0].pid, DL_ALL_CPUS, 0))

#define ATTACH(si, pi)							\
	ASSERT_EQ(0, dl_session_attach(&self->s[si], &self->p[pi], &self->d))

/* start the workload, collect until it exits: with 0, records well formed */
#define GO_COLLECT_OK()							\
	do {								\
		int __st;						\
		ASSERT_EQ(0, dl_child_go(&self->c[0]));			\
		__st = dl_collect(&self->c[0], self->p, MAX_PERF, self->s, \
				  MAX_SESS, &self->d, NULL);		\
		ASSERT_TRUE(WIFEXITED(__st) && WEXITSTATUS(__st) == 0)	\
			TH_LOG("wait status %#x", __st);		\
		ASSERT_EQ(0, self->d.nerr) TH_LOG("%s", self->d.err);	\
	} while (0)

/* the exec tests: module loaded, sys_enter_execve's id, wl_syscall's path */
#define EXEC_SETUP(id, target)						\
	do {								\
		LOAD_MODULE();						\
		id = tp_id("syscalls/sys_enter_execve");		\
		if (id < 0)						\
			SKIP(return, "no syscalls:sys_enter_execve tracepoint"); \
		self_path(target, sizeof(target), "wl_syscall");	\
	} while (0)

/* a session of @pages pages; @dump > 0: with dumps of that many bytes */
#define SESS_OPEN(i, pages, dump)					\
	do {								\
		ASSERT_EQ(0, dl_session_open(&self->s[i], i, pages));	\
		if (dump)						\
			ASSERT_EQ(0, dl_ioc_set_dump(self->s[i].fd,	\
				PERF_DEFER_DUMP_REGS_STACK, dump));	\
		ASSERT_EQ(0, dl_session_map(&self->s[i]));		\
	} while (0)

/* the id of tracepoint "group/name", or -1 */
static long tp_id(const char *tp)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];
	long id = -1;
	size_t i;
	FILE *f;

	mount("tracefs", roots[0], "tracefs", 0, NULL);	/* may be there already */
	for (i = 0; i < ARRAY_SIZE(roots) && id < 0; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], tp);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

/* a sampling attr like dl_attr_cpu_clock()'s, on every @period events */
static void attr_event(struct perf_event_attr *attr, uint32_t type, uint64_t config,
		       uint64_t period)
{
	dl_attr_cpu_clock(attr, period);
	attr->type = type;
	attr->config = config;
}

/* e_entry of an ELF64 executable, or 0 */
static uint64_t elf_entry(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, &eh, sizeof(eh));
	close(fd);
	return n == sizeof(eh) ? eh.e_entry : 0;
}

static void self_path(char *buf, size_t len, const char *bin)
{
	snprintf(buf, len, "%s/%s", dl_self_dir(), bin);
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * The deferred samples of event @ev: does any session hold a record or a
 * dump with one of their cookies?  Returns the number of such samples;
 * counts what was written for them into *leaked.
 */
static size_t cookies_of(struct __test_metadata *_metadata, const struct dl_data *d, int ev,
			 size_t *leaked, uint64_t entry)
{
	size_t i, j, n = 0;
	uint64_t cookie;

	*leaked = 0;
	for (i = 0; i < d->ns; i++) {
		if (d->s[i].ev != ev || !dl_deferred(&d->s[i], &cookie))
			continue;
		n++;
		for (j = 0; j < d->nr; j++) {
			if (d->r[j].cookie != cookie || d->r[j].sid.tid != d->s[i].tid)
				continue;
			(*leaked)++;
			TH_LOG("record of cookie %#llx: %u ips, ips[0] %#llx%s",
			       (unsigned long long)cookie, d->r[j].nr,
			       (unsigned long long)(d->r[j].nr ? d->r[j].ips[0] : 0),
			       d->r[j].nr && d->r[j].ips[0] == entry ? " (the new image's entry)" : "");
		}
		for (j = 0; j < d->nu; j++) {
			if (d->u[j].cookie != cookie || d->u[j].sid.tid != d->s[i].tid)
				continue;
			(*leaked)++;
			TH_LOG("dump of cookie %#llx: %llu bytes of stack",
			       (unsigned long long)cookie, (unsigned long long)d->u[j].dyn_size);
		}
	}
	return n;
}

/*
 * An execve() from a task sampled at sys_enter_execve: the sample's entry
 * ends in the new image, whose stack it never saw.  No record for it.
 */
TEST_F_TIMEOUT(safe, exec_no_new_image_stack, 120)
{
	struct perf_event_attr attr;
	char target[4096];
	size_t n, leaked;
	long id;

	EXEC_SETUP(id, target);
	SESS_OPEN(0, 64, 0);
	SPAWN("wl_exec", "-l", "200", "--", target, "-t", "200", "-c", "64", "-d", "4");
	/* event 0 at the exec, event 1 all along */
	attr_event(&attr, PERF_TYPE_TRACEPOINT, id, 1);
	EV_OPEN(0, &attr);
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	EV_OPEN(1, &attr);
	ATTACH(0, 0);
	ATTACH(0, 1);
	GO_COLLECT_OK();
	n = cookies_of(_metadata, &self->d, 0, &leaked, elf_entry(target));
	TH_LOG("%zu deferred samples at sys_enter_execve, %zu records of %zu in all for them",
	       n, leaked, self->d.nr);
	ASSERT_LT(0, n) TH_LOG("no deferred sample at the exec");
	EXPECT_EQ(0, leaked);
	/* the rest still works: the image before and after the exec */
	EXPECT_LT(n, self->d.nr);
}

/*
 * A set-user-ID exec under sys_enter_execve, as an unprivileged user who
 * attached it to their own process would see it: neither the frame-pointer
 * session nor the dump session gets anything of the new image (its entry
 * IP, registers, initial stack with auxv and AT_RANDOM).
 */
TEST_F_TIMEOUT(safe, setuid_exec_no_record, 120)
{
	struct perf_event_attr attr;
	char target[4096], cmd[8192];
	size_t i, n0, n1, leaked0, leaked1, of_new = 0;
	uint64_t entry;
	long id;

	EXEC_SETUP(id, target);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chown 0:0 %s && chmod 4755 %s",
		 target, SUID_TARGET, SUID_TARGET, SUID_TARGET);
	ASSERT_EQ(0, system(cmd));
	entry = elf_entry(SUID_TARGET);
	ASSERT_NE(0, entry);
	SESS_OPEN(0, 64, 0);
	SESS_OPEN(1, 64, 8192);
	SPAWN("wl_exec", "-u", "65534", "-l", "200", "--", SUID_TARGET, "-t", "100", "-c", "64");
	attr_event(&attr, PERF_TYPE_TRACEPOINT, id, 1);
	attr.sample_regs_user = DUMP_REGS;
	EV_OPEN(0, &attr);
	EV_OPEN(1, &attr);
	ATTACH(0, 0);
	ATTACH(1, 1);
	GO_COLLECT_OK();
	n0 = cookies_of(_metadata, &self->d, 0, &leaked0, entry);
	n1 = cookies_of(_metadata, &self->d, 1, &leaked1, entry);
	for (i = 0; i < self->d.nr; i++)
		of_new += self->d.r[i].nr && self->d.r[i].ips[0] == entry;
	for (i = 0; i < self->d.nu; i++)
		of_new += self->d.u[i].nregs > DUMP_REG_IP && self->d.u[i].regs[DUMP_REG_IP] == entry;
	TH_LOG("execve samples: %zu and %zu; records and dumps for them: %zu and %zu; "
	       "at the new image's entry: %zu", n0, n1, leaked0, leaked1, of_new);
	ASSERT_LT(0, n0);
	ASSERT_LT(0, n1);
	EXPECT_EQ(0, leaked0);
	EXPECT_EQ(0, leaked1);
	EXPECT_EQ(0, of_new);
}

/* drain every ring of the run once */
static void drain_all(FIXTURE_DATA(safe) *self)
{
	int i;

	for (i = 0; i < MAX_PERF; i++)
		dl_perf_drain(&self->p[i], &self->d);
	for (i = 0; i < MAX_SESS; i++)
		dl_session_drain(&self->s[i], &self->d);
}

/* drain for @ms, polling the sessions; true if the child exited */
static bool run_for(FIXTURE_DATA(safe) *self, int ms, int *status)
{
	struct pollfd pfd[MAX_SESS];
	struct timespec t0, t;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (i = 0; i < MAX_SESS; i++)
			pfd[i] = (struct pollfd){ .fd = self->s[i].fd, .events = POLLIN };
		poll(pfd, MAX_SESS, 10);
		drain_all(self);
		if (waitpid(self->c[0].pid, status, WNOHANG) == self->c[0].pid) {
			self->c[0].pid = 0;
			return true;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			return false;
	}
}

/*
 * Counting events of the child's syscalls and user faults; with every
 * interrupt of the machine over the run, their sum bounds the child's
 * kernel entries.  The interrupts come from /proc/interrupts, not from
 * their tracepoints: enabling one patches the interrupt's handler while
 * the other CPU runs it (text_poke_bp()'s own sync IPI runs
 * __sysvec_call_function_single()), and multi-threaded QEMU has then let
 * a stale int3 through after the patching was done, which the kernel
 * dies of ("Oops: int3" at __sysvec_call_function_single+0xf, 6.18).
 */
static const char *const entry_tps[] = {
	"raw_syscalls/sys_enter", "exceptions/page_fault_user",
};

/* every interrupt taken so far, all CPUs and all lines of /proc/interrupts */
static uint64_t interrupts_total(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[4096], *p, *end;
	uint64_t sum = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		p = strchr(line, ':');
		if (!p)
			continue;	/* the CPU header */
		for (p++;; p = end) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			sum += v;
		}
	}
	fclose(f);
	return sum;
}

/*
 * Samples fired by what the task_work itself does: kfree() of its buffer,
 * the wake-up of the reader, the walk's page faults.  Each would queue the
 * task_work again if a sample after the unwind made a new request, and
 * task_work_run() loops until the list is empty: the task would never
 * return to user space, nor die on SIGKILL.
 */
TEST_F_TIMEOUT(safe, no_livelock_from_own_task_work, 120)
{
	static const char *const tps[] = { "kmem/kfree", "sched/sched_waking" };
	char rate[32], pct[32];
	struct perf_defer_stats st0, st1, delta;
	struct perf_event_attr attr;
	int cfd[ARRAY_SIZE(entry_tps)];
	uint64_t entries = 0, irqs, v;
	bool exited;
	size_t i;
	int status = 0;
	long id;

	LOAD_MODULE();
	for (i = 0; i < ARRAY_SIZE(tps); i++)
		if (tp_id(tps[i]) < 0)
			SKIP(return, "no %s tracepoint", tps[i]);
	/* no throttling: it would break the loop, slowly */
	read_file("/proc/sys/kernel/perf_event_max_sample_rate", rate, sizeof(rate));
	read_file("/proc/sys/kernel/perf_cpu_time_max_percent", pct, sizeof(pct));
	/*
	 * the rate first: it cannot be written while throttling is off,
	 * which an earlier test in this guest (stress.sh) may have left so
	 */
	ASSERT_EQ(0, write_file("/proc/sys/kernel/perf_cpu_time_max_percent", "25"));
	ASSERT_EQ(0, write_file("/proc/sys/kernel/perf_event_max_sample_rate", "100000000"));
	ASSERT_EQ(0, write_file("/proc/sys/kernel/perf_cpu_time_max_percent", "0"));

	for (i = 0; i < MAX_SESS; i++)
		SESS_OPEN(i, 64, 0);
	SPAWN("wl_syscall", "-t", "0", "-c", "64", "-d", "4");
	for (i = 0; i < ARRAY_SIZE(tps); i++) {
		attr_event(&attr, PERF_TYPE_TRACEPOINT, tp_id(tps[i]), 1);
		EV_OPEN(i, &attr);
		ATTACH(i, i);
	}
	attr_event(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1);
	EV_OPEN(2, &attr);
	ATTACH(2, 2);
	for (i = 0; i < ARRAY_SIZE(entry_tps); i++) {
		struct perf_event_attr c = {
			.size = sizeof(c), .type = PERF_TYPE_TRACEPOINT,
			.disabled = 1, .enable_on_exec = 1, .inherit = 1,
		};

		cfd[i] = -1;
		id = tp_id(entry_tps[i]);
		if (id < 0) {
			TH_LOG("no %s tracepoint: not counted", entry_tps[i]);
			continue;
		}
		c.config = id;
		cfd[i] = syscall(SYS_perf_event_open, &c, self->c[0].pid, -1, -1, 0);
		ASSERT_LE(0, cfd[i]) TH_LOG("%s: %s", entry_tps[i], strerror(errno));
	}
	ASSERT_EQ(0, dl_get_stats(self->s[0].fd, &st0));
	irqs = interrupts_total();
	ASSERT_LT(0, irqs) TH_LOG("no interrupt counted in /proc/interrupts");
	ASSERT_EQ(0, dl_child_go(&self->c[0]));

	EXPECT_FALSE(run_for(self, 1000, &status)) TH_LOG("the workload ended by itself");
	ASSERT_EQ(0, kill(self->c[0].pid, SIGKILL));
	/* not a timing: a livelocked task never dies; 5 s under TCG is ample */
	exited = run_for(self, 5000, &status);
	ASSERT_EQ(0, dl_get_stats(self->s[0].fd, &st1));
	irqs = interrupts_total() - irqs;
	EXPECT_TRUE(exited) TH_LOG("the task did not die within 5 s of SIGKILL");
	if (!exited) {
		/* detached, its samples make no requests: the loop ends */
		for (i = 0; i < MAX_SESS; i++)
			dl_session_close(&self->s[i]);
		exited = run_for(self, 10000, &status);
		TH_LOG("after closing the sessions: %s", exited ? "died" : "still running");
	}
	for (i = 0; i < ARRAY_SIZE(entry_tps); i++) {
		if (cfd[i] < 0)
			continue;
		if (read(cfd[i], &v, sizeof(v)) == sizeof(v))
			entries += v;
		close(cfd[i]);
	}
	write_file("/proc/sys/kernel/perf_cpu_time_max_percent", pct);
	write_file("/proc/sys/kernel/perf_event_max_sample_rate", rate);
	ASSERT_TRUE(exited);
	dl_stats_delta(&st0, &st1, &delta);
	dl_stats_log("module counters", &delta);
	TH_LOG("kernel entries at most %llu (syscalls and user faults %llu, interrupts %llu)",
	       (unsigned long long)(entries + irqs), (unsigned long long)entries,
	       (unsigned long long)irqs);
	entries += irqs;
	EXPECT_LT(0, delta.unwinds);
	EXPECT_LE(delta.unwinds, entries);
}

/*
 * With ASLR off the stack ends right at the top of the user address
 * space: a dump near it is what lies between the SP and the top, not
 * nothing (a copy that crosses the top fails access_ok() whole).
 */
TEST_F_TIMEOUT(safe, dump_whole_without_aslr, 120)
{
	struct perf_event_attr attr;
	char target[4096];
	size_t i, near = 0, whole = 0;
	uint64_t closest = UINT64_MAX;

	LOAD_MODULE();
	self_path(target, sizeof(target), "wl_syscall");
	/* 32 KiB: more than the initial stack above main()'s frames */
	SESS_OPEN(0, 64, 32768);
	/* its main thread reads: samples on the stack right below the top */
	SPAWN("wl_exec", "-R", "--", target, "-t", "300", "-m", "-c", "64", "-d", "4");
	dl_attr_cpu_clock(&attr, PERIOD_NS);
	attr.sample_regs_user = DUMP_REGS;
	EV_OPEN(0, &attr);
	ATTACH(0, 0);
	GO_COLLECT_OK();
	for (i = 0; i < self->d.nu; i++) {
		const struct dl_dump *u = &self->d.u[i];
		uint64_t sp, room;

		if (u->abi != PERF_SAMPLE_REGS_ABI_64 || u->nregs <= DUMP_REG_SP)
			continue;
		sp = u->regs[DUMP_REG_SP];
		if (sp < USER_TOP && USER_TOP - sp < closest)
			closest = USER_TOP - sp;
		if (sp >= USER_TOP || USER_TOP - sp >= u->stack_size)
			continue;
		room = USER_TOP - sp;
		near++;
		if (u->dyn_size == room)
			whole++;
		else if (near - whole <= 3)
			TH_LOG("sp %#llx: %llu bytes to the top, dump of %llu",
			       (unsigned long long)sp, (unsigned long long)room,
			       (unsigned long long)u->dyn_size);
	}
	TH_LOG("%zu dumps, %zu within a dump's size of the top, %zu of them whole; "
	       "the closest SP %#llx bytes below it", self->d.nu, near, whole,
	       (unsigned long long)closest);
	ASSERT_LT(0, near) TH_LOG("no dump near the top: was ASLR off?");
	EXPECT_EQ(near, whole);
}

/* open sessions as euid @uid until one fails; their fds into fd[] */
static int open_sessions(int uid, int *fd, int max, int *err)
{
	int n = 0;

	*err = 0;
	if (uid && seteuid(uid))
		return -1;
	while (n < max) {
		fd[n] = open("/dev/" PERF_DEFER_DEVICE_NAME, O_RDWR | O_CLOEXEC);
		if (fd[n] < 0) {
			*err = errno;
			break;
		}
		n++;
	}
	if (uid && seteuid(0))
		return -1;
	return n;
}

/*
 * Sessions are machine-wide (PD_MAX_SESSIONS, 16): with the device opened
 * to all, one user without CAP_PERFMON gets user_sessions of them (4 by
 * default), and users together never take the 2 kept for CAP_PERFMON.
 */
TEST_F_TIMEOUT(safe, user_session_limits, 60)
{
	int fd[40], n, m, k, err, i;

	LOAD_MODULE_WITH("dev_mode=0666");

	n = open_sessions(65534, fd, 16, &err);
	TH_LOG("nobody opened %d sessions (%s)", n, err ? strerror(err) : "no error");
	EXPECT_EQ(4, n);
	EXPECT_EQ(EBUSY, err);
	/* with the limit raised to 14, users still leave root 2 */
	ASSERT_EQ(0, write_file("/sys/module/" DL_MODNAME "/parameters/user_sessions", "14"));
	m = open_sessions(65533, fd + n, 16, &err);
	TH_LOG("a second user opened %d sessions (%s)", m, err ? strerror(err) : "no error");
	EXPECT_EQ(14 - n, m);
	EXPECT_EQ(EBUSY, err);
	k = open_sessions(0, fd + n + m, 16, &err);
	TH_LOG("root opened %d sessions (%s)", k, err ? strerror(err) : "no error");
	EXPECT_EQ(16 - n - m, k);
	/* 1..14 only */
	EXPECT_EQ(-EINVAL, write_file("/sys/module/" DL_MODNAME "/parameters/user_sessions", "0"));
	EXPECT_EQ(-EINVAL, write_file("/sys/module/" DL_MODNAME "/parameters/user_sessions", "15"));
	for (i = 0; i < n + m + k; i++)
		close(fd[i]);
}

/* ---- ring memory, counted as perf counts its own rings ----------------- */

#define MLOCK_PARAM	"/sys/module/" DL_MODNAME "/parameters/mlock_kb"
#define MEM_PAGES	16	/* data pages per CPU of each session */

/* what one run of mem_child() saw */
struct mem_try {
	int	err[3];		/* 1st session, 2nd, 2nd again after closing the 1st */
	long	pin_kb[3];	/* VmPin after each */
	long	end_kb;		/* VmPin once both are closed */
};

static long vm_pin_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* a session of MEM_PAGES with its rings made (by mapping cpu 0's): 0 or errno */
static int mem_session(int *fd)
{
	size_t len = (size_t)(1 + MEM_PAGES) * sysconf(_SC_PAGESIZE);
	void *p;
	int ret;

	*fd = open("/dev/" PERF_DEFER_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (*fd < 0)
		return errno;
	ret = dl_ioc_set_ring(*fd, MEM_PAGES);
	if (ret)
		return -ret;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/*
 * As @uid (0: stay root) under RLIMIT_MEMLOCK @rlim_kb: make two sessions'
 * rings, close the first, try the second again if it failed.
 */
static int mem_run(uid_t uid, long rlim_kb, struct mem_try *t)
{
	int pfd[2], st, fd[2] = { -1, -1 };
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		struct rlimit rl = { rlim_kb << 10, rlim_kb << 10 };

		if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
		    (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))))
			_exit(2);
		t->err[0] = mem_session(&fd[0]);
		t->pin_kb[0] = vm_pin_kb();
		t->err[1] = mem_session(&fd[1]);
		t->pin_kb[1] = vm_pin_kb();
		close(fd[0]);
		if (t->err[1]) {
			close(fd[1]);
			t->err[2] = mem_session(&fd[1]);
		}
		t->pin_kb[2] = vm_pin_kb();
		close(fd[1]);
		t->end_kb = vm_pin_kb();
		_exit(write(pfd[1], t, sizeof(*t)) == sizeof(*t) ? 0 : 3);
	}
	close(pfd[1]);
	st = read(pfd[0], t, sizeof(*t)) == sizeof(*t) ? 0 : -1;
	close(pfd[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

#define MEM_LOG(what, t)						\
	TH_LOG("%s: errors %d %d %d, VmPin %ld %ld %ld -> %ld kB", what,	\
	       (t).err[0], (t).err[1], (t).err[2], (t).pin_kb[0],	\
	       (t).pin_kb[1], (t).pin_kb[2], (t).end_kb)

/*
 * A session's rings count as perf_mmap() counts perf's own: first against
 * the user's share of mlock_kb per online CPU (perf's per-user locked_vm,
 * which perf's rings share), the rest against RLIMIT_MEMLOCK through the
 * caller's pinned memory (VmPin), refused past it without CAP_IPC_LOCK,
 * and all of it given back when the session ends.
 */
TEST_F_TIMEOUT(safe, ring_memory_limits, 60)
{
	long page_kb = sysconf(_SC_PAGESIZE) >> 10;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	long one_kb = dl_possible_cpus() * (1 + MEM_PAGES) * page_kb;
	char val[32];
	struct mem_try t;

	LOAD_MODULE_WITH("dev_mode=0666 mlock_kb=0");

	/* no per-user share: room under RLIMIT_MEMLOCK for one session */
	memset(&t, 0, sizeof(t));
	ASSERT_EQ(0, mem_run(65534, one_kb + one_kb / 2, &t));
	MEM_LOG("nobody, mlock_kb 0, RLIMIT_MEMLOCK for one", t);
	EXPECT_EQ(0, t.err[0]);
	EXPECT_EQ(EPERM, t.err[1]);
	EXPECT_EQ(0, t.err[2]);
	EXPECT_EQ(one_kb, t.pin_kb[0]);
	EXPECT_EQ(one_kb, t.pin_kb[1]);
	EXPECT_EQ(one_kb, t.pin_kb[2]);
	EXPECT_EQ(0, t.end_kb);

	/* a per-user share of one session, nothing under RLIMIT_MEMLOCK */
	snprintf(val, sizeof(val), "%ld", (one_kb / page_kb + online - 1) / online * page_kb);
	ASSERT_EQ(0, write_file(MLOCK_PARAM, val));
	memset(&t, 0, sizeof(t));
	ASSERT_EQ(0, mem_run(65534, 0, &t));
	MEM_LOG("nobody, mlock_kb for one, RLIMIT_MEMLOCK 0", t);
	EXPECT_EQ(0, t.err[0]);
	EXPECT_EQ(EPERM, t.err[1]);
	EXPECT_EQ(0, t.err[2]);
	EXPECT_EQ(0, t.pin_kb[0]);
	EXPECT_EQ(0, t.pin_kb[2]);

	/* CAP_IPC_LOCK goes past RLIMIT_MEMLOCK, still counted */
	ASSERT_EQ(0, write_file(MLOCK_PARAM, "0"));
	memset(&t, 0, sizeof(t));
	ASSERT_EQ(0, mem_run(0, 0, &t));
	MEM_LOG("root, mlock_kb 0, RLIMIT_MEMLOCK 0", t);
	EXPECT_EQ(0, t.err[0]);
	EXPECT_EQ(0, t.err[1]);
	EXPECT_EQ(one_kb, t.pin_kb[0]);
	EXPECT_EQ(2 * one_kb, t.pin_kb[1]);
	EXPECT_EQ(0, t.end_kb);
}

TEST_HARNESS_MAIN
