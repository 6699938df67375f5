/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_BUILD_ID_H
#define PERF_DEFER_BUILD_ID_H

/* GNU build-ids of ELF files, as perf.data keeps them. */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <linux/types.h>

#define PD_BUILD_ID_SIZE	20	/* perf's BUILD_ID_SIZE */

/*
 * Build-ids.  *len is the size of out on entry (at least 20) and the
 * build-id size on return.  0, or -errno (-ENODATA: no GNU build-id note).
 */
int filename__read_build_id(const char *path, __u8 *out, size_t *len);
/* From a file of raw ELF notes: /sys/kernel/notes, /sys/module/M/notes/... */
int sysfs__read_build_id(const char *path, __u8 *out, size_t *len);
/* The build-id of the vDSO, as the kernel maps it into 64-bit tasks.  0 or -ENODATA. */
int vdso__read_build_id(__u8 *out, size_t *len);
/* "%02x" each byte into buf (2 * len + 1 bytes). */
char *build_id__sprintf(const __u8 *id, size_t len, char *buf);

/* An entry of HEADER_BUILD_ID. */
struct build_id_entry {
	const char *path;		/* "[kernel.kallsyms]" for the kernel */
	pid_t pid;			/* -1 for host DSOs, as perf writes */
	bool kernel;			/* PERF_RECORD_MISC_KERNEL, else USER */
	__u8 size;			/* bytes of build_id used, <= 20 */
	__u8 build_id[PD_BUILD_ID_SIZE];
};

/* The files a recording mapped, for their build-ids (perf's dsos). */
struct dsos {
	char	**paths;
	size_t	nr;
	bool	vdso;		/* a [vdso] was mapped */
};

/*
 * Note the file of a PERF_RECORD_MMAP2 (or that it maps the [vdso]); other
 * records are ignored.  0 or -ENOMEM.
 */
int dsos__add_mmap2(struct dsos *d, const void *event, size_t size);
/*
 * The build-id table of a recording: an entry for each file that has a
 * build-id, the vDSO's if one was mapped, then the running kernel's.  The paths point into d.
 * malloc'ed (*nr entries), NULL when out of memory.
 */
struct build_id_entry *dsos__build_ids(const struct dsos *d, size_t *nr);
void dsos__exit(struct dsos *d);
/*
 * Add the files of a build-id table to perf's build-id cache
 * ($PERF_BUILDID_DIR, else $HOME/.debug), as perf record does: each
 * file (the running kernel's kallsyms, the vDSO's image) under
 * PATH/BUILD-ID/ with its separate debug info where /usr/lib/debug has
 * it, and .build-id/XX/YYYY... linked to it, so that perf
 * archive and perf report on a changed binary find them.  0, or -errno of
 * the first failure (warned once).
 */
int build_id_cache__add(const struct build_id_entry *ids, size_t nr);

#endif /* PERF_DEFER_BUILD_ID_H */
