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
# One line per run:
#   BENCH WL CFG RATE REP ELAPSED_NS BYTES SAMPLES RECORDS LOST_SAMPLES LOST_RECORDS UNWINDS
# (RECORDS: deferred callchain records; UNWINDS: the module's unwinds, or,
# natively, one per record; - where it does not apply).
kind=$1 reps=$2 rates=$3 wls=$4
target_ms=${TARGET_MS:-400}
dwarf_wls=${DWARF_WLS:-syscall}
out=/tmp/bench.data
set -u

# shellcheck source-path=SCRIPTDIR source=counters.sh
. "$(dirname "$0")/counters.sh"
unthrottle
sysctl -qw kernel.perf_event_paranoid=-1

if [ "$kind" = module ]; then
	cfgs="none fp dwarf module module-keep"
	insmod "$PERF_DEFER_KO" || { echo "Bail out! cannot load the module"; exit 1; }
else
	cfgs="none fp native"
fi

elapsed() { sed -n 's/^elapsed_ns //p' "$1"; }

# dumped TYPE COUNTS: the number of TYPE records in COUNTS, the output of
# 'perf-defer dump --stats'
dumped() {
	echo "$2" | sed -n "s/^ *$1 events: *\([0-9]*\).*/\1/p" | head -n 1
}

units=""
for wl in $wls; do
	u=20
	while :; do
		/tests/wl_bench "$wl" "$u" >/tmp/cal || exit 1
		ms=$(($(elapsed /tmp/cal) / 1000000))
		[ "$ms" -ge $((target_ms / 4)) ] && break
		u=$((u * 4))
	done
	u=$((u * target_ms / (ms + 1)))
	[ "$u" -gt 0 ] || u=1
	units="$units $wl=$u"
	echo "# $wl: $u units for about ${target_ms} ms unprofiled"
done

run() {	# run WL CFG RATE REP UNITS
	wl=$1 cfg=$2 rate=$3 rep=$4 u=$5
	rm -f "$out"
	unw0=0
	case $cfg in
	none)	/tests/wl_bench "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	fp)	perf record -q -e cpu-clock -F "$rate" --call-graph fp -o "$out" -- \
			/tests/wl_bench "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	dwarf)	perf record -q -e cpu-clock -F "$rate" --call-graph dwarf -o "$out" -- \
			/tests/wl_bench "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	native)	perf record -q -e cpu-clock -F "$rate" --call-graph fp,defer -o "$out" -- \
			/tests/wl_bench "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	module*)	# module[-dwarf][-keep]
		opts=
		case $cfg in *-dwarf*) opts="--call-graph dwarf,defer" ;; esac
		case $cfg in *-keep) opts="$opts --keep-deferred" ;; esac
		unw0=$(counter unwinds)
		# shellcheck disable=SC2086 # $opts: no option, one or two
		perf-defer record -q --stats $opts -e cpu-clock -F "$rate" -o "$out" -- \
			/tests/wl_bench "$wl" "$u" >/tmp/o 2>/tmp/e ;;
	esac
	rc=$?
	el=$(elapsed /tmp/o)
	if [ $rc != 0 ] || [ -z "$el" ]; then
		echo "# $wl $cfg $rate: failed (exit $rc)"
		sed 's/^/#   /' /tmp/e | head -n 5
		return 1
	fi
	if [ "$cfg" = none ]; then
		echo "BENCH $wl $cfg $rate $rep $el - - - - - -"
		return 0
	fi
	bytes=$(stat -c %s "$out")
	counts=$(perf-defer dump --stats -i "$out" 2>/dev/null)
	samples=$(dumped SAMPLE "$counts")
	lost=$(dumped LOST "$counts")
	case $cfg in
	module*)
		recs=$(sed -n 's/^deferred records: //p' /tmp/o)
		lrec=$(sed -n 's/^lost records: //p' /tmp/o)
		unw=$(($(counter unwinds) - unw0)) ;;
	native)
		recs=$(dumped CALLCHAIN_DEFERRED "$counts")
		lrec=- unw=${recs:-0} ;;
	*)	recs=- lrec=- unw=- ;;
	esac
	echo "BENCH $wl $cfg $rate $rep $el $bytes ${samples:-0} ${recs:-0} ${lost:-0} ${lrec:-0} $unw"
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
[ "$kind" != module ] || rmmod perf_defer || fail=1
exit $fail
