// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hooks into perf's sampling path, at the entry of two functions:
 *
 *  - perf_callchain(event, regs) notes, per CPU and context level, which
 *    event is taking this sample, if perf is to walk its user stack;
 *  - perf_callchain_user(ctx, regs) then, for an attached event, turns the
 *    PERF_CONTEXT_USER mark get_perf_callchain() just stored into
 *    PERF_CONTEXT_USER_DEFERRED, appends the request's cookie and skips
 *    the in-NMI user walk by returning to its caller at once, as the
 *    kernel's own error injection does: on x86-64 through a 'ret' stub,
 *    on arm64 by setting the PC to the link register, which at the
 *    function's first instruction still holds the return address.
 *
 * Two ways in (the hooks parameter).  By default two kprobes, on ftrace
 * where the function has an ftrace site.  With hooks=ftrace, on x86-64
 * where both functions have one (5.16), an ftrace_ops of the module's
 * own with regs, whose callback ftrace's trampoline calls directly: a
 * kprobe on ftrace costs a sample more (docs/bench.md, the hook's
 * section).  The kprobes are registered either way, disabled with the
 * ftrace hooks: they find the sites' addresses, and catch a stray int3
 * at them (pd_stray_int3()).
 *
 * Events that no session attached are left alone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/objtool.h>
#include <linux/perf_event.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <asm/linkage.h>
#include <asm/ptrace.h>

#include "perf_defer.h"

#ifdef CONFIG_X86_64
asmlinkage void pd_ret_stub(void);

/* Entered by 'ret'-ing from the ftrace trampoline: no ENDBR needed. */
asm(
	".text\n"
	".type pd_ret_stub, @function\n"
	".globl pd_ret_stub\n"
	"pd_ret_stub:\n"
		ANNOTATE_NOENDBR
		ASM_RET
	".size pd_ret_stub, .-pd_ret_stub\n"
);

/* Return from the probed function at once, as if it had done nothing. */
static __always_inline void pd_skip_function(struct pt_regs *regs)
{
	regs->ip = (unsigned long)pd_ret_stub;
}
#else
static __always_inline void pd_skip_function(struct pt_regs *regs)
{
	instruction_pointer_set(regs, procedure_link_pointer(regs));
}
#endif

/* What perf_callchain() told us, per context level (task/softirq/irq/NMI). */
struct pd_slot {
	struct perf_event	*event;	/* the (parent) event: a key only */
	u64			id;	/* of the sampling (maybe inherited) event */
	struct pt_regs		*regs;	/* the sample's regs: compared, never read */
	bool			user;	/* they were user mode's */
};

static DEFINE_PER_CPU(struct pd_slot, pd_slots[4]);

/* The context level (task, softirq, hardirq, NMI) of a preempt_count */
static __always_inline unsigned int pd_level_of(unsigned long pc)
{
	if (pc & NMI_MASK)
		return 3;
	if (pc & HARDIRQ_MASK)
		return 2;
	return pc & SOFTIRQ_OFFSET ? 1 : 0;
}

/*
 * The context level of the code the probe @p interrupted, the slot both
 * hooks of one sample use.  A probe reached through ftrace, or through an
 * optimised jump, runs in that code's context, as the ftrace hooks do.
 * One reached through int3 does not: x86 (since 5.9) handles a kernel
 * int3 as an NMI, whose nmi_enter() adds NMI_OFFSET + HARDIRQ_OFFSET, so
 * it reads as level 3.  perf_callchain() has an ftrace entry from 5.16 on
 * only (before, its object was built without), and perf_callchain_user()
 * has one: on 5.10 the two hooks of a hardirq sample would use slots 3
 * and 2.  Neither probe is ever optimised (both have a post-handler), so
 * kprobe_ftrace() tells the two ways apart, and an int3 in a real NMI
 * still reads as level 3.  On arm64, whose probes are all BRK
 * instructions, the debug exception that runs them adds nothing to
 * preempt_count's context bits (arm64_enter_el1_dbg() is no
 * nmi_enter()): there the count is the interrupted code's, PMU samples
 * taken in a hard interrupt unless the kernel has pseudo-NMIs.
 */
static __always_inline unsigned int pd_probe_level(struct kprobe *p)
{
	unsigned long pc = preempt_count();

	if (IS_ENABLED(CONFIG_X86_64) && !kprobe_ftrace(p) && (pc & NMI_MASK))
		pc -= NMI_OFFSET + HARDIRQ_OFFSET;
	return pd_level_of(pc);
}

/*
 * An int3 at the site of a probe that ftrace carries.  text_poke_bp()
 * puts an int3 at an ftrace site while it patches it and emulates the
 * instruction itself; one that reaches kprobes is a stale copy of that
 * patching (seen under multi-threaded QEMU, when the probes are armed
 * while the sites run on the other CPU).  kprobes would then single-step
 * from the probe's copy of the instruction, which a probe on ftrace does
 * not have (NULL).  Step over the 5-byte site instead, as if it were the
 * nop it is when unpatched: the sample keeps perf's own walk.  The int3
 * entry code saves orig_ax as -1, ftrace's trampoline as 0.  Patching the
 * sites for the ftrace hooks can leave the same int3: the disabled
 * kprobes at the sites still catch it (kprobes look a probe up by the
 * int3's address, armed or not), which is why they stay registered.
 */
#ifdef CONFIG_X86_64
#ifndef MCOUNT_INSN_SIZE
#define MCOUNT_INSN_SIZE	5	/* no ftrace, no probe on it: never used */
#endif

static __always_inline bool pd_stray_int3(struct kprobe *p, struct pt_regs *regs)
{
	if (!kprobe_ftrace(p) || regs->orig_ax != (unsigned long)-1)
		return false;
	regs->ip = (unsigned long)p->addr + MCOUNT_INSN_SIZE;
	return true;
}
#else
/* arm64 has no kprobes on ftrace: every probe is a BRK of its own */
static __always_inline bool pd_stray_int3(struct kprobe *p, struct pt_regs *regs)
{
	return false;
}
#endif

/*
 * Tasks that never return to user space to run the unwind: kernel
 * threads, io_uring and other user workers, and tasks on their way out.
 */
#ifdef PD_HAVE_PF_USER_WORKER
#define PD_NEVER_DEFER	(PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER | PF_EXITING)
#else
#define PD_NEVER_DEFER	(PF_KTHREAD | PF_IO_WORKER | PF_EXITING)
#endif

/*
 * perf's file_operations, learnt from the first file whose release method
 * kallsyms names perf_release.  Never called: only compared.
 */
static const struct file_operations *pd_perf_fops;

/*
 * Is @file a perf event?  perf_fops is not exported, and the module takes
 * no address from kallsyms_lookup_name() (not exported either; calling it
 * through a kprobe's address faults on IBT kernels, where the probe sits
 * after the ENDBR).  Asking kallsyms for the name of the file's release
 * method is enough: the first file whose f_op->release is
 * "perf_release+0x0/..." in vmlinux teaches perf_fops, and later checks
 * are a comparison.  A function, not perf_fops itself: kallsyms names
 * data only with CONFIG_KALLSYMS_ALL, which Debian's arm64 6.1 lacks.
 */
bool pd_is_perf_file(struct file *file)
{
	const struct file_operations *fops = READ_ONCE(pd_perf_fops);
	static const char want[] = "perf_release+0x0/";
	char name[KSYM_SYMBOL_LEN];

	if (fops)
		return file->f_op == fops;
	if (!file->f_op || !file->f_op->release)
		return false;
	sprint_symbol(name, (unsigned long)file->f_op->release);
	/* a module's symbol would be followed by " [module]" */
	if (strncmp(name, want, sizeof(want) - 1) || strchr(name, '['))
		return false;
	WRITE_ONCE(pd_perf_fops, file->f_op);
	return true;
}

/*
 * perf_callchain(event, regs)'s hook, at context level @level.
 * NMI-safe: no locks, no allocation, no sleeping.
 */
static __always_inline void pd_on_perf_callchain(struct pt_regs *regs, unsigned int level)
{
	struct perf_event *event = (struct perf_event *)regs_get_kernel_argument(regs, 0);
	struct perf_event *key = event->parent ?: event;
	struct pd_slot *slot = this_cpu_ptr(&pd_slots[level]);
	u64 t0 = pd_t_now();

	slot->event = NULL;
	/* get_perf_callchain() walks the user stack only under these */
	if (event->attr.exclude_callchain_user || !current->mm ||
	    (event->ctx->task && event->ctx->task != current))
		return;
	/* attached or not: perf_callchain_user()'s hook looks it up */
	slot->event = key;
	slot->id = event->id;
	slot->regs = (struct pt_regs *)regs_get_kernel_argument(regs, 1);
	slot->user = user_mode(slot->regs);
	pd_t_add(PD_T_CALLCHAIN, t0);
}

/*
 * Is there room for the cookie?  Upstream stores it as a context entry: it
 * needs one more of those, not room below the event's sample_max_stack,
 * which kernel frames may have used up.  perf's buffer holds
 * perf_event_max_stack + perf_event_max_contexts_per_stack entries, and
 * the event's max_stack is at most the former, so either test keeps the
 * store inside it.  Without the sysctl's value (att->max_contexts is 0
 * when the attaching process could not read it), only room below
 * max_stack is known.
 */
static bool pd_cookie_fits(const struct perf_callchain_entry_ctx *ctx,
			   const struct pd_attach *att)
{
	if (ctx->contexts_maxed)
		return false;
	if (att->max_contexts)
		return ctx->contexts < att->max_contexts;
	return ctx->nr < ctx->max_stack;
}

/*
 * perf_callchain_user(ctx, regs)'s hook, at context level @level: true
 * when the sample is deferred, and the function is to be skipped.
 * NMI-safe: no locks, no allocation, no sleeping.
 */
static __always_inline bool pd_on_perf_callchain_user(struct pt_regs *regs, unsigned int level)
{
	struct perf_callchain_entry_ctx *ctx = (void *)regs_get_kernel_argument(regs, 0);
	struct pt_regs *uregs = (struct pt_regs *)regs_get_kernel_argument(regs, 1);
	struct perf_callchain_entry *entry = ctx->entry;
	struct perf_event *key;
	struct pd_attach *att;
	struct pd_slot *slot = this_cpu_ptr(&pd_slots[level]);
	u64 t0 = pd_t_now();
	bool from_user;
	u64 cookie;

	key = slot->event;
	slot->event = NULL;
	if (!key)
		return false;
	/*
	 * Only the walk that follows our perf_callchain() on this level.  A
	 * slot that one left behind holds regs that may be gone: compare
	 * them, and take their mode from the slot.
	 */
	from_user = slot->user;
	if (uregs != (from_user ? slot->regs : task_pt_regs(current)))
		return false;
	if (current->flags & PD_NEVER_DEFER)
		return false;
	/*
	 * The one lookup of the sample's event: perf_callchain()'s handler
	 * noted it unlooked.  The slot keeps the event, never the attach: a
	 * slot that a perf_callchain() without walk left behind (BPF's stack
	 * helpers call the walk without perf_callchain()) must never hand out
	 * an attach freed since.  An RCU state cookie kept with the pointer
	 * would not do: a grace period already running when the cookie is
	 * taken can end, and the attach be freed, while polling the cookie
	 * still says none has.  A hash hit on an attached event.
	 */
	att = pd_attach_find(key);
	if (!att)
		return false;
	/*
	 * Inside execve(): the task_work runs after the exec, whose stack is
	 * not the one the sample saw, and writes no record.  perf's walk in
	 * the interrupt reads what there is (the old image's stack until the
	 * new mm replaces it), as without the module.  perf's events enabled
	 * on exec take their first samples here (perf_event_exec()).
	 */
	if (current->in_execve) {
		pd_count(in_exec);
		return false;
	}
	if (!entry->nr || entry->ip[entry->nr - 1] != PERF_CONTEXT_USER)
		return false;
	/*
	 * A kernel-mode sample with nothing between PERF_CONTEXT_KERNEL and
	 * PERF_CONTEXT_USER: x86's perf_callchain_kernel() stored nothing,
	 * which it does only while a KVM guest runs (perf_guest_state()).
	 * perf_callchain_user() then stores nothing either; the host VMM's
	 * stack is not the sample's, so leave it to perf.
	 */
	if (!from_user && entry->nr >= 2 && entry->ip[entry->nr - 2] == PERF_CONTEXT_KERNEL)
		return false;
	if (!pd_cookie_fits(ctx, att))
		return false;
	pd_t_add(PD_T_CHECKS, t0);
	cookie = pd_request(att, from_user, slot->id);
	if (!cookie)
		return false;

	entry->ip[entry->nr - 1] = PERF_DEFER_CONTEXT_USER_DEFERRED;
	entry->ip[entry->nr++] = cookie;
	ctx->contexts++;
	pd_t_add(PD_T_USER, t0);
	return true;
}

/* The kprobes' pre-handlers */
static int pd_pre_perf_callchain(struct kprobe *p, struct pt_regs *regs)
{
	if (pd_stray_int3(p, regs))
		return 1;
	pd_on_perf_callchain(regs, pd_probe_level(p));
	return 0;
}
NOKPROBE_SYMBOL(pd_pre_perf_callchain);

static int pd_pre_perf_callchain_user(struct kprobe *p, struct pt_regs *regs)
{
	if (pd_stray_int3(p, regs))
		return 1;
	if (!pd_on_perf_callchain_user(regs, pd_probe_level(p)))
		return 0;
	pd_skip_function(regs);
	return 1;
}
NOKPROBE_SYMBOL(pd_pre_perf_callchain_user);

/*
 * Does nothing (and is never called for a sample we defer: the
 * pre-handler changed the IP), but its presence is what kprobes key on: a
 * probe with a post-handler is never jump-optimised (an optimised probe
 * cannot change the IP, and pd_probe_level() must know how the probe was
 * reached), and on ftrace it is registered with FTRACE_OPS_FL_IPMODIFY,
 * so a livepatch of either function is refused while we hold it instead
 * of clashing.
 */
static void pd_post_nop(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}
NOKPROBE_SYMBOL(pd_post_nop);

/* Registered disabled: armed only while an event is attached. */
static struct kprobe pd_kp_callchain = {
	.symbol_name	= "perf_callchain",
	.pre_handler	= pd_pre_perf_callchain,
	.post_handler	= pd_post_nop,
	.flags		= KPROBE_FLAG_DISABLED,
};

static struct kprobe pd_kp_callchain_user = {
	.symbol_name	= "perf_callchain_user",
	.pre_handler	= pd_pre_perf_callchain_user,
	.post_handler	= pd_post_nop,
	.flags		= KPROBE_FLAG_DISABLED,
};

/*
 * The ftrace hooks: x86-64, and kernels whose callbacks take ftrace_regs
 * (5.11; the ftrace site of perf_callchain() comes with 5.16).
 */
#if defined(CONFIG_X86_64) && defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS) && \
	defined(PD_HAVE_FTRACE_GET_REGS)
#define PD_FTRACE_HOOKS	1

/*
 * A hook running on this CPU: an NMI that samples while a hook runs
 * keeps perf's own walk, as a kprobe hit while another runs counts as
 * missed.  The hooks' per-CPU state is never entered twice.
 */
static DEFINE_PER_CPU(unsigned int, pd_hook_busy);

/*
 * The ftrace_ops callback of both sites, called from the trampoline with
 * the regs saved (FTRACE_OPS_FL_SAVE_REGS), in the context of the
 * sampling code, preemption as it was.  It changes regs->ip to skip
 * perf_callchain_user() (FTRACE_OPS_FL_IPMODIFY, which also refuses a
 * livepatch of either function while the hooks are armed).  No
 * ftrace_test_recursion_trylock(): nothing it calls is traced by this
 * ops, and pd_hook_busy refuses the one nesting there is.
 */
static void notrace pd_ftrace_hook(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	unsigned int level;

	if (unlikely(!regs))
		return;
	preempt_disable_notrace();
	if (unlikely(__this_cpu_read(pd_hook_busy)))
		goto out;
	__this_cpu_write(pd_hook_busy, 1);
	level = pd_level_of(preempt_count());
	/* by its site; the idle filter's function is never called */
	if (ip == (unsigned long)pd_kp_callchain.addr)
		pd_on_perf_callchain(regs, level);
	else if (ip == (unsigned long)pd_kp_callchain_user.addr &&
		 pd_on_perf_callchain_user(regs, level))
		pd_skip_function(regs);
	__this_cpu_write(pd_hook_busy, 0);
out:
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(pd_ftrace_hook);

static struct ftrace_ops pd_ftrace_ops = {
	.func	= pd_ftrace_hook,
	.flags	= FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
};

/*
 * The ftrace_ops is registered at the first arming and stays registered
 * until the module is unloaded; arming and disarming add the two sites
 * to its filter and take them out.  Unregistering it would wait for an
 * RCU-tasks grace period (ftrace_shutdown(): a task may have been
 * preempted on the trampoline of an ops that may be freed), which lasts
 * until every task that was running has slept or been caught in user
 * mode by a tick: seconds, on a machine busy in system calls.  A filter
 * change waits for nothing.  An empty filter would mean every function,
 * so while disarmed it holds one that is never called, this one.
 */
static noinline void pd_ftrace_idle(void)
{
	barrier();
}

static bool pd_ftrace_registered;

/* Both kprobes (registered) sit on ftrace sites: the idle filter set */
static int pd_ftrace_init(void)
{
	int ret;

	if (!kprobe_ftrace(&pd_kp_callchain) || !kprobe_ftrace(&pd_kp_callchain_user))
		return -EOPNOTSUPP;
	ret = ftrace_set_filter_ip(&pd_ftrace_ops, (unsigned long)pd_ftrace_idle, 0, 0);
	if (ret)
		ftrace_free_filter(&pd_ftrace_ops);
	return ret;
}

static int pd_ftrace_site(struct kprobe *kp, int remove)
{
	return ftrace_set_filter_ip(&pd_ftrace_ops, (unsigned long)kp->addr, remove, 0);
}

/* The hook after the walk first, as the kprobes */
static int pd_ftrace_arm(void)
{
	int ret;

	ret = pd_ftrace_site(&pd_kp_callchain_user, 0);
	if (ret)
		return ret;
	ret = pd_ftrace_site(&pd_kp_callchain, 0);
	if (ret)
		goto err_callchain;
	if (!pd_ftrace_registered) {
		ret = register_ftrace_function(&pd_ftrace_ops);
		if (ret)
			goto err_register;
		pd_ftrace_registered = true;
	}
	return 0;

err_register:
	pd_ftrace_site(&pd_kp_callchain, 1);
err_callchain:
	pd_ftrace_site(&pd_kp_callchain_user, 1);
	return ret;
}

/*
 * Out of the filter, the sites are nops again.  Taking a site out copies
 * the filter (ftrace_set_hash()), which can fail under memory pressure:
 * the site then stays hooked until the next disarming, and the callback
 * finds no attached event there and leaves the sample alone.
 */
static void pd_ftrace_disarm(void)
{
	int ret = pd_ftrace_site(&pd_kp_callchain, 1);

	ret |= pd_ftrace_site(&pd_kp_callchain_user, 1);
	if (ret)
		pr_warn("the ftrace hooks stay until the next disarming: %d\n", ret);
}

/* Returns once no callback runs any more (ftrace_shutdown()) */
static void pd_ftrace_exit(void)
{
	if (pd_ftrace_registered)
		unregister_ftrace_function(&pd_ftrace_ops);
	ftrace_free_filter(&pd_ftrace_ops);
}
#else
#define PD_FTRACE_HOOKS	0
static int pd_ftrace_init(void)
{
	return -EOPNOTSUPP;
}

static int pd_ftrace_arm(void)
{
	return -EOPNOTSUPP;
}

static void pd_ftrace_disarm(void)
{
}

static void pd_ftrace_exit(void)
{
}
#endif

/* The kprobes' arming: the hook after the walk first, as the ftrace hooks */
static int pd_kprobes_arm(void)
{
	int ret;

	ret = enable_kprobe(&pd_kp_callchain_user);
	if (ret)
		return ret;
	ret = enable_kprobe(&pd_kp_callchain);
	if (ret)
		disable_kprobe(&pd_kp_callchain_user);
	return ret;
}

static void pd_kprobes_disarm(void)
{
	disable_kprobe(&pd_kp_callchain);
	disable_kprobe(&pd_kp_callchain_user);
}

/* Attached events, which want the hooks armed.  Under pd_lock. */
static unsigned int pd_hooks_users;

/*
 * Arm the hooks for a new attach, if it is the first: until then a
 * sample anywhere on the machine runs exactly as without the module (a
 * disabled probe, or a site out of the ftrace_ops' filter, is no ftrace
 * callback and no int3).  Either way the hook after the walk is armed
 * first, so that any perf_callchain() we see is followed by it.
 */
int pd_hooks_get(void)
{
	int ret;

	lockdep_assert_held(&pd_lock);
	if (pd_hooks_users++)
		return 0;
	ret = pd_hooks_way == PD_HOOKS_FTRACE ? pd_ftrace_arm() : pd_kprobes_arm();
	if (ret) {
		pd_hooks_users--;
		pr_err("cannot arm the %s hooks: %d\n", pd_hooks_name[pd_hooks_way], ret);
	}
	return ret;
}

/*
 * Disarm the hooks after the last detach.  Handlers run with preemption
 * off (NMI, IRQ, ftrace): after the grace period none runs any more, and
 * the slots are cleared for the next arming, which must find none left by
 * a perf_callchain() whose walk never came.
 */
void pd_hooks_put(void)
{
	int cpu;

	lockdep_assert_held(&pd_lock);
	if (--pd_hooks_users)
		return;
	if (pd_hooks_way == PD_HOOKS_FTRACE)
		pd_ftrace_disarm();
	else
		pd_kprobes_disarm();
	synchronize_rcu();
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(pd_slots, cpu), 0, sizeof(pd_slots));
}

int pd_hooks_init(void)
{
	int ret;

	ret = register_kprobe(&pd_kp_callchain_user);
	if (ret) {
		pr_err("cannot probe perf_callchain_user: %d\n", ret);
		goto err_user;
	}
	ret = register_kprobe(&pd_kp_callchain);
	if (ret) {
		pr_err("cannot probe perf_callchain: %d\n", ret);
		goto err_callchain;
	}
	if (pd_hooks_way != PD_HOOKS_FTRACE)
		return 0;
	ret = pd_ftrace_init();
	if (!ret)
		return 0;
	pr_err("hooks=ftrace: %s\n", ret != -EOPNOTSUPP ?
	       "cannot filter an ftrace_ops on a function of the module" : PD_FTRACE_HOOKS ?
	       "perf_callchain() or perf_callchain_user() has no ftrace site" :
	       "no ftrace_ops with regs on this kernel or architecture");
	unregister_kprobe(&pd_kp_callchain);
err_callchain:
	unregister_kprobe(&pd_kp_callchain_user);
err_user:
	return ret;
}

void pd_hooks_exit(void)
{
	if (pd_hooks_way == PD_HOOKS_FTRACE)
		pd_ftrace_exit();
	/* unregister_kprobe() waits until no handler runs anymore */
	unregister_kprobe(&pd_kp_callchain);
	unregister_kprobe(&pd_kp_callchain_user);
}
