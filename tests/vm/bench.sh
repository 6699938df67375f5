#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# bench.sh module|native REPS "RATES" "WORKLOADS": the guest side of
# scripts/bench.  Each workload (tests/vm/wl_bench.c) is first sized so
# that it runs about TARGET_MS (default 400) milliseconds unprofiled; then,
# REPS times over, for each rate and workload, every configuration runs in
# turn (alternating, so that drifts of the emulated machine spread over
# all of them):
#   module kernel: none, fp (perf record --call-graph fp), dwarf (perf
#                  record --call-graph dwarf), module (perf-defer record,
#                  stitched), module-keep (perf-defer record --keep-deferred),
#                  and on the workloads of DWARF_WLS (default: syscall)
#                  module-dwarf and module-dwarf-keep, the same with
#                  --call-graph dwarf,defer (8 KiB dumps, as perf's dwarf);
#   native kernel: none, fp, native (perf 7.3 --call-graph fp,defer).
# bench.sh unwind ...: the module kernel again, the user unwind methods
# side by side on wl_bench_uw (the same workloads with frame pointers,
# .eh_frame and SFrame all in one binary): none, and perf-defer record
# --keep-deferred --user-unwind M for M = fp, sframe, eh_frame, each
# method alone (module-fp, module-sframe, module-eh_frame).  A run whose
# frames did not all come from its method (perf-defer status' frames-*
# counters), or that found none in 10 unwinds or more, fails.  Not on threads: its kernel
# entries are mostly thread creation and futex waits, in the static
# libc, which has .eh_frame only, so the methods would not walk the
# same chains.
# On x86-64 the module kernel also runs module-fp: --keep-deferred with
# --user-unwind fp, the walk native deferral does, so that the two compare
# on the same frames.
# One line per run:
#   BENCH WL CFG RATE REP ELAPSED_NS BYTES SAMPLES RECORDS LOST_SAMPLES LOST_RECORDS UNWINDS
# (BYTES: the file's; RECORDS: deferred callchain records; UNWINDS: the
# module's unwinds, or, natively, one per record; - where it does not
# apply), for the module's configurations nine more fields, its counters
# over the run:
#   FRAMES_FP FRAMES_SFRAME FRAMES_EH_FRAME TABLE_OBJECTS TABLE_CACHE_HITS TABLE_STOPPED
#   TABLE_ROWS TABLE_ROW_HITS WALK_NS
# and last on every line of a profiled run DATA_BYTES, the file's data
# section (its records, without the header, the attributes and the
# features: perf.data's header gives its size at byte 48), then
# USER_SAMPLES, the samples taken in user mode (perf-defer dump
# --by-mode): each of them came with a kernel entry, so an unwind; on
# every line (the unprofiled run's with - for those two) WL_CPU_NS, the
# CPU time the workload's threads had over its elapsed time (what ran in
# its context, sampling interrupts and task_works included: the rest of
# the time it waited), and CHILD_CPU_MS, what the run's processes took
# (the profiler's and the workload's, all of it: times(1) of this shell's
# children, 10 ms ticks).
kind=$1 reps=$2 rates=$3 wls=$4
target_ms=${TARGET_MS:-400}
dwarf_wls=${DWARF_WLS:-syscall}
out=/tmp/bench.data
set -u

# shellcheck source-path=SCRIPTDIR source=counters.sh
. "$(dirname "$0")/counters.sh"
unthrottle
sysctl -qw kernel.perf_event_paranoid=-1

wl_bin=/tests/wl_bench
case $kind in
module)	cfgs="none fp dwarf module module-keep"
	[ "$(uname -m)" != x86_64 ] || cfgs="$cfgs module-fp" ;;
unwind)	cfgs="none module-fp module-sframe module-eh_frame" wl_bin=/tests/wl_bench_uw ;;
*)	cfgs="none fp native" ;;
esac
if [ "$kind" != native ]; then
	insmod "$PERF_DEFER_KO" || { echo "Bail out! cannot load the module"; exit 1; }
fi

elapsed() { sed -n 's/^elapsed_ns //p' "$1"; }
# child_ms FILE: the children's user and system time in FILE, the output
# of 'times' (not in $(...): a subshell's children are its own), in ms
child_ms() {
	awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); n += t[1] * 60 + t[2] }
		printf "%d\n", n * 1000 }' "$1"
}

# snap: the module's counters (perf-defer status' counters: and unwind:
# lines) on one line; field NAME SNAP: NAME's value in SNAP (0: not there)
snap() {
	perf-defer status 2>/dev/null | sed -n -e 's/^counters://p' -e 's/^unwind://p' | tr '\n' ' '
}
field() {
	v=$(echo " $2" | sed -n "s/.* $1 \([0-9][0-9]*\) .*/\1/p")
	echo "${v:-0}"
}
# delta NAME: NAME's growth from $snap0 to $snap1
delta() { echo $(($(field "$1" "$snap1") - $(field "$1" "$snap0"))); }

# dumped TYPE COUNTS: the number of TYPE records in COUNTS, the output of
# 'perf-defer dump --stats --by-mode' ("user SAMPLE": those in user mode)
dumped() {
	echo "$2" | sed -n "s/^ *$1 events: *\([0-9]*\).*/\1/p" | head -n 1
}

if [ "$kind" = unwind ]; then
	case " $wls " in
	*" threads "*)
		echo "# threads: skipped: its kernel entries are in libc, which has no frame pointers or SFrame"
		wls=$(echo " $wls " | sed 's/ threads / /') ;;
	esac
fi

units=""
for wl in $wls; do
	u=20
	while :; do
		"$wl_bin" "$wl" "$u" >/tmp/cal || exit 1
		ms=$(($(elapsed /tmp/cal) / 1000000))
		[ "$ms" -ge $((target_ms / 4)) ] && break
		u=$((u * 4))
	done
	u=$((u * target_ms / (ms + 1)))
	[ "$u" -gt 0 ] || u=1
	units="$units $wl=$u"
	echo "# $wl: $u units of ${wl_bin#/tests/} for about ${target_ms} ms unprofiled"
done

run() {	# run WL CFG RATE REP UNITS
	wl=$1 cfg=$2 rate=$3 rep=$4 u=$5
	rm -f "$out"
	times >/tmp/times0
	case $cfg in
	none)	"$wl_bin" "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	fp)	perf record -q -e cpu-clock -F "$rate" --call-graph fp -o "$out" -- \
			"$wl_bin" "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	dwarf)	perf record -q -e cpu-clock -F "$rate" --call-graph dwarf -o "$out" -- \
			"$wl_bin" "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	native)	perf record -q -e cpu-clock -F "$rate" --call-graph fp,defer -o "$out" -- \
			"$wl_bin" "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	module*)	# module[-dwarf][-keep], or module-METHOD
		case $cfg in
		module-fp|module-sframe|module-eh_frame)
			opts="--keep-deferred --user-unwind ${cfg#module-}" ;;
		*)	opts=
			case $cfg in *-dwarf*) opts="--call-graph dwarf,defer" ;; esac
			case $cfg in *-keep) opts="$opts --keep-deferred" ;; esac ;;
		esac
		snap0=$(snap)
		# shellcheck disable=SC2086 # $opts: no option, or a few
		perf-defer record -q --stats $opts -e cpu-clock -F "$rate" -o "$out" -- \
			"$wl_bin" "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	esac
	rc=$?
	times >/tmp/times1
	el=$(elapsed /tmp/o)
	cpu="$(sed -n 's/^cpu_ns //p' /tmp/o) $(($(child_ms /tmp/times1) - $(child_ms /tmp/times0)))"
	if [ $rc != 0 ] || [ -z "$el" ]; then
		echo "# $wl $cfg $rate: failed (exit $rc)"
		sed 's/^/#   /' /tmp/e | head -n 5
		return 1
	fi
	if [ "$cfg" = none ]; then
		echo "BENCH $wl $cfg $rate $rep $el - - - - - - - - $cpu"
		return 0
	fi
	bytes=$(stat -c %s "$out")
	data=$(od -An -tu8 -j48 -N8 "$out" | tr -d ' ')
	counts=$(perf-defer dump --stats --by-mode -i "$out" 2>/dev/null)
	samples=$(dumped SAMPLE "$counts")
	usr=$(dumped "user SAMPLE" "$counts")
	lost=$(dumped LOST "$counts")
	case $cfg in
	module*)
		snap1=$(snap)
		recs=$(sed -n 's/^deferred records: //p' /tmp/o)
		lrec=$(sed -n 's/^lost records: //p' /tmp/o)
		unw=$(delta unwinds) ;;
	native)
		recs=$(dumped CALLCHAIN_DEFERRED "$counts")
		lrec=- unw=${recs:-0} ;;
	*)	recs=- lrec=- unw=- ;;
	esac
	line="BENCH $wl $cfg $rate $rep $el $bytes ${samples:-0} ${recs:-0} ${lost:-0} ${lrec:-0} $unw"
	case $cfg in
	module*) ;;
	*)	echo "$line ${data:--} ${usr:-0} $cpu"; return 0 ;;
	esac
	ffp=$(delta frames-fp) fsf=$(delta frames-sframe) feh=$(delta frames-eh-frame)
	echo "$line $ffp $fsf $feh $(delta table-objects) $(delta table-cache-hits)" \
		"$(delta table-stopped) $(delta table-rows) $(delta table-row-hits)" \
		"$(delta walk-ns) ${data:--} ${usr:-0} $cpu"
	case $cfg in
	module-fp|module-sframe|module-eh_frame) ;;
	*)	return 0 ;;
	esac
	# each method alone: no other's counter grows, and its own does, but
	# for a run with a few unwinds or none (under TCG, cpu-clock has
	# given a 300 ms run no sample at all)
	case $cfg in
	module-fp) mine=$ffp others=$((fsf + feh)) ;;
	module-sframe) mine=$fsf others=$((ffp + feh)) ;;
	*) mine=$feh others=$((ffp + fsf)) ;;
	esac
	if [ "$others" -ne 0 ] || { [ "$mine" -le 0 ] && [ "$unw" -ge 10 ]; }; then
		echo "# $wl $cfg $rate: frames not all by ${cfg#module-}: frames-fp +$ffp frames-sframe +$fsf frames-eh-frame +$feh"
		return 1
	fi
}

fail=0
rep=1
while [ "$rep" -le "$reps" ]; do
	for rate in $rates; do
		for wl in $wls; do
			u=$(echo "$units" | tr ' ' '\n' | sed -n "s/^$wl=//p")
			wl_cfgs=$cfgs
			case "$kind: $dwarf_wls " in
			"module:"*" $wl "*) wl_cfgs="$cfgs module-dwarf module-dwarf-keep" ;;
			esac
			for cfg in $wl_cfgs; do
				run "$wl" "$cfg" "$rate" "$rep" "$u" || fail=1
			done
		done
	done
	rep=$((rep + 1))
done
rm -f "$out"
[ "$kind" = native ] || rmmod perf_defer || fail=1
exit $fail
