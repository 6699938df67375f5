// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-session, per-CPU ring buffers, laid out as perf's: a control page
 * (struct perf_defer_mmap_page) then 2^n data pages, mapped by the reader.
 * Records are written from task context only (the unwind task_work), with
 * preemption disabled, so each ring has one writer at a time and no
 * NMI-side code ever touches it.  A full ring drops records, counts them,
 * and reports them with a PERF_RECORD_LOST once there is room again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include "perf_defer.h"

struct pd_ring {
	struct perf_defer_mmap_page	*page;	/* control page, then data */
	u8				*data;
	u64				size;	/* bytes of data, power of two */
	u64				head;	/* the writer's copy of data_head */
	u64				lost;	/* drops not reported yet */
};

static size_t pd_ring_bytes(struct pd_session *s)
{
	return (size_t)(1 + s->data_pages) << PAGE_SHIFT;
}

/*
 * Count @pages of ring memory as perf_mmap() counts perf's own rings: in
 * the user's locked_vm (which perf's rings share) up to mlock_kb per online
 * CPU, and what is over in the caller's pinned_vm, refused past
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK.  perf skips that refusal when
 * perf_event_paranoid is -1; a module cannot read the sysctl, so it never
 * does.  Atomics only: pd_mmap() runs under the mmap lock.
 */
static int pd_rings_charge(struct pd_session *s, unsigned long pages)
{
	struct user_struct *user = current_user();
	struct mm_struct *mm = current->mm;
	unsigned long limit, locked, extra = 0;

	limit = (unsigned long)(READ_ONCE(pd_mlock_kb) >> (PAGE_SHIFT - 10)) *
		num_online_cpus();
	/* the limit may have been lowered below what is counted */
	locked = min_t(unsigned long, atomic_long_read(&user->locked_vm), limit) + pages;
	if (locked > limit)
		extra = locked - limit;
	if (extra) {
		if (!mm)
			return -EPERM;
		if (atomic64_read(&mm->pinned_vm) + extra > rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT &&
		    !capable(CAP_IPC_LOCK))
			return -EPERM;
		mmgrab(mm);
		atomic64_add(extra, &mm->pinned_vm);
		s->mem_mm = mm;
		s->mem_pinned = extra;
	}
	atomic_long_add(pages - extra, &user->locked_vm);
	/* hold the user through the cred: not every kernel exports free_uid() */
	s->mem_cred = get_current_cred();
	s->mem_locked = pages - extra;
	return 0;
}

static void pd_rings_uncharge(struct pd_session *s)
{
	if (s->mem_mm) {
		atomic64_sub(s->mem_pinned, &s->mem_mm->pinned_vm);
		mmdrop(s->mem_mm);
		s->mem_mm = NULL;
	}
	if (s->mem_cred) {
		atomic_long_sub(s->mem_locked, &s->mem_cred->user->locked_vm);
		put_cred(s->mem_cred);
		s->mem_cred = NULL;
	}
}

/*
 * The rings' pages are charged to the opener's memory cgroup, as perf's
 * own buffers are, where the kernel can map charged pages to user space:
 * up to 5.10 a charged page has the Kmemcg page type, which
 * vm_insert_page() refuses (-EINVAL), and there they are not charged.
 * RLIMIT_MEMLOCK and mlock_kb count them either way.
 */
#ifdef PD_HAVE_PAGE_KMEMCG
#define PD_GFP_RING	GFP_KERNEL
#else
#define PD_GFP_RING	GFP_KERNEL_ACCOUNT
#endif

int pd_rings_alloc(struct pd_session *s)
{
	struct pd_ring **rings;
	int cpu, ret;

	if (s->rings)
		return 0;
	ret = pd_rings_charge(s, num_possible_cpus() * (pd_ring_bytes(s) >> PAGE_SHIFT));
	if (ret)
		return ret;
	/* charged to the opener's memory cgroup, as perf's own buffers are */
	rings = kcalloc(nr_cpu_ids, sizeof(*rings), GFP_KERNEL_ACCOUNT);
	if (!rings) {
		pd_rings_uncharge(s);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		struct pd_ring *r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);

		if (!r)
			goto nomem;
		rings[cpu] = r;
		r->page = __vmalloc(pd_ring_bytes(s), PD_GFP_RING | __GFP_ZERO);
		if (!r->page)
			goto nomem;
		r->size = (u64)s->data_pages << PAGE_SHIFT;
		r->data = (u8 *)r->page + PAGE_SIZE;
		r->page->version = PERF_DEFER_ABI_MAJOR;
		r->page->cpu = cpu;
		r->page->data_offset = PAGE_SIZE;
		r->page->data_size = r->size;
	}
	/* pairs with smp_load_acquire() in pd_ring_emit() */
	smp_store_release(&s->rings, rings);
	return 0;

nomem:
	for_each_possible_cpu(cpu) {
		if (rings[cpu])
			vfree(rings[cpu]->page);
		kfree(rings[cpu]);
	}
	kfree(rings);
	pd_rings_uncharge(s);
	return -ENOMEM;
}

void pd_rings_free(struct pd_session *s)
{
	int cpu;

	if (!s->rings)
		return;
	for_each_possible_cpu(cpu) {
		vfree(s->rings[cpu]->page);
		kfree(s->rings[cpu]);
	}
	kfree(s->rings);
	s->rings = NULL;
	pd_rings_uncharge(s);
}

int pd_ring_mmap(struct pd_session *s, struct vm_area_struct *vma)
{
	unsigned long per_cpu = 1 + s->data_pages;
	unsigned long cpu = vma->vm_pgoff / per_cpu;
	unsigned long off;
	u8 *base;
	int ret;

	if (vma->vm_pgoff % per_cpu || cpu >= nr_cpu_ids || !cpu_possible(cpu) ||
	    vma->vm_end - vma->vm_start != pd_ring_bytes(s))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* nor later, by mprotect() */
#ifdef PD_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, VM_MAYEXEC);
#else
	vma->vm_flags &= ~VM_MAYEXEC;
#endif
	/* page by page: an accounted vmalloc area is not VM_USERMAP */
	base = (u8 *)s->rings[cpu]->page;
	for (off = 0; off < pd_ring_bytes(s); off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off, vmalloc_to_page(base + off));
		if (ret)
			return ret;
	}
	return 0;
}

bool pd_rings_readable(struct pd_session *s)
{
	/* pairs with smp_store_release() in pd_rings_alloc() */
	struct pd_ring **rings = smp_load_acquire(&s->rings);
	u64 mark = max_t(u64, s->wakeup_bytes, 1);
	int cpu;

	if (!rings)
		return false;
	for_each_possible_cpu(cpu) {
		struct perf_defer_mmap_page *pg = rings[cpu]->page;

		if (READ_ONCE(pg->data_head) - READ_ONCE(pg->data_tail) >= mark)
			return true;
	}
	return false;
}

static u64 pd_clock(const struct pd_attach *att, u64 min_local)
{
	switch (att->clockid) {
	case CLOCK_MONOTONIC:
		return ktime_get_mono_fast_ns();
	case CLOCK_MONOTONIC_RAW:
		return ktime_get_raw_fast_ns();
	case CLOCK_REALTIME:
		return ktime_get_real_ns();
	case CLOCK_BOOTTIME:
		return ktime_get_boottime_ns();
	case CLOCK_TAI:
		return ktime_get_clocktai_ns();
	default:
		return max(local_clock(), min_local);	/* perf_clock() */
	}
}

/* The sample_id trailer of @att's event, in perf's order; returns words. */
static unsigned int pd_sample_id(const struct pd_attach *att, u64 *id, int cpu,
				 u64 min_local, u64 stream_id)
{
	u64 type = att->sample_type;
	unsigned int n = 0;

	if (!att->sample_id_all)
		return 0;
	if (type & PERF_SAMPLE_TID)
		id[n++] = (u64)task_pid_nr_ns(current, att->ns) << 32 |
			  (u32)task_tgid_nr_ns(current, att->ns);
	if (type & PERF_SAMPLE_TIME)
		id[n++] = pd_clock(att, min_local);
	if (type & PERF_SAMPLE_ID)
		id[n++] = att->id;
	if (type & PERF_SAMPLE_STREAM_ID)
		id[n++] = stream_id;
	if (type & PERF_SAMPLE_CPU)
		id[n++] = (u32)cpu;
	if (type & PERF_SAMPLE_IDENTIFIER)
		id[n++] = att->id;
	return n;
}

static void pd_ring_put(struct pd_ring *r, const void *src, size_t len)
{
	size_t off = r->head & (r->size - 1);
	size_t first = min_t(size_t, len, r->size - off);

	memcpy(r->data + off, src, first);
	memcpy(r->data, (const u8 *)src + first, len - first);
	r->head += len;
}

/*
 * Room for a record of @size bytes (sample_id included) in this CPU's
 * ring of @att's session, after the PERF_RECORD_LOST of earlier drops if
 * any; NULL when the session is gone or the ring is full (counted).
 * Preemption is off (one writer per ring) from here to pd_ring_commit().
 */
static struct pd_ring *pd_ring_reserve(struct pd_attach *att, size_t size,
				       const u64 *id, unsigned int nid)
{
	struct pd_session *s = att->sess;
	/* pairs with smp_store_release() in pd_rings_alloc() */
	struct pd_ring **rings = smp_load_acquire(&s->rings);
	struct perf_event_header hdr;
	size_t lost_size;
	struct pd_ring *r;
	u64 body[2], used;

	if (!rings || READ_ONCE(s->closed))
		return NULL;
	r = rings[smp_processor_id()];
	lost_size = r->lost ? sizeof(hdr) + sizeof(body) + nid * sizeof(u64) : 0;

	/*
	 * data_tail is the reader's (acquire: it is done with the bytes it
	 * releases); a bogus value only makes the ring look full.
	 */
	used = r->head - smp_load_acquire(&r->page->data_tail);
	if (used > r->size || r->size - used < lost_size + size) {
		r->lost++;
		r->page->lost++;
		pd_count(drops);
		return NULL;
	}

	if (lost_size) {
		hdr = (struct perf_event_header) {
			.type = PERF_RECORD_LOST, .size = lost_size,
		};
		body[0] = att->id;
		body[1] = r->lost;
		pd_ring_put(r, &hdr, sizeof(hdr));
		pd_ring_put(r, body, sizeof(body));
		pd_ring_put(r, id, nid * sizeof(u64));
		r->lost = 0;
	}
	return r;
}

static void pd_ring_commit(struct pd_ring *r)
{
	pd_count(records);
	/* the record is in place before the reader can see the new head */
	smp_store_release(&r->page->data_head, r->head);
}

/*
 * Whether @r, just written, is full enough to wake the session's poller
 * (its wakeup_bytes): a poller woken by every record would take the
 * sampled task's time for every one of them.
 */
static bool pd_ring_due(const struct pd_session *s, const struct pd_ring *r)
{
	return r->head - READ_ONCE(r->page->data_tail) >= max_t(u64, s->wakeup_bytes, 1);
}

/* After put_cpu(): on PREEMPT_RT the waitqueue's lock may sleep. */
static void pd_ring_wake(struct pd_session *s, bool due)
{
	if (due && wq_has_sleeper(&s->wq))
		wake_up_interruptible(&s->wq);
}

/*
 * Write one PERF_RECORD_CALLCHAIN_DEFERRED for @att into its session's
 * ring of this CPU.  Its time is at least @min_local on the default clock
 * (local_clock() of another CPU may lag this one's); @stream_id is the id
 * of the event that sampled, the attached one or an inherited child, as
 * in perf's sample_id (id and identifier are the attached event's).
 * Task context only.
 */
void pd_ring_emit(struct pd_attach *att, u64 cookie, const u64 *ips,
		  unsigned int nr, u64 min_local, u64 stream_id)
{
	struct perf_event_header hdr;
	u64 id[6], body[2];
	unsigned int nid;
	struct pd_ring *r;
	bool due = true;	/* a ring too full for the record, too */
	size_t size;
	int cpu;

	cpu = get_cpu();
	nid = pd_sample_id(att, id, cpu, min_local, stream_id);
	size = sizeof(hdr) + sizeof(body) + (nr + nid) * sizeof(u64);
	r = pd_ring_reserve(att, size, id, nid);
	if (!r)
		goto out;

	hdr = (struct perf_event_header) {
		.type = PERF_DEFER_RECORD_CALLCHAIN_DEFERRED,
		.misc = PERF_RECORD_MISC_USER,
		.size = size,
	};
	body[0] = cookie;
	body[1] = nr;
	pd_ring_put(r, &hdr, sizeof(hdr));
	pd_ring_put(r, body, sizeof(body));
	pd_ring_put(r, ips, nr * sizeof(u64));
	pd_ring_put(r, id, nid * sizeof(u64));
	pd_ring_commit(r);
	due = pd_ring_due(att->sess, r);
out:
	put_cpu();
	pd_ring_wake(att->sess, due);
}

/*
 * Write one PERF_DEFER_RECORD_USER_DUMP for @att (layout in the uapi
 * header): the registers of its sample_regs_user and the first
 * dump_stack bytes of @d's stack.  Times and ids as pd_ring_emit().
 * Task context only.
 */
void pd_ring_emit_dump(struct pd_attach *att, u64 cookie, const struct pd_dump *d,
		       u64 min_local, u64 stream_id)
{
	u64 id[6], regs[PD_DUMP_REGS], word[2];
	struct perf_event_header hdr;
	unsigned int nid, nregs = 0;
	u64 size = 0, dyn = 0;
	struct pd_ring *r;
	bool due = true;
	size_t len;
	int cpu;

	if (d->abi != PERF_SAMPLE_REGS_ABI_NONE) {
		nregs = pd_dump_regs(d, att->regs_mask, regs);
		size = min(att->dump_stack, d->size);
		dyn = min_t(u64, d->dyn_size, size);
	}

	cpu = get_cpu();
	nid = pd_sample_id(att, id, cpu, min_local, stream_id);
	len = sizeof(hdr) + 2 * sizeof(u64) + nregs * sizeof(u64) + sizeof(u64) +
	      (size ? size + sizeof(u64) : 0) + nid * sizeof(u64);
	/* attach and SET_DUMP made sure it fits; never write a cut record */
	if (WARN_ON_ONCE(len > 0xfff8))
		goto out;
	r = pd_ring_reserve(att, len, id, nid);
	if (!r)
		goto out;

	hdr = (struct perf_event_header) {
		.type = PERF_DEFER_RECORD_USER_DUMP,
		.misc = PERF_RECORD_MISC_USER,
		.size = len,
	};
	word[0] = cookie;
	word[1] = d->abi;
	pd_ring_put(r, &hdr, sizeof(hdr));
	pd_ring_put(r, word, sizeof(word));
	pd_ring_put(r, regs, nregs * sizeof(u64));
	pd_ring_put(r, &size, sizeof(size));
	if (size) {
		pd_ring_put(r, d->stack, size);
		pd_ring_put(r, &dyn, sizeof(dyn));
	}
	pd_ring_put(r, id, nid * sizeof(u64));
	pd_ring_commit(r);
	due = pd_ring_due(att->sess, r);
out:
	put_cpu();
	pd_ring_wake(att->sess, due);
}
