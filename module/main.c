// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf_defer - deferred user callchains for perf on kernels before 6.19
 *
 * Module entry: parameters and the init ladder.  Each step of init is
 * undone in exact reverse order on failure and on exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/stat.h>

#include "perf_defer.h"

umode_t pd_dev_mode = 0600;
bool pd_verbose;

static int dev_mode_set(const char *val, const struct kernel_param *kp)
{
	unsigned int mode;
	int ret;

	ret = kstrtouint(val, 8, &mode);
	if (ret)
		return ret;
	if (mode & ~0666u)
		return -EINVAL;
	*(umode_t *)kp->arg = mode;
	return 0;
}

static int dev_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%04o\n", *(umode_t *)kp->arg);
}

static const struct kernel_param_ops dev_mode_ops = {
	.set = dev_mode_set,
	.get = dev_mode_get,
};

module_param_cb(dev_mode, &dev_mode_ops, &pd_dev_mode, 0444);
MODULE_PARM_DESC(dev_mode,
		 "Octal file mode of /dev/perf_defer, read/write bits only (default: 0600)");

module_param_named(verbose, pd_verbose, bool, 0644);
MODULE_PARM_DESC(verbose, "Log sessions and attach/detach (default: N)");

static int __init perf_defer_init(void)
{
	int ret;

	ret = pd_session_init();
	if (ret)
		goto err_session;

	pr_info("loaded, ABI %d.%d\n", PERF_DEFER_ABI_MAJOR, PERF_DEFER_ABI_MINOR);
	return 0;

err_session:
	return ret;
}

static void __exit perf_defer_exit(void)
{
	pd_session_exit();
	pr_info("unloaded\n");
}

module_init(perf_defer_init);
module_exit(perf_defer_exit);

MODULE_AUTHOR("perf-defer developers");
MODULE_DESCRIPTION("Deferred user callchains for perf on kernels before 6.19");
MODULE_LICENSE("GPL");
MODULE_INFO(abi_version, __stringify(PERF_DEFER_ABI_MAJOR) "." __stringify(PERF_DEFER_ABI_MINOR));
