// SPDX-License-Identifier: GPL-2.0-only
/*
 * golden_test - dump and stitch give the bytes they gave
 *
 * tests/host/golden/ holds small perf.data files (NAME.data, made by
 * golden_gen.c) and what the recorder printed and wrote for each when they
 * were made:
 *
 *	NAME.dump		perf-defer dump -i NAME.data
 *	NAME.dump-stats		perf-defer dump --stats -i NAME.data
 *	NAME.stitch		perf-defer stitch --stats -i NAME.data -o OUT
 *	NAME.stitched.data	OUT, when stitch succeeds
 *	NAME.stitched.dump	perf-defer dump -i NAME.stitched.data
 *
 * The text files hold stdout, stderr and the exit code, each under a
 * "== " line.  The recorder under test (build/host/recorder-san/perf-defer,
 * or $PERF_DEFER_SAN) must give the same bytes.  It runs in the golden
 * directory, so that the file names it prints do not depend on where the
 * tree is.  When an output is meant to change, 'make -C tests/host
 * golden-update' remakes the files from the recorder as it now is: read
 * the diff before committing it.
 */
#define _GNU_SOURCE
#include <limits.h>

#include "kselftest_harness.h"

#define T_TMPDIR
#include "pd_test_util.h"

/*
 * The stitched files hold attrs of the size of the <linux/perf_event.h>
 * the recorder was built with; the golden ones were made with this one.
 */
#define GOLDEN_ATTR_SIZE	128

static bool updating(void)
{
	const char *env = getenv("PD_GOLDEN_UPDATE");

	return env && *env && strcmp(env, "0");
}

/* The output of one run, in the form of the golden text files. */
static char *run_text(struct __test_metadata *_metadata, char *const argv[])
{
	struct t_run r = { 0 };
	char *text;

	ASSERT_TRUE(t_have(argv[0])) TH_LOG("no %s (make -C tests/host)", argv[0]);
	ASSERT_EQ(0, t_run(&r, NULL, argv));
	ASSERT_LT(0, asprintf(&text, "== stdout\n%s== stderr\n%s== exit %d\n", r.out, r.err,
			      r.code));
	t_run_free(&r);
	return text;
}

/* got against the golden file name; or, updating, got into it. */
static void check_bytes(struct __test_metadata *_metadata, const char *name, const void *got,
			size_t size)
{
	char cmd[2 * PATH_MAX + 64], *got_path = t_tmp_path("got");
	size_t want_size;
	void *want;

	if (updating()) {
		ASSERT_EQ(0, t_spew(name, got, size)) TH_LOG("cannot write %s", name);
		return;
	}
	want = t_slurp(name, &want_size);
	ASSERT_NE(NULL, want) TH_LOG("no golden %s: make -C tests/host golden-update", name);
	if (want_size == size && !memcmp(want, got, size)) {
		free(want);
		return;
	}
	free(want);
	/* show how they differ */
	if (got_path && !t_spew(got_path, got, size)) {
		snprintf(cmd, sizeof(cmd), "diff -u -a '%s' '%s' | head -n 60 >&2", name, got_path);
		if (system(cmd) < 0)
			perror("diff");
	}
	ASSERT_TRUE(false) TH_LOG("%s: the output differs (%zu bytes, golden %zu)", name, size,
				  want_size);
}

static void check_text(struct __test_metadata *_metadata, const char *name, char *const argv[])
{
	char *text = run_text(_metadata, argv);

	check_bytes(_metadata, name, text, strlen(text));
	free(text);
}

FIXTURE(golden) {
	char data[64];
	char *out;
};

FIXTURE_VARIANT(golden) {
	const char *name;
};

/* perf >= 6.19's deferred form: two attrs, two CPU buffers, rounds */
FIXTURE_VARIANT_ADD(golden, fp_defer) { .name = "fp-defer" };
/* dwarf,defer's USER_DUMP records, sorted whole */
FIXTURE_VARIANT_ADD(golden, dwarf_defer) { .name = "dwarf-defer" };
/* every sample field and record type dump shows */
FIXTURE_VARIANT_ADD(golden, plain) { .name = "plain" };
/* attrs of a newer perf, cut to ours */
FIXTURE_VARIANT_ADD(golden, newattr) { .name = "newattr" };
/* a sample that does not parse */
FIXTURE_VARIANT_ADD(golden, corrupt) { .name = "corrupt" };
/* a file cut short */
FIXTURE_VARIANT_ADD(golden, truncated) { .name = "truncated" };

FIXTURE_SETUP(golden)
{
	ASSERT_EQ(0, chdir(PD_GOLDEN_DIR)) TH_LOG("%s: %s", PD_GOLDEN_DIR, strerror(errno));
	snprintf(self->data, sizeof(self->data), "%s.data", variant->name);
	self->out = t_tmp_path(self->data);
	ASSERT_NE(NULL, self->out);
}

FIXTURE_TEARDOWN(golden)
{
}

TEST_F(golden, dump)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.dump", variant->name);
	check_text(_metadata, name, (char *[]){ t_san_bin(), "dump", "-i", self->data, NULL });
}

TEST_F(golden, dump_stats)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.dump-stats", variant->name);
	check_text(_metadata, name,
		   (char *[]){ t_san_bin(), "dump", "--stats", "-i", self->data, NULL });
}

/* What stitch prints and writes, and the dump of what it writes. */
static void check_stitch(struct __test_metadata *_metadata, const char *base, char *data,
			 char *out_path)
{
	char name[64], stitched[64];
	size_t size = 0;
	char *text;
	void *out;

	snprintf(name, sizeof(name), "%s.stitch", base);
	snprintf(stitched, sizeof(stitched), "%s.stitched.data", base);
	text = run_text(_metadata, (char *[]){ t_san_bin(), "stitch", "--stats", "-i", data,
					       "-o", out_path, NULL });
	check_bytes(_metadata, name, text, strlen(text));
	out = t_slurp(out_path, &size);
	snprintf(name, sizeof(name), "%s.stitched.dump", base);
	if (!strstr(text, "== exit 0\n")) {
		/* a failed stitch leaves no file */
		ASSERT_EQ(NULL, out);
		free(text);
		if (updating()) {
			unlink(stitched);
			unlink(name);
		}
		return;
	}
	free(text);
	ASSERT_NE(NULL, out);
	check_bytes(_metadata, stitched, out, size);
	free(out);
	check_text(_metadata, name, (char *[]){ t_san_bin(), "dump", "-i", stitched, NULL });
}

TEST_F(golden, stitch)
{
	if (sizeof(struct perf_event_attr) != GOLDEN_ATTR_SIZE)
		SKIP(return, "attrs of %zu bytes here, the golden files have %d",
		     sizeof(struct perf_event_attr), GOLDEN_ATTR_SIZE);
	check_stitch(_metadata, variant->name, self->data, self->out);
}

TEST_HARNESS_MAIN
