// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-defer status - which deferred-callchain path this kernel offers
 *
 * Output is one "key: value" line per fact, for people and for scripts;
 * advice on what to do goes to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_defer.h>

#include "../include/perf_defer_tested.h"
#include "builtin.h"
#include "evsel.h"
#include "sysfs.h"
#include "util.h"

#define MODULE_SYSFS_DIR	"/sys/module/perf_defer"
#define PARANOID_PATH		"/proc/sys/kernel/perf_event_paranoid"
#define SIG_ENFORCE_PATH	"/sys/module/module/parameters/sig_enforce"
#define LOCKDOWN_PATH		"/sys/kernel/security/lockdown"
#define SECURE_BOOT_PATH	\
	"/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define DKMS_MOK		"/var/lib/dkms/mok.pub"

static const char status_usage[] =
	"usage: perf-defer status [-v]\n"
	"\n"
	"Show which deferred-callchain path this kernel offers: native (Linux >= 6.19),\n"
	"the perf_defer module, or none.  Exits 0 when a path is available, 1 when none.\n"
	"\n"
	"    -v, --verbose    also show the recorder version, perf_event_paranoid and probe details\n"
	"    -h, --help       show this help\n";

/* Is SERIES ("6.18") a word of the list LIST? */
static bool status__listed(const char *list, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = list; (p = strstr(p, series)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

/*
 * The "tested:" line: is the running kernel's series (RELEASE up to its
 * second dot) one the test matrix runs, on the path it takes?
 */
static void status__tested(const struct utsname *uts, bool native)
{
	const char *list = native ? PERF_DEFER_TESTED_NATIVE : PERF_DEFER_TESTED_MODULE;
	const char *release = uts->release, *arch = "";
	size_t n = strspn(release, "0123456789");
	char series[32];

	/* the series are x86-64's kernels, and for the module arm64's */
	if (!native && !strcmp(uts->machine, "aarch64")) {
		list = PERF_DEFER_TESTED_MODULE_ARM64;
		arch = "arm64 ";
	} else if (strcmp(uts->machine, "x86_64")) {
		printf("tested: no (the tests run %s on x86-64%s only, not on %s)\n",
		       native ? "native deferral" : "the module", native ? "" : " and arm64",
		       uts->machine);
		return;
	}

	if (release[n] == '.')
		n += 1 + strspn(release + n + 1, "0123456789");
	snprintf(series, sizeof(series), "%.*s", (int)n, release);
	bool yes = status__listed(list, series);

	printf("tested: %s (the tests run %s on %s%s%s%s)\n", yes ? "yes" : "no",
	       native ? "native deferral" : "the module", arch, list, yes ? "" : ", not ",
	       yes ? "" : series);
}

/* Print the "native:" line; true when the kernel defers user callchains. */
static bool status__native(bool verbose)
{
	int base = evsel__probe(false);
	int defer = base ? 0 : evsel__probe_native();
	int err = base ? base : defer;

	if (verbose && base)
		printf("native-probe: cpu-clock sampling event: %s\n", strerror(base));
	else if (verbose)
		printf("native-probe: cpu-clock sampling event opens; with defer_callchain: %s\n",
		       !defer ? "opens, samples deferred" :
		       defer == EOPNOTSUPP ? "opens, user frames inline" : strerror(defer));
	if (!err) {
		puts("native: yes");
		return true;
	}
	if (err == EOPNOTSUPP) {
		puts("native: no (the kernel takes defer_callchain but walks the user stack in the interrupt: built without CONFIG_UNWIND_USER)");
		return false;
	}
	/* Kernels without the field reject the bit in __reserved_1. */
	if (!base && (err == EINVAL || err == E2BIG)) {
		puts("native: no");
		return false;
	}
	printf("native: unknown (perf_event_open: %s%s)\n", strerror(err),
	       err == EACCES || err == EPERM ? "; check kernel.perf_event_paranoid" : "");
	return false;
}

/* UEFI Secure Boot is on: its efivar, 4 bytes of attributes, then 1. */
static bool status__secure_boot(void)
{
	unsigned char v[5];
	ssize_t n = -1;
	int fd;

	fd = open(SECURE_BOOT_PATH, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, v, sizeof(v));
		close(fd);
	}
	return n == sizeof(v) && v[4] == 1;
}

/*
 * Why this kernel loads only signed modules, or NULL: module.sig_enforce,
 * lockdown (which Debian's kernels turn on under UEFI Secure Boot), or
 * Secure Boot itself.
 */
static const char *status__sig_required(void)
{
	const char *why = NULL;
	char *s;

	s = sysfs__read_str("%s", SIG_ENFORCE_PATH);
	if (s && s[0] == 'Y')
		why = "module.sig_enforce=1";
	free(s);
	if (why)
		return why;
	s = sysfs__read_str("%s", LOCKDOWN_PATH);
	if (s && strchr(s, '[') && !strstr(s, "[none]"))
		why = strstr(s, "[confidentiality]") ? "lockdown=confidentiality" :
		      "lockdown=integrity";
	free(s);
	if (why)
		return why;
	return status__secure_boot() ? "UEFI Secure Boot" : NULL;
}

/* The "signatures:" line; when the module is missing, what to do. */
static void status__signatures(bool module)
{
	const char *why = status__sig_required();

	printf("signatures: %s%s%s\n", why ? "required (" : "not required", why ? why : "",
	       why ? ")" : "");
	if (!why || module)
		return;
	pr_err("this kernel loads only signed modules (%s): a perf_defer.ko built with 'make' is unsigned and refused ('Key was rejected by service'). DKMS signs the module it builds with its key, %s: enroll that key with 'mokutil --import %s', reboot and confirm the enrolment, then 'modprobe perf_defer' (see perf_defer(4))",
	       why, DKMS_MOK, DKMS_MOK);
}

/* Print the "module:" line; true when the module is usable. */
static bool status__module(void)
{
	struct perf_defer_version v = { .size = sizeof(v) };
	struct perf_defer_stats st = { .size = sizeof(st) };
	int st_err = 0;
	bool in_sysfs = !access(MODULE_SYSFS_DIR, F_OK);
	bool absent;
	int fd, err;

	fd = open(PERF_DEFER_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		absent = err == ENOENT || err == ENXIO || err == ENODEV;
		if (absent && !in_sysfs) {
			puts("module: not loaded");
			return false;
		}
		printf("module: loaded, unusable (%s: %s)\n", PERF_DEFER_DEVICE_PATH, strerror(err));
		if (absent)
			pr_err("module perf_defer is loaded but %s does not exist (is devtmpfs mounted?)",
			       PERF_DEFER_DEVICE_PATH);
		else if (err == EACCES || err == EPERM)
			pr_err("cannot open %s: %s (the device is root-only, mode 0600: run as root)",
			       PERF_DEFER_DEVICE_PATH, strerror(err));
		else
			pr_err("cannot open %s: %s", PERF_DEFER_DEVICE_PATH, strerror(err));
		return false;
	}
	err = ioctl(fd, PERF_DEFER_IOC_GET_VERSION, &v) ? errno : 0;
	if (!err && v.major == PERF_DEFER_ABI_MAJOR) {
		unsigned long cmd = PERF_DEFER_IOC_GET_STATS;

		/* an older module knows the struct up to its own ABI's fields */
		if (v.minor < 7) {
			st.size = v.minor < 2 ? PERF_DEFER_STATS_SIZE_VER0 :
				  v.minor < 3 ? offsetof(struct perf_defer_stats, frames_fp) :
				  v.minor < 4 ? offsetof(struct perf_defer_stats, table_cache_hits) :
				  v.minor < 6 ? offsetof(struct perf_defer_stats, in_exec) :
				  offsetof(struct perf_defer_stats, table_rows);
			cmd = _IOC(_IOC_READ | _IOC_WRITE, PERF_DEFER_MAGIC,
				   _IOC_NR(PERF_DEFER_IOC_GET_STATS), st.size);
		}
		st_err = ioctl(fd, cmd, &st) ? errno : 0;
	}
	close(fd);
	if (err) {
		printf("module: loaded, unusable (GET_VERSION: %s)\n", strerror(err));
		pr_err("PERF_DEFER_IOC_GET_VERSION failed: %s; rebuild/reinstall the module",
		       strerror(err));
		return false;
	}
	if (v.major != PERF_DEFER_ABI_MAJOR) {
		printf("module: loaded, ABI %u.%u (unsupported)\n", v.major, v.minor);
		pr_err("module ABI %u.%u is not supported by this recorder (needs major %d); rebuild/reinstall the module",
		       v.major, v.minor, PERF_DEFER_ABI_MAJOR);
		return false;
	}
	printf("module: loaded, ABI %u.%u\n", v.major, v.minor);
	if (st_err) {
		printf("counters: unavailable (%s)\n", strerror(st_err));
		return true;
	}
	printf("counters: requests %llu dedup %llu unwinds %llu records %llu drops %llu pool-empty %llu exit-pending %llu pending %llu",
	       (unsigned long long)st.requests, (unsigned long long)st.dedup,
	       (unsigned long long)st.unwinds, (unsigned long long)st.records,
	       (unsigned long long)st.drops, (unsigned long long)st.pool_empty,
	       (unsigned long long)st.exit_pending, (unsigned long long)st.pending);
	if (st.size > PERF_DEFER_STATS_SIZE_VER0)
		printf(" after-unwind %llu", (unsigned long long)st.after_unwind);
	if (st.size > offsetof(struct perf_defer_stats, in_exec))
		printf(" in-exec %llu", (unsigned long long)st.in_exec);
	printf("\n");
	if (st.size > offsetof(struct perf_defer_stats, frames_fp))
		printf("unwind: frames-fp %llu frames-sframe %llu frames-eh-frame %llu table-objects %llu table-stopped %llu",
		       (unsigned long long)st.frames_fp, (unsigned long long)st.frames_sframe,
		       (unsigned long long)st.frames_eh_frame,
		       (unsigned long long)st.table_objects,
		       (unsigned long long)st.table_stopped);
	if (st.size > offsetof(struct perf_defer_stats, table_cache_hits))
		printf(" table-cache-hits %llu", (unsigned long long)st.table_cache_hits);
	if (st.size > offsetof(struct perf_defer_stats, table_rows))
		printf(" table-rows %llu table-row-hits %llu walk-ns %llu",
		       (unsigned long long)st.table_rows, (unsigned long long)st.table_row_hits,
		       (unsigned long long)st.walk_ns);
	if (st.size > offsetof(struct perf_defer_stats, frames_fp))
		printf("\n");
	return true;
}

static void status__paranoid(void)
{
	char buf[16];
	FILE *f = fopen(PARANOID_PATH, "r");
	bool ok = f && fgets(buf, sizeof(buf), f);

	if (f)
		fclose(f);
	if (ok)
		printf("perf_event_paranoid: %.*s\n", (int)strcspn(buf, "\n"), buf);
	else
		printf("perf_event_paranoid: unknown (cannot read %s)\n", PARANOID_PATH);
}

/*
 * Print the "user-unwind:" line: how the deferred walk on this path finds
 * user frames.
 */
/* The module parameter @name's value, its newline cut, into @buf */
static bool status__param(const char *name, char *buf, int size)
{
	char path[128];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), MODULE_SYSFS_DIR "/parameters/%s", name);
	f = fopen(path, "r");
	ok = f && fgets(buf, size, f);
	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static void status__user_unwind(bool native)
{
	char buf[64];

	if (native) {
		puts("user-unwind: fp (the kernel's deferred walk uses frame pointers only)");
		return;
	}
	if (status__param("user_unwind", buf, sizeof(buf)))
		printf("user-unwind: %s (the module's user_unwind parameter)\n", buf);
	else
		puts("user-unwind: unknown (the module has no user_unwind parameter: ABI < 1.3)");
}

/* How the module hooks perf's sampling path: its hooks parameter */
static void status__hooks(void)
{
	char buf[32];

	if (status__param("hooks", buf, sizeof(buf)))
		printf("hooks: %s (the module's hooks parameter)\n", buf);
	else
		puts("hooks: kprobes (the module has no hooks parameter)");
}

int cmd_status(int argc, char **argv)
{
	static const struct option options[] = {
		{ "verbose",	no_argument,	NULL, 'v' },
		{ "help",	no_argument,	NULL, 'h' },
		{ }
	};
	bool verbose = false, native, module;
	struct utsname uts;
	int c;

	while ((c = getopt_long(argc, argv, "+vh", options, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			fputs(status_usage, stdout);
			return EXIT_OK;
		default:	/* getopt has said what is wrong */
			fputs(status_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'", argv[optind]);
		fputs(status_usage, stderr);
		return EXIT_USAGE;
	}

	uname(&uts);
	printf("kernel: %s\n", uts.release);
	if (verbose) {
		printf("recorder: %s, ABI %d.%d\n", PERF_DEFER_VERSION,
		       PERF_DEFER_ABI_MAJOR, PERF_DEFER_ABI_MINOR);
		status__paranoid();
	}
	native = status__native(verbose);
	module = status__module();
	if (!native)
		status__signatures(module);
	printf("path: %s\n", native ? "native" : module ? "module" : "none");
	status__tested(&uts, native);
	if (native || module) {
		if (!native)
			status__hooks();
		status__user_unwind(native);
		return EXIT_OK;
	}
	pr_err("neither native deferred callchains (Linux >= 6.19) nor the perf_defer module are available: load it with 'modprobe perf_defer' (or 'insmod module/perf_defer.ko'), or install it with 'dkms install'; 'perf-defer record' would fall back to --call-graph fp");
	return EXIT_FAIL;
}
