// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /dev/perf_defer misc device.  Each open() is one session; the
 * ioctls are defined in include/uapi/linux/perf_defer.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "perf_defer.h"

/*
 * Copy an ioctl argument that starts with a __u32 size: the size must be
 * exactly what this module was built with.  Reserved fields are checked
 * by the caller.
 */
static int pd_copy_arg(void *dst, const void __user *src, u32 expect)
{
	u32 size;

	if (get_user(size, (const u32 __user *)src))
		return -EFAULT;
	if (size != expect)
		return -EINVAL;
	if (copy_from_user(dst, src, expect))
		return -EFAULT;
	return 0;
}

static long pd_ioctl_get_version(void __user *uarg)
{
	struct perf_defer_version v;
	int ret;

	ret = pd_copy_arg(&v, uarg, sizeof(v));
	if (ret)
		return ret;
	if (v.__reserved)
		return -EINVAL;

	v.major = PERF_DEFER_ABI_MAJOR;
	v.minor = PERF_DEFER_ABI_MINOR;
	return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long pd_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PERF_DEFER_IOC_GET_VERSION:
		return pd_ioctl_get_version(uarg);
	default:
		return -ENOTTY;
	}
}

static int pd_open(struct inode *inode, struct file *file)
{
	pd_dbg("session opened by pid %d\n", task_tgid_nr(current));
	return stream_open(inode, file);
}

static int pd_release(struct inode *inode, struct file *file)
{
	pd_dbg("session closed\n");
	return 0;
}

static const struct file_operations pd_fops = {
	.owner		= THIS_MODULE,
	.open		= pd_open,
	.release	= pd_release,
	.unlocked_ioctl	= pd_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice pd_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= PERF_DEFER_DEVICE_NAME,
	.fops	= &pd_fops,
};

int pd_session_init(void)
{
	int ret;

	pd_misc.mode = pd_dev_mode;
	ret = misc_register(&pd_misc);
	if (ret)
		pr_err("cannot register /dev/%s: %d\n", PERF_DEFER_DEVICE_NAME, ret);
	return ret;
}

void pd_session_exit(void)
{
	misc_deregister(&pd_misc);
}
