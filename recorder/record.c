// SPDX-License-Identifier: GPL-2.0-only
/*
 * The work of perf-defer record: see record.h and, for the options,
 * cmd-record.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "evsel.h"
#include "ordered.h"
#include "perf-data.h"
#include "record.h"
#include "stitch.h"
#include "synth.h"
#include "util.h"

/*
 * What every event we open samples, as perf record sets it: the id only
 * when there are several events to tell apart, the CPU only when the
 * recording is per CPU (-a, -C).  Each field costs 8 bytes in every
 * sample and in every other record's sample_id.  Times sit at known
 * places: a sample's is its fourth word, another record's the second of
 * its sample_id (tid, time[, id][, cpu]).
 */
#define REC_SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static __u64 record__sample_type(const struct record *rec)
{
	return REC_SAMPLE_TYPE | (rec->nr_evsel > 1 ? PERF_SAMPLE_ID : 0) |
	       (rec->system_wide ? PERF_SAMPLE_CPU : 0);
}

/* Words of the sample_id trailer of the sample_type the events have. */
static unsigned int record__id_words(const struct record *rec)
{
	__u64 type = rec->evsel[0].attr.sample_type;

	return 2 + !!(type & PERF_SAMPLE_ID) + !!(type & PERF_SAMPLE_CPU);
}

/* One perf_event fd and its ring. */
struct record_fd {
	int				fd;
	unsigned int			evsel;
	struct perf_event_mmap_page	*mp;
};

static volatile sig_atomic_t done, child_exited;

static void record__sig(int sig)
{
	if (sig == SIGCHLD)
		child_exited = 1;
	else
		done = 1;
}

/* --- lists of numbers --------------------------------------------------- */

/* Parse "0,2-3" into a bitmap of up to REC_MAX_CPUS entries. */
static int record__parse_list(const char *what, const char *list, bool *set, int max)
{
	const char *p = list;
	char *end;
	long a, b;

	while (*p) {
		errno = 0;
		a = strtol(p, &end, 10);
		b = a;
		if (!errno && end != p && *end == '-')
			b = strtol(end + 1, &end, 10);
		if (errno || end == p || a < 0 || b < a || b >= max || (*end && *end != ',')) {
			pr_err("%s: '%s' is not a valid list", what, list);
			return -1;
		}
		for (; a <= b; a++)
			set[a] = true;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* --- opening events ----------------------------------------------------- */

static void record__attr_init(struct record *rec, struct record_evsel *es, bool tracking)
{
	struct perf_event_attr *attr = &es->attr;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = es->def->type;
	attr->config = es->def->config;
	attr->sample_type = record__sample_type(rec);
	attr->read_format = PERF_FORMAT_ID;
	if (rec->freq) {
		attr->freq = 1;
		attr->sample_freq = rec->freq;
	} else {
		attr->sample_period = rec->period;
	}
	attr->sample_id_all = 1;
	attr->disabled = 1;
	attr->exclude_guest = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = (rec->mmap_pages * getpagesize()) / 4;
	attr->sample_max_stack = 0;	/* the kernel's sysctl */
	if (tracking) {
		attr->mmap = 1;
		attr->mmap2 = 1;
		attr->comm = 1;
		attr->comm_exec = 1;
		attr->task = 1;
	}
	if (rec->path == RECORD_PATH_NATIVE) {
		attr__set_defer(attr, true, tracking);
	}
	if (rec->dwarf) {
		/*
		 * As perf record --call-graph dwarf.  For the module the
		 * sample_type bits stay off: the kernel then ignores both
		 * fields, and the session's dumps fill them in (see
		 * attr__user_dump()).
		 */
		attr->sample_regs_user = PD_DWARF_REGS_MASK;
		attr->sample_stack_user = rec->dump_size;
		/* the unwinder reads .eh_frame through the maps not executable */
		attr->mmap_data = tracking;
		if (rec->path == RECORD_PATH_FP) {
			attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
			attr->exclude_callchain_user = 1;
		}
	}
}

static int record__open_one(struct record *rec, unsigned int e, pid_t pid, int cpu)
{
	struct record_evsel *es = &rec->evsel[e];
	size_t len = (size_t)(1 + rec->mmap_pages) * getpagesize();
	struct record_fd *f;
	__u64 id;
	int fd;

	fd = sys_perf_event_open(&es->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		pr_err("cannot open event %s on %s %d: %s%s", es->def->name,
		       cpu >= 0 ? "cpu" : "task", cpu >= 0 ? cpu : pid, strerror(err),
		       err == EACCES || err == EPERM ?
		       " (check kernel.perf_event_paranoid, or run as root)" :
		       err == ENOENT && es->def->type == PERF_TYPE_HARDWARE ?
		       " (no hardware PMU here: use -e cpu-clock)" : "");
		return -1;
	}
	f = realloc(rec->fds, (rec->nr_fds + 1) * sizeof(*f));
	if (!f)
		goto nomem;
	rec->fds = f;
	f = &rec->fds[rec->nr_fds++];
	f->fd = fd;
	f->evsel = e;
	f->mp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (f->mp == MAP_FAILED) {
		pr_err("cannot mmap the buffer of %s: %s (try a smaller --mmap-pages)",
		       es->def->name, strerror(errno));
		f->mp = NULL;
		return -1;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
		pr_err("PERF_EVENT_IOC_ID: %s", strerror(errno));
		return -1;
	}
	es->ids = realloc(es->ids, (es->nr_ids + 1) * sizeof(*es->ids));
	if (!es->ids)
		goto nomem;
	es->ids[es->nr_ids++] = id;
	if (rec->verbose)
		fprintf(stderr, "opened %s on %s %d: fd %d id %llu\n", es->def->name,
			cpu >= 0 ? "cpu" : "task", cpu >= 0 ? cpu : pid, fd,
			(unsigned long long)id);
	return 0;
nomem:
	pr_err("out of memory");
	return -1;
}

/*
 * An inherited task event has no buffer of its own (the kernel refuses to
 * mmap one with cpu -1): open it on every CPU, as perf record does.
 */
static int record__open_task(struct record *rec, unsigned int e, pid_t pid)
{
	int ncpu = sysconf(_SC_NPROCESSORS_CONF), cpu;

	if (!rec->evsel[e].attr.inherit)
		return record__open_one(rec, e, pid, -1);
	for (cpu = 0; cpu < ncpu && cpu < REC_MAX_CPUS; cpu++)
		if (record__open_one(rec, e, pid, cpu))
			return -1;
	return 0;
}

struct record_thread_arg {
	struct record	*rec;
	unsigned int	e;
};

static int record__open_thread(void *arg, pid_t tid)
{
	struct record_thread_arg *a = arg;

	return record__open_task(a->rec, a->e, tid);
}

/* Every thread of a process. */
static int record__for_each_thread(struct record *rec, pid_t pid, unsigned int e)
{
	struct record_thread_arg a = { rec, e };
	int ret = synth__for_each_tid(pid, record__open_thread, &a);

	if (ret < 0) {
		pr_err("no process %d: %s", pid, strerror(-ret));
		return -1;
	}
	return ret;
}

static int record__parse_pids(const char *what, const char *list, pid_t **out)
{
	char *copy = strdup(list), *tok, *save = NULL, *end;
	int n = 0;

	*out = NULL;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v = strtol(tok, &end, 10);

		if (*end || v <= 0 || v > INT_MAX) {
			pr_err("%s: '%s' is not a process id", what, tok);
			n = -1;
			break;
		}
		*out = realloc(*out, (n + 1) * sizeof(**out));
		(*out)[n++] = v;
	}
	free(copy);
	return n;
}

/* The process of a thread, from /proc/TID/status. */
static pid_t record__tgid(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static int record__open_events(struct record *rec)
{
	bool cpus[REC_MAX_CPUS] = { false };
	int ncpu = sysconf(_SC_NPROCESSORS_CONF), cpu, n, i;
	unsigned int e;
	pid_t *pids;

	for (e = 0; e < rec->nr_evsel; e++)
		record__attr_init(rec, &rec->evsel[e], e == 0);

	if (rec->system_wide) {
		if (rec->cpu_list) {
			if (record__parse_list("-C", rec->cpu_list, cpus, ncpu))
				return -1;
		} else {
			for (cpu = 0; cpu < ncpu; cpu++)
				cpus[cpu] = true;
		}
		for (e = 0; e < rec->nr_evsel; e++)
			for (cpu = 0; cpu < ncpu; cpu++)
				if (cpus[cpu] && record__open_one(rec, e, -1, cpu))
					return -1;
		return 0;
	}
	if (!rec->pid_list && !rec->tid_list) {
		for (e = 0; e < rec->nr_evsel; e++) {
			rec->evsel[e].attr.inherit = 1;
			rec->evsel[e].attr.enable_on_exec = 1;
			if (record__open_task(rec, e, rec->child))
				return -1;
		}
		return 0;
	}
	/* with -p/-t a command only bounds the recording, as in perf */
	n = record__parse_pids(rec->pid_list ? "-p" : "-t",
			       rec->pid_list ?: rec->tid_list, &pids);
	if (n < 0)
		return -1;
	for (e = 0; e < rec->nr_evsel; e++) {
		rec->evsel[e].attr.inherit = !!rec->pid_list;
		for (i = 0; i < n; i++) {
			if (rec->pid_list ? record__for_each_thread(rec, pids[i], e) :
			    record__open_one(rec, e, pids[i], -1)) {
				free(pids);
				return -1;
			}
		}
	}
	free(pids);
	return 0;
}

/* --- the path ----------------------------------------------------------- */

static int record__choose_path(struct record *rec)
{
	int err;

	if (!rec->defer) {
		rec->path = RECORD_PATH_FP;
		return 0;
	}
	/* the kernel defers frame-pointer chains only */
	if (!rec->dwarf && !evsel__probe_native()) {
		if (rec->unwind[0] && (rec->unwind[0] != PERF_DEFER_UNWIND_FP || rec->unwind[1])) {
			pr_err("--user-unwind: this kernel defers callchains natively, and its deferred walk uses frame pointers only; leave --user-unwind out (or give fp)");
			return -1;
		}
		rec->path = RECORD_PATH_NATIVE;
		if (rec->verbose)
			fprintf(stderr, "using the kernel's native deferred callchains\n");
		return 0;
	}
	err = session__open(&rec->sess, rec->mmap_pages, rec->dwarf ? rec->dump_size : 0,
			    rec->unwind);
	if (!err) {
		rec->path = RECORD_PATH_MODULE;
		if (rec->verbose)
			fprintf(stderr, "using the perf_defer module\n");
		return 0;
	}
	if (err == -EPROTO)
		return -1;
	if (err == -ENOSYS) {
		/* session__open() said why */
	} else if (err == -EACCES || err == -EPERM) {
		pr_warn("cannot open %s: %s (root only); recording with --call-graph %s",
		       PERF_DEFER_DEVICE_PATH, strerror(-err), rec->dwarf ? "dwarf" : "fp");
	} else if (rec->dwarf) {
		pr_warn("no deferred dumps here (module perf_defer not loaded: 'modprobe perf_defer'); recording with --call-graph dwarf");
	} else {
		pr_warn("no deferred callchains here (the kernel does not defer them and module perf_defer is not loaded: 'modprobe perf_defer'); recording with --call-graph fp");
	}
	rec->path = RECORD_PATH_FP;
	/* perf's own dumps are in the samples: nothing is deferred */
	if (rec->dwarf)
		rec->keep_deferred = false;
	return 0;
}

static int record__module_attach(struct record *rec)
{
	for (unsigned int i = 0; i < rec->nr_fds; i++)
		if (session__attach(&rec->sess, rec->fds[i].fd))
			return -1;
	return session__map_rings(&rec->sess);
}

/* --- the workload ------------------------------------------------------- */

static int record__fork_workload(struct record *rec, int *go_fd)
{
	int go[2], err[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		pr_err("pipe: %s", strerror(errno));
		return -1;
	}
	rec->child = fork();
	if (rec->child < 0) {
		pr_err("fork: %s", strerror(errno));
		return -1;
	}
	if (!rec->child) {
		char c;
		int e;

		close(go[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(rec->argv[0], rec->argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	*go_fd = go[1];
	return err[0];
}

static int record__start_workload(struct record *rec, int go_fd, int err_fd)
{
	int e;

	if (write(go_fd, "g", 1) != 1) {
		pr_err("cannot start the workload: %s", strerror(errno));
		return -1;
	}
	close(go_fd);
	if (read(err_fd, &e, sizeof(e)) == sizeof(e)) {
		pr_err("cannot run '%s': %s", rec->argv[0], strerror(e));
		close(err_fd);
		waitpid(rec->child, NULL, 0);
		rec->child = -1;
		return -1;
	}
	close(err_fd);
	return 0;
}

/* --- reading ------------------------------------------------------------ */

/* The time of an event, or 0 for events without one. */
static __u64 record__event_time(const struct record *rec, const struct perf_event_header *h)
{
	const __u64 *w = (const void *)h;
	unsigned int n = record__id_words(rec);

	if (h->type == PERF_RECORD_SAMPLE)
		return h->size >= 32 ? w[3] : 0;	/* header, ip, pid/tid, time */
	if (h->size < sizeof(*h) + n * 8)
		return 0;
	return w[h->size / 8 - (n - 1)];	/* tid, >time<[, id][, cpu] */
}

/* Copy the records in [tail, head) of one ring into the ordered queue. */
static int record__read_ring(struct record *rec, char *data, __u64 size,
			     volatile __u64 *headp, volatile __u64 *tailp, bool module)
{
	__u64 head = __atomic_load_n(headp, __ATOMIC_ACQUIRE);
	__u64 tail = *tailp;
	__u64 buf[65536 / 8];

	while (tail < head) {
		size_t off = tail & (size - 1), first, len;
		struct perf_event_header *h = (void *)(data + off);

		len = h->size;
		if (len < sizeof(*h) || len > head - tail || len > sizeof(buf)) {
			pr_err("corrupt record in a ring buffer (size %zu)", len);
			return -1;
		}
		first = len < size - off ? len : size - off;
		memcpy(buf, data + off, first);
		memcpy((char *)buf + first, data, len - first);
		h = (void *)buf;
		if (h->type == PERF_RECORD_SAMPLE)
			rec->samples++;
		else if (h->type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED ||
			 h->type == PERF_DEFER_RECORD_USER_DUMP)
			rec->records++;
		else if (h->type == PERF_RECORD_LOST && len >= 24)
			*(module ? &rec->lost_records : &rec->lost) += buf[2];
		/*
		 * The module dates a deferred callchain after the newest sample
		 * of its kernel entry, so one of the same time as a sample is
		 * from an earlier entry than that sample's, and goes first: the
		 * two rings were read in no particular order, and a reader that
		 * met the sample first would take it for one the record missed
		 * (perf 7.3 leaves it unmatched).  Natively both come from one
		 * ring, in their true order.
		 */
		if (ordered__push(rec->oq, record__event_time(rec, h), buf, len,
				  module && h->type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED ?
				  ORDERED_EARLY : 0))
			return -1;
		tail += len;
	}
	__atomic_store_n(tailp, tail, __ATOMIC_RELEASE);
	return 0;
}

static int record__read_all(struct record *rec)
{
	size_t page = getpagesize();
	unsigned int i;

	for (i = 0; i < rec->nr_fds; i++) {
		struct perf_event_mmap_page *mp = rec->fds[i].mp;

		if (record__read_ring(rec, (char *)mp + page, (__u64)rec->mmap_pages * page,
				      &mp->data_head, &mp->data_tail, false))
			return -1;
	}
	for (i = 0; i < rec->sess.nr_rings; i++) {
		struct perf_defer_mmap_page *pg = rec->sess.rings[i];

		if (record__read_ring(rec, (char *)pg + pg->data_offset, pg->data_size,
				      &pg->data_head, &pg->data_tail, true))
			return -1;
	}
	return 0;
}

/* Where the ordered queue delivers, in time order. */
static int record__deliver(void *arg, const void *event, size_t size)
{
	struct record *rec = arg;
	const struct perf_event_header *h = event;
	int ret;

	if (h->type == PERF_RECORD_SAMPLE) {
		const __u64 *w = event;
		__u64 nr = size >= 64 ? w[7] : 0;	/* ip tid time id cpu period nr */

		if (nr >= 2 && 64 + nr * 8 <= size &&
		    w[8 + nr - 2] == PERF_DEFER_CONTEXT_USER_DEFERRED)
			rec->deferred++;
	}
	ret = dsos__add_mmap2(&rec->dsos, event, size);
	if (ret)
		return ret;
	if (rec->stitch)
		return stitch__event(rec->stitch, event, size);
	return perf_data_writer__write(rec->w, event, size);
}

/* Synthesized records go straight to the file, before everything else. */
static int record__emit_direct(void *arg, const void *event, size_t size)
{
	struct record *rec = arg;

	return perf_data_writer__write(rec->w, event, size);
}

static int record__synthesize(struct record *rec)
{
	pid_t *pids;
	int ret, n, i;

	ret = synth__kernel_mmap(record__emit_direct, rec, record__id_words(rec));
	if (ret)
		return ret;
	if (rec->system_wide)
		return synth__all(record__emit_direct, rec, record__id_words(rec), rec->dwarf);
	if (!rec->pid_list && !rec->tid_list)
		return 0;	/* the workload's maps come with its exec */
	n = record__parse_pids("-p", rec->pid_list ?: rec->tid_list, &pids);
	for (i = 0; !ret && i < n; i++) {
		pid_t pid = pids[i], tid = 0;

		if (rec->tid_list) {
			tid = pids[i];
			pid = record__tgid(tid);
		}
		ret = synth__process(record__emit_direct, rec, record__id_words(rec), pid, tid, rec->dwarf);
	}
	free(pids);
	return ret;
}

static int record__finish(struct record *rec)
{
	const char **argv = calloc(rec->orig_argc + 1, sizeof(*argv));
	struct build_id_entry *ids;
	struct perf_data_features f = { 0 };
	size_t i, n;
	int ret;

	if (!argv)
		return -ENOMEM;
	if (rec->stitch) {
		ret = stitch__finish(rec->stitch, &rec->st);
		if (ret) {
			free(argv);
			return ret;
		}
	}
	ids = dsos__build_ids(&rec->dsos, &n);
	if (!ids) {
		free(argv);
		return -ENOMEM;
	}
	argv[0] = "record";
	for (i = 1; i < (size_t)rec->orig_argc; i++)
		argv[i] = rec->orig_argv[i];
	f.argc = rec->orig_argc;
	f.argv = argv;
	f.build_ids = ids;
	f.nr_build_ids = n;
	rec->bytes = perf_data_writer__data_size(rec->w);
	ret = perf_data_writer__close(rec->w, &f);
	rec->w = NULL;
	/* as perf record does: perf archive packs the cache */
	if (!ret && !rec->no_buildid_cache)
		build_id_cache__add(ids, n);
	free(ids);
	free(argv);
	return ret;
}

/* --- the recording ------------------------------------------------------ */

static void record__cleanup(struct record *rec)
{
	size_t len = (size_t)(1 + rec->mmap_pages) * getpagesize();
	unsigned int i;

	if (rec->w)
		perf_data_writer__abort(rec->w);
	if (rec->stitch)
		stitch__delete(rec->stitch);
	ordered__delete(rec->oq);
	for (i = 0; i < rec->nr_fds; i++) {
		if (rec->fds[i].mp)
			munmap(rec->fds[i].mp, len);
		close(rec->fds[i].fd);
	}
	free(rec->fds);
	for (i = 0; i < rec->nr_evsel; i++)
		free(rec->evsel[i].ids);
	dsos__exit(&rec->dsos);
	session__close(&rec->sess);
	if (rec->epfd >= 0)
		close(rec->epfd);
	if (rec->child > 0) {
		kill(rec->child, SIGKILL);
		waitpid(rec->child, NULL, 0);
	}
}

static int record__setup_output(struct record *rec)
{
	unsigned int i;
	int ret;

	rec->oq = ordered__new(record__deliver, rec);
	rec->w = perf_data_writer__open(rec->output);
	if (!rec->oq || !rec->w) {
		pr_err("cannot create %s: %s", rec->output, strerror(errno));
		return -1;
	}
	for (i = 0; i < rec->nr_evsel; i++) {
		struct perf_event_attr attr = rec->evsel[i].attr;

		/* the file says what the samples hold, not how they were opened */
		attr.disabled = 0;
		attr.enable_on_exec = 0;
		attr.watermark = 0;
		attr.wakeup_watermark = 0;
		attr__set_defer(&attr, rec->keep_deferred, rec->keep_deferred && i == 0);
		if (!rec->keep_deferred)
			attr__stitch_user_dump(&attr);
		ret = perf_data_writer__add_attr(rec->w, &attr, rec->evsel[i].ids,
						 rec->evsel[i].nr_ids, rec->evsel[i].def->name);
		if (ret)
			goto write_err;
	}
	/*
	 * The deferred form too goes through the stitcher, which writes
	 * each record before the samples of later entries that share its
	 * time (stitch__keep_deferred()).
	 */
	if (rec->path != RECORD_PATH_FP) {
		rec->stitch = stitch__new(rec->w);
		if (!rec->stitch) {
			ret = -ENOMEM;
			goto write_err;
		}
		if (rec->keep_deferred)
			stitch__keep_deferred(rec->stitch);
		for (i = 0; i < rec->nr_evsel; i++) {
			ret = stitch__add_attr(rec->stitch, &rec->evsel[i].attr,
					       rec->evsel[i].ids, rec->evsel[i].nr_ids);
			if (ret)
				goto write_err;
		}
	}
	ret = record__synthesize(rec);
	if (!ret)
		return 0;
write_err:
	pr_err("cannot write %s: %s", rec->output, strerror(-ret));
	return -1;
}

/*
 * After each round, as perf record does: what is written is in time order
 * (held samples of the stitcher hold back what comes after them), so perf
 * may sort and flush at every marker.
 */
static int record__finished_round(struct record *rec)
{
	static const struct perf_event_header fr = {
		.type = PD_RECORD_FINISHED_ROUND, .size = sizeof(fr),
	};

	if (!ordered__delivered(rec->oq))
		return 0;
	return perf_data_writer__write(rec->w, &fr, sizeof(fr));
}

static int record__loop(struct record *rec, int *status)
{
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned int i;
	int ret;

	rec->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (rec->epfd < 0) {
		pr_err("epoll_create1: %s", strerror(errno));
		return -1;
	}
	/*
	 * perf's rings wake us at a quarter full, the module's too where it
	 * can (ABI 1.5: never a wake-up per record, which would cost the
	 * sampled task more than it saves us), and every 100 ms we read
	 * everything anyway.
	 */
	for (i = 0; i < rec->nr_fds; i++)
		epoll_ctl(rec->epfd, EPOLL_CTL_ADD, rec->fds[i].fd, &ev);
	if (rec->sess.fd >= 0 && rec->sess.wakeup)
		epoll_ctl(rec->epfd, EPOLL_CTL_ADD, rec->sess.fd, &ev);

	while (!done) {
		struct epoll_event evs[16];

		if (epoll_wait(rec->epfd, evs, 16, 100) > 0)
			rec->wakeups++;
		ret = record__read_all(rec) ?: ordered__round(rec->oq) ?:
		      record__finished_round(rec);
		if (ret)
			goto write_err;
		if (rec->child > 0 && child_exited &&
		    waitpid(rec->child, status, WNOHANG) == rec->child) {
			rec->child = -1;
			break;
		}
	}

	/* Stop, then take what is left. */
	for (i = 0; i < rec->nr_fds; i++)
		ioctl(rec->fds[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	if (rec->child > 0) {
		kill(rec->child, SIGTERM);
		waitpid(rec->child, status, 0);
		rec->child = -1;
	}
	ret = record__read_all(rec) ?: ordered__flush(rec->oq);
	if (!ret)
		return 0;
write_err:
	pr_err("cannot write %s: %s", rec->output, strerror(ret < 0 ? -ret : EIO));
	return -1;
}


int record__run(struct record *rec)
{
	struct sigaction sa = { .sa_handler = record__sig };
	int ret, go_fd = -1, err_fd = -1;
	unsigned int i;

	rec->epfd = -1;
	rec->child = -1;
	rec->sess.fd = -1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);

	if (record__choose_path(rec))
		goto fail;
	/* perf's own dwarf dumps fill 128 pages in 15 samples */
	if (rec->dwarf && rec->path == RECORD_PATH_FP && !rec->mmap_set)
		rec->mmap_pages = 512;
	if (rec->argc && (err_fd = record__fork_workload(rec, &go_fd)) < 0)
		goto fail;
	if (record__open_events(rec))
		goto fail;
	if (rec->path == RECORD_PATH_MODULE && record__module_attach(rec))
		goto fail;
	if (record__setup_output(rec))
		goto fail;
	/* the workload's own events start with its exec (enable_on_exec) */
	if (rec->system_wide || rec->pid_list || rec->tid_list)
		for (i = 0; i < rec->nr_fds; i++)
			ioctl(rec->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	if (rec->argc && record__start_workload(rec, go_fd, err_fd))
		goto fail;
	if (record__loop(rec, &rec->status))
		goto fail;
	ret = record__finish(rec);
	if (ret) {
		pr_err("cannot write %s: %s", rec->output, strerror(-ret));
		goto fail;
	}
	record__cleanup(rec);
	return 0;
fail:
	record__cleanup(rec);
	return -1;
}
