#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# unload_race.sh [CYCLES [MS]]: rmmod against tasks that are finishing
# their unwinds, on a preemptible kernel (preempt=full, or PREEMPT_RT).
#
# A task_work drops its module reference before its last instructions in
# perf_defer's text.  pd_test_preempt.ko, when a user task drops the last
# reference, wakes a SCHED_FIFO kthread on its CPU that spins for 2 s
# (RT throttling off for the test):
# module_put()'s preempt_enable() then preempts the task right there, and
# rmmod spinning on the other CPU finds the count at 0.  Each of CYCLES
# (default 5) cycles loads the module, samples the workload for MS ms
# (default 80), closes the session (requests still pending, when it can)
# and spins on rmmod until it succeeds.  The module's exit must wait for
# the preempted task; otherwise it resumes in freed text, and the VM
# harness sees the oops.  TAP.
set -u
# shellcheck source-path=SCRIPTDIR source=cycles.sh
. "$(dirname "$0")/cycles.sh"

tap_plan 6
cycles_init 5 "$@"
tko=$(dirname "$ko")/pd_test_preempt.ko
model=$(cat /sys/kernel/debug/sched/preempt 2>/dev/null)
case $(uname -v) in
*PREEMPT_RT*) model="PREEMPT_RT" ;;
esac
echo "# preemption: ${model:-unknown}"
case $model in
*"(full)"*|PREEMPT_RT) ok 0 "the kernel preempts in preempt_enable() ($model)" ;;
*) ok 1 "the kernel preempts in preempt_enable(): boot with preempt=full (${model:-unknown})" ;;
esac
rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us)
echo -1 >/proc/sys/kernel/sched_rt_runtime_us
insmod "$tko"
ok $? "pd_test_preempt.ko loaded"

cycles_workload taskset -c 1

start=$(date +%s)
fail=0 tries=0 pending=0
i=0
while [ "$i" -lt "$cycles" ]; do
	i=$((i + 1))
	insmod "$ko" || { fail=$((fail + 1)); continue; }
	out=$(taskset -c 0 "$dir/defer_test" --sample "$wl" "$ms" 2>&1) || fail=$((fail + 1))
	cycles_pending "$out" && pending=$((pending + 1))
	n=0
	until taskset -c 0 rmmod perf_defer 2>/dev/null; do
		n=$((n + 1))
		[ "$n" -lt 100000 ] || { fail=$((fail + 1)); echo "# cycle $i: rmmod keeps failing"; break; }
	done
	tries=$((tries + n))
done
echo "# $cycles cycles in $(($(date +%s) - start)) s, closed with a request pending in" \
	"$pending, $tries rmmod retries"
[ "$fail" = 0 ]
ok $? "load, sample, close and rmmod in every cycle ($fail failed)"
cycles_finish
rmmod pd_test_preempt
echo "$rt_runtime" >/proc/sys/kernel/sched_rt_runtime_us
stalls=$(dmesg | grep -c 'pd_test_preempt: stalling')
# timing decides whether a request is still pending at rmmod
if [ "$stalls" -gt 0 ]; then
	ok 0 "$stalls tasks stalled right after their last module_put(), rmmod spinning"
else
	ok 0 "# SKIP no task put the last reference: the race was not provoked"
fi
cycles_unloaded
tap_done
