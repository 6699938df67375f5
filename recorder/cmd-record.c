// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-defer record - record samples with deferred user callchains
 *
 * The path is chosen at start: the kernel's own defer_callchain (Linux >=
 * 6.19), else the perf_defer module, else plain fp callchains with one
 * warning.  Events go through perf's own ring buffers; with the module,
 * CALLCHAIN_DEFERRED records come from the session's rings.  Everything is
 * merged in time order, round by round as perf's ordered events do, and
 * written either stitched (the default: every perf reads it) or in the
 * upstream deferred form (--keep-deferred).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "builtin.h"
#include "evsel.h"
#include "ordered.h"
#include "perf-data.h"
#include "stitch.h"
#include "synth.h"
#include "util.h"

/* Every event we open samples these, so that times sit at known places. */
#define REC_SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			 PERF_SAMPLE_CALLCHAIN)
/* sample_id trailer of REC_SAMPLE_TYPE: tid, time, id, cpu */
#define REC_ID_WORDS	4
#define REC_MAX_EVENTS	8
#define REC_MAX_CPUS	1024

static const char record_usage[] =
	"usage: perf-defer record [<options>] [-- <command> [<args>]]\n"
	"\n"
	"Record samples with user callchains that are unwound when the task returns\n"
	"to user space, and write a perf.data file that 'perf report' reads.\n"
	"\n"
	"    -e, --event <event>   event to sample: cpu-clock (default), task-clock,\n"
	"                          cycles, instructions, page-faults,\n"
	"                          context-switches (repeatable)\n"
	"    -F, --freq <n>        sample frequency in Hz (default 4000)\n"
	"    -c, --count <n>       sample period in events (ns for the clocks)\n"
	"    -a, --all-cpus        system-wide, on all CPUs\n"
	"    -C, --cpu <cpus>      only these CPUs (e.g. 0,2-3); implies -a\n"
	"    -p, --pid <pid,...>   existing processes (all their threads)\n"
	"    -t, --tid <tid,...>   existing threads\n"
	"                          with -a, -p or -t, a command only sets how long to record;\n"
	"                          without one, record until SIGINT (Ctrl-C)\n"
	"    -o, --output <file>   output file (default perf.data)\n"
	"    -g                    same as --call-graph fp,defer (the default)\n"
	"        --call-graph <m>  fp,defer (deferred user callchains), fp,\n"
	"                          dwarf,defer[,SIZE] (user registers and SIZE bytes of\n"
	"                          user stack, default 8192, copied once per kernel entry\n"
	"                          by the module; perf unwinds them with DWARF) or\n"
	"                          dwarf[,SIZE] (perf's own in-NMI dump)\n"
	"        --user-unwind <l> how the module walks user stacks for fp,defer: a\n"
	"                          list of sframe, eh_frame and fp, tried in that order\n"
	"                          for each frame (default: the module's user_unwind\n"
	"                          parameter, fp unless changed); sframe and eh_frame\n"
	"                          give whole stacks of code built without frame\n"
	"                          pointers; needs the module (native deferral walks\n"
	"                          frame pointers only)\n"
	"        --keep-deferred   write the deferred form instead of stitching: the\n"
	"                          upstream one for fp,defer (for perf >= 6.19); for\n"
	"                          dwarf,defer one dump per kernel entry, which only\n"
	"                          'perf-defer stitch' and 'dump' read\n"
	"    -m, --mmap-pages <n>  data pages per buffer, a power of two (default 128;\n"
	"                          512 for perf's own dwarf dumps)\n"
	"    -q, --quiet           no progress lines\n"
	"    -v, --verbose         say what is opened and why\n"
	"        --stats           print sample and callchain counts at the end\n"
	"    -h, --help            show this help\n";

enum rec_path { PATH_NATIVE, PATH_MODULE, PATH_FP };

struct rec_event_def {
	const char	*name;
	__u32		type;
	__u64		config;
};

static const struct rec_event_def rec_event_defs[] = {
	{ "cpu-clock",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cycles",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

/* One perf_event fd and its ring. */
struct rec_fd {
	int				fd;
	unsigned int			evsel;
	struct perf_event_mmap_page	*mp;
};

struct rec_evsel {
	const struct rec_event_def	*def;
	struct perf_event_attr		attr;
	__u64				*ids;
	unsigned int			nr_ids;
};

struct record {
	/* options */
	const char		*output;
	struct rec_evsel	evsel[REC_MAX_EVENTS];
	unsigned int		nr_evsel;
	__u64			freq, period;
	bool			system_wide, defer, dwarf, keep_deferred, quiet, stats;
	__u32			dump_size;	/* dwarf: bytes of user stack */
	__u8			unwind[8];	/* --user-unwind: PERF_DEFER_UNWIND_*, 0-ended */
	int			verbose;
	unsigned int		mmap_pages;
	bool			mmap_set;	/* -m given */
	char			*cpu_list, *pid_list, *tid_list;
	char			**argv;
	int			argc, orig_argc;
	char			**orig_argv;

	/* state */
	enum rec_path		path;
	struct rec_fd		*fds;
	unsigned int		nr_fds;
	int			dev;
	struct perf_defer_mmap_page *rings[REC_MAX_CPUS];
	unsigned int		nr_rings;
	size_t			ring_len;
	int			epfd;
	pid_t			child;
	struct pd_writer	*w;
	struct pd_stitch	*stitch;
	struct pd_ordered	*oq;

	char			**dsos;
	size_t			nr_dsos;

	/* counts */
	__u64			wakeups, samples, deferred, records, lost, lost_records;
};

static volatile sig_atomic_t rec_done, rec_child_exited;

static void rec_sig(int sig)
{
	if (sig == SIGCHLD)
		rec_child_exited = 1;
	else
		rec_done = 1;
}

/* --- options ------------------------------------------------------------ */

static int rec_add_event(struct record *rec, const char *name)
{
	size_t i;

	if (rec->nr_evsel == REC_MAX_EVENTS) {
		pr_err("at most %d events", REC_MAX_EVENTS);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(rec_event_defs); i++) {
		if (!strcmp(name, rec_event_defs[i].name)) {
			rec->evsel[rec->nr_evsel++].def = &rec_event_defs[i];
			return 0;
		}
	}
	pr_err("unknown event '%s' (known: cpu-clock, task-clock, page-faults, context-switches, cycles, instructions)",
	       name);
	return -1;
}

static int rec_parse_u64(const char *opt, const char *arg, __u64 *val)
{
	char *end;

	errno = 0;
	*val = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || !*val || arg[0] == '-') {
		pr_err("%s: '%s' is not a positive number", opt, arg);
		return -1;
	}
	return 0;
}

/*
 * fp,defer, fp, dwarf,defer[,SIZE] or dwarf[,SIZE]; SIZE as perf takes it
 * (rounded up to 8 bytes), up to what one module record holds.
 */
static int rec_parse_call_graph(struct record *rec, const char *arg)
{
	const char *size = NULL;
	unsigned long long v;
	char *end;

	rec->dwarf = false;
	rec->dump_size = PD_DWARF_STACK_SIZE;
	if (!strcmp(arg, "fp,defer")) {
		rec->defer = true;
		return 0;
	}
	if (!strcmp(arg, "fp")) {
		rec->defer = false;
		return 0;
	}
	if (!strncmp(arg, "dwarf,defer", 11) && (!arg[11] || arg[11] == ',')) {
		rec->defer = true;
		size = arg[11] ? arg + 12 : NULL;
	} else if (!strncmp(arg, "dwarf", 5) && (!arg[5] || arg[5] == ',')) {
		rec->defer = false;
		size = arg[5] ? arg + 6 : NULL;
	} else {
		pr_err("--call-graph: '%s' is not supported (fp,defer, fp, dwarf,defer[,SIZE] or dwarf[,SIZE])",
		       arg);
		return -1;
	}
	rec->dwarf = true;
	if (!size)
		return 0;
	errno = 0;
	v = strtoull(size, &end, 0);
	if (errno || end == size || *end || !v || size[0] == '-' ||
	    v > PERF_DEFER_DUMP_MAX_STACK) {
		pr_err("--call-graph: dump size '%s' is not a number in 1..%d", size,
		       PERF_DEFER_DUMP_MAX_STACK);
		return -1;
	}
	rec->dump_size = (v + 7) & ~7ULL;
	return 0;
}

/* --user-unwind LIST: "sframe,eh_frame,fp", each method once */
static int rec_parse_user_unwind(struct record *rec, const char *arg)
{
	static const char *const names[] = {
		[PERF_DEFER_UNWIND_FP] = "fp",
		[PERF_DEFER_UNWIND_SFRAME] = "sframe",
		[PERF_DEFER_UNWIND_EH_FRAME] = "eh_frame",
	};
	char *list = strdup(arg), *p = list, *name;
	unsigned int n = 0, m, seen = 0;

	if (!list)
		return -1;
	memset(rec->unwind, 0, sizeof(rec->unwind));
	while ((name = strsep(&p, ",")) != NULL) {
		for (m = 1; m < sizeof(names) / sizeof(names[0]); m++)
			if (!strcmp(name, names[m]))
				break;
		if (m == sizeof(names) / sizeof(names[0]) || (seen & (1U << m))) {
			pr_err("--user-unwind: '%s' is not a list of sframe, eh_frame and fp, each at most once",
			       arg);
			free(list);
			return -1;
		}
		seen |= 1U << m;
		rec->unwind[n++] = m;
	}
	free(list);
	return 0;
}

static int record__parse_options(struct record *rec, int argc, char **argv)
{
	enum { OPT_CALL_GRAPH = 256, OPT_KEEP, OPT_STATS, OPT_USER_UNWIND };
	static const struct option options[] = {
		{ "event",	   required_argument, NULL, 'e' },
		{ "freq",	   required_argument, NULL, 'F' },
		{ "count",	   required_argument, NULL, 'c' },
		{ "all-cpus",	   no_argument,	      NULL, 'a' },
		{ "cpu",	   required_argument, NULL, 'C' },
		{ "pid",	   required_argument, NULL, 'p' },
		{ "tid",	   required_argument, NULL, 't' },
		{ "output",	   required_argument, NULL, 'o' },
		{ "call-graph",	   required_argument, NULL, OPT_CALL_GRAPH },
		{ "keep-deferred", no_argument,	      NULL, OPT_KEEP },
		{ "user-unwind",   required_argument, NULL, OPT_USER_UNWIND },
		{ "mmap-pages",	   required_argument, NULL, 'm' },
		{ "quiet",	   no_argument,	      NULL, 'q' },
		{ "verbose",	   no_argument,	      NULL, 'v' },
		{ "stats",	   no_argument,	      NULL, OPT_STATS },
		{ "help",	   no_argument,	      NULL, 'h' },
		{ }
	};
	__u64 val;
	int c;

	rec->output = "perf.data";
	rec->defer = true;
	rec->dump_size = PD_DWARF_STACK_SIZE;
	rec->mmap_pages = 128;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:F:c:aC:p:t:o:gm:qvh", options, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (rec_add_event(rec, optarg))
				return EXIT_USAGE;
			break;
		case 'F':
			if (rec_parse_u64("-F", optarg, &rec->freq))
				return EXIT_USAGE;
			break;
		case 'c':
			if (rec_parse_u64("-c", optarg, &rec->period))
				return EXIT_USAGE;
			break;
		case 'a':
			rec->system_wide = true;
			break;
		case 'C':
			rec->cpu_list = optarg;
			rec->system_wide = true;
			break;
		case 'p':
			rec->pid_list = optarg;
			break;
		case 't':
			rec->tid_list = optarg;
			break;
		case 'o':
			rec->output = optarg;
			break;
		case 'g':
			rec->defer = true;
			rec->dwarf = false;
			break;
		case OPT_CALL_GRAPH:
			if (rec_parse_call_graph(rec, optarg))
				return EXIT_USAGE;
			break;
		case OPT_KEEP:
			rec->keep_deferred = true;
			break;
		case OPT_USER_UNWIND:
			if (rec_parse_user_unwind(rec, optarg))
				return EXIT_USAGE;
			break;
		case 'm':
			if (rec_parse_u64("--mmap-pages", optarg, &val))
				return EXIT_USAGE;
			if (val & (val - 1) || val > PERF_DEFER_RING_MAX_PAGES * 16) {
				pr_err("--mmap-pages: %s is not a power of two up to %d", optarg,
				       PERF_DEFER_RING_MAX_PAGES * 16);
				return EXIT_USAGE;
			}
			rec->mmap_pages = val;
			rec->mmap_set = true;
			break;
		case 'q':
			rec->quiet = true;
			break;
		case 'v':
			rec->verbose++;
			break;
		case OPT_STATS:
			rec->stats = true;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return EXIT_OK;
		default:
			fputs(record_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (rec->freq && rec->period) {
		pr_err("-F and -c cannot be used together");
		return EXIT_USAGE;
	}
	if (rec->pid_list && rec->tid_list) {
		pr_err("-p and -t cannot be used together");
		return EXIT_USAGE;
	}
	if ((rec->pid_list || rec->tid_list) && rec->system_wide) {
		pr_err("-p/-t cannot be combined with -a/-C");
		return EXIT_USAGE;
	}
	if (!rec->system_wide && !rec->pid_list && !rec->tid_list && optind >= argc) {
		pr_err("nothing to record: give a command after '--', or -a, -p or -t");
		fputs(record_usage, stderr);
		return EXIT_USAGE;
	}
	if (rec->keep_deferred && !rec->defer) {
		pr_err("--keep-deferred needs --call-graph fp,defer or dwarf,defer");
		return EXIT_USAGE;
	}
	if (rec->unwind[0] && (!rec->defer || rec->dwarf)) {
		pr_err("--user-unwind needs --call-graph fp,defer");
		return EXIT_USAGE;
	}
	if (!rec->freq && !rec->period)
		rec->freq = 4000;
	if (!rec->nr_evsel)
		rec_add_event(rec, "cpu-clock");
	rec->argv = argv + optind;
	rec->argc = argc - optind;
	return -1;	/* go on */
}

/* --- lists of numbers --------------------------------------------------- */

/* Parse "0,2-3" into a bitmap of up to REC_MAX_CPUS entries. */
static int rec_parse_list(const char *what, const char *list, bool *set, int max)
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

static void rec_attr_init(struct record *rec, struct rec_evsel *es, bool tracking)
{
	struct perf_event_attr *attr = &es->attr;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = es->def->type;
	attr->config = es->def->config;
	attr->sample_type = REC_SAMPLE_TYPE;
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
	if (rec->path == PATH_NATIVE) {
		pd_attr__set_defer(attr, true, tracking);
	}
	if (rec->dwarf) {
		/*
		 * As perf record --call-graph dwarf.  For the module the
		 * sample_type bits stay off: the kernel then ignores both
		 * fields, and the session's dumps fill them in (see
		 * pd_attr__user_dump()).
		 */
		attr->sample_regs_user = PD_DWARF_REGS_MASK;
		attr->sample_stack_user = rec->dump_size;
		/* the unwinder reads .eh_frame through the maps not executable */
		attr->mmap_data = tracking;
		if (rec->path == PATH_FP) {
			attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
			attr->exclude_callchain_user = 1;
		}
	}
}

static int rec_open_one(struct record *rec, unsigned int e, pid_t pid, int cpu)
{
	struct rec_evsel *es = &rec->evsel[e];
	size_t len = (size_t)(1 + rec->mmap_pages) * getpagesize();
	struct rec_fd *f;
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
static int rec_open_task(struct record *rec, unsigned int e, pid_t pid)
{
	int ncpu = sysconf(_SC_NPROCESSORS_CONF), cpu;

	if (!rec->evsel[e].attr.inherit)
		return rec_open_one(rec, e, pid, -1);
	for (cpu = 0; cpu < ncpu && cpu < REC_MAX_CPUS; cpu++)
		if (rec_open_one(rec, e, pid, cpu))
			return -1;
	return 0;
}

struct rec_thread_arg {
	struct record	*rec;
	unsigned int	e;
};

static int rec_open_thread(void *arg, pid_t tid)
{
	struct rec_thread_arg *a = arg;

	return rec_open_task(a->rec, a->e, tid);
}

/* Every thread of a process. */
static int rec_for_each_thread(struct record *rec, pid_t pid, unsigned int e)
{
	struct rec_thread_arg a = { rec, e };
	int ret = pd_for_each_tid(pid, rec_open_thread, &a);

	if (ret < 0) {
		pr_err("no process %d: %s", pid, strerror(-ret));
		return -1;
	}
	return ret;
}

static int rec_parse_pids(const char *what, const char *list, pid_t **out)
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
static pid_t rec_tgid(pid_t tid)
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

static int rec_open_events(struct record *rec)
{
	bool cpus[REC_MAX_CPUS] = { false };
	int ncpu = sysconf(_SC_NPROCESSORS_CONF), cpu, n, i;
	unsigned int e;
	pid_t *pids;

	for (e = 0; e < rec->nr_evsel; e++)
		rec_attr_init(rec, &rec->evsel[e], e == 0);

	if (rec->system_wide) {
		if (rec->cpu_list) {
			if (rec_parse_list("-C", rec->cpu_list, cpus, ncpu))
				return -1;
		} else {
			for (cpu = 0; cpu < ncpu; cpu++)
				cpus[cpu] = true;
		}
		for (e = 0; e < rec->nr_evsel; e++)
			for (cpu = 0; cpu < ncpu; cpu++)
				if (cpus[cpu] && rec_open_one(rec, e, -1, cpu))
					return -1;
		return 0;
	}
	if (!rec->pid_list && !rec->tid_list) {
		for (e = 0; e < rec->nr_evsel; e++) {
			rec->evsel[e].attr.inherit = 1;
			rec->evsel[e].attr.enable_on_exec = 1;
			if (rec_open_task(rec, e, rec->child))
				return -1;
		}
		return 0;
	}
	/* with -p/-t a command only bounds the recording, as in perf */
	n = rec_parse_pids(rec->pid_list ? "-p" : "-t",
			   rec->pid_list ?: rec->tid_list, &pids);
	if (n < 0)
		return -1;
	for (e = 0; e < rec->nr_evsel; e++) {
		rec->evsel[e].attr.inherit = !!rec->pid_list;
		for (i = 0; i < n; i++) {
			if (rec->pid_list ? rec_for_each_thread(rec, pids[i], e) :
			    rec_open_one(rec, e, pids[i], -1)) {
				free(pids);
				return -1;
			}
		}
	}
	free(pids);
	return 0;
}

/* --- the path ----------------------------------------------------------- */

static int rec_module_open(struct record *rec)
{
	struct perf_defer_version v = { .size = sizeof(v) };
	struct perf_defer_ring ring = { .size = sizeof(ring) };
	int fd;

	fd = open(PERF_DEFER_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_DEFER_IOC_GET_VERSION, &v) || v.major != PERF_DEFER_ABI_MAJOR) {
		pr_err("module ABI %u.%u is not supported by this recorder (needs major %d); rebuild/reinstall the module",
		       v.major, v.minor, PERF_DEFER_ABI_MAJOR);
		close(fd);
		return -EPROTO;
	}
	ring.data_pages = rec->mmap_pages > PERF_DEFER_RING_MAX_PAGES ?
			  PERF_DEFER_RING_MAX_PAGES : rec->mmap_pages;
	/*
	 * Dumps are big: room for 256 of them per CPU between two reads
	 * (every 100 ms at least), within the module's limit.
	 */
	while (rec->dwarf && ring.data_pages < PERF_DEFER_RING_MAX_PAGES &&
	       (size_t)ring.data_pages * getpagesize() < 256 * (rec->dump_size + 512))
		ring.data_pages *= 2;
	if (ioctl(fd, PERF_DEFER_IOC_SET_RING, &ring)) {
		pr_err("PERF_DEFER_IOC_SET_RING: %s", strerror(errno));
		close(fd);
		return -EPROTO;
	}
	if (rec->dwarf) {
		struct perf_defer_dump d = {
			.size = sizeof(d), .flags = PERF_DEFER_DUMP_REGS_STACK,
			.stack_size = rec->dump_size,
		};

		if (v.minor < 1) {
			pr_err("warning: module ABI %u.%u has no dumps for dwarf,defer (needs 1.1); recording with --call-graph dwarf",
			       v.major, v.minor);
			close(fd);
			return -ENOSYS;
		}
		if (ioctl(fd, PERF_DEFER_IOC_SET_DUMP, &d)) {
			pr_err("PERF_DEFER_IOC_SET_DUMP of %u bytes: %s%s", d.stack_size,
			       strerror(errno), errno == EINVAL ?
			       " (a dump must fit in the ring: raise --mmap-pages)" : "");
			close(fd);
			return -EPROTO;
		}
	}
	if (rec->unwind[0]) {
		struct perf_defer_unwind u = { .size = sizeof(u) };

		memcpy(u.methods, rec->unwind, sizeof(u.methods));
		if (v.minor < 3) {
			pr_err("module ABI %u.%u has no --user-unwind (needs 1.3); rebuild/reinstall the module",
			       v.major, v.minor);
			close(fd);
			return -EPROTO;
		}
		if (ioctl(fd, PERF_DEFER_IOC_SET_UNWIND, &u)) {
			pr_err("PERF_DEFER_IOC_SET_UNWIND: %s", strerror(errno));
			close(fd);
			return -EPROTO;
		}
	}
	rec->ring_len = (size_t)(1 + ring.data_pages) * getpagesize();
	rec->dev = fd;
	return 0;
}

static int rec_choose_path(struct record *rec)
{
	int err;

	rec->dev = -1;
	if (!rec->defer) {
		rec->path = PATH_FP;
		return 0;
	}
	/* the kernel defers frame-pointer chains only */
	if (!rec->dwarf && !event__probe(true)) {
		if (rec->unwind[0] && (rec->unwind[0] != PERF_DEFER_UNWIND_FP || rec->unwind[1])) {
			pr_err("--user-unwind: this kernel defers callchains natively, and its deferred walk uses frame pointers only; leave --user-unwind out (or give fp)");
			return -1;
		}
		rec->path = PATH_NATIVE;
		if (rec->verbose)
			fprintf(stderr, "using the kernel's native deferred callchains\n");
		return 0;
	}
	err = rec_module_open(rec);
	if (!err) {
		rec->path = PATH_MODULE;
		if (rec->verbose)
			fprintf(stderr, "using the perf_defer module\n");
		return 0;
	}
	if (err == -EPROTO)
		return -1;
	if (err == -ENOSYS) {
		/* rec_module_open() said why */
	} else if (err == -EACCES || err == -EPERM) {
		pr_err("warning: cannot open %s: %s (root only); recording with --call-graph %s",
		       PERF_DEFER_DEVICE_PATH, strerror(-err), rec->dwarf ? "dwarf" : "fp");
	} else if (rec->dwarf) {
		pr_err("warning: no deferred dumps here (module perf_defer not loaded: 'modprobe perf_defer'); recording with --call-graph dwarf");
	} else {
		pr_err("warning: no deferred callchains here (kernel < 6.19 and module perf_defer not loaded: 'modprobe perf_defer'); recording with --call-graph fp");
	}
	rec->path = PATH_FP;
	/* perf's own dumps are in the samples: nothing is deferred */
	if (rec->dwarf)
		rec->keep_deferred = false;
	return 0;
}

static int rec_module_attach(struct record *rec)
{
	int ncpu = sysconf(_SC_NPROCESSORS_CONF), cpu;
	unsigned int i;

	for (i = 0; i < rec->nr_fds; i++) {
		struct perf_defer_attach a = { .size = sizeof(a), .perf_fd = rec->fds[i].fd };

		if (ioctl(rec->dev, PERF_DEFER_IOC_ATTACH, &a)) {
			pr_err("cannot attach event fd %d to %s: %s", a.perf_fd,
			       PERF_DEFER_DEVICE_PATH, strerror(errno));
			return -1;
		}
	}
	if (ncpu > REC_MAX_CPUS)
		ncpu = REC_MAX_CPUS;
	for (cpu = 0; cpu < ncpu; cpu++) {
		void *p = mmap(NULL, rec->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       rec->dev, (off_t)cpu * rec->ring_len);

		if (p == MAP_FAILED) {
			pr_err("cannot map the module ring of cpu %d: %s", cpu, strerror(errno));
			return -1;
		}
		rec->rings[rec->nr_rings++] = p;
	}
	return 0;
}

/* --- the workload ------------------------------------------------------- */

static int rec_fork_workload(struct record *rec, int *go_fd)
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

static int rec_start_workload(struct record *rec, int go_fd, int err_fd)
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
static __u64 rec_event_time(const struct perf_event_header *h)
{
	const __u64 *w = (const void *)h;

	if (h->type == PERF_RECORD_SAMPLE)
		return h->size >= 32 ? w[3] : 0;	/* header, ip, pid/tid, time */
	if (h->size < sizeof(*h) + REC_ID_WORDS * 8)
		return 0;
	return w[h->size / 8 - (REC_ID_WORDS - 1)];	/* tid, >time<, id, cpu */
}

/* Copy the records in [tail, head) of one ring into the ordered queue. */
static int rec_read_ring(struct record *rec, char *data, __u64 size,
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
		if (pd_ordered__queue(rec->oq, rec_event_time(h), buf, len,
				      module && h->type == PERF_DEFER_RECORD_CALLCHAIN_DEFERRED))
			return -1;
		tail += len;
	}
	__atomic_store_n(tailp, tail, __ATOMIC_RELEASE);
	return 0;
}

static int rec_read_all(struct record *rec)
{
	size_t page = getpagesize();
	unsigned int i;

	for (i = 0; i < rec->nr_fds; i++) {
		struct perf_event_mmap_page *mp = rec->fds[i].mp;

		if (rec_read_ring(rec, (char *)mp + page, (__u64)rec->mmap_pages * page,
				  &mp->data_head, &mp->data_tail, false))
			return -1;
	}
	for (i = 0; i < rec->nr_rings; i++) {
		struct perf_defer_mmap_page *pg = rec->rings[i];

		if (rec_read_ring(rec, (char *)pg + pg->data_offset, pg->data_size,
				  &pg->data_head, &pg->data_tail, true))
			return -1;
	}
	return 0;
}

/* Remember the files mapped executable, for their build-ids. */
static int rec_note_dso(struct record *rec, const struct perf_event_header *h, size_t size)
{
	const char *name;
	size_t i, max;

	if (h->type != PERF_RECORD_MMAP2 || size < 8 + 64 + 2)
		return 0;
	name = (const char *)h + 8 + 64;	/* after pid..flags */
	max = size - 8 - 64;
	if (name[0] != '/' || !memchr(name, 0, max))
		return 0;
	for (i = 0; i < rec->nr_dsos; i++)
		if (!strcmp(rec->dsos[i], name))
			return 0;
	if (rec->nr_dsos % 64 == 0) {
		char **d = realloc(rec->dsos, (rec->nr_dsos + 64) * sizeof(*d));

		if (!d)
			return -ENOMEM;
		rec->dsos = d;
	}
	rec->dsos[rec->nr_dsos] = strdup(name);
	return rec->dsos[rec->nr_dsos++] ? 0 : -ENOMEM;
}

/* Where the ordered queue delivers, in time order. */
static int rec_deliver(void *arg, const void *event, size_t size)
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
	ret = rec_note_dso(rec, h, size);
	if (ret)
		return ret;
	if (rec->stitch)
		return pd_stitch__event(rec->stitch, event, size);
	return pd_writer__write(rec->w, event, size);
}

/* Synthesized records go straight to the file, before everything else. */
static int rec_emit_direct(void *arg, const void *event, size_t size)
{
	struct record *rec = arg;

	return pd_writer__write(rec->w, event, size);
}

static int rec_synthesize(struct record *rec)
{
	pid_t *pids;
	int ret, n, i;

	ret = pd_synth_kernel_mmap(rec_emit_direct, rec, REC_ID_WORDS);
	if (ret)
		return ret;
	if (rec->system_wide)
		return pd_synth_all(rec_emit_direct, rec, REC_ID_WORDS, rec->dwarf);
	if (!rec->pid_list && !rec->tid_list)
		return 0;	/* the workload's maps come with its exec */
	n = rec_parse_pids("-p", rec->pid_list ?: rec->tid_list, &pids);
	for (i = 0; !ret && i < n; i++) {
		pid_t pid = pids[i], tid = 0;

		if (rec->tid_list) {
			tid = pids[i];
			pid = rec_tgid(tid);
		}
		ret = pd_synth_process(rec_emit_direct, rec, REC_ID_WORDS, pid, tid, rec->dwarf);
	}
	free(pids);
	return ret;
}

static int rec_finish(struct record *rec)
{
	struct pd_build_id_entry *ids = calloc(rec->nr_dsos + 1, sizeof(*ids));
	const char **argv = calloc(rec->orig_argc + 1, sizeof(*argv));
	struct pd_stitch_stats st = { 0 };
	struct pd_features f = { 0 };
	size_t i, n = 0, len;
	__u64 bytes;
	int ret;

	if (!ids || !argv)
		return -ENOMEM;
	if (rec->stitch) {
		ret = pd_stitch__finish(rec->stitch, &st);
		if (ret)
			return ret;
	}
	for (i = 0; i < rec->nr_dsos; i++) {
		len = sizeof(ids[n].build_id);
		if (pd_build_id(rec->dsos[i], ids[n].build_id, &len))
			continue;
		ids[n].path = rec->dsos[i];
		ids[n].pid = -1;
		ids[n].size = len;
		n++;
	}
	len = sizeof(ids[n].build_id);
	if (!pd_build_id_notes("/sys/kernel/notes", ids[n].build_id, &len)) {
		ids[n].path = "[kernel.kallsyms]";
		ids[n].pid = -1;
		ids[n].kernel = true;
		ids[n].size = len;
		n++;
	}
	argv[0] = "record";
	for (i = 1; i < (size_t)rec->orig_argc; i++)
		argv[i] = rec->orig_argv[i];
	f.argc = rec->orig_argc;
	f.argv = argv;
	f.build_ids = ids;
	f.nr_build_ids = n;
	bytes = pd_writer__data_size(rec->w);
	ret = pd_writer__close(rec->w, &f);
	rec->w = NULL;
	free(ids);
	free(argv);
	if (ret)
		return ret;

	if (!rec->quiet) {
		fprintf(stderr, "[ perf-defer record: Woken up %llu times to write data ]\n",
			(unsigned long long)rec->wakeups);
		fprintf(stderr, "[ perf-defer record: Captured and wrote %.3f MB %s (%llu samples) ]\n",
			bytes / 1048576.0, rec->output, (unsigned long long)rec->samples);
	}
	if (rec->stats) {
		printf("path: %s\n", rec->path == PATH_NATIVE ? "native" :
		       rec->path == PATH_MODULE ? "module" : "fp");
		printf("samples: %llu\n", (unsigned long long)rec->samples);
		printf("deferred samples: %llu\n", (unsigned long long)rec->deferred);
		printf("deferred records: %llu\n", (unsigned long long)rec->records);
		if (rec->stitch) {
			printf("stitched: %llu\n", (unsigned long long)st.stitched);
			printf("unmatched: %llu\n", (unsigned long long)st.unmatched);
		}
		printf("lost samples: %llu\n", (unsigned long long)rec->lost);
		printf("lost records: %llu\n", (unsigned long long)rec->lost_records);
	}
	return 0;
}

/* --- main --------------------------------------------------------------- */

static void rec_cleanup(struct record *rec)
{
	size_t len = (size_t)(1 + rec->mmap_pages) * getpagesize();
	unsigned int i;

	if (rec->w)
		pd_writer__abort(rec->w);
	if (rec->stitch)
		pd_stitch__delete(rec->stitch);
	pd_ordered__delete(rec->oq);
	for (i = 0; i < rec->nr_rings; i++)
		munmap(rec->rings[i], rec->ring_len);
	for (i = 0; i < rec->nr_fds; i++) {
		if (rec->fds[i].mp)
			munmap(rec->fds[i].mp, len);
		close(rec->fds[i].fd);
	}
	free(rec->fds);
	for (i = 0; i < rec->nr_evsel; i++)
		free(rec->evsel[i].ids);
	for (i = 0; i < rec->nr_dsos; i++)
		free(rec->dsos[i]);
	free(rec->dsos);
	if (rec->dev >= 0)
		close(rec->dev);
	if (rec->epfd >= 0)
		close(rec->epfd);
	if (rec->child > 0) {
		kill(rec->child, SIGKILL);
		waitpid(rec->child, NULL, 0);
	}
}

static int rec_setup_output(struct record *rec)
{
	unsigned int i;
	int ret;

	rec->oq = pd_ordered__new(rec_deliver, rec);
	rec->w = pd_writer__open(rec->output);
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
		pd_attr__set_defer(&attr, rec->keep_deferred, rec->keep_deferred && i == 0);
		if (!rec->keep_deferred)
			pd_attr__stitch_user_dump(&attr);
		ret = pd_writer__add_attr(rec->w, &attr, rec->evsel[i].ids,
					  rec->evsel[i].nr_ids, rec->evsel[i].def->name);
		if (ret)
			goto write_err;
	}
	if (rec->path != PATH_FP && !rec->keep_deferred) {
		rec->stitch = pd_stitch__new(rec->w);
		if (!rec->stitch) {
			ret = -ENOMEM;
			goto write_err;
		}
		for (i = 0; i < rec->nr_evsel; i++) {
			ret = pd_stitch__add_attr(rec->stitch, &rec->evsel[i].attr,
						  rec->evsel[i].ids, rec->evsel[i].nr_ids);
			if (ret)
				goto write_err;
		}
	}
	ret = rec_synthesize(rec);
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
static int rec_finished_round(struct record *rec)
{
	static const struct perf_event_header fr = {
		.type = PD_RECORD_FINISHED_ROUND, .size = sizeof(fr),
	};

	if (!pd_ordered__delivered(rec->oq))
		return 0;
	return pd_writer__write(rec->w, &fr, sizeof(fr));
}

static int rec_loop(struct record *rec, int *status)
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
	 * perf's rings wake us at a quarter full, and every 100 ms we read
	 * everything anyway.  The module's rings are not polled: a wake-up
	 * per record would cost the sampled task more than it saves us.
	 */
	for (i = 0; i < rec->nr_fds; i++)
		epoll_ctl(rec->epfd, EPOLL_CTL_ADD, rec->fds[i].fd, &ev);

	while (!rec_done) {
		struct epoll_event evs[16];

		if (epoll_wait(rec->epfd, evs, 16, 100) > 0)
			rec->wakeups++;
		ret = rec_read_all(rec) ?: pd_ordered__round(rec->oq) ?: rec_finished_round(rec);
		if (ret)
			goto write_err;
		if (rec->child > 0 && rec_child_exited &&
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
	ret = rec_read_all(rec) ?: pd_ordered__flush(rec->oq);
	if (!ret)
		return 0;
write_err:
	pr_err("cannot write %s: %s", rec->output, strerror(ret < 0 ? -ret : EIO));
	return -1;
}

int cmd_record(int argc, char **argv)
{
	struct record rec = { .epfd = -1, .child = -1, .dev = -1 };
	struct sigaction sa = { .sa_handler = rec_sig };
	int ret, go_fd = -1, err_fd = -1, status = 0;
	unsigned int i;

	ret = record__parse_options(&rec, argc, argv);
	if (ret >= 0)
		return ret;
	rec.orig_argc = argc;
	rec.orig_argv = argv;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);

	if (rec_choose_path(&rec))
		goto fail;
	/* perf's own dwarf dumps fill 128 pages in 15 samples */
	if (rec.dwarf && rec.path == PATH_FP && !rec.mmap_set)
		rec.mmap_pages = 512;
	if (rec.argc && (err_fd = rec_fork_workload(&rec, &go_fd)) < 0)
		goto fail;
	if (rec_open_events(&rec))
		goto fail;
	if (rec.path == PATH_MODULE && rec_module_attach(&rec))
		goto fail;
	if (rec_setup_output(&rec))
		goto fail;
	/* the workload's own events start with its exec (enable_on_exec) */
	if (rec.system_wide || rec.pid_list || rec.tid_list)
		for (i = 0; i < rec.nr_fds; i++)
			ioctl(rec.fds[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	if (rec.argc && rec_start_workload(&rec, go_fd, err_fd))
		goto fail;
	if (rec_loop(&rec, &status))
		goto fail;
	ret = rec_finish(&rec);
	if (ret) {
		pr_err("cannot write %s: %s", rec.output, strerror(-ret));
		goto fail;
	}
	rec_cleanup(&rec);
	if (WIFEXITED(status) && WEXITSTATUS(status) && !rec.quiet)
		fprintf(stderr, "[ perf-defer record: the workload exited with %d ]\n",
			WEXITSTATUS(status));
	return EXIT_OK;
fail:
	rec_cleanup(&rec);
	return EXIT_FAIL;
}
