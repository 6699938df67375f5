// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf_data_test - the perf.data writer and reader (recorder/perf-data-*.c)
 *
 * Round trips through our own reader, then Debian's perf 6.1 (when
 * /usr/bin/perf is there) reading what the writer wrote: --header-only,
 * buildid-list and script, all without a warning.  Corrupt input, every
 * truncation and random byte flips, through the reader, dump and stitch
 * in process, under ASan and UBSan.  Write errors: /dev/full and a full
 * tmpfs.  With $PD_FUZZ_SEEDS set it writes the fuzzer's seeds instead.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <time.h>

#include "kselftest_harness.h"

#include "dump.h"
#define T_TMPDIR
#include "pd_test_fake.h"
#include "stitch.h"

#define PERF		"/usr/bin/perf"
#define ID0		301
#define ID1		302
#define ID2		303

/* A small but complete file: two attrs, every record type the stitcher meets. */
static int write_small(const char *path, bool deferred)
{
	struct perf_event_attr a0 = t_attr(deferred, true), a1 = t_attr(deferred, false);
	static const char *const argv[] = { "record", "-e", "cpu-clock" };
	const __u64 k[] = { 0xffffffff81001000ULL }, u[] = { 0x401000, 0x402000 };
	__u64 ids0[] = { ID0, ID1 }, ids1[] = { ID2 };
	struct build_id_entry bid = {
		.path = "/usr/bin/true", .pid = -1, .size = 20,
		.build_id = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 },
	};
	struct perf_data_features f = {
		.cmdline = "/usr/bin/perf-defer", .argc = 3, .argv = (const char **)argv,
		.build_ids = &bid, .nr_build_ids = 1,
	};
	struct perf_data_writer *w = perf_data_writer__open(path);
	struct tev e;
	int err;

	if (!w)
		return -errno;
	err = perf_data_writer__add_attr(w, &a0, ids0, 2, "cpu-clock");
	err = err ?: perf_data_writer__add_attr(w, &a1, ids1, 1, "task-clock");
	t_comm(&e, 5, 5, "small", 10, ID0, 0, true);
	err = err ?: perf_data_writer__write(w, e.w, tev__size(&e));
	t_mmap2(&e, 5, 5, 0x400000, 0x10000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		"/usr/bin/true", 11, ID0, 0);
	err = err ?: perf_data_writer__write(w, e.w, tev__size(&e));
	t_sample_deferred(&e, 5, 5, 20, ID1, 1, k, 1, 0x200000003ULL);
	err = err ?: perf_data_writer__write(w, e.w, tev__size(&e));
	t_sample(&e, 5, 5, 21, ID2, 0, u[0], (const __u64[]){ PERF_CONTEXT_USER, u[0], u[1] }, 3);
	err = err ?: perf_data_writer__write(w, e.w, tev__size(&e));
	t_round(&e);
	err = err ?: perf_data_writer__write(w, e.w, tev__size(&e));
	t_lost(&e, ID0, 2, 22, ID0, 0);
	err = err ?: perf_data_writer__write(w, e.w, tev__size(&e));
	t_deferred(&e, 5, 5, 30, ID0, 0, 0x200000003ULL, u, 2);
	err = err ?: perf_data_writer__write(w, e.w, tev__size(&e));
	t_exit(&e, 5, 5, 40, ID0, 0);
	err = err ?: perf_data_writer__write(w, e.w, tev__size(&e));
	if (err) {
		perf_data_writer__abort(w);
		return err;
	}
	return perf_data_writer__close(w, &f);
}

/* Everything the reader gives about a file, for the round trip. */
TEST(roundtrip)
{
	const char *path = t_tmp_path("roundtrip.data");
	const struct perf_event_header *ev;
	const struct evsel *a;
	struct perf_data_reader *r;
	struct utsname uts;
	const void *data;
	size_t size;
	int types[16], n = 0;

	ASSERT_NE(NULL, path);
	ASSERT_EQ(0, write_small(path, true)) TH_LOG("%s", error__msg());
	r = perf_data_reader__open(path);
	ASSERT_NE(NULL, r) TH_LOG("%s", error__msg());

	ASSERT_EQ(2, perf_data_reader__nr_attrs(r));
	a = perf_data_reader__attr(r, 0);
	ASSERT_EQ(sizeof(struct perf_event_attr), a->file_size);
	ASSERT_EQ(T_SAMPLE_TYPE, a->attr.sample_type);
	ASSERT_TRUE(attr__defer_callchain(&a->attr));
	ASSERT_TRUE(attr__defer_output(&a->attr));
	ASSERT_EQ(1, (int)a->attr.sample_id_all);
	ASSERT_EQ(2, a->nr_ids);
	ASSERT_EQ(ID0, a->ids[0]);
	ASSERT_EQ(ID1, a->ids[1]);
	ASSERT_STREQ("cpu-clock", a->name);
	a = perf_data_reader__attr(r, 1);
	ASSERT_TRUE(attr__defer_callchain(&a->attr));
	ASSERT_FALSE(attr__defer_output(&a->attr));
	ASSERT_EQ(1, a->nr_ids);
	ASSERT_EQ(ID2, a->ids[0]);
	ASSERT_STREQ("task-clock", a->name);

	while (perf_data_reader__next(r, &ev) > 0) {
		const struct evsel *ea;
		struct perf_sample s;

		ASSERT_EQ(0, perf_data_reader__offset(r) % 8);
		types[n++] = ev->type;
		if (ev->type >= PD_RECORD_USER_TYPE_START)
			continue;	/* perf's own records: no attr */
		ea = evlist__find(perf_data_reader__evlist(r), ev);
		ASSERT_NE(NULL, ea) TH_LOG("%s", error__msg());
		ASSERT_EQ(0, perf_sample__parse(&ea->attr, ev, &s)) TH_LOG("%s", error__msg());
		if (ev->type == PERF_RECORD_SAMPLE && s.id == ID1) {
			ASSERT_EQ(0, ea->idx);
			ASSERT_TRUE(s.deferred);
			ASSERT_EQ(0x200000003ULL, s.cookie);
			ASSERT_EQ(4, s.nr);
			ASSERT_EQ(1, s.cpu);
			ASSERT_EQ(20, s.time);
		}
		if (ev->type == PERF_RECORD_SAMPLE && s.id == ID2) {
			ASSERT_EQ(1, ea->idx);
			ASSERT_FALSE(s.deferred);
		}
		if (ev->type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED) {
			ASSERT_EQ(0x200000003ULL, s.cookie);
			ASSERT_EQ(2, s.nr);
			ASSERT_EQ(0x402000, s.callchain[1]);
			ASSERT_EQ(5, s.tid);
			ASSERT_EQ(30, s.time);
			ASSERT_EQ(ID0, s.id);
		}
		if (ev->type == PERF_RECORD_LOST) {
			ASSERT_EQ(22, s.time);
			ASSERT_EQ((__u32)-1, s.tid);
		}
	}
	ASSERT_EQ(8, n);
	ASSERT_EQ(PERF_RECORD_COMM, types[0]);
	ASSERT_EQ(PERF_RECORD_MMAP2, types[1]);
	ASSERT_EQ(68, types[4]);
	ASSERT_EQ(PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, types[6]);
	ASSERT_EQ(PERF_RECORD_EXIT, types[7]);

	ASSERT_EQ(0, uname(&uts));
	ASSERT_STREQ(uts.nodename, perf_data_reader__feat_string(r, PD_FEAT_HOSTNAME));
	ASSERT_STREQ(uts.release, perf_data_reader__feat_string(r, PD_FEAT_OSRELEASE));
	ASSERT_STREQ(uts.machine, perf_data_reader__feat_string(r, PD_FEAT_ARCH));
	ASSERT_STREQ("perf-defer " PERF_DEFER_VERSION,
		     perf_data_reader__feat_string(r, PD_FEAT_VERSION));
	ASSERT_TRUE(perf_data_reader__feat(r, PD_FEAT_NRCPUS, &data, &size));
	ASSERT_EQ(8, size);
	ASSERT_EQ(sysconf(_SC_NPROCESSORS_ONLN), ((const __u32 *)data)[1]);
	ASSERT_TRUE(perf_data_reader__feat(r, PD_FEAT_TOTAL_MEM, &data, &size));
	ASSERT_EQ(8, size);
	ASSERT_TRUE(perf_data_reader__feat(r, PD_FEAT_CMDLINE, &data, &size));
	ASSERT_EQ(4, *(const __u32 *)data);
	ASSERT_STREQ("/usr/bin/perf-defer", (const char *)data + 8);
	ASSERT_TRUE(perf_data_reader__feat(r, PD_FEAT_BUILD_ID, &data, &size));
	ASSERT_EQ(36 + 64, size);
	ASSERT_EQ(-1, *(const __s32 *)((const char *)data + 8));
	ASSERT_EQ(20, ((const __u8 *)data)[32]);
	ASSERT_STREQ("/usr/bin/true", (const char *)data + 36);
	ASSERT_TRUE(perf_data_reader__has_feat(r, PD_FEAT_EVENT_DESC));
	ASSERT_FALSE(perf_data_reader__has_feat(r, PD_FEAT_CLOCKID));
	perf_data_reader__close(r);
}

/* The flag word: bits 37 (sigtrap), 38 and 39 of the word at offset 40. */
TEST(attr_defer_bits)
{
	struct perf_event_attr a = { .sigtrap = 1 };

	ASSERT_EQ(1ULL << 37, attr__flags(&a));
	attr__set_defer(&a, true, false);
	ASSERT_EQ(1ULL << 37 | 1ULL << 38, attr__flags(&a));
	ASSERT_TRUE(attr__defer_callchain(&a));
	ASSERT_FALSE(attr__defer_output(&a));
	attr__set_defer(&a, false, true);
	ASSERT_EQ(1ULL << 37 | 1ULL << 39, attr__flags(&a));
	attr__clear_defer(&a);
	ASSERT_EQ(1ULL << 37, attr__flags(&a));
	ASSERT_EQ(1, (int)a.sigtrap);
}

/* Every sample_type field, and every truncation of the record. */
TEST(sample_parse_all_fields)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
			       PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
			       PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR |
			       PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			       PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE |
			       PERF_SAMPLE_AUX,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
			       PERF_FORMAT_TOTAL_TIME_ENABLED,
		.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX,
		.sample_regs_user = 0x7,
		.sample_regs_intr = 0x3,
	};
	struct perf_sample s;
	struct tev e;

	tev__begin(&e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	tev__u64(&e, 77);			/* identifier */
	tev__u64(&e, 0x401234);			/* ip */
	tev__u32x2(&e, 10, 11);			/* pid, tid */
	tev__u64(&e, 12345);			/* time */
	tev__u64(&e, 0xdead);			/* addr */
	tev__u64(&e, 77);			/* id */
	tev__u64(&e, 78);			/* stream_id */
	tev__u32x2(&e, 3, 0);			/* cpu */
	tev__u64(&e, 999);			/* period */
	tev__u64(&e, 2);			/* read: nr */
	tev__u64(&e, 100);			/* time_enabled */
	for (int i = 0; i < 2; i++) {		/* value, id, lost */
		tev__u64(&e, 1000 + i);
		tev__u64(&e, 77 + i);
		tev__u64(&e, i);
	}
	tev__u64(&e, 3);			/* callchain */
	tev__u64(&e, PERF_CONTEXT_USER);
	tev__u64(&e, 0x401234);
	tev__u64(&e, 0x405678);
	tev__u32x2(&e, 12, 0xaaaaaaaa);		/* raw: size 12 + 4 bytes */
	tev__u64(&e, 0xbbbbbbbbbbbbbbbbULL);
	tev__u64(&e, 1);			/* branch stack: nr, hw_idx, 1 entry */
	tev__u64(&e, 0);
	tev__u64(&e, 1);
	tev__u64(&e, 2);
	tev__u64(&e, 3);
	tev__u64(&e, 2);			/* user regs: ABI 64, 3 regs */
	tev__u64(&e, 1);
	tev__u64(&e, 2);
	tev__u64(&e, 3);
	tev__u64(&e, 16);			/* user stack: 16 bytes, dyn_size 8 */
	tev__u64(&e, 0);
	tev__u64(&e, 0);
	tev__u64(&e, 8);
	tev__u64(&e, 42);			/* weight */
	tev__u64(&e, 43);			/* data_src */
	tev__u64(&e, 44);			/* transaction */
	tev__u64(&e, 2);			/* intr regs: 2 */
	tev__u64(&e, 5);
	tev__u64(&e, 6);
	tev__u64(&e, 0x1000);			/* phys_addr */
	tev__u64(&e, 7);			/* cgroup */
	tev__u64(&e, 4096);			/* data page size */
	tev__u64(&e, 4096);			/* code page size */
	tev__u64(&e, 8);			/* aux: 8 bytes */
	tev__u64(&e, 0);
	tev__end(&e);

	ASSERT_EQ(0, perf_sample__parse(&a, e.w, &s)) TH_LOG("%s", error__msg());
	ASSERT_EQ(77, s.id);
	ASSERT_EQ(0x401234, s.ip);
	ASSERT_EQ(10, s.pid);
	ASSERT_EQ(11, s.tid);
	ASSERT_EQ(12345, s.time);
	ASSERT_EQ(0xdead, s.addr);
	ASSERT_EQ(78, s.stream_id);
	ASSERT_EQ(3, s.cpu);
	ASSERT_EQ(999, s.period);
	ASSERT_EQ(2, s.read_nr);
	ASSERT_EQ(100, s.time_enabled);
	ASSERT_EQ(3, s.nr);
	ASSERT_EQ(0x405678, s.callchain[2]);
	ASSERT_FALSE(s.deferred);
	ASSERT_EQ(12, s.raw_size);
	ASSERT_EQ(1, s.branch_nr);
	ASSERT_EQ(2, s.user_regs_abi);
	ASSERT_EQ(3, s.nr_user_regs);
	ASSERT_EQ(16, s.user_stack_size);
	ASSERT_EQ(8, s.user_stack_dyn_size);
	ASSERT_EQ(42, s.weight);
	ASSERT_EQ(43, s.data_src);
	ASSERT_EQ(44, s.transaction);
	ASSERT_EQ(2, s.nr_intr_regs);
	ASSERT_EQ(0x1000, s.phys_addr);
	ASSERT_EQ(7, s.cgroup);
	ASSERT_EQ(4096, s.code_page_size);
	ASSERT_EQ(8, s.aux_size);
	ASSERT_EQ(tev__size(&e), s.end);

	/* every shorter header.size fails, with a message, inside the bounds */
	for (size_t size = 8; size < tev__size(&e); size += 8) {
		struct perf_event_header h;
		void *copy = malloc(size);

		memcpy(copy, e.w, size);
		memcpy(&h, copy, sizeof(h));
		h.size = size;
		memcpy(copy, &h, sizeof(h));
		EXPECT_EQ(-EFAULT, perf_sample__parse(&a, copy, &s)) TH_LOG("size %zu", size);
		EXPECT_NE(NULL, strstr(error__msg(), "runs past the end"))
			TH_LOG("%s", error__msg());
		free(copy);
	}
	/* nr values that would overflow a size computation */
	e.w[18] = 1ULL << 61;		/* callchain nr */
	ASSERT_EQ(-EFAULT, perf_sample__parse(&a, e.w, &s));
	e.w[18] = 3;
	e.w[10] = (__u64)-1;		/* read group nr */
	ASSERT_EQ(-EFAULT, perf_sample__parse(&a, e.w, &s));
	e.w[10] = 2;
	e.w[24] = 1ULL << 60;		/* branch stack nr */
	ASSERT_EQ(-EFAULT, perf_sample__parse(&a, e.w, &s));
	e.w[24] = 1;
	e.w[36] = 17;			/* user stack dyn_size > size */
	ASSERT_EQ(-EFAULT, perf_sample__parse(&a, e.w, &s));
	e.w[36] = 8;
	ASSERT_EQ(0, perf_sample__parse(&a, e.w, &s));
}

/* sample_id at the end of other records; record 22's body. */
TEST(sample_parse_id_sample)
{
	struct perf_event_attr a = t_attr(false, true);
	struct perf_sample s;
	struct tev e;

	t_comm(&e, 1, 2, "x", 555, 66, 7, false);
	ASSERT_EQ(0, perf_sample__parse(&a, e.w, &s));
	ASSERT_EQ(1, s.pid);
	ASSERT_EQ(2, s.tid);
	ASSERT_EQ(555, s.time);
	ASSERT_EQ(66, s.id);
	ASSERT_EQ(7, s.cpu);
	/* too short for its sample_id */
	tev__begin(&e, PERF_RECORD_COMM, 0);
	tev__u64(&e, 0);
	tev__end(&e);
	ASSERT_EQ(-EFAULT, perf_sample__parse(&a, e.w, &s));
	/* without sample_id_all nothing is read */
	a.sample_id_all = 0;
	ASSERT_EQ(0, perf_sample__parse(&a, e.w, &s));
	ASSERT_EQ((__u64)-1, s.time);
	a.sample_id_all = 1;

	t_deferred(&e, 3, 4, 777, 88, 1, 0x100000001ULL, (const __u64[]){ 9, 8 }, 2);
	ASSERT_EQ(0, perf_sample__parse(&a, e.w, &s));
	ASSERT_TRUE(s.deferred);
	ASSERT_EQ(0x100000001ULL, s.cookie);
	ASSERT_EQ(2, s.nr);
	ASSERT_EQ(9, s.callchain[0]);
	ASSERT_EQ(4, s.tid);
	ASSERT_EQ(777, s.time);
	/* ips and sample_id overlapping */
	e.w[2] = 3;
	ASSERT_EQ(-EFAULT, perf_sample__parse(&a, e.w, &s));
}

/* perf's rules to find the attr of a record. */
TEST(evlist_find)
{
	struct perf_event_attr a0 = t_attr(false, true), a1 = t_attr(false, false);
	__u64 ids0[] = { 1, 2 }, ids1[] = { 3 };
	struct evlist *el = evlist__new();
	struct tev e;

	ASSERT_NE(NULL, el);
	ASSERT_EQ(0, evlist__add(el, &a0, ids0, 2, NULL));
	/* one attr: always it, whatever the id */
	t_sample(&e, 1, 1, 1, 999, 0, 1, NULL, 0);
	ASSERT_EQ(0, evlist__find(el, e.w)->idx);
	ASSERT_EQ(0, evlist__add(el, &a1, ids1, 1, NULL));
	ASSERT_EQ(0, evlist__check(el));
	ASSERT_EQ(NULL, evlist__find(el, e.w));
	ASSERT_NE(NULL, strstr(error__msg(), "unknown event id 999"));
	t_sample(&e, 1, 1, 1, 3, 0, 1, NULL, 0);
	ASSERT_EQ(1, evlist__find(el, e.w)->idx);
	t_comm(&e, 1, 1, "c", 1, 2, 0, false);
	ASSERT_EQ(0, evlist__find(el, e.w)->idx);
	t_comm(&e, 1, 1, "c", 1, 3, 0, false);
	ASSERT_EQ(1, evlist__find(el, e.w)->idx);
	/* synthesized: id 0 */
	t_comm(&e, 1, 1, "c", 1, 0, 0, false);
	ASSERT_EQ(0, evlist__find(el, e.w)->idx);
	/* attrs whose ids sit in other places */
	a1.sample_type |= PERF_SAMPLE_ADDR;
	ASSERT_EQ(0, evlist__add(el, &a1, ids1, 0, NULL));
	ASSERT_EQ(-EINVAL, evlist__check(el));
	ASSERT_NE(NULL, strstr(error__msg(), "non matching sample_type"));
	evlist__delete(el);
}

/* A build-id as readelf sees it. */
TEST(build_id_self)
{
	char cmd[PATH_MAX + 64], line[256], hex[2 * PD_BUILD_ID_SIZE + 1], want[64] = "";
	__u8 id[PD_BUILD_ID_SIZE];
	size_t len = sizeof(id);
	FILE *p;

	ASSERT_EQ(0, filename__read_build_id("/proc/self/exe", id, &len));
	ASSERT_EQ(20, len);
	snprintf(cmd, sizeof(cmd), "readelf -n /proc/%d/exe 2>/dev/null", getpid());
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, " Build ID: %63s", want) == 1)
			break;
	pclose(p);
	if (!want[0])
		SKIP(return, "no readelf");
	ASSERT_STREQ(want, build_id__sprintf(id, len, hex));

	len = sizeof(id);
	ASSERT_EQ(-ENOEXEC, filename__read_build_id("/proc/self/cmdline", id, &len));
	ASSERT_EQ(-ENOENT, filename__read_build_id("/nonexistent", id, &len));
}

/* The kernel's build-id from /sys/kernel/notes, as perf buildid-list -k says. */
TEST(build_id_kernel)
{
	char line[256] = "", hex[2 * PD_BUILD_ID_SIZE + 1];
	__u8 id[PD_BUILD_ID_SIZE];
	size_t len = sizeof(id);
	FILE *p;

	if (sysfs__read_build_id("/sys/kernel/notes", id, &len))
		SKIP(return, "no build-id in /sys/kernel/notes");
	if (!t_have(PERF))
		SKIP(return, "no " PERF);
	p = popen(PERF " buildid-list -k 2>/dev/null", "r");
	ASSERT_NE(NULL, p);
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	pclose(p);
	line[strcspn(line, "\n")] = '\0';
	ASSERT_STREQ(line, build_id__sprintf(id, len, hex));
}

static struct perf_data_writer *writer_with_attr(struct __test_metadata *_metadata,
						 const char *path)
{
	struct perf_event_attr a = t_attr(false, true);
	__u64 id = ID0;
	struct perf_data_writer *w = perf_data_writer__open(path);

	EXPECT_NE(NULL, w) TH_LOG("%s", error__msg());
	if (w)
		EXPECT_EQ(0, perf_data_writer__add_attr(w, &a, &id, 1, NULL));
	return w;
}

/* /dev/full: the error comes back, and /dev/full is not removed. */
TEST(writer_dev_full)
{
	struct perf_data_writer *w = writer_with_attr(_metadata, "/dev/full");
	struct stat st;
	struct tev e;
	int err = 0;

	ASSERT_NE(NULL, w);
	t_comm(&e, 1, 1, "full", 1, ID0, 0, false);
	for (int i = 0; i < 10000 && !err; i++)
		err = perf_data_writer__write(w, e.w, tev__size(&e));
	ASSERT_EQ(-ENOSPC, err);
	ASSERT_EQ(-ENOSPC, perf_data_writer__close(w, NULL));
	ASSERT_NE(NULL, strstr(error__msg(), "No space left on device")) TH_LOG("%s", error__msg());
	ASSERT_EQ(0, stat("/dev/full", &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	/* even when the records fit the buffer: close flushes */
	w = writer_with_attr(_metadata, "/dev/full");
	ASSERT_NE(NULL, w);
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	ASSERT_EQ(-ENOSPC, perf_data_writer__close(w, NULL));
}

/* A full file system: an error, and no short file left behind. */
TEST(writer_full_tmpfs)
{
	char dir[] = "/tmp/pd-tmpfs-XXXXXX", path[64];
	struct perf_event_attr a = t_attr(false, true);
	int status, res[2] = { 0, 0 }, pfd[2];
	__u64 id = ID0;
	pid_t pid;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct perf_data_writer *w;
		struct tev e;
		int err = 0;

		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", dir, "tmpfs", 0, "size=64k")) {
			res[0] = 1000 + errno;
			goto out;
		}
		w = perf_data_writer__open(path);
		if (!w || perf_data_writer__add_attr(w, &a, &id, 1, NULL)) {
			res[0] = 2000;
			goto out;
		}
		t_comm(&e, 1, 1, "tmpfs", 1, ID0, 0, false);
		for (int i = 0; i < 2000 && !err; i++)		/* ~ 100 KiB */
			err = perf_data_writer__write(w, e.w, tev__size(&e));
		res[0] = err;
		res[1] = perf_data_writer__close(w, NULL);
		if (!access(path, F_OK))
			res[0] = 3000;
out:
		if (write(pfd[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(sizeof(res), read(pfd[0], res, sizeof(res)));
	close(pfd[0]);
	waitpid(pid, &status, 0);
	rmdir(dir);
	if (res[0] > 1000 && res[0] < 2000)
		SKIP(return, "cannot mount a tmpfs: %s", strerror(res[0] - 1000));
	ASSERT_NE(3000, res[0]) TH_LOG("a short file was left behind");
	ASSERT_EQ(-ENOSPC, res[1]);
}

/* Misuse gets an error and a message. */
TEST(writer_misuse)
{
	const char *path = t_tmp_path("misuse.data");
	struct perf_event_attr a = t_attr(false, true);
	struct perf_data_writer *w;
	struct tev e;
	__u64 id = ID0;

	w = perf_data_writer__open(path);
	ASSERT_NE(NULL, w);
	t_comm(&e, 1, 1, "x", 1, ID0, 0, false);
	/* no attr */
	ASSERT_EQ(-EINVAL, perf_data_writer__close(w, NULL));
	ASSERT_NE(0, access(path, F_OK)) TH_LOG("file left behind");
	w = writer_with_attr(_metadata, path);
	ASSERT_EQ(-EINVAL, perf_data_writer__write(w, e.w, tev__size(&e) - 8));
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	ASSERT_EQ(-EBUSY, perf_data_writer__add_attr(w, &a, &id, 1, NULL));
	perf_data_writer__abort(w);
	ASSERT_NE(0, access(path, F_OK)) TH_LOG("abort left the file");
	ASSERT_EQ(NULL, perf_data_writer__open("/nonexistent/dir/perf.data"));
	ASSERT_EQ(ENOENT, errno);
}

/* perf 6.1's view of the header: every feature, no warning. */
TEST(perf_header_only)
{
	const char *path = t_tmp_path("header.data");
	struct perf_event_attr a = t_attr(false, true);
	static const char *const argv[] = { "record", "-k", "mono", "-g" };
	struct perf_data_features f = {
		.argc = 4, .argv = (const char **)argv, .clockid = CLOCK_MONOTONIC, .use_clockid = true,
	};
	static const char *const want[] = {
		"# hostname : ", "# os release : ", "# perf version : perf-defer ",
		"# arch : ", "# nrcpus online : ", "# nrcpus avail : ", "# total memory : ",
		"# cmdline : ", " record -k mono -g \n", "# event : name = cpu-clock, ",
		"id = { 301, 302 }", "sample_type = IP|TID|TIME|CALLCHAIN|ID|CPU|PERIOD",
		"# clockid frequency: ", "# clockid: monotonic (1)", "# reference time: ",
	};
	char *argv_perf[] = { PERF, "report", "--header-only", "-i", (char *)path, NULL };
	__u64 ids[] = { ID0, ID1 };
	struct perf_data_writer *w;
	struct t_run run;
	struct tev e;

	w = perf_data_writer__open(path);
	ASSERT_NE(NULL, w);
	attr__set_defer(&a, false, false);
	ASSERT_EQ(0, perf_data_writer__add_attr(w, &a, ids, 2, "cpu-clock"));
	t_comm(&e, 1, 1, "hdr", 1, ID0, 0, false);
	ASSERT_EQ(0, perf_data_writer__write(w, e.w, tev__size(&e)));
	ASSERT_EQ(0, perf_data_writer__close(w, &f)) TH_LOG("%s", error__msg());
	if (!t_have(PERF))
		SKIP(return, "no " PERF);
	ASSERT_EQ(0, t_run(&run, NULL, argv_perf));
	TH_LOG("perf report --header-only:\n%s", run.out);
	ASSERT_EQ(0, run.code);
	ASSERT_STREQ("", run.err);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		EXPECT_NE(NULL, strstr(run.out, want[i])) TH_LOG("no '%s'", want[i]);
	}
	if (!access("/proc/cpuinfo", R_OK) && !system("grep -q '^model name' /proc/cpuinfo"))
		EXPECT_NE(NULL, strstr(run.out, "# cpudesc : "));
	EXPECT_EQ(NULL, strstr(run.out, "missing features: TRACING_DATA BUILD_ID HOSTNAME"));
	t_run_free(&run);
}

/* perf 6.1 on the fake process: symbols from our build-id, no warning. */
TEST(perf_reads_fake_process)
{
	const char *path = t_tmp_path("fake.data");
	char *script[] = { PERF, "script", "-i", (char *)path, NULL };
	char *bidl[] = { PERF, "buildid-list", "-i", (char *)path, NULL };
	char *report[] = { PERF, "report", "--stdio", "-i", (char *)path, NULL };
	char hex[2 * PD_BUILD_ID_SIZE + 1];
	struct fake_proc fp;
	struct t_run run;
	const char *p;
	int n = 0;

	ASSERT_EQ(0, fake_proc__init(&fp));
	ASSERT_NE(0, fp.bid_len);
	ASSERT_EQ(0, fake_proc__file(&fp, path, false, NULL, 0)) TH_LOG("%s", error__msg());
	if (!t_have(PERF))
		SKIP(return, "no " PERF);

	ASSERT_EQ(0, t_run(&run, NULL, bidl));
	ASSERT_EQ(0, run.code);
	ASSERT_STREQ("", run.err);
	ASSERT_NE(NULL, strstr(run.out, build_id__sprintf(fp.bid, fp.bid_len, hex)));
	ASSERT_NE(NULL, strstr(run.out, fp.exe));
	t_run_free(&run);

	ASSERT_EQ(0, t_run(&run, NULL, script));
	TH_LOG("perf script:\n%s", run.out);
	ASSERT_EQ(0, run.code);
	ASSERT_STREQ("", run.err);
	for (p = run.out; (p = strstr(p, "pd-fake ")); p++)
		n++;
	ASSERT_EQ(FAKE_SAMPLES, n);
	for (p = run.out, n = 0; (p = strstr(p, "pd_target_alpha+0x1 (")); p++)
		n++;
	ASSERT_EQ(FAKE_SAMPLES, n);
	ASSERT_NE(NULL, strstr(run.out, "pd_target_beta+0x1 ("));
	ASSERT_NE(NULL, strstr(run.out, "pd_target_gamma+0x1 ("));
	if (fp.kallsyms) {
		ASSERT_NE(NULL, strstr(run.out, "schedule+0x1 ([kernel.kallsyms])"));
		ASSERT_NE(NULL, strstr(run.out, "do_syscall_64+0x1 ([kernel.kallsyms])"));
	}
	t_run_free(&run);

	ASSERT_EQ(0, t_run(&run, NULL, report));
	ASSERT_EQ(0, run.code);
	ASSERT_NE(NULL, strstr(run.out, "pd_target_alpha"));
	if (!fp.kallsyms)
		SKIP(goto out, "/proc/kallsyms hides addresses: perf report warns");
	ASSERT_STREQ("", run.err);
	ASSERT_NE(NULL, strstr(run.out, "[k] schedule"));
out:
	t_run_free(&run);
}

/* Corrupt headers: an error that says what is wrong. */
TEST(reader_rejects)
{
	const char *path = t_tmp_path("rejects.data");
	struct {
		size_t off;
		__u64 val;
		int width;
		const char *msg;
	} cases[] = {
		{ 0, 0x1234, 8, "bad magic" },
		{ 0, 0x50455246494c4532ULL, 8, "big-endian" },
		{ 8, 16, 8, "pipe-mode" },
		{ 8, 100, 8, "unknown file header size" },
		{ 16, 8, 8, "bad attr size" },
		{ 24, 1ULL << 40, 8, "attr section" },
		{ 32, 1, 8, "not a multiple of the attr size" },
		{ 32, 0, 8, "no event attrs" },
		{ 40, 1ULL << 40, 8, "data section" },
		{ 48, 1ULL << 40, 8, "data section" },
	};
	struct perf_data_reader *r;
	unsigned char *buf, *copy;
	size_t size;

	ASSERT_EQ(0, write_small(path, true));
	buf = t_slurp(path, &size);
	ASSERT_NE(NULL, buf);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		copy = malloc(size);
		memcpy(copy, buf, size);
		memcpy(copy + cases[i].off, &cases[i].val, cases[i].width);
		r = perf_data_reader__open_mem(copy, size, "bad");
		EXPECT_EQ(NULL, r) TH_LOG("case %zu accepted", i);
		EXPECT_NE(NULL, strstr(error__msg(), cases[i].msg))
			TH_LOG("case %zu: '%s' has no '%s'", i, error__msg(), cases[i].msg);
		EXPECT_EQ(0, strncmp(error__msg(), "bad: ", 5));
		perf_data_reader__close(r);
		free(copy);
	}
	/* an attr whose size disagrees with the attr section */
	copy = malloc(size);
	memcpy(copy, buf, size);
	copy[*(__u64 *)(buf + 24) + 4] = 120;
	r = perf_data_reader__open_mem(copy, size, "bad");
	EXPECT_EQ(NULL, r);
	EXPECT_NE(NULL, strstr(error__msg(), "does not match the attr section"))
		TH_LOG("%s", error__msg());
	free(copy);
	free(buf);
	ASSERT_EQ(NULL, perf_data_reader__open("/nonexistent.data"));
	ASSERT_NE(NULL, strstr(error__msg(), "cannot open /nonexistent.data: No such file"));
	ASSERT_EQ(NULL, perf_data_reader__open("/dev/null"));
	ASSERT_NE(NULL, strstr(error__msg(), "not a regular file"));
}

/* Corrupt records: the reader stops at them with the offset and the reason. */
TEST(reader_bad_records)
{
	const char *path = t_tmp_path("records.data");
	struct {
		size_t rec;		/* index of the record to break */
		size_t off;
		__u64 val;
		int width;
		const char *msg;
	} cases[] = {
		{ 0, 6, 4, 2, "smaller than a record header" },
		{ 0, 6, 0xfff0, 2, "runs past the end of the data section" },
		{ 0, 6, 20, 2, "not a multiple of 8" },
		{ 1, 6, 64, 2, "smaller than the record's fixed part" },
		{ 6, 16, 100, 8, "nr 100 runs past the end" },
	};
	unsigned char *buf;
	size_t size;

	ASSERT_EQ(0, write_small(path, true));
	buf = t_slurp(path, &size);
	ASSERT_NE(NULL, buf);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char *copy = malloc(size);
		const struct perf_event_header *ev;
		struct perf_data_reader *r;
		__u64 off = *(__u64 *)(buf + 40);
		int ret = 1;

		memcpy(copy, buf, size);
		for (size_t k = 0; k < cases[i].rec; k++)
			off += ((struct perf_event_header *)(buf + off))->size;
		memcpy(copy + off + cases[i].off, &cases[i].val, cases[i].width);
		r = perf_data_reader__open_mem(copy, size, "bad");
		ASSERT_NE(NULL, r) TH_LOG("%s", error__msg());
		while ((ret = perf_data_reader__next(r, &ev)) > 0)
			;
		EXPECT_EQ(-EINVAL, ret) TH_LOG("case %zu accepted", i);
		EXPECT_NE(NULL, strstr(error__msg(), cases[i].msg))
			TH_LOG("case %zu: '%s' has no '%s'", i, error__msg(), cases[i].msg);
		perf_data_reader__close(r);
		free(copy);
	}
	free(buf);
}

/* Open, dump and stitch buf in process; 0 when all went through. */
static int through_everything(const void *buf, size_t size)
{
	static FILE *devnull;
	struct stitch_stats st;
	struct perf_data_reader *r;
	struct perf_data_writer *w;
	int err, fd;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	r = perf_data_reader__open_mem(buf, size, "input");
	if (!r)
		return -1;
	err = dump__reader(r, devnull, DUMP_BY_MODE);
	perf_data_reader__rewind(r);
	fd = fileno(devnull);
	w = perf_data_writer__open_fd(fd, "/dev/null");
	if (w)
		err |= stitch__reader(r, w, &st, true);
	perf_data_reader__close(r);
	return err;
}

/* What error__msg() says before a call: the call gave no message if it still does. */
#define NO_MESSAGE	"(no message)"

/* Every truncation of a valid file is an error with a message, never a crash. */
TEST(every_truncation)
{
	const char *path = t_tmp_path("trunc.data");
	unsigned char *buf;
	size_t size;

	ASSERT_EQ(0, write_small(path, true));
	buf = t_slurp(path, &size);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, through_everything(buf, size)) TH_LOG("%s", error__msg());
	for (size_t len = 0; len < size; len++) {
		error__set(NO_MESSAGE);
		EXPECT_NE(0, through_everything(buf, len)) TH_LOG("length %zu accepted", len);
		EXPECT_STRNE(NO_MESSAGE, error__msg()) TH_LOG("length %zu: no message", len);
	}
	free(buf);
}

/*
 * Random byte flips: never a crash (ASan/UBSan watch), a message with
 * every rejection, and both outcomes seen, so that the flipped files that
 * are accepted go through dump and stitch whole.
 */
TEST(random_byte_flips)
{
	const char *path = t_tmp_path("flips.data");
	unsigned char *buf, *copy;
	unsigned int seed = 12345;
	int rejected = 0, silent = 0;
	size_t size;

	ASSERT_EQ(0, write_small(path, true));
	buf = t_slurp(path, &size);
	ASSERT_NE(NULL, buf);
	copy = malloc(size);
	ASSERT_NE(NULL, copy);
	for (int i = 0; i < 20000; i++) {
		int flips = 1 + rand_r(&seed) % 4;

		memcpy(copy, buf, size);
		for (int k = 0; k < flips; k++)
			copy[rand_r(&seed) % size] ^= 1 << (rand_r(&seed) % 8);
		error__set(NO_MESSAGE);
		if (through_everything(copy, size)) {
			rejected++;
			silent += !strcmp(error__msg(), NO_MESSAGE);
		}
	}
	TH_LOG("%d of 20000 flipped files rejected", rejected);
	EXPECT_LT(0, rejected);
	EXPECT_GT(20000, rejected);
	EXPECT_EQ(0, silent);
	free(copy);
	free(buf);
}

/*
 * The fuzzer's seeds, not a test: with $PD_FUZZ_SEEDS set the program
 * writes them into that directory and runs no test ('make -C tests/host
 * fuzz' does, before fuzz_reader runs).
 */
static int write_seeds(const char *dir)
{
	static const char *const name[] = {
		"small-deferred.data", "small-plain.data", "fake-deferred.data", "fake-stitched.data",
	};
	char path[PATH_MAX];
	struct fake_proc fp;
	int err = 0;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "perf_data_test: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (fake_proc__init(&fp)) {
		fprintf(stderr, "perf_data_test: cannot make the fake process\n");
		return 1;
	}
	for (int i = 0; i < 4 && !err; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, name[i]);
		err = i < 2 ? write_small(path, i == 0) : fake_proc__file(&fp, path, i == 2, NULL, 0);
		if (err)
			fprintf(stderr, "perf_data_test: cannot write %s (%d)\n", path, err);
	}
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *seeds = getenv("PD_FUZZ_SEEDS");

	if (seeds && *seeds)
		return write_seeds(seeds);
	return test_harness_run(argc, argv);
}
