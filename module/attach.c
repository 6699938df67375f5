// SPDX-License-Identifier: GPL-2.0-only
/*
 * The objects the other parts share: sessions (their slots and their
 * lifetime) and attached events (their table, looked up from NMI, and
 * their lifetime).  hooks.c and request.c find and release attaches here,
 * session.c makes them; nothing here calls back into those.
 *
 * Lifetimes: an attach holds its perf file and a session reference; each
 * pending request holds an attach reference.  Attaches are hashed for the
 * NMI-side lookup under RCU and freed after a grace period, from a work
 * item (freeing a session may sleep).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "perf_defer.h"

/* attach/detach, the hash's writers, and pd_sessions[] */
DEFINE_MUTEX(pd_lock);
static DEFINE_HASHTABLE(pd_attach_hash, 10);
static struct pd_session *pd_sessions[PD_MAX_SESSIONS];
static struct workqueue_struct *pd_wq;

/*
 * Look an event up.  Callers hold pd_lock, or run where an RCU grace period
 * cannot end under them: the kprobe handlers run with preemption off (in
 * NMI or IRQ, or in a tracepoint's section).  The attach found stays valid
 * for as long as that lasts: it is freed after a grace period.
 */
struct pd_attach *pd_attach_find(struct perf_event *event)
{
	struct pd_attach *att;

	hash_for_each_possible_rcu(pd_attach_hash, att, node, (unsigned long)event,
				   lockdep_is_held(&pd_lock)) {
		if (att->event == event)
			return att;
	}
	return NULL;
}

/*
 * May @s take a slot?  Sessions are a machine-wide resource: users
 * without CAP_PERFMON hold at most pd_user_sessions each, and together
 * leave PD_RESERVED_SESSIONS for those with it.  Under pd_lock.
 */
static bool pd_session_allowed(const struct pd_session *s)
{
	unsigned int i, mine = 0, unpriv = 0;

	if (s->privileged)
		return true;
	for (i = 0; i < PD_MAX_SESSIONS; i++) {
		const struct pd_session *o = pd_sessions[i];

		if (!o || o->privileged)
			continue;
		unpriv++;
		if (uid_eq(o->uid, s->uid))
			mine++;
	}
	/* root may change the limit at any time, through sysfs */
	return mine < READ_ONCE(pd_user_sessions) &&
	       unpriv < PD_MAX_SESSIONS - PD_RESERVED_SESSIONS;
}

/* Give a new session its slot, if the limits allow: 0 or -EBUSY. */
int pd_session_add(struct pd_session *s)
{
	unsigned int i;
	int ret = -EBUSY;

	mutex_lock(&pd_lock);
	for (i = 0; i < PD_MAX_SESSIONS && pd_session_allowed(s); i++) {
		if (!pd_sessions[i]) {
			pd_sessions[i] = s;
			s->idx = i;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&pd_lock);
	return ret;
}

/* Drop a session reference; the last frees its rings and its slot. */
void pd_session_put(struct pd_session *s)
{
	if (!refcount_dec_and_test(&s->ref))
		return;
	pd_rings_free(s);
	mutex_lock(&pd_lock);
	pd_sessions[s->idx] = NULL;
	mutex_unlock(&pd_lock);
	kfree(s);
}

static void pd_attach_free_work(struct work_struct *work)
{
	struct pd_attach *att = container_of(work, struct pd_attach, free_work);

	put_pid_ns(att->ns);
	pd_session_put(att->sess);
	kfree(att);
}

static void pd_attach_free_rcu(struct rcu_head *rcu)
{
	struct pd_attach *att = container_of(rcu, struct pd_attach, rcu);

	INIT_WORK(&att->free_work, pd_attach_free_work);
	queue_work(pd_wq, &att->free_work);
}

/* Drop a reference; task context, never NMI. */
void pd_attach_put(struct pd_attach *att)
{
	if (!refcount_dec_and_test(&att->ref))
		return;
	/* unhashed already; NMI-side readers may still hold it */
	call_rcu(&att->rcu, pd_attach_free_rcu);
}

/* Publish a new attach of @s (which it holds a reference of).  Under pd_lock. */
void pd_attach_add(struct pd_session *s, struct pd_attach *att)
{
	lockdep_assert_held(&pd_lock);
	list_add_tail(&att->list, &s->attaches);
	s->nr_attached++;
	hash_add_rcu(pd_attach_hash, &att->node, (unsigned long)att->event);
	pd_dbg("attached event %llu\n", att->id);
}

/* Unpublish an attach and drop the table's reference.  Under pd_lock. */
void pd_attach_del(struct pd_session *s, struct pd_attach *att)
{
	lockdep_assert_held(&pd_lock);
	hash_del_rcu(&att->node);
	list_del(&att->list);
	s->nr_attached--;
	fput(att->file);
	att->file = NULL;
	pd_dbg("detached event %llu\n", att->id);
	pd_attach_put(att);
}

int pd_attach_init(void)
{
	pd_wq = alloc_workqueue("perf_defer", WQ_UNBOUND, 0);
	return pd_wq ? 0 : -ENOMEM;
}

void pd_attach_exit(void)
{
	/* attaches freed by requests that ended just before */
	rcu_barrier();
	destroy_workqueue(pd_wq);
}
