// SPDX-License-Identifier: GPL-2.0-only
/*
 * uapi_test - include/uapi/linux/perf_defer.h against the ABI it promises
 *
 * The ioctl structures and numbers, and the upstream (Linux >= 6.19)
 * constants, checked against the host's <linux/perf_event.h> where the
 * two overlap.
 */
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "kselftest_harness.h"

TEST(version_struct_layout)
{
	ASSERT_EQ(16U, sizeof(struct perf_defer_version));
	ASSERT_EQ(0U, offsetof(struct perf_defer_version, size));
	ASSERT_EQ(4U, offsetof(struct perf_defer_version, major));
	ASSERT_EQ(8U, offsetof(struct perf_defer_version, minor));
	ASSERT_EQ(12U, offsetof(struct perf_defer_version, __reserved));
}

TEST(ioctl_get_version)
{
	ASSERT_EQ(sizeof(struct perf_defer_version), _IOC_SIZE(PERF_DEFER_IOC_GET_VERSION));
	ASSERT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(PERF_DEFER_IOC_GET_VERSION));
	ASSERT_EQ(PERF_DEFER_MAGIC + 0U, _IOC_TYPE(PERF_DEFER_IOC_GET_VERSION));
	ASSERT_EQ(0x01U, _IOC_NR(PERF_DEFER_IOC_GET_VERSION));
}

TEST(record_callchain_deferred)
{
	/* Upstream took the number after the last record type before 6.19. */
	ASSERT_EQ(22, PERF_DEFER_RECORD_CALLCHAIN_DEFERRED);
	ASSERT_EQ(PERF_RECORD_AUX_OUTPUT_HW_ID + 1, PERF_DEFER_RECORD_CALLCHAIN_DEFERRED);
}

TEST(dump_struct_and_ioctl)
{
	ASSERT_EQ(16U, sizeof(struct perf_defer_dump));
	ASSERT_EQ(0U, offsetof(struct perf_defer_dump, size));
	ASSERT_EQ(4U, offsetof(struct perf_defer_dump, flags));
	ASSERT_EQ(8U, offsetof(struct perf_defer_dump, stack_size));
	ASSERT_EQ(12U, offsetof(struct perf_defer_dump, __reserved));
	ASSERT_EQ(sizeof(struct perf_defer_dump), _IOC_SIZE(PERF_DEFER_IOC_SET_DUMP));
	ASSERT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(PERF_DEFER_IOC_SET_DUMP));
	ASSERT_EQ(PERF_DEFER_MAGIC + 0U, _IOC_TYPE(PERF_DEFER_IOC_SET_DUMP));
	/* a new number, after every earlier one */
	ASSERT_EQ(0x06U, _IOC_NR(PERF_DEFER_IOC_SET_DUMP));
	ASSERT_LE(1U, PERF_DEFER_ABI_MINOR + 0U);
}

TEST(record_user_dump)
{
	/* above every kernel and perf tool record type */
	ASSERT_LT(PERF_RECORD_MAX + 0U, PERF_DEFER_RECORD_USER_DUMP + 0U);
	ASSERT_LT(1000U, PERF_DEFER_RECORD_USER_DUMP + 0U);
	/* the largest record (24 regs, 6 sample_id words) fits in a u16 size */
	ASSERT_EQ(0xfff8U, 8 + 8 + 8 + 24 * 8 + 8 + PERF_DEFER_DUMP_MAX_STACK + 8 + 6 * 8U);
	ASSERT_EQ(0U, PERF_DEFER_DUMP_MAX_STACK % 8U);
	ASSERT_EQ(0U, PERF_DEFER_DUMP_DEF_STACK % 8U);
	/* perf's x86-64 dwarf registers: AX..SS and R8..R15 */
	ASSERT_EQ(20, __builtin_popcountll(PERF_DEFER_DUMP_REGS_VALID));
}

TEST(context_user_deferred)
{
	__u64 others[] = {
		PERF_CONTEXT_HV, PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER,
		PERF_CONTEXT_GUEST, PERF_CONTEXT_GUEST_KERNEL, PERF_CONTEXT_GUEST_USER,
	};

	ASSERT_EQ(8U, sizeof(PERF_DEFER_CONTEXT_USER_DEFERRED));
	ASSERT_EQ(0xfffffffffffffd80ULL, PERF_DEFER_CONTEXT_USER_DEFERRED);
	/* perf takes any ip >= PERF_CONTEXT_MAX for a context marker. */
	ASSERT_GE(PERF_DEFER_CONTEXT_USER_DEFERRED, (__u64)PERF_CONTEXT_MAX);
	for (size_t i = 0; i < ARRAY_SIZE(others); i++)
		ASSERT_NE(others[i], PERF_DEFER_CONTEXT_USER_DEFERRED);
}

static uint64_t flag_word(const struct perf_event_attr *attr)
{
	uint64_t word;

	memcpy(&word, (const char *)attr + PERF_DEFER_ATTR_FLAGS_OFFSET, sizeof(word));
	return word;
}

TEST(attr_flag_word)
{
	struct perf_event_attr attr;

	/* The word is the 64 bits between read_format and wakeup_events. */
	ASSERT_EQ(offsetof(struct perf_event_attr, read_format) + sizeof(attr.read_format),
		  PERF_DEFER_ATTR_FLAGS_OFFSET + 0U);
	ASSERT_EQ(PERF_DEFER_ATTR_FLAGS_OFFSET + 8U, offsetof(struct perf_event_attr, wakeup_events));

	memset(&attr, 0, sizeof(attr));
	attr.disabled = 1;
	ASSERT_EQ(1U, flag_word(&attr));

	memset(&attr, 0, sizeof(attr));
	attr.sigtrap = 1;
	ASSERT_EQ(1ULL << 37, flag_word(&attr));
	ASSERT_EQ(37, PERF_DEFER_ATTR_BIT_SIGTRAP);

	/* The two new bits come right after sigtrap. */
	ASSERT_EQ(PERF_DEFER_ATTR_BIT_SIGTRAP + 1, PERF_DEFER_ATTR_BIT_DEFER_CALLCHAIN);
	ASSERT_EQ(PERF_DEFER_ATTR_BIT_SIGTRAP + 2, PERF_DEFER_ATTR_BIT_DEFER_OUTPUT);
}

TEST_HARNESS_MAIN
