/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel series the test matrix runs (scripts/kernels, whose "default"
 * and "extra" lines they are; tests/dkms.sh fails when the two disagree):
 * the module's build warns on any other, and 'perf-defer status' says
 * whether the running kernel is one of them.
 */
#ifndef _PERF_DEFER_TESTED_H
#define _PERF_DEFER_TESTED_H

/* with the module */
#define PERF_DEFER_TESTED_MODULE	"5.10 6.1 6.12 6.16 6.17 6.18"
/* with the module on arm64 (cross-built; its own steps, not a matrix row) */
#define PERF_DEFER_TESTED_MODULE_ARM64	"6.1 6.12"
/* with native deferred callchains */
#define PERF_DEFER_TESTED_NATIVE	"7.2"

#endif /* _PERF_DEFER_TESTED_H */
