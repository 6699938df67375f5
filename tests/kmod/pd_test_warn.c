// SPDX-License-Identifier: GPL-2.0-only
/*
 * A deliberately broken module: it WARNs on load.  The test suite boots it
 * to prove that scripts/vm fails a run whose guest log shows a splat.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/bug.h>

static int __init pd_test_warn_init(void)
{
	WARN(1, "deliberate warning to test the harness\n");
	return 0;
}

static void __exit pd_test_warn_exit(void)
{
}

module_init(pd_test_warn_init);
module_exit(pd_test_warn_exit);

MODULE_DESCRIPTION("perf-defer test: WARN on load");
MODULE_LICENSE("GPL");
