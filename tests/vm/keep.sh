#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# keep.sh: on a module kernel, record the same workload in the deferred
# form (--keep-deferred) and stitched, into /tmp/keep.data and
# /tmp/stitched.data, for readers on the host (tests/readers.sh).  TAP.
. "$(dirname "$0")/tap.sh"

tap_plan 3
insmod "$PERF_DEFER_KO" || { echo "Bail out! cannot load the module"; exit 1; }
perf-defer record -q --stats --keep-deferred -o /tmp/keep.data -- /tests/wl_calls kernel 1200 >/tmp/keep.stats
ok $? "record --keep-deferred"
sed 's/^/# /' /tmp/keep.stats
perf-defer record -q -o /tmp/stitched.data -- /tests/wl_calls kernel 1200
ok $? "record (stitched)"
rmmod perf_defer
ok $? "rmmod"
gzip -c /proc/kallsyms >/tmp/kallsyms.gz
tap_done
