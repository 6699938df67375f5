// SPDX-License-Identifier: GPL-2.0-only
/*
 * dump_test - 'perf-defer dump' and 'perf-defer stitch' on the command line
 *
 * They run the recorder built with ASan and UBSan
 * (build/host/recorder-san/perf-defer, or $PERF_DEFER_SAN): a sanitizer
 * report is exit code 99 or 98, never taken for the expected exit 1.  The inputs are written
 * here with the recorder's own writer; Debian's perf 6.1 (/usr/bin/perf)
 * checks the dump format and reads what stitch writes.
 */
#define _GNU_SOURCE
#include <limits.h>

#include "kselftest_harness.h"

#define T_TMPDIR
#include "pd_test_fake.h"

#define PERF	"/usr/bin/perf"

#define RUN(r, out, ...)							\
	do {									\
		char *argv_[] = { __VA_ARGS__, NULL };				\
		ASSERT_TRUE(t_have_tmpdir);					\
		ASSERT_TRUE(t_have(argv_[0])) TH_LOG("no %s (make -C tests/host)", argv_[0]); \
		ASSERT_EQ(0, t_run(r, out, argv_));				\
	} while (0)

/* perf script of file, into *r: silent, and the same as of ref */
static void script_same(struct __test_metadata *_metadata, struct t_run *r, char *file,
			char *ref)
{
	struct t_run want;

	RUN(r, NULL, PERF, "script", "-i", file);
	ASSERT_EQ(0, r->code);
	ASSERT_STREQ("", r->err);
	RUN(&want, NULL, PERF, "script", "-i", ref);
	ASSERT_EQ(0, want.code);
	ASSERT_STREQ(want.out, r->out);
	t_run_free(&want);
}

/* No sanitizer report, no signal: 0 or 1 only. */
#define ASSERT_CLEAN(r)								\
	do {									\
		ASSERT_TRUE((r)->code == 0 || (r)->code == 1 || (r)->code == 2)	\
			TH_LOG("exit %d: %s", (r)->code, (r)->err);		\
		ASSERT_EQ(NULL, strstr((r)->err, "Sanitizer")) TH_LOG("%s", (r)->err); \
		ASSERT_EQ(NULL, strstr((r)->err, "runtime error")) TH_LOG("%s", (r)->err); \
	} while (0)

static int write_fake(const char *path, bool deferred)
{
	struct fake_proc fp;

	if (fake_proc__init(&fp))
		return -1;
	return fake_proc__file(&fp, path, deferred, NULL, 0);
}

static void drop_lines(char *b, const char *prefix)
{
	char *d, *nl;

	while ((d = strstr(b, prefix))) {
		nl = strchr(d + 1, '\n');
		if (!nl) {
			*d = '\0';
			break;
		}
		memmove(d, nl, strlen(nl) + 1);
	}
}

/* The block -D prints for the record at off, perf's thread lines dropped. */
static char *block(const char *out, const char *file, unsigned long long off)
{
	char key[PATH_MAX + 64], *b;
	const char *p, *end;

	snprintf(key, sizeof(key), "\n%#llx@%s ", off, file);
	p = strstr(out, key);
	if (!p)
		return NULL;
	p++;
	end = strstr(p, "\n\n0x");
	if (!end)
		end = strstr(p, "\nAggregated stats:");
	if (!end)
		end = p + strlen(p);
	b = strndup(p, end - p);
	/* perf resolves samples: " ... thread: comm:tid", " ...... dso: path" */
	drop_lines(b, "\n ... thread:");
	drop_lines(b, "\n ...... dso:");
	while (*b && b[strlen(b) - 1] == '\n')
		b[strlen(b) - 1] = '\0';
	return b;
}

/*
 * Our dump and perf 6.1's -D agree on every kernel record and
 * FINISHED_ROUND of file (perf words its own records differently).
 */
static void compare_with_perf(struct __test_metadata *_metadata, char *file)
{
	const struct perf_event_header *ev;
	struct t_run ours, perf;
	struct perf_data_reader *r;
	int compared = 0;

	RUN(&ours, NULL, t_san_bin(), "dump", "-i", file);
	ASSERT_EQ(0, ours.code) TH_LOG("%s", ours.err);
	ASSERT_STREQ("", ours.err);
	RUN(&perf, NULL, PERF, "report", "-D", "-i", file);
	ASSERT_EQ(0, perf.code) TH_LOG("%s", perf.err);
	r = perf_data_reader__open(file);
	ASSERT_NE(NULL, r);
	while (perf_data_reader__next(r, &ev) > 0) {
		unsigned long long off = perf_data_reader__offset(r);
		char *a, *b;

		if (!(ev->type < PERF_DEFER_RECORD_CALLCHAIN_DEFERRED ||
		      ev->type == PD_RECORD_FINISHED_ROUND))
			continue;
		a = block(ours.out, file, off);
		b = block(perf.out, file, off);
		EXPECT_NE(NULL, a);
		EXPECT_NE(NULL, b);
		if (a && b)
			EXPECT_STREQ(b, a);
		free(a);
		free(b);
		compared++;
	}
	perf_data_reader__close(r);
	ASSERT_LT(5, compared);
	/* the stats: perf's lines for the types we share */
	ASSERT_NE(NULL, strstr(ours.out, "\nAggregated stats:\n           TOTAL events: "));
	t_run_free(&ours);
	t_run_free(&perf);
}

TEST(dump_matches_perf_report_D)
{
	char *file = t_tmp_path("fake-stitched.data");

	ASSERT_EQ(0, write_fake(file, false));
	if (!t_have(PERF))
		SKIP(return, "no " PERF);
	compare_with_perf(_metadata, file);
}

/*
 * perf record -g of 'sh -c script' into file: NULL, or why this host does
 * not let us record (a reason to skip).
 */
static const char *perf_record(struct __test_metadata *_metadata, char *file, char *script)
{
	static char why[512];
	struct t_run r;

	if (!t_have(PERF))
		return "no " PERF;
	RUN(&r, NULL, PERF, "record", "-q", "-e", "cpu-clock", "-c", "250000", "-g", "-o", file,
	    "--", "/bin/sh", "-c", script);
	if (r.code)
		snprintf(why, sizeof(why), "perf record failed: %s", r.err);
	t_run_free(&r);
	return r.code ? why : NULL;
}

/* A file of perf record itself, when this host lets us record. */
TEST(dump_matches_perf_report_D_real)
{
	char *file = t_tmp_path("perf-record.data");
	const char *why;

	why = perf_record(_metadata, file, "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done");
	if (why)
		SKIP(return, "%s", why);
	compare_with_perf(_metadata, file);
}

/* Record 22 as perf >= 6.19 dumps it: the cookie, then the user chain. */
TEST(dump_callchain_deferred)
{
	char *file = t_tmp_path("fake-deferred.data"), want[1024], hex[64];
	const struct perf_event_header *ev;
	struct fake_proc fp;
	struct t_run r;
	struct perf_data_reader *rd;
	int records = 0;

	ASSERT_EQ(0, fake_proc__init(&fp));
	ASSERT_EQ(0, fake_proc__file(&fp, file, true, NULL, 0));
	RUN(&r, NULL, t_san_bin(), "dump", "-i", file);
	ASSERT_EQ(0, r.code) TH_LOG("%s", r.err);
	ASSERT_STREQ("", r.err);

	rd = perf_data_reader__open(file);
	ASSERT_NE(NULL, rd);
	while (perf_data_reader__next(rd, &ev) > 0) {
		const struct evsel *a = evlist__find(perf_data_reader__evlist(rd), ev);
		struct perf_sample s;
		char *b;

		if (ev->type != PERF_DEFER_RECORD_CALLCHAIN_DEFERRED && ev->type != PERF_RECORD_SAMPLE)
			continue;
		ASSERT_EQ(0, perf_sample__parse(&a->attr, ev, &s));
		b = block(r.out, file, perf_data_reader__offset(rd));
		ASSERT_NE(NULL, b);
		snprintf(want, sizeof(want), "%#llx@%s [%#x]: event: %u\n.\n. ... raw event: size %u bytes\n.  0000:  %02x 00 00 00 %02x %02x %02x %02x ",
			 (unsigned long long)perf_data_reader__offset(rd), file, ev->size, ev->type,
			 ev->size, ev->type, ev->misc & 0xff, ev->misc >> 8, ev->size & 0xff,
			 ev->size >> 8);
		ASSERT_EQ(0, strncmp(b, want, strlen(want))) TH_LOG("%s\nwant\n%s", b, want);
		if (ev->type == PERF_RECORD_SAMPLE) {
			/* the pair is in the chain, as the kernel wrote it */
			snprintf(want, sizeof(want), ".....  %u: fffffffffffffd80\n.....  %u: %016llx",
				 (unsigned int)s.nr - 2, (unsigned int)s.nr - 1,
				 (unsigned long long)s.cookie);
			ASSERT_NE(NULL, strstr(b, want)) TH_LOG("%s\nhas no\n%s", b, want);
			free(b);
			continue;
		}
		snprintf(want, sizeof(want),
			 "\n\n%u %llu %#llx [%#x]: PERF_RECORD_CALLCHAIN_DEFERRED(IP, 0x2): %d/%d: %#llx\n"
			 "... FP chain: nr:3\n"
			 ".....  0: %016llx\n.....  1: %016llx\n.....  2: %016llx",
			 s.cpu, (unsigned long long)s.time,
			 (unsigned long long)perf_data_reader__offset(rd),
			 ev->size, fp.pid, fp.pid, (unsigned long long)s.cookie,
			 (unsigned long long)fp.ips[0], (unsigned long long)fp.ips[1],
			 (unsigned long long)fp.ips[2]);
		ASSERT_NE(NULL, strstr(b, want)) TH_LOG("%s\nhas no\n%s", b, want);
		ASSERT_EQ(0, strcmp(b + strlen(b) - strlen(want), want)) TH_LOG("trailing lines: %s", b);
		free(b);
		records++;
	}
	perf_data_reader__close(rd);
	ASSERT_EQ(FAKE_SAMPLES, records);
	snprintf(want, sizeof(want), "CALLCHAIN_DEFERRED events: %10d  (", FAKE_SAMPLES);
	ASSERT_NE(NULL, strstr(r.out, want)) TH_LOG("%s", r.out);
	snprintf(want, sizeof(want), "      FINISHED_ROUND events: ");
	ASSERT_NE(NULL, strstr(r.out, "  FINISHED_ROUND events: "));
	ASSERT_NE(NULL, strstr(r.out, "\ncpu-clock stats:\n          SAMPLE events:          8\n"));
	(void)hex;
	t_run_free(&r);
}

/* --stats prints the counts that end a full dump, and nothing before them */
TEST(dump_stats_is_the_tail)
{
	char *file = t_tmp_path("fake-stats.data");
	const char *tail;
	struct t_run full, st;

	for (int deferred = 0; deferred < 2; deferred++) {
		ASSERT_EQ(0, write_fake(file, deferred));
		RUN(&full, NULL, t_san_bin(), "dump", "-i", file);
		ASSERT_EQ(0, full.code) TH_LOG("%s", full.err);
		RUN(&st, NULL, t_san_bin(), "dump", "--stats", "-i", file);
		ASSERT_EQ(0, st.code) TH_LOG("%s", st.err);
		ASSERT_STREQ("", st.err);
		tail = strstr(full.out, "\nAggregated stats:\n");
		ASSERT_NE(NULL, tail);
		ASSERT_STREQ(tail, st.out);
		ASSERT_NE(NULL, strstr(st.out, deferred ? "CALLCHAIN_DEFERRED events:" :
					     "SAMPLE events:"));
		t_run_free(&full);
		t_run_free(&st);
	}
}

/*
 * --by-mode: each event's samples by CPU mode (the fake process's are half
 * kernel, half user), at the end of a full dump and of --stats alike;
 * without it, no such line.
 */
TEST(dump_by_mode)
{
	static const char want[] =
		"\ncpu-clock stats:\n"
		"          SAMPLE events:          8\n"
		"      kernel SAMPLE events:          4  ( 50.0%)\n"
		"        user SAMPLE events:          4  ( 50.0%)\n";
	char *file = t_tmp_path("fake-modes.data");
	struct t_run full, st, plain;

	ASSERT_EQ(0, write_fake(file, false));
	RUN(&st, NULL, t_san_bin(), "dump", "--stats", "--by-mode", "-i", file);
	ASSERT_EQ(0, st.code) TH_LOG("%s", st.err);
	ASSERT_NE(NULL, strstr(st.out, want)) TH_LOG("%s", st.out);
	RUN(&full, NULL, t_san_bin(), "dump", "--by-mode", "-i", file);
	ASSERT_EQ(0, full.code) TH_LOG("%s", full.err);
	ASSERT_NE(NULL, strstr(full.out, "\nAggregated stats:\n"));
	ASSERT_STREQ(strstr(full.out, "\nAggregated stats:\n"), st.out);
	RUN(&plain, NULL, t_san_bin(), "dump", "--stats", "-i", file);
	ASSERT_EQ(0, plain.code) TH_LOG("%s", plain.err);
	ASSERT_EQ(NULL, strstr(plain.out, "user SAMPLE")) TH_LOG("%s", plain.out);
	t_run_free(&st);
	t_run_free(&full);
	t_run_free(&plain);
}

/*
 * Truncations (every length of the file header and the attrs, then every
 * 48th byte; perf_data_test has them all in process): exit 1, a message.
 * Two runs of the recorder per length: more than the harness's default
 * 30 s on a loaded 2-core machine, hence a fixture for the timeout.
 */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, truncated_inputs, 300)
{
	char *file = t_tmp_path("trunc-src.data"), *cut = t_tmp_path("trunc.data");
	char *out = t_tmp_path("trunc-out.data");
	unsigned char *buf;
	size_t size;
	int runs = 0;

	ASSERT_EQ(0, write_fake(file, true));
	buf = t_slurp(file, &size);
	ASSERT_NE(NULL, buf);
	for (size_t len = 0; len < size; len += len < 128 ? 1 : 48) {
		struct t_run r;

		ASSERT_EQ(0, t_spew(cut, buf, len));
		RUN(&r, NULL, t_san_bin(), "dump", "-i", cut);
		ASSERT_CLEAN(&r);
		ASSERT_EQ(1, r.code) TH_LOG("length %zu: exit %d", len, r.code);
		ASSERT_EQ(0, strncmp(r.err, "perf-defer: dump: ", 18)) TH_LOG("%s", r.err);
		ASSERT_NE(NULL, strchr(r.err, '\n'));
		t_run_free(&r);
		RUN(&r, NULL, t_san_bin(), "stitch", "-i", cut, "-o", out);
		ASSERT_CLEAN(&r);
		ASSERT_EQ(1, r.code) TH_LOG("length %zu: exit %d", len, r.code);
		ASSERT_EQ(0, strncmp(r.err, "perf-defer: stitch: ", 20)) TH_LOG("%s", r.err);
		ASSERT_NE(0, access(out, F_OK)) TH_LOG("length %zu: output left behind", len);
		t_run_free(&r);
		runs++;
	}
	TH_LOG("%d truncations of %zu bytes", runs, size);
	free(buf);
}

/* Random byte flips: exit 0 or 1, never a crash or a sanitizer report. */
TEST(flipped_inputs)
{
	char *file = t_tmp_path("flip-src.data"), *bad = t_tmp_path("flip.data");
	char *out = t_tmp_path("flip-out.data");
	unsigned char *buf;
	unsigned int seed = 4242;
	size_t size;
	int failed = 0;

	ASSERT_EQ(0, write_fake(file, true));
	buf = t_slurp(file, &size);
	ASSERT_NE(NULL, buf);
	for (int i = 0; i < 100; i++) {
		unsigned char *copy = malloc(size);
		struct t_run r;

		memcpy(copy, buf, size);
		for (int k = 0; k < 1 + i % 3; k++)
			copy[rand_r(&seed) % size] ^= 1 << rand_r(&seed) % 8;
		ASSERT_EQ(0, t_spew(bad, copy, size));
		free(copy);
		RUN(&r, "/dev/null", t_san_bin(), "dump", "-i", bad);
		ASSERT_CLEAN(&r);
		failed += r.code != 0;
		if (r.code)
			ASSERT_EQ(0, strncmp(r.err, "perf-defer: dump: ", 18)) TH_LOG("%s", r.err);
		t_run_free(&r);
		RUN(&r, NULL, t_san_bin(), "stitch", "-q", "-i", bad, "-o", out);
		ASSERT_CLEAN(&r);
		if (r.code)
			ASSERT_NE(0, access(out, F_OK));
		t_run_free(&r);
		unlink(out);
	}
	TH_LOG("%d of 100 flipped files rejected by dump", failed);
	free(buf);
}

TEST(dump_to_full_stdout)
{
	char *file = t_tmp_path("full.data");
	struct t_run r;

	ASSERT_EQ(0, write_fake(file, true));
	RUN(&r, "/dev/full", t_san_bin(), "dump", "-i", file);
	ASSERT_CLEAN(&r);
	ASSERT_EQ(1, r.code);
	ASSERT_NE(NULL, strstr(r.err, "cannot write to standard output: No space left on device"))
		TH_LOG("%s", r.err);
	t_run_free(&r);
}

TEST(stitch_to_dev_full)
{
	char *file = t_tmp_path("full-src.data");
	struct t_run r;
	struct stat st;

	ASSERT_EQ(0, write_fake(file, true));
	RUN(&r, NULL, t_san_bin(), "stitch", "-i", file, "-o", "/dev/full");
	ASSERT_CLEAN(&r);
	ASSERT_EQ(1, r.code);
	ASSERT_NE(NULL, strstr(r.err, "perf-defer: stitch: cannot write /dev/full: No space left on device"))
		TH_LOG("%s", r.err);
	ASSERT_EQ(0, stat("/dev/full", &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	t_run_free(&r);
}

/* HEADER_HOSTNAME's bytes for name. */
static size_t hostname_section(char *buf, const char *name)
{
	__u32 len = 64;

	memset(buf, 0, 4 + len);
	memcpy(buf, &len, 4);
	strcpy(buf + 4, name);
	return 4 + len;
}

/*
 * The deferred file, stitched, is the stitched file: perf script shows
 * the same thing for both, and perf 6.1 reads it without a warning.
 */
TEST(stitch_end_to_end)
{
	char *def = t_tmp_path("e2e-deferred.data"), *direct = t_tmp_path("e2e-direct.data");
	char *out = t_tmp_path("e2e-stitched.data"), host[68];
	struct feat_raw raw = { .feat = PD_FEAT_HOSTNAME, .data = host };
	const struct perf_event_header *ev;
	struct t_run r;
	struct fake_proc fp;
	struct perf_data_reader *rd;
	int samples = 0, rounds = 0;

	ASSERT_EQ(0, fake_proc__init(&fp));
	raw.size = hostname_section(host, "deferred-host");
	ASSERT_EQ(0, fake_proc__file(&fp, def, true, &raw, 1));
	ASSERT_EQ(0, fake_proc__file(&fp, direct, false, &raw, 1));

	RUN(&r, NULL, t_san_bin(), "stitch", "-i", def, "-o", out, "--stats");
	ASSERT_EQ(0, r.code) TH_LOG("%s", r.err);
	ASSERT_STREQ("", r.err);
	ASSERT_STREQ("samples: 8\ndeferred: 8\nstitched: 8\nunmatched: 0\n"
		     "deferred-records: 8\norphan-records: 0\nlost: 0\n", r.out);
	t_run_free(&r);

	rd = perf_data_reader__open(out);
	ASSERT_NE(NULL, rd) TH_LOG("%s", error__msg());
	ASSERT_EQ(1, perf_data_reader__nr_attrs(rd));
	ASSERT_FALSE(attr__defer_callchain(&perf_data_reader__attr(rd, 0)->attr));
	ASSERT_FALSE(attr__defer_output(&perf_data_reader__attr(rd, 0)->attr));
	ASSERT_STREQ("cpu-clock", perf_data_reader__attr(rd, 0)->name);
	ASSERT_STREQ("deferred-host", perf_data_reader__feat_string(rd, PD_FEAT_HOSTNAME));
	ASSERT_TRUE(perf_data_reader__has_feat(rd, PD_FEAT_BUILD_ID));
	ASSERT_TRUE(perf_data_reader__has_feat(rd, PD_FEAT_CMDLINE));
	while (perf_data_reader__next(rd, &ev) > 0) {
		ASSERT_NE(PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, ev->type);
		samples += ev->type == PERF_RECORD_SAMPLE;
		rounds += ev->type == PD_RECORD_FINISHED_ROUND;
	}
	perf_data_reader__close(rd);
	ASSERT_EQ(FAKE_SAMPLES, samples);
	ASSERT_EQ(2, rounds);

	if (!t_have(PERF))
		SKIP(return, "no " PERF);
	script_same(_metadata, &r, out, direct);
	ASSERT_NE(NULL, strstr(r.out, "pd_target_alpha+0x1"));
	TH_LOG("perf script of the stitched file:\n%s", r.out);
	t_run_free(&r);

	RUN(&r, NULL, PERF, "report", "--header-only", "-i", out);
	ASSERT_EQ(0, r.code);
	ASSERT_STREQ("", r.err);
	ASSERT_NE(NULL, strstr(r.out, "# hostname : deferred-host\n"));
	ASSERT_NE(NULL, strstr(r.out, "# cmdline : /usr/bin/perf-defer record -g -- pd-fake \n"));
	ASSERT_NE(NULL, strstr(r.out, "# event : name = cpu-clock, , id = { 201, 202 }"));
	t_run_free(&r);

	RUN(&r, NULL, PERF, "report", "--stdio", "-i", out);
	ASSERT_EQ(0, r.code);
	if (fp.kallsyms)
		ASSERT_STREQ("", r.err);
	ASSERT_NE(NULL, strstr(r.out, "pd_target_gamma"));
	t_run_free(&r);
}

/*
 * Make the deferred form of a real recording, the way a >= 6.19 kernel
 * would have written it: each sample's user part becomes USER_DEFERRED,
 * cookie, and a CALLCHAIN_DEFERRED record with those ips follows 1 ns
 * later.  Returns the number of deferred samples, or -1.
 */
static int defer_recording(const char *in, const char *out)
{
	const struct perf_event_header *ev;
	struct perf_data_reader *r = perf_data_reader__open(in);
	struct perf_data_writer *w = perf_data_writer__open(out);
	struct feat_raw raw[PD_FEAT_BITS];
	struct perf_data_features f = { .no_host = true, .raw = raw };
	__u64 cookie = 1;
	int n = 0;
	struct tev *e = malloc(sizeof(*e)), *d = malloc(sizeof(*d));

	if (!r || !w || !e || !d || perf_data_reader__nr_attrs(r) != 1)
		goto fail;
	for (unsigned int i = 0; i < perf_data_reader__nr_attrs(r); i++) {
		const struct evsel *a = perf_data_reader__attr(r, i);
		struct perf_event_attr attr = a->attr;

		attr__set_defer(&attr, true, true);
		if (perf_data_writer__add_attr(w, &attr, a->ids, a->nr_ids, a->name))
			goto fail;
	}
	while (perf_data_reader__next(r, &ev) > 0) {
		const struct evsel *a = perf_data_reader__attr(r, 0);
		struct perf_sample s;
		size_t user = 0, off, tail;

		if (ev->type != PERF_RECORD_SAMPLE) {
			if (perf_data_writer__write(w, ev, ev->size))
				goto fail;
			continue;
		}
		if (perf_sample__parse(&a->attr, ev, &s))
			goto fail;
		while (user < s.nr && s.callchain[user] != PERF_CONTEXT_USER)
			user++;
		if (user == s.nr || !(a->attr.sample_type & PERF_SAMPLE_TID) ||
		    !(a->attr.sample_type & PERF_SAMPLE_TIME) || a->attr.sample_type & ~(__u64)
		    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
		     PERF_SAMPLE_PERIOD | PERF_SAMPLE_CPU)) {
			if (perf_data_writer__write(w, ev, ev->size))
				goto fail;
			continue;
		}
		/* the sample: ..., chain[0..user), USER_DEFERRED, cookie, rest */
		off = s.callchain_offset;
		tail = off + 8 + s.nr * 8;
		memcpy(e->w, ev, off);
		e->n = off / 8;
		tev__u64(e, user + 2);
		for (size_t i = 0; i < user; i++)
			tev__u64(e, s.callchain[i]);
		tev__u64(e, T_USER_DEFERRED);
		tev__u64(e, cookie);
		memcpy(&e->w[e->n], (const char *)ev + tail, ev->size - tail);
		e->n += (ev->size - tail) / 8;
		tev__end(e);
		/* the record: cookie, user ips, sample_id (TID, TIME[, CPU]) */
		tev__begin(d, PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, PERF_RECORD_MISC_USER);
		tev__u64(d, cookie++);
		tev__u64(d, s.nr - user - 1);
		for (size_t i = user + 1; i < s.nr; i++)
			tev__u64(d, s.callchain[i]);
		tev__u32x2(d, s.pid, s.tid);
		tev__u64(d, s.time + 1);
		if (a->attr.sample_type & PERF_SAMPLE_CPU)
			tev__u32x2(d, s.cpu, 0);
		tev__end(d);
		if (perf_data_writer__write(w, e->w, tev__size(e)) ||
		    perf_data_writer__write(w, d->w, tev__size(d)))
			goto fail;
		n++;
	}
	for (unsigned int feat = 1; feat < PD_FEAT_BITS; feat++)
		if (feat != PD_FEAT_EVENT_DESC &&
		    perf_data_reader__feat(r, feat, &raw[f.nr_raw].data, &raw[f.nr_raw].size))
			raw[f.nr_raw++].feat = feat;
	if (perf_data_writer__close(w, &f))
		n = -1;
	perf_data_reader__close(r);
	free(e);
	free(d);
	return n;
fail:
	perf_data_reader__close(r);
	if (w)
		perf_data_writer__abort(w);
	free(e);
	free(d);
	return -1;
}

/* A real recording, deferred then stitched, is the recording again. */
TEST(stitch_real_recording)
{
	char *rec = t_tmp_path("real.data"), *def = t_tmp_path("real-deferred.data");
	char *out = t_tmp_path("real-stitched.data");
	struct t_run r;
	const char *why;
	int n;

	why = perf_record(_metadata, rec, "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; "
			  "ls -R /usr/share/man >/dev/null");
	if (why)
		SKIP(return, "%s", why);
	n = defer_recording(rec, def);
	ASSERT_LT(0, n) TH_LOG("%s", error__msg());
	RUN(&r, NULL, t_san_bin(), "stitch", "-i", def, "-o", out, "--stats");
	ASSERT_EQ(0, r.code) TH_LOG("%s", r.err);
	TH_LOG("%d samples deferred; stitch --stats:\n%s", n, r.out);
	t_run_free(&r);
	script_same(_metadata, &r, out, rec);
	t_run_free(&r);
}

/*
 * perf 6.1 lists the events of a deferred file: event desc carries them
 * without the defer bits, which perf 6.1 would take for reserved ones.
 */
TEST(perf_6_1_lists_deferred_events)
{
	char *def = t_tmp_path("list-deferred.data");
	struct t_run r;

	if (!t_have(PERF))
		SKIP(return, "no " PERF);
	ASSERT_EQ(0, write_fake(def, true));
	RUN(&r, NULL, PERF, "report", "--header-only", "-i", def);
	EXPECT_EQ(NULL, strstr(r.err, "Reserved bits are set unexpectedly")) TH_LOG("%s", r.err);
	EXPECT_NE(NULL, strstr(r.out, "\n# event : name = ")) TH_LOG("%s", r.out);
	t_run_free(&r);
}

/*
 * The usage errors and help of stitch and dump: exit status, and the text
 * at the start of stdout ('^'), in stderr ('~') or all of stderr ('=').
 */
TEST(usage)
{
	char *file = t_tmp_path("usage.data"), *other = t_tmp_path("x.data");
	const struct {
		char *argv[8];
		int code;
		char how;
		const char *text;
	} c[] = {
		{ { "stitch", "-i", file }, 2, '~', "perf-defer: stitch: no output file: give one with -o" },
		{ { "stitch", "-i", file }, 2, '~', "usage: perf-defer stitch " },
		{ { "stitch", "-i", file, "-o", file }, 1, '~', "are the same file" },
		{ { "stitch", "--help" }, 0, '^', "usage: perf-defer stitch " },
		{ { "stitch", "-i", file, "-o", other, "extra" }, 2, '~', "unexpected argument 'extra'" },
		{ { "dump", "-h" }, 0, '^', "usage: perf-defer dump " },
		{ { "dump", "--bogus" }, 2, '~', "usage: perf-defer dump " },
		{ { "dump", "-i", "/nonexistent.data" }, 1, '=',
		  "perf-defer: dump: cannot open /nonexistent.data: No such file or directory\n" },
	};
	size_t i, k;

	ASSERT_EQ(0, write_fake(file, true));
	ASSERT_TRUE(t_have(t_san_bin())) TH_LOG("no %s (make -C tests/host)", t_san_bin());
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		char *argv[ARRAY_SIZE(c[i].argv) + 2] = { t_san_bin() };
		const char *got;
		struct t_run r;
		bool ok;

		for (k = 0; c[i].argv[k]; k++)
			argv[k + 1] = c[i].argv[k];
		ASSERT_EQ(0, t_run(&r, NULL, argv));
		got = c[i].how == '^' ? r.out : r.err;
		ok = c[i].how == '^' ? !strncmp(got, c[i].text, strlen(c[i].text)) :
		     c[i].how == '=' ? !strcmp(got, c[i].text) : strstr(got, c[i].text) != NULL;
		EXPECT_EQ(c[i].code, r.code) TH_LOG("case %zu: %s", i, c[i].text);
		EXPECT_TRUE(ok) TH_LOG("case %zu: '%s' not in: %s", i, c[i].text, got);
		t_run_free(&r);
	}
}

TEST_HARNESS_MAIN
