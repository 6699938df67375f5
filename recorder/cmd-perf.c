// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-defer perf record - record through the perf that is installed
 *
 * perf-defer opens a session of the perf_defer module and runs 'perf
 * record' with every option given, with the session inherited and
 * libperf-defer-preload.so preloaded: perf opens its events through
 * glibc's syscall(), and the library attaches each one that samples user
 * callchains by frame pointers to the session before perf enables it.
 * While perf runs, perf-defer drains the session's rings (the
 * CALLCHAIN_DEFERRED records) into an unlinked file next to perf's
 * output.  When perf is done, the records are merged into perf's file in
 * time order and stitched (stitch__reader_extra()); perf's header,
 * features and build-ids stay as perf wrote them.
 *
 * perf's options are perf's; perf-defer reads only those that decide
 * where the file goes and in which form (-o, -z, --switch-output).  With
 * --switch-output, perf writes OUTPUT.<timestamp> files, each whole: each
 * one that the run wrote gets every record, and the stitcher takes those
 * whose sample is in that file (the others match no sample there and are
 * left out).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "builtin.h"
#include "perf-data.h"
#include "preload/preload.h"
#include "session.h"
#include "stitch.h"
#include "util.h"

static const char perf_usage[] =
	"usage: perf-defer perf [<options>] record [<perf record options>] [-- <command> [<args>]]\n"
	"\n"
	"Run the installed 'perf record' with all of its options, its fp callchains\n"
	"deferred through the perf_defer module, and write perf's file stitched: any\n"
	"perf reads it (or in the deferred form).  perf's events that sample user callchains by frame pointers\n"
	"(-g, --call-graph fp, and perf >= 6.19's fp,defer) get the module's unwind in\n"
	"task context; others (dwarf, lbr) stay perf's own.\n"
	"\n"
	"    --perf <path>         the perf to run (default: perf, from PATH)\n"
	"    --mmap-pages <n>      pages of each CPU's ring of the module's session\n"
	"                          (default 128)\n"
	"    --user-unwind <list>  how the module walks user stacks: sframe, eh_frame, fp,\n"
	"                          in order (default: the module's user_unwind parameter)\n"
	"    --preload <file>      the library to preload (default: " PRELOAD_LIB "\n"
	"                          from the recorder's lib directory)\n"
	"    --keep-deferred       merge the deferred callchains into perf's file in the\n"
	"                          upstream deferred form (perf >= 6.19 reads it;\n"
	"                          'perf-defer stitch' turns it into the stitched form)\n"
	"    --stats               print the stitcher's counters and the bytes read\n"
	"                          from the module's rings\n"
	"    -q, --quiet           no summary line\n"
	"    -h, --help            show this help\n"
	"\n"
	"perf's -o/--output names the file (default perf.data); with --switch-output,\n"
	"each OUTPUT.<timestamp> file perf writes is stitched (not with --keep-deferred).\n"
	"perf record's -z and output to a pipe are refused: the file is rewritten whole.\n";

/* perf record's options that take a value in the next argument */
static const char *const perf_value_opts[] = {
	"-e", "--event", "-o", "--output", "-F", "--freq", "-c", "--count", "-p", "--pid",
	"-t", "--tid", "-m", "--mmap-pages", "-C", "--cpu", "-G", "--cgroup", "--call-graph",
	"-u", "--uid", "--user-regs", "--filter", "-D", "--delay", "-k", "--clockid", "-r",
	"--realtime", "--affinity", "--max-size", "--proc-map-timeout", "-j", "--branch-filter",
	"--exclude-perf", "--control", "-N", "--threads",
};

struct perf_cmd {
	const char	*perf;
	char		*preload;
	const char	*output;		/* perf's -o */
	unsigned int	pages;
	__u8		unwind[8];
	bool		stats, quiet, keep;
	bool		switching;		/* perf's --switch-output */
};

static bool takes_value(const char *arg)
{
	for (size_t i = 0; i < ARRAY_SIZE(perf_value_opts); i++)
		if (!strcmp(arg, perf_value_opts[i]))
			return true;
	return false;
}

/*
 * perf record's arguments argv[0..argc): where the file goes, and the
 * options that the rewrite cannot follow.  Options end at "--" or at the
 * first word that is neither an option nor an option's value.
 */
static int perf_cmd__scan(struct perf_cmd *pc, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (!strcmp(a, "--") || a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "-o") || !strcmp(a, "--output"))
			v = i + 1 < argc ? argv[i + 1] : "";
		else if (!strncmp(a, "--output=", 9))
			v = a + 9;
		else if (!strncmp(a, "-o", 2))
			v = a + 2;
		if (v) {
			if (!*v || !strcmp(v, "-")) {
				pr_err("perf's output must be a file: the records are merged into it");
				return -1;
			}
			pc->output = v;
		}
		if (!strncmp(a, "-z", 2) || !strncmp(a, "--compression-level", 19)) {
			pr_err("perf record %s is not supported here: the file is rewritten whole when perf is done",
			       a);
			return -1;
		}
		if (!strncmp(a, "--switch-output", 15)) {
			if (pc->keep) {
				pr_err("perf record %s with --keep-deferred is not supported: the records cannot be told apart by file without stitching",
				       a);
				return -1;
			}
			pc->switching = true;
		}
		if (takes_value(a))
			i++;
	}
	return 0;
}

/* The library next to the recorder: BINDIR/../lib/perf-defer/, else BINDIR/. */
static char *perf_cmd__find_preload(void)
{
	char exe[PATH_MAX], *slash, *path;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (asprintf(&path, "%s/../lib/perf-defer/%s", exe, PRELOAD_LIB) < 0)
		return NULL;
	if (!access(path, R_OK))
		return path;
	free(path);
	if (asprintf(&path, "%s/%s", exe, PRELOAD_LIB) < 0)
		return NULL;
	if (!access(path, R_OK))
		return path;
	free(path);
	return NULL;
}

static volatile sig_atomic_t perf_pid;

/* SIGINT and SIGTERM go to perf, which stops and writes its file; we wait for it. */
static void perf_cmd__sig(int sig)
{
	if (perf_pid > 0)
		kill(perf_pid, sig);
}

/* The child: perf record, with the session inherited and the library preloaded. */
static void perf_cmd__exec(const struct perf_cmd *pc, int fd, int argc, char **argv)
{
	const char *old = getenv("LD_PRELOAD");
	char num[16], *ld, **args = calloc(argc + 3, sizeof(*args));

	snprintf(num, sizeof(num), "%d", fd);
	if (!args || asprintf(&ld, "%s%s%s", pc->preload, old && *old ? ":" : "", old ? old : "") < 0 ||
	    fcntl(fd, F_SETFD, 0) || setenv(PRELOAD_ENV_FD, num, 1) ||
	    setenv(PRELOAD_ENV_LD_PRELOAD, old ? old : "", 1) || setenv("LD_PRELOAD", ld, 1)) {
		pr_err("cannot set up perf's environment: %s", strerror(errno));
		_exit(127);
	}
	args[0] = (char *)pc->perf;
	args[1] = "record";
	memcpy(args + 2, argv, argc * sizeof(*args));
	execvp(pc->perf, args);
	pr_err("cannot run %s: %s%s", pc->perf, strerror(errno),
	       errno == ENOENT ? " (install linux-perf, or give --perf)" : "");
	_exit(127);
}

/* Append the records in [tail, head) of each ring of s to fd. */
static int perf_cmd__drain(struct session *s, int fd, __u64 *bytes)
{
	for (unsigned int i = 0; i < s->nr_rings; i++) {
		struct perf_defer_mmap_page *pg = s->rings[i];
		const char *data = (const char *)pg + pg->data_offset;
		__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		__u64 tail = pg->data_tail, size = pg->data_size;

		while (tail < head) {
			__u64 off = tail & (size - 1);
			size_t len = head - tail < size - off ? head - tail : size - off;
			ssize_t n = write(fd, data + off, len);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return -1;
			tail += n;
			*bytes += n;
		}
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	}
	return 0;
}

/*
 * Run perf until it exits, draining the session into fd when the module
 * says a ring is a quarter full (ABI 1.5), and every 100 ms anyway.
 * perf's exit status, or -1.
 */
static int perf_cmd__run(const struct perf_cmd *pc, struct session *s, int fd, __u64 *bytes,
			 int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = perf_cmd__sig, .sa_flags = SA_RESTART };
	int status, drained = 0;
	pid_t pid = fork();

	if (pid < 0) {
		pr_err("fork: %s", strerror(errno));
		return -1;
	}
	if (!pid)
		perf_cmd__exec(pc, s->fd, argc, argv);
	perf_pid = pid;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* --switch-output's signal, sent to perf-defer */
	if (pc->switching)
		sigaction(SIGUSR2, &sa, NULL);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (!drained)
			drained = perf_cmd__drain(s, fd, bytes);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			pr_err("waitpid: %s", strerror(errno));
			return -1;
		}
		/*
		 * A ring of the module's fills at the sampling rate, whatever
		 * perf does: at 20 kHz 100 ms alone would overflow it.
		 */
		if (s->wakeup && !drained) {
			struct pollfd p = { .fd = s->fd, .events = POLLIN };

			poll(&p, 1, 100);
		} else {
			usleep(100000);
		}
	}
	perf_pid = 0;
	/* the unwinds of perf's last entries ran before it exited */
	if (!drained)
		drained = perf_cmd__drain(s, fd, bytes);
	if (drained) {
		pr_err("cannot keep the deferred records: %s", strerror(errno));
		return -1;
	}
	/*
	 * perf record ended by SIGINT or SIGTERM writes its file, then dies
	 * of the signal (record__sig_exit()): a normal end
	 */
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGINT && WTERMSIG(status) != SIGTERM) {
		pr_err("%s was killed by signal %d", pc->perf, WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

/*
 * One file of perf's, the records of map (bytes) merged in and stitched,
 * in place (through FILE.perf-defer); its counters added to *sum.
 */
static int perf_cmd__merge_file(const struct perf_cmd *pc, const char *file, const void *map,
				__u64 bytes, struct stitch_stats *sum)
{
	struct stitch_stats st = { 0 };
	struct perf_data_reader *r;
	struct perf_data_writer *w;
	char *tmp;
	int err;

	if (asprintf(&tmp, "%s.perf-defer", file) < 0)
		tmp = NULL;
	r = tmp ? perf_data_reader__open(file) : NULL;
	w = r ? perf_data_writer__open(tmp) : NULL;
	err = w ? stitch__reader_extra(r, map, bytes, w, &st,
				       (pc->quiet ? STITCH_QUIET : 0) |
				       (pc->keep ? STITCH_KEEP_DEFERRED : 0)) : -1;
	if (err)
		pr_err("%s; %s is left as perf wrote it", tmp ? error__msg() : strerror(ENOMEM), file);
	perf_data_reader__close(r);
	if (!err && rename(tmp, file)) {
		pr_err("cannot rename %s to %s: %s", tmp, file, strerror(errno));
		unlink(tmp);
		err = -1;
	}
	free(tmp);
	sum->samples += st.samples;
	sum->deferred += st.deferred;
	sum->stitched += st.stitched;
	sum->unmatched += st.unmatched;
	/* every file reads every record: count them once */
	if (st.records > sum->records)
		sum->records = st.records;
	if (st.lost_records > sum->lost_records)
		sum->lost_records = st.lost_records;
	return err ? -1 : 0;
}

/*
 * With --switch-output, the files perf wrote: each OUTPUT.<digits> written
 * since the run started (since), in name order (their time order).
 */
static int perf_cmd__switched(const struct perf_cmd *pc, time_t since, glob_t *g)
{
	char *pat;
	size_t n = 0;
	int ret;

	if (asprintf(&pat, "%s.[0-9]*", pc->output) < 0)
		return -1;
	ret = glob(pat, 0, NULL, g);
	free(pat);
	if (ret == GLOB_NOMATCH)
		return 0;
	if (ret)
		return -1;
	for (size_t i = 0; i < g->gl_pathc; i++) {
		const char *p = g->gl_pathv[i], *d = p + strlen(pc->output) + 1;
		struct stat sb;

		if (strspn(d, "0123456789") == strlen(d) && !stat(p, &sb) && sb.st_mtime >= since)
			g->gl_pathv[n++] = g->gl_pathv[i];
		else
			free(g->gl_pathv[i]);
	}
	g->gl_pathc = n;
	return 0;
}

/* perf's files, the records of fd (bytes) merged in and stitched, in place. */
static int perf_cmd__merge(const struct perf_cmd *pc, int fd, __u64 bytes, time_t since)
{
	struct stitch_stats st = { 0 };
	char *one[] = { (char *)pc->output };
	char **files = one;
	size_t nr = 1;
	glob_t g = { 0 };
	void *map = NULL;
	int err = 0;

	if (bytes) {
		map = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			pr_err("cannot map the deferred records: %s", strerror(errno));
			return -1;
		}
	}
	if (pc->switching) {
		if (perf_cmd__switched(pc, since, &g)) {
			pr_err("cannot list perf's files %s.*: %s", pc->output, strerror(errno));
			err = -1;
		} else if (!g.gl_pathc) {
			pr_err("perf wrote no %s.<timestamp> file", pc->output);
			err = -1;
		}
		files = g.gl_pathv;
		nr = g.gl_pathc;
	}
	for (size_t i = 0; !err && i < nr; i++)
		err = perf_cmd__merge_file(pc, files[i], map, bytes, &st);
	if (map)
		munmap(map, bytes);
	if (pc->switching)
		globfree(&g);
	if (err)
		return -1;
	if (pc->stats)
		printf("samples: %" PRIu64 "\ndeferred: %" PRIu64 "\nstitched: %" PRIu64
		       "\nunmatched: %" PRIu64 "\ndeferred-records: %" PRIu64
		       "\ndeferred-bytes: %" PRIu64 "\nlost-records: %" PRIu64 "\nfiles: %zu\n",
		       (uint64_t)st.samples, (uint64_t)st.deferred, (uint64_t)st.stitched,
		       (uint64_t)st.unmatched, (uint64_t)st.records, (uint64_t)bytes,
		       (uint64_t)st.lost_records, nr);
	if (st.lost_records)
		pr_warn("%" PRIu64 " deferred callchains were lost (module ring full): raise --mmap-pages",
			(uint64_t)st.lost_records);
	if (!(pc->keep ? st.records : st.deferred) && !pc->quiet)
		pr_warn("no sample was deferred: no event of perf samples fp callchains (-g), or %s did not open its events through glibc's syscall()",
			pc->perf);
	if (!pc->quiet) {
		if (pc->keep)
			fprintf(stderr, "[ perf-defer: %" PRIu64 " deferred callchains merged among %" PRIu64
				" samples; %s rewritten in the deferred form ]\n", (uint64_t)st.records,
				(uint64_t)st.samples, pc->output);
		else if (pc->switching)
			fprintf(stderr, "[ perf-defer: %" PRIu64 " of %" PRIu64 " samples deferred, %" PRIu64
				" stitched; %zu files %s.<timestamp> rewritten ]\n", (uint64_t)st.deferred,
				(uint64_t)st.samples, (uint64_t)st.stitched, nr, pc->output);
		else
			fprintf(stderr, "[ perf-defer: %" PRIu64 " of %" PRIu64 " samples deferred, %" PRIu64
				" stitched; %s rewritten ]\n", (uint64_t)st.deferred, (uint64_t)st.samples,
				(uint64_t)st.stitched, pc->output);
	}
	return 0;
}

int cmd_perf(int argc, char **argv)
{
	enum { OPT_PERF = 256, OPT_PAGES, OPT_UNWIND, OPT_PRELOAD, OPT_STATS, OPT_KEEP };
	static const struct option options[] = {
		{ "perf",	 required_argument, NULL, OPT_PERF },
		{ "mmap-pages",	 required_argument, NULL, OPT_PAGES },
		{ "user-unwind", required_argument, NULL, OPT_UNWIND },
		{ "preload",	 required_argument, NULL, OPT_PRELOAD },
		{ "stats",	 no_argument,	    NULL, OPT_STATS },
		{ "keep-deferred", no_argument,	    NULL, OPT_KEEP },
		{ "quiet",	 no_argument,	    NULL, 'q' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ }
	};
	struct perf_cmd pc = { .perf = "perf", .output = "perf.data", .pages = 128 };
	struct session s = { .fd = -1 };
	char *tmpl, *end;
	time_t since = time(NULL);
	__u64 bytes = 0;
	int c, fd, ret;

	while ((c = getopt_long(argc, argv, "+qh", options, NULL)) != -1) {
		switch (c) {
		case OPT_PERF:
			pc.perf = optarg;
			break;
		case OPT_PAGES:
			errno = 0;
			pc.pages = strtoul(optarg, &end, 0);
			if (errno || *end || !pc.pages || (pc.pages & (pc.pages - 1))) {
				pr_err("--mmap-pages: '%s' is not a power of two", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_UNWIND:
			if (session__parse_unwind(optarg, pc.unwind))
				return EXIT_USAGE;
			break;
		case OPT_PRELOAD:
			pc.preload = optarg;
			break;
		case OPT_STATS:
			pc.stats = true;
			break;
		case OPT_KEEP:
			pc.keep = true;
			break;
		case 'q':
			pc.quiet = true;
			break;
		case 'h':
			fputs(perf_usage, stdout);
			return EXIT_OK;
		default:
			fputs(perf_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc || strcmp(argv[optind], "record")) {
		if (optind < argc)
			pr_err("perf %s is not supported: only perf record is", argv[optind]);
		else
			pr_err("no perf command: perf-defer perf record ...");
		fputs(perf_usage, stderr);
		return EXIT_USAGE;
	}
	optind++;
	if (perf_cmd__scan(&pc, argc - optind, argv + optind))
		return EXIT_USAGE;
	if (!pc.preload)
		pc.preload = perf_cmd__find_preload();
	if (!pc.preload || access(pc.preload, R_OK)) {
		pr_err("cannot find %s%s%s: reinstall perf-defer, or give --preload", PRELOAD_LIB,
		       pc.preload ? " at " : "", pc.preload ? pc.preload : "");
		return EXIT_FAIL;
	}
	ret = session__open(&s, pc.pages, 0, pc.unwind);
	if (ret) {
		if (ret != -EPROTO)
			pr_err("cannot open %s: %s (load the module: modprobe perf_defer; on Linux >= 6.19 run perf record --call-graph fp,defer instead)",
			       PERF_DEFER_DEVICE_PATH, strerror(-ret));
		return EXIT_FAIL;
	}
	if (session__map_rings(&s)) {
		session__close(&s);
		return EXIT_FAIL;
	}
	/* the records wait in an unlinked file beside perf's output */
	fd = -1;
	if (asprintf(&tmpl, "%s.records.XXXXXX", pc.output) >= 0) {
		fd = mkostemp(tmpl, O_CLOEXEC);
		if (fd < 0)
			pr_err("cannot create %s: %s", tmpl, strerror(errno));
		else
			unlink(tmpl);
		free(tmpl);
	}
	if (fd < 0) {
		session__close(&s);
		return EXIT_FAIL;
	}
	ret = perf_cmd__run(&pc, &s, fd, &bytes, argc - optind, argv + optind);
	session__close(&s);
	if (ret) {
		if (ret > 0)
			pr_err("%s record failed (exit %d): nothing merged", pc.perf, ret);
		close(fd);
		return ret > 0 ? ret : EXIT_FAIL;
	}
	ret = perf_cmd__merge(&pc, fd, bytes, since);
	close(fd);
	return ret ? EXIT_FAIL : EXIT_OK;
}
