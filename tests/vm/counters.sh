# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# Sourced by the guest scripts that read the module's counters or sample
# at high rates.

# counter NAME: the module's cumulative counter NAME (perf-defer status)
counter() {
	perf-defer status 2>/dev/null | sed -n "s/^counters:.* $1 \([0-9]*\).*/\1/p"
}

# unthrottle: samples as fast as asked, until the script exits.  The rate
# limit first: with the throttling off, the kernel refuses to change it.
# The kernel's own settings come back at exit (rethrottle), the limit last:
# the scripts that come after in the same boot sample as on any machine,
# with the kernel lowering the rate when its interrupts take too long.
unthrottle() {
	_pd_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	_pd_pct=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)
	trap rethrottle EXIT
	sysctl -qw kernel.perf_event_max_sample_rate=100000
	sysctl -qw kernel.perf_cpu_time_max_percent=0
}

rethrottle() {
	sysctl -qw kernel.perf_cpu_time_max_percent="$_pd_pct"
	sysctl -qw kernel.perf_event_max_sample_rate="$_pd_rate"
}
