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
# kernel's own deferred callchains.
# With "dwarf" after the mode, also --call-graph dwarf,defer of wl_nofp
# kernel and wl_nofp user (wl_calls without frame pointers), stitched
# (/tmp/dw-W.data), for a host perf that unwinds another architecture's
# dumps; with the guest's perf's reading of each sample's user frames
# (/tmp/dw-W.chains, perfpaths.sh's chains) to hold the host's against.
# TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source-path=SCRIPTDIR source=perfpaths.sh
. "$(dirname "$0")/perfpaths.sh"

mode=${1:-module}
dwarf=0
[ "${2:-}" = dwarf ] && dwarf=1
if [ "$mode" = module ]; then
	tap_plan $((10 + dwarf * 4))
	insmod "$PERF_DEFER_KO"
	ok $? "insmod"
else
	tap_plan $((7 + dwarf * 4))
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
fi
for w in kernel user; do
	[ $dwarf = 1 ] || break
	perf-defer record -q --call-graph dwarf,defer -o "/tmp/dw-$w.data" -- /tests/wl_nofp "$w" 1200
	ok $? "record --call-graph dwarf,defer (stitched), wl_nofp $w"
	if command -v perf >/dev/null; then
		chains "/tmp/dw-$w.data" --no-inline >"/tmp/dw-$w.chains"
		# those that do not: samples taken after the entry's dump (in
		# the task_work, or later on the way out), which keep perf's own
		# walk (frame pointers, on code without them); many under TCG,
		# where a dump takes long
		n=$(grep -c "leaf_$w.* main\$" "/tmp/dw-$w.chains")
		total=$(grep -c "leaf_$w" "/tmp/dw-$w.chains")
		[ "$n" -gt 100 ]
		ok $? "the guest's perf unwinds its dumps: $n of $total samples in leaf_$w reach main"
	else
		skip "the guest's perf unwinds the dumps of wl_nofp $w" "no perf in this guest"
	fi
done
if [ "$mode" = module ]; then
	rmmod perf_defer
	ok $? "rmmod"
fi
gzip -c /proc/kallsyms >/tmp/kallsyms.gz
tap_done
