// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deferred unwind requests.
 *
 * A sample of an attached event asks for the user stack of current's
 * present kernel entry.  All samples of one task in one kernel entry share
 * one request: one cookie, one task_work, one unwind.  Requests live in a
 * preallocated pool that doubles as a table keyed by task: a task's request
 * sits within PD_PROBE slots of hash(task), claimed with cmpxchg.  When no
 * slot is free the sample keeps perf's in-NMI user walk and pool_empty
 * counts it.
 *
 * The task_work runs in the task on its way back to user space, walks the
 * user stack with faults allowed (or, for sessions that asked for it,
 * copies the user registers and the top of the user stack) and writes one
 * record into the ring of every session whose event sampled in that entry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/vmalloc.h>

#include "perf_defer.h"

#define PD_PROBE	8

enum pd_state {
	PD_PENDING,	/* samples of the same kernel entry join it */
	PD_CLOSING,	/* last pass of the task_work: samples make a new one */
};

struct pd_request {
	struct task_struct	*task;		/* owner; NULL: free slot */
	int			state;
	u64			cookie;
	u64			last_sample;	/* local_clock() of the newest */
	struct callback_head	work;
	struct pd_attach	*att[PD_MAX_SESSIONS];	/* one per session */
	u64			stream_id[PD_MAX_SESSIONS];	/* its sampler's id */
};

DEFINE_PER_CPU(struct pd_counters, pd_counters);
static DEFINE_PER_CPU(u32, pd_cookie_ctr);

static struct pd_request *pd_pool;
static unsigned int pd_pool_bits;
static atomic_t pd_pending = ATOMIC_INIT(0);

/* Raised from NMI: its return path runs the task_work we just queued. */
static void pd_kick_fn(struct irq_work *work)
{
}

static DEFINE_PER_CPU(struct irq_work, pd_kick);

int pd_requests_pending(void)
{
	return atomic_read(&pd_pending);
}

/* As upstream: (cpu + 1) << 32 | odd per-CPU counter; never 0. */
static u64 pd_new_cookie(void)
{
	u32 cnt = this_cpu_add_return(pd_cookie_ctr, 2) | 1;

	return ((u64)(smp_processor_id() + 1) << PERF_DEFER_COOKIE_CPU_SHIFT) | cnt;
}

static void pd_task_work(struct callback_head *cb);

/*
 * Find current's pending request, or claim a free slot for a new one.
 * NMI-safe: no locks, no allocation, no sleeping.  Only interrupts of
 * current itself look for current, so a PENDING request found here cannot
 * change state until we return: the task_work that would change it is
 * what we interrupted, if anything.
 */
static struct pd_request *pd_request_get(bool *joined)
{
	unsigned long h = hash_ptr(current, pd_pool_bits);
	unsigned long mask = (1UL << pd_pool_bits) - 1;
	struct pd_request *r;
	unsigned int i;

	for (i = 0; i < PD_PROBE; i++) {
		r = &pd_pool[(h + i) & mask];
		if (READ_ONCE(r->task) == current &&
		    READ_ONCE(r->state) == PD_PENDING) {
			*joined = true;
			return r;
		}
	}
	for (i = 0; i < PD_PROBE; i++) {
		r = &pd_pool[(h + i) & mask];
		if (!READ_ONCE(r->task) && !cmpxchg(&r->task, NULL, current)) {
			r->state = PD_PENDING;
			r->cookie = pd_new_cookie();
			r->last_sample = 0;
			*joined = false;
			return r;
		}
	}
	return NULL;
}

static void pd_request_release(struct pd_request *r)
{
	/* the slot's contents are done with before it can be claimed again */
	smp_store_release(&r->task, NULL);
}

/*
 * Make the present sample part of current's deferred unwind, for @att's
 * session; @stream_id is the id of the event that sampled (an inherited
 * child of the attached one, maybe), as perf's sample_id puts it.  Returns the cookie, or 0 when the sample must keep the normal
 * in-NMI user walk.  NMI-safe: no locks, no allocation, no sleeping.
 */
u64 pd_request(struct pd_attach *att, bool from_user, u64 stream_id)
{
	struct pd_request *r;
	bool joined;

	/* task_work_add() records a KASAN aux stack, which allocates */
	if (IS_ENABLED(CONFIG_KASAN) && in_nmi())
		goto fallback;

	r = pd_request_get(&joined);
	if (!r)
		goto fallback;

	if (!joined) {
		init_task_work(&r->work, pd_task_work);
		if (task_work_add(current, &r->work, TWA_RESUME)) {
			pd_request_release(r);
			return 0;
		}
		__module_get(THIS_MODULE);
		atomic_inc(&pd_pending);
		/* An NMI does not return through the resume-work path. */
		if (in_nmi() && from_user)
			irq_work_queue(this_cpu_ptr(&pd_kick));
	}

	/*
	 * The first event of each session in this entry gets the record.  A
	 * PENDING request's slots change only here, on current's CPU, so a
	 * failed reference (detach under way) can simply be undone.
	 */
	if (!READ_ONCE(r->att[att->idx]) && !cmpxchg(&r->att[att->idx], NULL, att)) {
		r->stream_id[att->idx] = stream_id;
		if (!refcount_inc_not_zero(&att->ref))
			WRITE_ONCE(r->att[att->idx], NULL);
	}

	/*
	 * perf stamped this sample just before: the record must not be
	 * older, even if the unwind runs on a CPU whose clock lags.
	 */
	WRITE_ONCE(r->last_sample, max(r->last_sample, local_clock()));

	pd_count(requests);
	if (joined)
		pd_count(dedup);
	return r->cookie;

fallback:
	pd_count(pool_empty);
	return 0;
}

/* What the sessions of a request ask for. */
struct pd_need {
	unsigned int	depth;	/* frames, for the frame-pointer walk */
	u32		stack;	/* bytes of stack, for a dump */
	bool		dump;
};

/*
 * Take the request's attach slots into @att, one per session (a session
 * already held keeps its first attach); @need is what all of @att ask.
 */
static void pd_take_slots(struct pd_request *r, struct pd_attach **att,
			  struct pd_need *need)
{
	struct pd_attach *a;
	unsigned int i;

	*need = (struct pd_need) { };
	for (i = 0; i < PD_MAX_SESSIONS; i++) {
		a = xchg(&r->att[i], NULL);
		if (a && att[i])
			pd_attach_put(a);
		else if (a)
			att[i] = a;
		if (!att[i])
			continue;
		if (att[i]->dump_stack) {
			need->dump = true;
			need->stack = max(need->stack, att[i]->dump_stack);
		} else {
			need->depth = max_t(unsigned int, need->depth, att[i]->max_stack);
		}
	}
}

/* Walk up to @depth user frames into a new array; *@nr of them. */
static u64 *pd_task_walk(unsigned int depth, unsigned int *nr)
{
	u64 *ips;

	depth = min_t(unsigned int, depth, PD_MAX_DEPTH);
	ips = kmalloc_array(depth, sizeof(*ips), GFP_KERNEL);
	if (ips)
		*nr = pd_unwind_user(ips, depth);
	return ips;
}

/* Dump the user registers and @stack bytes of stack into *@dump. */
static bool pd_task_dump(struct pd_dump **dump, u32 stack)
{
	/* pt_regs and the stack: never on the kernel stack */
	if (!*dump)
		*dump = kzalloc(sizeof(**dump), GFP_KERNEL);
	return *dump && !pd_dump_user(*dump, stack);
}

/*
 * The unwind, on the task's way back to user space.  Samples taken while
 * it walks (its own page faults, a slow walk) are still in this kernel
 * entry: they join the request.  Then the request stops taking joiners
 * and each session that sampled gets one record, newer than all of its
 * samples.  So each session gets one record per entry, and the stack is
 * walked once.
 */
static void pd_task_work(struct callback_head *cb)
{
	struct pd_request *r = container_of(cb, struct pd_request, work);
	bool exiting = current->flags & PF_EXITING;
	struct pd_attach *att[PD_MAX_SESSIONS] = { };
	struct pd_dump *dump = NULL;
	struct pd_need need, all;
	unsigned int i, nr = 0;
	bool dumped = false;
	u64 *ips = NULL;

	pd_take_slots(r, att, &need);
	if (!exiting && need.depth)
		ips = pd_task_walk(need.depth, &nr);
	if (!exiting && need.dump)
		dumped = pd_task_dump(&dump, need.stack);
	/* interrupts of this task see this before we look again */
	WRITE_ONCE(r->state, PD_CLOSING);
	barrier();
	pd_take_slots(r, att, &all);
	/*
	 * A session that joined during the walk or the copy and asks for
	 * what was not taken (a dump, more stack, a walk) gets it now.
	 */
	if (!exiting && all.dump && (!dumped || all.stack > need.stack))
		dumped = pd_task_dump(&dump, all.stack);
	if (!exiting && all.depth && !need.depth)
		ips = pd_task_walk(all.depth, &nr);
	if (ips || dumped)
		pd_count(unwinds);

	if (exiting && (all.depth || all.dump))
		pd_count(exit_pending);
	for (i = 0; i < PD_MAX_SESSIONS; i++) {
		if (!att[i])
			continue;
		if (att[i]->dump_stack && dumped)
			pd_ring_emit_dump(att[i], r->cookie, dump,
					  READ_ONCE(r->last_sample) + 1, r->stream_id[i]);
		else if (!att[i]->dump_stack && ips)
			pd_ring_emit(att[i], r->cookie, ips,
				     min_t(unsigned int, nr, att[i]->max_stack),
				     READ_ONCE(r->last_sample) + 1, r->stream_id[i]);
		else if (!exiting)
			pd_count(drops);	/* no memory */
		pd_attach_put(att[i]);
	}
	kfree(ips);
	if (dump) {
		pd_dump_free(dump);
		kfree(dump);
	}

	pd_request_release(r);
	atomic_dec(&pd_pending);
	/*
	 * Last: the reference that keeps this code in place.  rmmod refuses
	 * (-EWOULDBLOCK) while any request holds one.
	 */
	module_put(THIS_MODULE);
}

int pd_request_init(void)
{
	int cpu;

	/* at run time: a static initializer of module per-CPU data did not
	 * reach every CPU's copy (a NULL func ran from the irq_work IPI)
	 */
	for_each_possible_cpu(cpu)
		per_cpu(pd_kick, cpu) = IRQ_WORK_INIT_HARD(pd_kick_fn);
	pd_pool_bits = ilog2(pd_pool_size);
	pd_pool = vzalloc(array_size(pd_pool_size, sizeof(*pd_pool)));
	if (!pd_pool)
		return -ENOMEM;
	return 0;
}

void pd_request_exit(void)
{
	int cpu;

	/* Each pending request holds a module reference: none is left. */
	WARN_ON(atomic_read(&pd_pending));
	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&pd_kick, cpu));
	vfree(pd_pool);
}
