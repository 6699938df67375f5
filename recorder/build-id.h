/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_BUILD_ID_H
#define PERF_DEFER_BUILD_ID_H

/* GNU build-ids of ELF files, as perf.data keeps them. */
#include <stddef.h>

#include <linux/types.h>

#define PD_BUILD_ID_SIZE	20	/* perf's BUILD_ID_SIZE */

/*
 * Build-ids.  *len is the size of out on entry (at least 20) and the
 * build-id size on return.  0, or -errno (-ENODATA: no GNU build-id note).
 */
int pd_build_id(const char *path, __u8 *out, size_t *len);
/* From a file of raw ELF notes: /sys/kernel/notes, /sys/module/M/notes/... */
int pd_build_id_notes(const char *path, __u8 *out, size_t *len);
/* "%02x" each byte into buf (2 * len + 1 bytes). */
char *pd_build_id__sprintf(const __u8 *id, size_t len, char *buf);

#endif /* PERF_DEFER_BUILD_ID_H */
