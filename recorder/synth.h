/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PERF_DEFER_SYNTH_H
#define PERF_DEFER_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "event.h"

/*
 * Records for what existed before recording started, as perf record
 * synthesizes them: the kernel's map (for [kernel.kallsyms] symbols), and
 * COMM + MMAP2 of existing processes from /proc: their executable maps,
 * and with @data the others too (DWARF unwinding reads .eh_frame from
 * them, as perf's mmap_data records give them).  Each ends with a zeroed
 * sample_id trailer of @id_words words.
 */
int synth__kernel_mmap(event_fn emit, void *arg, unsigned int id_words);
int synth__process(event_fn emit, void *arg, unsigned int id_words, pid_t pid,
		   pid_t only_tid, bool data);
int synth__all(event_fn emit, void *arg, unsigned int id_words, bool data);

/*
 * Call fn(arg, tid) for each thread of process pid (/proc/PID/task) until
 * it returns non-zero; returns that, or -errno when the process is gone.
 */
int synth__for_each_tid(pid_t pid, int (*fn)(void *arg, pid_t tid), void *arg);

#endif /* PERF_DEFER_SYNTH_H */
