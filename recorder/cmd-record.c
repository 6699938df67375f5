// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-defer record - record samples with deferred user callchains
 *
 * The options, and what is printed at the end; the work is record.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "builtin.h"
#include "evsel.h"
#include "record.h"
#include "sysfs.h"
#include "util.h"

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
	"                          parameter, sframe,eh_frame,fp unless changed);\n"
	"                          sframe and eh_frame give whole stacks of code built\n"
	"                          without frame pointers; needs the module (native\n"
	"                          deferral walks frame pointers only)\n"
	"        --keep-deferred   write the deferred form instead of stitching: the\n"
	"                          upstream one for fp,defer (for perf >= 6.19); for\n"
	"                          dwarf,defer one dump per kernel entry, which only\n"
	"                          'perf-defer stitch' and 'dump' read\n"
	"    -m, --mmap-pages <n>  data pages per buffer, a power of two (default 128;\n"
	"                          512 for perf's own dwarf dumps)\n"
	"    -q, --quiet           no progress lines\n"
	"    -v, --verbose         say what is opened and why\n"
	"        --stats           print sample and callchain counts at the end\n"
	"    -N, --no-buildid-cache  do not add the files sampled to perf's build-id\n"
	"                          cache ($HOME/.debug), which perf archive packs\n"
	"    -h, --help            show this help\n";

static const struct record_event_def record_event_defs[] = {
	{ "cpu-clock",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cycles",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

/* --- options ------------------------------------------------------------ */

static int record__add_event(struct record *rec, const char *name)
{
	size_t i;

	if (rec->nr_evsel == REC_MAX_EVENTS) {
		pr_err("at most %d events", REC_MAX_EVENTS);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(record_event_defs); i++) {
		if (!strcmp(name, record_event_defs[i].name)) {
			rec->evsel[rec->nr_evsel++].def = &record_event_defs[i];
			return 0;
		}
	}
	pr_err("unknown event '%s' (known: cpu-clock, task-clock, page-faults, context-switches, cycles, instructions)",
	       name);
	return -1;
}

static int record__parse_u64(const char *opt, const char *arg, __u64 *val)
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
static int record__parse_call_graph(struct record *rec, const char *arg)
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

/*
 * The frequency against kernel.perf_event_max_sample_rate, which the
 * kernel lowers when its sampling interrupts take too long: perf_event_open()
 * refuses a higher sample_freq (EINVAL).  As perf record does, the default
 * 4000 Hz is lowered to the limit with a warning, and a -F above it is an
 * error.  Nonzero on that error.
 */
static int record__check_freq(struct record *rec, bool default_freq)
{
	long long max;

	if (!rec->freq || !sysfs__read_num(&max, 10, "/proc/sys/kernel/perf_event_max_sample_rate") ||
	    max <= 0 || rec->freq <= (__u64)max)
		return 0;
	if (!default_freq) {
		pr_err("-F %llu: above the kernel's limit of %lld Hz (kernel.perf_event_max_sample_rate): give a lower -F, or raise the limit",
		       (unsigned long long)rec->freq, max);
		return -1;
	}
	pr_warn("lowering the default frequency from %llu to %lld Hz, the kernel's limit (kernel.perf_event_max_sample_rate)",
		(unsigned long long)rec->freq, max);
	rec->freq = max;
	return 0;
}

static int record__parse_options(struct record *rec, int argc, char **argv)
{
	bool default_freq = false;
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
		{ "no-buildid-cache", no_argument,    NULL, 'N' },
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
	while ((c = getopt_long(argc, argv, "+e:F:c:aC:p:t:o:gm:qvNh", options, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (record__add_event(rec, optarg))
				return EXIT_USAGE;
			break;
		case 'F':
			if (record__parse_u64("-F", optarg, &rec->freq))
				return EXIT_USAGE;
			break;
		case 'c':
			if (record__parse_u64("-c", optarg, &rec->period))
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
			if (record__parse_call_graph(rec, optarg))
				return EXIT_USAGE;
			break;
		case OPT_KEEP:
			rec->keep_deferred = true;
			break;
		case OPT_USER_UNWIND:
			if (session__parse_unwind(optarg, rec->unwind))
				return EXIT_USAGE;
			break;
		case 'm':
			if (record__parse_u64("--mmap-pages", optarg, &val))
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
		case 'N':
			rec->no_buildid_cache = true;
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
	if (!rec->freq && !rec->period) {
		rec->freq = 4000;
		default_freq = true;
	}
	if (record__check_freq(rec, default_freq))
		return EXIT_USAGE;
	if (!rec->nr_evsel)
		record__add_event(rec, "cpu-clock");
	rec->argv = argv + optind;
	rec->argc = argc - optind;
	return -1;	/* go on */
}

static void record__print_summary(const struct record *rec)
{
	if (!rec->quiet) {
		fprintf(stderr, "[ perf-defer record: Woken up %llu times to write data ]\n",
			(unsigned long long)rec->wakeups);
		fprintf(stderr, "[ perf-defer record: Captured and wrote %.3f MB %s (%llu samples) ]\n",
			rec->bytes / 1048576.0, rec->output, (unsigned long long)rec->samples);
	}
	if (rec->stats) {
		printf("path: %s\n", rec->path == RECORD_PATH_NATIVE ? "native" :
		       rec->path == RECORD_PATH_MODULE ? "module" : "fp");
		printf("samples: %llu\n", (unsigned long long)rec->samples);
		printf("deferred samples: %llu\n", (unsigned long long)rec->deferred);
		printf("deferred records: %llu\n", (unsigned long long)rec->records);
		/* what record.c stitched */
		if (rec->path != RECORD_PATH_FP && !rec->keep_deferred) {
			printf("stitched: %llu\n", (unsigned long long)rec->st.stitched);
			printf("unmatched: %llu\n", (unsigned long long)rec->st.unmatched);
		}
		printf("lost samples: %llu\n", (unsigned long long)rec->lost);
		printf("lost records: %llu\n", (unsigned long long)rec->lost_records);
	}
	if (WIFEXITED(rec->status) && WEXITSTATUS(rec->status) && !rec->quiet)
		fprintf(stderr, "[ perf-defer record: the workload exited with %d ]\n",
			WEXITSTATUS(rec->status));
}

int cmd_record(int argc, char **argv)
{
	struct record rec = { 0 };
	int ret;

	ret = record__parse_options(&rec, argc, argv);
	if (ret >= 0)
		return ret;
	rec.orig_argc = argc;
	rec.orig_argv = argv;
	if (record__run(&rec))
		return EXIT_FAIL;
	record__print_summary(&rec);
	return EXIT_OK;
}
