#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# lifecycle.sh [CYCLES [MS]]: CYCLES (default 100) times load the module,
# attach to a workload that keeps running the whole time and sample it
# for MS ms (default 80; defer_test --sample), close, unload.  The
# workload reads 8 MiB per system call (several returns to user in each
# cycle, and most often a read under way at close), the sampler closes its
# session while a request is pending when it can (in one cycle at least,
# or the test fails: it would not have tested that): rmmod then says EBUSY
# until the unwind ran; retry for up to 2 s.  The VM harness fails the
# run on any oops or WARN.  TAP.
set -u
# shellcheck source-path=SCRIPTDIR source=cycles.sh
. "$(dirname "$0")/cycles.sh"

tap_plan 8
cycles_init 100 "$@"
# shellcheck disable=SC2119 # the workload runs under no command
cycles_workload
kill -0 "$wl" 2>/dev/null
ok $? "workload running (pid $wl)"

start=$(date +%s)
load_fail=0 sample_fail=0 with_records=0 unload_fail=0 retries=0 max_retries=0
pending=0 busy=0
i=0
while [ "$i" -lt "$cycles" ]; do
	i=$((i + 1))
	if ! insmod "$ko"; then
		load_fail=$((load_fail + 1))
		echo "# cycle $i: insmod failed"
		continue
	fi
	out=$("$dir/defer_test" --sample "$wl" "$ms" 2>&1)
	rc=$?
	if [ "$rc" != 0 ]; then
		sample_fail=$((sample_fail + 1))
		echo "# cycle $i: sampler rc=$rc: $out"
	fi
	# "samples N deferred N records N matched N nerr N pending N"
	# shellcheck disable=SC2086 # into its words
	set -- $out
	[ "${6:-0}" -gt 0 ] 2>/dev/null && [ "${8:-0}" -gt 0 ] 2>/dev/null &&
		with_records=$((with_records + 1))
	cycles_pending "$out" && pending=$((pending + 1))
	[ "$i" = 1 ] || [ "$i" = "$cycles" ] && echo "# cycle $i: $out"
	n=0
	until rmmod perf_defer 2>/dev/null; do
		n=$((n + 1))
		if [ "$n" -ge 200 ]; then
			unload_fail=$((unload_fail + 1))
			echo "# cycle $i: rmmod still failing after $n tries"
			rmmod perf_defer
			break
		fi
		sleep 0.01
	done
	retries=$((retries + n))
	[ "$n" -gt 0 ] && busy=$((busy + 1))
	[ "$n" -gt "$max_retries" ] && max_retries=$n
done
end=$(date +%s)
echo "# $cycles cycles in $((end - start)) s; closed with a request pending in $pending;" \
	"rmmod busy in $busy, $retries retries (max $max_retries in a cycle)"

[ "$load_fail" = 0 ]
ok $? "insmod succeeded $((cycles - load_fail)) of $cycles times"
[ "$sample_fail" = 0 ]
ok $? "attach + sample + close succeeded in every cycle ($sample_fail failed)"
[ "$with_records" -ge $((cycles / 2)) ]
ok $? "deferred samples stitched to records in $with_records of $cycles cycles"
[ "$unload_fail" = 0 ]
ok $? "rmmod succeeded in every cycle ($unload_fail failed)"
# What this test is for: a session closed with a request pending, then
# rmmod.  Timing decides whether the unwind is still pending when rmmod
# comes (then EBUSY, and retried: $busy); the close itself must happen.
[ "$pending" -gt 0 ]
ok $? "closed with a request pending in $pending of $cycles cycles (rmmod busy in $busy)"
cycles_finish
cycles_unloaded
tap_done
