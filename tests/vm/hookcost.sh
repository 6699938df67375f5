#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# hookcost.sh REPS RATE "WORKLOADS" [native|parts]: the guest side of 'scripts/bench
# --hook': what the module adds to one sample in the interrupt.  Two
# kprobe events, on the entry of perf_prepare_sample() and on its return,
# time the part of a perf sample that calls perf_callchain() (and so the
# module's hooks on it and on perf_callchain_user()), with the trace
# clock x86-tsc (the emulated TSC's ticks: the text trace prints no finer
# than microseconds otherwise).  The two events cost the same in every
# configuration.  (ftrace's function_graph does not serve: filtered to
# one function it times a fraction of the samples taken in interrupts,
# and the kernel's unwinder warned, once, walking through its return
# trampoline.)  Per repetition, alternating, on each workload of
# tests/vm/wl_bench.c (at RATE Hz, cpu-clock):
#   kernel  perf record --call-graph fp --kernel-callchains, no module
#           loaded: perf's kernel-only chain, the baseline
#   idle    the same with the module loaded, nothing attached: its
#           hooks are disarmed
#   module  perf-defer record --user-unwind fp (fp,defer through the
#           module): the kernel chain, the cookie and the deferral request;
#           the walk by frame pointers, as native deferral's, so that the
#           task_work, where samples land too, is what it is natively
#   fp      perf record --call-graph fp: kernel and user chain, walked in
#           the interrupt
#   armed-kernel, armed-fp
#           kernel and fp again, while another task's event is attached
#           (a perf-defer record of a sleep): the module's hooks are
#           armed, and run for every sample, but find no attached event
#           and leave it alone.  armed-fp passes both hooks, armed-kernel
#           only perf_callchain()'s (a kernel-only chain has no user
#           walk): what the hooks cost by themselves, apart from what the
#           module does for a sample it defers.
#   ftrace  module again, the module loaded with hooks=ftrace (its own
#           ftrace_ops instead of the kprobes), where the kernel has it
# With native, on a kernel that defers natively (Linux >= 6.19), for the
# same comparison there: kernel, native (perf record --call-graph
# fp,defer: the kernel chain, the cookie and the kernel's own deferral
# request) and fp.
# One line per run: HOOK WL CFG REP SAMPLES MEDIAN MEAN (the samples timed,
# and their median and mean in TSC ticks).
# A timing build of the module (make PD_TIMING=1) also times its own
# handlers, part by part (module/perf_defer.h's enum pd_tpart), with the
# same TSC, and prints each part's mean when unloaded: those of the
# module run of each repetition and workload (the other runs defer
# nothing), one line per part: TIME WL PART REP TIMED MEAN.  With parts
# (a timing build), no ftrace run.
reps=$1 rate=$2 wls=$3 kind=${4:-module}
set -u
# shellcheck source-path=SCRIPTDIR source=counters.sh
. "$(dirname "$0")/counters.sh"
unthrottle
sysctl -qw kernel.perf_event_paranoid=-1
t=/sys/kernel/tracing
[ -d "$t/events" ] || t=/sys/kernel/debug/tracing
[ -d "$t/events" ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
[ -d "$t/events" ] || t=/sys/kernel/tracing
fn=perf_prepare_sample
echo 0 >"$t/tracing_on"
echo x86-tsc >"$t/trace_clock" || { echo "Bail out! no x86-tsc trace clock"; exit 1; }
if ! echo "p:pd_hook_in $fn" >>"$t/kprobe_events" ||
	! echo "r:pd_hook_out $fn" >>"$t/kprobe_events"; then
	echo "Bail out! $fn cannot be probed here"
	exit 1
fi
echo 1 >"$t/events/kprobes/pd_hook_in/enable"
echo 1 >"$t/events/kprobes/pd_hook_out/enable"
echo 16384 >"$t/buffer_size_kb"
wl_bin=/tests/wl_bench
ko=${PERF_DEFER_KO:-}
[ -d /sys/module/perf_defer ] && rmmod perf_defer

# sized as bench.sh sizes them: about 400 ms unprofiled
units=""
for wl in $wls; do
	u=20
	while :; do
		"$wl_bin" "$wl" "$u" >/tmp/cal || exit 1
		ms=$(($(sed -n 's/^elapsed_ns //p' /tmp/cal) / 1000000))
		[ "$ms" -ge 100 ] && break
		u=$((u * 4))
	done
	units="$units $wl=$((u * 400 / (ms + 1) + 1))"
done

# durations: the ticks between each entry and its return, CPU by CPU
# (a sample inside another on the same CPU is matched as a stack)
durations() {
	awk '/ pd_hook_(in|out): / {
		cpu = $0; sub(/.*\[/, "", cpu); sub(/\].*/, "", cpu)
		ts = $0; sub(/: pd_hook_.*/, "", ts); n = split(ts, f, " "); ts = f[n]
		if ($0 ~ / pd_hook_in: /) { st[cpu, ++sp[cpu]] = ts; next }
		if (sp[cpu] > 0) { print ts - st[cpu, sp[cpu]]; sp[cpu]-- }
	}' "$t/trace" | sort -n
}

run() {	# run WL CFG REP UNITS
	echo >"$t/trace"
	echo 1 >"$t/tracing_on"
	case $2 in
	kernel|idle) perf record -q -e cpu-clock -F "$rate" --call-graph fp --kernel-callchains \
			-o /tmp/hook.data -- "$wl_bin" "$1" "$4" >/dev/null 2>&1 ;;
	fp) perf record -q -e cpu-clock -F "$rate" --call-graph fp -o /tmp/hook.data -- \
			"$wl_bin" "$1" "$4" >/dev/null 2>&1 ;;
	native) perf record -q -e cpu-clock -F "$rate" --call-graph fp,defer -o /tmp/hook.data -- \
			"$wl_bin" "$1" "$4" >/dev/null 2>&1 ;;
	module|ftrace) perf-defer record -q -e cpu-clock -F "$rate" --user-unwind fp -o /tmp/hook.data -- \
			"$wl_bin" "$1" "$4" >/dev/null 2>&1 ;;
	armed-kernel) perf record -q -e cpu-clock -F "$rate" --call-graph fp --kernel-callchains \
			-o /tmp/hook.data -- "$wl_bin" "$1" "$4" >/dev/null 2>&1 ;;
	armed-fp) perf record -q -e cpu-clock -F "$rate" --call-graph fp -o /tmp/hook.data -- \
			"$wl_bin" "$1" "$4" >/dev/null 2>&1 ;;
	esac
	rc=$?
	echo 0 >"$t/tracing_on"
	[ "$rc" = 0 ] || { echo "Bail out! $2 on $1 failed ($rc)"; exit 1; }
	durations >/tmp/hook.ns
	n=$(wc -l </tmp/hook.ns)
	med=$(awk -v n="$n" 'NR == int((n + 1) / 2) { print; exit }' /tmp/hook.ns)
	mean=$(awk '{ s += $1 } END { if (NR) printf "%d", s / NR }' /tmp/hook.ns)
	echo "HOOK $1 $2 $3 $n ${med:-0} ${mean:-0}"
}

# arm: another task's event attached (a recorded sleep), the module's
# hooks armed; disarm: that recording ended
kp=/sys/kernel/debug/kprobes/list
[ -f "$kp" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
arm() {
	perf-defer record -q -e cpu-clock -o /tmp/arm.data -- sleep 3600 >/dev/null 2>&1 &
	arm_pid=$!
	i=0
	# the ftrace hooks (enabled_functions names their callback) or kprobes
	until grep -q 'pd_ftrace_hook.*\[perf_defer\]' "$t/enabled_functions" 2>/dev/null ||
		{ grep -q 'perf_callchain+' "$kp" 2>/dev/null &&
		! grep 'perf_callchain+' "$kp" | grep -q DISABLED; }; do
		i=$((i + 1))
		[ "$i" -le 100 ] || { echo "Bail out! the module's hooks were not armed"; exit 1; }
		sleep 0.1
	done
}
disarm() {
	kill -INT "$arm_pid"
	wait "$arm_pid"
	# the recorded sleep, if still there (the guest's busybox has no pkill)
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = sleep ] && kill "${p#/proc/}" 2>/dev/null
	done
}

rep=1
while [ "$rep" -le "$reps" ]; do
	for wu in $units; do
		wl=${wu%=*} u=${wu#*=}
		if [ "$kind" = native ]; then
			for cfg in kernel native fp; do
				run "$wl" "$cfg" "$rep" "$u"
			done
			continue
		fi
		[ -d /sys/module/perf_defer ] && rmmod perf_defer
		run "$wl" kernel "$rep" "$u"
		seen=$(dmesg | wc -l)
		insmod "$ko" || { echo "Bail out! cannot load the module"; exit 1; }
		run "$wl" idle "$rep" "$u"
		run "$wl" module "$rep" "$u"
		run "$wl" fp "$rep" "$u"
		arm
		run "$wl" armed-kernel "$rep" "$u"
		run "$wl" armed-fp "$rep" "$u"
		disarm
		rmmod perf_defer
		dmesg | tail -n +"$((seen + 1))" |
			sed -n "s/.*perf_defer: timing \([a-z]*\): \([0-9]*\) timed, mean \([0-9]*\) cycles.*/TIME $wl \1 $rep \2 \3/p"
		if [ "$kind" != parts ] && insmod "$ko" hooks=ftrace 2>/dev/null; then
			run "$wl" ftrace "$rep" "$u"
			rmmod perf_defer
		fi
	done
	rep=$((rep + 1))
done
echo 0 >"$t/events/kprobes/enable"
echo >"$t/kprobe_events"
echo local >"$t/trace_clock"
