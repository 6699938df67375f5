// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_reader - libFuzzer target: the perf.data reader, dump and stitch
 *
 * Each input is a perf.data file.  It is opened from memory, dumped to
 * /dev/null, then stitched to /dev/null, all in process: what 'perf-defer
 * dump' and 'perf-defer stitch' do with a file.  Corrupt input must end
 * in an error, never in a crash, a sanitizer report or a leak.
 *
 *	make -C tests/host fuzz FUZZ_TIME=600
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "dump.h"
#include "perf-data.h"
#include "stitch.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stitch_stats st;
	struct perf_data_reader *r;
	struct perf_data_writer *w;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (!devnull)
			return 0;
	}
	r = perf_data_reader__open_mem(data, size, "fuzz");
	if (!r)
		return 0;
	dump__reader(r, devnull, DUMP_BY_MODE);
	perf_data_reader__rewind(r);
	w = perf_data_writer__open_fd(fileno(devnull), "/dev/null");
	if (w)
		stitch__reader(r, w, &st, true);
	perf_data_reader__close(r);
	return 0;
}
