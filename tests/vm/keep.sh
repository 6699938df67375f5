#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# keep.sh module|native: record the standard workloads (wl_calls kernel and
# wl_calls user) with perf-defer record, each in the deferred form
# (--keep-deferred, /tmp/keep-W.data) and stitched (/tmp/st-W.data), for the
# perf clients on the host (tests/readers.sh); and the guest's perf record
# --call-graph fp of wl_calls kernel (/tmp/perf-kernel.data), whose header
# features ours must match, where the guest has a perf; with "module", also perf-defer perf record -g
# of it (/tmp/pp-kernel.data), for tests/subcmds.sh.  With "module", through the
# module (loaded here, unloaded at the end); with "native", through the
# kernel's own deferred callchains.  TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

mode=${1:-module}
if [ "$mode" = module ]; then
	tap_plan 10
	insmod "$PERF_DEFER_KO"
	ok $? "insmod"
else
	tap_plan 7
fi
for w in kernel user; do
	perf-defer record -q --stats --keep-deferred -o "/tmp/keep-$w.data" -- \
		/tests/wl_calls "$w" 1200 >"/tmp/keep-$w.stats" 2>&1
	ok $? "record --keep-deferred, wl_calls $w"
	sed 's/^/# /' "/tmp/keep-$w.stats"
	grep -qx "path: $mode" "/tmp/keep-$w.stats"
	ok $? "it took the $mode path"
	perf-defer record -q -o "/tmp/st-$w.data" -- /tests/wl_calls "$w" 1200
	ok $? "record (stitched), wl_calls $w"
done
# (a guest without perf, an arm64 one not booted with scripts/vm --perf:
# tests/readers.sh then checks no feature against perf's own file)
if command -v perf >/dev/null; then
	perf record -q --call-graph fp -o /tmp/perf-kernel.data -- /tests/wl_calls kernel 1200 2>/dev/null
	ok $? "perf record --call-graph fp, wl_calls kernel"
else
	skip "perf record --call-graph fp, wl_calls kernel" "no perf in this guest"
fi
if [ "$mode" = module ]; then
	if command -v perf >/dev/null; then
		perf-defer perf -q record -q -g -o /tmp/pp-kernel.data -- /tests/wl_calls kernel 1200
		ok $? "perf-defer perf record -g, wl_calls kernel"
	else
		skip "perf-defer perf record -g, wl_calls kernel" "no perf in this guest"
	fi
	rmmod perf_defer
	ok $? "rmmod"
fi
gzip -c /proc/kallsyms >/tmp/kallsyms.gz
tap_done
