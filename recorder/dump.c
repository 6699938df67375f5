// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every record of a perf.data file, printed in the manner of 'perf report
 * -D': the file offset, size and type of each record, its raw bytes, then
 * a line that says what it holds; for samples and
 * PERF_RECORD_CALLCHAIN_DEFERRED the callchain.  Records come in file
 * order (perf report -D shows kernel records in time order).  The end is
 * the count of records of each type.  See dump.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dump.h"
#include "perf-data.h"
#include "sample.h"
#include "util.h"

#define NR_TYPES	PD_RECORD_HEADER_MAX_KNOWN

struct dump {
	FILE *out;
	const struct perf_data_reader *r;
	__u64 combined_type;	/* OR of every attr's sample_type */
	bool sample_id_all;	/* of the first attr */
	__u64 nr_events[NR_TYPES + 1];	/* [0]: total, [NR_TYPES]: unknown */
	__u64 *nr_samples;	/* per attr */
	__u64 *nr_mode;		/* per attr and CPU mode (misc & 7), DUMP_BY_MODE */
	bool stats_only;	/* count, print nothing per record */
};

#define NR_MODES	(PERF_RECORD_MISC_CPUMODE_MASK + 1)

/* the CPU modes of a sample (misc & PERF_RECORD_MISC_CPUMODE_MASK), by name */
static const char * const cpumode_name[NR_MODES] = {
	[PERF_RECORD_MISC_CPUMODE_UNKNOWN]	= "unknown-mode",
	[PERF_RECORD_MISC_KERNEL]		= "kernel",
	[PERF_RECORD_MISC_USER]			= "user",
	[PERF_RECORD_MISC_HYPERVISOR]		= "hypervisor",
	[PERF_RECORD_MISC_GUEST_KERNEL]		= "guest-kernel",
	[PERF_RECORD_MISC_GUEST_USER]		= "guest-user",
	[6]					= "mode-6",
	[7]					= "mode-7",
};

static void dump__count_sample(struct dump *d, const struct evsel *a,
			       const struct perf_event_header *ev)
{
	d->nr_samples[a->idx]++;
	if (d->nr_mode)
		d->nr_mode[a->idx * NR_MODES + (ev->misc & PERF_RECORD_MISC_CPUMODE_MASK)]++;
}

/* perf's trace_event(): 16 bytes a line, hex then characters. */
static void dump__raw(struct dump *d, const unsigned char *p, size_t len)
{
	FILE *f = d->out;

	fprintf(f, ".\n. ... raw event: size %zu bytes\n", len);
	for (size_t i = 0; i < len; i += 16) {
		size_t n = len - i < 16 ? len - i : 16;

		fprintf(f, ".  %04zx: ", i);
		for (size_t j = 0; j < 16; j++) {
			if (j < n)
				fprintf(f, " %02x", p[i + j]);
			else
				fputs("   ", f);
		}
		fputs("  ", f);
		for (size_t j = 0; j < 16; j++) {
			if (j < n)
				fputc(isprint(p[i + j]) && isascii(p[i + j]) ? p[i + j] : '.', f);
			else
				fputc(' ', f);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
}

/* A string field from off to the end of the record, NUL-terminated or cut. */
static int field_len(const struct perf_event_header *ev, size_t off)
{
	if (off >= ev->size)
		return 0;
	return (int)strnlen((const char *)ev + off, ev->size - off);
}

static void dump__callchain(struct dump *d, const struct perf_sample *s)
{
	fprintf(d->out, "... FP chain: nr:%" PRIu64 "\n", (uint64_t)s->nr);
	for (__u64 i = 0; i < s->nr; i++)
		fprintf(d->out, "..... %2" PRIu64 ": %016" PRIx64 "\n", (uint64_t)i,
			(uint64_t)rd64(&s->callchain[i]));
}

static void dump__sample(struct dump *d, const struct evsel *a,
			 const struct perf_event_header *ev, const struct perf_sample *s)
{
	__u64 type = a->attr.sample_type, fmt = a->attr.read_format;
	FILE *f = d->out;

	fprintf(f, "(IP, 0x%x): %d/%d: %#" PRIx64 " period: %" PRIu64 " addr: %#" PRIx64 "\n",
		ev->misc, (int)s->pid, (int)s->tid, (uint64_t)s->ip, (uint64_t)s->period,
		(uint64_t)s->addr);
	if (type & PERF_SAMPLE_CALLCHAIN)
		dump__callchain(d, s);
	if (type & PERF_SAMPLE_BRANCH_STACK)
		fprintf(f, "... branch stack: nr:%" PRIu64 "\n", (uint64_t)s->branch_nr);
	if ((type & PERF_SAMPLE_REGS_USER) && s->user_regs_abi)
		fprintf(f, "... user regs: mask %#" PRIx64 " ABI %s\n",
			(uint64_t)a->attr.sample_regs_user,
			s->user_regs_abi == 1 ? "32-bit" : s->user_regs_abi == 2 ? "64-bit" : "unknown");
	if ((type & PERF_SAMPLE_REGS_INTR) && s->intr_regs_abi)
		fprintf(f, "... intr regs: mask %#" PRIx64 " ABI %s\n",
			(uint64_t)a->attr.sample_regs_intr,
			s->intr_regs_abi == 1 ? "32-bit" : s->intr_regs_abi == 2 ? "64-bit" : "unknown");
	if (type & PERF_SAMPLE_STACK_USER)
		fprintf(f, "... ustack: size %" PRIu64 "\n", (uint64_t)s->user_stack_dyn_size);
	if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		fprintf(f, "... weight: %" PRIu64 "\n", (uint64_t)s->weight);
	if (type & PERF_SAMPLE_DATA_SRC)
		fprintf(f, " . data_src: 0x%" PRIx64 "\n", (uint64_t)s->data_src);
	if (type & PERF_SAMPLE_PHYS_ADDR)
		fprintf(f, " .. phys_addr: 0x%" PRIx64 "\n", (uint64_t)s->phys_addr);
	if (type & PERF_SAMPLE_TRANSACTION)
		fprintf(f, "... transaction: %" PRIx64 "\n", (uint64_t)s->transaction);
	if (type & PERF_SAMPLE_READ) {
		fputs("... sample_read:\n", f);
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			fprintf(f, "...... time enabled %016" PRIx64 "\n", (uint64_t)s->time_enabled);
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			fprintf(f, "...... time running %016" PRIx64 "\n", (uint64_t)s->time_running);
		if (fmt & PERF_FORMAT_GROUP) {
			const unsigned char *v = (const unsigned char *)ev + s->read_values_offset;
			size_t per = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);

			fprintf(f, ".... group nr %" PRIu64 "\n", (uint64_t)s->read_nr);
			for (__u64 i = 0; i < s->read_nr; i++, v += per * 8) {
				fprintf(f, "..... id %016" PRIx64 ", value %016" PRIx64,
					(uint64_t)((fmt & PERF_FORMAT_ID) ? rd64(v + 8) : 0),
					(uint64_t)rd64(v));
				if (fmt & PERF_FORMAT_LOST)
					fprintf(f, ", lost %" PRIu64,
						(uint64_t)rd64(v + 8 * (per - 1)));
				fputc('\n', f);
			}
		} else {
			fprintf(f, "..... id %016" PRIx64 ", value %016" PRIx64,
				(uint64_t)s->read_id, (uint64_t)s->read_value);
			if (fmt & PERF_FORMAT_LOST)
				fprintf(f, ", lost %" PRIu64, (uint64_t)s->read_lost);
			fputc('\n', f);
		}
	}
}

/* What follows "PERF_RECORD_<NAME>" for the other record types. */
static void dump__body(struct dump *d, const struct perf_event_header *ev)
{
	const unsigned char *p = (const unsigned char *)ev;
	FILE *f = d->out;

	switch (ev->type) {
	case PERF_RECORD_MMAP:
		fprintf(f, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %.*s\n",
			(int)rd32(p + 8), (int)rd32(p + 12), (uint64_t)rd64(p + 16),
			(uint64_t)rd64(p + 24), (uint64_t)rd64(p + 32),
			(ev->misc & PERF_RECORD_MISC_MMAP_DATA) ? 'r' : 'x',
			field_len(ev, 40), (const char *)p + 40);
		break;
	case PERF_RECORD_MMAP2: {
		__u32 prot = rd32(p + 64), flags = rd32(p + 68);
		char bid[2 * PD_BUILD_ID_SIZE + 1], mid[96];

		if (ev->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			size_t n = p[40] > PD_BUILD_ID_SIZE ? PD_BUILD_ID_SIZE : p[40];

			snprintf(mid, sizeof(mid), "<%s>", build_id__sprintf(p + 44, n, bid));
		} else {
			snprintf(mid, sizeof(mid), "%02x:%02x %" PRIu64 " %" PRIu64,
				 rd32(p + 40), rd32(p + 44), (uint64_t)rd64(p + 48),
				 (uint64_t)rd64(p + 56));
		}
		fprintf(f, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 " %s]: %c%c%c%c %.*s\n",
			(int)rd32(p + 8), (int)rd32(p + 12), (uint64_t)rd64(p + 16),
			(uint64_t)rd64(p + 24), (uint64_t)rd64(p + 32), mid,
			(prot & PROT_READ) ? 'r' : '-', (prot & PROT_WRITE) ? 'w' : '-',
			(prot & PROT_EXEC) ? 'x' : '-', (flags & MAP_SHARED) ? 's' : 'p',
			field_len(ev, 72), (const char *)p + 72);
		break;
	}
	case PERF_RECORD_COMM:
		fprintf(f, "%s: %.*s:%d/%d\n", (ev->misc & PERF_RECORD_MISC_COMM_EXEC) ? " exec" : "",
			field_len(ev, 16), (const char *)p + 16, (int)rd32(p + 8), (int)rd32(p + 12));
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		fprintf(f, "(%d:%d):(%d:%d)\n", (int)rd32(p + 8), (int)rd32(p + 16),
			(int)rd32(p + 12), (int)rd32(p + 20));
		break;
	case PERF_RECORD_LOST:
		fprintf(f, ": id:%" PRIu64 ": lost:%" PRIu64 "\n", (uint64_t)rd64(p + 8),
			(uint64_t)rd64(p + 16));
		break;
	case PERF_RECORD_LOST_SAMPLES:
		fprintf(f, ": lost:%" PRIu64 "\n", (uint64_t)rd64(p + 8));
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		fprintf(f, ": time %" PRIu64 " id %" PRIu64 " stream_id %" PRIu64 "\n",
			(uint64_t)rd64(p + 8), (uint64_t)rd64(p + 16), (uint64_t)rd64(p + 24));
		break;
	case PERF_RECORD_READ:
		fprintf(f, ": %d %d %" PRIu64 "\n", (int)rd32(p + 8), (int)rd32(p + 12),
			(uint64_t)rd64(p + 16));
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		bool out = ev->misc & PERF_RECORD_MISC_SWITCH_OUT;
		const char *in_out = !out ? "IN         " :
			!(ev->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? "OUT        " :
			"OUT preempt";

		if (ev->type == PERF_RECORD_SWITCH)
			fprintf(f, " %s\n", in_out);
		else
			fprintf(f, " %s  %s pid/tid: %5d/%-5d\n", in_out, out ? "next" : "prev",
				(int)rd32(p + 8), (int)rd32(p + 12));
		break;
	}
	case PERF_RECORD_KSYMBOL:
		fprintf(f, " addr %" PRIx64 " len %u type %u flags 0x%x name %.*s\n",
			(uint64_t)rd64(p + 8), rd32(p + 16), p[20] | p[21] << 8,
			p[22] | p[23] << 8, field_len(ev, 24), (const char *)p + 24);
		break;
	case PD_RECORD_FINISHED_ROUND:
		fputc('\n', f);
		break;
	case PD_RECORD_ID_INDEX: {
		/* { nr, { id, idx, cpu, tid }[nr] } */
		__u64 nr = rd64(p + 8), max = (ev->size - 16u) / 32;

		fprintf(f, " nr: %" PRIu64 "\n", (uint64_t)nr);
		for (__u64 i = 0; i < nr && i < max; i++) {
			const unsigned char *e = p + 16 + i * 32;

			fprintf(f, " ... id: %" PRIu64 "  idx: %" PRIu64 "  cpu: %" PRId64 "  tid: %" PRId64 "\n",
				(uint64_t)rd64(e), (uint64_t)rd64(e + 8), (int64_t)rd64(e + 16),
				(int64_t)rd64(e + 24));
		}
		break;
	}
	default:
		fputs(": unhandled!\n", f);
		break;
	}
}

static int dump__event(struct dump *d, const struct perf_event_header *ev, __u64 off)
{
	const struct evsel *a = NULL;
	struct perf_sample s;
	FILE *f = d->out;

	d->nr_events[0]++;
	d->nr_events[ev->type < NR_TYPES ? ev->type : NR_TYPES]++;
	if (d->stats_only) {
		if (ev->type != PERF_RECORD_SAMPLE)
			return 0;
		a = evlist__find(perf_data_reader__evlist(d->r), ev);
		if (!a)
			return -EINVAL;
		dump__count_sample(d, a, ev);
		return 0;
	}
	fprintf(f, "\n%#" PRIx64 "@%s [%#x]: event: %u\n", (uint64_t)off,
		perf_data_reader__name(d->r), ev->size, ev->type);
	dump__raw(d, (const unsigned char *)ev, ev->size);

	if (ev->type < PD_RECORD_USER_TYPE_START || ev->type == PERF_DEFER_RECORD_USER_DUMP) {
		a = evlist__find(perf_data_reader__evlist(d->r), ev);
		if (!a || perf_sample__parse(&a->attr, ev, &s))
			return -EINVAL;
		if (ev->type != PERF_RECORD_SAMPLE && !d->sample_id_all) {
			fputs("-1 -1 ", f);
		} else {
			if (d->combined_type & PERF_SAMPLE_CPU)
				fprintf(f, "%u ", s.cpu);
			if (d->combined_type & PERF_SAMPLE_TIME)
				fprintf(f, "%" PRIu64 " ", (uint64_t)s.time);
		}
	} else if (!d->sample_id_all) {
		fputs("-1 -1 ", f);
	} else {
		if (d->combined_type & PERF_SAMPLE_CPU)
			fputs("0 ", f);
		if (d->combined_type & PERF_SAMPLE_TIME)
			fputs("0 ", f);
	}
	fprintf(f, "%#" PRIx64 " [%#x]: PERF_RECORD_%s", (uint64_t)off, ev->size,
		perf_event__name(ev->type));

	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		dump__count_sample(d, a, ev);
		dump__sample(d, a, ev, &s);
		break;
	case PERF_DEFER_RECORD_CALLCHAIN_DEFERRED:
		/* as perf >= 6.19: the cookie where a sample has its ip */
		fprintf(f, "(IP, 0x%x): %d/%d: %#" PRIx64 "\n", ev->misc, (int)s.pid, (int)s.tid,
			(uint64_t)s.cookie);
		dump__callchain(d, &s);
		break;
	case PERF_DEFER_RECORD_USER_DUMP:
		/* the cookie, then user regs and stack as a dwarf sample shows them */
		fprintf(f, "(IP, 0x%x): %d/%d: %#" PRIx64 "\n", ev->misc, (int)s.pid, (int)s.tid,
			(uint64_t)s.cookie);
		fprintf(f, "... user regs: mask %#" PRIx64 " ABI %s\n",
			(uint64_t)a->attr.sample_regs_user,
			s.user_regs_abi == 1 ? "32-bit" : s.user_regs_abi == 2 ? "64-bit" :
			s.user_regs_abi ? "unknown" : "none");
		fprintf(f, "... ustack: size %" PRIu64 " dyn_size %" PRIu64 "\n",
			(uint64_t)s.user_stack_size, (uint64_t)s.user_stack_dyn_size);
		break;
	default:
		dump__body(d, ev);
		break;
	}
	return 0;
}

static void dump__stats(struct dump *d)
{
	FILE *f = d->out;
	char name[64];

	fputs("\nAggregated stats:\n", f);
	fprintf(f, "%16s events: %10" PRIu64 "\n", "TOTAL", (uint64_t)d->nr_events[0]);
	for (unsigned int t = 1; t <= NR_TYPES; t++) {
		if (!d->nr_events[t])
			continue;
		fprintf(f, "%16s events: %10" PRIu64 "  (%4.1f%%)\n",
			t < NR_TYPES ? perf_event__name(t) : "UNKNOWN", (uint64_t)d->nr_events[t],
			100.0 * d->nr_events[t] / d->nr_events[0]);
	}
	for (unsigned int i = 0; i < perf_data_reader__nr_attrs(d->r); i++) {
		const struct evsel *a = perf_data_reader__attr(d->r, i);

		fprintf(f, "%s stats:\n", evsel__name(a, name, sizeof(name)));
		if (d->nr_samples[i])
			fprintf(f, "%16s events: %10" PRIu64 "\n", "SAMPLE", (uint64_t)d->nr_samples[i]);
		for (unsigned int m = 0; d->nr_mode && m < NR_MODES; m++) {
			__u64 n = d->nr_mode[i * NR_MODES + m];

			if (n)
				fprintf(f, "%12s SAMPLE events: %10" PRIu64 "  (%5.1f%%)\n",
					cpumode_name[m], (uint64_t)n, 100.0 * n / d->nr_samples[i]);
		}
	}
}

int dump__reader(struct perf_data_reader *r, FILE *out, unsigned int flags)
{
	const struct perf_event_header *ev;
	struct dump d = { .out = out, .r = r, .stats_only = flags & DUMP_STATS_ONLY };
	unsigned int nr_attrs = perf_data_reader__nr_attrs(r);
	int ret;

	d.nr_samples = calloc(nr_attrs, sizeof(*d.nr_samples));
	if (flags & DUMP_BY_MODE)
		d.nr_mode = calloc((size_t)nr_attrs * NR_MODES, sizeof(*d.nr_mode));
	if (!d.nr_samples || ((flags & DUMP_BY_MODE) && !d.nr_mode)) {
		free(d.nr_samples);
		free(d.nr_mode);
		error__set("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < perf_data_reader__nr_attrs(r); i++)
		d.combined_type |= perf_data_reader__attr(r, i)->attr.sample_type;
	d.sample_id_all = perf_data_reader__attr(r, 0)->attr.sample_id_all;

	while ((ret = perf_data_reader__next(r, &ev)) > 0) {
		__u64 off = perf_data_reader__offset(r);

		ret = dump__event(&d, ev, off);
		if (ret) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%s", error__msg());
			fputc('\n', out);
			error__set("%s: record at %#" PRIx64 ": %s", perf_data_reader__name(r),
				   (uint64_t)off, msg);
			break;
		}
	}
	if (!ret)
		dump__stats(&d);
	free(d.nr_samples);
	free(d.nr_mode);
	return ret;
}
