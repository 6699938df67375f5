#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The guest's half of tests/throughperf.sh: 'perf-defer record -g' with
# the module's default unwind order (no --user-unwind) on code without
# frame pointers, built as distributions build theirs (-O2
# -fomit-frame-pointer, dynamically linked, on glibc, libstdc++ and
# libgcc_s, which keep none either): by bookworm's toolchain, and by
# trixie's (tests/vm/Makefile: trixie/), with and without SFrame.  Each
# workload is recorded twice: as a user records it (NAME.data), and with
# --user-unwind fp (NAME-fp.data), the control.  The files, gzipped, what
# the recorder's --stats said of them (NAME.stats, NAME-fp.stats), and
# a list of what to look for in them ("name|hot code|root|program": the
# hot code is a symbol, or @DSO for anything in that object; the root is
# main, or the thread's start routine)
# go into /tmp/throughperf.tar, which tests/throughperf.sh exports and
# reads with each perf.  TAP: one result per recording.
#   throughperf.sh [ko [NAME...]]   (default $PERF_DEFER_KO; all workloads;
#   a NAME may end in *)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

ko=${1:-$PERF_DEFER_KO}
[ $# -gt 0 ] && shift
# name|hot|root|command: the hot code of stdio is libc's stdio and
# write(), that of the C++ program the exception unwinder of libgcc_s
WORKLOADS=$(for d in '' trixie/; do
	for s in '' _sframe; do
		# bookworm's SFrame (version 1) is the oracle's business
		[ -z "$d" ] && [ -n "$s" ] && continue
		n=${d%/}${d:+-} t=${s:+-sframe}
		echo "${n}dyn$t-qsort|cmp_slow|main|${d}wl_dyn$s main 1000"
		echo "${n}dyn$t-thread|cmp_slow|thread_main|${d}wl_dyn$s thread 1000"
		echo "${n}dyn$t-bsearch|cmp_slow|main|${d}wl_dyn$s bsearch 1000"
		echo "${n}dyn$t-stdio|@libc.so.6|main|${d}wl_dyn$s stdio 1000"
		echo "${n}dyn$t-vdso|@[vdso]|main|${d}wl_dyn$s vdso 1000"
		echo "${n}cxx$t-throw|@libgcc_s.so.1|main|${d}wl_cxx$s 1000"
	done
done)
if [ $# -gt 0 ]; then
	WORKLOADS=$(select_named "$WORKLOADS" "$@")
fi
tap_plan $(($(echo "$WORKLOADS" | grep -c .) * 2))
rm -rf /tmp/tp /tmp/throughperf.tar
mkdir -p /tmp/tp
cd /tmp/tp || exit 1
tap_insmod "$ko"
echo "# module parameter user_unwind=$(cat /sys/module/perf_defer/parameters/user_unwind)"

# the module's counters, for the samples that keep perf's own walk
counters() {
	perf-defer status | grep -E '^(counters|unwind):' | sed 's/^/#   /'
}

while IFS='|' read -r name hot root cmd; do
	[ -n "$name" ] || continue
	# trixie/ is built only where the trixie chroot has a gcc
	if [ ! -x "/tests/${cmd%% *}" ]; then
		ok 0 "# SKIP $name: no /tests/${cmd%% *} (tests/vm/Makefile says why)"
		ok 0 "# SKIP $name (control): no /tests/${cmd%% *}"
		continue
	fi
	echo "$name|$hot|$root|/tests/${cmd%% *}" >>list
	for u in '' fp; do
		# shellcheck disable=SC2086 # the command's words
		perf-defer record -q --stats -g ${u:+--user-unwind $u} -o "$name${u:+-$u}.data" \
			-- /tests/$cmd </dev/null >"$name${u:+-$u}.stats" 2>rec.out
		rc=$?
		sed 's/^/# /' rec.out
		grep -E '^(samples|deferred samples):' "$name${u:+-$u}.stats" | paste -sd' ' | sed 's/^/#   /'
		[ $rc = 0 ] && gzip "$name${u:+-$u}.data"
		ok $? "$name: perf-defer record -g ${u:+--user-unwind $u }-- $cmd (rc=$rc)"
	done
	counters
done <<EOF
$WORKLOADS
EOF
rm -f rec.out
rmmod perf_defer
touch list
cd /tmp && tar cf throughperf.tar tp
tap_done
