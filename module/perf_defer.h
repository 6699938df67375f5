/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internal interfaces between the parts of perf_defer.ko.  Each part
 * exposes an x_init()/x_exit() pair, called by main.c in ladder order.
 *
 * Data path: hooks.c (kprobes, NMI/IRQ) -> request.c (cookie, pool,
 * task_work) -> unwind.c (user frame pointers, unwind tables or a dump of
 * user registers and stack; faultable; the architecture's part in
 * unwind_x86.c or unwind_arm64.c) -> ring.c
 * (per-session per-CPU buffers) <- session.c (the char device).  All of
 * them stand on attach.c (sessions and attached events, their table and
 * lifetimes), which calls only ring.c.
 */
#ifndef _PERF_DEFER_H
#define _PERF_DEFER_H

#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/rculist.h>
#include <linux/timex.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/perf_defer.h>
#include <asm/ptrace.h>

#include "compat/compat.h"

/* Sessions open at once; a request keeps one attach slot per session. */
#define PD_MAX_SESSIONS		16
/* Sessions only CAP_PERFMON (or CAP_SYS_ADMIN) can have. */
#define PD_RESERVED_SESSIONS	2
/* Events one session may attach (per-CPU events of a big machine fit). */
#define PD_MAX_ATTACH		1024
/* Deepest user chain walked; as upstream's unwind cache (4 KiB of words). */
#define PD_MAX_DEPTH		511

/* main.c: module parameters */
extern umode_t pd_dev_mode;
extern bool pd_verbose;
extern unsigned int pd_pool_size;
extern unsigned int pd_user_sessions;
extern unsigned int pd_user_unwind;
extern unsigned int pd_mlock_kb;
extern bool pd_row_cache;

/*
 * User unwind methods, tried in order for each frame: an order is a list
 * of methods, PD_UW_METHOD_BITS each, the first in the low bits, ended by
 * 0.
 */
#define PD_UW_METHOD_FP		PERF_DEFER_UNWIND_FP
#define PD_UW_METHOD_SFRAME	PERF_DEFER_UNWIND_SFRAME
#define PD_UW_METHOD_EH_FRAME	PERF_DEFER_UNWIND_EH_FRAME
#define PD_UW_METHODS		4
#define PD_UW_METHOD_BITS	4
#define PD_UW_METHOD_MASK	((1U << PD_UW_METHOD_BITS) - 1)
/* the default: the tables where the object has them, then frame pointers */
#define PD_UW_ORDER_DEFAULT	(PD_UW_METHOD_SFRAME |				\
				 PD_UW_METHOD_EH_FRAME << PD_UW_METHOD_BITS |	\
				 PD_UW_METHOD_FP << (2 * PD_UW_METHOD_BITS))

/* Append method @m to *@order as its @n-th; -EINVAL if unknown or there. */
static inline int pd_uw_order_add(unsigned int *order, unsigned int n, unsigned int m)
{
	unsigned int o;

	if (!m || m >= PD_UW_METHODS)
		return -EINVAL;
	for (o = *order; o; o >>= PD_UW_METHOD_BITS)
		if ((o & PD_UW_METHOD_MASK) == m)
			return -EINVAL;
	*order |= m << (n * PD_UW_METHOD_BITS);
	return 0;
}

#define pd_dbg(fmt, ...)					\
	do {							\
		if (pd_verbose)					\
			pr_info(fmt, ##__VA_ARGS__);		\
	} while (0)

struct perf_event;
struct pid_namespace;
struct pd_ring;

/*
 * A session: one open() of /dev/perf_defer.  Freed when the file is
 * released and no attach (and so no pending request) refers to it.
 */
struct pd_session {
	refcount_t		ref;
	unsigned int		idx;		/* slot in pd_sessions[] */
	struct list_head	attaches;	/* under pd_lock */
	unsigned int		nr_attached;
	u32			data_pages;
	u32			wakeup_bytes;	/* poll: a ring this full; 0: any record */
	u32			dump_stack;	/* 0: no dump; else bytes per dump */
	u32			unwind_order;	/* 0: the user_unwind parameter */
	struct pd_ring		**rings;	/* per possible CPU, once set up */
	bool			closed;
	bool			privileged;	/* perfmon_capable() at open */
	kuid_t			uid;		/* euid at open */
	wait_queue_head_t	wq;
	/* ring memory counted as perf counts its own: see pd_rings_charge() */
	const struct cred	*mem_cred;	/* its user's locked_vm; NULL: none */
	struct mm_struct	*mem_mm;	/* NULL: nothing pinned */
	unsigned long		mem_locked;	/* pages in mem_cred->user->locked_vm */
	unsigned long		mem_pinned;	/* pages in mem_mm->pinned_vm */
};

/*
 * An attached event.  Hashed by event while attached (RCU, read from
 * NMI); the sample_id fields are copied at attach so that records can be
 * written after the event itself is gone.
 */
struct pd_attach {
	struct hlist_node	node;		/* pd_attach_hash */
	struct list_head	list;		/* session->attaches */
	refcount_t		ref;		/* hash + each request slot */
	struct perf_event	*event;		/* hash key only */
	struct file		*file;		/* held while attached */
	struct pd_session	*sess;
	unsigned int		idx;		/* sess->idx */
	u64			sample_type;
	u64			id;
	struct pid_namespace	*ns;
	int			clockid;	/* -1: local_clock() */
	u64			regs_mask;	/* with dump_stack: sample_regs_user */
	u32			dump_stack;	/* the session's, at attach */
	u32			unwind_order;	/* the session's, at attach */
	u16			max_stack;
	u16			max_contexts;	/* perf's sysctl, 0: unknown */
	bool			sample_id_all;
	struct rcu_head		rcu;
	struct work_struct	free_work;
};

/* Counters, per CPU, summed by PERF_DEFER_IOC_GET_STATS. */
struct pd_counters {
	u64	requests;
	u64	dedup;
	u64	unwinds;
	u64	records;
	u64	drops;
	u64	pool_empty;
	u64	exit_pending;
	u64	after_unwind;
	u64	uw_frames[PD_UW_METHODS];	/* caller frames each method found */
	u64	uw_objects;	/* objects looked up by the table walk */
	u64	uw_stopped;	/* table walks ended by bad or missing data */
	u64	uw_cache_hits;	/* objects found in the layout cache */
	u64	in_exec;	/* samples inside an execve(), left to perf */
	u64	uw_rows;	/* rows the tables gave the table walk */
	u64	uw_row_hits;	/* rows found in the row cache */
	u64	walk_ns;	/* time spent walking user stacks */
	u64	works;		/* task_works run: GET_STATS's pending */
};


DECLARE_PER_CPU(struct pd_counters, pd_counters);
#define pd_count(field)	this_cpu_inc(pd_counters.field)

/*
 * A timing build (make PD_TIMING=1; tests/vm/hookcost.sh) times the parts
 * of the hooks in cycles (get_cycles()), per CPU, and prints their means
 * when unloaded.  Otherwise these compile to nothing.
 */
enum pd_tpart {
	PD_T_CALLCHAIN,		/* perf_callchain()'s pre-handler, whole */
	PD_T_USER,		/* perf_callchain_user()'s, a sample deferred */
	PD_T_CHECKS,		/* its checks and lookup, up to pd_request() */
	PD_T_REQUEST,		/* pd_request(), whole */
	PD_T_FIND,		/* the entry's request looked for */
	PD_T_CLAIM,		/* a slot claimed and set up */
	PD_T_QUEUE,		/* task_work_add() */
	PD_T_PUBLISH,		/* module reference, publication */
	PD_T_SESSION,		/* the session's attach taken */
	PD_T_STAMP,		/* the sample's CPU kept, for the record's time */
	PD_T_NOTHING,		/* nothing: what timing itself costs */
	PD_T_NR
};

#ifdef PD_TIMING
struct pd_timing {
	u64	sum[PD_T_NR];
	u64	n[PD_T_NR];
	u64	over[PD_T_NR];	/* longer than PD_T_MAX: preempted vCPU */
};

#define PD_T_MAX	200000
DECLARE_PER_CPU(struct pd_timing, pd_timing);

static __always_inline u64 pd_t_now(void)
{
	return get_cycles();
}

/* Single per-CPU instructions: an NMI nested in an IRQ loses nothing. */
static __always_inline void pd_t_add(enum pd_tpart part, u64 from)
{
	u64 d = get_cycles() - from;

	if (d > PD_T_MAX) {
		this_cpu_inc(pd_timing.over[part]);
		return;
	}
	this_cpu_add(pd_timing.sum[part], d);
	this_cpu_inc(pd_timing.n[part]);
}

void pd_timing_report(void);
#else
static __always_inline u64 pd_t_now(void)
{
	return 0;
}

static __always_inline void pd_t_add(enum pd_tpart part, u64 from)
{
}

static inline void pd_timing_report(void)
{
}
#endif

/* hooks.c; the hooks parameter (main.c): how the hooks are reached */
enum pd_hooks_way { PD_HOOKS_KPROBES, PD_HOOKS_FTRACE, PD_HOOKS_WAYS };
extern const char *const pd_hooks_name[PD_HOOKS_WAYS];
extern unsigned int pd_hooks_way;
int pd_hooks_init(void);
void pd_hooks_exit(void);
int pd_hooks_get(void);
void pd_hooks_put(void);
bool pd_is_perf_file(struct file *file);

/* request.c */
int pd_request_init(void);
void pd_request_exit(void);
u64 pd_request(struct pd_attach *att, bool from_user, u64 stream_id);

/* unwind.c */
unsigned int pd_unwind_user(u64 *ips, unsigned int max, unsigned int order);

/*
 * unwind_x86.c, unwind_arm64.c: the architecture's side of the user walk
 * and of dumps.  PD_DUMP_REGS is its perf_regs count, PD_DUMP_REGS_VALID
 * the sample_regs_user bits a dump can give, pd_dump_reg_offset() where
 * a bit's register sits in pt_regs for a task of that ABI, and
 * pd_strip_pac() a return address without its pointer-authentication
 * code (arm64; nothing to strip on x86-64).
 */
#if defined(CONFIG_X86_64)
#define PD_DUMP_REGS		24	/* AX ... R15 */
static inline unsigned long pd_strip_pac(unsigned long ra)
{
	return ra;
}
#elif defined(CONFIG_ARM64)
#define PD_DUMP_REGS		33	/* X0 ... X28, X29, LR, SP, PC */
unsigned long pd_strip_pac(unsigned long ra);
#else
#error "perf_defer runs on x86-64 and arm64 only"
#endif
#define PD_DUMP_REGS_VALID	PERF_DEFER_DUMP_REGS_VALID
unsigned int pd_dump_reg_offset(unsigned int bit, u64 abi);

/* One user word of @ws bytes (4 for compat tasks) at @addr: the walks' read */
static inline int pd_get_user_word(unsigned long *val, unsigned long addr, unsigned int ws)
{
	if (ws == sizeof(u32)) {
		u32 v;

		if (get_user(v, (const u32 __user *)addr))
			return -EFAULT;
		*val = v;
		return 0;
	}
	return get_user(*val, (const unsigned long __user *)addr);
}

u64 pd_user_abi(struct pt_regs *regs);
unsigned int pd_unwind_user_fp(struct pt_regs *regs, bool compat, u64 *ips, unsigned int max);

/* unwind_table.c */
unsigned int pd_unwind_user_tables(u64 *ips, unsigned int max, unsigned int order);

/*
 * A dump of current's user registers and the top of its user stack, for
 * sessions with PERF_DEFER_IOC_SET_DUMP; taken once per kernel entry.
 */
struct pd_dump {
	struct pt_regs	regs;
	u64		abi;		/* PERF_SAMPLE_REGS_ABI_* */
	u8		*stack;		/* kvmalloc'ed, size bytes */
	u32		size;		/* bytes asked for and held */
	u32		dyn_size;	/* bytes copied from user space */
};

int pd_dump_user(struct pd_dump *d, u32 size);
void pd_dump_free(struct pd_dump *d);
unsigned int pd_dump_regs(const struct pd_dump *d, u64 mask, u64 *out);
bool pd_dump_mask_valid(u64 mask);
size_t pd_dump_record_max(u32 stack_size);

/* ring.c */
int pd_rings_alloc(struct pd_session *s);
void pd_rings_free(struct pd_session *s);
int pd_ring_mmap(struct pd_session *s, struct vm_area_struct *vma);
bool pd_rings_readable(struct pd_session *s);
void pd_ring_emit(struct pd_attach *att, u64 cookie, const u64 *ips, unsigned int nr,
		  u64 min_local, u64 stream_id);
void pd_ring_emit_dump(struct pd_attach *att, u64 cookie, const struct pd_dump *d,
		       u64 min_local, u64 stream_id);

/* uw_read.c: what one table walk may still read (see uwtab.h) */
struct pd_uw_reader {
	size_t	budget;
};

/*
 * One word of the task's memory, as pd_uw_read() reads it: counted
 * against the budget, by get_user().  Inline for the walk's steps, which
 * read a saved register or two per frame.
 */
static __always_inline int pd_uw_read_word(struct pd_uw_reader *rd, unsigned long *val,
					   unsigned long addr)
{
	if (rd->budget < sizeof(*val))
		return -E2BIG;
	rd->budget -= sizeof(*val);
	return get_user(*val, (const unsigned long __user *)addr) ? -EFAULT : 0;
}

/* attach.c */
extern struct mutex pd_lock;
int pd_attach_init(void);
void pd_attach_exit(void);
int pd_session_add(struct pd_session *s);
void pd_session_put(struct pd_session *s);
struct pd_attach *pd_attach_find(struct perf_event *event);
void pd_attach_add(struct pd_session *s, struct pd_attach *att);
void pd_attach_del(struct pd_session *s, struct pd_attach *att);
void pd_attach_put(struct pd_attach *att);

/* session.c */
int pd_session_init(void);
void pd_session_exit(void);

#endif /* _PERF_DEFER_H */
