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
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/vmalloc.h>

#include "perf_defer.h"

#define PD_PROBE	8

/*
 * A slot's life: FREE -> CLAIMED (by one sample, which sets it up) ->
 * PENDING (published: samples of the same kernel entry join it) ->
 * CLOSING (the task_work has walked: samples of the task fall back to
 * perf's own walk) -> DONE -> reused.  DONE keeps the owner and the user
 * registers the task_work saw, so that a sample later in the same kernel
 * entry (after the task_work, before the return to user space) is told
 * apart from one in the next entry: the entry code writes every pt_regs
 * word anew on each entry, and a syscall's result is in ax only once it
 * has run.  The next entry can still leave the very same registers (the
 * same read() with the same result, sampled after it ran; a fault retried
 * on the same instruction; an interrupt taken right on the return to user
 * space, before one instruction ran): its sample then keeps perf's walk of
 * those same registers (after_unwind counts it).  Nothing cheaper tells
 * the two apart before 6.17's per-entry unwind state.  A DONE slot is
 * free for any other task to claim.
 */
enum pd_state {
	PD_FREE,
	PD_CLAIMED,
	PD_PENDING,
	PD_CLOSING,
	PD_DONE,
};

/* The CPUs a request's samples ran on that it keeps; past that, all. */
#define PD_SAMPLE_CPUS	4

struct pd_request {
	int			state;
	unsigned int		ncpus;		/* > PD_SAMPLE_CPUS: too many */
	struct task_struct	*task;		/* owner; compared, never used */
	u64			start_time;	/* owner's: its task_struct may be reused */
	u64			cookie;
	u64			exec_id;	/* owner's self_exec_id at the request */
	int			cpu[PD_SAMPLE_CPUS];	/* its samples' */
	struct callback_head	work;
	struct pd_attach	*att[PD_MAX_SESSIONS];	/* one per session */
	u64			stream_id[PD_MAX_SESSIONS];	/* its sampler's id */
	struct pt_regs		done_regs;	/* DONE: user regs at the end */
};

DEFINE_PER_CPU(struct pd_counters, pd_counters);
static DEFINE_PER_CPU(u32, pd_cookie_ctr);

static struct pd_request *pd_pool;
static unsigned int pd_pool_bits;
/* The request this CPU made last: pd_request_last() */
static DEFINE_PER_CPU(struct pd_request *, pd_last);

/* Raised from NMI: its return path runs the task_work we just queued. */
static void pd_kick_fn(struct irq_work *work)
{
}

static DEFINE_PER_CPU(struct irq_work, pd_kick);

/* As upstream: (cpu + 1) << 32 | odd per-CPU counter; never 0. */
static u64 pd_new_cookie(void)
{
	u32 cnt = this_cpu_add_return(pd_cookie_ctr, 2) | 1;

	return ((u64)(smp_processor_id() + 1) << PERF_DEFER_COOKIE_CPU_SHIFT) | cnt;
}

static void pd_task_work(struct callback_head *cb);

/* What a sample of current does with its present kernel entry. */
enum pd_find {
	PD_NEW,		/* no request for this entry yet: claim one */
	PD_JOIN,	/* a PENDING request: join it */
	PD_AFTER,	/* this entry's unwind has run, or is finishing */
	PD_STALE,	/* a request made before an exec: no record comes */
	PD_LOOK,	/* not known yet: pd_request_find() */
};

/*
 * Is @r current's?  A DONE slot outlives its task, whose task_struct a new
 * task may get: the start time tells them apart.
 */
static bool pd_slot_current(const struct pd_request *r)
{
	return READ_ONCE(r->task) == current &&
	       READ_ONCE(r->start_time) == current->start_time;
}

/* current's request @r, PENDING: join it, unless it was made before an exec */
static enum pd_find pd_join_or_stale(const struct pd_request *r)
{
	return r->exec_id == current->self_exec_id ? PD_JOIN : PD_STALE;
}

/*
 * Look for current's request among its slots.  Only interrupts of current
 * look for current, so a slot current owns cannot change state while we
 * look: the task_work that would change it is what we interrupted, if
 * anything.  Slots of other tasks may change under us; the acquire on
 * state orders the read of the owner after its publication.
 */
static enum pd_find pd_request_find(struct pd_request **found, bool from_user)
{
	unsigned long h = hash_ptr(current, pd_pool_bits);
	unsigned long mask = (1UL << pd_pool_bits) - 1;
	struct pd_request *r, *done = NULL;
	unsigned int i;
	int state;

	for (i = 0; i < PD_PROBE; i++) {
		r = &pd_pool[(h + i) & mask];
		/* pairs with the release that published the slot */
		state = smp_load_acquire(&r->state);
		/*
		 * Without the start time, a new task forked from the same
		 * place as the last owner of a DONE slot has its very user
		 * registers, and would be taken as after its own unwind.
		 */
		if (state < PD_PENDING || !pd_slot_current(r))
			continue;
		if (state == PD_DONE) {
			done = r;
			continue;
		}
		*found = r;
		if (state == PD_CLOSING)
			return PD_AFTER;
		return pd_join_or_stale(r);
	}
	/*
	 * A DONE request of current: a sample that interrupted user mode is
	 * in a new entry; one in the kernel is in the same entry if the user
	 * registers are those the task_work left.  A new request reuses the
	 * slot first.
	 */
	*found = done;
	if (done && !from_user &&
	    !memcmp(&done->done_regs, task_pt_regs(current), sizeof(done->done_regs)))
		return PD_AFTER;
	return PD_NEW;
}

/*
 * The same, cheaper, for a sample that interrupted user mode, if the
 * request this CPU made last is current's.  current then has no request
 * running (its task_works ran before it returned to user space) but one
 * made in this same interrupt, by an earlier sample of another of its
 * events, or by an NMI just before, on the way out (see the self-IPI in
 * pd_request()), both on this CPU and the last made here.  A DONE slot of
 * current is its only one: each new request of current takes it first.
 * PD_LOOK: the request made last here is not current's, look for it all.
 */
static enum pd_find pd_request_last(struct pd_request **found)
{
	struct pd_request *r = this_cpu_read(pd_last);
	int state;

	if (!r)
		return PD_LOOK;
	/* pairs with the release that published the slot */
	state = smp_load_acquire(&r->state);
	if ((state != PD_PENDING && state != PD_DONE) || !pd_slot_current(r))
		return PD_LOOK;
	*found = r;
	return state == PD_DONE ? PD_NEW : pd_join_or_stale(r);
}

/* Try to move a FREE or DONE slot to CLAIMED. */
static bool pd_slot_claim(struct pd_request *r)
{
	int state = READ_ONCE(r->state);

	return (state == PD_FREE || state == PD_DONE) &&
	       cmpxchg(&r->state, state, PD_CLAIMED) == state;
}

/* Claim @prefer, else a FREE or DONE slot near hash(current). */
static struct pd_request *pd_request_claim(struct pd_request *prefer)
{
	unsigned long h = hash_ptr(current, pd_pool_bits);
	unsigned long mask = (1UL << pd_pool_bits) - 1;
	struct pd_request *r;
	unsigned int i;

	if (prefer && pd_slot_claim(prefer))
		return prefer;
	for (i = 0; i < PD_PROBE; i++) {
		r = &pd_pool[(h + i) & mask];
		if (pd_slot_claim(r))
			return r;
	}
	return NULL;
}

/* Last use of a slot: it may be claimed again from here on. */
static void pd_request_release(struct pd_request *r, int state)
{
	/* the slot's contents are done with before it can be claimed again */
	smp_store_release(&r->state, state);
}

/*
 * Keep the CPU this sample runs on.  perf stamped the sample just before,
 * on this CPU's clock, and the record must not be older even if the unwind
 * runs on a CPU whose clock lags: each CPU's clock only moves forward, so
 * the record reads the clocks of its samples' CPUs (pd_request_newest()).
 * Cheaper here than a clock read.  Only current's samples, on current's
 * CPU, write a request of current: one nested in another writes the same
 * CPU at the same place.
 */
static void pd_note_cpu(struct pd_request *r)
{
	unsigned int i, n = READ_ONCE(r->ncpus);
	int cpu = smp_processor_id();

	for (i = 0; i < min_t(unsigned int, n, PD_SAMPLE_CPUS); i++)
		if (READ_ONCE(r->cpu[i]) == cpu)
			return;
	if (n < PD_SAMPLE_CPUS)
		WRITE_ONCE(r->cpu[n], cpu);
	if (n <= PD_SAMPLE_CPUS)
		WRITE_ONCE(r->ncpus, n + 1);
}

/*
 * A local_clock() time later than each of @r's samples, read once the
 * request takes no more: the newest of its CPUs' clocks (every online
 * CPU's when it had more than it keeps), each read now.
 */
static u64 pd_request_newest(const struct pd_request *r)
{
	unsigned int i, n = READ_ONCE(r->ncpus);
	u64 t = local_clock();
	int cpu;

	if (n > PD_SAMPLE_CPUS) {
		for_each_online_cpu(cpu)
			t = max(t, cpu_clock(cpu));
	} else {
		for (i = 0; i < n; i++)
			t = max(t, cpu_clock(READ_ONCE(r->cpu[i])));
	}
	return t + 1;
}

/*
 * Make the present sample part of current's deferred unwind, for @att's
 * session; @stream_id is the id of the event that sampled (an inherited
 * child of the attached one, maybe), as perf's sample_id puts it.  Returns
 * the cookie, or 0 when the sample must keep the normal in-NMI user walk.
 * NMI-safe: no locks, no allocation, no sleeping.
 *
 * One request per kernel entry, as upstream keeps one cookie per entry
 * until the return to user space: a sample that comes after the entry's
 * unwind (in the task_work itself, or later on the way out) makes no new
 * request, so nothing the task_work does can queue it again.
 */
u64 pd_request(struct pd_attach *att, bool from_user, u64 stream_id)
{
	struct pd_request *r = NULL;
	u64 t0 = pd_t_now(), t;
	enum pd_find how;

	/* task_work_add() records a KASAN aux stack, which allocates */
	if (IS_ENABLED(CONFIG_KASAN) && in_nmi())
		goto fallback;

	how = from_user ? pd_request_last(&r) : PD_LOOK;
	if (how == PD_LOOK)
		how = pd_request_find(&r, from_user);
	pd_t_add(PD_T_FIND, t0);
	if (how == PD_AFTER)
		pd_count(after_unwind);
	if (how == PD_AFTER || how == PD_STALE)
		return 0;
	if (how == PD_NEW) {
		t = pd_t_now();
		r = pd_request_claim(r);
		if (!r)
			goto fallback;
		WRITE_ONCE(r->task, current);
		WRITE_ONCE(r->start_time, current->start_time);
		r->cookie = pd_new_cookie();
		r->exec_id = current->self_exec_id;
		init_task_work(&r->work, pd_task_work);
		pd_t_add(PD_T_CLAIM, t);
		t = pd_t_now();
		if (task_work_add(current, &r->work, TWA_RESUME)) {
			pd_request_release(r, PD_FREE);
			return 0;
		}
		pd_t_add(PD_T_QUEUE, t);
		/*
		 * Nothing else reads the slot until it is published: the
		 * session and the CPU are plain stores.  Its attach slots are
		 * all empty: the last task_work took them after the last
		 * sample could join.
		 */
		t = pd_t_now();
		if (refcount_inc_not_zero(&att->ref)) {
			r->stream_id[att->idx] = stream_id;
			r->att[att->idx] = att;
		}
		pd_t_add(PD_T_SESSION, t);
		t = pd_t_now();
		r->cpu[0] = smp_processor_id();
		r->ncpus = 1;
		pd_t_add(PD_T_STAMP, t);
		t = pd_t_now();
		__module_get(THIS_MODULE);
		/* published once whole: a nested NMI joins only this */
		smp_store_release(&r->state, PD_PENDING);
		this_cpu_write(pd_last, r);
		/*
		 * An NMI does not return through the resume-work path, and
		 * one that hit the exit path after its last look at the work
		 * flags (interrupts off) would leave the unwind to the next
		 * kernel entry: the self-IPI makes the return to user space
		 * take one more trip through it.
		 */
		if (in_nmi())
			irq_work_queue(this_cpu_ptr(&pd_kick));
		pd_t_add(PD_T_PUBLISH, t);
	} else {
		/*
		 * The first event of each session in this entry gets the
		 * record.  A PENDING request's slots change only here, on
		 * current's CPU, so a failed reference (detach under way) can
		 * simply be undone.
		 */
		t = pd_t_now();
		if (!READ_ONCE(r->att[att->idx]) &&
		    !cmpxchg(&r->att[att->idx], NULL, att)) {
			WRITE_ONCE(r->stream_id[att->idx], stream_id);
			if (!refcount_inc_not_zero(&att->ref))
				WRITE_ONCE(r->att[att->idx], NULL);
		}
		pd_t_add(PD_T_SESSION, t);

		t = pd_t_now();
		pd_note_cpu(r);
		pd_t_add(PD_T_STAMP, t);
		pd_count(dedup);
	}

	pd_count(requests);
	pd_t_add(PD_T_REQUEST, t0);
	t = pd_t_now();
	pd_t_add(PD_T_NOTHING, t);
	return r->cookie;

fallback:
	pd_count(pool_empty);
	return 0;
}

#ifdef PD_TIMING
DEFINE_PER_CPU(struct pd_timing, pd_timing);

/* The timing build's figures, at unload: tests/vm/hookcost.sh prints them as TIME lines. */
void pd_timing_report(void)
{
	static const char * const name[PD_T_NR] = {
		"callchain", "user", "checks", "request", "find", "claim",
		"queue", "publish", "session", "stamp", "nothing",
	};
	u64 sum, n, over;
	unsigned int i;
	int cpu;

	for (i = 0; i < PD_T_NR; i++) {
		sum = n = over = 0;
		for_each_possible_cpu(cpu) {
			sum += per_cpu(pd_timing.sum[i], cpu);
			n += per_cpu(pd_timing.n[i], cpu);
			over += per_cpu(pd_timing.over[i], cpu);
		}
		pr_info("timing %s: %llu timed, mean %llu cycles, %llu over %u\n",
			name[i], n, n ? div64_u64(sum, n) : 0, over, PD_T_MAX);
	}
}
#endif

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

/* One walk of the entry's user stack, by one order of methods. */
struct pd_walk {
	unsigned int	order;
	unsigned int	nr;
	u64		*ips;		/* NULL: no memory */
};

/* The walks of one task_work: one per order its sessions ask for. */
struct pd_walks {
	struct pd_walk	w[PD_MAX_SESSIONS];
	unsigned int	n;
	unsigned int	def;		/* the user_unwind parameter, read once */
};

static unsigned int pd_att_order(const struct pd_walks *ws, const struct pd_attach *att)
{
	return att->unwind_order ?: ws->def;
}

static struct pd_walk *pd_walk_find(struct pd_walks *ws, unsigned int order)
{
	unsigned int i;

	for (i = 0; i < ws->n; i++)
		if (ws->w[i].order == order)
			return &ws->w[i];
	return NULL;
}

/*
 * Walk once for each order that a walking session of @att asks for and
 * that has no walk yet, as deep as the deepest of those sessions asks.
 * Each new walk has a session of its own, so PD_MAX_SESSIONS walks fit.
 */
static void pd_task_walks(struct pd_walks *ws, struct pd_attach **att)
{
	unsigned int i, j, order, depth;
	struct pd_walk *w;

	for (i = 0; i < PD_MAX_SESSIONS; i++) {
		if (!att[i] || att[i]->dump_stack)
			continue;
		order = pd_att_order(ws, att[i]);
		if (pd_walk_find(ws, order))
			continue;
		depth = 0;
		for (j = i; j < PD_MAX_SESSIONS; j++)
			if (att[j] && !att[j]->dump_stack && pd_att_order(ws, att[j]) == order)
				depth = max_t(unsigned int, depth, att[j]->max_stack);
		depth = min_t(unsigned int, depth, PD_MAX_DEPTH);
		w = &ws->w[ws->n++];
		w->order = order;
		w->nr = 0;
		w->ips = kmalloc_array(depth, sizeof(*w->ips), GFP_KERNEL);
		if (w->ips)
			w->nr = pd_unwind_user(w->ips, depth, order);
	}
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
	struct pd_attach *att[PD_MAX_SESSIONS] = { };
	struct pd_dump *dump = NULL;
	struct pd_need need, all;
	unsigned int i;
	struct pd_walks walks = { .def = READ_ONCE(pd_user_unwind) };
	bool dumped = false, walked;
	struct pd_walk *w;
	u64 newest;
	bool gone;

	/*
	 * Exiting: the user stack is going away.  Exec'd since the request:
	 * the stack is the new image's, which the sample never saw, and perf
	 * itself stops monitoring a set-user-ID exec there.  Neither gets a
	 * record.
	 */
	gone = (current->flags & PF_EXITING) || r->exec_id != current->self_exec_id;
	pd_take_slots(r, att, &need);
	if (!gone && need.depth)
		pd_task_walks(&walks, att);
	if (!gone && need.dump)
		dumped = pd_task_dump(&dump, need.stack);
	/*
	 * From here on, samples of this task make no request (no joining, no
	 * new one): what this function does (the walk's faults, the wake-up
	 * of a reader, kfree()) could otherwise queue it again, forever.
	 */
	smp_store_release(&r->state, PD_CLOSING);
	barrier();
	pd_take_slots(r, att, &all);
	/*
	 * A session that joined during the walk or the copy and asks for
	 * what was not taken (a dump, more stack, a walk or another order of
	 * methods) gets it now.
	 */
	if (!gone && all.dump && (!dumped || all.stack > need.stack))
		dumped = pd_task_dump(&dump, all.stack);
	if (!gone && all.depth)
		pd_task_walks(&walks, att);
	walked = false;
	for (i = 0; i < walks.n; i++)
		walked |= !!walks.w[i].ips;
	if (walked || dumped)
		pd_count(unwinds);

	if (gone && (all.depth || all.dump))
		pd_count(exit_pending);
	newest = pd_request_newest(r);
	for (i = 0; i < PD_MAX_SESSIONS; i++) {
		if (!att[i])
			continue;
		w = att[i]->dump_stack ? NULL :
		    pd_walk_find(&walks, pd_att_order(&walks, att[i]));
		if (att[i]->dump_stack && dumped)
			pd_ring_emit_dump(att[i], r->cookie, dump,
					  newest, r->stream_id[i]);
		else if (w && w->ips)
			pd_ring_emit(att[i], r->cookie, w->ips,
				     min_t(unsigned int, w->nr, att[i]->max_stack),
				     newest, r->stream_id[i]);
		else if (!gone)
			pd_count(drops);	/* no memory */
		pd_attach_put(att[i]);
	}
	for (i = 0; i < walks.n; i++)
		kfree(walks.w[i].ips);
	if (dump) {
		pd_dump_free(dump);
		kfree(dump);
	}

	r->done_regs = *task_pt_regs(current);
	pd_count(works);	/* pending: pd_ioctl_get_stats() */
	/*
	 * The reference that kept this code in place while it could sleep.
	 * rmmod refuses (-EWOULDBLOCK) while any request holds one; once it
	 * is dropped, the module's exit waits (synchronize_rcu_tasks()) for
	 * this task to leave the few instructions left, even if it is
	 * preempted here.  The slot is still CLOSING: module_put()'s
	 * tracepoint cannot queue a new request.
	 */
	module_put(THIS_MODULE);
	/*
	 * DONE only after a walk of this image: after an exec (or on the way
	 * out) the registers are not those of any unwind, and a DONE slot
	 * would take the next entry's samples for this one's (say, an
	 * interrupt on the new image's first instruction) and defer none.
	 */
	pd_request_release(r, gone ? PD_FREE : PD_DONE);
}

int pd_request_init(void)
{
	int cpu;

	/* at run time: a static initializer of module per-CPU data did not
	 * reach every CPU's copy (a NULL func ran from the irq_work IPI)
	 */
	for_each_possible_cpu(cpu) {
		pd_init_irq_work_hard(per_cpu_ptr(&pd_kick, cpu), pd_kick_fn);
		per_cpu(pd_last, cpu) = NULL;
	}
	pd_pool_bits = ilog2(pd_pool_size);
	pd_pool = vzalloc(array_size(pd_pool_size, sizeof(*pd_pool)));
	if (!pd_pool)
		return -ENOMEM;
	return 0;
}

void pd_request_exit(void)
{
	int cpu;

	/*
	 * A task_work drops its module reference before its last
	 * instructions, where a preemptible kernel (preempt=full, or RT) may
	 * preempt it: wait until every task has left them (a task preempted
	 * in module text is not an RCU-tasks quiescent state).  That wait
	 * lasts until every task on the machine has switched voluntarily or
	 * run in user space: seconds on a busy machine.  A kernel that does
	 * not preempt in preempt_enable() cannot deschedule the task there,
	 * and an interrupt in the tail is short against the grace periods
	 * unload takes anyway (unregister_kprobe(), free_module()).
	 */
	if (preempt_model_preemptible()) {
#ifdef CONFIG_TASKS_RCU
		synchronize_rcu_tasks();
#else
		BUILD_BUG();	/* preemptible kernels select TASKS_RCU with ftrace */
#endif
	}
	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&pd_kick, cpu));
	vfree(pd_pool);
}
