/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * defer_lib - helpers of the deferred-callchain tests in the guest:
 * module load/unload, perf_event_open and its ring, /dev/perf_defer
 * sessions and their rings, record parsing, stitching deferred samples to
 * their CALLCHAIN_DEFERRED records, workload children, ELF symbols and
 * call-path sets for comparing chains.  defer_lib.c holds the module and
 * the workload children, dl_rings.c the parsed data, perf events and
 * sessions, dl_chains.c the chains, stitching, symbols and call paths.
 *
 * Nothing here uses kselftest_harness.h; diagnostics go to stderr as
 * "# " lines so that they sit in the TAP output as comments.
 */
#ifndef DEFER_LIB_H
#define DEFER_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#define DL_MODNAME		"perf_defer"
#define DL_CTX_DEFERRED		PERF_DEFER_CONTEXT_USER_DEFERRED
#define DL_RECORD_DEFERRED	PERF_DEFER_RECORD_CALLCHAIN_DEFERRED
#define DL_MAX_EVENTS		16
#define DL_MAX_SESSIONS		8
#define DL_MAX_CPUS		64
#define DL_ALL_CPUS		(-2)	/* dl_perf_open: one event per CPU */

void dl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- module --------------------------------------------------------- */

const char *dl_ko_path(void);
int dl_module_load(const char *params);		/* 0 or -errno */
int dl_module_unload(void);			/* 0 or -errno, O_NONBLOCK */
/* unload, retrying -EBUSY/-EAGAIN for up to ms; 0 or the last -errno */
int dl_module_unload_wait(int ms);
/* the same, calling between(arg) before each try */
int dl_module_unload_while(int ms, void (*between)(void *), void *arg);
bool dl_module_loaded(void);
int dl_get_stats(int devfd, struct perf_defer_stats *st);	/* 0 or -errno */
/* b - a, field by field, into d */
void dl_stats_delta(const struct perf_defer_stats *a, const struct perf_defer_stats *b,
		    struct perf_defer_stats *d);
void dl_stats_log(const char *what, const struct perf_defer_stats *st);

/* ---- parsed data ---------------------------------------------------- */

struct dl_sid {				/* struct sample_id, the fields present */
	uint32_t pid, tid, cpu;
	uint64_t time, id, stream_id, identifier;
};

struct dl_sample {			/* PERF_RECORD_SAMPLE */
	int ev;				/* dl_perf.ev of the ring it came from */
	uint16_t misc;
	uint32_t pid, tid, cpu;
	uint64_t ip, time, id, stream_id, period, identifier;
	uint32_t nr;
	uint64_t *chain;
	/* dl_stitch() */
	int rec;			/* index into dl_data.r, or -1 */
};

struct dl_record {			/* PERF_RECORD_CALLCHAIN_DEFERRED */
	int sess;			/* dl_session.idx */
	uint32_t ring_cpu;
	uint16_t misc, size;
	uint64_t cookie;
	uint32_t nr;
	uint64_t *ips;
	struct dl_sid sid;
	/* dl_stitch() */
	int nsamples;			/* samples stitched to it */
	bool dup;			/* a second record of the same entry */
};

struct dl_dump {			/* PERF_DEFER_RECORD_USER_DUMP */
	int sess;
	uint32_t ring_cpu;
	uint16_t misc, size;
	uint64_t cookie;
	uint64_t abi;
	uint32_t nregs;
	uint64_t regs[64];		/* in mask bit order (24 on x86-64, 33 on arm64) */
	uint64_t stack_size, dyn_size;
	uint8_t *stack;			/* stack_size bytes */
	struct dl_sid sid;
	int nsamples;			/* dump_test: samples matched to it */
};

struct dl_lost {			/* PERF_RECORD_LOST of a session ring */
	int sess;
	uint32_t ring_cpu;
	uint64_t id, lost;
	struct dl_sid sid;
};

struct dl_perf;

struct dl_data {
	struct dl_sample *s;
	size_t ns, cs;
	struct dl_record *r;
	size_t nr, cr;
	struct dl_lost *l;
	size_t nl, cl;
	struct dl_dump *u;
	size_t nu, cu;
	int ev_sess[DL_MAX_EVENTS];	/* session an event is attached to, or -1 */
	const struct dl_perf *ev_perf[DL_MAX_EVENTS];	/* set on attach */
	bool sess_tid[DL_MAX_SESSIONS];	/* its records' sample_id has a tid */
	uint64_t perf_lost;		/* PERF_RECORD_LOST.lost of the perf rings */
	uint64_t throttle;		/* PERF_RECORD_THROTTLE in the perf rings */
	uint64_t perf_other;		/* other perf records */
	uint64_t rec_bytes;		/* bytes of CALLCHAIN_DEFERRED records */
	int nerr;			/* malformed records */
	char err[512];			/* the first of them */
};

void dl_data_init(struct dl_data *d);
void dl_data_free(struct dl_data *d);

/* ---- perf events ---------------------------------------------------- */

/*
 * A cpu-clock sampling attr: IP|TID|TIME|ID|CPU|PERIOD|CALLCHAIN,
 * sample_id_all, disabled + enable_on_exec + inherit, period in ns.
 */
void dl_attr_cpu_clock(struct perf_event_attr *attr, uint64_t period_ns);

/*
 * One sampling event: a single perf event (cpu >= 0 or -1), or, with
 * DL_ALL_CPUS, one per possible CPU as perf record opens them (perf does
 * not mmap an inherited per-task event).  Each has its own ring.
 */
struct dl_perf {
	int ev;				/* index, copied into dl_sample.ev */
	int n;				/* events open */
	int fd[DL_MAX_CPUS];
	uint64_t id[DL_MAX_CPUS];	/* PERF_EVENT_IOC_ID */
	void *base[DL_MAX_CPUS];
	size_t len;
	struct perf_event_attr attr;
};

/* open on pid/cpu and map 2^n data pages each (0 = 128); 0 or -errno */
int dl_perf_open(struct dl_perf *p, int ev, const struct perf_event_attr *attr,
		 pid_t pid, int cpu, unsigned int data_pages);
int dl_perf_drain(struct dl_perf *p, struct dl_data *d);	/* records read */
void dl_perf_close(struct dl_perf *p);
void dl_perf_init(struct dl_perf *p);	/* closed, safe to dl_perf_close */
bool dl_perf_has_id(const struct dl_perf *p, uint64_t id);

/*
 * Keep perf's task-event jump label (perf_sched_events, patched into
 * __schedule) switched on for as long as we run, with one dummy per-task
 * event: every task event counts, enabled or not.  Debian's 6.12 under
 * QEMU TCG sometimes dies with "Oops: int3" in __schedule when that label
 * flips while other CPUs schedule, module or no module (perf record -p in
 * a loop does it too); the tests open and close task events hundreds of
 * times.  Harmless elsewhere.  Returns the fd, or -1.
 */
int dl_hold_perf_sched_events(void);

/* ---- sessions ------------------------------------------------------- */

struct dl_session {
	int fd;
	int idx;			/* copied into dl_record.sess */
	int ncpu;			/* possible CPUs = number of rings */
	unsigned int data_pages;
	size_t map_len;
	void **maps;			/* per CPU, NULL before dl_session_map */
	/* how to parse sample_id: from the first event attached */
	uint64_t sample_type;
	uint64_t regs_mask;		/* sample_regs_user, for USER_DUMP */
	bool sample_id_all;
	bool have_attr;
	unsigned int nempty_wakeups;	/* poll said POLLIN, nothing there */
};

int dl_possible_cpus(void);
/* open /dev/perf_defer, SET_RING unless data_pages == 0; 0 or -errno */
int dl_session_open(struct dl_session *s, int idx, unsigned int data_pages);
int dl_ioc_attach(int devfd, int perf_fd);	/* raw ioctls, 0 or -errno */
int dl_ioc_detach(int devfd, int perf_fd);
int dl_ioc_set_ring(int devfd, uint32_t data_pages);
/* SET_RING with a poll wake-up mark (ABI 1.5) */
int dl_ioc_set_ring_wakeup(int devfd, uint32_t data_pages, uint32_t wakeup_bytes);
/* the most bytes any CPU's mapped ring of s holds unread */
uint64_t dl_session_max_used(const struct dl_session *s);
int dl_ioc_set_dump(int devfd, uint32_t flags, uint32_t stack_size);
int dl_ioc_set_unwind(int devfd, const uint8_t *methods, size_t n);
/* attach all of p's events to s, note its session in d (may be NULL) */
int dl_session_attach(struct dl_session *s, struct dl_perf *p, struct dl_data *d);
int dl_session_map(struct dl_session *s);	/* 0 or -errno */
int dl_session_drain(struct dl_session *s, struct dl_data *d);
uint64_t dl_session_lost(const struct dl_session *s);	/* sum of ctrl lost */
void dl_session_close(struct dl_session *s);
/* sample_id size for a sample_type (0 without sample_id_all) */
size_t dl_sid_size(uint64_t sample_type, bool sample_id_all);

/* ---- workload children ---------------------------------------------- */

/* the directory of /proc/self/exe, where the workloads are */
const char *dl_self_dir(void);

struct dl_child {
	pid_t pid;
	int go;				/* write end of the start pipe */
};

/*
 * fork a child that waits until dl_child_go() and then execs argv[0]
 * (relative to dl_self_dir() unless it contains a '/').  The child dies
 * with its parent.  0 or -errno.
 */
int dl_child_spawn(struct dl_child *c, char *const argv[]);
int dl_child_go(struct dl_child *c);
void dl_child_kill(struct dl_child *c);

struct dl_collect_opts {
	int timeout_ms;			/* then SIGKILL the child (0: 60 s) */
	/*
	 * session rings: 0 drain whenever polled, >0 every that many ms,
	 * <0 only after the child is gone
	 */
	int sess_drain_ms;
	/* drain the session rings once, this many ms after the start (>0) */
	int sess_drain_once_ms;
};

/*
 * Drain perf rings and session rings until the child exits (poll() on
 * the session fds, 10 ms rounds), then once more.  Returns the child's
 * wait status, or -1 on a timeout.
 */
int dl_collect(struct dl_child *c, struct dl_perf *pf, int np, struct dl_session *ss,
	       int ns, struct dl_data *d, const struct dl_collect_opts *o);

/* ---- chains and stitching ------------------------------------------- */

static inline bool dl_kernel_mode(const struct dl_sample *s)
{
	return s->nr && s->chain[0] == PERF_CONTEXT_KERNEL;
}

/* a sample with a USER_DEFERRED part: its cookie into *cookie */
bool dl_deferred(const struct dl_sample *s, uint64_t *cookie);
/* the sample has a PERF_CONTEXT_USER part (an in-NMI user walk) */
bool dl_has_user(const struct dl_sample *s);
/*
 * A kernel-mode sample taken on the way back to user space, from the
 * entry's unwind on (its kernel chain passes through perf_defer's
 * task_work or the kernel's exit-to-user path; /proc/kallsyms names them):
 * there the module makes no new request, as upstream keeps one cookie per
 * entry, and the sample keeps perf's own walk.  Likewise in an execve()
 * (begin_new_exec() and after): a request made before the exec gets no
 * record, and samples joining it keep perf's walk.
 */
bool dl_on_way_out(const struct dl_sample *s);
/* a sample's kernel chain, one "# symbol+off" line per frame */
void dl_log_kernel_chain(const struct dl_sample *s);

struct dl_stitch_stats {
	size_t samples;			/* of attached events */
	size_t deferred;		/* with USER_DEFERRED, cookie */
	size_t matched;			/* found their record */
	size_t unmatched;
	size_t not_deferred;		/* attached, but an in-NMI user chain */
	size_t bad_cookie;		/* cookie not (cpu+1)<<32 | odd */
	size_t bad_shape;		/* USER_DEFERRED, cookie not at the end */
	size_t entries;			/* distinct (session, tid, cookie) sampled */
	size_t entries_unmatched;	/* of those, without a record */
	size_t tasks_unmatched;		/* kernel entries (tid, cookie) without
					 * a record in any session: one exit
					 * left pending serves every session */
	size_t records;
	size_t unused;			/* records no sample refers to */
	size_t dups;			/* more than one record for one entry */
	size_t time_order;		/* record time < a stitched sample's */
	size_t id_mismatch;		/* record sid pid, or id not the event's */
};

/*
 * Match every deferred sample to the record with its session, tid and
 * cookie.  Sets dl_sample.rec, dl_record.nsamples/dup.  Also checks what
 * a record must agree on with its samples (pid, id, time order).
 */
void dl_stitch(struct dl_data *d, struct dl_stitch_stats *st);
void dl_stitch_log(const char *what, const struct dl_stitch_stats *st);

/*
 * The user chain of a sample: the in-NMI part after PERF_CONTEXT_USER, or
 * its stitched record's ips.  Returns the number of ips (0 = none) and
 * sets *ips; -1 for a deferred sample without record.
 */
int dl_user_chain(const struct dl_data *d, const struct dl_sample *s, const uint64_t **ips);

/* ---- symbols -------------------------------------------------------- */

struct dl_syms;

struct dl_syms *dl_syms_load(const char *path);	/* ELF32/64 symtab */
void dl_syms_free(struct dl_syms *y);
/*
 * Is addr inside the file's loaded segments, at their link addresses (a
 * non-PIE executable's own code and data: a symbol or not, a PLT stub)?
 */
bool dl_in_image(const struct dl_syms *y, uint64_t addr);
/* the function holding addr, or NULL; *off = addr - start */
const char *dl_sym(const struct dl_syms *y, uint64_t addr, uint64_t *off);
/* frame i of a user chain: ips[0] is an IP, the others return addresses */
const char *dl_frame_sym(const struct dl_syms *y, const uint64_t *ips, int i);
bool dl_frame_is(const struct dl_syms *y, const uint64_t *ips, int n, int i, const char *name);
/* "name+0xoff" or "0xaddr" into buf */
const char *dl_fmt_frame(const struct dl_syms *y, const uint64_t *ips, int i, char *buf,
			 size_t len);
/*
 * One line per frame, two chains side by side.  Frames from first_ra on
 * are return addresses (1 for a user chain, 0 for a path without its IP).
 */
void dl_log_chains(const struct dl_syms *y, int first_ra, const char *ta, const uint64_t *a,
		   int na, const char *tb, const uint64_t *b, int nb);
void dl_log_chain(const struct dl_syms *y, int first_ra, const char *t, const uint64_t *a,
		  int na);

/* ---- call-path sets ------------------------------------------------- */

/* A path is a user chain without its IP: return addresses only. */

struct dl_path {
	uint64_t *ips;
	int n;
	size_t count;
};

struct dl_paths {
	struct dl_path *p;
	size_t n, cap;
	size_t total;
};

void dl_paths_add(struct dl_paths *ps, const uint64_t *ips, int n);
void dl_paths_free(struct dl_paths *ps);
void dl_paths_sort(struct dl_paths *ps);	/* by count, descending */
/*
 * Paths of b (with count >= min) that a lacks, logged side by side with
 * the closest path of a; returns how many.
 */
int dl_paths_missing(const struct dl_syms *y, const char *ta, const struct dl_paths *a,
		     const char *tb, const struct dl_paths *b, size_t min);
/* the same, but a path of b only needs to be a prefix of one of a */
int dl_paths_not_prefix(const struct dl_syms *y, const char *ta, const struct dl_paths *a,
			const char *tb, const struct dl_paths *b, size_t min);
void dl_paths_log(const struct dl_syms *y, const char *t, const struct dl_paths *ps, int max);

#endif /* DEFER_LIB_H */
