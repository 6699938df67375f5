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
#include <linux/log2.h>
#include <linux/stat.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "perf_defer.h"

umode_t pd_dev_mode = 0600;
bool pd_verbose;
bool pd_row_cache = true;
unsigned int pd_pool_size = 1024;
unsigned int pd_user_sessions = 4;
unsigned int pd_user_unwind = PD_UW_ORDER_DEFAULT;
/* perf_event_mlock_kb's default, which a module cannot read */
unsigned int pd_mlock_kb = 512 + (PAGE_SIZE / 1024);

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

/* Set an unsigned int parameter to @val if it is in min..max (and a power of two). */
static int pd_param_set_range(const char *val, const struct kernel_param *kp,
			      unsigned int min, unsigned int max, bool pow2)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n < min || n > max || (pow2 && !is_power_of_2(n)))
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static int pool_size_set(const char *val, const struct kernel_param *kp)
{
	return pd_param_set_range(val, kp, 16, 65536, true);
}

static const struct kernel_param_ops pool_size_ops = {
	.set = pool_size_set,
	.get = param_get_uint,
};

module_param_cb(pool_size, &pool_size_ops, &pd_pool_size, 0444);
MODULE_PARM_DESC(pool_size,
		 "Deferred-unwind requests that can be pending at once, a power of two in 16..65536 (default: 1024)");

static int user_sessions_set(const char *val, const struct kernel_param *kp)
{
	return pd_param_set_range(val, kp, 1, PD_MAX_SESSIONS - PD_RESERVED_SESSIONS, false);
}

static const struct kernel_param_ops user_sessions_ops = {
	.set = user_sessions_set,
	.get = param_get_uint,
};

module_param_cb(user_sessions, &user_sessions_ops, &pd_user_sessions, 0644);
MODULE_PARM_DESC(user_sessions,
		 "Sessions one user without CAP_PERFMON may hold at once, 1..14 (default: 4)");

module_param_named(mlock_kb, pd_mlock_kb, uint, 0644);
MODULE_PARM_DESC(mlock_kb,
		 "Ring memory in KiB per online CPU a user may have before the rest counts against RLIMIT_MEMLOCK, as perf_event_mlock_kb for perf's rings (default: 516)");

static const char *const pd_uw_method_name[PD_UW_METHODS] = {
	[PD_UW_METHOD_FP] = "fp",
	[PD_UW_METHOD_SFRAME] = "sframe",
	[PD_UW_METHOD_EH_FRAME] = "eh_frame",
};

/* "sframe,eh_frame,fp": each method at most once, in the order to try */
static int user_unwind_set(const char *val, const struct kernel_param *kp)
{
	unsigned int order = 0, n = 0, m;
	char buf[48], *p = buf, *name;

	if (strscpy(buf, val, sizeof(buf)) < 0)
		return -EINVAL;
	while ((name = strsep(&p, ",")) != NULL) {
		name = strim(name);
		for (m = 1; m < PD_UW_METHODS; m++)
			if (!strcmp(name, pd_uw_method_name[m]))
				break;
		if (pd_uw_order_add(&order, n++, m))
			return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, order);
	return 0;
}

static int user_unwind_get(char *buffer, const struct kernel_param *kp)
{
	unsigned int order = READ_ONCE(*(unsigned int *)kp->arg);
	int len = 0;

	for (; order; order >>= PD_UW_METHOD_BITS)
		len += sysfs_emit_at(buffer, len, "%s%s", len ? "," : "",
				     pd_uw_method_name[order & PD_UW_METHOD_MASK]);
	return len + sysfs_emit_at(buffer, len, "\n");
}

static const struct kernel_param_ops user_unwind_ops = {
	.set = user_unwind_set,
	.get = user_unwind_get,
};

module_param_cb(user_unwind, &user_unwind_ops, &pd_user_unwind, 0644);
MODULE_PARM_DESC(user_unwind,
		 "User unwind methods to try for each frame, in order: sframe, eh_frame, fp (default: sframe,eh_frame,fp)");

module_param_named(row_cache, pd_row_cache, bool, 0644);
MODULE_PARM_DESC(row_cache,
		 "Keep the rows the table walk reads by object and PC, for later unwinds; N: read the tables for every frame (default: Y)");

const char *const pd_hooks_name[PD_HOOKS_WAYS] = {
	[PD_HOOKS_KPROBES] = "kprobes",
	[PD_HOOKS_FTRACE] = "ftrace",
};

/* How the hooks reach perf's sampling path (hooks.c) */
#ifndef PD_HOOKS_DEFAULT
#define PD_HOOKS_DEFAULT	PD_HOOKS_KPROBES
#endif
unsigned int pd_hooks_way = PD_HOOKS_DEFAULT;

static int hooks_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(pd_hooks_name, val);

	if (i < 0)
		return i;
	*(unsigned int *)kp->arg = i;
	return 0;
}

static int hooks_get(char *buffer, const struct kernel_param *kp)
{
	return sysfs_emit(buffer, "%s\n", pd_hooks_name[*(unsigned int *)kp->arg]);
}

static const struct kernel_param_ops hooks_ops = {
	.set = hooks_set,
	.get = hooks_get,
};

module_param_cb(hooks, &hooks_ops, &pd_hooks_way, 0444);
MODULE_PARM_DESC(hooks,
		 "How the module hooks perf's sampling path: kprobes, or ftrace (an ftrace_ops of its own, without the kprobes' bookkeeping per sample; x86-64, Linux 5.16 or later; the module's unloading then waits for an RCU-tasks grace period) (default: kprobes)");

module_param_named(verbose, pd_verbose, bool, 0644);
MODULE_PARM_DESC(verbose, "Log sessions and attach/detach (default: N)");

static int __init perf_defer_init(void)
{
	int ret;

	ret = pd_request_init();
	if (ret)
		goto err_request;
	ret = pd_hooks_init();
	if (ret)
		goto err_hooks;
	ret = pd_attach_init();
	if (ret)
		goto err_attach;
	ret = pd_session_init();
	if (ret)
		goto err_session;

	pr_info("loaded, ABI %d.%d, pool of %u requests\n",
		PERF_DEFER_ABI_MAJOR, PERF_DEFER_ABI_MINOR, pd_pool_size);
	return 0;

err_session:
	pd_attach_exit();
err_attach:
	pd_hooks_exit();
err_hooks:
	pd_request_exit();
err_request:
	return ret;
}

/*
 * Nothing is pending here: every open session and every queued request
 * holds a module reference, so rmmod is refused until they are gone.
 */
static void __exit perf_defer_exit(void)
{
	pd_session_exit();
	pd_attach_exit();
	pd_hooks_exit();
	pd_request_exit();
	pd_timing_report();
	pr_info("unloaded\n");
}

module_init(perf_defer_init);
module_exit(perf_defer_exit);

MODULE_AUTHOR("perf-defer developers");
MODULE_DESCRIPTION("Deferred user callchains for perf on kernels before 6.19");
MODULE_LICENSE("GPL");
MODULE_VERSION(PERF_DEFER_VERSION);
MODULE_INFO(abi_version, __stringify(PERF_DEFER_ABI_MAJOR) "." __stringify(PERF_DEFER_ABI_MINOR));
