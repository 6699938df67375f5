// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test-only: keep a task that has just dropped the last perf_defer module
 * reference off its CPU for a while, before it returns into perf_defer.
 *
 * A probe on module_put()'s tracepoint (which module_put() hits after the
 * decrement, with preemption off) wakes, when a user task has put the
 * last perf_defer reference from perf_defer's own text, a SCHED_FIFO
 * kthread bound to that CPU which then spins for STALL_MS.  module_put()
 * ends with preempt_enable(): on a preemptible kernel (preempt=full,
 * PREEMPT_RT) the task is preempted right there and stays off the CPU
 * while rmmod on another CPU frees the module, unless perf_defer's exit
 * waits for it (tests/vm/unload_race.sh).  The tracepoint is not
 * exported: it is found by name.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#define STALL_MS	2000

static struct task_struct *pd_hogs[NR_CPUS];
static struct tracepoint *pd_tp;
static atomic_t pd_stalls = ATOMIC_INIT(0);

static int pd_hog_fn(void *unused)
{
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop()) {
			__set_current_state(TASK_RUNNING);
			return 0;
		}
		schedule();
		if (!kthread_should_stop())
			mdelay(STALL_MS);
	}
}

/* module_put(), after the decrement, preemption off */
static void pd_probe_module_put(void *data, struct module *mod, unsigned long ip)
{
	struct task_struct *hog;

	/*
	 * The last reference, put from perf_defer's own text (what follows
	 * the call is perf_defer's).  The count is negative while a racing
	 * rmmod has taken its base away (try_stop_module()): then too this
	 * was the last reference.
	 */
	if (strcmp(mod->name, "perf_defer") || (current->flags & PF_KTHREAD) ||
	    module_refcount(mod) > 0 || !within_module(ip, mod))
		return;
	hog = pd_hogs[smp_processor_id()];
	if (!hog)
		return;
	pr_info("stalling %s/%d after its last put, from %pS\n", current->comm, current->pid,
		(void *)ip);
	atomic_inc(&pd_stalls);
	wake_up_process(hog);
}

static void pd_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "module_put"))
		pd_tp = tp;
}

static void pd_stop_hogs(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		if (pd_hogs[cpu])
			kthread_stop(pd_hogs[cpu]);
		pd_hogs[cpu] = NULL;
	}
}

static int __init pd_test_preempt_init(void)
{
	struct task_struct *t;
	unsigned int cpu;
	int ret;

	for_each_kernel_tracepoint(pd_find_tp, NULL);
	if (!pd_tp) {
		pr_err("no module_put tracepoint\n");
		return -ENOENT;
	}
	for_each_online_cpu(cpu) {
		/* not kthread_create_on_cpu(): 5.10 does not export it */
		t = kthread_create(pd_hog_fn, NULL, "pd_hog/%u", cpu);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			goto err;
		}
		kthread_bind(t, cpu);
		sched_set_fifo(t);
		pd_hogs[cpu] = t;
		wake_up_process(t);	/* to its first sleep */
	}
	ret = tracepoint_probe_register(pd_tp, pd_probe_module_put, NULL);
	if (ret) {
		pr_err("cannot register on module_put: %d\n", ret);
		goto err;
	}
	return 0;

err:
	pd_stop_hogs();
	return ret;
}

static void __exit pd_test_preempt_exit(void)
{
	tracepoint_probe_unregister(pd_tp, pd_probe_module_put, NULL);
	tracepoint_synchronize_unregister();
	pd_stop_hogs();
	pr_info("stalled %d tasks after their last module_put\n", atomic_read(&pd_stalls));
}

module_init(pd_test_preempt_init);
module_exit(pd_test_preempt_exit);

MODULE_DESCRIPTION("perf_defer test: stall a task right after it drops the last module reference");
MODULE_LICENSE("GPL");
