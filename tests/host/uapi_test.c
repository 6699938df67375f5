// SPDX-License-Identifier: GPL-2.0-only
/*
 * uapi_test - include/uapi/linux/perf_defer.h against the ABI it promises
 *
 * What the compiler knows is checked when this file compiles: the sizes
 * and layouts of the ioctl structures (no holes), the ioctl numbers, and
 * the upstream (Linux >= 6.19) constants against the host's
 * <linux/perf_event.h> where the two overlap.  The tests check what only
 * runs show: the attr flag bits against the compiler's bit-fields, and
 * the header compiled on its own, as C and as C++.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "kselftest_harness.h"

#define T_TMPDIR
#include "pd_test_util.h"

/* a member's end, for structures that must have no holes */
#define END(type, member)	(offsetof(type, member) + sizeof(((type *)0)->member))

#define IOC_CHECK(ioc, nr, type)						\
	_Static_assert(_IOC_SIZE(ioc) == sizeof(type) &&			\
		       _IOC_DIR(ioc) == (_IOC_READ | _IOC_WRITE) &&		\
		       _IOC_TYPE(ioc) == PERF_DEFER_MAGIC && _IOC_NR(ioc) == (nr),	\
		       #ioc ": _IOWR(PERF_DEFER_MAGIC, " #nr ", " #type ")")

_Static_assert(sizeof(struct perf_defer_version) == 16 &&
	       offsetof(struct perf_defer_version, major) == 4 &&
	       offsetof(struct perf_defer_version, minor) == 8 &&
	       END(struct perf_defer_version, __reserved) == 16, "perf_defer_version");
_Static_assert(sizeof(struct perf_defer_attach) == 16 &&
	       offsetof(struct perf_defer_attach, perf_fd) == 4 &&
	       END(struct perf_defer_attach, __reserved) == 16, "perf_defer_attach");
_Static_assert(sizeof(struct perf_defer_ring) == 16 &&
	       offsetof(struct perf_defer_ring, data_pages) == 4 &&
	       END(struct perf_defer_ring, __reserved) == 16, "perf_defer_ring");
_Static_assert(sizeof(struct perf_defer_dump) == 16 &&
	       offsetof(struct perf_defer_dump, flags) == 4 &&
	       offsetof(struct perf_defer_dump, stack_size) == 8 &&
	       END(struct perf_defer_dump, __reserved) == 16, "perf_defer_dump");
_Static_assert(sizeof(struct perf_defer_unwind) == 16 &&
	       offsetof(struct perf_defer_unwind, methods) == 8 &&
	       END(struct perf_defer_unwind, methods) == 16, "perf_defer_unwind");
/* the stats only grow at their end; VER0 ends after @pending */
_Static_assert(END(struct perf_defer_stats, pending) == PERF_DEFER_STATS_SIZE_VER0 &&
	       END(struct perf_defer_stats, walk_ns) == sizeof(struct perf_defer_stats),
	       "perf_defer_stats");
/* head and tail on their own cache line, after the first 1 KiB */
_Static_assert(offsetof(struct perf_defer_mmap_page, data_head) == 1024 &&
	       offsetof(struct perf_defer_mmap_page, data_tail) == 1032,
	       "perf_defer_mmap_page");

/* numbers are never reused: each new one after every earlier one */
IOC_CHECK(PERF_DEFER_IOC_GET_VERSION, 0x01, struct perf_defer_version);
IOC_CHECK(PERF_DEFER_IOC_ATTACH, 0x02, struct perf_defer_attach);
IOC_CHECK(PERF_DEFER_IOC_DETACH, 0x03, struct perf_defer_attach);
IOC_CHECK(PERF_DEFER_IOC_SET_RING, 0x04, struct perf_defer_ring);
IOC_CHECK(PERF_DEFER_IOC_GET_STATS, 0x05, struct perf_defer_stats);
IOC_CHECK(PERF_DEFER_IOC_SET_DUMP, 0x06, struct perf_defer_dump);
IOC_CHECK(PERF_DEFER_IOC_SET_UNWIND, 0x07, struct perf_defer_unwind);
_Static_assert(PERF_DEFER_ABI_MINOR >= 3, "SET_UNWIND is ABI 1.3");

/* Upstream took the number after the last record type before 6.19. */
_Static_assert(PERF_DEFER_RECORD_CALLCHAIN_DEFERRED == 22 &&
	       PERF_DEFER_RECORD_CALLCHAIN_DEFERRED == PERF_RECORD_AUX_OUTPUT_HW_ID + 1,
	       "PERF_RECORD_CALLCHAIN_DEFERRED");
/* above every kernel and perf tool record type */
_Static_assert(PERF_DEFER_RECORD_USER_DUMP > PERF_RECORD_MAX &&
	       PERF_DEFER_RECORD_USER_DUMP > 1000, "PERF_DEFER_RECORD_USER_DUMP");
/* the largest dump record (24 regs, 6 sample_id words) fits in a u16 size */
_Static_assert(8 + 8 + 8 + 24 * 8 + 8 + PERF_DEFER_DUMP_MAX_STACK + 8 + 6 * 8 == 0xfff8,
	       "PERF_DEFER_DUMP_MAX_STACK");
_Static_assert(PERF_DEFER_DUMP_MAX_STACK % 8 == 0 && PERF_DEFER_DUMP_DEF_STACK % 8 == 0,
	       "dump stack sizes");
/* perf's x86-64 dwarf registers: AX..SS and R8..R15 */
_Static_assert(__builtin_popcountll(PERF_DEFER_DUMP_REGS_VALID) == 20,
	       "PERF_DEFER_DUMP_REGS_VALID");

/* perf takes any ip >= PERF_CONTEXT_MAX for a context marker */
_Static_assert(sizeof(PERF_DEFER_CONTEXT_USER_DEFERRED) == 8 &&
	       PERF_DEFER_CONTEXT_USER_DEFERRED == 0xfffffffffffffd80ULL &&
	       PERF_DEFER_CONTEXT_USER_DEFERRED >= (__u64)PERF_CONTEXT_MAX,
	       "PERF_CONTEXT_USER_DEFERRED");
_Static_assert(PERF_DEFER_CONTEXT_USER_DEFERRED != PERF_CONTEXT_HV &&
	       PERF_DEFER_CONTEXT_USER_DEFERRED != PERF_CONTEXT_KERNEL &&
	       PERF_DEFER_CONTEXT_USER_DEFERRED != PERF_CONTEXT_USER &&
	       PERF_DEFER_CONTEXT_USER_DEFERRED != PERF_CONTEXT_GUEST &&
	       PERF_DEFER_CONTEXT_USER_DEFERRED != PERF_CONTEXT_GUEST_KERNEL &&
	       PERF_DEFER_CONTEXT_USER_DEFERRED != PERF_CONTEXT_GUEST_USER,
	       "a context of its own");

/* The flag word is the 64 bits between read_format and wakeup_events. */
_Static_assert(PERF_DEFER_ATTR_FLAGS_OFFSET == END(struct perf_event_attr, read_format) &&
	       PERF_DEFER_ATTR_FLAGS_OFFSET + 8 == offsetof(struct perf_event_attr, wakeup_events),
	       "PERF_DEFER_ATTR_FLAGS_OFFSET");
/* The two new bits come right after sigtrap. */
_Static_assert(PERF_DEFER_ATTR_BIT_SIGTRAP == 37 &&
	       PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN == PERF_DEFER_ATTR_BIT_SIGTRAP + 1 &&
	       PERF_DEFER_ATTR_BIT_DEFER_OUTPUT == PERF_DEFER_ATTR_BIT_SIGTRAP + 2,
	       "PERF_DEFER_ATTR_BIT_*");

static uint64_t flag_word(const struct perf_event_attr *attr)
{
	uint64_t word;

	memcpy(&word, (const char *)attr + PERF_DEFER_ATTR_FLAGS_OFFSET, sizeof(word));
	return word;
}

/*
 * The bit numbers against the compiler's bit-fields of the host's
 * perf_event_attr: each flag, set alone, is the bit the header says.
 */
TEST(attr_flag_word)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.disabled = 1;
	ASSERT_EQ(1ULL << 0, flag_word(&attr));

	memset(&attr, 0, sizeof(attr));
	attr.exclude_kernel = 1;
	ASSERT_EQ(1ULL << 5, flag_word(&attr));

	memset(&attr, 0, sizeof(attr));
	attr.sample_id_all = 1;
	ASSERT_EQ(1ULL << 18, flag_word(&attr));

	memset(&attr, 0, sizeof(attr));
	attr.sigtrap = 1;
	ASSERT_EQ(1ULL << PERF_DEFER_ATTR_BIT_SIGTRAP, flag_word(&attr));

	/* the word holds the first and the last flag, and no neighbour */
	memset(&attr, 0xff, sizeof(attr));
	memset((char *)&attr + PERF_DEFER_ATTR_FLAGS_OFFSET, 0, 8);
	ASSERT_EQ(0, (int)attr.disabled);
	ASSERT_EQ(0, (int)attr.sigtrap);
	ASSERT_EQ(~0ULL, attr.read_format);
	ASSERT_EQ(~0U, attr.wakeup_events);
}

/*
 * The header on its own, with nothing included before it, compiles
 * without a warning as C (C99, pedantic) and as C++, every ioctl number
 * and constant used.
 */
static const char standalone[] =
	"#include <linux/perf_defer.h>\n"
	"static const unsigned long long pd_numbers[] = {\n"
	"	PERF_DEFER_IOC_GET_VERSION, PERF_DEFER_IOC_ATTACH, PERF_DEFER_IOC_DETACH,\n"
	"	PERF_DEFER_IOC_SET_RING, PERF_DEFER_IOC_GET_STATS, PERF_DEFER_IOC_SET_DUMP,\n"
	"	PERF_DEFER_IOC_SET_UNWIND, PERF_DEFER_CONTEXT_USER_DEFERRED,\n"
	"	PERF_DEFER_RECORD_CALLCHAIN_DEFERRED, PERF_DEFER_RECORD_USER_DUMP,\n"
	"	PERF_DEFER_DUMP_MAX_STACK, PERF_DEFER_DUMP_REGS_VALID,\n"
	"	sizeof(struct perf_defer_mmap_page),\n"
	"};\n"
	"int pd_count(void);\n"
	"int pd_count(void) { return (int)(sizeof(pd_numbers) / sizeof(pd_numbers[0])); }\n";

static void compile(struct __test_metadata *_metadata, const char *cc, const char *lang,
		    const char *std)
{
	char *src = t_tmp_path("standalone");
	struct t_run r = { 0 };

	ASSERT_NE(NULL, src);
	ASSERT_EQ(0, t_spew(src, standalone, strlen(standalone)));
	ASSERT_EQ(0, t_run(&r, NULL, (char *[]){ (char *)cc, "-x", (char *)lang, (char *)std,
						 "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
						 "-pedantic-errors", "-I" PD_UAPI_DIR, src, NULL }));
	EXPECT_EQ(0, r.code) TH_LOG("%s %s:\n%s%s", cc, std, r.out, r.err);
	t_run_free(&r);
}

TEST(header_standalone_c)
{
	compile(_metadata, "cc", "c", "-std=c99");
}

TEST(header_standalone_cxx)
{
	if (system("command -v c++ >/dev/null"))
		SKIP(return, "no C++ compiler");
	compile(_metadata, "c++", "c++", "-std=c++11");
}

TEST_HARNESS_MAIN
