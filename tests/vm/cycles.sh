# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# Sourced by lifecycle.sh and unload_race.sh, whose cycles load the
# module, sample a workload that runs all along for MS ms (defer_test
# --sample), close and unload:
#   cycles_init DEFAULT_CYCLES [CYCLES [MS]]   cycles, ms, dir, ko; no module loaded
#   cycles_workload [CMD...]   the workload, run under CMD (taskset ...): $wl, $hold
#   cycles_pending OUT         the sampler's OUT says it closed with a request pending
#   cycles_finish              TAP: the workload survived (and is stopped now)
#   cycles_unloaded            TAP: no module left loaded
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

# shellcheck disable=SC2034 # the variables are the sourcing script's
cycles_init() {
	cycles=${2:-$1}
	ms=${3:-80}
	dir=$(cd "$(dirname "$0")" && pwd)
	ko=${PERF_DEFER_KO:-/lib/perf-defer/perf_defer.ko}
	if [ -d /sys/module/perf_defer ]; then rmmod perf_defer; fi
}

cycles_workload() {
	# perf's task-event jump label stays on throughout: flipping it a
	# hundred times can oops Debian's 6.12 under QEMU TCG, module or not
	# (scripts/vm holds it from boot; this hold is for a guest without)
	"$dir/defer_test" --hold >/dev/null &
	hold=$!
	"$@" "$dir/wl_syscall" -t 0 -c 8192 -d 12 -n 2 &
	wl=$!
	sleep 0.2
}

cycles_pending() {
	# "samples N deferred N records N matched N nerr N pending N"
	# shellcheck disable=SC2086 # into its words
	set -- $1
	[ "${12:-0}" -gt 0 ] 2>/dev/null
}

cycles_finish() {
	kill -0 "$wl" 2>/dev/null
	ok $? "the workload survived"
	kill -9 "$wl" "$hold" 2>/dev/null
	wait "$wl" "$hold" 2>/dev/null
}

cycles_unloaded() {
	[ ! -d /sys/module/perf_defer ]
	ok $? "module not loaded at the end"
}
