// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /dev/perf_defer misc device.  Each open() is one session: it attaches
 * perf events by fd, and reads its records from per-CPU rings it maps.
 * The ioctls are defined in include/uapi/linux/perf_defer.h.  The
 * session and attach objects themselves, their table and lifetimes, are
 * attach.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
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

/*
 * perf's kernel.perf_event_max_contexts_per_stack, as the attaching process
 * reads it; 0 when it cannot (no /proc there).  perf refuses to change it
 * (-EBUSY) while any event with callchains exists, so the value read here
 * holds for as long as the attach holds its event.  The hook writes into
 * perf's buffer on the strength of it: only procfs's own file counts, not
 * something mounted over it.
 */
static u16 pd_read_max_contexts(void)
{
	static const char path[] = "/proc/sys/kernel/perf_event_max_contexts_per_stack";
	char buf[16] = { };
	struct dentry *d;
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	u16 val = 0;

	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return 0;
	d = f->f_path.dentry;
	if (d->d_sb->s_magic == PROC_SUPER_MAGIC &&
	    !strcmp(d->d_name.name, kbasename(path)) &&
	    !strcmp(d->d_parent->d_name.name, "kernel")) {
		n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
		if (n <= 0 || kstrtou16(strim(buf), 10, &val))
			val = 0;
	}
	filp_close(f, NULL);
	return val;
}

/* The perf event behind a caller's fd; holds the file on success. */
static struct perf_event *pd_perf_fget(int fd, struct file **filep)
{
	struct file *file = fget(fd);

	if (!file)
		return ERR_PTR(-EBADF);
	if (!pd_is_perf_file(file)) {
		fput(file);
		return ERR_PTR(-EINVAL);
	}
	*filep = file;
	return file->private_data;
}

static int pd_attach(struct pd_session *s, struct perf_event *event,
		     struct file *file, u16 max_contexts)
{
	const struct perf_event_attr *attr = &event->attr;
	struct pd_attach *att;
	int ret;

	if (!(attr->sample_type & PERF_SAMPLE_CALLCHAIN) ||
	    attr->exclude_callchain_user || !attr->sample_period)
		return -EINVAL;
	/* a dump needs registers to unwind from, and ones we can give */
	if (s->dump_stack && !pd_dump_mask_valid(attr->sample_regs_user))
		return -EINVAL;
	if (s->nr_attached >= PD_MAX_ATTACH)
		return -ENOSPC;
	if (pd_attach_find(event))
		return -EEXIST;
	ret = pd_rings_alloc(s);
	if (ret)
		return ret;

	att = kzalloc(sizeof(*att), GFP_KERNEL);
	if (!att)
		return -ENOMEM;
	refcount_set(&att->ref, 1);
	att->event = event;
	att->file = file;
	att->sess = s;
	att->idx = s->idx;
	att->sample_type = attr->sample_type;
	att->sample_id_all = attr->sample_id_all;
	att->id = event->id;
	att->ns = get_pid_ns(event->ns);
	att->clockid = attr->use_clockid ? attr->clockid : -1;
	att->max_stack = attr->sample_max_stack ?: PERF_MAX_STACK_DEPTH;
	att->max_contexts = max_contexts;
	att->dump_stack = s->dump_stack;
	att->unwind_order = s->unwind_order;
	if (s->dump_stack)
		att->regs_mask = attr->sample_regs_user;
	ret = pd_hooks_get();
	if (ret) {
		put_pid_ns(att->ns);
		kfree(att);
		return ret;
	}
	refcount_inc(&s->ref);
	pd_attach_add(s, att);
	return 0;
}

/* Unpublish an attach; the last one disarms the probes.  Under pd_lock. */
static void pd_detach(struct pd_session *s, struct pd_attach *att)
{
	pd_attach_del(s, att);
	pd_hooks_put();
}

static long pd_ioctl_attach(struct pd_session *s, void __user *uarg, bool attach)
{
	struct perf_defer_attach a;
	struct perf_event *event;
	struct pd_attach *att;
	struct file *file;
	u16 max_contexts = 0;
	int ret;

	ret = pd_copy_arg(&a, uarg, sizeof(a));
	if (ret)
		return ret;
	if (a.__reserved)
		return -EINVAL;
	event = pd_perf_fget(a.perf_fd, &file);
	if (IS_ERR(event))
		return PTR_ERR(event);
	if (attach)
		max_contexts = pd_read_max_contexts();

	mutex_lock(&pd_lock);
	if (attach) {
		ret = pd_attach(s, event, file, max_contexts);
		if (!ret)
			file = NULL;	/* the attach holds it now */
	} else {
		ret = -ENOENT;
		list_for_each_entry(att, &s->attaches, list) {
			if (att->event == event) {
				pd_detach(s, att);
				ret = 0;
				break;
			}
		}
	}
	mutex_unlock(&pd_lock);
	if (file)
		fput(file);
	return ret;
}

static long pd_ioctl_set_ring(struct pd_session *s, void __user *uarg)
{
	struct perf_defer_ring r;
	int ret;

	ret = pd_copy_arg(&r, uarg, sizeof(r));
	if (ret)
		return ret;
	if (r.__reserved || !r.data_pages || !is_power_of_2(r.data_pages) ||
	    r.data_pages > PERF_DEFER_RING_MAX_PAGES ||
	    r.wakeup_bytes >= (size_t)r.data_pages << PAGE_SHIFT)
		return -EINVAL;

	mutex_lock(&pd_lock);
	if (s->rings) {
		ret = -EBUSY;
	} else if (s->dump_stack &&
		   pd_dump_record_max(s->dump_stack) > (size_t)r.data_pages << PAGE_SHIFT) {
		ret = -EINVAL;	/* its dumps would never fit */
	} else {
		s->data_pages = r.data_pages;
		s->wakeup_bytes = r.wakeup_bytes;
	}
	mutex_unlock(&pd_lock);
	return ret;
}

static long pd_ioctl_set_dump(struct pd_session *s, void __user *uarg)
{
	struct perf_defer_dump d;
	u32 stack = 0;
	int ret;

	ret = pd_copy_arg(&d, uarg, sizeof(d));
	if (ret)
		return ret;
	if (d.__reserved || (d.flags & ~PERF_DEFER_DUMP_REGS_STACK) ||
	    d.stack_size > PERF_DEFER_DUMP_MAX_STACK)
		return -EINVAL;
	if (d.flags & PERF_DEFER_DUMP_REGS_STACK)
		stack = round_up(d.stack_size ?: PERF_DEFER_DUMP_DEF_STACK, sizeof(u64));

	mutex_lock(&pd_lock);
	if (s->nr_attached)
		ret = -EBUSY;
	else if (stack && pd_dump_record_max(stack) > (size_t)s->data_pages << PAGE_SHIFT)
		ret = -EINVAL;	/* a record larger than the ring: never cut it */
	else
		s->dump_stack = stack;
	mutex_unlock(&pd_lock);
	return ret;
}

static long pd_ioctl_set_unwind(struct pd_session *s, void __user *uarg)
{
	unsigned int order = 0, i;
	struct perf_defer_unwind u;
	int ret;

	ret = pd_copy_arg(&u, uarg, sizeof(u));
	if (ret)
		return ret;
	if (u.__reserved)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(u.methods) && u.methods[i]; i++)
		if (pd_uw_order_add(&order, i, u.methods[i]))
			return -EINVAL;
	/* nothing after the end */
	for (; i < ARRAY_SIZE(u.methods); i++)
		if (u.methods[i])
			return -EINVAL;

	mutex_lock(&pd_lock);
	if (s->nr_attached)
		ret = -EBUSY;
	else
		s->unwind_order = order;
	mutex_unlock(&pd_lock);
	return ret;
}

/* The GET_STATS of every ABI: its struct ends at @pending, or later */
static_assert(offsetof(struct perf_defer_stats, after_unwind) == PERF_DEFER_STATS_SIZE_VER0);

static bool pd_is_get_stats(unsigned int cmd)
{
	return _IOC_TYPE(cmd) == PERF_DEFER_MAGIC &&
	       _IOC_NR(cmd) == _IOC_NR(PERF_DEFER_IOC_GET_STATS) &&
	       _IOC_DIR(cmd) == (_IOC_READ | _IOC_WRITE) &&
	       _IOC_SIZE(cmd) >= PERF_DEFER_STATS_SIZE_VER0 &&
	       _IOC_SIZE(cmd) <= sizeof(struct perf_defer_stats) && !(_IOC_SIZE(cmd) % 8);
}

/* @size: the caller's struct, from the ioctl number (pd_is_get_stats()) */
static long pd_ioctl_get_stats(void __user *uarg, u32 size)
{
	struct perf_defer_stats st;
	u64 works = 0;
	int ret, cpu;

	ret = pd_copy_arg(&st, uarg, size);
	if (ret)
		return ret;
	if (st.__reserved)
		return -EINVAL;

	st = (struct perf_defer_stats){ .size = size };
	for_each_possible_cpu(cpu) {
		const struct pd_counters *c = per_cpu_ptr(&pd_counters, cpu);

		st.requests += READ_ONCE(c->requests);
		st.dedup += READ_ONCE(c->dedup);
		st.unwinds += READ_ONCE(c->unwinds);
		st.records += READ_ONCE(c->records);
		st.drops += READ_ONCE(c->drops);
		st.pool_empty += READ_ONCE(c->pool_empty);
		st.exit_pending += READ_ONCE(c->exit_pending);
		st.after_unwind += READ_ONCE(c->after_unwind);
		st.frames_fp += READ_ONCE(c->uw_frames[PD_UW_METHOD_FP]);
		st.frames_sframe += READ_ONCE(c->uw_frames[PD_UW_METHOD_SFRAME]);
		st.frames_eh_frame += READ_ONCE(c->uw_frames[PD_UW_METHOD_EH_FRAME]);
		st.table_objects += READ_ONCE(c->uw_objects);
		st.table_stopped += READ_ONCE(c->uw_stopped);
		st.table_cache_hits += READ_ONCE(c->uw_cache_hits);
		st.in_exec += READ_ONCE(c->in_exec);
		st.table_rows += READ_ONCE(c->uw_rows);
		st.table_row_hits += READ_ONCE(c->uw_row_hits);
		st.walk_ns += READ_ONCE(c->walk_ns);
		works += READ_ONCE(c->works);
	}
	/*
	 * Requests whose task_work has not run: each request not a join
	 * queued one, which always runs (in an exiting task too), so no
	 * shared atomic on the hook path.  A sum taken while tasks sample
	 * can count a join or a task_work's run and not the request it goes
	 * with, on a CPU read before: none then.
	 */
	st.pending = st.requests > st.dedup + works ? st.requests - st.dedup - works : 0;
	return copy_to_user(uarg, &st, size) ? -EFAULT : 0;
}

static long pd_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pd_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PERF_DEFER_IOC_GET_VERSION:
		return pd_ioctl_get_version(uarg);
	case PERF_DEFER_IOC_ATTACH:
		return pd_ioctl_attach(s, uarg, true);
	case PERF_DEFER_IOC_DETACH:
		return pd_ioctl_attach(s, uarg, false);
	case PERF_DEFER_IOC_SET_RING:
		return pd_ioctl_set_ring(s, uarg);
	case PERF_DEFER_IOC_GET_STATS:
		return pd_ioctl_get_stats(uarg, sizeof(struct perf_defer_stats));
	case PERF_DEFER_IOC_SET_DUMP:
		return pd_ioctl_set_dump(s, uarg);
	case PERF_DEFER_IOC_SET_UNWIND:
		return pd_ioctl_set_unwind(s, uarg);
	default:
		if (pd_is_get_stats(cmd))
			return pd_ioctl_get_stats(uarg, _IOC_SIZE(cmd));
		return -ENOTTY;
	}
}

static int pd_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pd_session *s = file->private_data;
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	mutex_lock(&pd_lock);
	ret = pd_rings_alloc(s);
	if (!ret)
		ret = pd_ring_mmap(s, vma);
	mutex_unlock(&pd_lock);
	return ret;
}

static __poll_t pd_poll(struct file *file, poll_table *wait)
{
	struct pd_session *s = file->private_data;

	poll_wait(file, &s->wq, wait);
	return pd_rings_readable(s) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int pd_open(struct inode *inode, struct file *file)
{
	struct pd_session *s;
	int ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	refcount_set(&s->ref, 1);
	INIT_LIST_HEAD(&s->attaches);
	init_waitqueue_head(&s->wq);
	s->data_pages = PERF_DEFER_RING_DEF_PAGES;
	s->uid = current_euid();
	s->privileged = perfmon_capable();

	ret = pd_session_add(s);
	if (ret) {
		kfree(s);
		return ret;
	}
	file->private_data = s;
	pd_dbg("session %u opened by pid %d\n", s->idx, task_tgid_nr(current));
	return stream_open(inode, file);
}

static int pd_release(struct inode *inode, struct file *file)
{
	struct pd_session *s = file->private_data;
	struct pd_attach *att, *tmp;

	mutex_lock(&pd_lock);
	WRITE_ONCE(s->closed, true);
	list_for_each_entry_safe(att, tmp, &s->attaches, list)
		pd_detach(s, att);
	mutex_unlock(&pd_lock);
	pd_dbg("session %u closed\n", s->idx);
	pd_session_put(s);
	return 0;
}

static const struct file_operations pd_fops = {
	.owner		= THIS_MODULE,
	.open		= pd_open,
	.release	= pd_release,
	.unlocked_ioctl	= pd_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= pd_mmap,
	.poll		= pd_poll,
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
