// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test-only: drive perf_defer's hooks and request path from a real NMI.
 *
 * TCG has no PMU, so perf samples there come from the hrtimer (hardirq).
 * This module takes a perf event fd of the writer and, for each of COUNT
 * rounds, sends the CPU a self-NMI whose handler calls perf_callchain()
 * for that event, as a PMU overflow would.  The handler keeps the cookie
 * it finds after PERF_CONTEXT_USER_DEFERRED.
 *
 *	echo "PERF_FD COUNT" > /sys/kernel/debug/pd_test_nmi/trigger
 *	cat /sys/kernel/debug/pd_test_nmi/trigger
 *	  -> "nmis N deferred D cookies C1 C2 ...\nips I1 I2 ...\n"
 *
 * With "PERF_FD COUNT CPU PID" the NMIs go to another CPU, and count
 * only when they interrupt task PID there (in user mode, if it spins):
 * the IPs are those the NMIs interrupted.  "PERF_FD COUNT CPU PID SAMPLES"
 * calls perf_callchain() SAMPLES times in each NMI, as one interrupt
 * takes a sample of each event that overflowed: the cookies and IPs are
 * then SAMPLES per NMI.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#include <linux/perf_defer.h>

#define PD_TEST_MAX	64

static const struct file_operations *pd_perf_fops;
static struct perf_callchain_entry *(*pd_perf_callchain)(struct perf_event *event,
							 struct pt_regs *regs);
static struct perf_event *pd_armed_event;	/* set while an NMI is expected */
/* the handshake with the handler: idle, armed, taken by the handler, done */
enum { PD_IDLE, PD_ARMED, PD_TAKEN, PD_DONE };
static atomic_t pd_state = ATOMIC_INIT(PD_IDLE);
static int pd_armed_cpu = -1;
static pid_t pd_armed_pid;			/* 0: whoever runs */
static unsigned int pd_armed_samples = 1;	/* perf_callchain() calls per NMI */
static unsigned int pd_nmis, pd_deferred, pd_missed;
static u64 pd_cookies[PD_TEST_MAX], pd_ips[PD_TEST_MAX];
static DEFINE_MUTEX(pd_test_lock);
static struct dentry *pd_dir;

/* NMI: no locks, no allocation, no sleeping. */
static int pd_test_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct perf_event *event;
	struct perf_callchain_entry *entry;
	unsigned int n;
	u64 i;

	if (READ_ONCE(pd_armed_cpu) != smp_processor_id() ||
	    atomic_cmpxchg(&pd_state, PD_ARMED, PD_TAKEN) != PD_ARMED)
		return NMI_DONE;
	event = READ_ONCE(pd_armed_event);
	if (pd_armed_pid && task_pid_nr(current) != pd_armed_pid) {
		pd_missed++;
		atomic_set_release(&pd_state, PD_DONE);
		return NMI_HANDLED;
	}

	for (n = 0; n < READ_ONCE(pd_armed_samples); n++) {
		entry = pd_perf_callchain(event, regs);
		for (i = 0; entry && i + 1 < entry->nr; i++) {
			if (entry->ip[i] == PERF_DEFER_CONTEXT_USER_DEFERRED) {
				if (pd_deferred < PD_TEST_MAX) {
					pd_cookies[pd_deferred] = entry->ip[i + 1];
					pd_ips[pd_deferred] = regs->ip;
				}
				pd_deferred++;
				break;
			}
		}
	}
	pd_nmis++;
	atomic_set_release(&pd_state, PD_DONE);
	return NMI_HANDLED;
}

static int pd_test_fire(struct perf_event *event, unsigned int count, int target)
{
	unsigned int i;
	u64 deadline;
	int cpu;

	for (i = 0; i < count; i++) {
		if (target >= 0 && i)
			usleep_range(2000, 4000);	/* back to user space */
		cpu = get_cpu();
		if (target >= 0) {
			if (target == cpu || !cpu_online(target)) {
				put_cpu();
				return -EINVAL;
			}
			cpu = target;
		}
		WRITE_ONCE(pd_armed_cpu, cpu);
		WRITE_ONCE(pd_armed_event, event);
		atomic_set_release(&pd_state, PD_ARMED);
		apic->send_IPI_mask(cpumask_of(cpu), NMI_VECTOR);
		/*
		 * By the clock, not by a count of spins: an emulated CPU on a
		 * loaded host may not run for a while.  Give up only on an NMI
		 * that has not started; one that has is waited for, as it
		 * uses the event.
		 */
		deadline = ktime_get_ns() + NSEC_PER_SEC;
		while (atomic_read_acquire(&pd_state) != PD_DONE) {
			if (ktime_get_ns() > deadline &&
			    atomic_cmpxchg(&pd_state, PD_ARMED, PD_IDLE) == PD_ARMED) {
				put_cpu();
				return -ETIMEDOUT;
			}
			cpu_relax();
		}
		atomic_set(&pd_state, PD_IDLE);
		put_cpu();
	}
	return 0;
}

static ssize_t pd_trigger_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	unsigned int count, samples = 1;
	int fd, ret, n, cpu = -1;
	struct file *pf;
	char buf[48];
	pid_t pid = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	n = sscanf(buf, "%d %u %d %d %u", &fd, &count, &cpu, &pid, &samples);
	if ((n != 2 && n != 4 && n != 5) || !count || count > 1000 || !samples ||
	    samples > 4)
		return -EINVAL;
	pf = fget(fd);
	if (!pf)
		return -EBADF;
	if (pf->f_op != pd_perf_fops) {
		fput(pf);
		return -EINVAL;
	}

	mutex_lock(&pd_test_lock);
	pd_nmis = 0;
	pd_deferred = 0;
	pd_missed = 0;
	pd_armed_pid = pid;
	WRITE_ONCE(pd_armed_samples, samples);
	ret = pd_test_fire(pf->private_data, count, cpu);
	WRITE_ONCE(pd_armed_samples, 1);
	pd_armed_pid = 0;
	mutex_unlock(&pd_test_lock);
	fput(pf);
	return ret ?: len;
}

static ssize_t pd_trigger_read(struct file *file, char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	unsigned int i, n;
	ssize_t ret;
	char *buf;
	int off;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&pd_test_lock);
	off = scnprintf(buf, PAGE_SIZE, "nmis %u deferred %u missed %u cookies",
			pd_nmis, pd_deferred, pd_missed);
	n = min_t(unsigned int, pd_deferred, PD_TEST_MAX);
	for (i = 0; i < n; i++)
		off += scnprintf(buf + off, PAGE_SIZE - off, " %llx", pd_cookies[i]);
	off += scnprintf(buf + off, PAGE_SIZE - off, "\nips");
	for (i = 0; i < n; i++)
		off += scnprintf(buf + off, PAGE_SIZE - off, " %llx", pd_ips[i]);
	off += scnprintf(buf + off, PAGE_SIZE - off, "\n");
	mutex_unlock(&pd_test_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, buf, off);
	kfree(buf);
	return ret;
}

static const struct file_operations pd_trigger_fops = {
	.owner	= THIS_MODULE,
	.read	= pd_trigger_read,
	.write	= pd_trigger_write,
};

static unsigned long pd_lookup_name(const char *name)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long (*lookup)(const char *name);

	if (register_kprobe(&kp) < 0)
		return 0;
	lookup = (void *)kp.addr;
	unregister_kprobe(&kp);
	return lookup ? lookup(name) : 0;
}

static int __init pd_test_nmi_init(void)
{
	int ret;

	pd_perf_callchain = (void *)pd_lookup_name("perf_callchain");
	pd_perf_fops = (void *)pd_lookup_name("perf_fops");
	if (!pd_perf_callchain || !pd_perf_fops)
		return -ENOENT;
	ret = register_nmi_handler(NMI_LOCAL, pd_test_nmi_handler, 0, "pd_test_nmi");
	if (ret)
		goto err_nmi;
	pd_dir = debugfs_create_dir("pd_test_nmi", NULL);
	debugfs_create_file("trigger", 0600, pd_dir, NULL, &pd_trigger_fops);
	return 0;

err_nmi:
	return ret;
}

static void __exit pd_test_nmi_exit(void)
{
	debugfs_remove_recursive(pd_dir);
	unregister_nmi_handler(NMI_LOCAL, "pd_test_nmi");
}

module_init(pd_test_nmi_init);
module_exit(pd_test_nmi_exit);

MODULE_DESCRIPTION("perf-defer test: perf_callchain() from a self-NMI");
MODULE_LICENSE("GPL");
