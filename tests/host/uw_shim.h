/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * uw_shim.h - what module/uwtab.h and the table parsers take from the
 * kernel, for building them in user space (tests/host/uw_test.c).
 */
#ifndef PD_UW_SHIM_H
#define PD_UW_SHIM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#define min(a, b)	((a) < (b) ? (a) : (b))

#endif /* PD_UW_SHIM_H */
